"""The exercise checker's facts: run the cases, compare, and record what went wrong.

:func:`run` calls the reader's function on an exercise's cases and returns a
:class:`CheckResult` holding facts only (status, case, kind of failure, first mismatch, hint key
and its parameters). The words come later, from :mod:`gatherbook.exercises._messages` and the
chapter's ``MESSAGES``; the picture from the same record (:func:`gatherbook.exercises.figure`).

The checks, in order, for each case: the answer's type, shape, dtype and values; that it left its
inputs as they were; its gradient (``Exercise.grad``). When every case passes, two probes: the
first case on the ``meta`` device (tensors created without ``device=`` show up there as they
would on a GPU), and, for ``Exercise.chunk_rows``, the rows each operation receives.
"""
from __future__ import annotations

import contextlib
import dis
import io
import signal
import threading

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import torch
from torch.overrides import TorchFunctionMode

from gatherbook.exercises._messages import scalar, shape, type_name

Case = tuple  # the positional arguments of one call

#: The kinds of failure, in the order they are looked for.
KINDS = ("exception", "device", "mutated_input", "type", "shape", "dtype", "values", "aliased",
         "no_grad", "has_grad", "grad", "second_call", "not_chunked", "rule")


@dataclass(frozen=True)
class Mistake:
    """A plausible wrong answer and the hint it gets: ``fn`` takes the exercise's arguments.

    The checker names it (prints its hint) only when the reader's output equals ``fn``'s on every
    case, so a coincidence on one case names nothing. ``fn`` is also a planted wrong answer: the
    generic test checks that it is rejected with this hint. ``en``, ``zh``: the hint's words.
    """

    key: str
    fn: Callable[..., Any]
    en: str = ""
    zh: str = ""


@dataclass(frozen=True)
class Wrong:
    """A planted wrong answer that must be rejected, with the hint it must get.

    ``hint``: a :class:`Mistake` key of the same exercise, ``"generic.<what>"`` (one of the
    checker's hints) or ``None`` (rejected with no hint); ``kind``: the failure it must get (one of
    :data:`KINDS`), or ``None`` when any rejection will do. ``why``: what the answer does (for
    whoever reads the declaration; not shown to readers).
    """

    fn: Callable[..., Any]
    hint: str | None = None
    kind: str | None = None
    why: str = ""


@dataclass(frozen=True)
class Rule:
    """A check of its own that an answer must pass once its values are right (an extension point).

    ``test(fn, case)`` runs the reader's ``fn`` on one case (fresh copies of the inputs) and returns
    ``None`` when the rule holds, or a dict of facts when it is broken; ``en``/``zh`` is the message,
    ``str.format``-ed with those facts (e.g. an allowed-operations guard: "`{op}` is not allowed
    here"). Tried on every case, in declaration order, after all the built-in checks.
    """

    key: str
    test: Callable[[Callable[..., Any], Case], dict | None]
    en: str = ""
    zh: str = ""


