"""Hypothesis strategies of cases (``Exercise.strategy``), and the search for the smallest case an
answer gets wrong: small tensors whose numbers read easily.

Sizes are small (the failing case is printed and drawn) and shrink towards 0 or 1, so the smallest
failing case hypothesis reports is the edge case that bites: an empty batch, a size-1 dim, a
repeated index; but they reach past 8 (an index wrapped ``% 8`` fails). Integer values lie in
[-9, 9], floats have one decimal in [-9.9, 9.9]; :func:`values` draws every dtype a statement
"x's dtype" allows.
"""
from __future__ import annotations

import functools
import math
import os
import tempfile

import torch
from hypothesis import strategies as st

from gatherbook.exercises.cases import F32, I64


@functools.lru_cache(maxsize=None)
def ints(shape: tuple[int, ...], lo: int = -9, hi: int = 9) -> st.SearchStrategy:
    """An int64 tensor of ``shape`` with values in ``[lo, hi]``."""
    n = math.prod(shape)
    return st.lists(st.integers(lo, hi), min_size=n, max_size=n).map(
        lambda v: torch.tensor(v, dtype=I64).reshape(shape))


@functools.lru_cache(maxsize=None)
def floats(shape: tuple[int, ...], lo: int = -99, hi: int = 99) -> st.SearchStrategy:
    """A float32 tensor of ``shape`` with one decimal: ``k / 10`` for ``k`` in ``[lo, hi]``."""
    return ints(shape, lo, hi).map(lambda x: x.to(F32) / 10)


#: the dtypes a statement "x's dtype" allows, the first the one a failing case shrinks to
DTYPES = (I64, F32, torch.int32, torch.float64)


@functools.lru_cache(maxsize=None)
def values(shape: tuple[int, ...], lo: int = -9, hi: int = 9) -> st.SearchStrategy:
    """A tensor of ``shape`` in any dtype of :data:`DTYPES`: whole numbers in ``[lo, hi]`` for the
    integer dtypes, one decimal in ``[lo, hi]`` for the floating ones (an answer that hard-codes
    int64, or a float that passes through ``.long()``, meets a case it gets wrong)."""
    def cast(dtype: torch.dtype) -> st.SearchStrategy:
        if dtype.is_floating_point:
            return floats(shape, 10 * lo, 10 * hi).map(lambda x: x.to(dtype))
        return ints(shape, lo, hi).map(lambda x: x.to(dtype))
    return st.sampled_from(DTYPES).flatmap(cast)


@functools.lru_cache(maxsize=None)
def index(shape: tuple[int, ...], n: int) -> st.SearchStrategy:
    """An int64 index of ``shape`` with values in ``[0, n)`` (repeats allowed)."""
    return ints(shape, 0, n - 1)


@functools.lru_cache(maxsize=None)
def perm(n: int) -> st.SearchStrategy:
    """A permutation of ``0 .. n-1`` as an int64 tensor."""
    return st.permutations(list(range(n))).map(lambda v: torch.tensor(v, dtype=I64).reshape(n))


@functools.lru_cache(maxsize=None)
def perms(rows: int, n: int) -> st.SearchStrategy:
    """``rows`` permutations of ``0 .. n-1``, shape ``(rows, n)``."""
    return st.lists(perm(n), min_size=rows, max_size=rows).map(
        lambda ps: torch.stack(ps) if ps else torch.zeros(0, n, dtype=I64))


@functools.lru_cache(maxsize=None)
def distinct(rows: int, n: int, *, dtype=I64) -> st.SearchStrategy:
    """Values all different within each row (with negatives): ``3 * perm - 7`` (ints) or /10."""
    def make(p: torch.Tensor) -> torch.Tensor:
        v = 3 * p - 7
        return v.to(dtype) / 10 if dtype.is_floating_point else v.to(dtype)
    return perms(rows, n).map(make)


@functools.lru_cache(maxsize=None)
def bools(shape: tuple[int, ...]) -> st.SearchStrategy:
    n = math.prod(shape)
    return st.lists(st.booleans(), min_size=n, max_size=n).map(
        lambda v: torch.tensor(v, dtype=torch.bool).reshape(shape))


@functools.lru_cache(maxsize=None)
def probs(rows: int, n: int) -> st.SearchStrategy:
    """Rows of probabilities that sum to 1, each a multiple of 1/16 (exact in float32)."""
    def row(cuts: list[int]) -> list[int]:
        edges = [0] + sorted(cuts) + [16]
        return [b - a for a, b in zip(edges, edges[1:])]
    one = st.lists(st.integers(0, 16), min_size=n - 1, max_size=n - 1).map(row)
    return st.lists(one, min_size=rows, max_size=rows).map(
        lambda rs: torch.tensor(rs, dtype=F32).reshape(rows, n) / 16)


@functools.lru_cache(maxsize=None)
def lengths(rows: int, hi: int, lo: int = 0) -> st.SearchStrategy:
    """Sequence lengths in ``[lo, hi]``, shape ``(rows,)``."""
    return ints((rows,), lo, hi)


# --- the search: hypothesis's smallest case on which an answer differs from the loops ------------

def _settings(n_examples: int):
    from hypothesis import HealthCheck, Phase, settings

    return settings(max_examples=n_examples, derandomize=True, database=None, deadline=None,
                    phases=(Phase.explicit, Phase.generate, Phase.shrink),
                    suppress_health_check=list(HealthCheck), print_blob=False)


def search(strategy, fails, n_examples: int) -> tuple[tuple | None, int]:
    """``(case, tried)``: the smallest case of ``strategy`` on which ``fails(case)`` (``None``
    when there is none), and how many cases were tried. Derandomised: the same on every run.
    Hypothesis's cache goes to the temporary folder, not a ``.hypothesis/`` beside the notebook
    (unless ``HYPOTHESIS_STORAGE_DIRECTORY`` says where)."""
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "gatherbook-hypothesis"))
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    tried = 0

    def bad(case: tuple) -> bool:
        nonlocal tried
        tried += 1
        return fails(case)

    try:
        return find(strategy, bad, settings=_settings(n_examples)), tried
    except NoSuchExample:
        return None, tried
