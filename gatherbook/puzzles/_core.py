"""A puzzle's declaration, and hypothesis's search for the smallest case an answer gets wrong.

A :class:`Puzzle` holds the definition as loops, the solution, right and planted wrong answers,
the allowed operations, edge cases and a hypothesis strategy; gatherbook/exercises/puzzles.py
declares it to the book's checker, which compares (type, exact shape, dtype, values: nothing is
broadcast) and words the result. :func:`search` is the checker's ``Exercise.search``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from gatherbook.exercises._checker import _call, _same
from gatherbook.puzzles._guard import expand

Case = tuple


@dataclass(frozen=True)
class Wrong:
    """A planted wrong answer: when the reader's output equals ``fn``'s, the hint ``key`` is shown."""

    key: str
    fn: Callable[..., Any]


@dataclass(frozen=True)
class Puzzle:
    """One puzzle of the practice ladder.

    Attributes:
        name: ``"snake_case"``, what the reader passes to ``check``.
        level: 1 to 4.
        args: the names of the positional arguments.
        spec: the definition, written as plain Python loops (it is also the reference).
        solution: the book's answer (shown folded in the notebook).
        rights: other right answers, written other ways (tests check that they pass).
        wrongs: planted wrong answers, each with its hint's key.
        allowed: the operations (names or groups of :data:`._guard.GROUPS`) the answer may call.
        limits: at most this many calls of some operations (``{"argsort": 1}``).
        edges: hand-written cases (small, the edge cases that bite), checked first; ``edges[0]``
            is the worked example the notebook draws.
        cases: ``cases() -> hypothesis strategy`` of cases (tuples of the arguments).
        chapter: the notebook (file stem) that teaches what the puzzle practises.
        signature: the stub's signature and shapes, e.g. ``"x: (B, N), idx: (B,) -> (B,)"``.
        rtol, atol: tolerance for floating-point answers.
        n_examples: the cases hypothesis draws after the edge cases. 20 is enough for the
            search alone (no edge cases) to catch every planted wrong answer (15 is not:
            tests/exercises/test_puzzles.py), and keeps a check near 0.1 s.
    """

    name: str
    level: int
    args: tuple[str, ...]
    spec: Callable[..., Any]
    solution: Callable[..., Any]
    rights: Sequence[Callable[..., Any]]
    wrongs: Sequence[Wrong]
    allowed: tuple[str, ...]
    edges: Sequence[Case]
    cases: Callable[[], Any]
    chapter: str
    signature: str
    limits: dict = field(default_factory=dict)
    rtol: float = 1e-5
    atol: float = 1e-6
    n_examples: int = 20

    @property
    def ops(self) -> tuple[str, ...]:
        """The allowed operation names, groups expanded."""
        return expand(self.allowed)


# --------------------------------------------------------------------------------------------

def fails(p: Puzzle, fn: Callable[..., Any], case: Case) -> bool:
    """Whether ``fn``'s answer on ``case`` differs from the loops' (type, shape, dtype, values, an
    exception) or changes an input in place; the operations guard is not applied."""
    expected, got = _call(p.spec, case, p.args), _call(fn, case, p.args)
    return got.mutated is not None or not _same(expected.out, got.out, p.rtol, p.atol)


def _settings(p: Puzzle):
    from hypothesis import HealthCheck, Phase, settings

    return settings(max_examples=p.n_examples, derandomize=True, database=None, deadline=None,
                    phases=(Phase.explicit, Phase.generate, Phase.shrink),
                    suppress_health_check=list(HealthCheck), print_blob=False)


#: how many cases the latest search tried (the message of a passing check quotes it)
LAST_SEARCH: dict[str, int] = {}


def search(p: Puzzle, fn: Callable[..., Any]) -> Case | None:
    """The smallest case hypothesis finds on which ``fn``'s answer differs from the loops'
    (values, shape, dtype, an exception; the operations guard is not applied), or ``None``."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    LAST_SEARCH.setdefault("examples", 0)

    def bad(case: Case) -> bool:
        LAST_SEARCH["examples"] += 1
        return fails(p, fn, case)

    try:
        return find(p.cases(), bad, settings=_settings(p))
    except NoSuchExample:
        return None
