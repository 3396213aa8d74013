"""``import gatherbook as gb`` is the book's vocabulary, and the notebooks use nothing else."""
from __future__ import annotations

import json
import re
from pathlib import Path

import gatherbook as gb

ROOT = Path(__file__).resolve().parents[2]


def test_every_name_of_the_table_of_contents_loads_and_says_its_chapter():
    assert len(gb.__all__) == len(set(gb.__all__))
    for name in gb.__all__:
        obj = getattr(gb, name)
        if callable(obj):
            assert f"Introduced in Chapter {gb.chapter_of(name)}." in obj.__doc__, name
    assert set(gb.__all__) <= set(dir(gb))


def test_an_unknown_name_points_at_the_table_of_contents():
    try:
        gb.no_such_helper
    except AttributeError as e:
        assert "gatherbook.__all__" in str(e)
    else:
        raise AssertionError("no error")


def test_notebooks_import_the_package_only_through_gb():
    for path in sorted((ROOT / "notebooks").glob("*/0*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert re.findall(r"^\s*(?:from gatherbook|import gatherbook(?! as gb\b))[^\n]*", code, re.M) == [], path
        assert "import gatherbook as gb" in code, path
        used = set(re.findall(r"\bgb\.(\w+)", code))
        assert used <= set(gb.__all__), (path, used - set(gb.__all__))
