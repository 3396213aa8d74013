"""Self-study exercises that check the reader's answer and explain the mistake::

    check("ch1.pick_per_row", pick_per_row)        # prints the verdict, draws expected vs got
    r = run_check("ch1.pick_per_row", fn, lang="en")  # an autograder's entry: prints nothing
    r.passed, r.message, r.status, r.case, r.kind, r.hint_key   # the facts behind the message

Each module named in :data:`CHAPTERS` declares ``EXERCISES``, a list of :class:`Exercise` that
hold their reference, cases, right and planted wrong answers and words (API.md says how);
``@exercise(...)`` above a reference appends one.
"""
from __future__ import annotations

import dataclasses
import difflib
import importlib
import sys
from typing import TYPE_CHECKING, Any, Callable

import torch

from gatherbook.exercises import _messages
from gatherbook.exercises._checker import CheckResult, Exercise, Mistake, Rule, Wrong, exercise, run
from gatherbook.runtime import LANGUAGES, resolve

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CHAPTERS", "CheckResult", "Exercise", "Mistake", "Rule", "Wrong", "check", "exercise",
           "figure", "get", "names", "run_check", "title"]

#: The chapters' exercise modules, in book order: a new chapter appends its module's name.
CHAPTERS = ("ch1", "ch2", "ch3", "ch4", "ch5", "ch6", "ch7", "puzzles")

_REGISTRY: dict[str, Exercise] = {}


def _validate(chapter: str, module: Any) -> None:
    """A chapter module declares each exercise once, under its name, with its words in every language."""
    for ex in module.EXERCISES:
        keys = [m.key for m in ex.mistakes]
        hints = [w.hint for w in ex.wrong if w.hint is not None and not w.hint.startswith("generic.")]
        rules = [
            (ex.name.startswith(chapter + "."), f"its name must start with {chapter + '.'!r}"),
            (ex.name not in _REGISTRY, "it is declared twice"),
            (len(set(keys)) == len(keys), f"two mistakes share a key: {keys}"),
            (set(hints) <= set(keys), f"a wrong answer's hint is no mistake's key: {hints}"),
            (ex.bug is None or ex.bug in keys, f"bug={ex.bug!r} is no mistake's key"),
            (all(ex.title.get(lang) for lang in LANGUAGES), f"declare title={{'en': ..., 'zh': ...}}"),
            (all(getattr(m, lang) for m in ex.mistakes for lang in LANGUAGES), "every mistake needs en= and zh="),
        ]
        problem = next((text for ok, text in rules if not ok), None)
        if problem:
            raise ValueError(f"{ex.name} (in {chapter}.py): {problem}")
        _REGISTRY[ex.name] = ex


def _load() -> dict[str, Exercise]:
    """Import the chapter modules named in :data:`CHAPTERS` once and collect their exercises."""
    if not _REGISTRY:
        try:
            for chapter in CHAPTERS:
                _validate(chapter, importlib.import_module(f"gatherbook.exercises.{chapter}"))
        except Exception:
            _REGISTRY.clear()  # all or nothing
            raise
    return _REGISTRY


def names() -> list[str]:
    """The names of all exercises, chapter by chapter, in the order the chapters declare them."""
    return list(_load())


def get(name: str, *, lang: str | None = None) -> Exercise:
    """The :class:`Exercise` called ``name``; for a name that is none, a ValueError whose
    message (in ``lang``) lists the valid names and the closest."""
    reg = _load()
    if isinstance(name, str) and name in reg:
        return reg[name]
    lang = resolve(lang)
    close = difflib.get_close_matches(str(name), list(reg), n=1, cutoff=0.5)
    suggestion = _messages.text(lang, "error.suggestion", close=close[0]) if close else ""
    raise ValueError(_messages.text(lang, "error.unknown_name", name=name, suggestion=suggestion,
                                    valid=", ".join(reg)))


def title(name: str, lang: str | None = None) -> str:
    """The title of exercise ``name`` in ``lang`` (default: the notebook's language)."""
    lang = resolve(lang)
    return get(name, lang=lang).title[lang]


