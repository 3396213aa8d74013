"""Self-study exercises and the Practice puzzles, checked one way::

    gb.check("ch1.pick_per_row", pick_per_row)        # prints the verdict, draws the failing case
    gb.show("puzzles.pick_per_row")                   # a puzzle's worked example: inputs and target
    gb.board()                                        # the Practice ladder: solved, tried, not tried
    r = gb.run_check("ch1.pick_per_row", fn, lang="en")  # an autograder's entry: prints nothing
    r.passed, r.message, r.status, r.case, r.kind, r.hint_key   # the facts behind the message

Every checked task is one ``@exercise(...)`` declaration (:mod:`.declaration`, API.md); the
checker (:mod:`.checker`) records facts, :mod:`.messages` words them in the edition's language
(:mod:`.words`), :mod:`gatherbook.figures.checks` draws them.
"""
from __future__ import annotations

import dataclasses
import difflib
import sys
from typing import TYPE_CHECKING, Any, Callable

import torch

from gatherbook.exercises import messages
from gatherbook.exercises.checker import CheckResult, changed, run
from gatherbook.exercises.declaration import (Exercise, Mistake, Rule, Wrong, exercise, load, pages,
                                              puzzle_numbers)
from gatherbook.exercises.words import of, table, text
from gatherbook.runtime import resolve

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CheckResult", "Exercise", "Mistake", "Rule", "Wrong", "board", "check", "exercise",
           "figure", "get", "names", "run_check", "show", "title"]

#: this session's board: name -> "solved" | "tried" (the book's own ``*_solution`` functions do not count)
_BOARD: dict[str, str] = {}


def names() -> list[str]:
    """The names of all exercises and puzzles, in book order."""
    return list(load())


def get(name: str, *, lang: str | None = None) -> Exercise:
    """The :class:`Exercise` called ``name``; for a name that is none, a ValueError whose
    message (in ``lang``) lists the valid names and the closest."""
    if isinstance(name, str) and name in load(name.split(".", 1)[0]):
        return load(name.split(".", 1)[0])[name]
    lang = resolve(lang)
    valid = names()
    same = [n for n in valid if n.split(".", 1)[1] == name]  # the name without its part ("puzzles.")
    close = same or difflib.get_close_matches(str(name), valid, n=1, cutoff=0.5)
    suggestion = text(lang, "error.suggestion", close=" / ".join(repr(n) for n in close)) if close else ""
    part = close[0].split(".", 1)[0] if close else None  # the valid names of that part (all: none close)
    shown = [n for n in valid if part is None or n.startswith(part + ".")]
    raise ValueError(text(lang, "error.unknown_name", name=name, suggestion=suggestion, valid=", ".join(shown)))


def title(name: str, lang: str | None = None) -> str:
    """The title of exercise ``name`` in ``lang`` (default: the notebook's language)."""
    lang = resolve(lang)
    return of(get(name, lang=lang).name, lang)["title"]


def run_check(name: str, fn: Callable[..., Any], *, lang: str | None = None) -> CheckResult:
    """Check ``fn`` against exercise ``name`` without printing anything (the autograder's entry).

    Args:
        name: an exercise name such as ``"ch1.pick_per_row"`` or ``"puzzles.reverse"`` (see :func:`names`).
        fn: the reader's function; it is called with each case's inputs as positional arguments.
        lang: the language of the message and of argument errors, ``"en"`` or ``"zh"``
            (default: :func:`gatherbook.runtime.language`).

    Returns:
        A :class:`CheckResult`: ``passed``, ``attempted``, ``message`` (what :func:`check`
        prints) and the facts behind it (``status``, ``case``, ``kind``, ``facts``, ``hint_key``).

    Raises:
        ValueError: ``name`` is not an exercise (the message lists the valid names), or ``lang``
            is not a language of the book.
        TypeError: ``fn`` is not callable.
        RuntimeError: a notebook cell replaced part of the checker (restart the kernel).

    Introduced in Chapter 1.
    """
    lang = resolve(lang)
    if replaced := changed():
        raise RuntimeError(text(lang, "error.checker_changed", names=", ".join(replaced)))
    ex = get(name, lang=lang)
    if not callable(fn):
        extra = text(lang, "error.tensor_shape", shape=messages.shape(fn)) if isinstance(fn, torch.Tensor) else ""
        raise TypeError(text(lang, "error.not_callable", name=ex.name, short=ex.name.split(".", 1)[1],
                             what=messages.type_name(fn), extra=extra))
    result = run(ex, fn)
    return dataclasses.replace(result, lang=lang, message=messages.render(result, ex, lang))


