"""Level 2, index shapes and flat indices: the `<=` rule (a smaller index reads leading rows), rows
of a batch, whole feature vectors, the same columns in every row, coordinates from a flat index,
points of a feature map read through one flat gather, and sliding windows (the input expanded).
"""
from __future__ import annotations

import torch
from hypothesis import strategies as st

from gatherbook.exercises.declaration import Mistake, Wrong, exercise
from gatherbook.exercises.cases import I64, coded, t
from gatherbook.exercises.strategies import floats, index, values

PART = "puzzles"  # the exercises' names: "puzzles.<name>"
PAGE = ("2", "08_practice_2_3d")  # the page of the ladder: its number, its notebook
BASE = ("arith", "shape", "create", "repeat")


# --------------------------------------------------------------------------------------------
def leading_rows_spec(x, cols, R):
    K = cols.shape[0]
    out = torch.zeros(R, K, dtype=x.dtype)
    for i in range(R):
        for k in range(K):
            out[i, k] = x[i, cols[k]]
    return out


@st.composite
def _leading_rows_cases(draw):
    B, N, K = draw(st.integers(0, 4)), draw(st.integers(1, 5)), draw(st.integers(0, 4))
    return draw(values((B, N))), draw(index((K,), N)), draw(st.integers(0, B))


@exercise(
    spec=leading_rows_spec,
    signature="x: (B, N), cols: (K,) int64 in [0, N), R: int in [0, B]  ->  (R, K), x's dtype",
    allowed=("gather", "arith", "create", "view", "reshape", "unsqueeze", "squeeze", "expand",
             "expand_as", "repeat", "transpose", "contiguous"),
    edge_cases=[(t([[3, -1, 4, 1], [5, 9, -2, 6], [5, 3, 5, 8]]), t([3, 1]), 2),
                (t([[1, -2, 3], [4, 5, -6]]), t([2, 2, 0]), 2),   # R = B, a repeated column
                (t([[7, 8], [9, 10]]), t([1]), 0),                # R = 0
                (t([[5], [-5], [6]]), t([0, 0]), 1),              # N = 1, R = 1
                (t([[1, 2], [3, 4]]), t([]), 1)],
    strategy=_leading_rows_cases,
    right=[lambda x, cols, R: torch.gather(x, 1, cols.expand(R, cols.shape[0])),
           lambda x, cols, R: x.gather(1, cols.repeat(R, 1)),
           lambda x, cols, R: x.t().gather(0, cols.unsqueeze(1).expand(-1, R)).t()],
    mistakes=[Mistake("one_row", lambda x, cols, R: x.gather(1, cols.unsqueeze(0))),
              Mistake("all_rows", lambda x, cols, R: x.gather(1, cols.expand(x.shape[0], -1))),
              Mistake("column_index", lambda x, cols, R: x.gather(1, cols.unsqueeze(1).expand(-1, R)))],
    second_example=1,                             # drawn beside the first: R = B, a column named twice: copied twice
    taught_in="01_gather_basics",
    atol=1e-6,
)
def leading_rows(x, cols, R):
    # (K,) -> (1, K) -> (R, K): an index of R <= B rows reads the first R rows of x
    index = cols.unsqueeze(0).expand(R, -1)
    return x.gather(1, index)


# --------------------------------------------------------------------------------------------
def rows_of_batch_spec(x, idx):
    B, N, D = x.shape
    K = idx.shape[1]
    out = torch.zeros(B, K, D, dtype=x.dtype)
    for b in range(B):
        for k in range(K):
            for d in range(D):
                out[b, k, d] = x[b, idx[b, k], d]
    return out


@st.composite
def _rows_of_batch_cases(draw):
    B, N, D, K = (draw(st.integers(lo, hi)) for lo, hi in ((0, 3), (1, 4), (1, 3), (0, 4)))
    return draw(values((B, N, D))), draw(index((B, K), N))