@dataclass(frozen=True)
class Exercise:
    """One exercise: everything about it in one declaration.

    Attributes:
        name: ``"chN.snake_case"``, the name readers pass to ``check``.
        title: the exercise's heading per language (``{"en": ..., "zh": ...}``); the notebooks'
            ``{exercise}`` headings must say the same (a test holds them to it).
        args: names of the positional arguments, in order (used when printing a case).
        reference: the correct solution (it must create tensors on its inputs' device).
        edge_cases: hand-written cases, checked first (small, so the feedback is readable).
        random_case: ``random_case(g) -> Case`` draws one case from a CPU ``torch.Generator``.
        n_random: how many random cases to draw.
        seed: the generator's seed, so the cases are the same on every run.
        search: ``search(fn) -> Case | None``, run once the other cases pass: a case on which ``fn``
            differs from the reference (the practice puzzles: hypothesis's smallest failing case),
            checked like the others after them; ``None`` when it finds none.
        more_cases: ``more_cases() -> list[Case]``, cases from any other generator (e.g. examples
            of a hypothesis strategy, drawn once with a fixed seed), checked after the random ones.
        rtol, atol: tolerance of :func:`torch.allclose` for floating-point answers.
        mistakes: plausible wrong answers, each with its hint (see :class:`Mistake`).
        right: answers written other ways (indexing, ``take_along_dim``, loops, one-hot, library
            calls) that must pass.
        wrong: more planted wrong answers that must be rejected (see :class:`Wrong`).
        grad: ``"same"``: the result is trained through; it must carry a gradient equal to the
            reference's with respect to the floating-point inputs named in ``grad_args`` (all of
            them when ``None``). ``"none"``: the result is a fixed target and must carry no
            gradient. ``None``: not checked.
        chunk_rows: if set, no operation except slicing may receive more than this many rows
            (first-dimension entries) of the first argument at once.
        rules: more checks of its own (see :class:`Rule`).
        time_limit: seconds a whole check may take before it is stopped.
    """

    name: str
    args: tuple[str, ...]
    reference: Callable[..., Any]
    edge_cases: Sequence[Case]
    random_case: Callable[[torch.Generator], Case] | None = None
    n_random: int = 8
    seed: int = 0
    rtol: float = 1e-5
    atol: float = 1e-8
    mistakes: Sequence[Mistake] = ()
    grad: str | None = None
    chunk_rows: int | None = None
    title: Mapping[str, str] = field(default_factory=dict)
    right: Sequence[Callable[..., Any]] = ()
    wrong: Sequence[Wrong] = ()
    more_cases: Callable[[], Sequence[Case]] | None = None
    grad_args: tuple[str, ...] | None = None
    rules: Sequence[Rule] = ()
    time_limit: float = 30.0
    search: Callable[[Callable[..., Any]], Case | None] | None = None

    def __post_init__(self) -> None:
        if self.grad not in (None, "same", "none"):
            raise ValueError(f"{self.name}: grad={self.grad!r}; expected None, 'same' or 'none'")

    def cases(self) -> list[Case]:
        """The edge cases, ``n_random`` seeded random ones, then ``more_cases()`` (same list on every call)."""
        g = torch.Generator(device="cpu").manual_seed(self.seed)
        drawn = [self.random_case(g) for _ in range(self.n_random)] if self.random_case else []
        return list(self.edge_cases) + drawn + (list(self.more_cases()) if self.more_cases else [])

    def mistake(self, key: str) -> Mistake:
        """The :class:`Mistake` called ``key``."""
        return next(m for m in self.mistakes if m.key == key)


@dataclass(frozen=True, eq=False)
class CheckResult:
    """The facts of one check, and their text in one language (``message``).

    Attributes:
        name: the exercise.
        status: ``"passed"``, ``"failed"`` (a wrong result), ``"raised"`` (the function raised),
            ``"not_attempted"`` (the stub's own ``raise NotImplementedError``) or ``"timeout"``
            (stopped after ``Exercise.time_limit`` seconds; ``case`` is the case it was on).
        n_cases: how many cases there are.
        case: the failing case, 1-based; ``None`` unless failed or raised.
        kind: what failed first, one of :data:`KINDS`; ``None`` unless failed or raised.
        facts: the mismatch, for the message: expected/got of a type, shape or dtype; the
            number of differing elements, the first's position and values; the input changed in
            place; the exception's type and text ...
        hint_key: the recognised :class:`Mistake`'s key, or ``"generic.<what>"``; ``None`` if none.
        hint_params: the values a generic hint quotes.
        inputs, expected, got: the failing case's arguments and outputs (``got`` is ``None``
            when the function raised).
        differs: where ``got`` differs from ``expected`` (a boolean tensor) for a values failure.
        printed, n_printed: the first lines the answer printed during the check, and how many
            it printed in all (prints are captured, not shown as they come).
        lang, message: the language of the message and the message itself.
    """

    name: str
    status: str
    n_cases: int
    case: int | None = None
    kind: str | None = None
    facts: dict = field(default_factory=dict)
    hint_key: str | None = None
    hint_params: dict = field(default_factory=dict)
    inputs: Case | None = field(default=None, repr=False)
    expected: Any = field(default=None, repr=False)
    got: Any = field(default=None, repr=False)
    differs: torch.Tensor | None = field(default=None, repr=False)
    printed: tuple[str, ...] = field(default=(), repr=False)
    n_printed: int = 0
    lang: str = ""
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def attempted(self) -> bool:
        return self.status != "not_attempted"

    def record(self) -> tuple:
        """The facts every language shares: ``(status, case, n_cases, kind, hint_key)``."""
        return (self.status, self.case, self.n_cases, self.kind, self.hint_key)

    def __repr__(self) -> str:
        if self.status in ("passed", "not_attempted"):
            verdict = f"{self.status} {self.n_cases} cases" if self.passed else "not attempted"
        else:
            verdict = f"{self.status} case {self.case}/{self.n_cases} ({self.kind}, hint={self.hint_key})"
        return f"<CheckResult {self.name}: {verdict}>"


