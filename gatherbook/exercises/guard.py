"""The operations guard: while a reader's answer runs, only the exercise's ``allowed`` operations
(the Practice puzzles' rule) run.

Two watchers, both active only during the call of the reader's function:

- :class:`OpsGuard`, a :class:`torch.overrides.TorchFunctionMode`, sees every torch function and
  tensor method the answer calls, by name (``gather``, ``Tensor.scatter_add``, ``+``, ``x[...]``),
  and raises :class:`Forbidden` for one that is not in the puzzle's list. Indexing is allowed
  with ints, slices, ``None`` and ``...`` only: ``x[idx]`` with a tensor is a gather in disguise.
  Taking values out to Python (``.item()``, ``.tolist()``, iterating, ``if t:``, ``.numpy()``,
  ``__dlpack__``) is never allowed, and a tensor printed under the guard shows no values.
- a tracer (:func:`sys.settrace`, :class:`Tracer`) on the reader's code, the answer's own and every
  function of the reader's it calls (a helper from another cell, an accepted answer to an earlier
  puzzle): a function whose code holds a loop (``for``, ``while``, a comprehension), a function
  that calls itself, or one called again and again from the same place (``map``,
  ``sorted(key=...)``, ``functools.reduce`` with a lambda) is a Python loop, which the puzzles rule
  out. At each instruction of the reader's code it checks that the guard is still on
  (``torch._C.DisableTorchFunction()``, a popped mode stack), and an audit hook refuses, from the
  reader's code, what would switch the tracer off or read values back from text (``sys.settrace``,
  frames, ``eval``/``exec``).

Before the call, :func:`loop_line` reads the answer's own bytecode: a loop written in it is named
as a loop, even when its first pass would stop at a forbidden call (``x[i, idx[i]]``, ``int(n)``).
A fault is kept by the guard as well as raised, so an answer that catches it is still named.
Nested calls inside torch are not seen: a mode is switched off while its handler runs.
"""
from __future__ import annotations

import dis
import functools
import inspect
import sys
import sysconfig
import threading
import types
from pathlib import Path
from typing import Any, Callable, Iterable

import torch
from torch.overrides import TorchFunctionMode, resolve_name

from gatherbook.exercises.declaration import Rule

#: names that never count as an operation: questions about a tensor, and printing it
FREE = frozenset({
    "shape", "dtype", "device", "ndim", "size", "dim", "numel", "is_floating_point", "__len__",
    "layout", "requires_grad", "is_leaf", "grad_fn", "__repr__", "__str__", "__format__",  # (no values: TEXT)
    "names", "stride", "is_contiguous", "_version", "__hash__", "storage_offset",
    "is_cuda", "is_meta", "is_sparse", "is_complex", "element_size", "__dlpack_device__",
    "__get__", "__torch_function__", "__reduce_ex__", "__deepcopy__",
})

#: reading values into Python: a loop over elements by another name
TO_PYTHON = frozenset({"item", "tolist", "numpy", "__iter__", "__bool__", "__int__", "__float__",
                       "__index__", "__array__", "__complex__", "unbind", "__dlpack__", "data_ptr",
                       "untyped_storage", "storage", "_typed_storage",
                       "eval"})  # eval: text run as code (values printed, then read back)

#: a tensor turned into text under the guard (printing is allowed; its values are not there to be
#: read back with ``eval``, ``ast.literal_eval``, ``int(...)``)
TEXT = frozenset({"__repr__", "__str__", "__format__"})

#: names whose use in the reader's code switches the guard off, or reaches for what it watches
TAMPER = frozenset({
    "DisableTorchFunction", "DisableTorchFunctionSubclass", "_DisableTorchDispatch", "_EnableTorchFunction",
    "_pop_torch_function_stack", "_push_on_torch_function_stack", "_set_torch_function_state",
    "_skip_one_hop_torch_function", "_set_skip_next_torch_function", "_pop_mode", "_pop_mode_temporarily",
    "_no_torch_function_mode", "_disabled_torch_function_impl", "settrace", "setprofile", "gettrace",
    "_getframe", "f_trace", "f_trace_opcodes", "f_back", "tb_frame", "_current_frames", "addaudithook"})

