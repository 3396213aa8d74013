"""Level 4, ragged batches and experts: ragged <-> padded, padded right -> left, an expert's slots
under a capacity claimed by router score (batch prioritized routing), then Mixture-of-Experts
dispatch into and combine from the capacity buffer.
"""
from __future__ import annotations

import torch
from hypothesis import strategies as st

from gatherbook.exercises.declaration import Mistake, exercise
from gatherbook.exercises.cases import F32, I64, coded, f, t
from gatherbook.exercises.strategies import floats, index, ints, lengths

PART = "puzzles"  # the exercises' names: "puzzles.<name>"
PAGE = ("4b", "08_practice_4b_ragged")  # the page of the ladder: its number, its notebook
BASE = ("arith", "compare", "shape", "create", "where")
INF = float("inf")


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


@st.composite
def _ragged_cases(draw):
    B, L = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    n = draw(lengths(B, L))
    if int(n.sum()) == 0:
        n[draw(st.integers(0, B - 1))] = 1           # at least one value
    return draw(ints((int(n.sum()),))), n, L, draw(st.integers(-9, -1))


def _starts(n):
    return n.cumsum(0) - n


@exercise(
    spec=ragged_to_padded_spec,
    signature="values: (N,), lengths: (B,) int64 summing to N >= 1, L: int, L >= max length, pad: int"
              "  ->  (B, L)",
    allowed=("gather", "scatter", "cumsum", "sum") + BASE,
    edge_cases=[(t([1, 2, 3, 4, 5, 6]), t([2, 0, 3, 1]), 4, -1),
                (t([7, 8]), t([2]), 3, 0),                     # B = 1
                (t([5, -5]), t([1, 1]), 1, -9)],
    strategy=_ragged_cases,
    right=[lambda v, n, L, pad: torch.full((n.shape[0] * L,), pad, device=v.device).scatter(
               0, (torch.arange(v.shape[0], device=v.device).unsqueeze(1) >= n.cumsum(0)).sum(1) * L + torch.arange(v.shape[0], device=v.device)
               - _starts(n).gather(0, (torch.arange(v.shape[0], device=v.device).unsqueeze(1) >= n.cumsum(0)).sum(1)), v)
           .view(n.shape[0], L),
           lambda v, n, L, pad: v.expand(n.shape[0], -1).gather(
               1, (_starts(n)[:, None] + torch.arange(L, device=v.device)).clamp(max=v.shape[0] - 1))
           .masked_fill(torch.arange(L, device=v.device) >= n[:, None], pad),
           lambda v, n, L, pad: torch.where(torch.arange(L, device=v.device) >= n[:, None], pad, v.gather(0, (_starts(n)[:, None] + torch.arange(L, device=v.device)).clamp(max=v.shape[0] - 1).flatten()).view(-1, L))],
    mistakes=[Mistake("inclusive_starts", lambda v, n, L, pad: torch.where(
                  torch.arange(L) < n[:, None],
                  v.gather(0, (n.cumsum(0)[:, None] + torch.arange(L)).clamp(max=v.shape[0] - 1).flatten())
                  .view(-1, L), pad)),
              Mistake("no_mask", lambda v, n, L, pad: v.gather(
                  0, (_starts(n)[:, None] + torch.arange(L)).clamp(max=v.shape[0] - 1).flatten()).view(-1, L)),
              Mistake("left_padded", lambda v, n, L, pad: torch.where(
                  torch.arange(L) >= L - n[:, None],
                  v.gather(0, (_starts(n)[:, None] + torch.arange(L) - (L - n[:, None])).clamp(0, v.shape[0] - 1)
                           .flatten()).view(-1, L), pad))],
    taught_in="07_generation",
    atol=1e-6,
)
def ragged_to_padded(values, lengths, L, pad):
    # (B,): where each sequence starts
    starts = lengths.cumsum(0) - lengths
    pos = torch.arange(L, device=values.device)             # (L,)
    # (B, L), kept in range
    src = (starts.unsqueeze(1) + pos).clamp(max=values.shape[0] - 1)
    got = values.gather(0, src.flatten()).view(src.shape)
    return torch.where(pos < lengths.unsqueeze(1), got, pad)


# --------------------------------------------------------------------------------------------
def right_to_left_spec(padded, lengths, pad):
    B, L = padded.shape
    out = torch.full((B, L), pad, dtype=padded.dtype)
    for b in range(B):
        n = int(lengths[b])
        for j in range(n):
            out[b, L - n + j] = padded[b, j]
    return out