@exercise(
    spec=rows_of_batch_spec,
    signature="x: (B, N, D), idx: (B, K) int64 in [0, N)  ->  (B, K, D), x's dtype",
    allowed=("gather",) + BASE,
    edge_cases=[(coded(2, 3, 2), t([[2, 0, 2], [1, 1, 0]])),
                (coded(1, 2, 3), t([[1]])),                       # B = 1, K = 1
                (coded(2, 3, 1), t([[0, 2, 1], [1, 0, 0]])),      # D = 1
                (coded(2, 2, 2), torch.zeros(2, 0, dtype=torch.int64))],
    strategy=_rows_of_batch_cases,
    right=[lambda x, idx: x.gather(1, idx[:, :, None].expand(*idx.shape, x.shape[2])),
           lambda x, idx: x.gather(1, idx.unsqueeze(2).repeat(1, 1, x.shape[2])),
           lambda x, idx: x.flatten(0, 1).gather(0, (idx + torch.arange(x.shape[0], device=x.device)[:, None] * x.shape[1]).flatten()[:, None].expand(-1, x.shape[2])).view(*idx.shape, x.shape[2])],
    mistakes=[Mistake("forgot_expand", lambda x, idx: x.gather(1, idx.unsqueeze(-1))),
              Mistake("repeat_then_view", lambda x, idx: x.gather(
                  1, idx.repeat(1, x.shape[2]).view(*idx.shape, x.shape[2]))),
              Mistake("expand_wrong_axis", lambda x, idx: x.gather(
                  1, idx.unsqueeze(1).expand(-1, x.shape[2], -1)))],
    taught_in="01_gather_basics",
    atol=1e-6,
)
def rows_of_batch(x, idx):
    D = x.shape[2]
    index = idx.unsqueeze(-1).expand(-1, -1, D)  # (B, K) -> (B, K, 1) -> (B, K, D)
    return x.gather(1, index)


# --------------------------------------------------------------------------------------------
def feature_vector_spec(x, idx):
    B, N, D = x.shape
    out = torch.zeros(B, D, dtype=x.dtype)
    for b in range(B):
        for d in range(D):
            out[b, d] = x[b, idx[b], d]
    return out


@st.composite
def _feature_vector_cases(draw):
    B, N, D = (draw(st.integers(lo, hi)) for lo, hi in ((0, 3), (1, 4), (1, 3)))
    return draw(values((B, N, D))), draw(index((B,), N))


@exercise(
    spec=feature_vector_spec,
    signature="x: (B, N, D), idx: (B,) int64 in [0, N)  ->  (B, D), x's dtype",
    allowed=("gather",) + BASE,
    edge_cases=[(coded(2, 3, 3), t([2, 0])),
                (coded(1, 2, 3), t([1])),                          # B = 1
                (coded(3, 2, 1), t([1, 0, 1])),                    # D = 1
                (torch.zeros(0, 2, 2, dtype=torch.int64), t([]))],
    strategy=_feature_vector_cases,
    right=[lambda x, idx: x.gather(1, idx[:, None, None].expand(-1, 1, x.shape[2]))[:, 0],
           lambda x, idx: x.gather(1, idx.view(-1, 1, 1).repeat(1, 1, x.shape[2])).view(-1, x.shape[2]),
           lambda x, idx: x.gather(1, idx.view(-1, 1, 1).expand(x.shape[0], 1, x.shape[2])).flatten(1)],
    mistakes=[Mistake("forgot_squeeze", lambda x, idx: x.gather(1, idx.view(-1, 1, 1).expand(-1, 1, x.shape[2]))),
              Mistake("bare_squeeze", lambda x, idx: x.gather(1, idx.view(-1, 1, 1).expand(-1, 1, x.shape[2])).squeeze()),
              Mistake("forgot_expand", lambda x, idx: x.gather(1, idx.view(-1, 1, 1)).squeeze(1))],
    taught_in="04_vision_patches",
    atol=1e-6,
)
def feature_vector(x, idx):
    D = x.shape[2]
    index = idx.view(-1, 1, 1).expand(-1, 1, D)  # (B,) -> (B, 1, D)
    return x.gather(1, index).squeeze(1)


# --------------------------------------------------------------------------------------------
def same_columns_spec(x, idx):
    B, N, D = x.shape
    K = idx.shape[1]
    out = torch.zeros(B, N, K, dtype=x.dtype)
    for b in range(B):
        for n in range(N):
            for k in range(K):
                out[b, n, k] = x[b, n, idx[b, k]]
    return out


