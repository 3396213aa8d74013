"""Level 4, scatter and inverses: inverse permutation, rank, one-hot, histograms, segment
reductions, ragged <-> padded, and Mixture-of-Experts dispatch and combine."""
from __future__ import annotations

import torch
from hypothesis import strategies as st

from gatherbook.exercises.declaration import Mistake, exercise
from gatherbook.exercises.cases import F32, I64, coded, t
from gatherbook.exercises.strategies import distinct, floats, index, ints, lengths, perm

PART = "puzzles"  # the exercises' names: "puzzles.<name>"
PAGE = ("4a", "08_practice_4a_scatter")  # the page of the ladder: its number, its notebook
BASE = ("arith", "compare", "shape", "create", "where")
INF = float("inf")


# --------------------------------------------------------------------------------------------
def inverse_perm_spec(perm):
    N = perm.shape[0]
    inv = torch.zeros(N, dtype=perm.dtype)
    for i in range(N):
        inv[perm[i]] = i
    return inv


@st.composite
def _inverse_perm_cases(draw):
    return (draw(perm(draw(st.integers(0, 7)))),)


@exercise(
    spec=inverse_perm_spec,
    signature="perm: (N,) int64, a permutation of 0..N-1  ->  (N,) int64",
    allowed=("scatter", "gather") + BASE + ("empty_like",),
    edge_cases=[(t([2, 0, 3, 1]),), (t([0]),), (t([]),), (t([1, 2, 0]),)],
    strategy=_inverse_perm_cases,
    right=[lambda p: torch.empty_like(p).scatter_(0, p, torch.arange(p.shape[0], device=p.device)),
           lambda p: p.scatter(0, p, torch.arange(p.shape[0], device=p.device)),
           lambda p: torch.zeros_like(p).scatter_add(0, p, torch.arange(p.shape[0], device=p.device))],
    mistakes=[Mistake("compose", lambda p: p.gather(0, p)),
              Mistake("scatter_swapped", lambda p: torch.zeros_like(p).scatter(0, torch.arange(p.shape[0]), p)),
              Mistake("one_based", lambda p: torch.zeros_like(p).scatter(0, p, torch.arange(1, p.shape[0] + 1)))],
    taught_in="05_scatter",
    atol=1e-6,
)
def inverse_perm(perm):
    N = perm.shape[0]
    positions = torch.arange(N, device=perm.device)
    return torch.zeros_like(perm).scatter(0, perm, positions)  # inv[perm[i]] = i


# --------------------------------------------------------------------------------------------
def rank_spec(x):
    B, N = x.shape
    out = torch.zeros(B, N, dtype=torch.int64)
    for b in range(B):
        for i in range(N):
            out[b, i] = sum(1 for j in range(N) if x[b, j] < x[b, i])
    return out


@st.composite
def _rank_cases(draw):
    B, N = draw(st.integers(0, 3)), draw(st.integers(0, 5))
    return (draw(distinct(B, N)),)


@exercise(
    spec=rank_spec,
    signature="x: (B, N), values distinct within a row  ->  (B, N) int64",
    allowed=("argsort", "scatter", "sum") + BASE + ("empty_like", "repeat"),
    limits={"argsort": 1},
    edge_cases=[(t([[30, -10, 20, 0], [5, 7, 6, -1]]),), (t([[-4]]),),
                (torch.zeros(0, 3, dtype=I64),), (t([[2, 1, 0]]),)],
    strategy=_rank_cases,
    right=[lambda x: (x.unsqueeze(2) > x.unsqueeze(1)).sum(2),
           lambda x: torch.empty_like(x).scatter_(1, x.argsort(dim=1), torch.arange(x.shape[1], device=x.device).repeat(x.shape[0], 1)),
           lambda x: torch.zeros_like(x).scatter_add(1, x.argsort(dim=1), torch.arange(x.shape[1], device=x.device).expand_as(x))],
    mistakes=[Mistake("order_not_rank", lambda x: x.argsort(dim=1)),
              Mistake("descending", lambda x: torch.zeros_like(x).scatter(
                  1, x.argsort(dim=1, descending=True), torch.arange(x.shape[1]).expand_as(x))),
              Mistake("counts_itself", lambda x: (x.unsqueeze(2) >= x.unsqueeze(1)).sum(2))],
    taught_in="05_scatter",
    atol=1e-6,
)
def rank(x):
    B, N = x.shape
    # order[b][r]: the r-th smallest
    order = x.argsort(dim=1)
    ranks = torch.arange(N, device=x.device).expand(B, N)
    return torch.zeros_like(order).scatter(1, order, ranks)   # rank[b][order[b][r]] = r


# --------------------------------------------------------------------------------------------
def one_hot_spec(idx, C):
    N = idx.shape[0]
    out = torch.zeros(N, C, dtype=torch.int64)
    for i in range(N):
        out[i, idx[i]] = 1
    return out


@st.composite
def _one_hot_cases(draw):
    N, C = draw(st.integers(0, 5)), draw(st.integers(1, 5))
    return draw(index((N,), C)), C


