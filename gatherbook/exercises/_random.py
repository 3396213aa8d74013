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
