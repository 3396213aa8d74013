"""Practice: a graded ladder of gather and scatter puzzles, each checked by a property test.

Introduced in the Practice part (``notebooks/*/08_practice*.ipynb``). In a notebook::

    from gatherbook import puzzles as pz

    pz.show("pick_per_row")                 # the worked example: inputs and target
    pz.check("pick_per_row", pick_per_row)  # edge cases, then hypothesis's smallest failing case
    pz.board()                              # which puzzles are solved in this session

Each puzzle (:class:`Puzzle`, declared in ``level1.py`` ... ``level4.py``) holds its definition
as plain Python loops (``spec``), the book's solution, right answers written other ways, planted
wrong answers with their hints (words in ``_texts.py``), the operations allowed (enforced while
the answer runs, :mod:`._guard`), hand-written edge cases and a hypothesis strategy.
"""
from __future__ import annotations

import difflib
import inspect
import textwrap
from typing import Any, Callable

import torch

from gatherbook.puzzles import level1, level2, level3, level4
from gatherbook.puzzles._core import Puzzle, Wrong
from gatherbook.puzzles._guard import Forbidden, GROUPS
from gatherbook.puzzles._texts import PUZZLES as _WORDS, UI
from gatherbook.runtime import resolve

__all__ = ["PUZZLES", "Puzzle", "Wrong", "allowed", "board", "check", "get", "names",
           "run_check", "show", "title"]

#: every puzzle, level by level
PUZZLES: list[Puzzle] = level1.PUZZLES + level2.PUZZLES + level3.PUZZLES + level4.PUZZLES
_BY_NAME = {p.name: p for p in PUZZLES}

#: this session's board: name -> "solved" | "tried"
_BOARD: dict[str, str] = {}


def names(level: int | None = None) -> list[str]:
    """The puzzles' names in ladder order (of one level if given)."""
    return [p.name for p in PUZZLES if level is None or p.level == level]


def get(name: str, *, lang: str | None = None) -> Puzzle:
    """The :class:`Puzzle` called ``name``.

    Raises:
        ValueError: there is no such puzzle (the message names the closest and lists all).
    """
    if isinstance(name, str) and name in _BY_NAME:
        return _BY_NAME[name]
    lang = resolve(lang)
    close = difflib.get_close_matches(str(name), list(_BY_NAME), n=1, cutoff=0.5)
    raise ValueError(UI[lang]["unknown"].format(
        name=name, close=UI[lang]["close"].format(close=close[0]) if close else "",
        names=", ".join(_BY_NAME)))


def title(name: str, lang: str | None = None) -> str:
    """The puzzle's title in ``lang``."""
    return _WORDS[resolve(lang)][get(name).name]["title"]


def ops_text(p: Puzzle, code: str = "") -> str:
    """The allowed operations, grouped: ``gather; + - * ...; x[...] view ...`` (``code="`"``
    puts each in backticks, for Markdown)."""
    parts = []
    for op in p.allowed:
        members = GROUPS.get(op, (op,))
        parts.append(" ".join(f"{code}{m}{code}" for m in members))
    return "; ".join(parts)


GROUP_NAMES = {
    "en": {"arith": "arithmetic", "compare": "comparisons", "shape": "shapes and indexing",
           "create": "new tensors", "where": "selection", "scatter": "the scatter family"},
    "zh": {"arith": "算术", "compare": "比较", "shape": "形状与下标", "create": "新建张量",
           "where": "选择", "scatter": "scatter 一族"},
}


def allowed(name: str, lang: str | None = None) -> str:
    """The operations puzzle ``name`` allows, in Markdown: the puzzle's own first, then each group
    by its name (``arithmetic `+ - * ...```)."""
    lang = resolve(lang)
    own, groups = [], []
    for op in get(name).allowed:
        if op in GROUPS:
            groups.append(f"{GROUP_NAMES[lang][op]} `{' '.join(GROUPS[op])}`")
        else:
            own.append(f"`{op}`")
    sep = "; " if lang == "en" else "；"
    return sep.join([", ".join(own) if lang == "en" else "、".join(own)] + groups) if own \
        else sep.join(groups)


# --------------------------------------------------------------------------------------------
# checking: through the book's exercise checker (gatherbook.exercises), declared in
# gatherbook/exercises/puzzles.py as "puzzles.<name>"

def _fit(message: str) -> str:
    from gatherbook.exercises._messages import fit

    return fit(message)