@st.composite
def _right_to_left_cases(draw):
    B, L = draw(st.integers(0, 3)), draw(st.integers(1, 5))
    n = draw(lengths(B, L))
    pad = draw(st.integers(-9, 0))
    return draw(ints((B, L), 0, 9)), n, pad  # cells past a length hold anything


@exercise(
    spec=right_to_left_spec,
    signature="padded: (B, L), lengths: (B,) int64 in [0, L], pad: int  ->  (B, L)",
    allowed=("gather",) + BASE,
    edge_cases=[(t([[1, 2, 3, 0, 0], [4, 0, 0, 0, 0], [5, 6, 7, 8, 9]]), t([3, 1, 5]), -1),
                (t([[-1, -1]]), t([0]), -1),                      # an empty sequence
                (t([[3]]), t([1]), 0)],
    strategy=_right_to_left_cases,
    right=[lambda x, n, pad: x.gather(1, (torch.arange(x.shape[1], device=x.device) + n[:, None]) % x.shape[1])
           .masked_fill(torch.arange(x.shape[1], device=x.device) < x.shape[1] - n[:, None], pad),
           lambda x, n, pad: torch.where(
               torch.arange(x.shape[1], device=x.device) >= x.shape[1] - n[:, None],
               x.gather(1, (torch.arange(x.shape[1], device=x.device) - x.shape[1] + n[:, None]).clamp(min=0)), pad),
           lambda x, n, pad: torch.where(torch.arange(x.shape[1], device=x.device) + n[:, None] >= x.shape[1], x.gather(1, (torch.arange(x.shape[1], device=x.device) + n[:, None]) % x.shape[1]), pad)],
    mistakes=[Mistake("no_mask", lambda x, n, pad: x.gather(1, (torch.arange(x.shape[1]) + n[:, None]) % x.shape[1])),
              Mistake("shift_wrong_way", lambda x, n, pad: torch.where(
                  torch.arange(x.shape[1]) >= x.shape[1] - n[:, None],
                  x.gather(1, (torch.arange(x.shape[1]) + x.shape[1] - n[:, None]) % x.shape[1]), pad)),
              Mistake("mask_wrong_side", lambda x, n, pad: torch.where(
                  torch.arange(x.shape[1]) < n[:, None],
                  x.gather(1, (torch.arange(x.shape[1]) + n[:, None]) % x.shape[1]), pad))],
    taught_in="02_token_logprobs",
    atol=1e-6,
)
def right_to_left(padded, lengths, pad):
    L = padded.shape[1]
    pos = torch.arange(L, device=padded.device)          # (L,)
    # (B, 1): pads to move to the front
    shift = (L - lengths).unsqueeze(1)
    src = (pos - shift) % L                              # (B, L): a column in range
    return torch.where(pos >= shift, padded.gather(1, src), pad)


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


@exercise(
    spec=left_to_ragged_spec,
    signature="padded: (B, L), lengths: (B,) int64 in [0, L], N: int = lengths.sum()"
              "  ->  (N,), padded's dtype",
    allowed=("gather", "scatter", "cumsum", "sum") + BASE,
    edge_cases=[(t([[-1, -1, 1, 2], [-1, -1, -1, 3], [4, 5, 6, 7]]), t([2, 1, 4]), 7),
                (t([[9, -9, 5, 5], [2, -2, 2, 0]]), t([2, 4]), 6),   # repeated values, a full row
                (t([[-1, -1]]), t([0]), 0),                          # B = 1, an empty row: N = 0
                (t([[3]]), t([1]), 1),                               # B = 1, L = 1
                (torch.zeros(0, 3, dtype=torch.int64), t([]), 0)],
    strategy=_left_to_ragged_cases,
    right=[lambda x, n, N: x.flatten().gather(
               0, _row_of(n, N) * x.shape[1] + torch.arange(N, device=x.device)
               - _starts(n).gather(0, _row_of(n, N)) + x.shape[1] - n.gather(0, _row_of(n, N))),
           lambda x, n, N: x.new_zeros(N + 1).index_add(0, _dest(x, n, N).flatten(), x.flatten())[:N],
           lambda x, n, N: x.new_zeros(N + 1).scatter(
               0, _dest(x, n, N, left=False).flatten(),
               x.gather(1, (torch.arange(x.shape[1], device=x.device) + x.shape[1] - n[:, None])
                        % x.shape[1]).flatten())[:N]],
    mistakes=[Mistake("right_padding", lambda x, n, N: x.new_zeros(N + 1).scatter(
                  0, _dest(x, n, N, left=False).flatten(), x.flatten())[:N]),
              Mistake("no_start", lambda x, n, N: x.new_zeros(N + 1).scatter(
                  0, _dest(x, n, N, start=False).flatten(), x.flatten())[:N]),
              Mistake("spare_slot_kept", lambda x, n, N: x.new_zeros(N + 1).scatter(
                  0, _dest(x, n, N).flatten(), x.flatten()))],
    taught_in="07_generation",
    atol=1e-6,
)
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


