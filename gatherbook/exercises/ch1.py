"""Chapter 1 exercises, easy to hard. Hand-written cases first (values that spell their position,
``10*i + j``), then seeded random ones whose sizes differ (a wrong dim cannot pass by accident)."""
from __future__ import annotations

import itertools

import torch
from torch.overrides import TorchFunctionMode

from gatherbook.exercises._checker import Mistake, Rule, Wrong, exercise
from gatherbook.exercises.cases import (F32, between, coded, distinct, floats,
                                        from_sizes, ints, negative, perms, row_ids,
                                        shuffled, t, values)
from gatherbook.puzzles._guard import op_name


# 1. K elements per row: the rule itself
@exercise(title={"en": "Pick K elements per row", "zh": "每行取 K 个元素"},
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
        Mistake("wrong_dim", lambda x, idx: x.gather(0, idx),
                en="with dim=0, idx[i][k] chooses a row: out[i][k] = x[idx[i][k]][k]. The indices are "
                   "columns of row i, so use dim=1.",
                zh="dim=0 时 idx[i][k] 选的是行：out[i][k] = x[idx[i][k]][k]。这些索引是第 i 行里的列号，应使用 dim=1。"),
        Mistake("same_for_every_row", lambda x, idx: x.index_select(1, idx[0]),
                en="`index_select` uses one list of columns (here idx[0]) for every row; gather lets row i "
                   "use its own idx[i]: `x.gather(1, idx)`.",
                zh="`index_select` 对所有行用同一组列号（这里是 idx[0]）；gather 让第 i 行用自己的 idx[i]：`x.gather(1, idx)`。"),
        Mistake("transposed", lambda x, idx: x.T.gather(0, idx.T),
                en="your result is (K, B), the transpose of (B, K): gather's output has the index's shape, "
                   "so gather from x itself with idx as it is.",
                zh="你的结果是 (K, B)，是 (B, K) 的转置：gather 的输出形状就是索引的形状，直接用原样的 idx 对 x 做 gather。"),
        Mistake("index_all_rows", lambda x, idx: x[:, idx],
                en="`x[:, idx]` pairs every row with every row's indices, giving (B, B, K); "
                   "`x.gather(1, idx)` pairs row i with idx[i] only.",
                zh="`x[:, idx]` 让每一行都与所有行的索引组合，得到 (B, B, K)；`x.gather(1, idx)` 只让第 i 行与 idx[i] 组合。"),
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
@exercise(title={"en": "Pick one element per column", "zh": "每列取一个元素"},
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
        Mistake("wrong_dim", lambda x, idx: x.gather(1, idx.unsqueeze(0)).squeeze(0),
                en="with dim=1, idx[j] chooses a column of row 0: out[j] = x[0][idx[j]]. idx[j] names a "
                   "row, so gather along dim=0.",
                zh="dim=1 时 idx[j] 选的是第 0 行里的列：out[j] = x[0][idx[j]]。idx[j] 是行号，应沿 dim=0 做 gather。"),
        Mistake("forgot_squeeze", lambda x, idx: x.gather(0, idx.unsqueeze(0)),
                en="an index of shape (1, M) gives a result of shape (1, M): `.squeeze(0)` it to get (M,).",
                zh="形状为 (1, M) 的索引给出形状为 (1, M) 的结果：对它调用 `.squeeze(0)` 得到 (M,)。"),
        Mistake("unsqueeze_wrong_axis", lambda x, idx: x.gather(0, idx.unsqueeze(1)).squeeze(1),
                en="`idx.unsqueeze(1)` is a column (M, 1): entry j sits in column 0, so out[j] = "
                   "x[idx[j]][0]. Make it a row, `idx.unsqueeze(0)` (1, M), so entry j sits in column j.",
                zh="`idx.unsqueeze(1)` 是一列 (M, 1)：第 j 个元素位于第 0 列，于是 out[j] = x[idx[j]][0]。"
                   "应把它变成一行 `idx.unsqueeze(0)`，形状 (1, M)，第 j 个元素才位于第 j 列。"),
        Mistake("whole_rows", lambda x, idx: x[idx],
                en="`x[idx]` selects whole rows, giving (M, M); you need row idx[j] of column j only: "
                   "`x.gather(0, idx.unsqueeze(0))`.",
                zh="`x[idx]` 取出的是整行，得到 (M, M)；这里第 j 列只要第 idx[j] 行那一个元素：`x.gather(0, idx.unsqueeze(0))`。"),
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
    bug="row_zero",  # the stub is this mistake
    title={"en": "Find the bug: one element per row", "zh": "找出错误：每行取一个元素"},
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
        Mistake("forgot_squeeze", lambda x, idx: x.gather(1, idx.unsqueeze(1)),
                en="gather's output has the index's shape: an index of shape (B, 1) gives (B, 1). "
                   "`.squeeze(1)` the result to get (B,).",
                zh="gather 的输出形状与索引相同：形状为 (B, 1) 的索引给出 (B, 1)。对结果调用 `.squeeze(1)` 得到 (B,)。"),
        Mistake("wrong_dim", lambda x, idx: x.gather(0, idx.unsqueeze(1)).squeeze(1),
                en="with dim=0, idx[i] chooses a row, not a column: out[i] = x[idx[i]][0]. To choose a "
                   "column within row i, gather along dim=1.",
                zh="dim=0 时 idx[i] 选的是行而不是列：out[i] = x[idx[i]][0]。要在第 i 行里选列，应沿 dim=1 做 gather。"),
        Mistake("index_all_rows", lambda x, idx: x[:, idx],
                en="`x[:, idx]` takes every listed column from every row, giving (B, B); to pair row i "
                   "with idx[i] only, use `x.gather(1, idx.unsqueeze(1))` (or `x[torch.arange(B), idx]`).",
                zh="`x[:, idx]` 会从每一行取出 idx 列出的所有列，得到 (B, B)；要让第 i 行只配 idx[i]，用 "
                   "`x.gather(1, idx.unsqueeze(1))`（或 `x[torch.arange(B), idx]`）。"),
        Mistake("index_ndim", lambda x, idx: x.gather(1, idx),
                en="gather needs an index with as many dims as x: `idx.unsqueeze(1)` has shape (B, 1).",
                zh="gather 要求索引的维数与 x 相同：`idx.unsqueeze(1)` 的形状是 (B, 1)。"),
        Mistake("row_zero", lambda x, idx: x.gather(1, idx.unsqueeze(0)).squeeze(0),
                en="`idx.unsqueeze(0)` is one row of shape (1, B): a smaller index, so gather reads row 0 "
                   "only, out[i] = x[0][idx[i]], silently. Make it a column, `idx.unsqueeze(1)` of shape "
                   "(B, 1), and `.squeeze(1)` the result.",
                zh="`idx.unsqueeze(0)` 是形状为 (1, B) 的一行：索引比输入小，gather 只读第 0 行，"
                   "out[i] = x[0][idx[i]]，而且不报错。应把它变成一列 `idx.unsqueeze(1)`（形状 (B, 1)），再对结果 `.squeeze(1)`。"),
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
    title={"en": "One time step per feature, in 3D", "zh": "三维：每个特征取一个时间步"},
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
        Mistake("feature_zero", lambda x, s: x.gather(1, s.unsqueeze(-1)).squeeze(-1),
                en="`steps.unsqueeze(-1)` has shape (B, D, 1): entry d sits in column 0, so you read "
                   "feature 0 at every step, silently. The new axis goes along dim: `steps.unsqueeze(1)` "
                   "is (B, 1, D), entry d in column d.",
                zh="`steps.unsqueeze(-1)` 的形状是 (B, D, 1)：第 d 个元素位于第 0 列，于是每个时间步读的都是特征 0，"
                   "而且不报错。新轴应放在 dim 上：`steps.unsqueeze(1)` 的形状是 (B, 1, D)，第 d 个元素位于第 d 列。"),
        Mistake("forgot_squeeze", lambda x, s: x.gather(1, s.unsqueeze(1)),
                en="an index of shape (B, 1, D) gives (B, 1, D): `.squeeze(1)` it to get (B, D).",
                zh="形状为 (B, 1, D) 的索引给出 (B, 1, D)：对结果调用 `.squeeze(1)` 得到 (B, D)。"),
        Mistake("every_item", lambda x, s: x[:, s],
                en="`x[:, steps]` pairs every sequence with every sequence's steps, giving (B, B, D, D); "
                   "gather pairs sequence b with steps[b] and feature d with steps[b][d] only.",
                zh="`x[:, steps]` 让每个序列都与所有序列的时间步组合，得到 (B, B, D, D)；"
                   "gather 只让序列 b 配 steps[b]，特征 d 配 steps[b][d]。"),
        Mistake("last_step", lambda x, s: x[:, -1],
                en="that is the last step of every feature; read the step that steps[b][d] names.",
                zh="这是每个特征的最后一个时间步；应读取 steps[b][d] 指定的那个时间步。"),
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
@exercise(title={"en": "Undo a shuffle", "zh": "还原打乱的顺序"},
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
        Mistake("perm_again", lambda s, p: s.gather(1, p),
                en="gathering with perm again applies the shuffle a second time; undoing it takes the "
                   "inverse permutation, `perm.argsort(dim=1)` (MAE's ids_restore).",
                zh="再用 perm 做 gather 等于把打乱又做了一次；要还原，需要逆置换 `perm.argsort(dim=1)`（即 MAE 的 ids_restore）。"),
        Mistake("argsort_dim0", lambda s, p: s.gather(1, p.argsort(dim=0)),
                en="`perm.argsort(dim=0)` inverts along columns and mixes the rows' permutations; each "
                   "row has its own, so use `perm.argsort(dim=1)`.",
                zh="`perm.argsort(dim=0)` 沿列求逆，把不同行的置换混在了一起；每行有自己的置换，应使用 `perm.argsort(dim=1)`。"),
        Mistake("returned_index", lambda s, p: p.argsort(dim=1),
                en="you returned the inverse permutation itself (int64 indices); use it as the index: "
                   "`shuffled.gather(1, perm.argsort(dim=1))`.",
                zh="你返回的是逆置换本身（int64 索引）；应把它当作索引：`shuffled.gather(1, perm.argsort(dim=1))`。"),
        Mistake("gather_dim0", lambda s, p: s.gather(0, p.argsort(dim=1)),
                en="perm.argsort(dim=1) holds positions within each row, so gather along dim=1; with "
                   "dim=0 each entry picks a row.",
                zh="perm.argsort(dim=1) 存的是每行内部的位置，应沿 dim=1 做 gather；dim=0 时每个元素选的是行。"),
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
    """One arange per dim, shaped to broadcast against the others; ``index`` in place of ``dim``."""
    n = len(shape)
    coords = [torch.arange(s, device=device).view([-1 if k == d else 1 for k in range(n)])
              for d, s in enumerate(shape)]
    coords[dim] = index
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


@exercise(title={"en": "Write gather without gather", "zh": "不用 gather 写出 gather"},
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
        Mistake("grid_of_input", lambda i, d, x: i[tuple(_aranges(i.shape, i.device, d, x))],
                en="the grids follow the input's shape; gather visits the positions of the index, so "
                   "build them from `index.shape` (the output has the index's shape).",
                zh="坐标网格按输入的形状生成；gather 遍历的是索引的位置，应按 `index.shape` 生成（输出的形状就是索引的形状）。"),
        Mistake("index_only", lambda i, d, x: i[x],
                en="`input[index]` reads index values along dim 0 and keeps input's other dims whole; "
                   "each entry needs a full coordinate: the index along `dim`, an arange along the others.",
                zh="`input[index]` 把索引值当作第 0 维的坐标，其余维整个保留；每个元素都需要完整的坐标：`dim` 上用索引，其余维用 arange。"),
        Mistake("dim_zero", lambda i, d, x: i[tuple(_aranges(x.shape, x.device, 0, x))],
                en="the index replaced the coordinate along dim 0; it replaces the one along `dim`.",
                zh="你让索引替换了第 0 维的坐标；它应当替换的是 `dim` 那一维的坐标。"),
    ],
    right=[_by_loop, _by_offsets, lambda i, d, x: i[tuple(_aranges(x.shape, x.device, d, x))]],
    wrong=[
        Wrong(lambda i, d, x: torch.gather(i, d, x), kind="rule", why="gather itself"),
        Wrong(lambda i, d, x: i.gather(d, x), kind="rule", why="Tensor.gather"),
    ],
    rules=[Rule("no_gather", _no_gather,
                en="this exercise forbids `{op}`: your values are right, but build the coordinates "
                   "with `torch.arange` and index `input` with them.",
                zh="这里不能用 `{op}` 代劳：请用 `torch.arange` 构造坐标，再用它们对 `input` 做索引。")],
)
def gather_by_indexing(input: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """``torch.gather(input, dim, index)`` without gather or take_along_dim, for any dims and any
    dim (negative too), valid indices. Returns a tensor of index's shape, with input's dtype."""
    coords = list(torch.meshgrid(*[torch.arange(n, device=index.device) for n in index.shape],
                                 indexing="ij"))
    coords[dim] = index  # the index value replaces the coordinate along dim
    return input[tuple(coords)]
