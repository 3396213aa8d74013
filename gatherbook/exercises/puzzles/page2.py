"""Level 2, 3D and expand: rows of a batch, whole feature vectors, the (B, K) -> (B, K, D) index,
the same columns for every row, sliding windows and a layer per pixel, all built with gather."""
from __future__ import annotations

import torch
from hypothesis import strategies as st

from gatherbook.exercises.declaration import Mistake, exercise
from gatherbook.exercises.cases import F32, coded, t
from gatherbook.exercises.strategies import floats, index, ints

PART = "puzzles"  # the exercises' names: "puzzles.<name>"
PAGE = ("2", "08_practice_2_3d")  # the page of the ladder: its number, its notebook
BASE = ("arith", "shape", "create", "repeat")


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
    return draw(ints((B, N, D))), draw(index((B, K), N))


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
    return draw(ints((B, N, D))), draw(index((B,), N))


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
def pick_per_token_spec(logp, ids):
    B, L, V = logp.shape
    out = torch.zeros(B, L, dtype=logp.dtype)
    for b in range(B):
        for i in range(L):
            out[b, i] = logp[b, i, ids[b, i]]
    return out


@st.composite
def _pick_per_token_cases(draw):
    B, L, V = (draw(st.integers(lo, hi)) for lo, hi in ((0, 3), (0, 4), (1, 4)))
    return draw(floats((B, L, V), -99, 0)), draw(index((B, L), V))


@exercise(
    spec=pick_per_token_spec,
    signature="logp: (B, L, V) float, ids: (B, L) int64 in [0, V)  ->  (B, L) float",
    allowed=("gather",) + BASE,
    edge_cases=[(-coded(2, 3, 4, dtype=F32) / 100, t([[3, 0, 1], [2, 2, 0]])),
                (t([[[-0.5, -1.5]]], F32), t([[1]])),            # B = 1, L = 1
                (t([[[0.0], [0.0]]], F32), t([[0, 0]])),         # V = 1
                (torch.zeros(2, 0, 3), torch.zeros(2, 0, dtype=torch.int64))],
    strategy=_pick_per_token_cases,
    right=[lambda lp, ids: lp.gather(-1, ids[..., None])[..., 0],
           lambda lp, ids: torch.gather(lp, 2, ids.unsqueeze(-1)).view(ids.shape),
           lambda lp, ids: lp.flatten(0, 1).gather(1, ids.flatten()[:, None]).view(ids.shape)],
    mistakes=[Mistake("wrong_dim", lambda lp, ids: lp.gather(1, ids.unsqueeze(2)).squeeze(2)),
              Mistake("forgot_squeeze", lambda lp, ids: lp.gather(2, ids.unsqueeze(2))),
              Mistake("bare_squeeze", lambda lp, ids: lp.gather(2, ids.unsqueeze(2)).squeeze())],
    taught_in="02_token_logprobs",
    atol=1e-6,
)
def pick_per_token(logp, ids):
    return logp.gather(2, ids.unsqueeze(2)).squeeze(2)


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
    return draw(ints((B, N, D))), draw(index((B, K), D))


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
    B, L = draw(st.integers(0, 3)), draw(st.integers(1, 6))
    return draw(ints((B, L))), draw(st.integers(1, L))


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


# --------------------------------------------------------------------------------------------
def pick_layer_spec(x, idx):
    K, N, M = x.shape
    out = torch.zeros(N, M, dtype=x.dtype)
    for n in range(N):
        for m in range(M):
            out[n, m] = x[idx[n, m], n, m]
    return out


@st.composite
def _pick_layer_cases(draw):
    K, N, M = (draw(st.integers(lo, hi)) for lo, hi in ((1, 3), (0, 3), (1, 4)))
    return draw(ints((K, N, M))), draw(index((N, M), K))


@exercise(
    spec=pick_layer_spec,
    signature="x: (K, N, M), idx: (N, M) int64 in [0, K)  ->  (N, M), x's dtype",
    allowed=("gather",) + BASE,
    edge_cases=[(coded(2, 2, 3), t([[0, 1, 1], [1, 0, 0]])),
                (coded(3, 1, 1), t([[2]])),                       # N = M = 1
                (coded(1, 2, 2), t([[0, 0], [0, 0]]))],
    strategy=_pick_layer_cases,
    right=[lambda x, idx: x.gather(0, idx[None])[0],
           lambda x, idx: x.permute(1, 2, 0).gather(2, idx.unsqueeze(2)).squeeze(2),
           lambda x, idx: x.transpose(0, 2).gather(2, idx.t().unsqueeze(2)).squeeze(2).t()],
    mistakes=[Mistake("forgot_squeeze", lambda x, idx: x.gather(0, idx.unsqueeze(0))),
              Mistake("no_unsqueeze", lambda x, idx: x.gather(0, idx)),
              Mistake("bare_squeeze", lambda x, idx: x.gather(0, idx.unsqueeze(0)).squeeze())],
    taught_in="01_gather_basics",
    atol=1e-6,
)
def pick_layer(x, idx):
    return x.gather(0, idx.unsqueeze(0)).squeeze(0)
