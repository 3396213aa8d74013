"""Every figure cell of every stored notebook holds its picture, a caption and alt text.

nbval does not compare images, so a figure that silently stopped showing (as when a drawing's
rc_context switched the inline backend's interactive mode off) would pass every other test.
A figure cell is one whose metadata gives myst-nb a caption.
"""
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_figure_cell_stores_its_picture(path):
    cells = nbformat.read(path, as_version=4).cells
    missing = [i for i, c in enumerate(cells)
               if c.cell_type == "code" and c.metadata.get("mystnb", {}).get("figure")
               and not any("image/png" in o.get("data", {}) for o in c.get("outputs", []))]
    assert not missing, f"{path.name}: figure cells without a stored picture: {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_picture_has_a_caption_and_alt_text(path):
    """A cell that stores a picture gives myst-nb its caption and alt text, in the notebook's language."""
    cells = nbformat.read(path, as_version=4).cells
    for i, cell in enumerate(cells):
        if cell.cell_type == "code" and any("image/png" in o.get("data", {}) for o in cell.get("outputs", [])):
            mystnb = cell.metadata.get("mystnb", {})
            assert mystnb.get("figure", {}).get("caption"), f"{path.name} cell {i}: no caption"
            assert mystnb.get("image", {}).get("alt"), f"{path.name} cell {i}: no alt text"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_caption_is_shown_in_jupyterlab(path):
    """JupyterLab shows no metadata: each figure cell is followed by its caption cell, whose text
    is the caption (``python tools/notebooks.py captions`` writes them; the site drops them)."""
    import json

    from gatherbook_sphinx.notebooks import with_caption_cells

    nb = json.loads(path.read_text(encoding="utf8"))
    assert with_caption_cells(nb) == 0, f"{path.name}: run python tools/notebooks.py captions {path.relative_to(ROOT)}"
