"""What a reader sees of every chapter notebook fits and starts in the right state.

- Code lines and printed lines are at most 88 columns wide (a Chinese character takes two):
  the page's code column (and a JupyterLab cell at a usual width) holds no more, and longer
  lines scroll sideways.
- Solutions start collapsed in JupyterLab: the markdown cell that opens a ``{solution-start}``
  and the solution's code cells carry ``"jupyter": {"source_hidden": true}``, the cell metadata
  JupyterLab honours. The check cell inside a solution stays visible: it spoils nothing, and its
  output shows that the solution passes. Hiding the source of a code cell leaves its outputs
  shown; hiding a markdown cell collapses its rendered text (the solution's explanation) too.
"""
from __future__ import annotations

import unicodedata
from pathlib import Path

import nbformat
import pytest

from gatherbook_sphinx.notebooks import fenced_source

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
MAX = 88

# Known to fail on this branch and fixed on another: (notebook, check) -> why. Each is a strict
# xfail, so the test fails as soon as the fix lands, as a reminder to delete the entry.
PENDING: dict[tuple[str, str], str] = {}


def _key(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _param(path: Path, *args, check: str):
    why = PENDING.get((_key(path), check))
    marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
    return pytest.param(path, *args, marks=marks, id=f"{_key(path)}-{check}")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def code_lines(nb) -> list[tuple[int, str]]:
    return [(i, line) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for line in c.source.splitlines()]


def printed_lines(nb) -> list[tuple[int, str]]:
    """Lines of stdout/stderr and of text/plain results (not tracebacks: the reader's own)."""
    found = []
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        for out in c.get("outputs", []):
            if out.get("output_type") == "stream":
                text = out.get("text", "")
            elif out.get("output_type") in ("execute_result", "display_data"):
                text = out.get("data", {}).get("text/plain", "")
            else:
                continue
            found += [(i, line) for line in "".join(text).splitlines()]
    return found


def width(line: str) -> int:
    """Columns a line takes in a monospace font: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def too_long(lines: list[tuple[int, str]]) -> list[str]:
    return [f"cell {i}: {width(line)} columns: {line[:60]}..." for i, line in lines
            if width(line) > MAX]


@pytest.mark.parametrize("path, kind", [_param(p, kind, check=kind) for p in NOTEBOOKS
                                        for kind in ("code", "printed")])
def test_lines_fit_the_code_column(path, kind):
    nb = nbformat.read(path, as_version=4)
    lines = code_lines(nb) if kind == "code" else printed_lines(nb)
    bad = too_long(lines)
    assert not bad, f"{_rel(path)}: {kind} lines over {MAX} characters:\n" + "\n".join(bad)


def test_the_line_checks_see_long_lines():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1  # " + "y" * 90, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="z" * 89 + "\nshort\n"),
            nbformat.v4.new_output("execute_result", data={"text/plain": "w" * 89}),
        ])])
    assert len(too_long(code_lines(nb))) == 1
    assert len(too_long(printed_lines(nb))) == 2
    assert width("数" * 44) == 88 and too_long([(0, "数" * 45)])


def solution_cells(nb) -> list[tuple[int, object, str]]:
    """(index, cell, role) of every cell between {solution-start} and {solution-end}:
    role is "start" (the opening markdown), "check" (a check(...) cell) or "solution"."""
    found, inside = [], False
    for i, c in enumerate(nb.cells):
        if c.cell_type == "markdown" and "{solution-start}" in fenced_source(c):
            inside = True
            found.append((i, c, "start"))
        elif c.cell_type == "markdown" and "{solution-end}" in fenced_source(c):
            inside = False
        elif inside and c.cell_type == "code":
            found.append((i, c, "check" if c.source.lstrip().startswith("check(") else "solution"))
    return found


def _hidden(cell) -> bool:
    return cell.metadata.get("jupyter", {}).get("source_hidden") is True


@pytest.mark.parametrize("path", [_param(p, check="collapsed") for p in NOTEBOOKS])
def test_solutions_start_collapsed_in_jupyterlab(path):
    nb = nbformat.read(path, as_version=4)
    cells = solution_cells(nb)
    if not any(role == "start" for _, _, role in cells):
        pytest.skip(f"{_rel(path)} has no solutions")
    assert any(role == "solution" for _, _, role in cells)
    for i, cell, role in cells:
        if role == "check":
            assert not _hidden(cell), f"{_rel(path)}: cell {i}, a check cell, should stay visible"
        else:
            assert _hidden(cell), (f"{_rel(path)}: cell {i} ({role} of a solution) needs "
                                   '"jupyter": {"source_hidden": true} in its metadata')
    outside = [i for i, c in enumerate(nb.cells) if _hidden(c)
               and i not in {j for j, _, _ in cells}]
    assert not outside, f"{_rel(path)}: cells {outside} are hidden but are not part of a solution"