# --------------------------------------------------------------------------------------------
# calling a function on a case

@dataclass(frozen=True)
class _Raised:
    type_name: str
    text: str
    stub: bool = False  # the function's own `raise NotImplementedError` statement

    @classmethod
    def of(cls, e: BaseException, fn: Callable[..., Any] | None = None) -> "_Raised":
        stub = isinstance(e, NotImplementedError) and fn is not None and _raised_by_statement(e, fn)
        return cls(type(e).__name__, str(e).strip(), stub)

    def same(self, other: Any) -> bool:
        return isinstance(other, _Raised) and (self.type_name, self.text) == (other.type_name, other.text)


def _raised_by_statement(e: BaseException, fn: Callable[..., Any]) -> bool:
    """Whether ``e`` comes from a ``raise`` statement in ``fn``'s own body (the stub's), not from a
    call it made (``gather`` on a sparse tensor raises ``NotImplementedError`` from inside torch)."""
    code = getattr(fn, "__code__", None)
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if code is None or tb is None or tb.tb_frame.f_code is not code:
        return False
    return any(ins.offset == tb.tb_lasti and ins.opname == "RAISE_VARARGS" for ins in dis.get_instructions(code))


@dataclass
class _Outcome:
    out: Any                      # the output (detached, on the CPU) or a _Raised
    mutated: str | None = None    # the first argument changed in place
    requires_grad: bool = False
    grads: tuple | None = None    # gradients w.r.t. the floating-point inputs (grad == "same")
    device: str | None = None     # the device of a tensor output on another device than its inputs'
    aliased: str | None = None    # the argument whose memory the output shares


def _is_float(a: Any) -> bool:
    return isinstance(a, torch.Tensor) and a.is_floating_point()


def _plain(out: Any) -> Any:
    """A tensor output detached, dense and on the CPU (for comparing); anything else as it is."""
    if isinstance(out, torch.Tensor):
        out = out.detach()
        if out.device.type != "cpu":
            out = out.cpu()
        if out.layout != torch.strided:  # sparse: compare its values
            out = out.to_dense()
    return out


def _changed(before: torch.Tensor, after: torch.Tensor) -> bool:
    after = after.detach()
    if after.shape != before.shape or after.dtype != before.dtype:
        return True
    return not torch.equal(after, before) and not (before.is_floating_point()
                                                   and torch.equal(after.isnan(), before.isnan())
                                                   and torch.equal(after.nan_to_num(), before.nan_to_num()))


def _storage(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr() if t.layout == torch.strided and t.device.type != "meta" else 0
    except Exception:  # tensors without storage (functional wrappers ...)
        return 0


def _fresh_state() -> None:
    """The state every call starts from, whatever an earlier answer or the session left."""
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)


