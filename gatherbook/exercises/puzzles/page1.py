"""Level 1, gather in 1D and 2D: one index per row, one per token, the last real token, argmax
then gather, one layer per cell, reversing, a diagonal, rotating (an index built with arange and %).
"""
from __future__ import annotations

import torch
from hypothesis import strategies as st

from gatherbook.exercises.declaration import Mistake, Wrong, exercise
from gatherbook.exercises.cases import F32, coded, t
from gatherbook.exercises.strategies import floats, index, lengths, values

PART = "puzzles"  # the exercises' names: "puzzles.<name>"
PAGE = ("1", "08_practice_1_warmup")  # the page of the ladder: its number, its notebook
BASE = ("arith", "shape", "create")


# --------------------------------------------------------------------------------------------
def pick_per_row_spec(x, idx):
    out = torch.zeros(x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i] = x[i, idx[i]]
    return out


@st.composite
def _pick_per_row_cases(draw):
    B, N = draw(st.integers(0, 4)), draw(st.integers(1, 10))
    return draw(values((B, N))), draw(index((B,), N))


@exercise(
    spec=pick_per_row_spec,
    signature="x: (B, N), idx: (B,) int64 in [0, N)  ->  (B,), x's dtype",
    allowed=("gather",) + BASE,
    edge_cases=[(t([[3, -1, 4, 1], [5, 9, -2, 6], [5, 3, 5, 8]]), t([2, 0, 3])),
                (t([[7, -7]]), t([1])),                       # B = 1
                (t([[4], [-4]]), t([0, 0])),                  # N = 1
                (torch.zeros(0, 3, dtype=torch.int64), t([]))],
    strategy=_pick_per_row_cases,
    right=[lambda x, idx: torch.gather(x, 1, idx[:, None])[:, 0],
           lambda x, idx: x.gather(1, idx.view(-1, 1)).view(-1),
           lambda x, idx: x.gather(1, idx.unsqueeze(1)).flatten()],
    mistakes=[Mistake("forgot_squeeze", lambda x, idx: x.gather(1, idx.unsqueeze(1))),
              Mistake("bare_squeeze", lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze()),
              Mistake("wrong_dim", lambda x, idx: x.gather(0, idx.unsqueeze(1)).squeeze(1))],
    taught_in="01_gather_basics",
    atol=1e-6,
)
def pick_per_row(x, idx):
    return x.gather(1, idx.unsqueeze(1)).squeeze(1)


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
def last_token_spec(x, lengths):
    out = torch.zeros(x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i] = x[i, lengths[i] - 1]
    return out


@st.composite
def _last_token_cases(draw):
    B, L = draw(st.integers(0, 4)), draw(st.integers(1, 10))
    return draw(values((B, L))), draw(lengths(B, L, 1))


@exercise(
    spec=last_token_spec,
    signature="x: (B, L), lengths: (B,) int64 in [1, L]  ->  (B,), x's dtype",
    allowed=("gather",) + BASE,
    edge_cases=[(t([[5, 6, 7, 0], [8, 9, 0, 0], [1, 2, 3, 4]]), t([3, 2, 4])),
                (t([[4, -2, 0]]), t([2])),                    # B = 1
                (t([[3], [-3]]), t([1, 1])),                  # L = 1
                (torch.zeros(0, 2, dtype=torch.int64), t([]))],
    strategy=_last_token_cases,
    right=[lambda x, n: x.gather(1, n[:, None] - 1)[:, 0],
           lambda x, n: torch.gather(x, 1, (n + -1).view(-1, 1)).view(-1),
           lambda x, n: x.gather(1, (n - 1).view(-1, 1)).flatten()],
    mistakes=[Mistake("no_minus_one", lambda x, n: x.gather(1, n.unsqueeze(1)).squeeze(1)),
              Mistake("last_column", lambda x, n: x[:, -1]),
              Mistake("bare_squeeze", lambda x, n: x.gather(1, (n - 1).unsqueeze(1)).squeeze()),
              # the off-by-one kept in range: equals x[:, -1] on every edge case (their padding is
              # 0, the last column too), not on the drawn ones (issue 35's trial learner)
              Mistake("clamped", lambda x, n: x.gather(1, n.clamp(max=x.shape[1] - 1).unsqueeze(1)).squeeze(1))],
    wrong=[Wrong(lambda x, n: x.gather(1, torch.minimum(n, torch.full_like(n, x.shape[1] - 1))[:, None])[:, 0],
                 hint="clamped", kind="values", why="the off-by-one kept in range with minimum")],
    taught_in="02_token_logprobs",
    atol=1e-6,
)
def last_token(x, lengths):
    return x.gather(1, (lengths - 1).unsqueeze(1)).squeeze(1)


