"""Level 4, scatter and inverses: inverse permutation, rank, one-hot, histograms, segment
reductions, ragged <-> padded, and Mixture-of-Experts dispatch and combine."""
from __future__ import annotations

import torch
from hypothesis import strategies as st

from gatherbook.puzzles._core import Puzzle, Wrong
from gatherbook.puzzles._strategies import F32, I64, coded, distinct, floats, index, ints, lengths, perm, t

BASE = ("arith", "compare", "shape", "create", "where")
INF = float("inf")


# --------------------------------------------------------------------------------------------
def inverse_perm_spec(perm):
    N = perm.shape[0]
    inv = torch.zeros(N, dtype=perm.dtype)
    for i in range(N):
        inv[perm[i]] = i
    return inv


def inverse_perm(perm):
    N = perm.shape[0]
    positions = torch.arange(N, device=perm.device)
    return torch.zeros_like(perm).scatter(0, perm, positions)  # inv[perm[i]] = i


@st.composite
def _inverse_perm_cases(draw):
    return (draw(perm(draw(st.integers(0, 7)))),)


INVERSE_PERM = Puzzle(
    name="inverse_perm", level=4, args=("perm",), spec=inverse_perm_spec, solution=inverse_perm,
    rights=[lambda p: torch.empty_like(p).scatter_(0, p, torch.arange(p.shape[0], device=p.device)),
            lambda p: p.scatter(0, p, torch.arange(p.shape[0], device=p.device)),
            lambda p: torch.zeros_like(p).scatter_add(0, p, torch.arange(p.shape[0], device=p.device))],
    wrongs=[Wrong("compose", lambda p: p.gather(0, p)),
            Wrong("scatter_swapped", lambda p: torch.zeros_like(p).scatter(0, torch.arange(p.shape[0]), p)),
            Wrong("one_based", lambda p: torch.zeros_like(p).scatter(0, p, torch.arange(1, p.shape[0] + 1)))],
    allowed=("scatter", "gather") + BASE + ("empty_like",),
    edges=[(t([2, 0, 3, 1]),), (t([0]),), (t([]),), (t([1, 2, 0]),)],
    cases=_inverse_perm_cases, chapter="05_scatter",
    signature="perm: (N,) int64, a permutation of 0..N-1  ->  (N,) int64",
)


# --------------------------------------------------------------------------------------------
def rank_spec(x):
    B, N = x.shape
    out = torch.zeros(B, N, dtype=torch.int64)
    for b in range(B):
        for i in range(N):
            out[b, i] = sum(1 for j in range(N) if x[b, j] < x[b, i])
    return out


def rank(x):
    B, N = x.shape
    # order[b][r]: the r-th smallest
    order = x.argsort(dim=1)
    ranks = torch.arange(N, device=x.device).expand(B, N)
    return torch.zeros_like(order).scatter(1, order, ranks)   # rank[b][order[b][r]] = r


@st.composite
def _rank_cases(draw):
    B, N = draw(st.integers(0, 3)), draw(st.integers(0, 5))
    return (draw(distinct(B, N)),)


RANK = Puzzle(
    name="rank", level=4, args=("x",), spec=rank_spec, solution=rank,
    rights=[lambda x: (x.unsqueeze(2) > x.unsqueeze(1)).sum(2),
            lambda x: torch.empty_like(x).scatter_(1, x.argsort(dim=1), torch.arange(x.shape[1], device=x.device).repeat(x.shape[0], 1)),
            lambda x: torch.zeros_like(x).scatter_add(1, x.argsort(dim=1), torch.arange(x.shape[1], device=x.device).expand_as(x))],
    wrongs=[Wrong("order_not_rank", lambda x: x.argsort(dim=1)),
            Wrong("descending", lambda x: torch.zeros_like(x).scatter(
                1, x.argsort(dim=1, descending=True), torch.arange(x.shape[1]).expand_as(x))),
            Wrong("counts_itself", lambda x: (x.unsqueeze(2) >= x.unsqueeze(1)).sum(2))],
    allowed=("argsort", "scatter", "sum") + BASE + ("empty_like", "repeat"),
    limits={"argsort": 1},
    edges=[(t([[30, -10, 20, 0], [5, 7, 6, -1]]),), (t([[-4]]),),
           (torch.zeros(0, 3, dtype=I64),), (t([[2, 1, 0]]),)],
    cases=_rank_cases, chapter="05_scatter",
    signature="x: (B, N), values distinct within a row  ->  (B, N) int64",
)


