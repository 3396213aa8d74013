"""Level 3, in real code: per-token log-probs with shift and padding, smoothed labels, positions
and the attention mask of packed sequences, and frequency and presence penalties for sampling.
"""
from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

from gatherbook.exercises.declaration import Mistake, exercise
from gatherbook.exercises.cases import F32, I64, PAD, t
from gatherbook.exercises.strategies import floats, index, ints
from gatherbook.exercises.strategies import lengths as lengths_of

PART = "puzzles"  # the exercises' names: "puzzles.<name>"
PAGE = ("3", "08_practice_3_real")  # the page of the ladder: its number, its notebook
BASE = ("arith", "compare", "shape", "create", "where")
IGNORE = PAD  # the target of an ignored position (F.cross_entropy's ignore_index)


# --------------------------------------------------------------------------------------------
def token_logprobs_spec(logits, ids, pad):
    B, L, V = logits.shape
    out = torch.zeros(B, max(L - 1, 0), dtype=logits.dtype)
    for b in range(B):
        for i in range(L - 1):
            target = int(ids[b, i + 1])          # position i predicts the next token
            if target == pad:
                continue                         # padding scores 0
            row = [float(v) for v in logits[b, i]]
            m = max(row)
            lse = m + math.log(sum(math.exp(v - m) for v in row))
            out[b, i] = row[target] - lse
    return out


@st.composite
def _token_logprobs_cases(draw):
    B, L, V = (draw(st.integers(lo, hi)) for lo, hi in ((0, 2), (1, 4), (1, 4)))
    return draw(floats((B, L, V), -30, 30)), draw(index((B, L), V)), draw(st.integers(0, V - 1))


def _shifted(logits, ids):
    return logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]


@exercise(
    spec=token_logprobs_spec,
    signature="logits: (B, L, V) float, ids: (B, L) int64, pad: int  ->  (B, L - 1) float",
    allowed=("gather", "log_softmax", "logsumexp") + BASE,
    edge_cases=[(t([[[1.0, 2.0, 0.0], [0.0, 0.0, 3.0], [2.0, 1.0, 1.0], [0.0, 1.0, 0.0]]], F32),
                 t([[1, 2, 1, 0]]), 0),                        # the worked example: one row, ends in pad
                (t([[[1.0, 2.0, 0.0], [0.0, 0.0, 3.0], [2.0, 1.0, 1.0], [0.0, 1.0, 0.0]],
                    [[0.5, 0.5, 1.0], [1.0, -1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]], F32),
                 t([[1, 2, 1, 0], [2, 1, 0, 0]]), 0),
                (t([[[0.0, 1.0], [1.0, 0.0]]], F32), t([[1, 0]]), 1),   # B = 1, L = 2, ends in pad
                (t([[[2.0, -2.0]]], F32), t([[1]]), 0),                  # L = 1: nothing to score
                (torch.zeros(2, 3, 1), torch.zeros(2, 3, dtype=I64), 1)],
    strategy=_token_logprobs_cases,
    right=[lambda lg, ids, pad: torch.where(ids[:, 1:] != pad, _shifted(lg, ids), 0.0),
           lambda lg, ids, pad: (lg[:, :-1].gather(2, ids[:, 1:, None]).squeeze(2)
                                 - lg[:, :-1].logsumexp(-1)) * (ids[:, 1:] != pad),
           lambda lg, ids, pad: lg.log_softmax(-1)[:, :-1].gather(2, ids[:, 1:].unsqueeze(2))[..., 0].masked_fill(ids[:, 1:] == pad, 0.0)],
    mistakes=[Mistake("no_shift", lambda lg, ids, pad: lg.log_softmax(-1).gather(2, ids[..., None])
                    .squeeze(2).masked_fill(ids == pad, 0.0)),
              Mistake("no_mask", lambda lg, ids, pad: _shifted(lg, ids)),
              Mistake("shift_backwards", lambda lg, ids, pad: lg[:, 1:].log_softmax(-1).gather(
                  2, ids[:, :-1, None]).squeeze(2).masked_fill(ids[:, :-1] == pad, 0.0)),
              Mistake("raw_logits", lambda lg, ids, pad: lg[:, :-1].gather(2, ids[:, 1:, None])
                    .squeeze(2).masked_fill(ids[:, 1:] == pad, 0.0)),
              # the logits cut to L - 1 positions, the tokens not shifted: ids[b][i], not ids[b][i + 1]
              # (no_shift shifts neither and returns (B, L): a trial learner's (B, L - 1) was not it)
              Mistake("ids_not_shifted", lambda lg, ids, pad: lg[:, :-1].log_softmax(-1).gather(
                  2, ids[:, :-1, None]).squeeze(2).masked_fill(ids[:, :-1] == pad, 0.0))],
    atol=1e-5,
    taught_in="02_token_logprobs",
)
def token_logprobs(logits, ids, pad):
    # (B, L-1, V): position i predicts token i+1
    logp = logits[:, :-1].log_softmax(dim=-1)
    target = ids[:, 1:]                          # (B, L-1)
    lp = logp.gather(2, target.unsqueeze(2)).squeeze(2)
    return lp.masked_fill(target == pad, 0.0)


# --------------------------------------------------------------------------------------------
def smooth_labels_spec(target, C, eps):
    N = target.shape[0]
    out = torch.zeros(N, C, dtype=torch.float32)
    for n in range(N):
        if target[n] == -100:
            continue                                 # an ignored row stays all zero
        for c in range(C):
            out[n, c] = eps / C + (1 - eps if c == target[n] else 0.0)
    return out


@st.composite
def _smooth_labels_cases(draw):
    N, C = draw(st.integers(0, 5)), draw(st.integers(1, 10))
    target = draw(ints((N,), -1, C - 1))
    target = torch.where(target < 0, IGNORE, target)
    return target, C, draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]))