# --------------------------------------------------------------------------------------------
def value_at_argmax_spec(scores, values):
    B, N = scores.shape
    out = torch.zeros(B, dtype=values.dtype)
    for i in range(B):
        best = 0
        for j in range(1, N):
            if scores[i, j] > scores[i, best]:  # ties: the first maximum wins
                best = j
        out[i] = values[i, best]
    return out


@st.composite
def _value_at_argmax_cases(draw):
    B, N = draw(st.integers(0, 4)), draw(st.integers(1, 10))
    return draw(floats((B, N), -30, 30)), draw(values((B, N)))   # fractional scores, ties


@exercise(
    spec=value_at_argmax_spec,
    signature="scores: (B, N) float, values: (B, N)  ->  (B,), values' dtype",
    allowed=("gather", "argmax") + BASE,
    edge_cases=[(t([[0.5, 2.0, -1.0], [3.0, 3.0, 0.5]], F32), t([[10, 20, 30], [40, 50, 60]])),
                (t([[-2.0, -1.0, -3.0]], F32), t([[7, 8, 9]])),   # B = 1, negative scores
                (t([[1.0], [0.0]], F32), t([[5], [6]])),
                (t([[0.3, 0.7, -0.2]], F32), t([[1.5, 2.5, 3.5]], F32))],   # fractional scores
    strategy=_value_at_argmax_cases,
    right=[lambda s, v: v.gather(1, s.argmax(1).unsqueeze(1))[:, 0],
           lambda s, v: torch.gather(v, 1, s.argmax(-1)[:, None]).view(-1),
           lambda s, v: v.gather(1, s.argmax(1).view(-1, 1)).squeeze(-1)],
    mistakes=[Mistake("argmax_of_values", lambda s, v: v.gather(1, v.argmax(1, keepdim=True)).squeeze(1)),
              Mistake("argmax_dim0", lambda s, v: v.gather(0, s.argmax(0, keepdim=True)).squeeze(0)),
              Mistake("no_keepdim", lambda s, v: v.gather(1, s.argmax(1))),
              # argmin(scores) is argmax(values) on every edge case (values rise along each row),
              # not on the drawn ones (issue 35's trial learner)
              Mistake("argmin", lambda s, v: v.gather(1, s.argmin(1, keepdim=True)).squeeze(1))],
    wrong=[Wrong(lambda s, v: v.gather(1, s.argmin(-1)[:, None])[:, 0], hint="argmin", kind="values",
                 why="the smallest score's column")],
    taught_in="03_rl_action_values",
    atol=1e-6,
)
def value_at_argmax(scores, values):
    # (B, 1): the column of each row's maximum
    best = scores.argmax(dim=1, keepdim=True)
    return values.gather(1, best).squeeze(1)


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
    return draw(values((K, N, M))), draw(index((N, M), K))


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


# --------------------------------------------------------------------------------------------
def reverse_spec(x):
    N = x.shape[0]
    out = torch.zeros(N, dtype=x.dtype)
    for i in range(N):
        out[i] = x[N - 1 - i]
    return out


@st.composite
def _reverse_cases(draw):
    return (draw(values((draw(st.integers(0, 12)),))),)


@exercise(
    spec=reverse_spec,
    signature="x: (N,)  ->  (N,), x's dtype",
    allowed=("gather",) + BASE,
    edge_cases=[(t([3, -1, 4, 1, 5]),), (t([7]),), (t([]),), (t([2, 2, -3]),),
                (t([0.5, -1.5, 2.0], F32),)],                 # floats
    strategy=_reverse_cases,
    right=[lambda x: x.gather(0, (x.shape[0] - 1) - torch.arange(x.shape[0], device=x.device)),
           lambda x: x[None].gather(1, (x.shape[0] - 1 - torch.arange(x.shape[0], device=x.device))[None])[0],
           lambda x: x.unsqueeze(1).gather(0, (x.shape[0] - 1 - torch.arange(x.shape[0], device=x.device)).unsqueeze(1)).squeeze(1)],
    mistakes=[Mistake("off_by_one", lambda x: x.gather(0, x.shape[0] - torch.arange(x.shape[0]))),
              Mistake("identity", lambda x: x.gather(0, torch.arange(x.shape[0]))),
              Mistake("stops_early", lambda x: x.gather(0, torch.arange(x.shape[0] - 1, 0, -1)))],
    taught_in="01_gather_basics",
    atol=1e-6,
)
def reverse(x):
    N = x.shape[0]
    return x.gather(0, torch.arange(N - 1, -1, -1, device=x.device))