def hint(result: CheckResult, lang: str) -> str | None:
    """The hint ``result.hint_key`` names, in ``lang``: the exercise's or the checker's."""
    key = result.hint_key
    if key is None:
        return None
    if key.startswith("generic."):
        return _messages.text(lang, key, **result.hint_params)
    return getattr(_load()[result.name].mistake(key), lang)


def _rule_text(ex: Exercise, result: CheckResult, lang: str) -> str | None:
    rule = next((r for r in ex.rules if r.key == result.facts.get("rule")), None)
    return getattr(rule, lang).format(**result.facts) if rule and result.kind == "rule" else None


def run_check(name: str, fn: Callable[..., Any], *, lang: str | None = None) -> CheckResult:
    """Check ``fn`` against exercise ``name`` without printing anything (the autograder's entry).

    Args:
        name: an exercise name such as ``"ch1.pick_per_row"`` (see :func:`names`).
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

    Introduced in Chapter 1.
    """
    lang = resolve(lang)
    ex = get(name, lang=lang)
    if not callable(fn):
        extra = _messages.text(lang, "error.tensor_shape", shape=_messages.shape(fn)) \
            if isinstance(fn, torch.Tensor) else ""
        raise TypeError(_messages.text(lang, "error.not_callable", name=ex.name, short=ex.name.split(".", 1)[1],
                                       what=_messages.type_name(fn), extra=extra))
    result = run(ex, fn)
    message = _messages.render(result, ex.args, hint(result, lang), lang, _rule_text(ex, result, lang))
    return dataclasses.replace(result, lang=lang, message=message)


def figure(result: CheckResult) -> "Figure | None":
    """A picture of expected vs got for a failed :class:`CheckResult`, or ``None``.

    Drawn from the record with :func:`gatherbook.figures.grid.draw_tensors` when both are tensors that
    can be drawn (0 to 3 dims, at most ``(4, 8, 10)``; the differing cells are marked for a values
    failure); ``None`` when there is nothing that makes sense to draw.

    Raises:
        TypeError: ``result`` is not a :class:`CheckResult` (pass what :func:`run_check` returns).
    """
    if not isinstance(result, CheckResult):
        raise TypeError(_messages.text(resolve(None), "error.figure", what=type(result).__name__))
    e, g = result.expected, result.got
    drawable = all(isinstance(t, torch.Tensor) and t.ndim <= 3 and t.numel() > 0 for t in (e, g))
    if result.kind not in ("shape", "values") or not drawable:
        return None
    from gatherbook.figures.grid import draw_tensors

    mark = {"got": result.differs} if result.differs is not None else None
    try:
        return draw_tensors({"expected": e, "got": g}, title=f"{result.name}  #{result.case}", mark=mark,
                            float_format=_messages.scalar)  # the numbers the text shows
    except ValueError:  # too big (or shapes it cannot draw): the text says it all
        return None


def _show(fig) -> None:
    """Display ``fig`` under the printed text in a notebook; elsewhere just release it."""
    import matplotlib.pyplot as plt

    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        from IPython.display import display

        sys.stdout.flush()
        display(fig)
    plt.close(fig)


def check(name: str, fn: Callable[..., Any], *, lang: str | None = None) -> None:
    """Check the reader's ``fn`` against exercise ``name``, print the verdict and draw it.

    Prints one line when every case passes; for a wrong answer, the first failing case: what
    differed, its inputs, expected and got, the likely mistake when it is a known one, and a
    picture of expected vs got. A function whose body is still the stub's ``raise
    NotImplementedError`` is reported as not attempted. Never raises for a wrong answer (the
    notebook keeps running); returns ``None``. :func:`run_check` returns the result instead.
    Raises what :func:`run_check` raises (``name`` not an exercise, ``fn`` not callable).

    Introduced in Chapter 1.
    """
    result = run_check(name, fn, lang=lang)
    print(_messages.fit(result.message))  # lines fit the page's code column (88 columns)
    fig = figure(result)
    if fig is not None:
        _show(fig)