def _smooth(target, C, eps, off, on):
    keep = (target != IGNORE).unsqueeze(1)
    base = torch.full((target.shape[0], C), off, device=target.device)
    return (base.scatter(1, target.clamp(min=0).unsqueeze(1), on) * keep)


@exercise(
    spec=smooth_labels_spec,
    signature="target: (N,) int64 in [0, C) or -100, C: int, eps: float in [0, 1]  ->  (N, C) float32",
    allowed=("scatter",) + BASE,
    edge_cases=[(t([2, 0, IGNORE, 1]), 4, 0.2),
                (t([0]), 1, 0.1),                                    # C = 1: the row is 1
                (t([9, 3]), 10, 0.0),                                # eps = 0: one-hot, C past 8
                (t([IGNORE, IGNORE]), 3, 1.0),                       # eps = 1: uniform; all ignored
                (t([], I64), 3, 0.1)],
    strategy=_smooth_labels_cases,
    right=[lambda tg, C, eps: _smooth(tg, C, eps, eps / C, 1 - eps + eps / C),
           lambda tg, C, eps: torch.zeros(tg.shape[0], C, device=tg.device).scatter(
               1, tg.clamp(min=0)[:, None], 1.0).mul(1 - eps).add(eps / C).masked_fill((tg == IGNORE)[:, None], 0.0),
           lambda tg, C, eps: torch.where((tg != IGNORE)[:, None], torch.full((tg.shape[0], C), eps / C, device=tg.device)
                                          .scatter_add(1, tg.clamp(min=0)[:, None], torch.full((tg.shape[0], 1), 1 - eps, device=tg.device)), 0.0)],
    mistakes=[Mistake("over_c_minus_1", lambda tg, C, eps: _smooth(tg, C, eps, eps / max(C - 1, 1), 1 - eps)),
              Mistake("forgot_share", lambda tg, C, eps: _smooth(tg, C, eps, eps / C, 1 - eps)),
              Mistake("ignored_kept", lambda tg, C, eps: torch.full((tg.shape[0], C), eps / C).scatter(
                  1, tg.clamp(min=0).unsqueeze(1), 1 - eps + eps / C)),
              Mistake("eps_swapped", lambda tg, C, eps: _smooth(tg, C, eps, (1 - eps) / C, eps + (1 - eps) / C))],
    taught_in="05_scatter",
    atol=1e-6,
)
def smooth_labels(target, C, eps):
    N = target.shape[0]
    # every class gets eps / C
    out = torch.full((N, C), eps / C, device=target.device)
    # (N, 1); -100 -> 0 for now
    col = target.clamp(min=0).unsqueeze(1)
    # the target gets the rest
    out = out.scatter(1, col, 1 - eps + eps / C)
    # ignored rows: all zero
    return out.masked_fill((target == -100).unsqueeze(1), 0.0)


# --------------------------------------------------------------------------------------------
def packed_positions_spec(lengths, T):
    out = torch.zeros(T, dtype=torch.int64)
    t = 0
    for n in lengths:
        for i in range(int(n)):
            out[t] = i                               # each sequence counts from 0 again
            t += 1
    return out


@st.composite
def _packed_cases(draw):
    lengths = draw(lengths_of(draw(st.integers(0, 4)), 5))
    return lengths, int(lengths.sum())


def _starts_of_tokens(lengths, T):
    ends = lengths.cumsum(0)                                            # (S,)
    seq = (torch.arange(T, device=lengths.device).unsqueeze(1) >= ends).sum(1)  # (T,) its sequence
    return (ends - lengths).gather(0, seq)