# --------------------------------------------------------------------------------------------

def priority_slots_spec(expert, score, E, C):
    N = expert.shape[0]
    out = torch.full((N,), -1, dtype=torch.int64)
    # the order tokens claim slots in: highest score first, ties by the smaller n
    order = sorted(range(N), key=lambda n: (-float(score[n]), n))
    used = [0] * E
    for n in order:
        e = int(expert[n])
        if used[e] < C:
            out[n] = used[e]                 # the next free slot of its expert
        used[e] += 1                         # past the capacity C: dropped, slot -1
    return out


@st.composite
def _priority_slots_cases(draw):
    N, E, C = draw(st.integers(0, 12)), draw(st.integers(1, 3)), draw(st.integers(0, 4))
    return draw(index((N,), E)), draw(ints((N,), -3, 3)).to(F32) / 2, E, C   # halves: ties


def _ahead(expert, score):
    """(N,): how many tokens of the same expert claim a slot before token n."""
    n = torch.arange(expert.shape[0], device=expert.device)
    first = (score.unsqueeze(0) > score.unsqueeze(1)) | ((score.unsqueeze(0) == score.unsqueeze(1)) & (n < n.unsqueeze(1)))
    return ((expert.unsqueeze(0) == expert.unsqueeze(1)) & first).sum(1)   # row n: the tokens ahead of n


def _by_sort(expert, score, E, C, stable=True, descending=True):
    N = expert.shape[0]
    order = score.argsort(descending=descending, stable=True) if stable else score.argsort(descending=descending)
    e = expert.gather(0, order)                                                   # experts in claiming order
    onehot = (e.unsqueeze(1) == torch.arange(E, device=expert.device)).long()
    place = (onehot.cumsum(0) - 1).gather(1, e.unsqueeze(1)).squeeze(1)
    return torch.full_like(expert, -1).scatter(0, order, torch.where(place < C, place, -1))


def _token_order(expert, E):
    onehot = (expert.unsqueeze(1) == torch.arange(E, device=expert.device)).long()
    return (onehot.cumsum(0) - 1).gather(1, expert.unsqueeze(1)).squeeze(1)


@exercise(
    spec=priority_slots_spec,
    signature="expert: (N,) int64 in [0, E), score: (N,) float, E: int, C: int >= 0  ->  (N,) int64 in [-1, C)",
    allowed=("cumsum", "gather", "scatter", "argsort", "sort", "sum") + BASE,
    edge_cases=[(t([1, 0, 1, 1, 0, 1]), f([0.2, 0.9, 0.7, 0.5, 0.1, 0.7]), 2, 2),   # expert 1: a tie, 2 dropped
                (t([0, 0, 0]), f([0.5, 1.5, -1.0]), 1, 3),                       # exactly C tokens: none dropped
                (t([1]), f([2.0]), 2, 0),                                        # C = 0: every token dropped
                (t([], I64), f([]), 2, 1),
                ((torch.arange(70) % 7 == 0).long(), (torch.arange(70) % 3 == 0).float(), 2, 40)],  # long sort, ties
    strategy=_priority_slots_cases,
    right=[lambda e, s, E, C: torch.where(_ahead(e, s) < C, _ahead(e, s), -1),
           _by_sort,
           lambda e, s, E, C: (lambda order: torch.full_like(e, -1).scatter(0, order, torch.where(
               _token_order(e.gather(0, order), E) < C, _token_order(e.gather(0, order), E), -1)))(
               (-s).argsort(stable=True))],
    mistakes=[Mistake("token_order", lambda e, s, E, C: torch.where(_token_order(e, E) < C, _token_order(e, E), -1)),
              Mistake("lowest_first", lambda e, s, E, C: _by_sort(e, s, E, C, descending=False)),
              Mistake("keeps_c_plus_1", lambda e, s, E, C: torch.where(_ahead(e, s) <= C, _ahead(e, s), -1)),
              Mistake("no_scatter_back", lambda e, s, E, C: (lambda order: torch.where(
                  _token_order(e.gather(0, order), E) < C, _token_order(e.gather(0, order), E), -1))(
                  s.argsort(descending=True, stable=True))),
              Mistake("unstable_sort", lambda e, s, E, C: _by_sort(e, s, E, C, stable=False))],
    second_example=1,                             # drawn beside the first: exactly C tokens: none dropped
    taught_in="07_generation",
    atol=0,
)
def priority_slots(expert, score, E, C):
    # (N,): claiming order; ties: smaller n
    order = score.argsort(descending=True, stable=True)
    # (N,): their experts, in that order
    e = expert.gather(0, order)
    onehot = (e.unsqueeze(1) == torch.arange(E, device=expert.device)).long()   # (N, E)
    # place in its expert's queue
    place = (onehot.cumsum(0) - 1).gather(1, e.unsqueeze(1)).squeeze(1)
    # place C and later: dropped
    slot = torch.where(place < C, place, -1)
    return torch.full_like(expert, -1).scatter(0, order, slot)  # back to token order


