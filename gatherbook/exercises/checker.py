"""The checker's facts: run the cases, compare, and record what went wrong.

:func:`run` calls the reader's function on an exercise's cases and returns a :class:`CheckResult`
of facts only (status, case, kind of failure, first mismatch, hint key); the words come from
:mod:`gatherbook.exercises.messages` and the words file, the picture from the same record.
Per case: exception (an answer that the operations rule refuses is told so first), device,
input changed in place, type, shape, dtype, values, aliasing, gradient. Once every case passes:
the search for a failing case (``strategy``), a second call, the ``meta``-device probe (tensors
created without ``device=``), ``chunk_rows``, the allowed operations and the exercise's rules.
How to declare: API.md.
"""
from __future__ import annotations

import contextlib
import dis
import inspect
import io
import signal
import sys
import threading
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import torch
from torch.overrides import TorchFunctionMode

from gatherbook.exercises import guard
from gatherbook.exercises.declaration import Case, Exercise, checking
from gatherbook.exercises.messages import scalar, shape, type_name

#: Faults of an answer whose values may be right; a declared mistake with the same fault is named.
FAULTS = ("mutated_input", "aliased", "no_grad", "has_grad")


@dataclass(frozen=True, eq=False)
class CheckResult:
    """The facts of one check, and their text in one language (``message``).

    ``status``: ``"passed"``, ``"failed"`` (a wrong result), ``"raised"``, ``"not_attempted"``
    (the stub's own ``raise NotImplementedError``) or ``"timeout"``. For a failure: ``case``
    (1-based), ``kind`` (API.md lists them), ``facts`` (the mismatch), ``hint_key`` (a
    :class:`Mistake` key or ``"generic.<what>"``) and ``hint_params``; ``inputs``, ``expected``
    and ``got`` of that case, ``differs`` (where the values differ). ``printed``/``n_printed``:
    the first lines the answer printed, and how many it printed in all.
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
    searched: int | None = None  # the cases the search tried (None: the exercise has no strategy)
    found: bool = False          # the failing case is one the search found
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
            return f"<CheckResult {self.name}: {self.status} {self.n_cases} cases>"
        return (f"<CheckResult {self.name}: {self.status} case {self.case}/{self.n_cases} "
                f"({self.kind}, hint={self.hint_key})>")


# --- calling a function on a case -------------------------------------------------------------

@dataclass(frozen=True)
class _Raised:
    type_name: str
    text: str
    stub: bool = False  # the function's own `raise NotImplementedError` statement

    @classmethod
    def of(cls, e: BaseException, fn: Callable[..., Any] | None = None) -> "_Raised":
        stub = isinstance(e, NotImplementedError) and fn is not None and _raised_by_statement(e, fn)
        return cls(type(e).__name__, str(e).strip(), stub)


def _raised_by_statement(e: BaseException, fn: Callable[..., Any]) -> bool:
    """Whether ``e`` comes from a ``raise`` statement in ``fn``'s own body (the stub's), not from a
    call it made (``gather`` on a sparse tensor raises ``NotImplementedError`` inside torch)."""
    code, tb = getattr(inspect.unwrap(fn), "__code__", None), e.__traceback__
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
    device: str | None = None     # "meta" for a result on meta from inputs that were not
    aliased: str | None = None    # the argument whose memory the output shares


def _is_float(a: Any) -> bool:
    return isinstance(a, torch.Tensor) and a.is_floating_point()


def _copy(case: Case) -> list:
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in case]


def _plain(out: Any) -> Any:
    """A tensor output as a copy of its own (a ``.grad`` returned twice is one tensor, changed in
    place), detached, dense and on the CPU, for comparing; anything else as it is."""
    if isinstance(out, torch.Tensor):
        out = out.detach().cpu().clone()
        if out.layout != torch.strided:  # sparse: compare its values
            out = out.to_dense()
    return out


def _changed(before: torch.Tensor, after: torch.Tensor) -> bool:
    after = after.detach()
    if after.shape != before.shape or after.dtype != before.dtype:
        return True
    if before.is_floating_point():  # nan where it was nan is no change
        return not (torch.equal(after.isnan(), before.isnan()) and torch.equal(after.nan_to_num(), before.nan_to_num()))
    return not torch.equal(after, before)


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

    With ``grad``, floating-point inputs are copies of leaves that require grad (copies, so an
    in-place operation is allowed and seen as such); with ``"same"``, the gradient of
    ``sum(out * w)`` for fixed weights ``w`` too, unless an input was changed in place.
    """
    _fresh_state()
    leaves = [a.detach().clone().requires_grad_(True)
              if grad and _is_float(a) and (grad_args is None or n in grad_args) else a
              for n, a in zip(names, case)]
    args = _copy(leaves)
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
        if out.device.type == "meta" and all(a.device.type != "meta" for a in case if isinstance(a, torch.Tensor)):
            outcome.device = "meta"
            return outcome
        ptr = _storage(out)
        outcome.aliased = next((n for n, a in zip(names, args) if isinstance(a, torch.Tensor)
                                and (a is out or (ptr and _storage(a) == ptr))), None)
    try:
        if grad == "same" and not mutated and outcome.requires_grad and out.is_floating_point():
            floats = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.requires_grad]
            w = torch.linspace(0.5, 1.5, max(out.numel(), 1), dtype=out.dtype)[:out.numel()].reshape(out.shape)
            got = torch.autograd.grad((out * w.to(out.device)).sum(), floats, allow_unused=True)
            outcome.grads = tuple(torch.zeros_like(f) if g is None else _plain(g) for f, g in zip(floats, got))
        outcome.out = _plain(out)
    except Exception as e:
        return _Outcome(_Raised.of(e))
    return outcome


