"""Chapter 1 exercises: gather on 1, 2 and 3 dimensions, sorting by a key, undoing a shuffle.

Each exercise declares its reference solution, hand-written edge cases (small, with values that
say where they come from: ``x[i][j] = 10*i + j``, ``x[b][n][d] = 100*b + 10*n + d``) checked
first, seeded random cases with sizes that differ from one another (so an answer along the wrong
dimension cannot pass by accident), and the mistakes readers make, each with a hint.
"""
from __future__ import annotations

import torch

from gatherbook.exercises._checker import Exercise, Mistake
from gatherbook.exercises._random import _distinct, _int

# --------------------------------------------------------------------------------------------
# small helpers for the cases

I64 = torch.int64


def _t(values, dtype=I64) -> torch.Tensor:
    return torch.tensor(values, dtype=dtype)


def _coded(*shape: int, dtype=I64) -> torch.Tensor:
    """A tensor whose values spell their own position: ``10*i + j`` (2D), ``100*b + 10*n + d`` (3D)."""
    weights = [10 ** (len(shape) - 1 - k) for k in range(len(shape))]
    grids = torch.meshgrid(*[torch.arange(s) for s in shape], indexing="ij")
    return sum(w * g for w, g in zip(weights, grids)).to(dtype)


def _randint(g: torch.Generator, *shape: int, high: int = 100) -> torch.Tensor:
    return torch.randint(0, high, shape, generator=g, dtype=I64)


def _randfloat(g: torch.Generator, *shape: int) -> torch.Tensor:
    """Floats with one decimal in [-9.9, 9.9], easy to read in feedback."""
    return torch.randint(-99, 100, shape, generator=g).float() / 10


def _perms(g: torch.Generator, rows: int, n: int) -> torch.Tensor:
    """``rows`` independent random permutations of ``0..n-1``, shape ``(rows, n)``."""
    return torch.stack([torch.randperm(n, generator=g) for _ in range(rows)])


# --------------------------------------------------------------------------------------------
# 1. one element per row