# --------------------------------------------------------------------------------------------
def capacity_dispatch_spec(x, expert, E, C):
    N, D = x.shape
    buf = torch.zeros(E, C, D, dtype=x.dtype)
    used = [0] * E
    for n in range(N):
        e = int(expert[n])
        if used[e] < C:                  # the expert still has a free slot
            buf[e, used[e]] = x[n]
        used[e] += 1                     # a token past the capacity is dropped
    return buf


def _slot(expert, E):
    onehot = (expert.unsqueeze(1) == torch.arange(E, device=expert.device)).long()
    return (onehot.cumsum(0) - 1).gather(1, expert.unsqueeze(1)).squeeze(1)


def _dispatch(x, dest, E, C, rows):
    buf = torch.zeros(rows, x.shape[1], dtype=x.dtype).scatter(0, dest.unsqueeze(1).expand(-1, x.shape[1]), x)
    return buf[:E * C].view(E, C, x.shape[1])


@st.composite
def _capacity_dispatch_cases(draw):
    N, D, E, C = (draw(st.integers(lo, hi)) for lo, hi in ((0, 6), (1, 2), (1, 3), (1, 3)))
    return draw(ints((N, D))), draw(index((N,), E)), E, C


@exercise(
    spec=capacity_dispatch_spec,
    signature="x: (N, D), expert: (N,) int64 in [0, E), E: int, C: int >= 1  ->  (E, C, D)",
    allowed=("gather", "scatter", "cumsum") + BASE,
    edge_cases=[(coded(5, 2), t([1, 0, 1, 1, 0]), 2, 2),     # token 3 dropped
                (coded(3, 2), t([0, 0, 2]), 3, 1),            # token 1 dropped, expert 1 empty
                (torch.zeros(0, 2, dtype=I64), t([]), 2, 1),  # N = 0
                (t([[4], [-4]]), t([0, 0]), 1, 1),            # E = 1, C = 1, D = 1
                (t([[5, -5]]), t([1]), 2, 1)],
    strategy=_capacity_dispatch_cases,
    right=[lambda x, e, E, C: torch.zeros(E * C + 1, x.shape[1], dtype=x.dtype, device=x.device).index_add(
               0, torch.where(_slot(e, E) < C, e * C + _slot(e, E), E * C), x)[:E * C].view(E, C, -1),
           lambda x, e, E, C: torch.zeros(E * C + 1, x.shape[1], dtype=x.dtype, device=x.device).scatter_add(
               0, torch.where(_slot(e, E) < C, e * C + _slot(e, E), E * C)[:, None].expand(-1, x.shape[1]), x)
           [:E * C].view(E, C, x.shape[1]),
           lambda x, e, E, C: torch.zeros(E * C + 1, x.shape[1], dtype=x.dtype, device=x.device).scatter_reduce(0, torch.where(_slot(e, E) < C, e * C + _slot(e, E), E * C)[:, None].expand(-1, x.shape[1]), x, reduce="sum")[:E * C].view(E, C, x.shape[1])],
    mistakes=[Mistake("no_capacity", lambda x, e, E, C: _dispatch(x, e * C + _slot(e, E), E, C, E * C)),
              Mistake("slot_from_one", lambda x, e, E, C: _dispatch(
                  x, torch.where(_slot(e, E) + 1 < C, e * C + _slot(e, E) + 1, E * C), E, C, E * C + 1)),
              Mistake("global_slot", lambda x, e, E, C: _dispatch(
                  x, torch.where(torch.arange(x.shape[0]) < C, e * C + torch.arange(x.shape[0]), E * C),
                  E, C, E * C + 1))],
    taught_in="07_generation",
    atol=1e-6,
)
def capacity_dispatch(x, expert, E, C):
    N, D = x.shape
    onehot = (expert.unsqueeze(1) == torch.arange(E, device=x.device)).long()  # (N, E)
    # (N,) rank in expert
    slot = (onehot.cumsum(0) - 1).gather(1, expert.unsqueeze(1)).squeeze(1)
    # dropped tokens go to a spare row
    dest = torch.where(slot < C, expert * C + slot, E * C)
    buf = torch.zeros(E * C + 1, D, dtype=x.dtype, device=x.device)
    buf = buf.scatter(0, dest.unsqueeze(1).expand(-1, D), x)
    return buf[:E * C].view(E, C, D)


