"""The package's one argument vocabulary: what a reader may pass, checked one way everywhere.

Three contracts, one message style (``<name> must be <what>, got <type> <value>.``), used by the
figures (:mod:`gatherbook.figures`) and the kernels (:mod:`gatherbook.logprobs`,
:mod:`gatherbook.vision`, ...):

- :func:`tensor` -- a dense ``torch.Tensor``, optionally of a given number of dims and kind.
- :func:`integer` -- an ``int`` (never a ``bool``), optionally with a least value
  (a positive int is ``integer(name, value, least=1)``).
- :func:`reals` -- a 1-d sequence of real numbers (list, tuple, 1-d tensor or array).
(The texts and keyed panels a figure shows are the figure kit's: ``gatherbook.figures.style.label``
and ``mapping``.)

Each returns its value (converted where the doc says), so a call reads
``q = args.tensor("q", q, ndim=2, kind="float")``. Internal contracts are one-line asserts.
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import torch

__all__ = ["tensor", "integer", "reals", "described"]

_KINDS = {
    "float": (lambda t: t.is_floating_point(), "a floating-point dtype"),
    "int": (lambda t: t.dtype in (torch.int64, torch.int32), "dtype torch.int64 (or torch.int32)"),
    "bool": (lambda t: t.dtype == torch.bool, "dtype torch.bool"),
}


def described(value: object) -> str:
    """``<type> <repr>`` of a value, cut at 60 characters: what a message says was given."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def tensor(name: str, value: object, *, ndim: int | tuple[int, ...] | None = None,
           kind: str | None = None) -> torch.Tensor:
    """``value`` itself when it is a dense tensor with ``ndim`` dims (one of them) and ``kind``
    (``"float"``, ``"int"`` or ``"bool"``).

    Raises:
        TypeError: ``value`` is not a tensor, or has another kind of dtype.
        ValueError: it is sparse, or has another number of dims.
    """
    if not isinstance(value, torch.Tensor):
        hint = (" Convert it first, e.g. torch.tensor(...)."
                if isinstance(value, (list, tuple, int, float, np.ndarray, np.generic)) else "")
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}.{hint}")
    if value.layout != torch.strided:
        raise ValueError(f"{name} must be a dense tensor, got a {value.layout} one: {name}.to_dense().")
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if dims is not None and value.ndim not in dims:
        want = " or ".join(map(str, dims))
        raise ValueError(f"{name} must have {want} dimension(s), got shape {tuple(value.shape)}.")
    if kind is not None and not _KINDS[kind][0](value):
        raise TypeError(f"{name} must have {_KINDS[kind][1]}, got {value.dtype}.")
    return value


def integer(name: str, value: object, *, least: int | None = None) -> int:
    """``value`` as an ``int`` (a ``bool`` is refused), at least ``least`` when given."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {described(value)}.")
    if least is not None and value < least:
        raise ValueError(f"{name} must be an int >= {least}, got {value}.")
    return int(value)


def reals(name: str, values: object) -> list[float]:
    """A 1-d sequence of real numbers (list, tuple, 1-d tensor or array) as a list of floats."""
    if isinstance(values, (torch.Tensor, np.ndarray)):
        if values.ndim != 1 or values.dtype in (bool, torch.bool):
            raise TypeError(f"{name} must be a 1-d sequence of numbers, got a {values.ndim}-d "
                            f"{type(values).__name__} of dtype {values.dtype}.")
        values = values.tolist()
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of numbers, got {described(values)}.")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name}[{i}] must be a number, got {described(v)}.")
    return [float(v) for v in values]
