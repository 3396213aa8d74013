"""The one vocabulary every exercise declaration builds its cases from.

Hand-written cases use :func:`t` (int64), :func:`f` (float32), :func:`b` (bool) and
:func:`coded` (values that spell their own position); random ones draw from a seeded CPU
``torch.Generator`` with :func:`between`, :func:`distinct`, :func:`floats` ... so the cases are
the same on every run. A case is a tuple of the reference's positional arguments.
"""
from __future__ import annotations

import torch

I64 = torch.int64
F32 = torch.float32
ATOL = 1e-5  # float32 answers computed another way (a loop, logsumexp) differ in the last bits
PAD = -100   # the label of a padded position (what F.cross_entropy ignores by default)


def t(values, dtype=I64) -> torch.Tensor:
    return torch.tensor(values, dtype=dtype)


def f(values) -> torch.Tensor:
    return torch.tensor(values, dtype=F32)


def b(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.bool)


def coded(*shape: int, dtype=I64) -> torch.Tensor:
    """Values that spell their own position: ``10*i + j`` (2D), ``100*b + 10*n + d`` (3D)."""
    weights = [10 ** (len(shape) - 1 - k) for k in range(len(shape))]
    grids = torch.meshgrid(*[torch.arange(s) for s in shape], indexing="ij")
    return sum(w * g for w, g in zip(weights, grids)).to(dtype)


def negative(*shape: int, dtype=F32) -> torch.Tensor:
    """Floats below zero that still spell their position: ``-(10*i + j) / 10 - 0.5``."""
    return -coded(*shape, dtype=dtype) / 10 - 0.5


def with_value(x: torch.Tensor, where: tuple, value: float) -> torch.Tensor:
    """A copy of ``x`` with one entry replaced (``-inf``, ``inf``, a logit that underflows ...)."""
    x = x.clone()
    x[where] = value
    return x


# --- random numbers (always from the generator ``g``) -----------------------------------------

def between(g: torch.Generator, lo: int, hi: int) -> int:
    """A random integer in ``[lo, hi]`` (both included)."""
    return int(torch.randint(lo, hi + 1, (1,), generator=g))


def distinct(g: torch.Generator, lo: int, hi: int) -> tuple[int, int]:
    """Two different random integers in ``[lo, hi]`` (sizes that differ: a wrong ``dim`` fails)."""
    a = between(g, lo, hi)
    c = between(g, lo, hi - 1)
    return a, (c + 1 if c >= a else c)


def rng(seed: int) -> torch.Generator:
    """A fresh CPU generator seeded ``seed`` (for a fixed case: ``logits(rng(7), 2, 3, 5)``)."""
    return torch.Generator().manual_seed(seed)


def ints(g: torch.Generator, high: int, *shape: int) -> torch.Tensor:
    """int64 in ``[0, high)`` (indices, labels, actions)."""
    return torch.randint(0, high, shape, generator=g, dtype=I64)


def floats(g: torch.Generator, *shape: int, scale: int = 99) -> torch.Tensor:
    """float32 with one decimal in ``[-scale/10, scale/10]``, easy to read in feedback."""
    return torch.randint(-scale, scale + 1, shape, generator=g).float() / 10


def logits(g: torch.Generator, *shape: int) -> torch.Tensor:
    """float32 logits with one decimal in ``[-4.9, 4.9]`` (no probability underflows)."""
    return floats(g, *shape, scale=49)


def log_probs(g: torch.Generator, *shape: int) -> torch.Tensor:
    """float32 log-probabilities with one decimal in ``[-4.0, -0.1]`` (each one alone, not a
    distribution: an old and a new policy's log-prob of a token)."""
    return -torch.randint(1, 41, shape, generator=g).float() / 10


def probs(g: torch.Generator, *shape: int) -> torch.Tensor:
    """float32 probabilities along the last dim (``softmax`` of one-decimal logits in [-2, 2])."""
    return (torch.randint(-20, 21, shape, generator=g).float() / 10).softmax(dim=-1)


def flags(g: torch.Generator, *shape: int, p: float = 0.5) -> torch.Tensor:
    """bool, each ``True`` with probability ``p`` (terminated, truncated, masked ...)."""
    return torch.rand(shape, generator=g) < p


def padded_labels(g: torch.Generator, V: int, B: int, L: int) -> torch.Tensor:
    """(B, L) int64 labels in ``[0, V)``, each row's tail set to :data:`PAD`: row ``b`` keeps
    between 1 and ``L`` tokens, and the last row's last position is always padding."""
    labels = ints(g, V, B, L)
    keep = torch.randint(1, L + 1, (B,), generator=g)
    labels[torch.arange(L)[None, :] >= keep[:, None]] = PAD
    labels[-1, -1] = PAD
    return labels


def values(g: torch.Generator, *shape: int) -> torch.Tensor:
    """int64 in [-99, 99] or float32 in [-9.9, 9.9], half each (what integer exercises read)."""
    x = torch.randint(-99, 100, shape, generator=g)
    return x if between(g, 0, 1) else x.float() / 10


def perms(g: torch.Generator, rows: int, n: int) -> torch.Tensor:
    """``rows`` independent random permutations of ``0..n-1``, shape ``(rows, n)``."""
    return torch.stack([torch.randperm(n, generator=g) for _ in range(rows)])


def distinct_rows(g: torch.Generator, rows: int, n: int) -> torch.Tensor:
    """(rows, n) floats with one decimal, all different within a row (no ties for argmax, topk)."""
    return (perms(g, rows, n) - n // 2).float() / 10


def logp(logits: torch.Tensor) -> torch.Tensor:
    return logits.log_softmax(-1)


def pick(x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return x.gather(-1, ids.unsqueeze(-1)).squeeze(-1)


def expanded(idx: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``idx`` repeated for every feature of ``like`` (its last dim, D): (B, K) -> (B, K, D),
    (N,) -> (N, D)."""
    return idx.unsqueeze(-1).expand(*idx.shape, like.shape[-1])


def row_ids(x: torch.Tensor) -> torch.Tensor:
    """``arange(B)[:, None]`` on ``x``'s device: row b's own number, to index ``x[row_ids(x),
    idx]`` (row b with its own ``idx[b]``, the advanced-indexing form of a gather along dim 1)."""
    return torch.arange(x.shape[0], device=x.device)[:, None]


def shuffled(x: torch.Tensor, perm: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x`` shuffled by ``perm`` along dim 1, ``perm)``: an unshuffle exercise's case."""
    index = perm if x.ndim == 2 else expanded(perm, x)
    return x.gather(1, index), perm


def from_sizes(*ranges: tuple[int, int], inputs):
    """A ``random_case(g)``: two different sizes in ``ranges[0]`` (a wrong dim cannot
    pass), one size in each further ``(lo, hi)``, then the case ``inputs(g, *sizes)``."""
    (lo, hi), *more = ranges
    return lambda g: inputs(g, *distinct(g, lo, hi), *(between(g, a, c) for a, c in more))