# --------------------------------------------------------------------------------------------
def one_hot_spec(idx, C):
    N = idx.shape[0]
    out = torch.zeros(N, C, dtype=torch.int64)
    for i in range(N):
        out[i, idx[i]] = 1
    return out


def one_hot(idx, C):
    N = idx.shape[0]
    out = torch.zeros(N, C, dtype=torch.int64, device=idx.device)
    return out.scatter(1, idx.unsqueeze(1), 1)  # row i: a 1 in column idx[i]


@st.composite
def _one_hot_cases(draw):
    N, C = draw(st.integers(0, 5)), draw(st.integers(1, 5))
    return draw(index((N,), C)), C


ONE_HOT = Puzzle(
    name="one_hot", level=4, args=("idx", "C"), spec=one_hot_spec, solution=one_hot,
    rights=[lambda idx, C: (idx.unsqueeze(1) == torch.arange(C, device=idx.device)).long(),
            lambda idx, C: torch.zeros(idx.shape[0], C, dtype=torch.long, device=idx.device).scatter_(
                1, idx[:, None], torch.ones(idx.shape[0], 1, dtype=torch.long, device=idx.device)),
            lambda idx, C: torch.zeros(idx.shape[0], C, dtype=torch.long, device=idx.device).scatter_add(1, idx[:, None], torch.ones(idx.shape[0], 1, dtype=torch.long, device=idx.device))],
    wrongs=[Wrong("float_dtype", lambda idx, C: torch.zeros(idx.shape[0], C).scatter(1, idx[:, None], 1.0)),
            Wrong("scatter_dim0", lambda idx, C: torch.zeros(idx.shape[0], C, dtype=torch.long)
                  .scatter(0, idx[:, None], 1)),
            Wrong("transposed", lambda idx, C: torch.zeros(C, idx.shape[0], dtype=torch.long)
                  .scatter(0, idx[None], 1))],
    allowed=("scatter",) + BASE,
    edges=[(t([2, 0, 3, 0]), 4), (t([]), 3), (t([0, 0]), 1), (t([1]), 2)],
    cases=_one_hot_cases, chapter="05_scatter",
    signature="idx: (N,) int64 in [0, C), C: int  ->  (N, C) int64",
)


# --------------------------------------------------------------------------------------------
def histogram_spec(x, C):
    B, N = x.shape
    out = torch.zeros(B, C, dtype=torch.int64)
    for b in range(B):
        for i in range(N):
            out[b, x[b, i]] += 1
    return out


def histogram(x, C):
    B = x.shape[0]
    counts = torch.zeros(B, C, dtype=torch.int64, device=x.device)
    # each value adds 1 to its own bin
    return counts.scatter_add(1, x, torch.ones_like(x))


@st.composite
def _histogram_cases(draw):
    B, N, C = (draw(st.integers(lo, hi)) for lo, hi in ((0, 3), (0, 6), (1, 4)))
    return draw(index((B, N), C)), C


HISTOGRAM = Puzzle(
    name="histogram", level=4, args=("x", "C"), spec=histogram_spec, solution=histogram,
    rights=[lambda x, C: (x.unsqueeze(2) == torch.arange(C, device=x.device)).sum(1),
            lambda x, C: torch.zeros(x.shape[0], C, dtype=torch.long, device=x.device).scatter_reduce(
                1, x, torch.ones_like(x), reduce="sum"),
            lambda x, C: torch.zeros(x.shape[0] * C, dtype=torch.long, device=x.device).scatter_add(0, (x + torch.arange(x.shape[0], device=x.device)[:, None] * C).flatten(), torch.ones(x.numel(), dtype=torch.long, device=x.device)).view(x.shape[0], C)],
    wrongs=[Wrong("scatter_not_add", lambda x, C: torch.zeros(x.shape[0], C, dtype=torch.long)
                  .scatter(1, x, torch.ones_like(x))),
            Wrong("dim0", lambda x, C: torch.zeros(x.shape[0], C, dtype=torch.long)
                  .scatter_add(0, x, torch.ones_like(x))),
            Wrong("float_counts", lambda x, C: torch.zeros(x.shape[0], C).scatter_add(
                1, x, torch.ones_like(x, dtype=torch.float32)))],
    allowed=("scatter", "sum") + BASE,
    edges=[(t([[0, 2, 2, 1, 2], [3, 3, 0, 0, 0]]), 4),
           (torch.zeros(2, 0, dtype=I64), 3),          # N = 0: all bins empty
           (t([[0, 0, 0]]), 1)],                       # B = 1, C = 1
    cases=_histogram_cases, chapter="05_scatter",
    signature="x: (B, N) int64 in [0, C), C: int  ->  (B, C) int64",
)


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