# --------------------------------------------------------------------------------------------
def capacity_combine_spec(buf, expert, slot, weight):
    E, C, D = buf.shape
    N = expert.shape[0]
    out = torch.zeros(N, D, dtype=buf.dtype)
    for n in range(N):
        # slot -1: the token was dropped, its output is 0
        if slot[n] >= 0:
            out[n] = weight[n] * buf[expert[n], slot[n]]
    return out


@st.composite
def _capacity_combine_cases(draw):
    N, D, E, C = (draw(st.integers(lo, hi)) for lo, hi in ((0, 5), (1, 2), (1, 3), (1, 3)))
    return (draw(floats((E, C, D))), draw(index((N,), E)), draw(ints((N,), -1, C - 1)),
            draw(floats((N,), 0, 10)))


def _rows(buf, e, s):
    return (e * buf.shape[1] + s.clamp(min=0)).unsqueeze(1).expand(-1, buf.shape[2])


@exercise(
    spec=capacity_combine_spec,
    signature="buf: (E, C, D) float, expert: (N,) int64 in [0, E), slot: (N,) int64 in [-1, C), "
               "weight: (N,) float  ->  (N, D) float",
    allowed=("gather",) + BASE,
    edge_cases=[(t([[[1.0, 2.0], [3.0, 4.0]], [[-1.0, 0.5], [0.0, 0.0]]], F32),
                 t([0, 1, 0, 1]), t([1, 0, 0, -1]), t([0.5, 2.0, 1.0, 0.3], F32)),
                (torch.zeros(2, 1, 2), t([]), t([]), t([], F32)),        # N = 0
                (t([[[2.0]]], F32), t([0]), t([0]), t([1.5], F32))],
    strategy=_capacity_combine_cases,
    right=[lambda b, e, s, w: b.flatten(0, 1).gather(0, _rows(b, e, s)) * (w * (s >= 0)).unsqueeze(1),
           lambda b, e, s, w: (b.view(-1, b.shape[2]).gather(0, _rows(b, e, s)) * w[:, None])
           .masked_fill(s[:, None] < 0, 0.0),
           lambda b, e, s, w: b.flatten().gather(0, ((e * b.shape[1] + s.clamp(min=0))[:, None] * b.shape[2] + torch.arange(b.shape[2], device=b.device)).flatten()).view(-1, b.shape[2]) * (w * (s >= 0))[:, None]],
    mistakes=[Mistake("no_weight", lambda b, e, s, w: b.flatten(0, 1).gather(0, _rows(b, e, s))
                    .masked_fill(s[:, None] < 0, 0.0)),
              Mistake("dropped_kept", lambda b, e, s, w: b.flatten(0, 1).gather(0, _rows(b, e, s)) * w[:, None]),
              Mistake("wrong_layout", lambda b, e, s, w: b.flatten(0, 1).gather(
                  0, (s.clamp(min=0) * b.shape[0] + e).unsqueeze(1).expand(-1, b.shape[2]))
                    .masked_fill(s[:, None] < 0, 0.0) * w[:, None])],
    taught_in="07_generation",
    atol=1e-6,
)
def capacity_combine(buf, expert, slot, weight):
    E, C, D = buf.shape
    # (N,): row of the flat buffer
    rows = expert * C + slot.clamp(min=0)
    got = buf.view(E * C, D).gather(0, rows.unsqueeze(1).expand(-1, D))  # (N, D)
    return torch.where((slot >= 0).unsqueeze(1), got * weight.unsqueeze(1), 0.0)
