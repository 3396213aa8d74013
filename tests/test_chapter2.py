"""Chapter 2 as stored: every figure with a caption and alt text, one name per exercise.
(Line widths and folded solutions of every chapter: tests/test_notebook_lines.py.)"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = [ROOT / "notebooks" / lang / "02_token_logprobs.ipynb" for lang in ("en", "zh")]
def _cells(path: Path):
    return nbformat.read(path, as_version=4).cells


@pytest.mark.parametrize("path", CHAPTER, ids=lambda p: p.parent.name)
def test_every_figure_has_caption_and_alt_text(path):
    figures = 0
    for i, cell in enumerate(_cells(path)):
        if cell.cell_type == "code" and any("image/png" in o.get("data", {}) for o in cell.outputs):
            figures += 1
            mystnb = cell.metadata.get("mystnb", {})
            assert mystnb.get("figure", {}).get("caption"), f"cell {i}: no caption"
            assert mystnb.get("image", {}).get("alt"), f"cell {i}: no alt text"
    assert figures == 6


def test_the_chapter_checks_the_exercise_under_its_own_name():
    for path in CHAPTER:
        sources = [c.source for c in _cells(path) if c.cell_type == "code"]
        assert sum('gb.check("ch2.pick_logprobs", pick_logprobs)' == s for s in sources) == 1
        assert sum('gb.check("ch2.pick_logprobs", pick_logprobs_solution)' == s for s in sources) == 1
        assert not any("ch2.token_logprobs" in s for s in sources)