@st.composite
def _same_columns_cases(draw):
    B, N, D, K = (draw(st.integers(lo, hi)) for lo, hi in ((0, 3), (1, 4), (1, 4), (0, 4)))
    return draw(values((B, N, D))), draw(index((B, K), D))


@exercise(
    spec=same_columns_spec,
    signature="x: (B, N, D), idx: (B, K) int64 in [0, D)  ->  (B, N, K), x's dtype",
    allowed=("gather",) + BASE,
    edge_cases=[(coded(2, 2, 4), t([[3, 0], [1, 1]])),
                (coded(1, 3, 2), t([[1]])),                         # B = 1, K = 1
                (coded(2, 1, 3), t([[2, 0, 2], [0, 1, 1]])),        # N = 1
                (coded(2, 2, 2), torch.zeros(2, 0, dtype=torch.int64))],
    strategy=_same_columns_cases,
    right=[lambda x, idx: x.gather(2, idx[:, None, :].expand(-1, x.shape[1], -1)),
           lambda x, idx: x.gather(2, idx.unsqueeze(1).repeat(1, x.shape[1], 1)),
           lambda x, idx: x.transpose(1, 2).gather(1, idx.unsqueeze(-1).expand(-1, -1, x.shape[1])).transpose(1, 2)],
    mistakes=[Mistake("no_expand", lambda x, idx: x.gather(2, idx.unsqueeze(1))),
              Mistake("wrong_axis", lambda x, idx: x.gather(2, idx.unsqueeze(2).expand(-1, -1, x.shape[1]))),
              Mistake("gather_dim1", lambda x, idx: x.gather(1, idx.unsqueeze(1).expand(-1, x.shape[1], -1)))],
    taught_in="01_gather_basics",
    atol=1e-6,
)
def same_columns(x, idx):
    N = x.shape[1]
    index = idx.unsqueeze(1).expand(-1, N, -1)  # (B, K) -> (B, 1, K) -> (B, N, K)
    return x.gather(2, index)


# --------------------------------------------------------------------------------------------
def unravel_spec(flat, A, B, C):
    N = flat.shape[0]
    out = torch.zeros(N, 3, dtype=torch.int64)
    for n in range(N):
        i = int(flat[n])
        for a in range(A):
            for b in range(B):
                for c in range(C):
                    # row-major: the last dim moves fastest
                    if a * B * C + b * C + c == i:
                        out[n, 0], out[n, 1], out[n, 2] = a, b, c
    return out


@st.composite
def _unravel_cases(draw):
    A, B, C = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 11))
    return draw(index((draw(st.integers(0, 6)),), A * B * C)), A, B, C