def segment_sum(values, seg, S):
    out = torch.zeros(S, dtype=values.dtype, device=values.device)
    return out.scatter_add(0, seg, values)  # duplicates in seg add up


SEGMENT_SUM = Puzzle(
    name="segment_sum", level=4, args=("values", "seg", "S"), spec=segment_sum_spec,
    solution=segment_sum,
    rights=[lambda v, s, S: torch.zeros(S, device=v.device).index_add(0, s, v),
            lambda v, s, S: (v.unsqueeze(1) * (s.unsqueeze(1) == torch.arange(S, device=v.device))).sum(0),
            lambda v, s, S: torch.zeros(S, device=v.device).scatter_reduce(0, s, v, reduce="sum")],
    wrongs=[Wrong("scatter_last_wins", lambda v, s, S: torch.zeros(S).scatter(0, s, v)),
            Wrong("counts", lambda v, s, S: torch.zeros(S).scatter_add(0, s, torch.ones_like(v))),
            Wrong("gather_not_scatter", lambda v, s, S: v.gather(0, s))],
    allowed=("scatter", "sum", "gather") + BASE,
    edges=SEGMENT_EDGES, cases=_segment_cases, chapter="05_scatter",
    signature="values: (N,) float, seg: (N,) int64 in [0, S), S: int  ->  (S,) float",
)


def segment_max_spec(values, seg, S):
    out = torch.zeros(S, dtype=values.dtype)
    seen = [False] * S
    for i in range(values.shape[0]):
        s = int(seg[i])
        if not seen[s] or values[i] > out[s]:
            out[s] = values[i]
            seen[s] = True
    return out  # an empty segment stays 0


def segment_max(values, seg, S):
    out = torch.zeros(S, dtype=values.dtype, device=values.device)
    return out.scatter_reduce(0, seg, values, reduce="amax", include_self=False)


SEGMENT_MAX = Puzzle(
    name="segment_max", level=4, args=("values", "seg", "S"), spec=segment_max_spec,
    solution=segment_max,
    rights=[lambda v, s, S: torch.full((S,), -INF, device=v.device).scatter_reduce(0, s, v, reduce="amax").masked_fill(
                torch.full((S,), -INF, device=v.device).scatter_reduce(0, s, v, reduce="amax") == -INF, 0.0),
            lambda v, s, S: torch.zeros(S, device=v.device).index_reduce(0, s, v, "amax", include_self=False),
            lambda v, s, S: torch.full((S,), -INF, device=v.device).index_reduce(0, s, v, "amax").masked_fill(torch.full((S,), -INF, device=v.device).index_reduce(0, s, v, "amax") == -INF, 0.0)],
    wrongs=[Wrong("include_self", lambda v, s, S: torch.zeros(S).scatter_reduce(0, s, v, reduce="amax")),
            Wrong("scatter_last_wins", lambda v, s, S: torch.zeros(S).scatter(0, s, v)),
            Wrong("amin", lambda v, s, S: torch.zeros(S).scatter_reduce(0, s, v, reduce="amin",
                                                                        include_self=False))],
    allowed=("scatter", "index_reduce") + BASE,
    edges=SEGMENT_EDGES, cases=_segment_cases, chapter="05_scatter",
    signature="values: (N,) float, seg: (N,) int64 in [0, S), S: int  ->  (S,) float",
)


def segment_mean_spec(values, seg, S):
    total = [0.0] * S
    count = [0] * S
    for i in range(values.shape[0]):
        total[int(seg[i])] += float(values[i])
        count[int(seg[i])] += 1
    means = [tot / c if c else 0.0 for tot, c in zip(total, count)]
    return torch.tensor(means, dtype=values.dtype)