# --------------------------------------------------------------------------------------------
def diagonal_spec(x):
    N = x.shape[0]
    out = torch.zeros(N, dtype=x.dtype)
    for i in range(N):
        out[i] = x[i, i]
    return out


@st.composite
def _diagonal_cases(draw):
    N = draw(st.integers(0, 5))
    return (draw(values((N, N))),)


@exercise(
    spec=diagonal_spec,
    signature="x: (N, N)  ->  (N,), x's dtype",
    allowed=("gather",) + BASE,
    edge_cases=[(t([[11, -12, 13], [21, 22, -23], [-31, 32, 33]]),),
                (t([[-4]]),),                                 # N = 1
                (torch.zeros(0, 0, dtype=torch.int64),)],
    strategy=_diagonal_cases,
    n_examples=30,                                    # the dtypes take draws: N = 1 still comes up
    right=[lambda x: x.gather(0, torch.arange(x.shape[0], device=x.device).unsqueeze(0)).squeeze(0),
           lambda x: x.flatten().gather(0, torch.arange(x.shape[0], device=x.device) * (x.shape[0] + 1)),
           lambda x: x.t().gather(0, torch.arange(x.shape[0], device=x.device)[None]).squeeze(0)],
    mistakes=[Mistake("first_row", lambda x: x.gather(1, torch.arange(x.shape[0]).unsqueeze(0)).squeeze(0)),
              Mistake("first_column", lambda x: x.gather(0, torch.arange(x.shape[0]).unsqueeze(1)).squeeze(1)),
              Mistake("bare_squeeze", lambda x: x.gather(1, torch.arange(x.shape[0]).unsqueeze(1)).squeeze())],
    taught_in="01_gather_basics",
    atol=1e-6,
)
def diagonal(x):
    N = x.shape[0]
    return x.gather(1, torch.arange(N, device=x.device).unsqueeze(1)).squeeze(1)


# --------------------------------------------------------------------------------------------
def rotate_spec(x, k):
    B, N = x.shape
    out = torch.zeros(B, N, dtype=x.dtype)
    for i in range(B):
        for j in range(N):
            out[i, j] = x[i, (j + k) % N]
    return out


@st.composite
def _rotate_cases(draw):
    B, N = draw(st.integers(0, 3)), draw(st.integers(1, 10))
    return draw(values((B, N))), draw(st.integers(0, 12))


@exercise(
    spec=rotate_spec,
    signature="x: (B, N), k: int >= 0  ->  (B, N), x's dtype",
    allowed=("gather",) + BASE + ("repeat",),
    edge_cases=[(t([[1, 2, 3, 4], [-5, -6, -7, -8]]), 1),
                (t([[1, 2, 3]]), 4),                          # k > N, B = 1
                (t([[9], [8]]), 3),                           # N = 1
                (torch.zeros(0, 3, dtype=torch.int64), 2)],
    strategy=_rotate_cases,
    right=[lambda x, k: x.gather(1, ((torch.arange(x.shape[1], device=x.device) + k) % x.shape[1]).repeat(x.shape[0], 1)),
           lambda x, k: x.gather(1, (torch.arange(x.shape[1], device=x.device).expand_as(x) + k % x.shape[1]) % x.shape[1]),
           lambda x, k: torch.cat([x[:, k % x.shape[1]:], x[:, :k % x.shape[1]]], dim=1)],
    mistakes=[Mistake("rotate_right", lambda x, k: x.gather(1, ((torch.arange(x.shape[1]) - k) % x.shape[1]).expand_as(x))),
              Mistake("no_modulo", lambda x, k: x.gather(1, (torch.arange(x.shape[1]) + k).expand_as(x))),
              Mistake("index_1d", lambda x, k: x.gather(1, (torch.arange(x.shape[1]) + k) % x.shape[1]))],
    second_example=1,                             # drawn beside the first: k > N wraps: k = 4 reads what k = 1 reads
    taught_in="01_gather_basics",
    atol=1e-6,
)
def rotate(x, k):
    B, N = x.shape
    # (N,): the column each output cell reads
    idx = (torch.arange(N, device=x.device) + k) % N
    return x.gather(1, idx.expand(B, N))