def pick_per_row(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """One element from each row: ``out[i] = x[i, idx[i]]``.

    x: (B, N); idx: (B,) int64 with values in [0, N). Returns (B,), with x's dtype.
    """
    return x.gather(1, idx.unsqueeze(1)).squeeze(1)


def _pick_per_row_random(g: torch.Generator):
    B, N = _distinct(g, 1, 7)
    return _randint(g, B, N), _randint(g, B, high=N)


PICK_PER_ROW = Exercise(
    name="ch1.pick_per_row",
    args=("x", "idx"),
    reference=pick_per_row,
    edge_cases=[
        (_coded(3, 5), _t([2, 0, 1])),
        (_coded(1, 4), _t([3])),                   # B == 1
        (_coded(5, 3), _t([2, 2, 0, 1, 2])),       # B > N, repeated indices
        (_coded(4, 1), _t([0, 0, 0, 0])),          # N == 1
    ],
    random_case=_pick_per_row_random,
    seed=101,
    mistakes=[
        Mistake("forgot_squeeze", lambda x, idx: x.gather(1, idx.unsqueeze(1))),
        Mistake("wrong_dim", lambda x, idx: x.gather(0, idx.unsqueeze(1)).squeeze(1)),
        Mistake("index_all_rows", lambda x, idx: x[:, idx]),
        Mistake("index_ndim", lambda x, idx: x.gather(1, idx)),
    ],
)


# --------------------------------------------------------------------------------------------
# 2. one element per column

def pick_per_column(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """One element from each column: ``out[j] = x[idx[j], j]``.

    x: (N, M); idx: (M,) int64 with values in [0, N). Returns (M,), with x's dtype.
    """
    return x.gather(0, idx.unsqueeze(0)).squeeze(0)


def _pick_per_column_random(g: torch.Generator):
    N, M = _distinct(g, 1, 7)
    return _randint(g, N, M), _randint(g, M, high=N)


PICK_PER_COLUMN = Exercise(
    name="ch1.pick_per_column",
    args=("x", "idx"),
    reference=pick_per_column,
    edge_cases=[
        (_coded(4, 3), _t([2, 0, 1])),
        (_coded(3, 1), _t([2])),                   # M == 1
        (_coded(2, 5), _t([1, 1, 0, 1, 0])),       # M > N, repeated indices
        (_coded(1, 4), _t([0, 0, 0, 0])),          # N == 1
    ],
    random_case=_pick_per_column_random,
    seed=102,
    mistakes=[
        Mistake("wrong_dim", lambda x, idx: x.gather(1, idx.unsqueeze(0)).squeeze(0)),
        Mistake("forgot_squeeze", lambda x, idx: x.gather(0, idx.unsqueeze(0))),
        Mistake("unsqueeze_wrong_axis", lambda x, idx: x.gather(0, idx.unsqueeze(1)).squeeze(1)),
        Mistake("whole_rows", lambda x, idx: x[idx]),
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


def _pick_k_per_row_random(g: torch.Generator):
    B, N = _distinct(g, 1, 6)
    K = _int(g, 1, 6)
    return _randint(g, B, N), _randint(g, B, K, high=N)


PICK_K_PER_ROW = Exercise(
    name="ch1.pick_k_per_row",
    args=("x", "idx"),
    reference=pick_k_per_row,
    edge_cases=[
        (_coded(3, 5), _t([[2, 0], [1, 1], [0, 2]])),
        (_coded(4, 3), _t([[2], [0], [1], [2]])),            # K == 1
        (_coded(1, 6), _t([[5, 0, 5]])),                      # B == 1
        (_coded(2, 3), _t([[0, 2, 1, 2, 0], [1, 1, 1, 0, 2]])),  # K > N
    ],
    random_case=_pick_k_per_row_random,
    seed=103,
    mistakes=[
        Mistake("wrong_dim", lambda x, idx: x.gather(0, idx)),
        Mistake("same_for_every_row", lambda x, idx: x.index_select(1, idx[0])),
        Mistake("transposed", lambda x, idx: x.T.gather(0, idx.T)),
        Mistake("index_all_rows", lambda x, idx: x[:, idx]),
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


def _select_rows_random(g: torch.Generator):
    B, N = _distinct(g, 1, 5)
    D = _int(g, 1, 5)
    K = _int(g, 1, 5)
    return _randint(g, B, N, D, high=1000), _randint(g, B, K, high=N)


def _repeat_then_view(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    B, K = idx.shape
    D = x.shape[2]
    return x.gather(1, idx.repeat(1, D).view(B, K, D))


SELECT_ROWS = Exercise(
    name="ch1.select_rows",
    args=("x", "idx"),
    reference=select_rows,
    edge_cases=[
        (_coded(2, 4, 3), _t([[2, 0], [1, 1]])),
        (_coded(3, 2, 2), _t([[1], [0], [1]])),        # K == 1
        (_coded(1, 5, 2), _t([[4, 0, 4]])),            # B == 1, repeated indices
        (_coded(2, 3, 1), _t([[0, 2], [1, 0]])),       # D == 1
    ],
    random_case=_select_rows_random,
    seed=104,
    mistakes=[
        Mistake("forgot_expand", lambda x, idx: x.gather(1, idx.unsqueeze(-1))),
        Mistake("expand_wrong_axis", lambda x, idx: x.gather(1, idx.unsqueeze(1).expand(-1, x.shape[2], -1))),
        Mistake("repeat_then_view", _repeat_then_view),
        Mistake("gather_dim2", lambda x, idx: x.gather(2, idx.unsqueeze(-1).expand(-1, -1, x.shape[2]))),
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


def _keys(g: torch.Generator, B: int, N: int) -> torch.Tensor:
    """Keys with one decimal, all different within a row."""
    return torch.stack([torch.randperm(30, generator=g)[:N] for _ in range(B)]).float() / 10


def _sort_by_key_random(g: torch.Generator):
    B, N = _distinct(g, 1, 7)
    return _randfloat(g, B, N), _keys(g, B, N)


SORT_BY_KEY = Exercise(
    name="ch1.sort_by_key",
    args=("values", "keys"),
    reference=sort_by_key,
    edge_cases=[
        (_t([[0.5, -1.0, 2.5, 0.0, 1.5], [3.0, 1.5, -2.0, 4.0, 0.5]], torch.float32),
         _t([[0.3, 0.1, 0.0, 0.4, 0.2], [0.2, 0.4, 0.1, 0.0, 0.3]], torch.float32)),
        (_t([[4.0, 3.0, 2.0, 1.0]], torch.float32),                      # B == 1
         _t([[1.2, 0.7, 2.5, 0.1]], torch.float32)),
        (_t([[1.0, 1.0, 2.0], [0.5, 0.5, 0.5], [-1.0, 2.0, -1.0], [3.0, 0.0, 3.0]], torch.float32),
         _t([[0.9, 0.2, 0.5], [0.1, 0.3, 0.2], [0.6, 0.4, 0.5], [0.0, 1.0, 2.0]], torch.float32)),
        (_t([[2.0], [-3.0], [0.5]], torch.float32), _t([[0.4], [0.8], [0.1]], torch.float32)),  # N == 1
    ],
    random_case=_sort_by_key_random,
    seed=105,
    mistakes=[
        Mistake("sorted_values", lambda values, keys: values.sort(dim=1).values),
        Mistake("argsort_dim0", lambda values, keys: values.gather(1, keys.argsort(dim=0))),
        Mistake("gather_dim0", lambda values, keys: values.gather(0, keys.argsort(dim=1))),
        Mistake("descending", lambda values, keys: values.gather(1, keys.argsort(dim=1, descending=True))),
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


def _unshuffle_random(g: torch.Generator):
    B, N = _distinct(g, 1, 7)
    return _unshuffle_case(_randfloat(g, B, N), _perms(g, B, N))


UNSHUFFLE = Exercise(
    name="ch1.unshuffle",
    args=("shuffled", "perm"),
    reference=unshuffle,
    edge_cases=[
        _unshuffle_case(_coded(2, 5, dtype=torch.float32), _t([[2, 0, 3, 4, 1], [4, 3, 0, 1, 2]])),
        _unshuffle_case(_coded(1, 4, dtype=torch.float32), _t([[1, 2, 3, 0]])),   # B == 1
        _unshuffle_case(_coded(4, 3, dtype=torch.float32),                         # B > N
                        _t([[1, 2, 0], [2, 0, 1], [0, 1, 2], [2, 1, 0]])),
        _unshuffle_case(_coded(3, 1, dtype=torch.float32), _t([[0], [0], [0]])),   # N == 1
    ],
    random_case=_unshuffle_random,
    seed=106,
    mistakes=[
        Mistake("perm_again", lambda shuffled, perm: shuffled.gather(1, perm)),
        Mistake("argsort_dim0", lambda shuffled, perm: shuffled.gather(1, perm.argsort(dim=0))),
        Mistake("returned_index", lambda shuffled, perm: perm.argsort(dim=1)),
        Mistake("gather_dim0", lambda shuffled, perm: shuffled.gather(0, perm.argsort(dim=1))),
    ],
)


EXERCISES = [PICK_PER_ROW, PICK_PER_COLUMN, PICK_K_PER_ROW, SELECT_ROWS, SORT_BY_KEY, UNSHUFFLE]


#: Titles (the exercises' headings in the book) and hints, per language and exercise.
MESSAGES = {
    "en": {
        "pick_per_row": {
            "title": "Pick one element per row",
            "forgot_squeeze": ("gather's output has the index's shape, so an index of shape (B, 1) "
                               "gives (B, 1): `.squeeze(1)` the result to get (B,)."),
            "wrong_dim": ("with dim=0, idx[i] chooses a row, not a column: out[i] = x[idx[i]][0]. To "
                          "choose a column within row i, gather along dim=1."),
            "index_all_rows": ("`x[:, idx]` takes every listed column from every row, giving (B, B); "
                               "to pair row i with idx[i] only, use `x.gather(1, idx.unsqueeze(1))` "
                               "(or `x[torch.arange(B), idx]`)."),
            "index_ndim": ("gather needs an index with as many dimensions as x: `idx.unsqueeze(1)` "
                           "has shape (B, 1); then `.squeeze(1)` the (B, 1) result."),
        },
        "pick_per_column": {
            "title": "Pick one element per column",
            "wrong_dim": ("with dim=1, idx[j] chooses a column of row 0: out[j] = x[0][idx[j]]. "
                          "idx[j] names a row, so gather along dim=0."),
            "forgot_squeeze": ("an index of shape (1, M) gives a result of shape (1, M): "
                               "`.squeeze(0)` it to get (M,)."),
            "unsqueeze_wrong_axis": ("`idx.unsqueeze(1)` is a column of shape (M, 1): its entry j "
                                     "sits in column 0, so out[j] = x[idx[j]][0]. Make it a row, "
                                     "`idx.unsqueeze(0)` of shape (1, M), so that entry j sits in "
                                     "column j."),
            "whole_rows": ("`x[idx]` selects whole rows, giving (M, M); you need one element per "
                           "column, row idx[j] of column j, which is `x.gather(0, "
                           "idx.unsqueeze(0))`."),
        },
        "pick_k_per_row": {
            "title": "Pick K elements per row",
            "wrong_dim": ("with dim=0, idx[i][k] chooses a row: out[i][k] = x[idx[i][k]][k]. The "
                          "indices name columns of row i, so use dim=1."),
            "same_for_every_row": ("`index_select` uses one list of columns for every row (here "
                                   "idx[0]); gather lets each row i use its own idx[i]: `x.gather(1, "
                                   "idx)`."),
            "transposed": ("your result is (K, B), the transpose of the expected (B, K): gather's "
                           "output has the index's shape, so gather from x itself with idx of shape "
                           "(B, K)."),
            "index_all_rows": ("`x[:, idx]` pairs every row with every row's indices, giving (B, B, "
                               "K); `x.gather(1, idx)` pairs row i with idx[i] only."),
        },
        "select_rows": {
            "title": "Select K rows of features per batch item",
            "forgot_expand": ("an index of shape (B, K, 1) gives a result of shape (B, K, 1): only "
                              "feature 0 of each row. Expand the index over the features first: "
                              "`idx.unsqueeze(-1).expand(-1, -1, D)`."),
            "expand_wrong_axis": ("the index was expanded to (B, D, K), so the result is (B, D, K), "
                                  "read along the wrong axes; put the new axis last: "
                                  "`idx.unsqueeze(-1).expand(-1, -1, D)` has shape (B, K, D)."),
            "repeat_then_view": ("`idx.repeat(1, D)` lays the copies out as idx[b][0], idx[b][1], "
                                 "..., idx[b][0], ...; viewing that as (B, K, D) mixes up the rows. "
                                 "Copy along a new last axis instead: `idx.unsqueeze(-1).expand(-1, "
                                 "-1, D)` (or `idx.unsqueeze(-1).repeat(1, 1, D)`)."),
            "gather_dim2": ("with dim=2 the index picks features: out[b][k][d] = x[b][k][idx[b][k]]. "
                            "idx names rows (the N axis), so gather along dim=1."),
        },
        "sort_by_key": {
            "title": "Sort one tensor by another",
            "sorted_values": ("you sorted the values themselves; the order must come from keys: "
                              "`values.gather(1, keys.argsort(dim=1))`."),
            "argsort_dim0": ("`keys.argsort(dim=0)` sorts each column, not each row; use "
                             "`keys.argsort(dim=1)`."),
            "gather_dim0": ("the order of row i lists columns of row i, so gather along dim=1; with "
                            "dim=0 each entry picks a row: out[i][j] = values[order[i][j]][j]."),
            "descending": ("that is the descending order of keys; the task asks for ascending "
                           "(smallest key first), which is what `argsort` does by default."),
        },
        "unshuffle": {
            "title": "Undo a shuffle",
            "perm_again": ("your answer applies the shuffle a second time (which is what gathering "
                           "with perm again does); undoing it takes the inverse permutation, "
                           "`perm.argsort(dim=1)` (MAE's ids_restore): `shuffled.gather(1, "
                           "perm.argsort(dim=1))`."),
            "argsort_dim0": ("`perm.argsort(dim=0)` inverts along columns and mixes the rows' "
                             "permutations; each row has its own permutation, so use "
                             "`perm.argsort(dim=1)`."),
            "returned_index": ("you returned the inverse permutation itself (int64 indices); use it "
                               "as the index: `shuffled.gather(1, perm.argsort(dim=1))`."),
            "gather_dim0": ("perm.argsort(dim=1) holds positions within each row, so gather along "
                            "dim=1; with dim=0 each entry picks a row."),
        },
    },
    "zh": {
        "pick_per_row": {
            "title": "每行取一个元素",
            "forgot_squeeze": ("gather 的输出形状与索引相同：索引的形状是 (B, 1)，输出就是 (B, 1)。对结果调用 `.squeeze(1)` 得到 "
                               "(B,)。"),
            "wrong_dim": ("dim=0 时 idx[i] 选的是行而不是列：out[i] = x[idx[i]][0]。要在第 i 行里选列，应沿 dim=1 做 "
                          "gather。"),
            "index_all_rows": ("`x[:, idx]` 会从每一行取出 idx 列出的所有列，得到 (B, B)；要让第 i 行只配 idx[i]，用 "
                               "`x.gather(1, idx.unsqueeze(1))`（或 `x[torch.arange(B), idx]`）。"),
            "index_ndim": ("gather 要求索引的维数与 x 相同：`idx.unsqueeze(1)` 的形状是 (B, 1)；再对 (B, 1) 的结果调用 "
                           "`.squeeze(1)`。"),
        },
        "pick_per_column": {
            "title": "每列取一个元素",
            "wrong_dim": ("dim=1 时 idx[j] 选的是第 0 行里的列：out[j] = x[0][idx[j]]。idx[j] 表示的是行号，应沿 dim=0 做 "
                          "gather。"),
            "forgot_squeeze": "形状为 (1, M) 的索引给出形状为 (1, M) 的结果：对它调用 `.squeeze(0)` 得到 (M,)。",
            "unsqueeze_wrong_axis": ("`idx.unsqueeze(1)` 是形状为 (M, 1) 的一列：它的第 j 个元素位于第 0 列，于是 out[j] "
                                     "= x[idx[j]][0]。应把它变成一行 `idx.unsqueeze(0)`，形状为 (1, M)，这样第 j "
                                     "个元素才位于第 j 列。"),
            "whole_rows": ("`x[idx]` 取出的是整行，得到 (M, M)；这里每列只要一个元素，即第 j 列里第 idx[j] 行的那个：`x.gather(0, "
                           "idx.unsqueeze(0))`。"),
        },
        "pick_k_per_row": {
            "title": "每行取 K 个元素",
            "wrong_dim": ("dim=0 时 idx[i][k] 选的是行：out[i][k] = x[idx[i][k]][k]。这些索引是第 i 行里的列号，应使用 "
                          "dim=1。"),
            "same_for_every_row": ("`index_select` 对所有行使用同一组列号（这里是 idx[0]）；gather 让第 i 行使用自己的 "
                                   "idx[i]：`x.gather(1, idx)`。"),
            "transposed": ("你的结果是 (K, B)，正好是期望形状 (B, K) 的转置：gather 的输出形状就是索引的形状，所以直接对 x 用形状为 (B, K) "
                           "的 idx 做 gather。"),
            "index_all_rows": ("`x[:, idx]` 让每一行都与所有行的索引组合，得到 (B, B, K)；`x.gather(1, idx)` 只让第 i 行与 "
                               "idx[i] 组合。"),
        },
        "select_rows": {
            "title": "为每个样本选出 K 行特征",
            "forgot_expand": ("形状为 (B, K, 1) 的索引给出形状为 (B, K, 1) 的结果：每行只取到第 0 "
                              "个特征。先把索引沿特征维扩展：`idx.unsqueeze(-1).expand(-1, -1, D)`。"),
            "expand_wrong_axis": ("索引被扩展成了 (B, D, K)，结果也就成了 (B, D, "
                                  "K)，沿错误的轴读取；新轴应放在最后：`idx.unsqueeze(-1).expand(-1, -1, D)` 的形状是 (B, "
                                  "K, D)。"),
            "repeat_then_view": ("`idx.repeat(1, D)` 把副本排成 idx[b][0], idx[b][1], ..., idx[b][0], "
                                 "...，再 view 成 (B, K, D) "
                                 "就把不同的行混在了一起。应沿新的最后一维复制：`idx.unsqueeze(-1).expand(-1, -1, D)`（或 "
                                 "`idx.unsqueeze(-1).repeat(1, 1, D)`）。"),
            "gather_dim2": ("dim=2 时索引选的是特征：out[b][k][d] = x[b][k][idx[b][k]]。idx 表示的是行号（N 那一维），应沿 "
                            "dim=1 做 gather。"),
        },
        "sort_by_key": {
            "title": "按另一个张量排序",
            "sorted_values": ("你排序的是 values 本身；顺序应当由 keys 决定：`values.gather(1, "
                              "keys.argsort(dim=1))`。"),
            "argsort_dim0": "`keys.argsort(dim=0)` 是对每一列排序，而不是每一行；应使用 `keys.argsort(dim=1)`。",
            "gather_dim0": ("第 i 行的顺序列出的是第 i 行里的列号，所以应沿 dim=1 做 gather；dim=0 时每个元素选的是行：out[i][j] = "
                            "values[order[i][j]][j]。"),
            "descending": "这是按 keys 降序排列的结果；题目要求升序（key 最小的排在最前），这正是 `argsort` 的默认行为。",
        },
        "unshuffle": {
            "title": "还原打乱的顺序",
            "perm_again": ("你的结果把打乱又做了一次（再用 perm 做 gather 就是这样）；要还原，需要逆置换 `perm.argsort(dim=1)`（即 "
                           "MAE 里的 ids_restore）：`shuffled.gather(1, perm.argsort(dim=1))`。"),
            "argsort_dim0": ("`perm.argsort(dim=0)` 沿列求逆，把不同行的置换混在了一起；每行有自己的置换，应使用 "
                             "`perm.argsort(dim=1)`。"),
            "returned_index": ("你返回的是逆置换本身（int64 索引）；应把它当作索引使用：`shuffled.gather(1, "
                               "perm.argsort(dim=1))`。"),
            "gather_dim0": "perm.argsort(dim=1) 存的是每行内部的位置，所以应沿 dim=1 做 gather；dim=0 时每个元素选的是行。",
        },
    },
}