@exercise(
    spec=one_hot_spec,
    signature="idx: (N,) int64 in [0, C), C: int  ->  (N, C) int64",
    allowed=("scatter",) + BASE,
    edge_cases=[(t([2, 0, 3, 0]), 4), (t([]), 3), (t([0, 0]), 1), (t([1]), 2)],
    strategy=_one_hot_cases,
    right=[lambda idx, C: (idx.unsqueeze(1) == torch.arange(C, device=idx.device)).long(),
           lambda idx, C: torch.zeros(idx.shape[0], C, dtype=torch.long, device=idx.device).scatter_(
               1, idx[:, None], torch.ones(idx.shape[0], 1, dtype=torch.long, device=idx.device)),
           lambda idx, C: torch.zeros(idx.shape[0], C, dtype=torch.long, device=idx.device).scatter_add(1, idx[:, None], torch.ones(idx.shape[0], 1, dtype=torch.long, device=idx.device))],
    mistakes=[Mistake("float_dtype", lambda idx, C: torch.zeros(idx.shape[0], C).scatter(1, idx[:, None], 1.0)),
              Mistake("scatter_dim0", lambda idx, C: torch.zeros(idx.shape[0], C, dtype=torch.long)
                    .scatter(0, idx[:, None], 1)),
              Mistake("transposed", lambda idx, C: torch.zeros(C, idx.shape[0], dtype=torch.long)
                    .scatter(0, idx[None], 1))],
    taught_in="05_scatter",
    atol=1e-6,
)
def one_hot(idx, C):
    N = idx.shape[0]
    out = torch.zeros(N, C, dtype=torch.int64, device=idx.device)
    return out.scatter(1, idx.unsqueeze(1), 1)  # row i: a 1 in column idx[i]


# --------------------------------------------------------------------------------------------
def histogram_spec(x, C):
    B, N = x.shape
    out = torch.zeros(B, C, dtype=torch.int64)
    for b in range(B):
        for i in range(N):
            out[b, x[b, i]] += 1
    return out


@st.composite
def _histogram_cases(draw):
    B, N, C = (draw(st.integers(lo, hi)) for lo, hi in ((0, 3), (0, 6), (1, 4)))
    return draw(index((B, N), C)), C


@exercise(
    spec=histogram_spec,
    signature="x: (B, N) int64 in [0, C), C: int  ->  (B, C) int64",
    allowed=("scatter", "sum") + BASE,
    edge_cases=[(t([[0, 2, 2, 1, 2], [3, 3, 0, 0, 0]]), 4),
                (torch.zeros(2, 0, dtype=I64), 3),          # N = 0: all bins empty
                (t([[0, 0, 0]]), 1)],
    strategy=_histogram_cases,
    right=[lambda x, C: (x.unsqueeze(2) == torch.arange(C, device=x.device)).sum(1),
           lambda x, C: torch.zeros(x.shape[0], C, dtype=torch.long, device=x.device).scatter_reduce(
               1, x, torch.ones_like(x), reduce="sum"),
           lambda x, C: torch.zeros(x.shape[0] * C, dtype=torch.long, device=x.device).scatter_add(0, (x + torch.arange(x.shape[0], device=x.device)[:, None] * C).flatten(), torch.ones(x.numel(), dtype=torch.long, device=x.device)).view(x.shape[0], C)],
    mistakes=[Mistake("scatter_not_add", lambda x, C: torch.zeros(x.shape[0], C, dtype=torch.long)
                    .scatter(1, x, torch.ones_like(x))),
              Mistake("dim0", lambda x, C: torch.zeros(x.shape[0], C, dtype=torch.long)
                    .scatter_add(0, x, torch.ones_like(x))),
              Mistake("float_counts", lambda x, C: torch.zeros(x.shape[0], C).scatter_add(
                  1, x, torch.ones_like(x, dtype=torch.float32)))],
    taught_in="05_scatter",
    atol=1e-6,
)
def histogram(x, C):
    B = x.shape[0]
    counts = torch.zeros(B, C, dtype=torch.int64, device=x.device)
    # each value adds 1 to its own bin
    return counts.scatter_add(1, x, torch.ones_like(x))


# --------------------------------------------------------------------------------------------
@st.composite
def _segment_cases(draw):
    N, S = draw(st.integers(0, 6)), draw(st.integers(1, 4))
    return draw(floats((N,))), draw(index((N,), S)), S


SEGMENT_EDGES = [(t([1.5, -2.0, 3.0, 0.5, 1.0], F32), t([0, 2, 0, 2, 2]), 4),  # 1 and 3 empty
                 (t([-1.5, -0.5, 2.0], F32), t([0, 0, 1]), 2),                 # a negative segment
                 (t([], F32), t([]), 2),                                       # N = 0
                 (t([-3.0, 4.0], F32), t([0, 0]), 1)]                          # S = 1


def segment_sum_spec(values, seg, S):
    out = torch.zeros(S, dtype=values.dtype)
    for i in range(values.shape[0]):
        out[seg[i]] += values[i]
    return out