@exercise(
    spec=unravel_spec,
    signature="flat: (N,) int64 in [0, A*B*C), A: int, B: int, C: int  ->  (N, 3) int64",
    allowed=BASE,
    edge_cases=[(t([0, 5, 6, 11, 23]), 2, 3, 4),
                (t([9, 0, 9]), 1, 1, 10),                     # A = B = 1, C past 8, a repeat
                (t([2]), 3, 1, 1),                            # C = 1, N = 1
                (t([], I64), 2, 2, 2)],                       # N = 0
    strategy=_unravel_cases,
    right=[lambda flat, A, B, C: torch.stack([flat // (B * C), flat // C % B, flat % C], dim=1),
           lambda flat, A, B, C: torch.stack([flat // (B * C), (flat % (B * C)) // C, flat - flat // C * C], 1),
           lambda flat, A, B, C: torch.cat([(flat // (B * C))[:, None], (flat // C % B)[:, None],
                                            (flat % C)[:, None]], dim=1)],
    mistakes=[Mistake("first_dim_fastest", lambda flat, A, B, C: torch.stack([flat % A, flat // A % B, flat // (A * B)], 1)),
              Mistake("no_modulo", lambda flat, A, B, C: torch.stack([flat // (B * C), flat // C, flat % C], 1)),
              Mistake("stride_b", lambda flat, A, B, C: torch.stack([flat // (B * C), flat // B % B, flat % C], 1)),
              Mistake("columns_reversed", lambda flat, A, B, C: torch.stack([flat % C, flat // C % B, flat // (B * C)], 1)),
              Mistake("true_division", lambda flat, A, B, C: torch.stack([flat / (B * C), flat / C % B, flat % C], 1))],
    wrong=[Wrong(lambda flat, A, B, C: torch.stack([flat / (B * C), flat // C % B, flat % C], 1),
                 hint="generic.true_division", kind="dtype", why="one `/` among the `//`: fractions in int64 coordinates")],
    second_example=1,                             # drawn beside the first: size-1 dims: their coordinate is always 0
    taught_in="04_vision_patches",
    atol=0,
)
def unravel(flat, A, B, C):
    a = flat // (B * C)           # a step in dim 0 moves B*C places
    b = flat // C % B             # a step in dim 1 moves C places
    c = flat % C                  # dim 2 moves one place
    return torch.stack([a, b, c], dim=1)


# --------------------------------------------------------------------------------------------
def read_points_spec(fmap, pts):
    B, C, H, W = fmap.shape
    out = torch.zeros(B, C, dtype=fmap.dtype)
    for b in range(B):
        for c in range(C):
            x, y = int(pts[b, c, 0]), int(pts[b, c, 1])   # x: the column, y: the row
            out[b, c] = fmap[b, c, y, x]
    return out


@st.composite
def _read_points_cases(draw):
    B, C, H, W = draw(st.integers(0, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 10))
    xs, ys = draw(index((B, C, 1), W)), draw(index((B, C, 1), H))
    return draw(floats((B, C, H, W))), torch.cat([xs, ys], dim=2)


@exercise(
    spec=read_points_spec,
    signature="fmap: (B, C, H, W) float, pts: (B, C, 2) int64, pts[..., 0] = x in [0, W), "
              "pts[..., 1] = y in [0, H)  ->  (B, C) float",
    allowed=("gather",) + BASE,
    limits={"gather": 1},
    edge_cases=[(coded(2, 2, 2, 3).float() / 10, t([[[2, 0], [1, 1]], [[0, 1], [2, 1]]])),
                (coded(1, 3, 3, 1).float() - 50, t([[[0, 2], [0, 0], [0, 1]]])),       # W = 1, B = 1
                (coded(1, 1, 1, 9).float() / 4, t([[[8, 0]]])),                          # H = 1, W past 8
                (torch.zeros(0, 2, 2, 2), torch.zeros(0, 2, 2, dtype=I64))],
    strategy=_read_points_cases,
    right=[lambda fm, p: fm.flatten(2).gather(2, (p[..., 1:] * fm.shape[3] + p[..., :1])).squeeze(2),
           lambda fm, p: fm.reshape(fm.shape[0], fm.shape[1], fm.shape[2] * fm.shape[3]).gather(
               2, (p[:, :, 1] * fm.shape[3] + p[:, :, 0]).unsqueeze(-1))[:, :, 0],
           lambda fm, p: fm.flatten().gather(0, ((torch.arange(fm.shape[0] * fm.shape[1], device=fm.device).view(fm.shape[0], fm.shape[1]) * fm.shape[2]
                                                 + p[..., 1]) * fm.shape[3] + p[..., 0]).flatten()).view(fm.shape[0], fm.shape[1])],
    # the slips as a reader writes them: x * W + y reads past the map on case 1 (an index error,
    # named from it), y * H + x reads the wrong cells where H != W (every edge case but the empty one)
    mistakes=[Mistake("x_and_y_swapped", lambda fm, p: fm.flatten(2).gather(
                  2, p[..., :1] * fm.shape[3] + p[..., 1:]).squeeze(2)),
              Mistake("stride_h", lambda fm, p: fm.flatten(2).gather(
                  2, p[..., 1:] * fm.shape[2] + p[..., :1]).squeeze(2)),
              Mistake("channel_zero", lambda fm, p: fm.flatten(1).gather(1, p[..., 1] * fm.shape[3] + p[..., 0])),
              Mistake("forgot_squeeze", lambda fm, p: fm.flatten(2).gather(2, p[..., 1:] * fm.shape[3] + p[..., :1]))],
    wrong=[Wrong(lambda fm, p: fm.flatten(2).gather(2, (p[..., 0] * fm.shape[3] + p[..., 1]).unsqueeze(2)).squeeze(2),
                 hint="x_and_y_swapped", kind="exception", why="x * W + y: past the end of the flattened map"),
           Wrong(lambda fm, p: fm.flatten(2).gather(2, (p[:, :, 1] * fm.shape[2] + p[:, :, 0])[..., None])[..., 0],
                 hint="stride_h", kind="values", why="y * H + x: a row taken as H long")],
    taught_in="04_vision_patches",
    atol=1e-6,
)
def read_points(fmap, pts):
    B, C, H, W = fmap.shape
    # (B, C): row y, column x of an H x W map
    flat = pts[..., 1] * W + pts[..., 0]
    return fmap.flatten(2).gather(2, flat.unsqueeze(2)).squeeze(2)


# --------------------------------------------------------------------------------------------
def sliding_windows_spec(x, w):
    B, L = x.shape
    T = L - w + 1
    out = torch.zeros(B, T, w, dtype=x.dtype)
    for b in range(B):
        for i in range(T):
            for j in range(w):
                out[b, i, j] = x[b, i + j]
    return out


def _windows_index(T, w, device=None):
    return torch.arange(T, device=device).unsqueeze(1) + torch.arange(w, device=device)


@st.composite
def _sliding_windows_cases(draw):
    B, L = draw(st.integers(0, 3)), draw(st.integers(1, 10))
    return draw(values((B, L))), draw(st.integers(1, L))


@exercise(
    spec=sliding_windows_spec,
    signature="x: (B, L), w: int in [1, L]  ->  (B, L - w + 1, w), x's dtype",
    allowed=("gather",) + BASE,
    edge_cases=[(t([[1, 2, 3, 4, 5], [-1, -2, -3, -4, -5]]), 3),
                (t([[7, -8, 9]]), 1),                         # w = 1, B = 1
                (t([[4, 5, 6]]), 3),                          # w = L
                (torch.zeros(0, 4, dtype=torch.int64), 2)],
    strategy=_sliding_windows_cases,
    right=[lambda x, w: x.gather(1, _windows_index(x.shape[1] - w + 1, w, x.device).view(1, -1)
                                 .expand(x.shape[0], -1)).view(x.shape[0], x.shape[1] - w + 1, w),
           lambda x, w: x.gather(1, _windows_index(x.shape[1] - w + 1, w, x.device).flatten()
                                 .repeat(x.shape[0], 1)).reshape(x.shape[0], x.shape[1] - w + 1, w),
           lambda x, w: x.unsqueeze(-1).gather(1, _windows_index(x.shape[1] - w + 1, w, x.device).view(1, -1, 1).expand(x.shape[0], -1, 1)).view(x.shape[0], x.shape[1] - w + 1, w)],
    mistakes=[Mistake("no_overlap", lambda x, w: x.unsqueeze(1).expand(-1, x.shape[1] - w + 1, -1).gather(
                  2, (torch.arange(x.shape[1] - w + 1)[:, None] * w + torch.arange(w))
                  .expand(x.shape[0], -1, -1))),
              Mistake("one_short", lambda x, w: x.unsqueeze(1).expand(-1, x.shape[1] - w, -1).gather(
                  2, _windows_index(x.shape[1] - w, w).expand(x.shape[0], -1, -1))),
              Mistake("transposed", lambda x, w: x.unsqueeze(1).expand(-1, w, -1).gather(
                  2, _windows_index(x.shape[1] - w + 1, w).T.expand(x.shape[0], -1, -1)))],
    taught_in="01_gather_basics",
    atol=1e-6,
)
def sliding_windows(x, w):
    B, L = x.shape
    T = L - w + 1
    start = torch.arange(T, device=x.device).unsqueeze(1)  # (T, 1)
    offset = torch.arange(w, device=x.device).unsqueeze(0)  # (1, w)
    index = (start + offset).expand(B, T, w)                # index[b][i][j] = i + j
    return x.unsqueeze(1).expand(B, T, L).gather(2, index)
