"""The operations guard: while a reader's answer runs, only the exercise's ``allowed`` operations
(the Practice puzzles' rule) run.

Two watchers, both active only during the call of the reader's function:

- :class:`OpsGuard`, a :class:`torch.overrides.TorchFunctionMode`, sees every torch function and
  tensor method the answer calls, by name (``gather``, ``Tensor.scatter_add``, ``+``, ``x[...]``),
  and raises :class:`Forbidden` for one that is not in the puzzle's list. Indexing is allowed
  with ints, slices, ``None`` and ``...`` only: ``x[idx]`` with a tensor is a gather in disguise.
  Taking values out to Python (``.item()``, ``.tolist()``, iterating, ``if t:``) is never allowed.
- a line tracer (:func:`sys.settrace`) on the reader's own code: a line that runs twice in one
  call is a Python loop (or a comprehension), which the puzzles rule out.

Before the call, :func:`loop_line` reads the answer's own bytecode: a loop written in it is named
as a loop, even when its first pass would stop at a forbidden call (``x[i, idx[i]]``, ``int(n)``).

Nested calls inside torch are not seen: a mode is switched off while its handler runs.
"""
from __future__ import annotations

import dis
import sys
import types
from typing import Any, Callable, Iterable

import torch
from torch.overrides import TorchFunctionMode, resolve_name

from gatherbook.exercises.declaration import Rule

#: names that never count as an operation: questions about a tensor, and printing it
FREE = frozenset({
    "shape", "dtype", "device", "ndim", "size", "dim", "numel", "is_floating_point", "__len__",
    "layout", "requires_grad", "is_leaf", "grad_fn", "__repr__", "__str__", "__format__",
    "names", "data_ptr", "stride", "is_contiguous", "_version", "__hash__", "storage_offset",
    "__dlpack__", "is_cuda", "is_meta", "is_sparse", "is_complex", "element_size",
    "__get__", "__torch_function__", "__reduce_ex__", "__deepcopy__",
})

#: reading values into Python: a loop over elements by another name
TO_PYTHON = frozenset({"item", "tolist", "numpy", "__iter__", "__bool__", "__int__", "__float__",
                       "__index__", "__array__", "__complex__", "unbind"})