#: operator methods, by the symbol a reader writes (``y += x`` is the operation ``+``: an in-place
#: operation on an input is the checker's fault to name, ``mutated_input``)
SYMBOLS = {
    "__add__": "+", "__radd__": "+", "__iadd__": "+", "add": "+",
    "__sub__": "-", "__rsub__": "-", "__isub__": "-", "sub": "-", "rsub": "-",
    "__mul__": "*", "__rmul__": "*", "__imul__": "*", "mul": "*",
    "__truediv__": "/", "__rtruediv__": "/", "__itruediv__": "/", "div": "/", "true_divide": "/",
    "__floordiv__": "//", "__rfloordiv__": "//", "floor_divide": "//",
    "__mod__": "%", "__rmod__": "%", "remainder": "%", "fmod": "%",
    "__neg__": "-x", "neg": "-x", "__pos__": "+x",
    "__lt__": "<", "lt": "<", "__le__": "<=", "le": "<=", "__gt__": ">", "gt": ">",
    "__ge__": ">=", "ge": ">=", "__eq__": "==", "eq": "==", "__ne__": "!=", "ne": "!=",
    "__and__": "&", "__rand__": "&", "__iand__": "&", "logical_and": "&", "bitwise_and": "&",
    "__or__": "|", "__ror__": "|", "__ior__": "|", "logical_or": "|", "bitwise_or": "|",
    "__invert__": "~", "logical_not": "~", "bitwise_not": "~",
    "__xor__": "^", "__rxor__": "^", "__ixor__": "^", "logical_xor": "^", "bitwise_xor": "^",
    "__pow__": "**", "__rpow__": "**", "pow": "**",
    "__getitem__": "x[...]", "__setitem__": "x[...] =",
    "__matmul__": "@", "__rmatmul__": "@", "matmul": "@",
}

#: groups of allowed operations, by the names the allowed list shows
GROUPS: dict[str, tuple[str, ...]] = {
    "arith": ("+", "-", "*", "/", "//", "%", "-x", "abs", "clamp", "minimum", "maximum"),
    "compare": ("<", "<=", ">", ">=", "==", "!=", "&", "|", "~"),
    "shape": ("x[...]", "x[...] =", "view", "reshape", "unsqueeze", "squeeze", "expand", "expand_as",
              "flatten", "permute", "transpose", "contiguous", "cat", "stack"),
    "create": ("arange", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
               "new_zeros", "new_ones", "new_full", "clone", "to", "long", "float", "bool"),
    "where": ("where", "masked_fill"),
    "scatter": ("scatter", "scatter_add", "scatter_reduce", "index_add"),
}

#: names that mean the same operation (a method, a functional alias). An in-place twin is its
#: operation (:func:`op_name` reads ``index_put_``, ``scatter_``, ``add_`` (``+=``) as ``index_put``,
#: ``scatter``, ``+``), so a puzzle lists one name and allows both spellings.
ALIASES = {
    "clip": "clamp",
    "clamp_min": "clamp", "clamp_max": "clamp", "true_divide": "/", "concat": "cat",
    "concatenate": "cat", "swapaxes": "transpose", "swapdims": "transpose", "mT": "transpose",
    "T": "transpose", "t": "transpose", "absolute": "abs", "type_as": "to", "type": "to", "int": "long",
    "broadcast_to": "expand", "movedim": "permute", "moveaxis": "permute",
    "double": "float", "half": "float", "expand_copy": "expand", "unsqueeze_copy": "unsqueeze",
}


def expand(ops: Iterable[str]) -> tuple[str, ...]:
    """The allowed operation names: each group name (``"arith"`` ...) replaced by its members."""
    out: list[str] = []
    for op in ops:
        for name in GROUPS.get(op, (op,)):
            if name not in out:
                out.append(name)
    return tuple(out)


class Forbidden(Exception):
    """An operation the puzzle does not allow (``op``), a Python loop (``loop``: its line; ``where``:
    the reader's function it is written in, when not the answer itself), or another fault ``how``
    (``recursion``, ``call_loop``, ``index_list``, ``tamper``)."""

    def __init__(self, op: str, *, loop: tuple[int, int] | None = None, limit: int | None = None,
                 how: str | None = None, where: str | None = None):
        self.op, self.loop, self.limit, self.how, self.where = op, loop, limit, how, where
        super().__init__(op if loop is None else f"Python loop at line {loop[0]} ({loop[1]} runs)")

    def facts(self) -> dict:
        """What the message says: ``how`` (``loop``, ``loop_in`` (a loop in a function the answer
        calls), ``recursion``, ``call_loop`` (``map``, ``sorted`` ... with a function), ``index``,
        ``index_list``, ``slicing`` or ``slice_write`` (where a puzzle takes slicing away; ``what``
        was indexed), ``limit``, ``python``, ``tamper`` or ``op``)."""
        if self.loop is not None:
            how = self.how or ("loop_in" if self.where else "loop")
            return {"how": how, "op": self.op, "line": self.loop[0], "where": self.where or ""}
        if self.how in ("slicing", "slice_write"):  # what was indexed: `cols[None]`
            return {"how": self.how, "op": self.op, "what": self.where or ""}
        if self.how:
            return {"how": self.how, "op": self.op}
        if self.op == "x[tensor]":
            return {"how": "index", "op": self.op}
        if self.limit:
            return {"how": "limit", "op": self.op, "limit": self.limit}
        return {"how": "python" if self.op in TO_PYTHON else "op", "op": self.op}