def _same(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Exactly the same answer (a tensor's type, shape and dtype included)."""
    if isinstance(a, _Raised) or isinstance(b, _Raised):
        return isinstance(a, _Raised) and isinstance(b, _Raised) and (a.type_name, a.text) == (b.type_name, b.text)
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and not bool(_differing(a, b, rtol, atol).any())
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


# --- what differs, and which hint fits the evidence -------------------------------------------

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
    if isinstance(got, (tuple, list)):
        return ("generic.tuple", {"count": len(got)}) if isinstance(got, tuple) else ("generic.list", {})
    if type(got).__module__ == "numpy":
        return ("generic.numpy" if getattr(got, "shape", ()) else "generic.number"), {}
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
        dtypes = {"expected": str(expected.dtype), "got": str(got.dtype)}
        if not (expected.is_floating_point() or expected.is_complex()) and got.is_floating_point() \
                and bool((got.isfinite() & (got != got.floor())).any()):  # fractions where whole numbers go: `/`
            return "generic.true_division", dtypes
        return "generic.dtype", dtypes
    return None, {}


# --- the probes: another device, and the rows each operation receives -------------------------

_DEVICE_ERRORS = ("is not on the expected device", "Expected all tensors to be on the same device",
                  "found at least two devices", "expected to be in the same device")


def _tensors(args: tuple, kwargs: dict):
    """The tensors among an operation's arguments, lists and tuples opened."""
    for a in (*args, *kwargs.values()):
        yield from (t for t in (a if isinstance(a, (list, tuple)) else (a,)) if isinstance(t, torch.Tensor))


#: operations that take tensors on two devices on a GPU too (a CPU index into a CUDA tensor), or
#: read only the other tensor's shape or type
_CROSS_DEVICE_OK = {"__getitem__", "__setitem__", "index_put", "index_put_", "copy_", "to", "expand_as",
                    "view_as", "reshape_as", "type_as"}


class _DeviceWatch(TorchFunctionMode):
    """The first operation that receives tensors on two devices (a CPU tensor that is not a
    0-dim scalar beside a ``meta`` one): ``gather`` on meta takes a CPU index without a word."""

    def __init__(self):
        super().__init__()
        self.mixed: dict | None = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.mixed is None and getattr(func, "__name__", "") not in _CROSS_DEVICE_OK:
            devices = {t.device.type for t in _tensors(args, kwargs) if t.ndim > 0}
            if len(devices) > 1:
                self.mixed = {"op": getattr(func, "__name__", str(func)), "devices": " + ".join(sorted(devices))}
        return func(*args, **kwargs)


def _on_meta(fn: Callable[..., Any], case: Case) -> dict | None:
    """Run ``fn`` on ``case`` moved to ``meta``: ``None`` when it works there; the facts of a
    device failure (``how``: ``raised``, ``mixed`` or ``returned``); ``{"how": "other"}`` when it
    fails for another reason (``.item()``, a boolean mask ... need values, which meta has not)."""
    watch = _DeviceWatch()
    try:
        with watch:
            out = fn(*[a.to("meta") if isinstance(a, torch.Tensor) else a for a in case])
    except Exception as e:
        text = str(e).strip()
        if any(s in text for s in _DEVICE_ERRORS):
            return {"how": "raised", "text": text}
        return {"how": "mixed", **watch.mixed} if watch.mixed else {"how": "other", "text": text}
    if watch.mixed:
        return {"how": "mixed", **watch.mixed}
    if isinstance(out, torch.Tensor) and out.device.type != "meta":
        return {"how": "returned", "got": str(out.device)}
    return None


#: operations that take a tensor for its dtype and device only (preallocating an output)
_READS_NO_VALUES = {"new_zeros", "new_empty", "new_ones", "new_full", "new_tensor", "zeros_like",
                    "empty_like", "ones_like", "full_like", "size", "dim", "__len__"}


class _RowCounter(TorchFunctionMode):
    """The most rows of ``watched`` that an operation making a new tensor (not a view, not a
    number, not a preallocation) received at once."""

    def __init__(self, watched: torch.Tensor):
        super().__init__()
        self.storage = watched.untyped_storage().data_ptr()
        self.row_numel = max(watched[0].numel(), 1) if watched.shape[0] else 1
        self.rows = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if getattr(func, "__name__", "") in _READS_NO_VALUES:
            return out
        outs = out if isinstance(out, (list, tuple)) else (out,)
        if any(isinstance(o, torch.Tensor) and not self._watched(o) for o in outs):
            for t in _tensors(args, kwargs):
                if self._watched(t):
                    self.rows = max(self.rows, t.numel() // self.row_numel)
        return out

    def _watched(self, t: torch.Tensor) -> bool:
        return t.layout == torch.strided and t.untyped_storage().data_ptr() == self.storage


def _rows_seen(fn: Callable[..., Any], case: Case) -> int | None:
    """The most rows of ``case[0]`` an operation of ``fn`` received (``None`` if ``fn`` raised)."""
    args = _copy(case)
    counter = _RowCounter(args[0])
    try:
        with counter:
            fn(*args)
    except Exception:
        return None
    return counter.rows


# --- the answer on a thread of its own ----------------------------------------------------------

#: audit events that would let an answer look into the check from its own thread: every object
#: alive (the check's run, the expected values) and the other threads' frames
_PRYING = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames"}
#: the threads running an answer now
_ANSWERING: set[int] = set()


class _Prying(RuntimeError):
    """Raised into an answer that looks into the check while it runs; its text is the audit event
    (the message words it in the check's language: ``error.prying``)."""


def _audit(event: str, args: tuple) -> None:
    if event in _PRYING and threading.get_ident() in _ANSWERING:
        raise _Prying(event)


sys.addaudithook(_audit)  # (a hook cannot be removed: it costs a set lookup where no answer runs)


def _apart(fn: Callable[..., Any], stopping: threading.Event) -> Callable[..., Any]:
    """``fn`` called on a thread of its own, each time, with the calling thread's torch function
    modes (the guard, the probes), trace function (the guard's tracer) and grad mode.

    On that thread the answer's frames lead back to this function only, not to the check and its
    expected values (computed before, held by the calling thread); ``gc`` and the other threads'
    frames refuse (:data:`_PRYING`). Once ``stopping`` is set (the time is up), every line of the
    reader's code raises :class:`_TimeUp`, as on the main thread."""

    def call(*args: Any) -> Any:
        modes = [torch._C._get_function_stack_at(i) for i in range(torch._C._len_torch_function_stack())]
        inner, grad, box = sys.gettrace(), torch.is_grad_enabled(), {}

        def trace(frame, event, arg):
            if stopping.is_set():
                frame.f_trace_lines = True
                return _stop_readers_code
            return inner(frame, event, arg) if inner is not None else None

        def answer() -> None:
            torch.set_grad_enabled(grad)  # (before the modes: the guard would see it)
            _ANSWERING.add(threading.get_ident())
            for mode in modes:
                torch._C._push_on_torch_function_stack(mode)
            sys.settrace(trace)
            try:
                box["out"] = fn(*args)
            except BaseException as e:  # handed to the calling thread as it is
                box["error"] = e
            finally:
                sys.settrace(None)
                while torch._C._len_torch_function_stack():  # (the answer may have popped some)
                    torch._C._pop_torch_function_stack()
                _ANSWERING.discard(threading.get_ident())

        worker = threading.Thread(target=answer, name="gatherbook-answer", daemon=True)
        worker.start()
        try:
            worker.join()
        except _TimeUp:  # the time limit, on the calling (main) thread: stop the answer too
            stopping.set()
            frame = sys._current_frames().get(worker.ident)
            while frame is not None:  # its frames running now; the trace above takes the new ones
                frame.f_trace, frame.f_trace_lines = _stop_readers_code, True
                frame = frame.f_back
            worker.join(_STOP_SECONDS)  # (a thread inside one long torch call ends on its own)
            raise
        if "error" in box:
            raise box.pop("error")
        return box.pop("out")

    call.__wrapped__ = fn  # the guard reads the reader's code (its loops, its file) from here
    return call


#: seconds an answer's thread gets to stop once the time is up
_STOP_SECONDS = 2.0


# --- running an exercise ----------------------------------------------------------------------

class _TimeUp(BaseException):
    """Raised into a check that ran past its time limit (not an Exception: ``except Exception``
    does not catch it; a bare ``except:`` that does is stopped again at its next line)."""


#: whether code from a file is the reader's (a notebook cell, a file outside the installed code)
_readers = guard.is_readers


def _stop_readers_code(frame, event, arg):
    """The trace function set once the time is up: every line of the reader's code raises
    :class:`_TimeUp` again, so an answer that swallows it (``except: pass``) in a loop is stopped
    at its next line; the checker's own code (its ``finally`` clauses) runs on."""
    if event == "line" and _readers(frame.f_code.co_filename):
        raise _TimeUp
    return _stop_readers_code


@contextlib.contextmanager
def _isolated(limit: float):
    """Run a check apart from the session: grad mode, default dtype, the deterministic flags,
    anomaly mode and RNG states restored; prints captured in the yielded buffer (torch's own
    "is in beta" warnings left out: they are not the reader's); :class:`_TimeUp` raised after
    ``limit`` seconds (where a timer signal is available: the main thread of a Unix process)."""
    saved = (torch.is_grad_enabled(), torch.get_default_dtype(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled(), torch.is_anomaly_enabled(),
             torch.get_rng_state(), torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None)
    buffer = io.StringIO()
    timer = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    tracing, traced = sys.gettrace(), []  # a debugger's trace function, and the frames given ours
    if timer:
        def _stop(signum, frame):
            sys.settrace(_stop_readers_code)  # the frames to come
            while frame is not None:  # and those running now
                traced.append((frame, frame.f_trace, frame.f_trace_lines))
                frame.f_trace, frame.f_trace_lines = _stop_readers_code, True
                frame = frame.f_back
            raise _TimeUp

        previous = signal.signal(signal.SIGALRM, _stop)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".* is in beta")
            yield buffer
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            sys.settrace(tracing)
            for frame, trace, lines in traced:
                frame.f_trace, frame.f_trace_lines = trace, lines
        grad, dtype, det, warn_only, anomaly, rng, cuda_rng = saved
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
        if (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) != (
                det, warn_only):  # only when changed: the call imports torch._inductor (seconds)
            torch.use_deterministic_algorithms(det, warn_only=warn_only)
        torch.autograd.set_detect_anomaly(anomaly)
        torch.set_rng_state(rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)


#: how many of the answer's printed lines a message quotes
PRINTED_LINES = 3

#: the cases hypothesis draws for each exercise with a ``strategy`` (:meth:`_Run.drawn`)
_DRAWN: dict[tuple, list[Case]] = {}


class _Run:
    """One check of ``fn`` against ``ex``, keeping every outcome for the hints."""

    def __init__(self, ex: Exercise, fn: Callable[..., Any]):
        self.ex, self.fn = ex, fn
        self.cases = ex.cases()
        self.n = len(self.cases)
        self.k = 0  # the case being checked (for a time-out)
        self._outcomes: dict[tuple, _Outcome] = {}
        self.guard = guard.rule(ex.allowed, ex.limits, ex.args) if ex.allowed else None  # the operations rule
        self.rules = list(ex.rules) + ([self.guard] if self.guard else [])
        self.searched: int | None = None
        self.found_case: int | None = None

    def outcome(self, fn: Callable[..., Any], k: int, grad: str | None = None) -> _Outcome:
        """``fn``'s outcome on case ``k`` (1-based), computed once."""
        key = (id(fn), k, grad)
        if key not in self._outcomes:
            self._outcomes[key] = _call(fn, self.cases[k - 1], self.ex.args, grad, self.ex.grad_args)
        return self._outcomes[key]

    def fault(self, got: _Outcome, k: int) -> str | None:
        """The fault of an outcome whose values may be right (one of :data:`FAULTS`), if any."""
        ex = self.ex
        if got.mutated:
            return "mutated_input"
        if got.aliased and not self.outcome(ex.reference, k, ex.grad).aliased:
            return "aliased"
        if ex.grad == "same" and not got.requires_grad:
            return "no_grad"
        if ex.grad == "none" and got.requires_grad:
            return "has_grad"
        return None

    def named_mistake(self, grad: str | None = None, fault: str | None = None, k: int = 1) -> str | None:
        """The declared mistake whose output (and, with ``grad``, gradient) equals the reader's on
        every case; with ``fault``, one that also has that fault on case ``k``."""
        ex = self.ex

        def same(a: _Outcome, b: _Outcome) -> bool:
            return _same(a.out, b.out, ex.rtol, ex.atol) and (not grad or (
                a.grads is not None and _same(a.grads, b.grads, ex.rtol, max(ex.atol, 1e-5))))

        for m in ex.mistakes:
            if all(same(self.outcome(m.fn, j, grad), self.outcome(self.fn, j, grad)) for j in range(1, self.n + 1)) \
                    and (fault is None or self.fault(self.outcome(m.fn, k, grad), k) == fault) \
                    and all(same(self.drawn_outcome(m.fn, j, grad), self.drawn_outcome(self.fn, j, grad))
                            for j in range(len(self.drawn()))):
                return m.key
        return None

    def drawn(self) -> list[Case]:
        """The cases hypothesis draws for an exercise with a ``strategy`` (those the search tries
        on an answer it finds no fault in; the same on every run): a puzzle's few edge cases may
        agree by chance (a row's padding is the last column), so a mistake is named only when it
        agrees with the reader's answer on these too."""
        ex = self.ex
        if ex.strategy is None:
            return []
        key = (ex.name, ex.strategy, ex.n_examples)
        if key not in _DRAWN:
            from gatherbook.exercises.strategies import search  # hypothesis: only for exercises that search

            cases: list[Case] = []
            search(ex.strategy(), lambda case: cases.append(case) or False, ex.n_examples)
            _DRAWN[key] = cases
        return _DRAWN[key]

    def drawn_outcome(self, fn: Callable[..., Any], j: int, grad: str | None = None) -> _Outcome:
        """``fn``'s outcome on drawn case ``j`` (0-based), computed once."""
        key = (id(fn), "drawn", j, grad)
        if key not in self._outcomes:
            self._outcomes[key] = _call(fn, self.drawn()[j], self.ex.args, grad, self.ex.grad_args)
        return self._outcomes[key]

    def failure(self, k: int, kind: str, facts: dict, differs: torch.Tensor | None = None,
                expected: Any = None, got: _Outcome | None = None) -> CheckResult:
        """The record of case ``k`` failing with ``kind``, with the hint the evidence supports;
        ``expected`` and ``got``: the reference's and the reader's outcomes there, unless given."""
        ex, params = self.ex, {}
        if got is None:
            got = self.outcome(self.fn, k, ex.grad)
            expected = self.outcome(ex.reference, k, ex.grad).out
        if kind in ("exception", "type", "shape", "dtype", "values"):  # the output itself is wrong
            hint_key = self.named_mistake()
            if hint_key is None and kind != "exception":
                hint_key, params = _generic_hint(expected, got.out)
        elif kind == "rule":
            hint_key = None
        elif kind == "grad":  # the values are right: a mistake with the same gradient everywhere, if any
            hint_key = self.named_mistake(ex.grad) or "generic.grad"
        else:
            hint_key = (self.named_mistake(ex.grad, kind, k) if kind in FAULTS else None) or "generic." + kind
            params = {"limit": ex.chunk_rows} if kind == "not_chunked" else {}
        raised = isinstance(got.out, _Raised)
        if kind == "device":  # the results on the CPU are not what failed: no expected, no yours
            expected = None
        return CheckResult(ex.name, "raised" if raised else "failed", self.n, k, kind, facts, hint_key, params,
                           inputs=self.cases[k - 1], expected=expected,
                           got=None if raised or kind == "device" else got.out, differs=differs,
                           found=k == self.found_case)

    def forbidden(self, k: int) -> dict | None:
        """What the operations rule refuses in an answer that raised on case ``k`` (a loop written
        in it, a forbidden call it reached before the error), or ``None``: a loop whose body breaks
        on an empty batch is told as a loop, not as the error of its empty ``torch.stack``."""
        if self.guard is None:
            return None
        _fresh_state()
        facts = self.guard.test(self.fn, tuple(_copy(self.cases[k - 1])))
        return None if facts is None or facts["how"] == "raised" else {**facts, "rule": self.guard.key}

    def broken_rule(self, k: int) -> dict | None:
        for rule in self.rules:
            _fresh_state()
            facts = rule.test(self.fn, tuple(_copy(self.cases[k - 1])))
            if facts is not None:
                return {**facts, "rule": rule.key}
        return None

    def check_case(self, k: int) -> CheckResult | None:
        """The failure on case ``k``, or ``None`` when the reader's answer is right there."""
        ex = self.ex
        ref = self.outcome(ex.reference, k, ex.grad)
        if isinstance(ref.out, _Raised):  # a bug in the book, not in the reader's answer
            raise RuntimeError(f"the reference of {ex.name} raised on case {k}: {ref.out.type_name}: {ref.out.text}")
        got = self.outcome(self.fn, k, ex.grad)
        if isinstance(got.out, _Raised):
            if got.out.stub and k == 1:
                return CheckResult(ex.name, "not_attempted", self.n)
            if rule := self.forbidden(k):  # the rule would refuse it anyway: say that first
                return self.failure(k, "rule", rule)
            text = got.out.text if len(got.out.text) <= 600 else got.out.text[:600] + " ..."
            return self.failure(k, "exception", {"type": got.out.type_name, "text": text})
        if got.device:
            return self.failure(k, "device", {"how": "returned", "got": got.device})
        if got.mutated:
            return self.failure(k, "mutated_input", {"arg": got.mutated})
        kind, facts, differs = _compare(ex, ref.out, got.out)
        fault = None if kind else self.fault(got, k)
        if (kind == "type" or fault) and (rule := self.broken_rule(k)):  # `.numpy()`, `.item()`, a view
            return self.failure(k, "rule", rule)  # such as `x.diagonal()`: name the forbidden call first
        if kind:
            return self.failure(k, kind, facts, differs)
        if fault:
            return self.failure(k, fault, {"arg": got.aliased} if fault == "aliased" else {})
        floats = [n for n, a in zip(ex.args, self.cases[k - 1])
                  if _is_float(a) and (ex.grad_args is None or n in ex.grad_args)]
        for name, e, g in zip(floats, ref.grads or (), got.grads or ()):
            diff = _differing(e, g, ex.rtol, max(ex.atol, 1e-5))
            if diff.any():
                return self.failure(k, "grad", {"arg": name, "n_diff": int(diff.sum()),
                                                "n": diff.numel()})
        return None

    def verdict(self) -> CheckResult:
        ex, fn = self.ex, self.fn
        for self.k in range(1, self.n + 1):
            if failed := self.check_case(self.k):
                return failed
        if ex.strategy is not None and (found := self.search()) is not None:  # a case the others missed
            self.cases.append(found)
            self.n = self.k = self.found_case = len(self.cases)
            if failed := self.check_case(self.k):
                return failed
        for self.k in range(1, min(3, self.n) + 1):  # called twice on the same inputs: the same answer
            args = _copy(self.cases[self.k - 1])
            first, second = (_call(lambda *_: fn(*args), (), ()) for _ in range(2))  # fn(*args) twice
            if not _same(second.out, first.out, ex.rtol, ex.atol):
                return self.failure(self.k, "second_call", {}, expected=first.out, got=second)
        self.k = 1
        if _on_meta(ex.reference, self.cases[0]) is None:  # the probe only counts where the reference works
            found = _on_meta(fn, self.cases[0])
            if found and found["how"] != "other":
                return self.failure(1, "device", found)
        for self.k in range(1, self.n + 1):
            if ex.chunk_rows:
                rows = _rows_seen(fn, self.cases[self.k - 1])
                if rows is not None and rows > ex.chunk_rows:
                    facts = {"rows": rows, "limit": ex.chunk_rows, "arg": ex.args[0]}
                    return self.failure(self.k, "not_chunked", facts)
            if rule := self.broken_rule(self.k):
                return self.failure(self.k, "rule", rule)
        return CheckResult(ex.name, "passed", self.n, searched=self.searched)

    def search(self) -> Case | None:
        """Hypothesis's smallest case on which the answer differs from the loops (``spec``; values,
        shape, dtype, an exception) or changes an input; the operations are not guarded here."""
        from gatherbook.exercises.strategies import search  # hypothesis: only for exercises that search

        ex, definition = self.ex, self.ex.spec or self.ex.reference

        def fails(case: Case) -> bool:
            expected, got = _call(definition, case, ex.args), _call(self.fn, case, ex.args)
            return got.mutated is not None or not _same(expected.out, got.out, ex.rtol, ex.atol)

        found, self.searched = search(ex.strategy(), fails, ex.n_examples)
        return found


def run(ex: Exercise, fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn`` against ``ex`` in isolation: the facts, without a message (see ``run_check``)."""
    job = _Run(ex, _apart(fn, threading.Event()))
    with _isolated(ex.time_limit) as printed, checking():
        try:
            result = job.verdict()
        except _TimeUp:
            result = CheckResult(ex.name, "timeout", job.n, job.k, facts={"limit": ex.time_limit},
                                 inputs=job.cases[job.k - 1] if job.k else None)
    lines = printed.getvalue().splitlines()
    return replace(result, printed=tuple(lines[:PRINTED_LINES]), n_printed=len(lines))


def _as_imported() -> dict[str, Any]:
    """The checker's functions and classes as this module defined them, and the guard's (its
    cached functions too), with its tables (``FREE``, ``GROUPS`` ...) as copies of their contents."""
    own = {f"checker.{n}": v for n, v in globals().items()
           if getattr(v, "__module__", None) == __name__ and (inspect.isfunction(v) or inspect.isclass(v))}
    own |= {f"guard.{n}": v for n, v in vars(guard).items()
            if getattr(v, "__module__", None) == guard.__name__ and callable(v)}
    return own | {f"guard.{n}": _Table(v) for n, v in vars(guard).items()
                  if n.isupper() and n != "_WATCHING" and isinstance(v, (frozenset, set, dict, tuple))}


class _Table:
    """A guard table's contents when the package was imported (equal while they are the same)."""

    def __init__(self, table: Any):
        self.table = {k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in table.items()} \
            if isinstance(table, dict) else frozenset(table)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Table) and self.table == other.table


def changed(*, _first: dict[str, Any] = _as_imported()) -> list[str]:
    """The checker's names that a notebook cell replaced since the package was imported (a check
    whose comparison was replaced would pass anything): the front-end refuses to check then."""
    now = _as_imported()
    return sorted(n for n, v in _first.items()
                  if not (now.get(n) is v or isinstance(v, _Table) and v == now.get(n)))