def figure(result: CheckResult) -> "Figure | None":
    """A picture of a failed :class:`CheckResult`, or ``None`` when there is nothing to draw.

    A puzzle's (an exercise with ``spec``): its inputs, then yours beside the expected target
    (stacked where that row would be too wide); a chapter exercise's: expected beside got. The
    differing cells are outlined for a values failure.

    Raises:
        TypeError: ``result`` is not a :class:`CheckResult` (pass what :func:`run_check` returns).
    """
    if not isinstance(result, CheckResult):
        raise TypeError(text(resolve(None), "error.figure", what=type(result).__name__))
    from gatherbook.figures import checks

    ex = get(result.name)
    if ex.spec is not None:
        return checks.draw_failed_case(result, ex.args, messages.scalar)
    return checks.draw_expected_got(result, messages.scalar)


def _display(fig, lang: str | None = None) -> None:
    """Display ``fig`` under the printed text in a notebook (inside an open ``gb.folded()``, in
    its fold); elsewhere just release it."""
    import matplotlib.pyplot as plt

    from IPython import get_ipython

    from gatherbook.folds import hold_figure

    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        from IPython.display import display

        sys.stdout.flush()
        if not hold_figure(fig, table(resolve(lang))["notebook"]["check_picture_alt"]):
            display(fig)  # (inside gb.folded() the picture goes in the fold)
    plt.close(fig)


def check(name: str, fn: Callable[..., Any], *, lang: str | None = None) -> None:
    """Check the reader's ``fn`` against exercise ``name``, print the verdict and draw it.

    Prints one line when every case passes; for a wrong answer, the first failing case: what
    differed, its inputs, expected and got, the likely mistake when it is a known one, and a
    picture. A function whose body is still the stub's ``raise NotImplementedError`` is reported
    as not attempted. The result goes on the :func:`board`, except for the book's own solutions
    (a function whose name ends in ``_solution``). Never raises for a wrong answer (the notebook
    keeps running); returns ``None``. :func:`run_check` returns the result instead. Raises what
    :func:`run_check` raises (``name`` not an exercise, ``fn`` not callable).

    Introduced in Chapter 1.
    """
    result = run_check(name, fn, lang=lang)
    if result.attempted and not getattr(fn, "__name__", "").endswith("_solution"):
        if result.passed:
            _BOARD[result.name] = "solved"
        elif _BOARD.get(result.name) != "solved":
            _BOARD[result.name] = "tried"
    print(messages.fit(result.message))  # lines fit the page's code column (88 columns)
    if result.passed:
        from gatherbook.folds import unfold

        unfold()  # inside gb.folded() (a find-the-bug check), a ✔ gives nothing away: shown open
    fig = figure(result)
    if fig is not None:
        _display(fig, lang)


def show(name: str) -> "Figure | None":
    """Draw the worked example of exercise ``name``: the inputs of its first case and the target
    (what a puzzle's loops compute, or the reference); a target value copied from an input is
    coloured as the cell it came from. A puzzle whose declaration names a ``second_example`` (an
    edge case the first does not show) gets both, (a) beside (b) where they fit.

    Introduced in the Practice part."""
    import numpy as np

    from gatherbook.figures.checks import copy_links, draw_case, draw_examples
    from gatherbook.figures.grid import PLAIN, QUIET

    ex = get(name)
    fn = ex.spec or ex.reference
    cases = ex.examples()
    targets = [fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in case]) for case in cases]
    found = [copy_links(fn, case, target) for case, target in zip(cases, targets)]  # target cell -> its source
    source = next((f[0] for f in found if f is not None), None)
    panels, links = [], []
    label = "expected"  # as the check's picture names it (not "target": smooth_labels' argument)
    for case, target, ids in zip(cases, targets, found):
        panels.append([(a, v, "input") for a, v in zip(ex.args, case)] + [(label, target, "expected")])
        if ids is None and source is not None and isinstance(target, torch.Tensor):
            # the other example copies values, this one none: its source grey, its target plain
            ids = (source, np.full(tuple(case[source].shape), QUIET), np.full(tuple(target.shape), PLAIN))
        links.append(None if ids is None else {ex.args[ids[0]]: ids[1], label: ids[2]})
    if len(cases) == 1:
        return draw_case(panels[0], fmt=messages.scalar, links=links[0])
    return draw_examples(panels, links=links, fmt=messages.scalar)


