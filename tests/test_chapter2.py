"""Chapter 2 as stored: lines that fit the page's code column, solutions folded in JupyterLab,
figures with a caption and alt text in the page's language."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = [ROOT / "notebooks" / lang / "02_token_logprobs.ipynb" for lang in ("en", "zh")]
WIDTH = 88  # monospace characters the page's code column holds at desktop width
# lines printed by the exercise checker (gatherbook.exercises) start with its verdict symbol
CHECKER = ("✔", "✘", "…")


def _cells(path: Path):
    return nbformat.read(path, as_version=4).cells


def _printed_lines(cell) -> list[str]:
    lines = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            lines += out.get("text", "").splitlines()
        elif out.get("output_type") == "error":
            lines += f"{out['ename']}: {out['evalue']}".splitlines()
        elif "text/plain" in out.get("data", {}):
            lines += out["data"]["text/plain"].splitlines()
    return lines


@pytest.mark.parametrize("path", CHAPTER, ids=lambda p: p.parent.name)
def test_code_and_printed_lines_fit_the_column(path):
    long = []
    for i, cell in enumerate(_cells(path)):
        if cell.cell_type != "code":
            continue
        long += [f"cell {i} code: {line}" for line in cell.source.splitlines() if len(line) > WIDTH]
        long += [f"cell {i} output: {line}" for line in _printed_lines(cell)
                 if len(line) > WIDTH and not line.startswith(CHECKER)]
    assert not long, "lines over 88 characters:\n" + "\n".join(long)


@pytest.mark.parametrize("path", CHAPTER, ids=lambda p: p.parent.name)
def test_solution_code_starts_folded_in_jupyterlab(path):
    inside, folded, shown = False, 0, []
    for i, cell in enumerate(_cells(path)):
        if cell.cell_type == "markdown" and "{solution-start}" in cell.source:
            inside = True
        elif cell.cell_type == "markdown" and "{solution-end}" in cell.source:
            inside = False
        elif inside and cell.cell_type == "code" and not cell.source.startswith("check("):
            if cell.metadata.get("jupyter", {}).get("source_hidden") is True:
                folded += 1
            else:
                shown.append(i)
        elif not inside and cell.cell_type == "code":
            # stubs, check calls and the chapter's own code stay open
            assert not cell.metadata.get("jupyter", {}).get("source_hidden"), f"cell {i} is folded"
    assert not shown, f"solution cells not folded: {shown}"
    assert folded == 6  # one per exercise


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
        assert sum('check("ch2.pick_logprobs", pick_logprobs)' == s for s in sources) == 2
        assert not any("ch2.token_logprobs" in s for s in sources)