def run_check(name: str, fn: Callable[..., Any], *, lang: str | None = None):
    """Check ``fn`` against puzzle ``name`` and return the checker's ``CheckResult`` (prints
    nothing); its ``message`` says, for a case hypothesis found, that it is the smallest one.

    Raises:
        ValueError: no puzzle is called ``name``.
        TypeError: ``fn`` is not callable.
    """
    import dataclasses

    from gatherbook.exercises import run_check as _run_check
    from gatherbook.puzzles import _core

    lang = resolve(lang)
    p = get(name, lang=lang)
    _core.LAST_SEARCH.clear()
    r = _run_check(f"puzzles.{p.name}", fn, lang=lang)
    ui = UI[lang]
    lines = r.message.split("\n")
    if r.status == "passed":
        lines[0] = ui["passed"].format(name=r.name, edges=len(p.edges),
                                       search=_core.LAST_SEARCH.get("examples", 0))
    elif r.kind == "rule":  # the values were right: the call and the allowed list say it all
        from gatherbook.exercises._messages import text

        if text(lang, "input") in lines:
            lines = lines[:lines.index(text(lang, "input"))]
    elif r.case is not None and r.case > len(p.edges) and r.status in ("failed", "raised"):
        lines.insert(1, ui["found"])
    return dataclasses.replace(r, message="\n".join(lines))


def figure(r):
    """The picture of a failed check: the inputs, expected and yours, stacked; when the answer
    raised, the error's name stands for yours (``None`` if there is nothing to draw: a rule
    broken, too many numbers)."""
    if r.status not in ("failed", "raised") or r.kind == "rule" or r.inputs is None \
            or not isinstance(r.expected, torch.Tensor):
        return None
    from gatherbook.figures.puzzles import draw_case

    p = get(r.name.split(".", 1)[1])
    panels = [(a, v, "input") for a, v in zip(p.args, r.inputs)]
    panels.append(("expected", r.expected, "expected"))
    if r.status == "raised":
        panels.append(("yours", r.facts["type"], "yours"))  # the error's name
    elif isinstance(r.got, torch.Tensor):
        panels.append(("yours", r.got, "yours"))
    if sum(v.numel() for _, v, _ in panels if isinstance(v, torch.Tensor)) > 200:
        return None
    return draw_case(panels, mark=r.differs)


def check(name: str, fn: Callable[..., Any], *, lang: str | None = None) -> None:
    """Check the reader's ``fn`` against puzzle ``name``: print the verdict and draw a failure
    (inputs, expected, yours). The result goes on the board, except for a function whose name
    ends in ``_solution`` (the book's own folded solutions)."""
    r = run_check(name, fn, lang=lang)
    if r.status != "not_attempted" and not getattr(fn, "__name__", "").endswith("_solution"):
        short = r.name.split(".", 1)[1]
        if r.passed:
            _BOARD[short] = "solved"
        elif _BOARD.get(short) != "solved":
            _BOARD[short] = "tried"
    print(_fit(r.message))
    fig = figure(r)
    if fig is not None:
        from gatherbook.exercises import _show

        _show(fig)


def show(name: str):
    """Draw the worked example of puzzle ``name``: its inputs and the target (from the loops)."""
    from gatherbook.figures.puzzles import draw_case

    p = get(name)
    case = p.edges[0]
    target = p.spec(*[a.clone() if isinstance(a, torch.Tensor) else a for a in case])
    panels = [(a, v, "input") for a, v in zip(p.args, case)] + [("target", target, "expected")]
    return draw_case(panels)


def board(*, lang: str | None = None) -> None:
    """Print which puzzles are solved (✔), tried (✘) or not tried (·) in this session."""
    lang = resolve(lang)
    ui = UI[lang]
    solved = sum(v == "solved" for v in _BOARD.values())
    tried = sum(v == "tried" for v in _BOARD.values())
    from gatherbook.puzzles._notebooks import PAGES, page_names, page_title

    lines = [ui["board.title"].format(solved=solved, n=len(PUZZLES))
             + (ui["board.tried"].format(tried=tried) if tried else "")]
    for number, *_ in PAGES:  # page by page, as the table of contents lists them
        lines.append(page_title(number, lang).replace(": ", " · ", 1).replace("：", " · ", 1))
        marks = {"solved": "✔", "tried": "✘"}
        lines.append("  " + "  ".join(f"{marks.get(_BOARD.get(n), '·')}\u00a0{n}" for n in page_names(number)))
    lines.append(ui["board.legend"])
    print(_fit("\n".join(lines)))


def reset_board() -> None:
    """Forget this session's results (tests use it)."""
    _BOARD.clear()


def source(fn: Callable[..., Any], name: str | None = None) -> str:
    """The source of a function, renamed to ``name`` (the notebooks' spec and solution cells)."""
    src = textwrap.dedent(inspect.getsource(fn))
    if name:
        src = src.replace(f"def {fn.__name__}(", f"def {name}(", 1)
    return src