def segment_mean(values, seg, S):
    zeros = torch.zeros(S, dtype=values.dtype, device=values.device)
    total = zeros.scatter_add(0, seg, values)
    count = zeros.scatter_add(0, seg, torch.ones_like(values))
    return total / count.clamp(min=1)  # an empty segment: 0 / 1 = 0


SEGMENT_MEAN = Puzzle(
    name="segment_mean", level=4, args=("values", "seg", "S"), spec=segment_mean_spec,
    solution=segment_mean,
    rights=[lambda v, s, S: torch.zeros(S, device=v.device).scatter_reduce(0, s, v, reduce="mean", include_self=False),
            lambda v, s, S: torch.zeros(S, device=v.device).index_add(0, s, v)
            / torch.zeros(S, device=v.device).index_add(0, s, torch.ones_like(v)).clamp(min=1),
            lambda v, s, S: torch.zeros(S, device=v.device).index_add(0, s, v) / torch.maximum(torch.zeros(S, device=v.device).index_add(0, s, torch.ones_like(v)), torch.ones(S, device=v.device))],
    wrongs=[Wrong("include_self", lambda v, s, S: torch.zeros(S).scatter_reduce(0, s, v, reduce="mean")),
            Wrong("divide_by_n", lambda v, s, S: torch.zeros(S).scatter_add(0, s, v) / max(v.shape[0], 1)),
            Wrong("nan_on_empty", lambda v, s, S: torch.zeros(S).scatter_add(0, s, v)
                  / torch.zeros(S).scatter_add(0, s, torch.ones_like(v)))],
    allowed=("scatter",) + BASE,
    edges=SEGMENT_EDGES, cases=_segment_cases, chapter="05_scatter",
    signature="values: (N,) float, seg: (N,) int64 in [0, S), S: int  ->  (S,) float",
)


# --------------------------------------------------------------------------------------------
def ragged_to_padded_spec(values, lengths, L, pad):
    B = lengths.shape[0]
    out = torch.full((B, L), pad, dtype=values.dtype)
    start = 0
    for b in range(B):
        n = int(lengths[b])
        for j in range(n):
            out[b, j] = values[start + j]
        start += n
    return out


def ragged_to_padded(values, lengths, L, pad):
    # (B,): where each sequence starts
    starts = lengths.cumsum(0) - lengths
    pos = torch.arange(L, device=values.device)             # (L,)
    # (B, L), kept in range
    src = (starts.unsqueeze(1) + pos).clamp(max=values.shape[0] - 1)
    got = values.gather(0, src.flatten()).view(src.shape)
    return torch.where(pos < lengths.unsqueeze(1), got, pad)


@st.composite
def _ragged_cases(draw):
    B, L = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    n = draw(lengths(B, L))
    if int(n.sum()) == 0:
        n[draw(st.integers(0, B - 1))] = 1           # at least one value
    return draw(ints((int(n.sum()),))), n, L, draw(st.integers(-9, -1))


def _starts(n):
    return n.cumsum(0) - n


