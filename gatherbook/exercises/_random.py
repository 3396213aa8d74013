"""Seeded random numbers for the exercises' random cases (shared by every chapter module)."""
from __future__ import annotations

import torch


def _int(g: torch.Generator, lo: int, hi: int) -> int:
    """A random integer in ``[lo, hi]`` (both included)."""
    return int(torch.randint(lo, hi + 1, (1,), generator=g))


def _distinct(g: torch.Generator, lo: int, hi: int) -> tuple[int, int]:
    """Two different random integers in ``[lo, hi]``."""
    a = _int(g, lo, hi)
    b = _int(g, lo, hi - 1)
    return a, (b + 1 if b >= a else b)


def case_builders(inputs, lo: int, hi: int):
    """``(random_case, fixed_case)`` for an exercise whose inputs depend on two sizes.

    ``inputs(g, a, b)`` makes the inputs from a generator; ``random_case(g)`` draws two different
    sizes in ``[lo, hi]`` first, ``fixed_case(a, b, seed)`` uses the given sizes and its own seed.
    """
    def random_case(g: torch.Generator):
        return inputs(g, *_distinct(g, lo, hi))

    def fixed_case(a: int, b: int, seed: int):
        return inputs(torch.Generator().manual_seed(seed), a, b)

    return random_case, fixed_case
