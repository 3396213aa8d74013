"""A puzzle's declaration and its check: fixed edge cases, then a property test with hypothesis.

:func:`run` calls the reader's function under the operations guard (:mod:`._guard`) on the
puzzle's hand-written edge cases (the first one is the worked example), then asks hypothesis for
the *smallest* case on which it differs from the specification (``hypothesis.find``: random
shapes and values, derandomised, shrunk). It returns a :class:`Result` of facts only; the words
come from :mod:`._texts`, the picture from :mod:`.draw`.

Answers are compared as they are: the type, the exact shape (``(1,)`` is not ``()``), the dtype,
then the values (exactly for integers and booleans, with ``rtol``/``atol`` for floats). Nothing is
broadcast before the comparison.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from gatherbook.puzzles._guard import Forbidden, expand, guarded_call

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
    n_examples: int = 40

    @property
    def ops(self) -> tuple[str, ...]:
        """The allowed operation names, groups expanded."""
        return expand(self.allowed)


@dataclass(frozen=True, eq=False)
class Result:
    """The facts of one check.

    ``status``: ``"passed"``, ``"failed"`` or ``"not_attempted"``. For a failure: ``kind`` (one
    of ``forbidden``, ``loop``, ``exception``, ``type``, ``shape``, ``dtype``, ``values``,
    ``mutated_input``), ``facts``, ``hint_key``, and the case (``inputs``), ``expected`` and
    ``got``; ``found`` says where the case came from: ``"edge"`` (hand-written case number
    ``case``) or ``"search"`` (hypothesis's smallest failing case). ``n_edges``/``n_search``: how
    many cases a passing answer went through.
    """

    name: str
    status: str
    kind: str | None = None
    facts: dict = field(default_factory=dict)
    hint_key: str | None = None
    found: str | None = None
    case: int | None = None
    inputs: Case | None = field(default=None, repr=False)
    expected: Any = field(default=None, repr=False)
    got: Any = field(default=None, repr=False)
    differs: torch.Tensor | None = field(default=None, repr=False)
    n_edges: int = 0
    n_search: int = 0
    lang: str = ""
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __repr__(self) -> str:
        if self.status != "failed":
            return f"<Result {self.name}: {self.status}>"
        return f"<Result {self.name}: failed ({self.kind}, hint={self.hint_key}, {self.found})>"


# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Raised:
    type_name: str
    text: str
    stub: bool = False


def _clone(case: Case) -> Case:
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in case)


def _is_stub(e: BaseException, fn: Callable[..., Any]) -> bool:
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return isinstance(e, NotImplementedError) and tb is not None and \
        tb.tb_frame.f_code is getattr(fn, "__code__", None)


def _plain(out: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return out.detach().cpu()
    return out


def call(p: Puzzle, fn: Callable[..., Any], case: Case, guard: bool) -> tuple[Any, str | None]:
    """``(output or _Raised or Forbidden, name of an input changed in place)``."""
    args = _clone(case)
    try:
        out = guarded_call(fn, args, p.ops, p.limits) if guard else fn(*args)
    except Forbidden as e:
        return e, None
    except Exception as e:
        return _Raised(type(e).__name__, str(e).strip().splitlines()[0][:300] if str(e).strip() else "",
                       _is_stub(e, fn)), None
    for name, a, b in zip(p.args, case, args):
        if isinstance(a, torch.Tensor) and not (a.shape == b.shape and torch.equal(a, b)):
            return _plain(out), name
    return _plain(out), None


def same(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """The same answer: type, exact shape, dtype and values (no broadcasting)."""
    if isinstance(a, _Raised) or isinstance(b, _Raised):
        return isinstance(a, _Raised) and isinstance(b, _Raised) and \
            (a.type_name, a.text) == (b.type_name, b.text)
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return not bool(differing(a, b, rtol, atol).any())
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:
        return False


def differing(expected: torch.Tensor, got: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    if expected.is_floating_point():
        return ~torch.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    return got != expected


def compare(p: Puzzle, expected: Any, got: Any) -> tuple[str | None, dict, torch.Tensor | None]:
    """``(kind, facts, differs)`` of the first difference, or ``(None, {}, None)``."""
    if isinstance(got, Forbidden):
        if got.loop is not None:
            return "loop", {"line": got.loop[0], "runs": got.loop[1]}, None
        return "forbidden", {"op": got.op, "limit": got.limit}, None
    if isinstance(got, _Raised):
        return "exception", {"type": got.type_name, "text": got.text}, None
    if not isinstance(got, torch.Tensor):
        return "type", {"got": type(got).__name__}, None
    if got.shape != expected.shape:
        return "shape", {"expected": str(tuple(expected.shape)), "got": str(tuple(got.shape))}, None
    if got.dtype != expected.dtype:
        return "dtype", {"expected": str(expected.dtype), "got": str(got.dtype)}, None
    diff = differing(expected, got, p.rtol, p.atol)
    if not diff.any():
        return None, {}, None
    first = tuple(int(i) for i in diff.nonzero()[0])
    return "values", {"n_diff": int(diff.sum()), "n": diff.numel(),
                      "where": "[" + ", ".join(map(str, first)) + "]",
                      "expected": _scalar(expected[first].item()),
                      "got": _scalar(got[first].item())}, diff


def _scalar(v: Any) -> str:
    if isinstance(v, float):
        s = f"{v:.4f}".rstrip("0")
        return s + "0" if s.endswith(".") else s
    return str(v)


def _fails(p: Puzzle, fn: Callable[..., Any], case: Case, guard: bool = True) -> tuple | None:
    """``None`` if ``fn`` is right on ``case``; else ``(kind, facts, differs, expected, got)``."""
    expected, _ = call(p, p.spec, case, guard=False)
    if isinstance(expected, (_Raised, Forbidden)):
        raise RuntimeError(f"the specification of {p.name} raised on {case!r}: {expected}")
    got, mutated = call(p, fn, case, guard=guard)
    kind, facts, differs = compare(p, expected, got)
    if kind is None and mutated:
        kind, facts = "mutated_input", {"arg": mutated}
    if kind is None:
        return None
    return kind, facts, differs, expected, got


def _hint(p: Puzzle, kind: str, case: Case, expected: Any, got: Any) -> str | None:
    """The planted mistake whose output equals the reader's, else a generic hint from the evidence."""
    if kind in ("forbidden", "loop", "mutated_input"):
        return "generic." + kind
    for w in p.wrongs:
        out, _ = call(p, w.fn, case, guard=False)
        if same(out, got, p.rtol, p.atol):
            return w.key
    if kind == "exception" or not isinstance(got, torch.Tensor) or not isinstance(expected, torch.Tensor):
        return "generic.none" if got is None else None
    e, g = tuple(expected.shape), tuple(got.shape)
    if g != e and [s for s in g if s != 1] == [s for s in e if s != 1] and got.dtype == expected.dtype \
            and same(got.reshape(e), expected, p.rtol, p.atol):
        return "generic.size_one"
    if g != e and got.ndim == 2 and g == e[::-1] and same(got.T.contiguous(), expected, p.rtol, p.atol):
        return "generic.transposed"
    if kind == "dtype":
        return "generic.dtype"
    return None


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

    count = LAST_SEARCH.setdefault("examples", 0)

    def bad(case: Case) -> bool:
        LAST_SEARCH["examples"] = LAST_SEARCH.get("examples", 0) + 1
        return _fails(p, fn, case, guard=False) is not None

    try:
        return find(p.cases(), bad, settings=_settings(p))
    except NoSuchExample:
        return None


def run(p: Puzzle, fn: Callable[..., Any], *, search: bool = True) -> Result:
    """Check ``fn`` against puzzle ``p``: the edge cases, then hypothesis's search."""
    for k, case in enumerate(p.edges, start=1):
        failed = _fails(p, fn, case)
        if failed is None:
            continue
        kind, facts, differs, expected, got = failed
        if k == 1 and isinstance(got, _Raised) and got.stub:
            return Result(p.name, "not_attempted")
        return Result(p.name, "failed", kind, facts, _hint(p, kind, case, expected, got), "edge", k,
                      case, expected, None if isinstance(got, (_Raised, Forbidden)) else got, differs)
    if not search:
        return Result(p.name, "passed", n_edges=len(p.edges))
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    count = [0]

    def bad(case: Case) -> bool:
        count[0] += 1
        return _fails(p, fn, case) is not None

    try:
        case = find(p.cases(), bad, settings=_settings(p))
    except NoSuchExample:
        return Result(p.name, "passed", n_edges=len(p.edges), n_search=count[0])
    kind, facts, differs, expected, got = _fails(p, fn, case)
    return Result(p.name, "failed", kind, facts, _hint(p, kind, case, expected, got), "search", None,
                  case, expected, None if isinstance(got, (_Raised, Forbidden)) else got, differs)