RAGGED_TO_PADDED = Puzzle(
    name="ragged_to_padded", level=4, args=("values", "lengths", "L", "pad"),
    spec=ragged_to_padded_spec, solution=ragged_to_padded,
    rights=[lambda v, n, L, pad: torch.full((n.shape[0] * L,), pad, device=v.device).scatter(
                0, (torch.arange(v.shape[0], device=v.device).unsqueeze(1) >= n.cumsum(0)).sum(1) * L + torch.arange(v.shape[0], device=v.device)
                - _starts(n).gather(0, (torch.arange(v.shape[0], device=v.device).unsqueeze(1) >= n.cumsum(0)).sum(1)), v)
            .view(n.shape[0], L),
            lambda v, n, L, pad: v.expand(n.shape[0], -1).gather(
                1, (_starts(n)[:, None] + torch.arange(L, device=v.device)).clamp(max=v.shape[0] - 1))
            .masked_fill(torch.arange(L, device=v.device) >= n[:, None], pad),
            lambda v, n, L, pad: torch.where(torch.arange(L, device=v.device) >= n[:, None], pad, v.gather(0, (_starts(n)[:, None] + torch.arange(L, device=v.device)).clamp(max=v.shape[0] - 1).flatten()).view(-1, L))],
    wrongs=[Wrong("inclusive_starts", lambda v, n, L, pad: torch.where(
                torch.arange(L) < n[:, None],
                v.gather(0, (n.cumsum(0)[:, None] + torch.arange(L)).clamp(max=v.shape[0] - 1).flatten())
                .view(-1, L), pad)),
            Wrong("no_mask", lambda v, n, L, pad: v.gather(
                0, (_starts(n)[:, None] + torch.arange(L)).clamp(max=v.shape[0] - 1).flatten()).view(-1, L)),
            Wrong("left_padded", lambda v, n, L, pad: torch.where(
                torch.arange(L) >= L - n[:, None],
                v.gather(0, (_starts(n)[:, None] + torch.arange(L) - (L - n[:, None])).clamp(0, v.shape[0] - 1)
                         .flatten()).view(-1, L), pad))],
    allowed=("gather", "scatter", "cumsum", "sum") + BASE,
    edges=[(t([1, 2, 3, 4, 5, 6]), t([2, 0, 3, 1]), 4, -1),
           (t([7, 8]), t([2]), 3, 0),                     # B = 1
           (t([5, -5]), t([1, 1]), 1, -9)],               # L = 1, full rows
    cases=_ragged_cases, chapter="05_scatter",
    signature="values: (N,), lengths: (B,) int64 summing to N >= 1, L >= max length, pad: int"
              "  ->  (B, L)",
)


# --------------------------------------------------------------------------------------------
def right_to_left_spec(padded, lengths, pad):
    B, L = padded.shape
    out = torch.full((B, L), pad, dtype=padded.dtype)
    for b in range(B):
        n = int(lengths[b])
        for j in range(n):
            out[b, L - n + j] = padded[b, j]
    return out


def right_to_left(padded, lengths, pad):
    L = padded.shape[1]
    pos = torch.arange(L, device=padded.device)          # (L,)
    # (B, 1): pads to move to the front
    shift = (L - lengths).unsqueeze(1)
    src = (pos - shift) % L                              # (B, L): a column in range
    return torch.where(pos >= shift, padded.gather(1, src), pad)


@st.composite
def _right_to_left_cases(draw):
    B, L = draw(st.integers(0, 3)), draw(st.integers(1, 5))
    n = draw(lengths(B, L))
    pad = draw(st.integers(-9, 0))
    return draw(ints((B, L), 0, 9)), n, pad  # cells past a length hold anything


RIGHT_TO_LEFT = Puzzle(
    name="right_to_left", level=4, args=("padded", "lengths", "pad"), spec=right_to_left_spec,
    solution=right_to_left,
    rights=[lambda x, n, pad: x.gather(1, (torch.arange(x.shape[1], device=x.device) + n[:, None]) % x.shape[1])
            .masked_fill(torch.arange(x.shape[1], device=x.device) < x.shape[1] - n[:, None], pad),
            lambda x, n, pad: torch.where(
                torch.arange(x.shape[1], device=x.device) >= x.shape[1] - n[:, None],
                x.gather(1, (torch.arange(x.shape[1], device=x.device) - x.shape[1] + n[:, None]).clamp(min=0)), pad),
            lambda x, n, pad: torch.where(torch.arange(x.shape[1], device=x.device) + n[:, None] >= x.shape[1], x.gather(1, (torch.arange(x.shape[1], device=x.device) + n[:, None]) % x.shape[1]), pad)],
    wrongs=[Wrong("no_mask", lambda x, n, pad: x.gather(1, (torch.arange(x.shape[1]) + n[:, None]) % x.shape[1])),
            Wrong("shift_wrong_way", lambda x, n, pad: torch.where(
                torch.arange(x.shape[1]) >= x.shape[1] - n[:, None],
                x.gather(1, (torch.arange(x.shape[1]) + x.shape[1] - n[:, None]) % x.shape[1]), pad)),
            Wrong("mask_wrong_side", lambda x, n, pad: torch.where(
                torch.arange(x.shape[1]) < n[:, None],
                x.gather(1, (torch.arange(x.shape[1]) + n[:, None]) % x.shape[1]), pad))],
    allowed=("gather",) + BASE,
    edges=[(t([[1, 2, 3, 0, 0], [4, 0, 0, 0, 0], [5, 6, 7, 8, 9]]), t([3, 1, 5]), -1),
           (t([[-1, -1]]), t([0]), -1),                      # an empty sequence
           (t([[3]]), t([1]), 0)],                           # B = 1, L = 1
    cases=_right_to_left_cases, chapter="05_scatter",
    signature="padded: (B, L), lengths: (B,) int64 in [0, L], pad: int  ->  (B, L)",
)