def _call(fn: Callable[..., Any], case: Case, names: Sequence[str], grad: str | None = None,
          grad_args: Sequence[str] | None = None) -> _Outcome:
    """``fn(*case)`` on fresh copies of the inputs, never letting an exception escape.

    With ``grad``, floating-point inputs are copies of leaf tensors that require grad (copies, so
    that an in-place operation is allowed and seen as such); with ``grad == "same"`` the
    gradient of ``sum(out * w)`` for fixed weights ``w`` is returned, unless an input was changed
    in place (that is reported as such, before any backward runs).
    """
    _fresh_state()
    leaves = [a.detach().clone().requires_grad_(True)
              if grad and _is_float(a) and (grad_args is None or n in grad_args) else a
              for n, a in zip(names, case)]
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in leaves]
    try:
        out = fn(*args)
    except Exception as e:  # the reader's code: report it, never let it escape
        return _Outcome(_Raised.of(e, fn))
    finally:
        _fresh_state()
    mutated = next((n for n, a, b in zip(names, case, args)
                    if isinstance(a, torch.Tensor) and _changed(a, b)), None)
    outcome = _Outcome(out, mutated, isinstance(out, torch.Tensor) and out.requires_grad)
    if isinstance(out, torch.Tensor):
        inputs = {a.device.type for a in case if isinstance(a, torch.Tensor)} or {"cpu"}
        if out.device.type == "meta" and "meta" not in inputs:
            outcome.device = "meta"
            return outcome
        ptr = _storage(out)
        outcome.aliased = next((n for n, a in zip(names, args) if isinstance(a, torch.Tensor)
                                and (a is out or (ptr and _storage(a) == ptr))), None)
    if mutated:
        outcome.out = _plain(out) if isinstance(out, torch.Tensor) else out
        return outcome
    if grad == "same" and outcome.requires_grad and out.is_floating_point():
        floats = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.requires_grad]
        w = torch.linspace(0.5, 1.5, max(out.numel(), 1), dtype=out.dtype)[:out.numel()].reshape(out.shape)
        try:
            got = torch.autograd.grad((out * w.to(out.device)).sum(), floats, allow_unused=True)
        except Exception as e:
            return _Outcome(_Raised.of(e))
        outcome.grads = tuple(torch.zeros_like(f) if g is None else _plain(g) for f, g in zip(floats, got))
    try:
        outcome.out = _plain(out)
    except Exception as e:
        return _Outcome(_Raised.of(e))
    return outcome


