"""Level 4, scatter and inverses: segment sums and means, the inverse permutation, ranks,
point features splatted into a grid (index_put_ with accumulate), a segment's argmax and its
softmax.
"""
from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

from gatherbook.exercises.declaration import Mistake, exercise
from gatherbook.exercises.cases import F32, I64, f, t
from gatherbook.exercises.strategies import distinct, floats, index, ints, perm
from gatherbook.exercises.strategies import DTYPES

PART = "puzzles"  # the exercises' names: "puzzles.<name>"
PAGE = ("4a", "08_practice_4a_scatter")  # the page of the ladder: its number, its notebook
BASE = ("arith", "compare", "shape", "create", "where", "scatter")
INF = float("inf")


# --------------------------------------------------------------------------------------------
@st.composite
def _segment_cases(draw):
    N, S = draw(st.integers(0, 10)), draw(st.integers(1, 4))
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
    B, N, dtype = draw(st.integers(0, 3)), draw(st.integers(0, 10)), draw(st.sampled_from(DTYPES))
    return (draw(distinct(B, N, dtype=dtype)),)   # any dtype: the ranks are int64 all the same


@exercise(
    spec=rank_spec,
    signature="x: (B, N), values distinct within a row  ->  (B, N) int64",
    allowed=("argsort", "scatter", "sum") + BASE + ("empty_like", "repeat"),
    limits={"argsort": 1},
    edge_cases=[(t([[30, -10, 20, 0], [5, 7, 6, -1]]),), (t([[-4]]),),
                ((torch.arange(20) * 7 % 20 - 9.5).to(F32).unsqueeze(0) / 4,),   # a float row of 20: a long sort
                (torch.zeros(0, 3, dtype=I64),), (t([[2, 1, 0]]),)],
    strategy=_rank_cases,
    right=[lambda x: (x.unsqueeze(2) > x.unsqueeze(1)).sum(2),
           lambda x: torch.empty_like(x, dtype=torch.int64).scatter_(1, x.argsort(dim=1), torch.arange(x.shape[1], device=x.device).repeat(x.shape[0], 1)),
           lambda x: torch.zeros_like(x, dtype=torch.int64).scatter_add(1, x.argsort(dim=1), torch.arange(x.shape[1], device=x.device).expand_as(x))],
    mistakes=[Mistake("order_not_rank", lambda x: x.argsort(dim=1)),
              Mistake("descending", lambda x: torch.zeros_like(x, dtype=torch.int64).scatter(
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
def splat_points_spec(feat, ys, xs, H, W):
    out = torch.zeros(H, W, dtype=feat.dtype)
    for n in range(feat.shape[0]):
        out[ys[n], xs[n]] += feat[n]                 # points on the same cell add up
    return out


@st.composite
def _splat_cases(draw):
    N, H, W = draw(st.integers(0, 6)), draw(st.integers(1, 3)), draw(st.integers(1, 10))
    return draw(floats((N,))), draw(index((N,), H)), draw(index((N,), W)), H, W


@exercise(
    spec=splat_points_spec,
    signature="feat: (N,) float, ys: (N,) int64 in [0, H), xs: (N,) int64 in [0, W), H: int, W: int"
              "  ->  (H, W) float",
    allowed=("index_put", "sum", "arith", "compare", "shape", "create", "where"),  # no scatter
    edge_cases=[(f([1.5, -2.0, 0.25, 3.0, 0.5]), t([0, 1, 0, 1, 0]), t([2, 0, 2, 1, 0]), 2, 3),  # cell (0, 2) twice
                (f([-1.0, -0.5]), t([0, 0]), t([9, 9]), 1, 10),                                # H = 1, W past 8
                (f([4.0]), t([2]), t([0]), 3, 1),                                               # W = 1
                (f([]), t([]), t([]), 2, 2)],
    strategy=_splat_cases,
    right=[lambda v, y, x, H, W: torch.zeros(H, W, device=v.device).index_put((y, x), v, accumulate=True),
           lambda v, y, x, H, W: torch.zeros(H * W, device=v.device).index_put_((y * W + x,), v, accumulate=True).view(H, W),
           lambda v, y, x, H, W: (((y[:, None, None] == torch.arange(H, device=v.device)[:, None])
                                   & (x[:, None, None] == torch.arange(W, device=v.device))) * v[:, None, None]).sum(0)],
    mistakes=[Mistake("no_accumulate", lambda v, y, x, H, W: torch.zeros(H, W).index_put((y, x), v)),
              Mistake("counts", lambda v, y, x, H, W: torch.zeros(H, W).index_put((y, x), torch.ones_like(v), accumulate=True)),
              Mistake("transposed", lambda v, y, x, H, W: torch.zeros(W, H).index_put((x, y), v, accumulate=True)),
              Mistake("result_dropped", lambda v, y, x, H, W: torch.zeros(H, W)),
              Mistake("flat_stride_h", lambda v, y, x, H, W: torch.zeros(H * W + H * H).index_put(
                  (y * H + x,), v, accumulate=True)[:H * W].view(H, W))],
    taught_in="05_scatter",
    atol=1e-5,
)
def splat_points(feat, ys, xs, H, W):
    grid = torch.zeros(H, W, dtype=feat.dtype, device=feat.device)
    # one index per dim: point n goes to grid[ys[n], xs[n]]; accumulate adds repeats
    return grid.index_put_((ys, xs), feat, accumulate=True)


# --------------------------------------------------------------------------------------------
def segment_argmax_spec(values, seg, S):
    out = torch.full((S,), -1, dtype=torch.int64)
    for i in range(values.shape[0]):
        s = int(seg[i])
        # ties: the first (smallest i) stays
        if out[s] < 0 or values[i] > values[out[s]]:
            out[s] = i
    return out                                         # an empty segment: -1


@st.composite
def _segment_argmax_cases(draw):
    N, S = draw(st.integers(0, 10)), draw(st.integers(1, 4))
    return draw(ints((N,), -6, 6)).to(F32) / 4, draw(index((N,), S)), S   # quarters: ties are common


def _seg_best(v, s, S):
    top = torch.full((S,), -INF, device=v.device).scatter_reduce(0, s, v, reduce="amax")
    return v == top.gather(0, s)                      # (N,): each value that is its segment's max


def _first_true(flag, s, S, reduce="amin"):
    N = flag.shape[0]
    pos = torch.where(flag, torch.arange(N, device=flag.device), N if reduce == "amin" else -1)
    out = torch.full((S,), N if reduce == "amin" else -1, device=flag.device).scatter_reduce(0, s, pos, reduce=reduce)
    return torch.where((out == N) | (out < 0), -1, out)


@exercise(
    spec=segment_argmax_spec,
    signature="values: (N,) float, seg: (N,) int64 in [0, S), S: int  ->  (S,) int64 in [-1, N)",
    allowed=("scatter", "gather") + BASE,
    edge_cases=[(f([1.5, -2.0, 3.0, 0.5, 3.0, -1.0]), t([0, 2, 0, 2, 0, 2]), 4),    # a tie in 0; 1, 3 empty
                (f([-1.5, -0.5, -0.5]), t([1, 1, 1]), 2),                            # negatives, a tie
                (f([2.0]), t([0]), 1),                                              # N = 1, S = 1
                (f([]), t([]), 3)],                                                 # N = 0: all -1
    strategy=_segment_argmax_cases,
    right=[lambda v, s, S: _first_true(_seg_best(v, s, S), s, S),
           lambda v, s, S: (lambda best: torch.where(best == v.shape[0], -1, best))(
               torch.full((S,), v.shape[0], device=v.device).scatter_reduce(
                   0, s, torch.where(_seg_best(v, s, S), torch.arange(v.shape[0], device=v.device), v.shape[0]), "amin")),
           lambda v, s, S: torch.where(  # the largest -i is the smallest i
               torch.full((S,), -v.shape[0], device=v.device).scatter_reduce(0, s, torch.where(
                   _seg_best(v, s, S), -torch.arange(v.shape[0], device=v.device), -v.shape[0]), "amax") == -v.shape[0],
               -1, -torch.full((S,), -v.shape[0], device=v.device).scatter_reduce(0, s, torch.where(
                   _seg_best(v, s, S), -torch.arange(v.shape[0], device=v.device), -v.shape[0]), "amax"))],
    mistakes=[Mistake("last_tie", lambda v, s, S: _first_true(_seg_best(v, s, S), s, S, reduce="amax")),
              Mistake("empty_zero", lambda v, s, S: torch.zeros(S, dtype=torch.int64).scatter_reduce(
                  0, s, torch.where(_seg_best(v, s, S), torch.arange(v.shape[0]), v.shape[0]), "amin", include_self=False)),
              Mistake("include_self", lambda v, s, S: _first_true(
                  v == torch.zeros(S).scatter_reduce(0, s, v, reduce="amax").gather(0, s), s, S)),
              Mistake("global_max", lambda v, s, S: _first_true(v == v.max() if v.numel() else v == 0, s, S))],
    taught_in="05_scatter",
    atol=0,
)
def segment_argmax(values, seg, S):
    N = values.shape[0]
    top = torch.full((S,), float("-inf"), device=values.device)
    top = top.scatter_reduce(0, seg, values, "amax")
    # (N,): a maximum of its segment
    is_top = values == top.gather(0, seg)
    # the others: N
    pos = torch.where(is_top, torch.arange(N, device=values.device), N)
    first = torch.full((S,), N, device=values.device)
    first = first.scatter_reduce(0, seg, pos, "amin")
    return torch.where(first == N, -1, first)             # an empty segment kept N: -1


# --------------------------------------------------------------------------------------------
def segment_softmax_spec(values, seg, S):
    N = values.shape[0]
    out = torch.zeros(N, dtype=values.dtype)
    for s in range(S):
        members = [i for i in range(N) if seg[i] == s]
        if not members:
            continue
        # shift by the segment's max: no overflow
        m = max(float(values[i]) for i in members)
        total = sum(math.exp(float(values[i]) - m) for i in members)
        for i in members:
            out[i] = math.exp(float(values[i]) - m) / total
    return out


@st.composite
def _segment_softmax_cases(draw):
    N, S = draw(st.integers(0, 10)), draw(st.integers(1, 4))
    v = draw(floats((N,)))
    big = draw(st.sampled_from([0.0, 0.0, 100.0, -200.0]))              # logits past exp's range
    return v + big * (draw(index((N,), 2)) == 1), draw(index((N,), S)), S


def _softmax_by(v, s, S, shift):
    e = (v - shift).exp()
    return e / torch.zeros(S, device=v.device).scatter_add(0, s, e).gather(0, s)


@exercise(
    spec=segment_softmax_spec,
    signature="values: (N,) float, seg: (N,) int64 in [0, S), S: int  ->  (N,) float",
    allowed=("scatter", "gather", "exp") + BASE,
    edge_cases=[(f([1.0, 2.0, -1.0, 3.0]), t([0, 0, 2, 0]), 3),               # segment 1 empty
                (f([100.0, 101.0, -200.0, -201.0]), t([0, 0, 1, 1]), 2),      # exp overflows, underflows
                (f([-4.5]), t([0]), 1),                                        # one value: 1
                (f([]), t([]), 2)],
    strategy=_segment_softmax_cases,
    right=[lambda v, s, S: _softmax_by(v, s, S, torch.full((S,), -INF, device=v.device).scatter_reduce(0, s, v, "amax").gather(0, s)),
           lambda v, s, S: _softmax_by(v, s, S, torch.zeros(S, device=v.device).scatter_reduce(
               0, s, v, "amax", include_self=False).gather(0, s)),
           lambda v, s, S: (lambda e: e / torch.zeros(S, device=v.device).index_add(0, s, e).gather(0, s))(
               (v - torch.full((S,), -INF, device=v.device).scatter_reduce(0, s, v, "amax").gather(0, s)).exp())],
    mistakes=[Mistake("no_shift", lambda v, s, S: _softmax_by(v, s, S, 0.0)),
              Mistake("global_shift", lambda v, s, S: _softmax_by(v, s, S, v.max() if v.numel() else 0.0)),
              Mistake("global_softmax", lambda v, s, S: v.softmax(0)),
              Mistake("scatter_not_add", lambda v, s, S: (lambda e: e / torch.zeros(S).scatter(0, s, e).gather(0, s))(
                  (v - torch.full((S,), -INF).scatter_reduce(0, s, v, "amax").gather(0, s)).exp()))],
    second_example=(f([100.0, 101.0]), t([0, 0]), 1),  # drawn beside the first: exp(100) overflows
    taught_in="05_scatter",
    atol=1e-5,
)
def segment_softmax(values, seg, S):
    top = torch.full((S,), float("-inf"), device=values.device)
    top = top.scatter_reduce(0, seg, values, "amax")
    # (N,): at most 1, the max gives 1
    e = (values - top.gather(0, seg)).exp()
    total = torch.zeros(S, device=values.device).scatter_add(0, seg, e)
    return e / total.gather(0, seg)
