"""Reading time: the one measure behind every "**Time:**" a page of the book states.

Prose is read at the edition's rate a minute (``gatherbook/words/<code>.yml``,
``practice.intro.reading_rate``: 200 English words; 300 Chinese characters, Latin words counted
too), and each code cell a reader reads at half a minute. Not counted:

- outputs (a Predict answer's output is folded, every other output is read with its cell);
- folded solutions: from a cell whose source or ``gatherbook.lab.header`` opens
  ``{solution-start}`` to the one that holds ``{solution-end}``, and any cell whose source is
  hidden (``jupyter.source_hidden``);
- a figure's caption cell (``gatherbook.caption``): it repeats the caption the figure's code cell
  carries in its metadata, so a reader reads it once, with the figure;
- a page-only note (``gatherbook.site``, such as a practice page's folded hint).

A chapter's *core* leaves out its deep dives: every section whose heading starts with the
edition's ``deep_dive_prefix`` (``book/words``: "Deep dive: ", "深入："), down to the next heading
of the same or a higher level that is not a deep dive (``deepdives.py`` folds the same sections
on the site). ``tests/notebooks/test_reading_time.py`` checks each chapter's stated time against
:func:`chapter_minutes`; ``tools/practice_pages.py`` states the practice pages' times with
:func:`reading_minutes`.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_units(text: str) -> int:
    """Latin words, plus each Chinese character (a Chinese reader's unit)."""
    return len(re.findall(r"[A-Za-z0-9_']+", text)) + len(re.findall(r"[\u4e00-\u9fff]", text))


def rate(lang: str) -> int:
    """Prose units a minute in edition ``lang``."""
    from gatherbook.exercises.words import table

    return table(lang)["practice"]["intro"]["reading_rate"]


def _text(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def read_cells(cells: Iterable[dict]) -> Iterable[dict]:
    """The cells a reader reads: folded solutions, hidden code, caption repeats and page-only
    notes left out (see the module's docstring)."""
    folded = False
    for cell in cells:
        text = _text(cell)
        meta = cell.get("metadata", {})
        mark = text + str(meta.get("gatherbook", {}).get("lab", {}).get("header", ""))
        if "{solution-start}" in mark:
            folded = True
        if "{solution-end}" in mark:
            folded = False
            continue
        gb = meta.get("gatherbook", {})
        if folded or meta.get("jupyter", {}).get("source_hidden") or "caption" in gb or "site" in gb:
            continue
        yield cell


def _units(cells: Iterable[dict], lang: str, code: Callable[[str], bool]) -> tuple[float, float]:
    """(core, deep-dive) minutes of ``cells``, not rounded."""
    from .words import table

    prefix = table(lang)["deep_dive_prefix"].strip()
    prose, cells_read = [0, 0], [0, 0]  # [core, deep dive]
    dive = 0  # level of the deep dive we are in; 0: the core
    for cell in read_cells(cells):
        text = _text(cell)
        if cell["cell_type"] == "code":
            cells_read[bool(dive)] += bool(code(text))
            continue
        if cell["cell_type"] != "markdown":
            continue
        fenced = False
        for line in text.splitlines():
            if FENCE.match(line):
                fenced = not fenced
            heading = None if fenced else HEADING.match(line)
            if heading:
                level, title = len(heading.group(1)), heading.group(2).strip()
                if title.startswith(prefix) and (not dive or level <= dive):
                    dive = level
                elif dive and level <= dive:
                    dive = 0
            prose[bool(dive)] += prose_units(line)
    per = rate(lang)
    return (prose[0] / per + cells_read[0] / 2, prose[1] / per + cells_read[1] / 2)


def reading_minutes(cells: list[dict], lang: str, code: Callable[[str], bool] = lambda text: True) -> int:
    """Minutes to read ``cells`` whole (deep dives included); ``code`` says which code cells a
    reader reads (default: all)."""
    core, deep = _units(cells, lang, code)
    return round(core + deep)


def chapter_minutes(cells: list[dict], lang: str) -> tuple[int, int]:
    """(core, with the deep dives) minutes of a chapter's ``cells``."""
    core, deep = _units(cells, lang, lambda text: True)
    return round(core), round(core + deep)