# --------------------------------------------------------------------------------------------
def left_to_ragged_spec(padded, lengths, N):
    B, L = padded.shape
    out = torch.zeros(N, dtype=padded.dtype)
    k = 0
    for b in range(B):
        for j in range(L - int(lengths[b]), L):
            out[k] = padded[b, j]
            k += 1
    return out


def left_to_ragged(padded, lengths, N):
    L = padded.shape[1]
    pos = torch.arange(L, device=padded.device)  # (L,)
    # (B, 1): a row's first real column
    first = (L - lengths).unsqueeze(1)
    # (B, 1): where the row goes in out
    start = (lengths.cumsum(0) - lengths).unsqueeze(1)
    # (B, L): each cell's place in out; the pads go to a spare slot N
    dest = torch.where(pos >= first, start + pos - first, N)
    out = padded.new_zeros(N + 1).scatter(0, dest.flatten(), padded.flatten())
    return out[:N]


@st.composite
def _left_to_ragged_cases(draw):
    B, L = draw(st.integers(0, 3)), draw(st.integers(1, 5))
    n = draw(lengths(B, L))
    return draw(ints((B, L))), n, int(n.sum())  # the pad cells hold anything


def _dest(x, n, N, *, left=True, start=True):
    """Each cell's place in the flat output (the pads' place is N): left or right padding."""
    L = x.shape[1]
    pos = torch.arange(L, device=x.device)
    col = pos - (L - n[:, None]) if left else pos.expand(n.shape[0], -1)
    offset = _starts(n)[:, None] if start else 0
    return torch.where(col >= 0, col + offset, N) if left else torch.where(col < n[:, None], col + offset, N)


def _row_of(n, N):
    """The row each of the N output positions comes from."""
    return (torch.arange(N, device=n.device).unsqueeze(1) >= n.cumsum(0)).sum(1)


LEFT_TO_RAGGED = Puzzle(
    name="left_to_ragged", level=4, args=("padded", "lengths", "N"), spec=left_to_ragged_spec,
    solution=left_to_ragged,
    rights=[lambda x, n, N: x.flatten().gather(
                0, _row_of(n, N) * x.shape[1] + torch.arange(N, device=x.device)
                - _starts(n).gather(0, _row_of(n, N)) + x.shape[1] - n.gather(0, _row_of(n, N))),
            lambda x, n, N: x.new_zeros(N + 1).index_add(0, _dest(x, n, N).flatten(), x.flatten())[:N],
            lambda x, n, N: x.new_zeros(N + 1).scatter(
                0, _dest(x, n, N, left=False).flatten(),
                x.gather(1, (torch.arange(x.shape[1], device=x.device) + x.shape[1] - n[:, None])
                         % x.shape[1]).flatten())[:N]],
    wrongs=[Wrong("right_padding", lambda x, n, N: x.new_zeros(N + 1).scatter(
                0, _dest(x, n, N, left=False).flatten(), x.flatten())[:N]),
            Wrong("no_start", lambda x, n, N: x.new_zeros(N + 1).scatter(
                0, _dest(x, n, N, start=False).flatten(), x.flatten())[:N]),
            Wrong("spare_slot_kept", lambda x, n, N: x.new_zeros(N + 1).scatter(
                0, _dest(x, n, N).flatten(), x.flatten()))],
    allowed=("gather", "scatter", "cumsum", "sum") + BASE,
    edges=[(t([[-1, -1, 1, 2], [-1, -1, -1, 3], [4, 5, 6, 7]]), t([2, 1, 4]), 7),
           (t([[9, -9, 5, 5], [2, -2, 2, 0]]), t([2, 4]), 6),   # repeated values, a full row
           (t([[-1, -1]]), t([0]), 0),                          # B = 1, an empty row: N = 0
           (t([[3]]), t([1]), 1),                               # B = 1, L = 1
           (torch.zeros(0, 3, dtype=torch.int64), t([]), 0)],   # B = 0
    cases=_left_to_ragged_cases, chapter="05_scatter",
    signature="padded: (B, L), lengths: (B,) int64 in [0, L], N: int = lengths.sum()"
              "  ->  (N,), padded's dtype",
)