@exercise(
    spec=packed_positions_spec,
    signature="lengths: (S,) int64 >= 0, T: int = lengths.sum()  ->  (T,) int64",
    allowed=("cumsum", "sum", "gather") + BASE,
    edge_cases=[(t([3, 1, 4]), 8),
                (t([2, 0, 3]), 5),                   # an empty sequence
                (t([11]), 11),                       # S = 1, a sequence past 8
                (t([1, 1]), 2),
                (t([], I64), 0)],
    strategy=_packed_cases,
    right=[lambda n, T: torch.arange(T, device=n.device) - _starts_of_tokens(n, T),
           lambda n, T: torch.arange(T, device=n.device) - ((torch.arange(T, device=n.device)[:, None] >= n.cumsum(0))
                                                            * n).sum(1),
           lambda n, T: torch.arange(T, device=n.device) - torch.where(
               torch.arange(T, device=n.device)[:, None] >= n.cumsum(0), n, 0).sum(1)],
    mistakes=[Mistake("no_restart", lambda n, T: torch.arange(T)),
              Mistake("from_one", lambda n, T: torch.arange(T) - _starts_of_tokens(n, T) + 1),
              Mistake("ends_not_starts", lambda n, T: torch.arange(T) - n.cumsum(0).gather(
                  0, (torch.arange(T)[:, None] >= n.cumsum(0)).sum(1))),
              Mistake("strict_compare", lambda n, T: torch.arange(T) - (n.cumsum(0) - n).gather(
                  0, (torch.arange(T)[:, None] > n.cumsum(0)).sum(1).clamp(max=max(n.shape[0] - 1, 0))))],
    second_example=1,                             # drawn beside the first: an empty sequence takes no token
    taught_in="02_token_logprobs",
    atol=0,
)
def packed_positions(lengths, T):
    ends = lengths.cumsum(0)                        # (S,): where each sequence stops
    tok = torch.arange(T, device=lengths.device)    # (T,)
    # (T,): sequences that ended before tok
    seq = (tok.unsqueeze(1) >= ends).sum(1)
    start = (ends - lengths).gather(0, seq)         # (T,): where tok's sequence starts
    return tok - start


# --------------------------------------------------------------------------------------------
def packed_mask_spec(lengths, T):
    seq = []
    for s, n in enumerate(lengths):
        seq += [s] * int(n)                          # the sequence of each packed token
    out = torch.zeros(T, T, dtype=torch.bool)
    for i in range(T):
        for j in range(T):
            # same sequence, and not a later token
            out[i, j] = seq[i] == seq[j] and j <= i
    return out


def _pos(lengths, T):
    return torch.arange(T, device=lengths.device) - _starts_of_tokens(lengths, T)


@exercise(
    spec=packed_mask_spec,
    signature="lengths: (S,) int64 >= 0, T: int = lengths.sum()  ->  (T, T) bool",
    allowed=("cumsum", "sum", "gather") + BASE,
    edge_cases=[(t([3, 2]), 5),
                (t([1, 0, 2]), 3),                   # an empty sequence
                (t([4]), 4),                         # S = 1: a plain causal mask
                (t([1, 1, 1]), 3),
                (t([], I64), 0)],
    strategy=_packed_cases,
    right=[lambda n, T: ((torch.arange(T, device=n.device)[:, None] - torch.arange(T, device=n.device)) >= 0)
           & ((torch.arange(T, device=n.device)[:, None] - torch.arange(T, device=n.device)) <= _pos(n, T)[:, None]),
           lambda n, T: (_starts_of_tokens(n, T)[:, None] == _starts_of_tokens(n, T)[None, :])
           & (torch.arange(T, device=n.device)[:, None] >= torch.arange(T, device=n.device)),
           lambda n, T: ((torch.arange(T, device=n.device)[:, None] >= n.cumsum(0)).sum(1)[:, None]
                         == (torch.arange(T, device=n.device)[:, None] >= n.cumsum(0)).sum(1)[None, :])
           & (torch.arange(T, device=n.device)[:, None] >= torch.arange(T, device=n.device))],
    mistakes=[Mistake("not_causal", lambda n, T: _starts_of_tokens(n, T)[:, None] == _starts_of_tokens(n, T)[None, :]),
              Mistake("causal_only", lambda n, T: torch.arange(T)[:, None] >= torch.arange(T)),
              Mistake("transposed", lambda n, T: (_starts_of_tokens(n, T)[:, None] == _starts_of_tokens(n, T)[None, :])
                      & (torch.arange(T)[:, None] <= torch.arange(T))),
              Mistake("misses_first", lambda n, T: ((torch.arange(T)[:, None] - torch.arange(T)) >= 0)
                      & ((torch.arange(T)[:, None] - torch.arange(T)) < _pos(n, T)[:, None]))],
    taught_in="02_token_logprobs",
    atol=0,
)
def packed_mask(lengths, T):
    tok = torch.arange(T, device=lengths.device)
    # (T,): each token's sequence
    seq = (tok.unsqueeze(1) >= lengths.cumsum(0)).sum(1)
    same = seq.unsqueeze(1) == seq.unsqueeze(0)               # (T, T): block diagonal
    # and causal inside each block
    return same & (tok.unsqueeze(1) >= tok.unsqueeze(0))


