"""gatherbook_sphinx.notebooks: a cell's site version replaces its source on the site only, and
no notebook shows JupyterLab a directive only the site knows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatherbook_sphinx import notebooks

ROOT = Path(__file__).resolve().parents[2]
SITE_ONLY_DIRECTIVES = ("{gather-explorer}",)  # directives of this extension, unknown to jupyterlab-myst


def test_the_site_version_replaces_the_source_before_myst_nb_reads_it():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {"gatherbook": {"site": "B"}}, "source": ["A"]},
                    {"cell_type": "markdown", "metadata": {}, "source": ["C"]}]}
    source = [json.dumps(nb)]
    notebooks.site_sources(None, "x", source)
    assert [c["source"] for c in json.loads(source[0])["cells"]] == ["B", ["C"]]
    plain = ["# a page\n"]
    notebooks.site_sources(None, "y", plain)
    assert plain == ["# a page\n"]


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*/*.ipynb")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_jupyterlab_sees_no_site_only_directive(path):
    # plain JSON: nbformat's first read() compiles its schema for seconds, and the fast lane runs this file
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf8"))["cells"]):
        if cell["cell_type"] == "markdown":
            for directive in SITE_ONLY_DIRECTIVES:
                assert directive not in "".join(cell["source"]), (
                    f"{path.name} cell {i}: {directive} shows as an error in JupyterLab; put the site's "
                    "version in the cell's metadata.gatherbook.site and a fallback in its source")


def test_caption_cells_follow_their_figures_and_the_site_drops_them():
    figure = {"cell_type": "code", "id": "f1", "metadata": {"mystnb": {"figure": {"caption": "Rows\n pick."}}},
              "source": [], "outputs": []}
    nb = {"cells": [figure, {"cell_type": "markdown", "metadata": {}, "source": ["next"]}]}
    assert notebooks.with_caption_cells(nb) == 1
    assert [c["source"] for c in nb["cells"]] == [[], ["*Rows pick.*"], ["next"]]
    assert notebooks.with_caption_cells(nb) == 0  # written once
    figure["metadata"]["mystnb"]["figure"]["caption"] = "Columns."
    assert notebooks.with_caption_cells(nb) == 1 and nb["cells"][1]["source"] == ["*Columns.*"]
    assert notebooks.site_version(nb) and [c["source"] for c in nb["cells"]] == [[], ["next"]]
