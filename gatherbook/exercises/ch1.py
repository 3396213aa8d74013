"""Chapter 1 exercises, easy to hard. Hand-written cases first (values that spell their position,
``10*i + j``), then seeded random ones whose sizes differ (a wrong dim cannot pass by accident)."""
from __future__ import annotations

import itertools

import torch
from torch.overrides import TorchFunctionMode

from gatherbook.exercises.declaration import Mistake, Rule, Wrong, exercise
from gatherbook.exercises.cases import (F32, between, coded, distinct, floats,
                                        from_sizes, ints, negative, perms, row_ids,
                                        shuffled, t, values)
from gatherbook.exercises.guard import op_name


# 1. K elements per row: the rule itself
@exercise(
    edge_cases=[
        (coded(3, 5), t([[2, 0], [1, 1], [0, 2]])),
        (coded(4, 3), t([[2], [0], [1], [2]])),               # K == 1
        (coded(1, 6), t([[5, 0, 5]])),                         # B == 1
        (coded(2, 3), t([[0, 2, 1, 2, 0], [1, 1, 1, 0, 2]])),  # K > N
        (negative(2, 6), t([[3, 1], [0, 2]])),                 # float, < 0
    ],
    random_case=from_sizes((1, 6), (1, 6), inputs=lambda g, B, N, K: (
        values(g, B, N), ints(g, N, B, K))),
    seed=103,
    mistakes=[
        Mistake("wrong_dim", lambda x, idx: x.gather(0, idx)),
        Mistake("same_for_every_row", lambda x, idx: x.index_select(1, idx[0])),
        Mistake("transposed", lambda x, idx: x.T.gather(0, idx.T)),
        Mistake("index_all_rows", lambda x, idx: x[:, idx]),
        Mistake("flat_take", lambda x, idx: torch.take(x, idx)),
    ],
    right=[
        lambda x, idx: x[row_ids(x), idx],
        lambda x, idx: torch.take_along_dim(x, idx, dim=1),
        lambda x, idx: torch.stack([x[i][idx[i]] for i in range(x.shape[0])]),
    ],
    wrong=[
        Wrong(lambda x, idx: x.gather(1, idx).squeeze(), "generic.size_one", "shape"),
    ],
)
def pick_k_per_row(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``out[i][k] = x[i][idx[i][k]]``. x: (B, N); idx: (B, K) int64 in [0, N), repeats allowed,
    K may exceed N. Returns (B, K), with x's dtype."""
    return x.gather(1, idx)


# 2. one element per column: dim=0, and where the index's extra axis goes
@exercise(
    edge_cases=[
        (coded(4, 3), t([2, 0, 1])),
        (coded(3, 1), t([2])),                   # M == 1
        (coded(2, 5), t([1, 1, 0, 1, 0])),       # M > N, repeated indices
        (coded(1, 4), t([0, 0, 0, 0])),          # N == 1
        (negative(5, 3), t([1, 0, 2])),          # float, < 0
    ],
    random_case=from_sizes((1, 7), inputs=lambda g, N, M: (
        values(g, N, M), ints(g, N, M))),
    seed=102,
    mistakes=[
        Mistake("wrong_dim", lambda x, idx: x.gather(1, idx.unsqueeze(0)).squeeze(0)),
        Mistake("forgot_squeeze", lambda x, idx: x.gather(0, idx.unsqueeze(0))),
        Mistake("unsqueeze_wrong_axis", lambda x, idx: x.gather(0, idx.unsqueeze(1)).squeeze(1)),
        Mistake("whole_rows", lambda x, idx: x[idx]),
        Mistake("per_row", lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(1)),
    ],
    right=[
        lambda x, idx: x[idx, torch.arange(x.shape[1], device=x.device)],
        lambda x, idx: x.T.gather(1, idx.unsqueeze(1)).squeeze(1),
        lambda x, idx: x.take_along_dim(idx[None], dim=0)[0],
    ],
    wrong=[
        Wrong(lambda x, idx: x.gather(0, idx.unsqueeze(0)).squeeze(), "generic.size_one", "shape"),
    ],
)
def pick_per_column(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``out[j] = x[idx[j], j]``. x: (N, M); idx: (M,) int64 in [0, N). Returns (M,), x's dtype."""
    return x.gather(0, idx.unsqueeze(0)).squeeze(0)


# 3. find the bug: one element per row (the notebook's stub reads row 0 for every entry)
@exercise(
    bug="row_zero",
    edge_cases=[
        (coded(3, 5), t([2, 0, 1])),
        (coded(1, 4), t([3])),                   # B == 1: the buggy stub passes this one
        (coded(5, 3), t([2, 2, 0, 1, 2])),       # B > N, repeated indices
        (coded(4, 1), t([0, 0, 0, 0])),          # N == 1
        (negative(3, 6), t([1, 0, 2])),          # float, < 0
        (negative(2, 3, dtype=torch.float64) / 3, t([2, 0])),  # the dtype is kept
    ],
    random_case=from_sizes((1, 7), inputs=lambda g, B, N: (
        values(g, B, N), ints(g, N, B))),
    seed=101,
    mistakes=[
        Mistake("forgot_squeeze", lambda x, idx: x.gather(1, idx.unsqueeze(1))),
        Mistake("wrong_dim", lambda x, idx: x.gather(0, idx.unsqueeze(1)).squeeze(1)),
        Mistake("index_all_rows", lambda x, idx: x[:, idx]),
        Mistake("index_ndim", lambda x, idx: x.gather(1, idx)),
        Mistake("row_zero", lambda x, idx: x.gather(1, idx.unsqueeze(0)).squeeze(0)),
        Mistake("column_i", lambda x, idx: x.gather(0, idx.unsqueeze(0)).squeeze(0)),
    ],
    right=[
        lambda x, idx: x[torch.arange(x.shape[0], device=x.device), idx],
        lambda x, idx: x.take_along_dim(idx[:, None], dim=1)[:, 0],
        lambda x, idx: torch.stack([x[i, idx[i]] for i in range(len(idx))]),
    ],
    wrong=[
        Wrong(lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(), "generic.size_one", "shape",
              why="a bare squeeze drops B == 1"),
    ],
)
def pick_per_row(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``out[i] = x[i, idx[i]]``. x: (B, N); idx: (B,) int64 in [0, N). Returns (B,), x's dtype."""
    return x.gather(1, idx.unsqueeze(1)).squeeze(1)


# 4. 3D along dim=1: one time step per (sequence, feature)
@exercise(
    edge_cases=[
        (coded(2, 4, 3), t([[3, 0, 1], [2, 2, 0]])),
        (coded(1, 3, 4), t([[2, 0, 1, 2]])),                 # B == 1
        (coded(3, 2, 1), t([[1], [0], [1]])),                # D == 1
        (coded(2, 1, 3), t([[0, 0, 0], [0, 0, 0]])),         # T == 1
        (negative(2, 5, 2), t([[4, 1], [0, 3]])),            # float, < 0
    ],
    random_case=from_sizes((1, 5), (1, 5), inputs=lambda g, B, T, D: (
        values(g, B, T, D), ints(g, T, B, D))),
    seed=107,
    mistakes=[
        Mistake("feature_zero", lambda x, s: x.gather(1, s.unsqueeze(-1)).squeeze(-1)),
        Mistake("forgot_squeeze", lambda x, s: x.gather(1, s.unsqueeze(1))),
        Mistake("every_item", lambda x, s: x[:, s]),
        Mistake("last_step", lambda x, s: x[:, -1]),
        Mistake("gather_dim2", lambda x, s: x.gather(2, s.unsqueeze(1)).squeeze(1)),
    ],
    right=[
        lambda x, s: x.transpose(1, 2).gather(2, s.unsqueeze(-1)).squeeze(-1),
        lambda x, s: x[row_ids(x), s, torch.arange(x.shape[2], device=x.device)],
        lambda x, s: torch.take_along_dim(x, s[:, None], dim=1)[:, 0],
    ],
    wrong=[
        Wrong(lambda x, s: x.gather(1, s.unsqueeze(1)).squeeze(), "generic.size_one", "shape"),
    ],
)
def pick_step_per_feature(x: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
    """``out[b][d] = x[b][steps[b][d]][d]``. x: (B, T, D); steps: (B, D) int64 in [0, T).
    Returns (B, D), with x's dtype."""
    return x.gather(1, steps.unsqueeze(1)).squeeze(1)


# 5. undo a shuffle (the inverse permutation, as MAE's ids_restore)
@exercise(
    edge_cases=[
        shuffled(coded(2, 5, dtype=F32), t([[2, 0, 3, 4, 1], [4, 3, 0, 1, 2]])),
        shuffled(coded(1, 4, dtype=F32), t([[1, 2, 3, 0]])),                 # B == 1
        shuffled(coded(4, 3, dtype=F32), t([[1, 2, 0], [2, 0, 1], [0, 1, 2], [2, 1, 0]])),
        shuffled(coded(3, 1, dtype=F32), t([[0], [0], [0]])),                # N == 1
    ],
    random_case=from_sizes((1, 7), inputs=lambda g, B, N: (
        shuffled(floats(g, B, N), perms(g, B, N)))),
    seed=106,
    mistakes=[
        Mistake("perm_again", lambda s, p: s.gather(1, p)),
        Mistake("argsort_dim0", lambda s, p: s.gather(1, p.argsort(dim=0))),
        Mistake("returned_index", lambda s, p: p.argsort(dim=1)),
        Mistake("gather_dim0", lambda s, p: s.gather(0, p.argsort(dim=1))),
        Mistake("sorted_values", lambda s, p: s.sort(dim=1).values),
        Mistake("index_all_rows", lambda s, p: s[:, p.argsort(dim=1)]),
        Mistake("first_row_perm", lambda s, p: s[:, p[0].argsort()]),
    ],
    right=[
        lambda s, p: torch.empty_like(s).scatter_(1, p, s),
        lambda s, p: s.gather(1, p.sort(dim=1).indices),
        lambda s, p: torch.take_along_dim(s, p.argsort(1), dim=1),
    ],
)
def unshuffle(shuffled: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """Undo ``shuffled = x.gather(1, perm)``: return x. shuffled: (B, N) float; perm: (B, N)
    int64, each row a permutation of 0..N-1. Returns (B, N) float."""
    return shuffled.gather(1, perm.argsort(dim=1))


# 6. gather without gather: arange grids and advanced indexing
def _by_loop(input, dim, index):  # the chapter's loop specification
    out = torch.empty(index.shape, dtype=input.dtype, device=input.device)
    for pos in itertools.product(*[range(n) for n in index.shape]):
        src = list(pos)
        src[dim] = int(index[pos])
        out[pos] = input[tuple(src)]
    return out


def _aranges(shape, device, dim, index):
    """One arange per dim, shaped to broadcast against the others; ``index`` in place of ``dim``
    (none replaced when ``index`` is None)."""
    n = len(shape)
    coords = [torch.arange(s, device=device).view([-1 if k == d else 1 for k in range(n)])
              for d, s in enumerate(shape)]
    if index is not None:
        coords[dim] = index
    return coords


def _meshgrid(shape, device, dim, index):
    """Full coordinate grids of ``shape`` (``meshgrid``, "ij"); ``index`` in place of ``dim``."""
    coords = list(torch.meshgrid(*[torch.arange(n, device=device) for n in shape], indexing="ij"))
    coords[dim] = index  # the index value replaces the coordinate along dim
    return coords


def _by_offsets(input, dim, index):  # one flat offset per entry: the sum of coordinate * stride
    flat = input.contiguous()
    coords = _aranges(index.shape, index.device, dim, index)
    return flat.view(-1)[sum(c * s for c, s in zip(coords, flat.stride()))]


def _gather_random(g):
    shape = [*distinct(g, 1, 4), *[between(g, 1, 4) for _ in range(between(g, 0, 1))]]
    n = len(shape)
    dim = between(g, 0, n - 1)
    ishape = [between(g, 1, s) for s in shape]
    ishape[dim] = between(g, 1, 5)
    return values(g, *shape), dim, ints(g, shape[dim], *ishape)


class _Calls(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.names: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(op_name(func))
        return func(*args, **(kwargs or {}))


def _no_gather(fn, case):
    with _Calls() as calls:
        fn(*case)
    used = sorted(calls.names & {"gather", "take_along_dim"})
    return {"op": used[0]} if used else None


@exercise(
    edge_cases=[
        (coded(3, 4), 1, t([[3, 0], [1, 1], [2, 0]])),
        (coded(3, 4), 0, t([[2, 0, 1, 2], [0, 0, 2, 1]])),
        (coded(1, 3, 4), 2, t([[[3, 0], [1, 1]]])),                             # B == 1, 3D, dim=2
        (coded(3, 4), 1, t([[1, 1, 3, 0, 2, 2], [2, 0, 0, 0, 1, 3]])),           # fewer rows, longer
        (coded(2, 3, 4), 0, t([[[0, 1, 0, 1], [1, 1, 0, 0]]])),                  # 3D, dim=0
        (coded(2, 3, 4), 1, t([[[2, 2, 2], [0, 1, 2]], [[1, 0, 0], [2, 0, 2]]])),
        (negative(2, 3, 4), -1, t([[[3], [0], [2]], [[1], [1], [0]]])),         # dim=-1, float
    ],
    random_case=_gather_random, seed=108,
    mistakes=[
        Mistake("grid_of_input", lambda i, d, x: i[tuple(_aranges(i.shape, i.device, d, x))]),
        Mistake("index_only", lambda i, d, x: i[x]),
        Mistake("dim_zero", lambda i, d, x: i[tuple(_aranges(x.shape, x.device, 0, x))]),
        Mistake("meshgrid_of_input", lambda i, d, x: i[tuple(_meshgrid(i.shape, x.device, d, x))]),
        Mistake("negative_dim", lambda i, d, x: i[tuple(_aranges(x.shape, x.device, d, x if d >= 0 else None))]),
    ],
    right=[_by_loop, _by_offsets, lambda i, d, x: i[tuple(_aranges(x.shape, x.device, d, x))]],
    wrong=[
        Wrong(lambda i, d, x: torch.gather(i, d, x), kind="rule", why="gather itself"),
        Wrong(lambda i, d, x: i.gather(d, x), kind="rule", why="Tensor.gather"),
    ],
    rules=[Rule("no_gather", _no_gather)],
)
def gather_by_indexing(input: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """``torch.gather(input, dim, index)`` without gather or take_along_dim, for any dims and any
    dim (negative too), valid indices. Returns a tensor of index's shape, with input's dtype."""
    return input[tuple(_meshgrid(index.shape, index.device, dim, index))]
