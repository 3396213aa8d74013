"""Level 3, in real code: per-token log-probs with shift and padding, Double DQN's target with an
action mask, top-k patches in image order, undoing a shuffle, a beam-search step and the top-p
mask scattered back to vocabulary order."""
from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

from gatherbook.exercises.declaration import Mistake, exercise
from gatherbook.exercises.cases import F32, I64, coded, t
from gatherbook.exercises.strategies import bools, distinct, floats, index, ints, perms, probs

PART = "puzzles"  # the exercises' names: "puzzles.<name>"
PAGE = ("3", "08_practice_3_real")  # the page of the ladder: its number, its notebook
BASE = ("arith", "compare", "shape", "create", "where")


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
    edge_cases=[(t([[[1.0, 2.0, 0.0], [0.0, 0.0, 3.0], [2.0, 1.0, 1.0], [0.0, 1.0, 0.0]],
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
                    .squeeze(2).masked_fill(ids[:, 1:] == pad, 0.0))],
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
def double_q_spec(q_online, q_target, valid):
    B, A = q_online.shape
    out = torch.zeros(B, dtype=q_target.dtype)
    for b in range(B):
        best = None
        for a in range(A):
            if valid[b, a] and (best is None or q_online[b, a] > q_online[b, best]):
                best = a                          # ties: the first valid maximum
        out[b] = q_target[b, best]
    return out


@st.composite
def _double_q_cases(draw):
    B, A = draw(st.integers(0, 3)), draw(st.integers(1, 4))
    valid = draw(bools((B, A)))
    for b, a in enumerate(draw(st.lists(st.integers(0, A - 1), min_size=B, max_size=B))):
        # at least one valid action per row
        valid[b, a] = True
    return draw(ints((B, A), -5, 5)).to(F32), draw(floats((B, A))), valid


@exercise(
    spec=double_q_spec,
    signature="q_online, q_target: (B, A) float, valid: (B, A) bool  ->  (B,) float",
    allowed=("gather", "argmax") + BASE,
    edge_cases=[(t([[1.0, 3.0, 2.0], [4.0, 0.0, 4.0], [-1.0, -2.0, 5.0]], F32),
                 t([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]], F32),
                 t([[True, False, True], [False, True, True], [True, True, False]], torch.bool)),
                (t([[2.0]], F32), t([[-0.5]], F32), t([[True]], torch.bool))],
    strategy=_double_q_cases,
    right=[lambda qo, qt, v: qt.gather(1, torch.where(v, qo, float("-inf")).argmax(1)[:, None])[:, 0],
           lambda qo, qt, v: qt.gather(1, (qo + torch.zeros_like(qo).masked_fill(~v, float("-inf")))
                                       .argmax(-1, keepdim=True)).view(-1),
           lambda qo, qt, v: qt.gather(1, qo.masked_fill(~v, float("-inf")).argmax(1).unsqueeze(1)).flatten()],
    mistakes=[Mistake("no_mask", lambda qo, qt, v: qt.gather(1, qo.argmax(1, keepdim=True)).squeeze(1)),
              Mistake("target_argmax", lambda qo, qt, v: qt.gather(
                  1, qt.masked_fill(~v, float("-inf")).argmax(1, keepdim=True)).squeeze(1)),
              Mistake("online_value", lambda qo, qt, v: qo.gather(
                  1, qo.masked_fill(~v, float("-inf")).argmax(1, keepdim=True)).squeeze(1))],
    taught_in="03_rl_action_values",
    atol=1e-6,
)
def double_q(q_online, q_target, valid):
    masked = q_online.masked_fill(~valid, float("-inf"))  # invalid actions never win
    # (B, 1): chosen by the online net
    best = masked.argmax(dim=1, keepdim=True)
    return q_target.gather(1, best).squeeze(1)            # valued by the target net


# --------------------------------------------------------------------------------------------
def topk_in_order_spec(x, scores, k):
    B, N, D = x.shape
    out = torch.zeros(B, k, D, dtype=x.dtype)
    for b in range(B):
        ranked = sorted(range(N), key=lambda n: -float(scores[b, n]))[:k]  # the k best
        # in image order
        for slot, n in enumerate(sorted(ranked)):
            out[b, slot] = x[b, n]
    return out


@st.composite
def _topk_in_order_cases(draw):
    B, N, D = (draw(st.integers(lo, hi)) for lo, hi in ((0, 3), (1, 5), (1, 3)))
    return draw(ints((B, N, D))), draw(distinct(B, N, dtype=F32)), draw(st.integers(0, N))


def _expand_rows(x, keep):
    return keep.unsqueeze(-1).expand(-1, -1, x.shape[2])


@exercise(
    spec=topk_in_order_spec,
    signature="x: (B, N, D), scores: (B, N) float (distinct), k: int in [0, N]  ->  (B, k, D)",
    allowed=("gather", "topk", "sort", "argsort") + BASE,
    edge_cases=[(coded(2, 4, 2), t([[0.3, 0.9, 0.1, 0.5], [0.8, 0.2, 0.6, 0.7]], F32), 2),
                (coded(1, 3, 1), t([[-0.1, -0.3, -0.2]], F32), 3),   # k = N, B = 1, D = 1
                (coded(2, 2, 2), t([[0.1, 0.2], [0.4, 0.3]], F32), 0)],
    strategy=_topk_in_order_cases,
    right=[lambda x, s, k: x.gather(1, _expand_rows(x, s.argsort(1, descending=True)[:, :k].sort(1).values)),
           lambda x, s, k: x.gather(1, _expand_rows(x, torch.topk(s, k, 1, sorted=False)[1].sort(1)[0])),
           lambda x, s, k: x.gather(1, _expand_rows(x, s.sort(1, descending=True).indices[:, :k].sort(1).values))],
    mistakes=[Mistake("score_order", lambda x, s, k: x.gather(1, _expand_rows(x, s.topk(k, 1).indices))),
              Mistake("no_expand", lambda x, s, k: x.gather(1, s.topk(k, 1).indices.sort(1).values.unsqueeze(-1))),
              Mistake("lowest", lambda x, s, k: x.gather(1, _expand_rows(
                  x, s.topk(k, 1, largest=False).indices.sort(1).values)))],
    taught_in="04_vision_patches",
    atol=1e-6,
)
def topk_in_order(x, scores, k):
    # (B, k), ascending positions
    keep = scores.topk(k, dim=1).indices.sort(dim=1).values
    D = x.shape[2]
    return x.gather(1, keep.unsqueeze(-1).expand(-1, -1, D))


# --------------------------------------------------------------------------------------------
def unshuffle_spec(shuffled, perm):
    B, N = shuffled.shape
    out = torch.zeros(B, N, dtype=shuffled.dtype)
    for b in range(B):
        for j in range(N):
            # shuffled[b][j] came from x[b][perm[b][j]]
            out[b, perm[b, j]] = shuffled[b, j]
    return out


@st.composite
def _unshuffle_cases(draw):
    B, N = draw(st.integers(0, 3)), draw(st.integers(0, 5))
    return draw(ints((B, N))), draw(perms(B, N))


@exercise(
    spec=unshuffle_spec,
    signature="shuffled: (B, N), perm: (B, N) int64, rows permutations  ->  (B, N)",
    allowed=("gather", "argsort", "scatter") + BASE,
    edge_cases=[(t([[30, 10, 20, 40], [5, -6, 7, -8]]), t([[2, 0, 1, 3], [3, 2, 1, 0]])),
                (t([[4, -4, 4]]), t([[1, 2, 0]])),                 # B = 1, repeated values
                (t([[9], [8]]), t([[0], [0]])),                    # N = 1
                (torch.zeros(2, 0, dtype=I64), torch.zeros(2, 0, dtype=I64))],
    strategy=_unshuffle_cases,
    right=[lambda s, p: torch.zeros_like(s).scatter(1, p, s),
           lambda s, p: s.scatter(1, p, s),
           lambda s, p: s.new_zeros(s.shape).scatter(1, p, s)],
    mistakes=[Mistake("shuffle_again", lambda s, p: s.gather(1, p)),
              Mistake("argsort_dim0", lambda s, p: s.gather(1, p.argsort(dim=0))),
              Mistake("sorted_values", lambda s, p: s.gather(1, s.argsort(dim=1)))],
    taught_in="04_vision_patches",
    atol=1e-6,
)
def unshuffle(shuffled, perm):
    restore = perm.argsort(dim=1)  # each row's inverse permutation
    return shuffled.gather(1, restore)


# --------------------------------------------------------------------------------------------
def beam_step_spec(seqs, scores):
    B, K, T = seqs.shape
    V = scores.shape[2]
    out = torch.zeros(B, K, T + 1, dtype=seqs.dtype)
    for b in range(B):
        pairs = [(float(scores[b, k, v]), k, v) for k in range(K) for v in range(V)]
        ranked = sorted(pairs, reverse=True)[:K]  # the K best (beam, token) pairs
        for j, (_, k, v) in enumerate(ranked):
            # the history of the beam it extends
            out[b, j, :T] = seqs[b, k]
            out[b, j, T] = v                         # and the new token
    return out


@st.composite
def _beam_step_cases(draw):
    B, K, V, T = (draw(st.integers(lo, hi)) for lo, hi in ((0, 2), (1, 3), (1, 4), (0, 3)))
    scores = draw(distinct(B, K * V, dtype=F32)).view(B, K, V)
    return draw(index((B, K, T), 10)), scores


def _beam_from(seqs, flat, V, K=None):
    beam, token = flat // V, flat % V
    hist = seqs.gather(1, beam.unsqueeze(-1).expand(-1, -1, seqs.shape[2]))
    return torch.cat([hist, token.unsqueeze(-1)], dim=2)


def _top(scores):
    return scores.flatten(1).topk(scores.shape[1], dim=1).indices


@exercise(
    spec=beam_step_spec,
    signature="seqs: (B, K, T) int64, scores: (B, K, V) float (distinct)  ->  (B, K, T + 1) int64",
    allowed=("gather", "topk", "argsort", "cat") + BASE,
    edge_cases=[(t([[[1, 4], [2, 5]], [[3, 3], [6, 0]]]),
                 t([[[0.1, 0.5, 0.2], [0.9, 0.3, 0.0]], [[0.4, -0.1, 0.8], [0.7, 0.6, -0.2]]], F32)),
                (torch.zeros(1, 2, 0, dtype=I64), t([[[0.2, 0.1, 0.3], [0.6, 0.5, 0.4]]], F32)),  # T = 0
                (t([[[7]]]), t([[[0.5, 0.9]]], F32))],
    strategy=_beam_step_cases,
    right=[lambda q, s: _beam_from(q, s.flatten(1).argsort(1, descending=True)[:, :s.shape[1]], s.shape[2]),
           lambda q, s: torch.cat([q.gather(1, torch.div(_top(s), s.shape[2], rounding_mode="floor")
                                             .unsqueeze(-1).expand(-1, -1, q.shape[2])),
                                   (_top(s) - _top(s) // s.shape[2] * s.shape[2]).unsqueeze(-1)], dim=2),
           lambda q, s: _beam_from(q, s.reshape(s.shape[0], s.shape[1] * s.shape[2]).topk(s.shape[1], 1).indices, s.shape[2])],
    mistakes=[Mistake("swapped", lambda q, s: torch.cat([
                  q.gather(1, (_top(s) % s.shape[2]).unsqueeze(-1).expand(-1, -1, q.shape[2])),
                  (_top(s) // s.shape[2]).unsqueeze(-1)], dim=2)),
              Mistake("divide_by_k", lambda q, s: _beam_from(q, _top(s), s.shape[1])),
              Mistake("no_reorder", lambda q, s: torch.cat([q, (_top(s) % s.shape[2]).unsqueeze(-1)], dim=2))],
    taught_in="07_generation",
    atol=1e-6,
)
def beam_step(seqs, scores):
    B, K, V = scores.shape
    T = seqs.shape[2]
    flat = scores.flatten(1).topk(K, dim=1).indices  # (B, K) in [0, K*V)
    beam, token = flat // V, flat % V
    history = seqs.gather(1, beam.unsqueeze(-1).expand(-1, -1, T))  # (B, K, T)
    return torch.cat([history, token.unsqueeze(-1)], dim=2)


# --------------------------------------------------------------------------------------------
def top_p_mask_spec(probs, p):
    B, V = probs.shape
    keep = torch.zeros(B, V, dtype=torch.bool)
    for b in range(B):
        # stable: ties by index
        order = sorted(range(V), key=lambda v: -float(probs[b, v]))
        before = 0.0
        for v in order:
            if before < p:                 # the mass ranked above v is still below p
                keep[b, v] = True
            before += float(probs[b, v])
    return keep


@st.composite
def _top_p_mask_cases(draw):
    B, V = draw(st.integers(0, 3)), draw(st.integers(1, 5))
    # p never equals a sum
    return draw(probs(B, V)), (2 * draw(st.integers(0, 31)) + 1) / 64


def _sorted_keep(probs, p):
    sp, order = probs.sort(dim=1, descending=True, stable=True)
    return sp.cumsum(1) - sp < p, order


@exercise(
    spec=top_p_mask_spec,
    signature="probs: (B, V) float, rows sum to 1, p: float in (0, 1)  ->  (B, V) bool",
    allowed=("sort", "argsort", "cumsum", "gather", "scatter") + BASE,
    edge_cases=[(t([[0.5, 0.125, 0.25, 0.125], [0.25, 0.25, 0.25, 0.25]], F32), 0.6),
                (t([[0.0, 1.0, 0.0]], F32), 0.5),                  # B = 1, one token holds it all
                (t([[1.0], [1.0]], F32), 0.9),
                (torch.full((1, 64), 1 / 64), 0.5)],                 # 64 ties: only a stable sort keeps ids 0..31
    strategy=_top_p_mask_cases,
    right=[lambda pr, p: _sorted_keep(pr, p)[0].gather(1, _sorted_keep(pr, p)[1].argsort(1)),
           lambda pr, p: torch.zeros_like(pr, dtype=torch.bool).scatter(
               1, pr.argsort(dim=1, descending=True, stable=True),
               pr.gather(1, pr.argsort(dim=1, descending=True, stable=True)).cumsum(1)
               - pr.gather(1, pr.argsort(dim=1, descending=True, stable=True)) < p),
           lambda pr, p: _sorted_keep(pr, p)[0].scatter(1, _sorted_keep(pr, p)[1], _sorted_keep(pr, p)[0])],
    mistakes=[Mistake("sorted_order", lambda pr, p: _sorted_keep(pr, p)[0]),
              Mistake("cumsum_lt_p", lambda pr, p: torch.zeros_like(pr, dtype=torch.bool).scatter(
                  1, _sorted_keep(pr, p)[1], pr.sort(1, descending=True, stable=True)[0].cumsum(1) < p)),
              Mistake("gather_not_inverse", lambda pr, p: _sorted_keep(pr, p)[0].gather(1, _sorted_keep(pr, p)[1])),
              Mistake("unstable_sort", lambda pr, p: torch.zeros_like(pr, dtype=torch.bool).scatter(
                  1, pr.sort(1, descending=True)[1],
                  pr.sort(1, descending=True)[0].cumsum(1) - pr.sort(1, descending=True)[0] < p))],
    taught_in="07_generation",
    atol=1e-6,
)
def top_p_mask(probs, p):
    sp, order = probs.sort(dim=1, descending=True, stable=True)  # (B, V) each
    # mass ranked above each
    before = sp.cumsum(dim=1) - sp
    keep_sorted = before < p                                      # in sorted order
    # back to vocab order
    return torch.zeros_like(keep_sorted).scatter(1, order, keep_sorted)