def op_name(func: Callable[..., Any]) -> str:
    """A torch function's name as a reader writes it: ``gather``, ``+``, ``x[...]``, ``F.one_hot``."""
    try:
        full = resolve_name(func) or getattr(func, "__name__", repr(func))
    except Exception:
        full = getattr(func, "__name__", repr(func))
    if full.endswith(".__get__"):  # a property such as Tensor.shape.__get__
        full = full[: -len(".__get__")]
    if full.startswith("aten."):  # torch.ops.aten.gather(.default): the operation itself
        full = full.split(".")[1]
    name = full
    for prefix in ("torch.Tensor.", "torch.nn.functional.", "torch.special.", "torch._C._TensorBase.",
                   "torch._C.TensorBase.", "torch."):
        if name.startswith(prefix):
            name = name[len(prefix):]
            if prefix == "torch.nn.functional.":
                name = "F." + name
            break
    if name.endswith("_") and not name.endswith("__"):  # an in-place twin: index_put_, add_ (+=)
        name = name[:-1]
    name = SYMBOLS.get(name, name)
    return ALIASES.get(name, name)


def _fancy(key: Any) -> str | None:
    """What in an index key picks elements: ``x[tensor]``, or ``x[list]`` for a list, a range, an
    array ...; indexing may use ints, slices, ``None`` and ``...`` only."""
    if isinstance(key, torch.Tensor):
        return "x[tensor]"
    if isinstance(key, tuple):
        return next((f for f in map(_fancy, key) if f), None)
    if key is None or key is Ellipsis or isinstance(key, (int, slice, torch.SymInt)):
        return None
    if hasattr(key, "__index__") and not hasattr(key, "__len__"):  # a NumPy integer: one element
        return None
    return "x[list]"


def _key_text(key: Any) -> str:
    """An index key as the reader wrote it: ``None``, ``:, 0``, ``..., None``, ``1:3``."""
    if isinstance(key, tuple):
        return ", ".join(map(_key_text, key))
    if key is Ellipsis:
        return "..."
    if isinstance(key, slice):
        parts = ["" if v is None else str(v) for v in (key.start, key.stop, key.step)]
        return ":".join(parts[:2] if key.step is None else parts)
    return str(key)


class OpsGuard(TorchFunctionMode):
    """Raise :class:`Forbidden` on the first torch call whose name is not in ``allowed``.

    ``limits`` caps how many times some operations may run (``{"argsort": 1}``); ``names`` gives
    the reader's name of each input (by ``id``), so that a refused slice says what was indexed.
    """

    def __init__(self, allowed: Iterable[str], limits: dict[str, int] | None = None,
                 names: dict[int, str] | None = None):
        super().__init__()
        self.allowed = frozenset(allowed)
        self.limits = dict(limits or {})
        self.names = dict(names or {})
        self.counts: dict[str, int] = {}
        self.broken: Forbidden | None = None  # the first fault (kept: the answer may catch it)

    def fault(self, e: Forbidden) -> Forbidden:
        """Keep the first fault; hand ``e`` back to be raised."""
        if self.broken is None:
            self.broken = e
        return e

    def on(self) -> bool:
        """Whether this guard still sees the torch calls of the thread it runs on."""
        return torch._C._is_torch_function_mode_enabled() and any(
            torch._C._get_function_stack_at(i) is self for i in range(torch._C._len_torch_function_stack()))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = op_name(func)
        if name in ("x[...]", "x[...] =") and len(args) > 1 and (fancy := _fancy(args[1])):
            raise self.fault(Forbidden(fancy, how="index_list" if fancy == "x[list]" else None))
        if name in TO_PYTHON:
            raise self.fault(Forbidden(name))
        if name in TEXT:
            return "tensor(…)"
        if name in ("x[...]", "x[...] =") and name not in self.allowed:  # slicing where a puzzle takes it away
            what = f"{self.names.get(id(args[0]), 'tensor')}[{_key_text(args[1])}]" if len(args) > 1 else name
            raise self.fault(Forbidden(name, how="slicing" if name == "x[...]" else "slice_write", where=what))
        if name not in FREE and name not in self.allowed:
            raise self.fault(Forbidden(name))
        if name in self.limits:
            self.counts[name] = self.counts.get(name, 0) + 1
            if self.counts[name] > self.limits[name]:
                raise self.fault(Forbidden(name, limit=self.limits[name]))
        return func(*args, **kwargs)