#: operator methods, by the symbol a reader writes
SYMBOLS = {
    "__add__": "+", "__radd__": "+", "__iadd__": "+=", "add": "+",
    "__sub__": "-", "__rsub__": "-", "__isub__": "-=", "sub": "-", "rsub": "-",
    "__mul__": "*", "__rmul__": "*", "__imul__": "*=", "mul": "*",
    "__truediv__": "/", "__rtruediv__": "/", "__itruediv__": "/=", "div": "/", "true_divide": "/",
    "__floordiv__": "//", "__rfloordiv__": "//", "floor_divide": "//",
    "__mod__": "%", "__rmod__": "%", "remainder": "%", "fmod": "%",
    "__neg__": "-x", "neg": "-x", "__pos__": "+x",
    "__lt__": "<", "lt": "<", "__le__": "<=", "le": "<=", "__gt__": ">", "gt": ">",
    "__ge__": ">=", "ge": ">=", "__eq__": "==", "eq": "==", "__ne__": "!=", "ne": "!=",
    "__and__": "&", "__rand__": "&", "logical_and": "&", "bitwise_and": "&",
    "__or__": "|", "__ror__": "|", "logical_or": "|", "bitwise_or": "|",
    "__invert__": "~", "logical_not": "~", "bitwise_not": "~",
    "__xor__": "^", "__rxor__": "^", "logical_xor": "^", "bitwise_xor": "^",
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

#: names that mean the same operation (a method, its in-place twin, a functional alias)
ALIASES = {
    "scatter_": "scatter", "scatter_add_": "scatter_add", "scatter_reduce_": "scatter_reduce",
    "index_add_": "index_add", "masked_fill_": "masked_fill", "clamp_": "clamp", "clip": "clamp",
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
    """An operation the puzzle does not allow (``op``), or a Python loop in the answer (``loop``)."""

    def __init__(self, op: str, *, loop: tuple[int, int] | None = None, limit: int | None = None):
        self.op, self.loop, self.limit = op, loop, limit
        super().__init__(op if loop is None else f"Python loop at line {loop[0]} ({loop[1]} runs)")

    def facts(self) -> dict:
        """What the message says: ``how`` (``loop``, ``index``, ``limit``, ``python`` or ``op``)."""
        if self.loop is not None:
            return {"how": "loop", "op": self.op, "line": self.loop[0]}
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
    name = full
    for prefix in ("torch.Tensor.", "torch.nn.functional.", "torch.special.", "torch._C._TensorBase.",
                   "torch._C.TensorBase.", "torch."):
        if name.startswith(prefix):
            name = name[len(prefix):]
            if prefix == "torch.nn.functional.":
                name = "F." + name
            break
    name = SYMBOLS.get(name, name)
    return ALIASES.get(name, name)


def _has_tensor(key: Any) -> bool:
    if isinstance(key, torch.Tensor):
        return True
    if isinstance(key, (tuple, list)):
        return any(_has_tensor(k) for k in key)
    return False


class OpsGuard(TorchFunctionMode):
    """Raise :class:`Forbidden` on the first torch call whose name is not in ``allowed``.

    ``limits`` caps how many times some operations may run (``{"argsort": 1}``).
    """

    def __init__(self, allowed: Iterable[str], limits: dict[str, int] | None = None):
        super().__init__()
        self.allowed = frozenset(allowed)
        self.limits = dict(limits or {})
        self.counts: dict[str, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = op_name(func)
        if name in ("x[...]", "x[...] =") and len(args) > 1 and _has_tensor(args[1]):
            raise Forbidden("x[tensor]")
        if name in TO_PYTHON:
            raise Forbidden(name)
        if name not in FREE and name not in self.allowed:
            raise Forbidden(name)
        if name in self.limits:
            self.counts[name] = self.counts.get(name, 0) + 1
            if self.counts[name] > self.limits[name]:
                raise Forbidden(name, limit=self.limits[name])
        return func(*args, **kwargs)


class LoopTracer:
    """Watch the reader's own code (``filename``) run: a jump backwards is a Python loop.

    Opcode tracing sees the loops of ``for``, ``while`` and comprehensions alike, and does not
    mistake an expression written over several lines for a loop (line events would).
    """

    def __init__(self, filename: str):
        self.filename = filename
        self.last: dict[int, int] = {}

    def _local(self, frame, event, arg):
        if event == "opcode":
            key = id(frame)
            if frame.f_lasti < self.last.get(key, -1):
                raise Forbidden("for", loop=(frame.f_lineno, 2))
            self.last[key] = frame.f_lasti
        return self._local

    def __call__(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename == self.filename:
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            self.last.pop(id(frame), None)
            return self._local
        return None


def loop_line(fn: Callable[..., Any]) -> int | None:
    """The line of the first loop (``for``, ``while``, a comprehension) written in ``fn``'s own code
    or in a function or comprehension nested in it, or ``None``."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    todo = [code]
    while todo:
        c = todo.pop(0)
        for ins in dis.get_instructions(c):
            if ins.opname == "FOR_ITER" or "BACKWARD" in ins.opname:
                return ins.positions.lineno if ins.positions else c.co_firstlineno
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return None


def guarded_call(fn: Callable[..., Any], args: tuple, allowed: Iterable[str],
                 limits: dict[str, int] | None = None) -> Any:
    """Call ``fn(*args)`` with the guard on; :class:`Forbidden` propagates (a loop written in
    ``fn`` before anything runs)."""
    line = loop_line(fn)
    if line is not None:
        raise Forbidden("for", loop=(line, 2))
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    tracer = LoopTracer(filename) if filename else None
    old = sys.gettrace()
    try:
        with OpsGuard(allowed, limits):
            if tracer is not None:
                sys.settrace(tracer)
            try:
                return fn(*args)
            finally:
                if tracer is not None:
                    sys.settrace(old)
    finally:
        sys.settrace(old)


def ops_text(allowed: Iterable[str], group: str = "{ops}", sep: str = "; ",
             names: dict[str, str] | None = None) -> str:
    """The allowed operations, grouped: ``gather; + - * ...; x[...] view ...``; each group is
    written with ``group`` (``{ops}``, and ``{name}``: its name in ``names``), joined by ``sep``."""
    return sep.join(" ".join(GROUPS.get(op, (op,))) if op not in GROUPS
                    else group.format(ops=" ".join(GROUPS[op]), name=(names or {}).get(op, op)) for op in allowed)


def rule(allowed: Iterable[str], limits: dict[str, int] | None = None) -> Rule:
    """The rule of an exercise with ``allowed``: the answer calls only those operations (at most
    ``limits`` times) and runs no Python loop; its facts say which call broke it."""
    ops = expand(allowed)

    def test(fn: Callable[..., Any], case: tuple) -> dict | None:
        try:
            guarded_call(fn, case, ops, limits)
        except Forbidden as e:
            return e.facts()
        except Exception:  # an error only under the guard (the values were right): not this rule's
            return None
        return None
    return Rule("allowed_ops", test)
