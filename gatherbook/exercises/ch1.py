"""Chapter 1 exercises: gather on 1, 2 and 3 dimensions, sorting by a key, undoing a shuffle.

Hand-written cases first (values that say where they come from: ``x[i][j] = 10*i + j``,
``x[b][n][d] = 100*b + 10*n + d``), then seeded random ones with sizes that differ from one
another (an answer along the wrong dimension cannot pass by accident). Integer exercises are also
tried on negative floats and on float64 (the dtype must be kept).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from gatherbook.exercises._checker import Exercise, Mistake, Wrong
from gatherbook.exercises.cases import coded, distinct, between, ints, negative, perms, t, f, floats, values

F64 = torch.float64


# --------------------------------------------------------------------------------------------
# 1. one element per row

def pick_per_row(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """One element from each row: ``out[i] = x[i, idx[i]]``.

    x: (B, N); idx: (B,) int64 with values in [0, N). Returns (B,), with x's dtype.
    """
    return x.gather(1, idx.unsqueeze(1)).squeeze(1)


def _pick_per_row_random(g):
    B, N = distinct(g, 1, 7)
    return values(g, B, N), ints(g, N, B)


PICK_PER_ROW = Exercise(
    name="ch1.pick_per_row",
    title={"en": "Pick one element per row", "zh": "每行取一个元素"},
    args=("x", "idx"),
    reference=pick_per_row,
    edge_cases=[
        (coded(3, 5), t([2, 0, 1])),
        (coded(1, 4), t([3])),                   # B == 1
        (coded(5, 3), t([2, 2, 0, 1, 2])),       # B > N, repeated indices
        (coded(4, 1), t([0, 0, 0, 0])),          # N == 1
        (negative(3, 6), t([1, 0, 2])),          # float, < 0; idx < N - 1 (F.one_hot(idx))
        (negative(2, 3, dtype=F64) / 3, t([2, 0])),  # float64: the dtype is kept
    ],
    random_case=_pick_per_row_random,
    seed=101,
    mistakes=[
        Mistake("forgot_squeeze", lambda x, idx: x.gather(1, idx.unsqueeze(1)),
                en="gather's output has the index's shape, so an index of shape (B, 1) gives (B, 1): "
                   "`.squeeze(1)` the result to get (B,).",
                zh="gather 的输出形状与索引相同：索引的形状是 (B, 1)，输出就是 (B, 1)。对结果调用 `.squeeze(1)` 得到 (B,)。"),
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
                en="gather needs an index with as many dimensions as x: `idx.unsqueeze(1)` has shape "
                   "(B, 1); then `.squeeze(1)` the (B, 1) result.",
                zh="gather 要求索引的维数与 x 相同：`idx.unsqueeze(1)` 的形状是 (B, 1)；再对 (B, 1) 的结果调用 `.squeeze(1)`。"),
    ],
    right=[
        lambda x, idx: x[torch.arange(x.shape[0], device=x.device), idx],
        lambda x, idx: x.take_along_dim(idx[:, None], dim=1)[:, 0],
        lambda x, idx: torch.stack([x[i, idx[i]] for i in range(len(idx))]),
        lambda x, idx: x.gather(1, idx.view(-1, 1)).view(-1),
    ],
    wrong=[
        Wrong(lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(1).float(), "generic.dtype", "dtype",
              why="float64 (and int64) come back float32"),
        Wrong(lambda x, idx: (x * F.one_hot(idx)).sum(1), kind="exception",
              why="one-hot without num_classes: too few columns when idx < N - 1"),
        Wrong(lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(), "generic.size_one", "shape",
              why="a bare squeeze drops B == 1"),
        Wrong(lambda x, idx: x[idx, idx], kind="values", why="the index twice"),
    ],
)


# --------------------------------------------------------------------------------------------
# 2. one element per column

def pick_per_column(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """One element from each column: ``out[j] = x[idx[j], j]``.

    x: (N, M); idx: (M,) int64 with values in [0, N). Returns (M,), with x's dtype.
    """
    return x.gather(0, idx.unsqueeze(0)).squeeze(0)


def _pick_per_column_random(g):
    N, M = distinct(g, 1, 7)
    return values(g, N, M), ints(g, N, M)


PICK_PER_COLUMN = Exercise(
    name="ch1.pick_per_column",
    title={"en": "Pick one element per column", "zh": "每列取一个元素"},
    args=("x", "idx"),
    reference=pick_per_column,
    edge_cases=[
        (coded(4, 3), t([2, 0, 1])),
        (coded(3, 1), t([2])),                   # M == 1
        (coded(2, 5), t([1, 1, 0, 1, 0])),       # M > N, repeated indices
        (coded(1, 4), t([0, 0, 0, 0])),          # N == 1
        (negative(5, 3), t([1, 0, 2])),          # float, < 0; idx < N - 1 (F.one_hot(idx))
    ],
    random_case=_pick_per_column_random,
    seed=102,
    mistakes=[
        Mistake("wrong_dim", lambda x, idx: x.gather(1, idx.unsqueeze(0)).squeeze(0),
                en="with dim=1, idx[j] chooses a column of row 0: out[j] = x[0][idx[j]]. idx[j] names a "
                   "row, so gather along dim=0.",
                zh="dim=1 时 idx[j] 选的是第 0 行里的列：out[j] = x[0][idx[j]]。idx[j] 表示的是行号，应沿 dim=0 做 gather。"),
        Mistake("forgot_squeeze", lambda x, idx: x.gather(0, idx.unsqueeze(0)),
                en="an index of shape (1, M) gives a result of shape (1, M): `.squeeze(0)` it to get (M,).",
                zh="形状为 (1, M) 的索引给出形状为 (1, M) 的结果：对它调用 `.squeeze(0)` 得到 (M,)。"),
        Mistake("unsqueeze_wrong_axis", lambda x, idx: x.gather(0, idx.unsqueeze(1)).squeeze(1),
                en="`idx.unsqueeze(1)` is a column of shape (M, 1): its entry j sits in column 0, so "
                   "out[j] = x[idx[j]][0]. Make it a row, `idx.unsqueeze(0)` of shape (1, M), so that "
                   "entry j sits in column j.",
                zh="`idx.unsqueeze(1)` 是形状为 (M, 1) 的一列：它的第 j 个元素位于第 0 列，于是 out[j] = x[idx[j]][0]。"
                   "应把它变成一行 `idx.unsqueeze(0)`，形状为 (1, M)，这样第 j 个元素才位于第 j 列。"),
        Mistake("whole_rows", lambda x, idx: x[idx],
                en="`x[idx]` selects whole rows, giving (M, M); you need one element per column, row "
                   "idx[j] of column j, which is `x.gather(0, idx.unsqueeze(0))`.",
                zh="`x[idx]` 取出的是整行，得到 (M, M)；这里每列只要一个元素，即第 j 列里第 idx[j] 行的那个："
                   "`x.gather(0, idx.unsqueeze(0))`。"),
    ],
    right=[
        lambda x, idx: x[idx, torch.arange(x.shape[1], device=x.device)],
        lambda x, idx: x.T.gather(1, idx.unsqueeze(1)).squeeze(1),
        lambda x, idx: x.take_along_dim(idx[None], dim=0)[0],
    ],
    wrong=[
        Wrong(lambda x, idx: x.gather(0, idx.unsqueeze(0)).squeeze(), "generic.size_one", "shape"),
        Wrong(lambda x, idx: x.gather(0, idx.unsqueeze(0)).squeeze(0).float(), "generic.dtype", "dtype"),
    ],
)


# --------------------------------------------------------------------------------------------
# 3. K elements per row

def pick_k_per_row(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """K elements from each row, each row with its own indices: ``out[i][k] = x[i][idx[i][k]]``.

    x: (B, N); idx: (B, K) int64 with values in [0, N) (repeats allowed, K may exceed N).
    Returns (B, K), with x's dtype.
    """
    return x.gather(1, idx)


def _pick_k_per_row_random(g):
    B, N = distinct(g, 1, 6)
    K = between(g, 1, 6)
    return values(g, B, N), ints(g, N, B, K)


PICK_K_PER_ROW = Exercise(
    name="ch1.pick_k_per_row",
    title={"en": "Pick K elements per row", "zh": "每行取 K 个元素"},
    args=("x", "idx"),
    reference=pick_k_per_row,
    edge_cases=[
        (coded(3, 5), t([[2, 0], [1, 1], [0, 2]])),
        (coded(4, 3), t([[2], [0], [1], [2]])),            # K == 1
        (coded(1, 6), t([[5, 0, 5]])),                      # B == 1
        (coded(2, 3), t([[0, 2, 1, 2, 0], [1, 1, 1, 0, 2]])),  # K > N
        (negative(2, 6), t([[3, 1], [0, 2]])),              # float, < 0; idx < N - 1
    ],
    random_case=_pick_k_per_row_random,
    seed=103,
    mistakes=[
        Mistake("wrong_dim", lambda x, idx: x.gather(0, idx),
                en="with dim=0, idx[i][k] chooses a row: out[i][k] = x[idx[i][k]][k]. The indices name "
                   "columns of row i, so use dim=1.",
                zh="dim=0 时 idx[i][k] 选的是行：out[i][k] = x[idx[i][k]][k]。这些索引是第 i 行里的列号，应使用 dim=1。"),
        Mistake("same_for_every_row", lambda x, idx: x.index_select(1, idx[0]),
                en="`index_select` uses one list of columns for every row (here idx[0]); gather lets "
                   "each row i use its own idx[i]: `x.gather(1, idx)`.",
                zh="`index_select` 对所有行使用同一组列号（这里是 idx[0]）；gather 让第 i 行使用自己的 idx[i]：`x.gather(1, idx)`。"),
        Mistake("transposed", lambda x, idx: x.T.gather(0, idx.T),
                en="your result is (K, B), the transpose of the expected (B, K): gather's output has the "
                   "index's shape, so gather from x itself with idx of shape (B, K).",
                zh="你的结果是 (K, B)，正好是期望形状 (B, K) 的转置：gather 的输出形状就是索引的形状，"
                   "所以直接对 x 用形状为 (B, K) 的 idx 做 gather。"),
        Mistake("index_all_rows", lambda x, idx: x[:, idx],
                en="`x[:, idx]` pairs every row with every row's indices, giving (B, B, K); "
                   "`x.gather(1, idx)` pairs row i with idx[i] only.",
                zh="`x[:, idx]` 让每一行都与所有行的索引组合，得到 (B, B, K)；`x.gather(1, idx)` 只让第 i 行与 idx[i] 组合。"),
    ],
    right=[
        lambda x, idx: x[torch.arange(x.shape[0], device=x.device)[:, None], idx],
        lambda x, idx: torch.take_along_dim(x, idx, dim=1),
        lambda x, idx: torch.stack([x[i][idx[i]] for i in range(x.shape[0])]),
    ],
    wrong=[
        Wrong(lambda x, idx: x.gather(1, idx).squeeze(), "generic.size_one", "shape"),
        Wrong(lambda x, idx: x.gather(1, idx.sort(dim=1).values), kind="values", why="indices sorted"),
    ],
)


# --------------------------------------------------------------------------------------------
# 4. K rows of D features per batch item (an expanded index)

def select_rows(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """K whole rows (of D features) from each batch item: ``out[b][k][d] = x[b][idx[b][k]][d]``.

    x: (B, N, D); idx: (B, K) int64 with values in [0, N) (repeats allowed).
    Returns (B, K, D), with x's dtype.
    """
    D = x.shape[2]
    return x.gather(1, idx.unsqueeze(-1).expand(-1, -1, D))


def _select_rows_random(g):
    B, N = distinct(g, 1, 5)
    D = between(g, 1, 5)
    K = between(g, 1, 5)
    return values(g, B, N, D), ints(g, N, B, K)


def _repeat_then_view(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    B, K = idx.shape
    D = x.shape[2]
    return x.gather(1, idx.repeat(1, D).view(B, K, D))


SELECT_ROWS = Exercise(
    name="ch1.select_rows",
    title={"en": "Select K rows of features per batch item", "zh": "为每个样本选出 K 行特征"},
    args=("x", "idx"),
    reference=select_rows,
    edge_cases=[
        (coded(2, 4, 3), t([[2, 0], [1, 1]])),
        (coded(3, 2, 2), t([[1], [0], [1]])),        # K == 1
        (coded(1, 5, 2), t([[4, 0, 4]])),            # B == 1, repeated indices
        (coded(2, 3, 1), t([[0, 2], [1, 0]])),       # D == 1
        (negative(2, 5, 3), t([[1, 0], [2, 2]])),    # float, < 0; idx < N - 1
    ],
    random_case=_select_rows_random,
    seed=104,
    mistakes=[
        Mistake("forgot_expand", lambda x, idx: x.gather(1, idx.unsqueeze(-1)),
                en="an index of shape (B, K, 1) gives a result of shape (B, K, 1): only feature 0 of "
                   "each row. Expand the index over the features first: "
                   "`idx.unsqueeze(-1).expand(-1, -1, D)`.",
                zh="形状为 (B, K, 1) 的索引给出形状为 (B, K, 1) 的结果：每行只取到第 0 个特征。"
                   "先把索引沿特征维扩展：`idx.unsqueeze(-1).expand(-1, -1, D)`。"),
        Mistake("expand_wrong_axis", lambda x, idx: x.gather(1, idx.unsqueeze(1).expand(-1, x.shape[2], -1)),
                en="the index was expanded to (B, D, K), so the result is (B, D, K), read along the wrong "
                   "axes; put the new axis last: `idx.unsqueeze(-1).expand(-1, -1, D)` has shape (B, K, D).",
                zh="索引被扩展成了 (B, D, K)，结果也就成了 (B, D, K)，沿错误的轴读取；新轴应放在最后："
                   "`idx.unsqueeze(-1).expand(-1, -1, D)` 的形状是 (B, K, D)。"),
        Mistake("repeat_then_view", _repeat_then_view,
                en="`idx.repeat(1, D)` lays the copies out as idx[b][0], idx[b][1], ..., idx[b][0], ...; "
                   "viewing that as (B, K, D) mixes up the rows. Copy along a new last axis instead: "
                   "`idx.unsqueeze(-1).expand(-1, -1, D)` (or `idx.unsqueeze(-1).repeat(1, 1, D)`).",
                zh="`idx.repeat(1, D)` 把副本排成 idx[b][0], idx[b][1], ..., idx[b][0], ...，再 view 成 (B, K, D) "
                   "就把不同的行混在了一起。应沿新的最后一维复制：`idx.unsqueeze(-1).expand(-1, -1, D)`（或 "
                   "`idx.unsqueeze(-1).repeat(1, 1, D)`）。"),
        Mistake("gather_dim2", lambda x, idx: x.gather(2, idx.unsqueeze(-1).expand(-1, -1, x.shape[2])),
                en="with dim=2 the index picks features: out[b][k][d] = x[b][k][idx[b][k]]. idx names "
                   "rows (the N axis), so gather along dim=1.",
                zh="dim=2 时索引选的是特征：out[b][k][d] = x[b][k][idx[b][k]]。idx 表示的是行号（N 那一维），应沿 dim=1 做 gather。"),
    ],
    right=[
        lambda x, idx: x[torch.arange(x.shape[0], device=x.device)[:, None], idx],
        lambda x, idx: x.gather(1, idx.unsqueeze(-1).repeat(1, 1, x.shape[2])),
        lambda x, idx: torch.take_along_dim(x, idx[..., None], dim=1),
        lambda x, idx: torch.stack([x[b].index_select(0, idx[b]) for b in range(x.shape[0])]),
    ],
    wrong=[
        Wrong(lambda x, idx: x[:, idx[0]], kind="values", why="the first item's rows for every item"),
    ],
)


# --------------------------------------------------------------------------------------------
# 5. sort one tensor by another

def sort_by_key(values: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """Each row of ``values`` reordered so that the same row of ``keys`` would be ascending.

    values: (B, N) float; keys: (B, N) float, all different within a row.
    Returns (B, N) float: row i holds the values of row i, smallest key first.
    """
    return values.gather(1, keys.argsort(dim=1))


def _keys(g, B: int, N: int) -> torch.Tensor:
    """Keys with one decimal, all different within a row."""
    return torch.stack([torch.randperm(30, generator=g)[:N] for _ in range(B)]).float() / 10


def _sort_by_key_random(g):
    B, N = distinct(g, 1, 7)
    return floats(g, B, N), _keys(g, B, N)


SORT_BY_KEY = Exercise(
    name="ch1.sort_by_key",
    title={"en": "Sort one tensor by another", "zh": "按另一个张量排序"},
    args=("values", "keys"),
    reference=sort_by_key,
    edge_cases=[
        (f([[0.5, -1.0, 2.5, 0.0, 1.5], [3.0, 1.5, -2.0, 4.0, 0.5]]),
         f([[0.3, 0.1, 0.0, 0.4, 0.2], [0.2, 0.4, 0.1, 0.0, 0.3]])),
        (f([[4.0, 3.0, 2.0, 1.0]]), f([[1.2, 0.7, 2.5, 0.1]])),                     # B == 1
        (f([[1.0, 1.0, 2.0], [0.5, 0.5, 0.5], [-1.0, 2.0, -1.0], [3.0, 0.0, 3.0]]),
         f([[0.9, 0.2, 0.5], [0.1, 0.3, 0.2], [0.6, 0.4, 0.5], [0.0, 1.0, 2.0]])),
        (f([[2.0], [-3.0], [0.5]]), f([[0.4], [0.8], [0.1]])),                      # N == 1
    ],
    random_case=_sort_by_key_random,
    seed=105,
    mistakes=[
        Mistake("sorted_values", lambda values, keys: values.sort(dim=1).values,
                en="you sorted the values themselves; the order must come from keys: "
                   "`values.gather(1, keys.argsort(dim=1))`.",
                zh="你排序的是 values 本身；顺序应当由 keys 决定：`values.gather(1, keys.argsort(dim=1))`。"),
        Mistake("argsort_dim0", lambda values, keys: values.gather(1, keys.argsort(dim=0)),
                en="`keys.argsort(dim=0)` sorts each column, not each row; use `keys.argsort(dim=1)`.",
                zh="`keys.argsort(dim=0)` 是对每一列排序，而不是每一行；应使用 `keys.argsort(dim=1)`。"),
        Mistake("gather_dim0", lambda values, keys: values.gather(0, keys.argsort(dim=1)),
                en="the order of row i lists columns of row i, so gather along dim=1; with dim=0 each "
                   "entry picks a row: out[i][j] = values[order[i][j]][j].",
                zh="第 i 行的顺序列出的是第 i 行里的列号，所以应沿 dim=1 做 gather；dim=0 时每个元素选的是行："
                   "out[i][j] = values[order[i][j]][j]。"),
        Mistake("descending", lambda values, keys: values.gather(1, keys.argsort(dim=1, descending=True)),
                en="that is the descending order of keys; the task asks for ascending (smallest key "
                   "first), which is what `argsort` does by default.",
                zh="这是按 keys 降序排列的结果；题目要求升序（key 最小的排在最前），这正是 `argsort` 的默认行为。"),
    ],
    right=[
        lambda values, keys: values.gather(1, keys.sort(dim=1).indices),
        lambda values, keys: torch.take_along_dim(values, keys.argsort(1), dim=1),
        lambda values, keys: values[torch.arange(values.shape[0], device=values.device)[:, None], keys.argsort(1)],
    ],
    wrong=[
        Wrong(lambda values, keys: values.gather(1, keys.argsort(dim=1)).flip(1), "descending",
              why="flipped ascending order: the same as descending on every case"),
    ],
)


# --------------------------------------------------------------------------------------------
# 6. undo a shuffle (the inverse permutation, as MAE's ids_restore)

def unshuffle(shuffled: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """Undo ``shuffled = x.gather(1, perm)``: return ``x``.

    shuffled: (B, N) float; perm: (B, N) int64, each row a permutation of 0..N-1.
    Returns x, (B, N) float, such that ``x.gather(1, perm)`` equals ``shuffled``.
    """
    return shuffled.gather(1, perm.argsort(dim=1))


def _unshuffle_case(x: torch.Tensor, perm: torch.Tensor):
    return x.gather(1, perm), perm


def _unshuffle_random(g):
    B, N = distinct(g, 1, 7)
    return _unshuffle_case(floats(g, B, N), perms(g, B, N))


def _scatter_back(shuffled, perm):
    return torch.empty_like(shuffled).scatter_(1, perm, shuffled)


UNSHUFFLE = Exercise(
    name="ch1.unshuffle",
    title={"en": "Undo a shuffle", "zh": "还原打乱的顺序"},
    args=("shuffled", "perm"),
    reference=unshuffle,
    edge_cases=[
        _unshuffle_case(coded(2, 5, dtype=torch.float32), t([[2, 0, 3, 4, 1], [4, 3, 0, 1, 2]])),
        _unshuffle_case(coded(1, 4, dtype=torch.float32), t([[1, 2, 3, 0]])),   # B == 1
        _unshuffle_case(coded(4, 3, dtype=torch.float32),                         # B > N
                        t([[1, 2, 0], [2, 0, 1], [0, 1, 2], [2, 1, 0]])),
        _unshuffle_case(coded(3, 1, dtype=torch.float32), t([[0], [0], [0]])),   # N == 1
    ],
    random_case=_unshuffle_random,
    seed=106,
    mistakes=[
        Mistake("perm_again", lambda shuffled, perm: shuffled.gather(1, perm),
                en="your answer applies the shuffle a second time (which is what gathering with perm "
                   "again does); undoing it takes the inverse permutation, `perm.argsort(dim=1)` (MAE's "
                   "ids_restore): `shuffled.gather(1, perm.argsort(dim=1))`.",
                zh="你的结果把打乱又做了一次（再用 perm 做 gather 就是这样）；要还原，需要逆置换 `perm.argsort(dim=1)`"
                   "（即 MAE 里的 ids_restore）：`shuffled.gather(1, perm.argsort(dim=1))`。"),
        Mistake("argsort_dim0", lambda shuffled, perm: shuffled.gather(1, perm.argsort(dim=0)),
                en="`perm.argsort(dim=0)` inverts along columns and mixes the rows' permutations; each "
                   "row has its own permutation, so use `perm.argsort(dim=1)`.",
                zh="`perm.argsort(dim=0)` 沿列求逆，把不同行的置换混在了一起；每行有自己的置换，应使用 `perm.argsort(dim=1)`。"),
        Mistake("returned_index", lambda shuffled, perm: perm.argsort(dim=1),
                en="you returned the inverse permutation itself (int64 indices); use it as the index: "
                   "`shuffled.gather(1, perm.argsort(dim=1))`.",
                zh="你返回的是逆置换本身（int64 索引）；应把它当作索引使用：`shuffled.gather(1, perm.argsort(dim=1))`。"),
        Mistake("gather_dim0", lambda shuffled, perm: shuffled.gather(0, perm.argsort(dim=1)),
                en="perm.argsort(dim=1) holds positions within each row, so gather along dim=1; with "
                   "dim=0 each entry picks a row.",
                zh="perm.argsort(dim=1) 存的是每行内部的位置，所以应沿 dim=1 做 gather；dim=0 时每个元素选的是行。"),
    ],
    right=[
        _scatter_back,
        lambda shuffled, perm: shuffled.gather(1, perm.sort(dim=1).indices),
        lambda shuffled, perm: torch.take_along_dim(shuffled, perm.argsort(1), dim=1),
    ],
    wrong=[
        Wrong(lambda shuffled, perm: shuffled.scatter(1, perm.argsort(1), shuffled), "perm_again",
              why="scatter with the inverse: the shuffle applied again"),
    ],
)


EXERCISES = [PICK_PER_ROW, PICK_PER_COLUMN, PICK_K_PER_ROW, SELECT_ROWS, SORT_BY_KEY, UNSHUFFLE]