#: code that is not the reader's: the package, the standard library, the installed packages
_NOT_READERS = tuple(str(Path(p).resolve()) for p in {Path(__file__).parents[1], *(
    sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib"))})


@functools.lru_cache(maxsize=4096)
def is_readers(filename: str) -> bool:
    """Whether code from ``filename`` is the reader's: a notebook cell (IPython names it
    ``<ipython-input-...>`` or by a file of its own) or a file outside the package and the
    installed code (not ``<string>``: a dataclass's generated ``__init__`` is named so)."""
    if filename.startswith("<"):
        return filename.startswith("<ipython-input")
    return not str(Path(filename).resolve()).startswith(_NOT_READERS)


def _codes(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and the code of the functions and comprehensions written inside it."""
    out, todo = [], [code]
    while todo:
        c = todo.pop(0)
        out.append(c)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return out


def _written_fault(code: types.CodeType, where: str | None = None) -> Forbidden | None:
    """What ``code`` (with the code nested in it) breaks as written: a loop, or a name that
    switches the guard off (:data:`TAMPER`)."""
    codes = _codes(code)
    for c in codes:
        for ins in dis.get_instructions(c):
            if ins.opname == "FOR_ITER" or "BACKWARD" in ins.opname:
                return Forbidden("for", loop=(ins.positions.lineno if ins.positions else c.co_firstlineno, 2),
                                 where=where)
    names = TAMPER.intersection(
        n for c in codes for n in c.co_names)
    return Forbidden(min(names), how="tamper") if names else None


#: the tracer watching each thread that runs a guarded answer now (for the audit hook)
_WATCHING: dict[int, "Tracer"] = {}


class Tracer:
    """Watch the reader's code run under ``guard`` (the answer's own code is ``own``; every file
    :func:`is_readers` says is the reader's too): a loop written in a function it calls, a
    function that calls itself, or one called again and again from the same instruction (a loop
    in C: ``map``, ``sorted(key=)``) is a Python loop; at each instruction, the guard must still
    be on. A fault is kept in the guard (:meth:`OpsGuard.fault`) and raised."""

    def __init__(self, guard: OpsGuard, own: types.CodeType | None):
        self.guard = guard
        self.own = frozenset(_codes(own)) if own is not None else frozenset()
        self.files = {c.co_filename for c in self.own}
        self.written: dict[types.CodeType, Forbidden | None] = {}
        self.sites: set[tuple] = set()
        self.pinned: list = []  # the callers seen (kept alive: their ids are not reused)

    def mine(self, code: types.CodeType) -> bool:
        return code.co_filename in self.files or is_readers(code.co_filename)

    def __call__(self, frame, event, arg):
        code = frame.f_code
        if event != "call" or not self.mine(code):
            return None
        _WATCHING[threading.get_ident()] = self
        if code not in self.written:
            self.written[code] = None if code in self.own else _written_fault(code, code.co_name)
        if self.written[code] is not None:
            raise self.guard.fault(self.written[code])
        caller = frame.f_back
        f = caller
        while f is not None:  # a function that calls itself
            if f.f_code is code:
                raise self.guard.fault(Forbidden(code.co_name, loop=(caller.f_lineno, 2), how="recursion"))
            f = f.f_back
        if caller is not None:
            site = (id(caller), caller.f_lasti, code)
            if site in self.sites:  # called again from the same instruction: a loop in C
                raise self.guard.fault(Forbidden(code.co_name, loop=(caller.f_lineno, 2), how="call_loop"))
            self.sites.add(site)
            self.pinned.append(caller)
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return self._local

    def _local(self, frame, event, arg):
        if event == "opcode" and not self.guard.on():
            disabled = torch._C._len_torch_function_stack() and not torch._C._is_torch_function_mode_enabled()
            op = "DisableTorchFunction" if disabled else "_pop_torch_function_stack"
            raise self.guard.fault(Forbidden(op, how="tamper"))
        return self._local


#: audit events the reader's code may not raise under the guard: text run as code, the tracer
#: replaced, frames read (to switch the tracer off in them)
_AUDITED = {"compile": "eval", "exec": "eval", "sys.settrace": "settrace", "sys.setprofile": "setprofile",
            "sys._getframe": "_getframe", "object.__getattr__": None, "sys._current_frames": "_current_frames"}
_FRAMES = {"tb_frame", "gi_frame", "cr_frame", "ag_frame"}
_busy = threading.local()


def _audit(event: str, args: tuple) -> None:
    tracer = _WATCHING.get(threading.get_ident())
    if tracer is None or event not in _AUDITED or getattr(_busy, "on", False):
        return
    if event == "object.__getattr__" and args[1] not in _FRAMES:  # (f_code: the tracer reads it too)
        return
    _busy.on = True  # (reading a frame raises events of its own)
    try:
        caller = sys._getframe(1)  # the frame that called eval, settrace ...
        if caller is None or not tracer.mine(caller.f_code):
            return
    finally:
        _busy.on = False
    op = _AUDITED[event] or str(args[1])
    raise tracer.guard.fault(Forbidden(op) if op == "eval" else Forbidden(op, how="tamper"))


sys.addaudithook(_audit)  # (it cannot be removed: a dict lookup where no guarded answer runs)


def loop_line(fn: Callable[..., Any]) -> int | None:
    """The line of the first loop (``for``, ``while``, a comprehension) written in ``fn``'s own code
    or in a function or comprehension nested in it, or ``None``."""
    code = getattr(fn, "__code__", None)
    fault = _written_fault(code) if code is not None else None
    return fault.loop[0] if fault is not None and fault.loop is not None else None


def guarded_call(fn: Callable[..., Any], args: tuple, allowed: Iterable[str],
                 limits: dict[str, int] | None = None, names: Iterable[str] = ()) -> Any:
    """Call ``fn(*args)`` with the guard and the tracer on; :class:`Forbidden` propagates (a loop
    written in ``fn``, before anything runs), also when the answer caught it. ``names``: the
    arguments' names, for the message."""
    own = getattr(inspect.unwrap(fn), "__code__", None)  # the reader's (the checker wraps it)
    if own is not None and (fault := _written_fault(own)) is not None:
        raise fault
    guard = OpsGuard(allowed, limits, {id(a): n for n, a in zip(names, args) if isinstance(a, torch.Tensor)})
    tracer = Tracer(guard, own)
    old = sys.gettrace()
    try:
        with guard:
            sys.settrace(tracer)
            try:
                out = fn(*args)
            finally:
                sys.settrace(old)
    except BaseException:
        if guard.broken is not None:
            raise guard.broken from None
        raise
    finally:
        sys.settrace(old)
        for thread in [k for k, v in _WATCHING.items() if v is tracer]:
            _WATCHING.pop(thread, None)
    if guard.broken is not None:
        raise guard.broken
    return out


def ops_text(allowed: Iterable[str], group: str = "{ops}", sep: str = "; ",
             names: dict[str, str] | None = None, op_names: dict[str, str] | None = None,
             list_sep: str = ", ") -> str:
    """The allowed operations, grouped: ``gather; + - * ...; view reshape ...``; each group is
    written with ``group`` (``{ops}``, and ``{name}``: its name in ``names``), joined by ``sep``.
    An operation that ``op_names`` words (``x[...]``: "slicing and None-indexing", as the Practice
    pages write it) is written so, after its group's other members and ``list_sep``.
    Each is listed once: a name given twice, or one that a listed group holds, is not repeated."""
    listed = list(dict.fromkeys(allowed))  # ("scatter",) + a page's base that holds "scatter" too
    grouped = {name for op in listed for name in GROUPS.get(op, ())}
    words = op_names or {}

    def members(ops: Iterable[str]) -> str:
        ops = list(ops)
        plain = " ".join(o for o in ops if o not in words)
        return list_sep.join([plain] * bool(plain) + [words[o] for o in ops if o in words])

    return sep.join(group.format(ops=members(GROUPS[op]), name=(names or {}).get(op, op)) if op in GROUPS
                    else members([op]) for op in listed if op in GROUPS or op not in grouped)


def rule(allowed: Iterable[str], limits: dict[str, int] | None = None, names: Iterable[str] = ()) -> Rule:
    """The rule of an exercise with ``allowed``: the answer calls only those operations (at most
    ``limits`` times) and runs no Python loop; its facts say which call broke it (``names``: the
    arguments', to say which input a refused slice indexed)."""
    ops, names = expand(allowed), tuple(names)

    def test(fn: Callable[..., Any], case: tuple) -> dict | None:
        try:
            guarded_call(fn, case, ops, limits, names)
        except Forbidden as e:
            return e.facts()
        except Exception as e:  # the values were right without the guard: it raised only under it
            return {"how": "raised", "op": type(e).__name__, "text": str(e).strip()[:300]}
        return None
    return Rule("allowed_ops", test)