@exercise(
    spec=segment_sum_spec,
    signature="values: (N,) float, seg: (N,) int64 in [0, S), S: int  ->  (S,) float",
    allowed=("scatter", "sum", "gather") + BASE,
    edge_cases=SEGMENT_EDGES,
    strategy=_segment_cases,
    right=[lambda v, s, S: torch.zeros(S, device=v.device).index_add(0, s, v),
           lambda v, s, S: (v.unsqueeze(1) * (s.unsqueeze(1) == torch.arange(S, device=v.device))).sum(0),
           lambda v, s, S: torch.zeros(S, device=v.device).scatter_reduce(0, s, v, reduce="sum")],
    mistakes=[Mistake("scatter_last_wins", lambda v, s, S: torch.zeros(S).scatter(0, s, v)),
              Mistake("counts", lambda v, s, S: torch.zeros(S).scatter_add(0, s, torch.ones_like(v))),
              Mistake("gather_not_scatter", lambda v, s, S: v.gather(0, s))],
    taught_in="05_scatter",
    atol=1e-6,
)
def segment_sum(values, seg, S):
    out = torch.zeros(S, dtype=values.dtype, device=values.device)
    return out.scatter_add(0, seg, values)  # duplicates in seg add up


def segment_max_spec(values, seg, S):
    out = torch.zeros(S, dtype=values.dtype)
    seen = [False] * S
    for i in range(values.shape[0]):
        s = int(seg[i])
        if not seen[s] or values[i] > out[s]:
            out[s] = values[i]
            seen[s] = True
    return out  # an empty segment stays 0


@exercise(
    spec=segment_max_spec,
    signature="values: (N,) float, seg: (N,) int64 in [0, S), S: int  ->  (S,) float",
    allowed=("scatter", "index_reduce") + BASE,
    edge_cases=SEGMENT_EDGES,
    strategy=_segment_cases,
    right=[lambda v, s, S: torch.full((S,), -INF, device=v.device).scatter_reduce(0, s, v, reduce="amax").masked_fill(
               torch.full((S,), -INF, device=v.device).scatter_reduce(0, s, v, reduce="amax") == -INF, 0.0),
           lambda v, s, S: torch.zeros(S, device=v.device).index_reduce(0, s, v, "amax", include_self=False),
           lambda v, s, S: torch.full((S,), -INF, device=v.device).index_reduce(0, s, v, "amax").masked_fill(torch.full((S,), -INF, device=v.device).index_reduce(0, s, v, "amax") == -INF, 0.0)],
    mistakes=[Mistake("include_self", lambda v, s, S: torch.zeros(S).scatter_reduce(0, s, v, reduce="amax")),
              Mistake("scatter_last_wins", lambda v, s, S: torch.zeros(S).scatter(0, s, v)),
              Mistake("amin", lambda v, s, S: torch.zeros(S).scatter_reduce(0, s, v, reduce="amin",
                                                                          include_self=False))],
    taught_in="05_scatter",
    atol=1e-6,
)
def segment_max(values, seg, S):
    out = torch.zeros(S, dtype=values.dtype, device=values.device)
    return out.scatter_reduce(0, seg, values, reduce="amax", include_self=False)


def segment_mean_spec(values, seg, S):
    total = [0.0] * S
    count = [0] * S
    for i in range(values.shape[0]):
        total[int(seg[i])] += float(values[i])
        count[int(seg[i])] += 1
    means = [tot / c if c else 0.0 for tot, c in zip(total, count)]
    return torch.tensor(means, dtype=values.dtype)


@exercise(
    spec=segment_mean_spec,
    signature="values: (N,) float, seg: (N,) int64 in [0, S), S: int  ->  (S,) float",
    allowed=("scatter",) + BASE,
    edge_cases=SEGMENT_EDGES,
    strategy=_segment_cases,
    right=[lambda v, s, S: torch.zeros(S, device=v.device).scatter_reduce(0, s, v, reduce="mean", include_self=False),
           lambda v, s, S: torch.zeros(S, device=v.device).index_add(0, s, v)
           / torch.zeros(S, device=v.device).index_add(0, s, torch.ones_like(v)).clamp(min=1),
           lambda v, s, S: torch.zeros(S, device=v.device).index_add(0, s, v) / torch.maximum(torch.zeros(S, device=v.device).index_add(0, s, torch.ones_like(v)), torch.ones(S, device=v.device))],
    mistakes=[Mistake("include_self", lambda v, s, S: torch.zeros(S).scatter_reduce(0, s, v, reduce="mean")),
              Mistake("divide_by_n", lambda v, s, S: torch.zeros(S).scatter_add(0, s, v) / max(v.shape[0], 1)),
              Mistake("nan_on_empty", lambda v, s, S: torch.zeros(S).scatter_add(0, s, v)
                    / torch.zeros(S).scatter_add(0, s, torch.ones_like(v)))],
    taught_in="05_scatter",
    atol=1e-6,
)
def segment_mean(values, seg, S):
    zeros = torch.zeros(S, dtype=values.dtype, device=values.device)
    total = zeros.scatter_add(0, seg, values)
    count = zeros.scatter_add(0, seg, torch.ones_like(values))
    return total / count.clamp(min=1)  # an empty segment: 0 / 1 = 0
