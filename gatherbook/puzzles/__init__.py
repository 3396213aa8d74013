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
import sys
import textwrap
from typing import Any, Callable

import torch

from gatherbook.puzzles import level1, level2, level3, level4
from gatherbook.puzzles._core import Puzzle, Result, Wrong, run
from gatherbook.puzzles._guard import Forbidden, GROUPS
from gatherbook.puzzles._texts import LEVELS, PUZZLES as _WORDS, UI
from gatherbook.runtime import resolve

__all__ = ["PUZZLES", "Puzzle", "Result", "Wrong", "allowed", "board", "check", "get", "names",
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


def allowed(name: str) -> str:
    """The operations puzzle ``name`` allows, in Markdown (each in backticks, groups by ``;``)."""
    return ops_text(get(name), "`")


# --------------------------------------------------------------------------------------------
# the message

def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _rows(v: torch.Tensor) -> list[str]:
    """The values of a small tensor, one row per line (3D: the slices one after another)."""
    if v.ndim == 0:
        return [repr(v.item())]
    if v.ndim == 1:
        return [repr(v.tolist())]
    if v.ndim == 2:
        return [repr(r) for r in v.tolist()]
    return [line for i in range(v.shape[0]) for line in [f"[{i}]"] + ["  " + r for r in _rows(v[i])]]


def _describe(label: str, v: Any, ui: dict, indent: str = "  ") -> list[str]:
    if isinstance(v, torch.Tensor):
        lines = [f"{indent}{label}{ui['sep']}" + ui["tensor"].format(shape=tuple(v.shape), dtype=_dtype(v))]
        if 0 < v.numel() <= 64 and v.ndim <= 3:
            lines += [indent + "    " + line for line in _rows(v)]
        return lines
    return [f"{indent}{label}{ui['sep']}{v!r}"]


def _kind_line(r: Result, ui: dict) -> str:
    if r.kind == "forbidden":
        op = r.facts["op"]
        if op == "x[tensor]":
            return ui["kind.forbidden_index"]
        if r.facts.get("limit"):
            return ui["kind.forbidden_limit"].format(op=op, limit=r.facts["limit"])
        from gatherbook.puzzles._guard import TO_PYTHON

        key = "kind.forbidden_python" if op in TO_PYTHON else "kind.forbidden"
        return ui[key].format(op=op)
    return ui["kind." + r.kind].format(**r.facts)


def render(p: Puzzle, r: Result, lang: str) -> str:
    """The text of ``r`` in ``lang``."""
    ui = UI[lang]
    if r.status == "passed":
        return ui["passed"].format(name=p.name, edges=r.n_edges, search=r.n_search)
    if r.status == "not_attempted":
        return ui["not_attempted"].format(name=p.name)
    head = ui["failed.edge"].format(name=p.name, case=r.case, n=len(p.edges)) if r.found == "edge" \
        else ui["failed.search"].format(name=p.name)
    lines = [head, _kind_line(r, ui)]
    if r.kind in ("forbidden", "loop"):
        lines.append(ui["allowed"].format(ops=ops_text(p)))
        return "\n".join(lines)
    lines.append(ui["input"])
    for arg, value in zip(p.args, r.inputs):
        lines += _describe(arg, value, ui)
    lines += _describe(ui["expected"], r.expected, ui, indent="")
    if r.got is not None or r.kind != "exception":
        lines += _describe(ui["got"], r.got, ui, indent="")
    if r.hint_key:
        hint = ui[r.hint_key] if r.hint_key.startswith("generic.") and r.hint_key in ui \
            else _WORDS[lang][p.name].get(r.hint_key)
        if hint:
            lines.append(ui["likely"] + hint)
    return "\n".join(lines)


def _fit(message: str) -> str:
    try:
        from gatherbook.exercises._messages import fit
    except ImportError:  # pragma: no cover - the exercises' printer moved
        return message
    return fit(message)


# --------------------------------------------------------------------------------------------
# checking

def run_check(name: str, fn: Callable[..., Any], *, lang: str | None = None) -> Result:
    """Check ``fn`` against puzzle ``name`` and return the :class:`Result` (prints nothing).

    Raises:
        ValueError: no puzzle is called ``name``.
        TypeError: ``fn`` is not callable.
    """
    lang = resolve(lang)
    p = get(name, lang=lang)
    if not callable(fn):
        raise TypeError(f"check needs the function itself, e.g. check({name!r}, {p.name}); "
                        f"got {type(fn).__name__}.")
    r = run(p, fn)
    import dataclasses

    return dataclasses.replace(r, lang=lang, message=render(p, r, lang))


def figure(r: Result):
    """The picture of a failed :class:`Result`: inputs, expected, yours (``None`` if nothing to draw)."""
    if r.status != "failed" or r.kind in ("forbidden", "loop") or r.inputs is None:
        return None
    from gatherbook.puzzles.draw import draw_case

    p = get(r.name)
    panels = [(a, v, "input") for a, v in zip(p.args, r.inputs)]
    panels.append(("expected", r.expected, "expected"))
    if isinstance(r.got, torch.Tensor):
        panels.append(("yours", r.got, "yours"))
    if sum(v.numel() for _, v, _ in panels if isinstance(v, torch.Tensor)) > 200:
        return None
    return draw_case(panels, mark=r.differs)


def _show(fig) -> None:
    import matplotlib.pyplot as plt

    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:  # pragma: no cover
        shell = None
    if shell is not None and getattr(shell, "kernel", None) is not None:
        from IPython.display import display

        sys.stdout.flush()
        display(fig)
    plt.close(fig)


def check(name: str, fn: Callable[..., Any], *, lang: str | None = None, record: bool = True) -> None:
    """Check the reader's ``fn`` against puzzle ``name``: print the verdict, draw a failure.

    ``record=False`` keeps the result off the board (the book's own solution cells use it).
    """
    r = run_check(name, fn, lang=lang)
    if record and r.status != "not_attempted":
        if r.passed:
            _BOARD[r.name] = "solved"
        elif _BOARD.get(r.name) != "solved":
            _BOARD[r.name] = "tried"
    print(_fit(r.message))
    fig = figure(r)
    if fig is not None:
        _show(fig)


def show(name: str):
    """Draw the worked example of puzzle ``name``: its inputs and the target (from the loops)."""
    from gatherbook.puzzles.draw import draw_case

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
    lines = [ui["board.title"].format(solved=solved, n=len(PUZZLES), tried=tried)]
    for level in (1, 2, 3, 4):
        lines.append(ui["board.level"].format(level=level) + f" · {LEVELS[lang][level]}")
        marks = {"solved": "✔", "tried": "✘"}
        lines.append("  " + "  ".join(f"{marks.get(_BOARD.get(n), '·')}\u00a0{n}" for n in names(level)))
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
