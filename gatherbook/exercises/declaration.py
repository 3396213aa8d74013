"""How a checked task is declared, chapter exercise or Practice puzzle alike: one ``@exercise(...)``
above its reference solution (API.md describes every field with a complete example).

A declaration holds facts only: the reference, the cases, the right answers written other ways,
the planted mistakes and their keys, the loops that define a puzzle (``spec``), how its random
cases are drawn or searched (``random_case``, ``strategy``) and the operations it allows. Its
words (title, hints, a puzzle's task) are in the edition's words file, ``gatherbook/words/<code>.yml``,
under the exercise's name.

The declarations are grouped in *parts*: a chapter's module (``ch1`` ... ``ch7``), or the pages of
the Practice ladder (``puzzles.page1`` ..., whose module says ``PART = "puzzles"`` and its
``PAGE``). :func:`load` imports a part's modules the first time one of its names is asked for,
so a chapter's check never imports the Practice declarations (nor hypothesis).
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import torch

Case = tuple  # the positional arguments of one call

#: the parts of the book that declare exercises, in book order, and the modules of each: a new
#: chapter appends ``"ch9": ("ch9",)``; a new page of the ladder appends its module to "puzzles"
PARTS: dict[str, tuple[str, ...]] = {
    **{f"ch{k}": (f"ch{k}",) for k in range(1, 8)},
    "puzzles": ("puzzles.page1", "puzzles.page2", "puzzles.page3", "puzzles.page4a", "puzzles.page4b"),
}


@dataclass(frozen=True)
class Mistake:
    """A plausible wrong answer ``fn``; its hint is the words file's ``hints.<key>``.

    Named only when the reader's output equals ``fn``'s on every case, the cases a ``strategy``
    draws included (and, for a fault such as an input changed in place, ``fn`` has the same
    fault). It is also a planted wrong answer: the generic test checks that it is rejected with
    this hint.
    """

    key: str
    fn: Callable[..., Any]


@dataclass(frozen=True)
class Wrong:
    """A planted wrong answer that must be rejected with ``hint`` (a :class:`Mistake` key,
    ``"generic.<what>"`` or ``None``) and, unless ``None``, failure ``kind`` (API.md lists them).
    ``why``: what the answer does, for whoever reads the declaration."""

    fn: Callable[..., Any]
    hint: str | None = None
    kind: str | None = None
    why: str = ""


@dataclass(frozen=True)
class Rule:
    """A check of the exercise's own, tried on every case once the values are right.

    ``test(fn, case)`` runs ``fn`` on fresh copies of one case and returns ``None`` when the rule
    holds, or a dict of facts that the words file's ``rules.<key>`` is ``str.format``-ed with.
    """

    key: str
    test: Callable[[Callable[..., Any], Case], dict | None]


@dataclass(frozen=True)
class Exercise:
    """One exercise or puzzle: everything about it in one declaration (API.md explains every field)."""

    reference: Callable[..., Any]      # the solution (creates tensors on its inputs' device)
    edge_cases: Sequence[Case]         # hand-written, small, checked first (a puzzle's first is drawn)
    name: str = ""                     # what readers pass to check; default "<part>." + reference's
    args: tuple[str, ...] = ()         # the arguments' names, in order; default: reference's
    random_case: Callable[[torch.Generator], Case] | None = None  # one case from a CPU generator
    n_random: int = 8
    seed: int = 0
    rtol: float = 1e-5
    atol: float = 1e-8
    mistakes: Sequence[Mistake] = ()
    grad: str | None = None            # "same": trained through; "none": a fixed target
    chunk_rows: int | None = None      # no operation may receive more rows of args[0] at once
    right: Sequence[Callable[..., Any]] = ()  # answers written other ways: must pass
    wrong: Sequence[Wrong] = ()        # more planted wrong answers
    grad_args: tuple[str, ...] | None = None  # the inputs grad="same" compares (default: all floats)
    rules: Sequence[Rule] = ()
    time_limit: float = 30.0           # seconds for the whole check
    bug: str | None = None             # find-the-bug: the Mistake that the notebook's stub is
    # --- what the Practice puzzles use; any exercise may ---
    spec: Callable[..., Any] | None = None  # the definition as plain loops (shown; the search compares with it)
    strategy: Callable[[], Any] | None = None  # a hypothesis strategy of cases: search a failing one
    n_examples: int = 20               # the cases the search draws after the edge cases
    allowed: tuple[str, ...] = ()      # only these operations (names or guard.GROUPS), and no Python loop
    limits: Mapping[str, int] = field(default_factory=dict)  # at most so many calls: {"argsort": 1}
    signature: str = ""                # the stub's shapes: "x: (B, N), idx: (B,) -> (B,)"
    taught_in: str = ""                # the notebook (file stem) that teaches what it practises
    #: drawn beside the worked example (edge_cases[0]) where one example does not show the pattern:
    #: an index into edge_cases (an edge case), or a small case of its own (not checked; the
    #: reference and the loops must run on it); its caption line is the words file's examples.b
    second_example: int | Case | None = None

    def __post_init__(self) -> None:
        if not self.name:  # the part (the module's PART, or its name: "ch1") and the reference's own name
            part = self.reference.__globals__.get("PART") or self.reference.__module__.rsplit(".", 1)[-1]
            object.__setattr__(self, "name", f"{part}.{self.reference.__name__}")
        if not self.args:
            object.__setattr__(self, "args", tuple(inspect.signature(self.reference).parameters))
        assert self.grad in (None, "same", "none"), f"{self.name}: grad={self.grad!r}"

    @property
    def part(self) -> str:
        return self.name.split(".", 1)[0]

    def cases(self) -> list[Case]:
        """The edge cases, then ``n_random`` seeded random ones (the same on every call)."""
        g = torch.Generator(device="cpu").manual_seed(self.seed)
        drawn = [self.random_case(g) for _ in range(self.n_random)] if self.random_case else []
        return list(self.edge_cases) + drawn

    def examples(self) -> list[Case]:
        """The cases its worked-example picture draws: the first edge case, and the
        ``second_example`` where it names one."""
        second = self.second_example
        if second is None:
            return [self.edge_cases[0]]
        return [self.edge_cases[0], self.edge_cases[second] if isinstance(second, int) else second]

    def mistake(self, key: str) -> Mistake:
        """The :class:`Mistake` called ``key``."""
        return next(m for m in self.mistakes if m.key == key)


def exercise(**fields: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare, above its reference, the :class:`Exercise` that ``Exercise(reference, **fields)``
    makes; it joins its module's ``EXERCISES`` (in source order) and the reference's ``.exercise``.
    The reference comes back unchanged."""
    def declare(reference: Callable[..., Any]) -> Callable[..., Any]:
        ex = Exercise(reference, **fields)
        reference.__globals__.setdefault("EXERCISES", []).append(ex)
        reference.exercise = ex  # type: ignore[attr-defined]
        return reference
    return declare