def _same(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Exactly the same answer (a tensor's type, shape and dtype included)."""
    if isinstance(a, _Raised) or isinstance(b, _Raised):
        return isinstance(a, _Raised) and a.same(b)
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return not bool(_differing(a, b, rtol, atol).any())
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    if isinstance(a, (tuple, list)) and type(a) is type(b):  # e.g. max(dim)'s values and indices
        return len(a) == len(b) and all(_same(x, y, rtol, atol) for x, y in zip(a, b))
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:
        return False


def _differing(expected: torch.Tensor, got: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    """Boolean mask of the cells where ``got`` differs from ``expected`` (same shape and dtype)."""
    if expected.is_floating_point() or expected.is_complex():
        return ~torch.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    return got != expected


# --------------------------------------------------------------------------------------------
# what differs, and which hint fits the evidence

def _compare(ex: Exercise, expected: Any, got: Any) -> tuple[str | None, dict, torch.Tensor | None]:
    """``(kind, facts, differs)`` of the first difference between ``got`` and ``expected``."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return "type", {"got": type_name(got)}, None
        if got.shape != expected.shape:
            return "shape", {"expected": shape(expected), "got": shape(got)}, None
        if got.dtype != expected.dtype:
            return "dtype", {"expected": str(expected.dtype), "got": str(got.dtype)}, None
        diff = _differing(expected, got, ex.rtol, ex.atol)
        if not diff.any():
            return None, {}, None
        first = tuple(int(i) for i in diff.nonzero()[0])
        exact = not (expected.is_floating_point() or expected.is_complex())
        return "values", {
            "n_diff": int(diff.sum()), "n": diff.numel(), "where": "[" + ", ".join(map(str, first)) + "]",
            "expected": scalar(expected[first].item()), "got": scalar(got[first].item()),
            "how": "exact" if exact else "close", "rtol": ex.rtol, "atol": ex.atol}, diff
    if _same(expected, got, ex.rtol, ex.atol):
        return None, {}, None
    return "values", {"expected": repr(expected), "got": repr(got)}, None


def _generic_hint(expected: Any, got: Any) -> tuple[str | None, dict]:
    """A hint for common slips that no declared mistake covers, from what the output shows."""
    if got is None:
        return "generic.none", {}
    if not isinstance(expected, torch.Tensor):
        return None, {}
    if isinstance(got, tuple):
        return "generic.tuple", {"count": len(got)}
    if isinstance(got, list):
        return "generic.list", {}
    if type(got).__module__ == "numpy":
        return ("generic.numpy" if hasattr(got, "shape") and got.shape else "generic.number"), {}
    if isinstance(got, (int, float, bool)):
        return "generic.number", {}
    if not isinstance(got, torch.Tensor):
        return "generic.not_tensor", {}
    e, g = tuple(expected.shape), tuple(got.shape)
    if g != e and got.ndim == expected.ndim == 2 and g == e[::-1] and _same(got.T, expected, 1e-5, 1e-8):
        return "generic.transposed", {}
    if (g != e and [s for s in g if s != 1] == [s for s in e if s != 1] and got.dtype == expected.dtype
            and _same(got.reshape(e), expected, 1e-5, 1e-8)):
        return "generic.size_one", {}
    if g == e and got.dtype != expected.dtype:
        return "generic.dtype", {"expected": str(expected.dtype), "got": str(got.dtype)}
    return None, {}


# --------------------------------------------------------------------------------------------
# the probes: another device, and the rows each operation receives

_DEVICE_ERRORS = ("is not on the expected device", "Expected all tensors to be on the same device",
                  "found at least two devices")


def _on_meta(fn: Callable[..., Any], case: Case) -> tuple[str, str] | None:
    """Run ``fn`` on ``case`` moved to ``meta``: ``None`` when it works there; ``("raised", text)``
    or ``("returned", device)`` when it mixes devices; ``("other", text)`` when it fails for
    another reason (``.item()``, a boolean mask ... need values, which ``meta`` has not)."""
    args = [a.to("meta") if isinstance(a, torch.Tensor) else a for a in case]
    try:
        out = fn(*args)
    except Exception as e:
        text = str(e).strip()
        return ("raised" if any(s in text for s in _DEVICE_ERRORS) else "other"), text
    if isinstance(out, torch.Tensor) and out.device.type != "meta":
        return "returned", str(out.device)
    return None


#: operations that take a tensor for its dtype and device only (preallocating an output)
_READS_NO_VALUES = {"new_zeros", "new_empty", "new_ones", "new_full", "new_tensor", "zeros_like",
                    "empty_like", "ones_like", "full_like", "size", "dim", "__len__"}


class _RowCounter(TorchFunctionMode):
    """The most rows of ``watched`` that an operation making a new tensor received at once.

    Views (slices, ``split``, ``view``) and questions (``shape``, ``dtype``) do not count; an
    operation counts when it returns a tensor that does not share ``watched``'s storage.
    """

    def __init__(self, watched: torch.Tensor):
        super().__init__()
        self.storage = watched.untyped_storage().data_ptr()
        self.row_numel = max(watched[0].numel(), 1) if watched.shape[0] else 1
        self.rows = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if getattr(func, "__name__", "") in _READS_NO_VALUES:  # x.new_zeros(n) reads no row of x
            return out
        # an operation that makes a new tensor (not a view, not a number) counts its inputs' rows
        outs = out if isinstance(out, (list, tuple)) else (out,)
        if any(isinstance(o, torch.Tensor) and not self._watched(o) for o in outs):
            for a in list(args) + list(kwargs.values()):
                for t in a if isinstance(a, (list, tuple)) else (a,):
                    if isinstance(t, torch.Tensor) and self._watched(t):
                        self.rows = max(self.rows, t.numel() // self.row_numel)
        return out

    def _watched(self, t: torch.Tensor) -> bool:
        return t.layout == torch.strided and t.untyped_storage().data_ptr() == self.storage


def _rows_seen(fn: Callable[..., Any], case: Case) -> int | None:
    """The most rows of ``case[0]`` an operation of ``fn`` received (``None`` if ``fn`` raised)."""
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in case]
    counter = _RowCounter(args[0])
    try:
        with counter:
            fn(*args)
    except Exception:
        return None
    return counter.rows


# --------------------------------------------------------------------------------------------
# running an exercise

class _TimeUp(BaseException):
    """Raised into a check that ran past its time limit (not an Exception: answers cannot catch it)."""


@contextlib.contextmanager
def _isolated(limit: float):
    """Run a check apart from the session: its state restored, its prints captured, its time limited.

    Grad mode, the default dtype, the deterministic-algorithms flags, anomaly mode and the RNG
    states are put back as they were; what the answer prints goes to the yielded buffer; after
    ``limit`` seconds :class:`_TimeUp` is raised into the running code (where a timer signal is
    available: the main thread of a Unix process, which a notebook's kernel is).
    """
    saved = (torch.is_grad_enabled(), torch.get_default_dtype(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled(), torch.is_anomaly_enabled(),
             torch.get_rng_state(), torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None)
    buffer = io.StringIO()
    timer = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if timer:
        def _stop(signum, frame):
            raise _TimeUp

        previous = signal.signal(signal.SIGALRM, _stop)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            yield buffer
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        grad, dtype, det, warn_only, anomaly, rng, cuda_rng = saved
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
        torch.use_deterministic_algorithms(det, warn_only=warn_only)
        torch.autograd.set_detect_anomaly(anomaly)
        torch.set_rng_state(rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)


#: how many of the answer's printed lines a message quotes
PRINTED_LINES = 3


class _Run:
    """One check of ``fn`` against ``ex``: the reader's outcomes, kept for the hints."""

    def __init__(self, ex: Exercise, fn: Callable[..., Any]):
        self.ex, self.fn = ex, fn
        self.cases = ex.cases()
        self.n = len(self.cases)
        self.k = 0  # the case being checked (for a time-out)
        self._got: dict[int, _Outcome] = {}

    def call(self, fn: Callable[..., Any], case: Case, grad: str | None = None) -> _Outcome:
        return _call(fn, case, self.ex.args, grad, self.ex.grad_args)

    def got(self, k: int, grad: str | None = None) -> _Outcome:
        """The reader's outcome on case ``k`` (1-based), with the gradient when ``grad``."""
        if (k, grad) not in self._got:
            self._got[k, grad] = self.call(self.fn, self.cases[k - 1], grad)
        return self._got[k, grad]

    def named_mistake(self, grad: str | None = None) -> str | None:
        """The key of the declared mistake whose output (and, with ``grad``, gradient) equals the
        reader's on every case."""
        ex = self.ex

        def same(a: _Outcome, b: _Outcome) -> bool:
            return _same(a.out, b.out, ex.rtol, ex.atol) and (
                not grad or (a.grads is not None and b.grads is not None and len(a.grads) == len(b.grads)
                             and all(not _differing(x, y, ex.rtol, max(ex.atol, 1e-5)).any()
                                     for x, y in zip(a.grads, b.grads))))

        for m in ex.mistakes:
            if all(same(self.call(m.fn, case, grad), self.got(k, grad)) for k, case in enumerate(self.cases, start=1)):
                return m.key
        return None

    def failure(self, k: int, expected: Any, got: _Outcome, kind: str, facts: dict,
                differs: torch.Tensor | None = None) -> CheckResult:
        """The record of case ``k`` failing with ``kind``, with the hint the evidence supports."""
        ex, case = self.ex, self.cases[k - 1]
        hint_key, params = None, {}
        if kind in ("exception", "type", "shape", "dtype", "values"):  # the output itself is wrong
            hint_key = self.named_mistake()
            if hint_key is None and kind != "exception":
                hint_key, params = _generic_hint(expected, got.out)
        elif kind == "rule":
            hint_key = None
        elif kind == "grad":  # the values are right: a mistake with the same gradient everywhere, if any
            hint_key = self.named_mistake(ex.grad) or "generic.grad"
        else:
            hint_key = "generic." + kind
            params = {"limit": ex.chunk_rows} if kind == "not_chunked" else {}
        raised = isinstance(got.out, _Raised)
        shown = None if raised or got.device else got.out
        return CheckResult(ex.name, "raised" if raised else "failed", self.n, k, kind, facts, hint_key, params,
                           inputs=case, expected=expected, got=shown, differs=differs)

    def check(self) -> CheckResult:
        ex, fn = self.ex, self.fn
        firsts: dict[int, Any] = {}
        searched = False
        for k, case in enumerate(self.cases, start=1):
            self.k = k
            ref = self.call(ex.reference, case, ex.grad)
            if isinstance(ref.out, _Raised):  # a bug in the book, not in the reader's answer
                raise RuntimeError(f"the reference of {ex.name} raised on case {k}: "
                                   f"{ref.out.type_name}: {ref.out.text}")
            got = self.call(fn, case, ex.grad)

            def fail(kind: str, facts: dict, differs: torch.Tensor | None = None) -> CheckResult:
                return self.failure(k, ref.out, got, kind, facts, differs)

            if isinstance(got.out, _Raised):
                if got.out.stub and k == 1:
                    return CheckResult(ex.name, "not_attempted", self.n)
                text = got.out.text if len(got.out.text) <= 600 else got.out.text[:600] + " ..."
                return fail("exception", {"type": got.out.type_name, "text": text})
            if got.device:
                return fail("device", {"how": "returned", "got": got.device, "text": ""})
            if got.mutated:
                return fail("mutated_input", {"arg": got.mutated})
            kind, facts, differs = _compare(ex, ref.out, got.out)
            if kind:
                return fail(kind, facts, differs)
            if got.aliased and not ref.aliased:
                return fail("aliased", {"arg": got.aliased})
            if ex.grad == "same" and not got.requires_grad:
                return fail("no_grad", {})
            if ex.grad == "none" and got.requires_grad:
                return fail("has_grad", {})
            if ex.grad == "same":
                floats = [name for name, a in zip(ex.args, case)
                          if _is_float(a) and (ex.grad_args is None or name in ex.grad_args)]
                for name, e, g in zip(floats, ref.grads, got.grads):
                    diff = _differing(e, g, ex.rtol, max(ex.atol, 1e-5))
                    if diff.any():
                        return fail("grad", {"arg": name, "n_diff": int(diff.sum()), "n": diff.numel()})
            firsts[k] = got.out
            if k == len(self.cases) and ex.search is not None and not searched:
                searched = True  # the cases passed: look for one they missed (checked next)
                found = ex.search(fn)
                if found is not None:
                    self.cases.append(found)
                    self.n += 1
        for k in list(firsts)[:3]:  # called twice on the same inputs, the same answer (no state kept)
            self.k = k
            args = [a.clone() if isinstance(a, torch.Tensor) else a for a in self.cases[k - 1]]
            outs = []
            for _ in range(2):
                out = self.call(lambda *_: fn(*args), self.cases[k - 1])
                outs.append(out)
                if isinstance(out.out, torch.Tensor):
                    out.out = out.out.clone()  # a .grad returned twice is one tensor, changed in place
            if not _same(outs[1].out, outs[0].out, ex.rtol, ex.atol):
                return self.failure(k, outs[0].out, outs[1], "second_call", {})
        self.k = 1
        if _on_meta(ex.reference, self.cases[0]) is None:  # the probe only counts where the reference works
            found = _on_meta(fn, self.cases[0])
            if found and found[0] != "other":
                how, what = found
                return self.failure(1, self.call(ex.reference, self.cases[0]).out, self.got(1), "device",
                                    {"how": how, "text": what, "got": what})
        for k, case in enumerate(self.cases, start=1):
            self.k = k
            if ex.chunk_rows:
                rows = _rows_seen(fn, case)
                if rows is not None and rows > ex.chunk_rows:
                    return self.failure(k, self.call(ex.reference, case).out, self.got(k), "not_chunked",
                                        {"rows": rows, "limit": ex.chunk_rows, "arg": ex.args[0]})
            for rule in ex.rules:
                _fresh_state()
                facts = rule.test(fn, tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in case))
                if facts is not None:
                    return self.failure(k, self.call(ex.reference, case).out, self.got(k), "rule",
                                        {**facts, "rule": rule.key})
        return CheckResult(ex.name, "passed", self.n)


def run(ex: Exercise, fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn`` against ``ex`` in isolation: the facts, without a message (see ``run_check``)."""
    job = _Run(ex, fn)
    with _isolated(ex.time_limit) as printed:
        try:
            result = job.check()
        except _TimeUp:
            result = CheckResult(ex.name, "timeout", job.n, job.k, facts={"limit": ex.time_limit},
                                 inputs=job.cases[job.k - 1] if job.k else None)
    lines = printed.getvalue().splitlines()
    if lines:
        result = replace(result, printed=tuple(lines[:PRINTED_LINES]), n_printed=len(lines))
    return result