def board(*, lang: str | None = None) -> None:
    """Print which puzzles of the Practice ladder are solved (✔), tried (✘) or not tried (·) in
    this session, page by page.

    Introduced in the Practice part."""
    lang = resolve(lang)
    ladder = pages()
    ours = {n for *_, page in ladder for n in page}
    solved = sum(_BOARD.get(n) == "solved" for n in ours)
    tried = sum(_BOARD.get(n) == "tried" for n in ours)
    lines = [text(lang, "board.title", solved=solved, n=len(ours))
             + (text(lang, "board.tried", tried=tried) if tried else "")]
    marks = {"solved": "✔", "tried": "✘"}
    labels = table(lang)["practice"]["page_numbers"]  # "Level 4b", "第 4 级（下）"
    numbers = puzzle_numbers()  # Puzzle 1 to 33
    for number, _, _, page in ladder:  # its title is in the contents beside
        lines.append(text(lang, "board.page", page=labels[number], first=numbers[page[0]], last=numbers[page[-1]]))
        lines += _packed([f"{marks.get(_BOARD.get(n), '·')}\u00a0{numbers[n]}\u00a0{n.split('.', 1)[1]}"
                          for n in page], indent="  ", gap="  ")
    lines += _packed(text(lang, "board.legend").split("   "), indent="", gap="   ")
    if closing := _closing(ladder, lang):
        lines.append(closing)
    print(messages.fit("\n".join(lines)))


#: columns of a board line: a 390 px phone's code column holds about 44, so no line wraps there
#: (a wrapped line continues further in, which reads as nesting)
BOARD_WIDTH = 44


def _packed(items: list[str], *, indent: str, gap: str) -> list[str]:
    """``items`` on lines of at most BOARD_WIDTH columns, each line starting with ``indent``."""
    lines, current = [], ""
    for item in items:
        if current and messages.columns(indent + current + gap + item) > BOARD_WIDTH:
            lines.append(indent + current)
            current = item
        else:
            current = current + gap + item if current else item
    return lines + ([indent + current] if current else [])


def _closing(ladder: list, lang: str) -> str:
    """The board's closing moment: the whole ladder solved; else the levels and the pages whose
    puzzles are all solved (a level of two pages, 4a and 4b, once both are; a page of it alone
    until then), and, when puzzles after them are still open, that those build on these."""
    done = [all(_BOARD.get(n) == "solved" for n in page) for *_, page in ladder]
    if all(done):
        return text(lang, "board.all_done", n=sum(len(page) for *_, page in ladder))
    labels, parts = table(lang)["practice"]["page_numbers"], []
    for level in sorted({lv for _, _, lv, _ in ladder}):
        mine = [(number, ok) for (number, _, lv, _), ok in zip(ladder, done) if lv == level]
        if all(ok for _, ok in mine):
            parts.append(text(lang, "board.level", level=level))
        else:
            parts += [labels[number] for number, ok in mine if ok]
    if not parts:
        return ""
    last = max(i for i, ok in enumerate(done) if ok)
    line = text(lang, "board.level_done", levels=table(lang)["practice"]["list_sep"].join(parts))
    return line + (text(lang, "board.next") if not all(done[last + 1:]) else "")


def reset_board() -> None:
    """Forget this session's results (tests use it)."""
    _BOARD.clear()