# --------------------------------------------------------------------------------------------
def frequency_penalty_spec(logits, history, alpha, beta):
    B, V = logits.shape
    out = logits.clone()
    for b in range(B):
        count = [0] * V
        for tok in history[b]:
            if tok >= 0:                             # -1 is padding, not a token
                count[int(tok)] += 1
        for v in range(V):
            if count[v]:
                out[b, v] -= alpha * count[v] + beta  # per use, and once for being used
    return out


@st.composite
def _frequency_cases(draw):
    B, V, L = draw(st.integers(0, 3)), draw(st.integers(1, 10)), draw(st.integers(0, 6))
    return (draw(floats((B, V))), draw(ints((B, L), -1, V - 1)),
            draw(st.sampled_from([0.0, 0.5, 1.5])), draw(st.sampled_from([0.0, 0.25, 2.0])))


def _counts(history, V):
    real = history >= 0
    return torch.zeros(history.shape[0], V + 1, device=history.device).scatter_add(
        1, torch.where(real, history, V), real.float())[:, :V]


def _counts_with_pad(history, V):
    return torch.zeros(history.shape[0], V).scatter_add(1, history.clamp(min=0), torch.ones(history.shape))


def _pad_as_index(logits, history, alpha, beta):  # a -1 in history: "index -1 is out of bounds ..."
    count = torch.zeros(logits.shape).scatter_add(1, history, torch.ones(history.shape))
    return logits - alpha * count - beta * (count > 0)


@exercise(
    spec=frequency_penalty_spec,
    signature="logits: (B, V) float, history: (B, L) int64 in [-1, V) (-1: padding), "
              "alpha: float, beta: float  ->  (B, V) float",
    allowed=("scatter", "gather", "sum") + BASE,
    edge_cases=[(t([[2.0, 1.0, -0.5, 0.3], [0.5, 0.5, 0.5, 0.5]], F32), t([[1, 1, 3, -1], [0, 2, -1, -1]]), 0.5, 1.0),
                (t([[1.5, -2.0, 0.0]], F32), t([[-1, -1]]), 1.0, 1.0),          # all padding, B = 1
                (t([[0.0, 0.0]], F32), t([[0, 0, 0]]), 0.25, 0.0),             # a token used 3 times
                (t([[1.0], [2.0]], F32), torch.zeros(2, 0, dtype=I64), 2.0, 2.0),  # L = 0, V = 1
                (torch.zeros(0, 3), torch.zeros(0, 2, dtype=I64), 1.0, 1.0)],
    strategy=_frequency_cases,
    right=[lambda lg, h, a, b: lg - a * _counts(h, lg.shape[1]) - b * (_counts(h, lg.shape[1]) > 0),
           lambda lg, h, a, b: lg - ((h.unsqueeze(2) == torch.arange(lg.shape[1], device=lg.device)).sum(1) * a
                                     + ((h.unsqueeze(2) == torch.arange(lg.shape[1], device=lg.device)).sum(1) > 0) * b),
           lambda lg, h, a, b: torch.where(_counts(h, lg.shape[1]) > 0, lg - a * _counts(h, lg.shape[1]) - b, lg)],
    mistakes=[Mistake("padding_counted", lambda lg, h, a, b: lg - a * _counts_with_pad(h, lg.shape[1])
                      - b * (_counts_with_pad(h, lg.shape[1]) > 0)),
              Mistake("scatter_not_add", lambda lg, h, a, b: lg - (a + b) * (_counts(h, lg.shape[1]) > 0)),
              Mistake("presence_per_use", lambda lg, h, a, b: lg - (a + b) * _counts(h, lg.shape[1])),
              Mistake("added", lambda lg, h, a, b: lg + a * _counts(h, lg.shape[1]) + b * (_counts(h, lg.shape[1]) > 0)),
              Mistake("pad_as_index", _pad_as_index)],
    second_example=2,                             # drawn beside the first: beta = 0: alpha per use, beta once
    taught_in="07_generation",
    atol=1e-5,
)
def frequency_penalty(logits, history, alpha, beta):
    B, V = logits.shape
    # (B, L): padding is not a token
    real = history >= 0
    # padding counts in a spare column V
    col = torch.where(real, history, V)
    count = torch.zeros(B, V + 1, device=logits.device)
    count = count.scatter_add(1, col, real.float())[:, :V]
    return logits - alpha * count - beta * (count > 0)
