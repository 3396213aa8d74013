"""Chapter 2 as stored: one name per exercise.
(Figures' captions and alt text of every chapter: test_figures.py; line widths and folded
solutions: test_lines.py.)"""
from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = [ROOT / "notebooks" / lang / "02_token_logprobs.ipynb" for lang in ("en", "zh")]
def _cells(path: Path):
    return nbformat.read(path, as_version=4).cells


def test_the_chapter_checks_the_exercise_under_its_own_name():
    for path in CHAPTER:
        sources = [c.source for c in _cells(path) if c.cell_type == "code"]
        assert sum('gb.check("ch2.candidate_logprobs", candidate_logprobs)' == s for s in sources) == 1
        assert sum('gb.check("ch2.candidate_logprobs", candidate_logprobs_solution)' == s for s in sources) == 1
        assert not any("ch2.token_logprobs" in s for s in sources)
