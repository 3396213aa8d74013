"""An exercise that asks the reader to predict what its stub gives, before running the check,
must not print the answer under the stub: the check's output (its verdict and its picture) is one
closed fold, as a Predict question's answer is (``with gb.folded(): gb.check(...)``; issue 37:
Exercise 7.1's "expected 3, got 1" and its picture sat in plain view).

The stored output is what the site shows and what JupyterLab shows until the reader runs the
cell again; ``gb.folded()`` folds it again when it runs (tests/unit/test_folds.py)."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p for p in (ROOT / "notebooks").glob("*/0[1-7]_*.ipynb"))
#: the words an exercise uses to ask for a prediction (each edition's)
ASKS = re.compile(r"\bpredict\b|预测|想一想", re.I)
CHECK = re.compile(r'gb\.check\("[\w.]+", (\w+)\)')


def _predicting_checks(cells):
    """(index of the check cell, exercise heading) of each exercise whose statement asks the reader
    to predict, and whose stub's check follows it (before its solution)."""
    found = []
    for i, cell in enumerate(cells):
        lab = ((cell.metadata.get("gatherbook") or {}).get("lab") or {})
        if cell.cell_type != "markdown" or "{exercise}" not in lab.get("header", "") or not ASKS.search(cell.source):
            continue
        for j in range(i + 1, len(cells)):
            c = cells[j]
            if c.cell_type == "markdown" and "{solution-start}" in (((c.metadata.get("gatherbook") or {})
                                                                   .get("lab") or {}).get("header", "")):
                break
            m = CHECK.search(c.source) if c.cell_type == "code" else None
            if m and not m.group(1).endswith("_solution"):
                found.append((j, lab.get("label", "")))
                break
    return found


def test_chapter_7_has_such_an_exercise():
    cells = nbformat.read(ROOT / "notebooks/en/07_generation.ipynb", as_version=4).cells
    assert [label for _, label in _predicting_checks(cells)][:1] == [
        "**Exercise 7.1 (Find the bug: a token drawn among the top k)**"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_check_whose_output_is_predicted_prints_it_folded(path):
    cells = nbformat.read(path, as_version=4).cells
    for i, label in _predicting_checks(cells):
        outputs = cells[i].outputs
        assert cells[i].source.startswith("with gb.folded():"), f"cell {i} ({label}): the check is not folded"
        assert len(outputs) == 1 and outputs[0].output_type == "display_data", \
            f"cell {i} ({label}): outputs outside the fold: {[o.output_type for o in outputs]}"
        page = outputs[0].data.get("text/html", "")
        assert page.startswith('<details class="predict-output"><summary>'), f"cell {i}: not a closed fold"
        assert "image/png" not in outputs[0].data, f"cell {i}: the picture is outside the fold"
        assert re.search(r'<img src="data:image/png;base64,[^"]+" width="\d+" alt="[^"]+"', page), \
            f"cell {i}: the check's picture is not inside the fold (or has no alt text)"
        assert "mystnb" not in cells[i].metadata, f"cell {i}: a figure caption for a picture that is folded"