# --------------------------------------------------------------------------------------------
def moe_dispatch_spec(x, expert, E, C):
    N, D = x.shape
    buf = torch.zeros(E, C, D, dtype=x.dtype)
    used = [0] * E
    for n in range(N):
        e = int(expert[n])
        if used[e] < C:                  # the expert still has a free slot
            buf[e, used[e]] = x[n]
        used[e] += 1                     # a token past the capacity is dropped
    return buf


def moe_dispatch(x, expert, E, C):
    N, D = x.shape
    onehot = (expert.unsqueeze(1) == torch.arange(E, device=x.device)).long()  # (N, E)
    # (N,) rank in expert
    slot = (onehot.cumsum(0) - 1).gather(1, expert.unsqueeze(1)).squeeze(1)
    # dropped tokens go to a spare row
    dest = torch.where(slot < C, expert * C + slot, E * C)
    buf = torch.zeros(E * C + 1, D, dtype=x.dtype, device=x.device)
    buf = buf.scatter(0, dest.unsqueeze(1).expand(-1, D), x)
    return buf[:E * C].view(E, C, D)


def _slot(expert, E):
    onehot = (expert.unsqueeze(1) == torch.arange(E, device=expert.device)).long()
    return (onehot.cumsum(0) - 1).gather(1, expert.unsqueeze(1)).squeeze(1)


def _dispatch(x, dest, E, C, rows):
    buf = torch.zeros(rows, x.shape[1], dtype=x.dtype).scatter(0, dest.unsqueeze(1).expand(-1, x.shape[1]), x)
    return buf[:E * C].view(E, C, x.shape[1])


@st.composite
def _moe_dispatch_cases(draw):
    N, D, E, C = (draw(st.integers(lo, hi)) for lo, hi in ((0, 6), (1, 2), (1, 3), (1, 3)))
    return draw(ints((N, D))), draw(index((N,), E)), E, C


MOE_DISPATCH = Puzzle(
    name="moe_dispatch", level=4, args=("x", "expert", "E", "C"), spec=moe_dispatch_spec,
    solution=moe_dispatch,
    rights=[lambda x, e, E, C: torch.zeros(E * C + 1, x.shape[1], dtype=x.dtype, device=x.device).index_add(
                0, torch.where(_slot(e, E) < C, e * C + _slot(e, E), E * C), x)[:E * C].view(E, C, -1),
            lambda x, e, E, C: torch.zeros(E * C + 1, x.shape[1], dtype=x.dtype, device=x.device).scatter_add(
                0, torch.where(_slot(e, E) < C, e * C + _slot(e, E), E * C)[:, None].expand(-1, x.shape[1]), x)
            [:E * C].view(E, C, x.shape[1]),
            lambda x, e, E, C: torch.zeros(E * C + 1, x.shape[1], dtype=x.dtype, device=x.device).scatter_reduce(0, torch.where(_slot(e, E) < C, e * C + _slot(e, E), E * C)[:, None].expand(-1, x.shape[1]), x, reduce="sum")[:E * C].view(E, C, x.shape[1])],
    wrongs=[Wrong("no_capacity", lambda x, e, E, C: _dispatch(x, e * C + _slot(e, E), E, C, E * C)),
            Wrong("slot_from_one", lambda x, e, E, C: _dispatch(
                x, torch.where(_slot(e, E) + 1 < C, e * C + _slot(e, E) + 1, E * C), E, C, E * C + 1)),
            Wrong("global_slot", lambda x, e, E, C: _dispatch(
                x, torch.where(torch.arange(x.shape[0]) < C, e * C + torch.arange(x.shape[0]), E * C),
                E, C, E * C + 1))],
    allowed=("gather", "scatter", "cumsum") + BASE,
    edges=[(coded(5, 2), t([1, 0, 1, 1, 0]), 3, 2),     # token 3 dropped, expert 2 empty
           (torch.zeros(0, 2, dtype=I64), t([]), 2, 1),  # N = 0
           (t([[4], [-4]]), t([0, 0]), 1, 1),            # E = 1, C = 1, D = 1
           (t([[5, -5]]), t([1]), 2, 1)],                # N = 1
    cases=_moe_dispatch_cases, chapter="07_generation",
    signature="x: (N, D), expert: (N,) int64 in [0, E), E: int, C: int >= 1  ->  (E, C, D)",
)


