"""The exercise cells of both editions, run as a reader runs them.

*Run All* runs every stub, every check and every folded solution; then a reader edits a stub
without running its cell and runs its check again: that check must not pass on the book's
solution (a find-the-bug stub is still reported as its planted bug). Solutions are defined under another name (``<name>_solution``) and fold their source
and outputs in JupyterLab.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from gatherbook.exercises import get, run_check
from gatherbook_sphinx.notebooks import fenced_source

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/0*.ipynb"))
CHECK = re.compile(r'gb\.check\("((?:ch\d+|puzzles)\.\w+)", (\w+)\)')  # chapters and puzzles


def _checks(code: str):
    """``(exercise name, function name)`` of each check in ``code``."""
    return CHECK.findall(code)


def _exercise_cells(path: Path):
    """``(code, inside_solution, metadata)`` of the code cells from the first exercise on."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    inside, started = False, False
    for cell in nb["cells"]:
        text = fenced_source(cell)  # an exercise cell's fences, under JupyterLab's label (tools/notebooks.py labels)
        if cell["cell_type"] == "markdown":
            started |= "{exercise}" in text
            inside = (inside or "{solution-start}" in text) and "{solution-end}" not in text
            continue
        if started:
            yield text, inside, cell.get("metadata", {})


class _Book:
    """What the cells see as ``gb``: ``check`` records the verdicts instead of printing them."""

    def __init__(self, lang: str):
        self.lang, self.results = lang, []

    def check(self, name, fn):
        self.results.append(run_check(name, fn, lang=self.lang))

    def __getattr__(self, name):  # everything else as in the book (gb.show, gb.board ...)
        import gatherbook

        return getattr(gatherbook, name)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_run_all_leaves_every_stub_unattempted(path):
    lang = path.parent.name
    if not any(True for _ in _exercise_cells(path)):
        pytest.skip("no exercises in this notebook")
    book = _Book(lang)
    import matplotlib.pyplot as plt

    ns = {"torch": torch, "F": F, "gb": book, "dev": torch.device("cpu")}
    stubs = {}
    for code, inside, _ in _exercise_cells(path):
        exec(compile(code, str(path), "exec"), ns)  # noqa: S102 - the book's own cells
        plt.close("all")
        for name, fn in _checks(code):
            if not inside:
                stubs[name] = fn
    assert stubs, "the notebook has exercises"
    checked = {r.name: r for r in book.results if r.status == "passed"}
    assert set(checked) == set(stubs), "every folded solution passes its check"
    for name, fn in stubs.items():  # the reader edits a stub, does not run its cell, runs its check
        r = run_check(name, ns[fn], lang=lang)
        bug = get(name).bug
        if bug:  # find-the-bug: the stub is the planted bug, still wrong (and named) after Run All
            assert (r.status, r.hint_key) in {("failed", bug), ("raised", bug)}, f"{name}: {r.message}"
            continue
        assert r.status == "not_attempted", f"{name}: after Run All, {fn} is not the stub: {r.message}"
        assert ("run the cell that defines it first" in r.message) or ("先运行定义它的单元格" in r.message)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_solution_cells_fold_their_source_and_outputs(path):
    if not any(True for _ in _exercise_cells(path)):
        pytest.skip("no exercises in this notebook")
    inside_cells = [(code, md) for code, inside, md in _exercise_cells(path) if inside]
    assert inside_cells
    for code, md in inside_cells:
        jupyter = md.get("jupyter", {})
        assert jupyter.get("source_hidden") and jupyter.get("outputs_hidden"), code[:60]
        defined = re.findall(r"^def (\w+)\(", code, re.M)
        assert all(d.endswith("_solution") for d in defined), f"a solution rebinds a stub's name: {defined}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_exercise_is_checked_once_as_the_stub_and_once_as_the_solution(path):
    """Under its own name: ``gb.check("chN.name", name)`` and ``gb.check("chN.name", name_solution)``."""
    checks = [c for code, _, _ in _exercise_cells(path) for c in _checks(code)]
    for name in {n for n, _ in checks}:
        short = name.split(".", 1)[1]
        assert sorted(fn for n, fn in checks if n == name) == [short, f"{short}_solution"], (path.name, name)