# --- the registry: each part loaded once, when one of its names is first asked for ---------------

_REGISTRY: dict[str, Exercise] = {}
_LOADED: dict[str, list] = {}  # part -> its modules, loaded
_CHECKING: list[bool] = []     # a check is running: an answer may not read the declarations


@contextlib.contextmanager
def checking():
    """While a check runs, :func:`load` (and so ``gb.get``, ``gb.title`` ...) refuses: the answer
    being checked cannot read its exercise's reference that way."""
    _CHECKING.append(True)
    try:
        yield
    finally:
        _CHECKING.pop()


def _validate(part: str, module: Any) -> None:
    """A module declares each exercise once, under its part's name."""
    for ex in module.EXERCISES:
        keys = [m.key for m in ex.mistakes]
        hints = [w.hint for w in ex.wrong if w.hint is not None and not w.hint.startswith("generic.")]
        rules = [
            (ex.name.startswith(part + "."), f"its name must start with {part + '.'!r}"),
            (ex.name not in _REGISTRY, "it is declared twice"),
            (len(set(keys)) == len(keys), f"two mistakes share a key: {keys}"),
            (set(hints) <= set(keys), f"a wrong answer's hint is no mistake's key: {hints}"),
            (ex.bug is None or ex.bug in keys, f"bug={ex.bug!r} is no mistake's key"),
        ]
        problem = next((text for ok, text in rules if not ok), None)
        assert problem is None, f"{ex.name} (in {module.__name__}): {problem}"
        _REGISTRY[ex.name] = ex


def load(part: str | None = None) -> dict[str, Exercise]:
    """The exercises declared so far, after importing ``part``'s modules (every part's: ``None``).

    Raises:
        RuntimeError: called while a check runs (from inside the answer being checked).
    """
    if _CHECKING:
        from gatherbook.exercises.words import text
        from gatherbook.runtime import resolve

        raise RuntimeError(text(resolve(None), "error.inside_answer"))
    for p in PARTS if part is None else [part]:
        if p in PARTS and p not in _LOADED:
            modules = [importlib.import_module(f"gatherbook.exercises.{m}") for m in PARTS[p]]
            for module in modules:
                _validate(p, module)
            _LOADED[p] = modules
    if part is None:  # in book order, whatever was asked for first
        return {ex.name: ex for p in PARTS for m in _LOADED[p] for ex in m.EXERCISES}
    return _REGISTRY


def pages() -> list[tuple[str, str, int, list[str]]]:
    """The Practice ladder, page by page: ``(number, notebook stem, level, names)``; the level is
    the number's digit (page ``"4b"`` is the second page of level 4)."""
    load("puzzles")
    return [(m.PAGE[0], m.PAGE[1], int(m.PAGE[0][0]), [ex.name for ex in m.EXERCISES]) for m in _LOADED["puzzles"]]


def puzzle_numbers() -> dict[str, int]:
    """Each puzzle's number, 1 to 33 in ladder order: "Puzzle 9" on its page, in Lab and on the board."""
    return {name: k for k, name in enumerate((n for *_, names in pages() for n in names), start=1)}