# --------------------------------------------------------------------------------------------
def moe_combine_spec(buf, expert, slot, weight):
    E, C, D = buf.shape
    N = expert.shape[0]
    out = torch.zeros(N, D, dtype=buf.dtype)
    for n in range(N):
        # slot -1: the token was dropped, its output is 0
        if slot[n] >= 0:
            out[n] = weight[n] * buf[expert[n], slot[n]]
    return out


def moe_combine(buf, expert, slot, weight):
    E, C, D = buf.shape
    # (N,): row of the flat buffer
    rows = expert * C + slot.clamp(min=0)
    got = buf.view(E * C, D).gather(0, rows.unsqueeze(1).expand(-1, D))  # (N, D)
    return torch.where((slot >= 0).unsqueeze(1), got * weight.unsqueeze(1), 0.0)


@st.composite
def _moe_combine_cases(draw):
    N, D, E, C = (draw(st.integers(lo, hi)) for lo, hi in ((0, 5), (1, 2), (1, 3), (1, 3)))
    return (draw(floats((E, C, D))), draw(index((N,), E)), draw(ints((N,), -1, C - 1)),
            draw(floats((N,), 0, 10)))


def _rows(buf, e, s):
    return (e * buf.shape[1] + s.clamp(min=0)).unsqueeze(1).expand(-1, buf.shape[2])


MOE_COMBINE = Puzzle(
    name="moe_combine", level=4, args=("buf", "expert", "slot", "weight"), spec=moe_combine_spec,
    solution=moe_combine,
    rights=[lambda b, e, s, w: b.flatten(0, 1).gather(0, _rows(b, e, s)) * (w * (s >= 0)).unsqueeze(1),
            lambda b, e, s, w: (b.view(-1, b.shape[2]).gather(0, _rows(b, e, s)) * w[:, None])
            .masked_fill(s[:, None] < 0, 0.0),
            lambda b, e, s, w: b.flatten().gather(0, ((e * b.shape[1] + s.clamp(min=0))[:, None] * b.shape[2] + torch.arange(b.shape[2], device=b.device)).flatten()).view(-1, b.shape[2]) * (w * (s >= 0))[:, None]],
    wrongs=[Wrong("no_weight", lambda b, e, s, w: b.flatten(0, 1).gather(0, _rows(b, e, s))
                  .masked_fill(s[:, None] < 0, 0.0)),
            Wrong("dropped_kept", lambda b, e, s, w: b.flatten(0, 1).gather(0, _rows(b, e, s)) * w[:, None]),
            Wrong("wrong_layout", lambda b, e, s, w: b.flatten(0, 1).gather(
                0, (s.clamp(min=0) * b.shape[0] + e).unsqueeze(1).expand(-1, b.shape[2]))
                  .masked_fill(s[:, None] < 0, 0.0) * w[:, None])],
    allowed=("gather",) + BASE,
    edges=[(t([[[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]], [[-1.0, 0.5], [0.0, 0.0], [0.0, 0.0]]], F32),
            t([0, 1, 0, 1]), t([1, 0, 0, -1]), t([0.5, 2.0, 1.0, 0.3], F32)),
           (torch.zeros(2, 1, 2), t([]), t([]), t([], F32)),        # N = 0
           (t([[[2.0]]], F32), t([0]), t([0]), t([1.5], F32))],     # E = C = D = 1
    cases=_moe_combine_cases, chapter="07_generation",
    signature=("buf: (E, C, D) float, expert: (N,) int64 in [0, E), slot: (N,) int64 in [-1, C), "
               "weight: (N,) float  ->  (N, D) float"),
)

PUZZLES = [INVERSE_PERM, RANK, ONE_HOT, HISTOGRAM, SEGMENT_SUM, SEGMENT_MAX, SEGMENT_MEAN,
           RAGGED_TO_PADDED, RIGHT_TO_LEFT, LEFT_TO_RAGGED, MOE_DISPATCH, MOE_COMBINE]
