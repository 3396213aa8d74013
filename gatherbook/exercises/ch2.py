"""Chapter 2 exercises, easy to hard. Logits have one decimal and B != L; B == 1, size-1 dims and a
logit of -200 (underflows in float32) come early; sums over positions start with B > 1."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from gatherbook.exercises.declaration import Mistake, exercise
from gatherbook.exercises.cases import (ATOL, PAD, between, distinct, from_sizes, ints,
                                        log_probs, logits, logp, padded_labels, pick,
                                        rng, t, with_value)
from gatherbook.logprobs import token_logprobs


def _underflow(case: tuple, b: int, t: int) -> tuple:
    """``case`` with the logit that scores ``ids[b][t]`` set to -200 (underflows in float32)."""
    return (with_value(case[0], (b, t - 1, int(case[1][b, t])), -200.0), *case[1:])


# 1. the PPO / GRPO importance ratio
def _ratio(g: torch.Generator, B: int, T: int) -> tuple:  # new and old log-probs, (B, T)
    return log_probs(g, B, T), log_probs(g, B, T)


@exercise(
    edge_cases=[
        (torch.tensor([[-0.5, -1.2, -2.0]]), torch.tensor([[-0.5, -1.0, -3.0]])),   # B == 1; equal -> 1
        _ratio(rng(41), 2, 4),
        _ratio(rng(42), 4, 1),
        _ratio(rng(43), 3, 5),
        (torch.tensor([[-150.0, -0.5], [-120.0, -3.0]]),       # probabilities that underflow to 0
         torch.tensor([[-151.0, -0.5], [-119.5, -2.0]])),      # in float32: exp(new) / exp(old) is 0 / 0
    ],
    random_case=from_sizes((1, 7), inputs=_ratio), seed=205, grad="same",
    grad_args=("new_logp",),  # old_logp is stored under no_grad (the chapter): detaching it is right
    right=[
        lambda new, old: (new - old).exp(),
        lambda new, old: (new - old.detach()).exp(),
        lambda new, old: torch.exp(-(old - new)),
        lambda new, old: torch.exp(new.double() - old.double()).float(),
    ],
    mistakes=[
        Mistake("ratio_of_logprobs", lambda new, old: new / old),
        Mistake("inverted", lambda new, old: torch.exp(old - new)),
        Mistake("no_exp", lambda new, old: new - old),
        Mistake("difference_of_probs", lambda new, old: torch.exp(new) - torch.exp(old)),
        Mistake("divided_probabilities", lambda new, old: new.exp() / old.exp()),
    ],
)
def importance_ratio(new_logp: torch.Tensor, old_logp: torch.Tensor) -> torch.Tensor:
    """The per-token ratio ``pi_new / pi_old``. new_logp, old_logp: (B, T) float32 token
    log-probs (<= 0). Returns (B, T) float32."""
    return torch.exp(new_logp - old_logp)


# 2. the log-probs of K candidate tokens per position
@exercise(
    edge_cases=[
        (logits(rng(1), 2, 3, 5),                                                    # B > 1, K == 2
         t([[[4, 0], [1, 1], [2, 3]], [[0, 4], [3, 2], [1, 0]]])),
        (logits(rng(2), 1, 4, 6), t([[[0, 5, 2], [1, 1, 3], [4, 0, 2], [5, 3, 1]]])),  # B == 1, K == 3
        (logits(rng(3), 3, 2, 4), t([[[3], [0]], [[1], [2]], [[2], [2]]])),            # K == 1
        (with_value(logits(rng(4), 2, 2, 4), (0, 1, 3), -200.0),                       # softmax underflows
         t([[[0, 1], [3, 2]], [[1, 1], [2, 0]]])),                                 # ... and is read
        (logits(rng(5), 3, 1, 5), t([[[1, 2]], [[0, 0]], [[3, 2]]])),  # L == 1, B > 1; ids < V - 1
    ],
    random_case=from_sizes((1, 5), (2, 8), inputs=lambda g, B, L, V: (
        logits(g, B, L, V), ints(g, V, B, L, between(g, 1, V)))),
    seed=201, grad="same", atol=ATOL,
    right=[
        lambda x, c: torch.take_along_dim(x.log_softmax(-1), c, dim=-1),
        lambda x, c: x.gather(-1, c) - x.logsumexp(-1, keepdim=True),
        lambda x, c: torch.stack([pick(logp(x), c[..., k]) for k in range(c.shape[-1])], dim=-1),
    ],
    mistakes=[
        Mistake("raw_logits", lambda x, c: x.gather(-1, c)),
        Mistake("probabilities", lambda x, c: x.softmax(-1).gather(-1, c)),
        Mistake("softmax_then_log", lambda x, c: x.softmax(-1).log().gather(-1, c)),
        Mistake("softmax_wrong_dim", lambda x, c: x.log_softmax(1).gather(-1, c)),
        Mistake("extra_unsqueeze", lambda x, c: logp(x).gather(-1, c.unsqueeze(-1))),
        Mistake("shifted", lambda x, c: logp(x[:, :-1]).gather(-1, c[:, 1:])),
    ],
)
def candidate_logprobs(logits: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
    """``out[b][t][k] = log_softmax(logits[b][t])[candidates[b][t][k]]``. logits: (B, L, V)
    float32; candidates: (B, L, K) int64 in [0, V). Returns (B, L, K) float32."""
    return logits.log_softmax(-1).gather(-1, candidates)


# 3. next-token log-probs at a sampling temperature
def _tempered(seed: int, B: int, L: int, V: int, T: float) -> tuple:
    return logits(rng(seed), B, L, V), ints(rng(seed + 1), V, B, L), T


@exercise(
    edge_cases=[
        _tempered(11, 2, 4, 5, 0.7),
        _tempered(13, 1, 5, 6, 1.5),      # B == 1
        _tempered(15, 3, 2, 4, 0.5),      # L == 2: one target per row
        _underflow(_tempered(17, 2, 3, 4, 1.0), 1, 2),  # T == 1 (the plain log-probs); a logit of -200
    ],
    random_case=from_sizes((2, 6), (2, 8), inputs=lambda g, B, L, V: (
        logits(g, B, L, V), ints(g, V, B, L), (0.5, 0.7, 1.3, 2.0)[between(g, 0, 3)])),
    seed=202, grad="same", atol=ATOL,
    right=[
        lambda x, ids, T: token_logprobs(x[:, :-1] / T, ids[:, 1:]),
        lambda x, ids, T: -F.cross_entropy((x[:, :-1] / T).transpose(1, 2), ids[:, 1:], reduction="none"),
        lambda x, ids, T: x.div(T).log_softmax(-1)[:, :-1].gather(-1, ids[:, 1:, None])[..., 0],
    ],
    mistakes=[
        Mistake("forgot_temperature", lambda x, ids, T: pick(logp(x[:, :-1]), ids[:, 1:])),
        Mistake("times_temperature", lambda x, ids, T: pick(logp(x[:, :-1] * T), ids[:, 1:])),
        Mistake("divided_after", lambda x, ids, T: pick(logp(x[:, :-1]), ids[:, 1:]) / T),
        Mistake("no_shift", lambda x, ids, T: pick(logp(x[:, :-1] / T), ids[:, :-1])),
        Mistake("probabilities", lambda x, ids, T: pick((x[:, :-1] / T).softmax(-1), ids[:, 1:])),
        Mistake("softmax_then_log", lambda x, ids, T: pick((x[:, :-1] / T).softmax(-1).log(), ids[:, 1:])),
        Mistake("dropped_first_logits", lambda x, ids, T: pick(logp(x[:, 1:] / T), ids[:, 1:])),
        Mistake("every_position", lambda x, ids, T: pick(logp(x / T), ids)),
    ],
)
def tempered_logprobs(logits: torch.Tensor, ids: torch.Tensor, temperature: float) -> torch.Tensor:
    """``out[b][t] = log_softmax(logits[b][t] / temperature)[ids[b][t + 1]]``. logits: (B, L, V)
    float32; ids: (B, L) int64 in [0, V), L >= 2; temperature: a float > 0. Returns (B, L - 1)."""
    return pick(logp(logits[:, :-1] / temperature), ids[:, 1:])


# 4. find the bug: a sequence log-likelihood whose mask is off by one
def _seq(mask_of, values=lambda x, y: pick(logp(x[:, :-1]), y[:, 1:].clamp(min=0)), where=True):
    """A sequence log-likelihood from ``values(logits, labels)`` and the mask ``mask_of(labels)``."""
    return lambda x, y: (torch.where(mask_of(y), values(x, y), 0.0) if where else values(x, y) * mask_of(y)).sum(-1)


def _sequence_random(g: torch.Generator):
    B, L = distinct(g, 1, 7)
    L += 1  # L in 2..8
    if B == L:
        B = B - 1 if B > 1 else B + 2
    V = between(g, 2, 9)
    return logits(g, B, L, V), padded_labels(g, V, B, L)


@exercise(
    bug="mask_not_shifted",
    edge_cases=[
        (logits(rng(22), 2, 5, 4), t([[1, 3, PAD, PAD, PAD], [0, 2, 2, 1, 3]])),  # B > 1 first
        (logits(rng(21), 1, 4, 5), t([[2, 0, 4, 3]])),                          # B == 1, no padding
        (logits(rng(23), 3, 6, 6), t([[5, 1, 0, 2, PAD, PAD], [3, PAD, PAD, PAD, PAD, PAD],
                                       [0, 1, 2, 3, 4, 5]])),  # a row with nothing to score
        (logits(rng(24), 2, 3, 7), t([[6, 6, 6], [2, PAD, PAD]])),
        (logits(rng(25), 3, 2, 4), t([[1, 2], [0, PAD], [3, 3]])),             # L == 2, B > 1
        _underflow((logits(rng(26), 2, 4, 5), t([[4, 1, 3, PAD], [0, 2, 2, 1]])), 0, 2),
        (with_value(logits(rng(27), 2, 4, 5), (0, 1, 0), float("-inf")),        # the dummy id 0 at a padded
         t([[4, 1, PAD, PAD], [0, 2, 2, 1]])),                              # target has log-prob -inf
    ],
    random_case=_sequence_random, seed=203, grad="same", atol=ATOL,
    right=[
        lambda x, y: -F.cross_entropy(x[:, :-1].transpose(1, 2), y[:, 1:], ignore_index=PAD, reduction="none").sum(-1),
        lambda x, y: token_logprobs(x[:, :-1], y[:, 1:], ignore_index=PAD).sum(-1),
        _seq(lambda y: y[:, 1:] != PAD),
    ],
    mistakes=[
        Mistake("mask_not_shifted", _seq(lambda y: y[:, :-1] != PAD)),
        Mistake("times_mask", _seq(lambda y: y[:, 1:] != PAD, where=False)),
        Mistake("gather_sees_pad", _seq(lambda y: y[:, 1:] != PAD, lambda x, y: pick(logp(x[:, :-1]), y[:, 1:]))),
        Mistake("no_mask", _seq(lambda y: torch.ones_like(y[:, 1:], dtype=torch.bool))),
        Mistake("no_shift", _seq(lambda y: y != PAD, lambda x, y: pick(logp(x), y.clamp(min=0)))),
        Mistake("mean_not_sum", lambda x, y: sequence_logprob(x, y) / (y[:, 1:] != PAD).sum(-1).clamp(min=1)),
        Mistake("squeezed_batch", lambda x, y: sequence_logprob(x, y).squeeze()),
        Mistake("summed_whole_batch", lambda x, y: pick(logp(x[:, :-1]), y[:, 1:].clamp(min=0))[y[:, 1:] != PAD].sum()),
        Mistake("softmax_then_log", _seq(lambda y: y[:, 1:] != PAD,
                                         lambda x, y: pick(x[:, :-1].softmax(-1).log(), y[:, 1:].clamp(min=0)),
                                         where=False)),
        Mistake("bare_squeeze", _seq(lambda y: y[:, 1:] != PAD, lambda x, y: logp(x[:, :-1]).gather(
            -1, y[:, 1:].clamp(min=0).unsqueeze(-1)).squeeze(), where=False)),
        Mistake("cross_entropy_sign", lambda x, y: F.cross_entropy(x[:, :-1].transpose(1, 2), y[:, 1:], ignore_index=PAD,
                                                                  reduction="none").sum(-1)),
    ],
)
def sequence_logprob(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Each sequence's sum of next-token log-probs, padding excluded. logits: (B, L, V) float32;
    labels: (B, L) int64 in [0, V) or -100 (padding, at the end of a row); ``logits[:, t]`` scores
    position t + 1. Returns (B,) float32."""
    targets = labels[:, 1:]
    mask = targets != PAD
    logp = logits[:, :-1].log_softmax(-1).gather(-1, targets.masked_fill(~mask, 0).unsqueeze(-1)).squeeze(-1)
    return torch.where(mask, logp, 0.0).sum(-1)  # not `logp * mask`: 0 * -inf is nan


# 5. score only the completion
def _comp(mask_of, values=lambda x, ids: pick(logp(x[:, :-1]), ids[:, 1:])):
    """The sum of ``values(logits, ids)`` where ``mask_of(t, prompt_len, length)``, t = 1 .. L - 1."""
    return lambda x, ids, p, n: (values(x, ids) * mask_of(torch.arange(1, ids.shape[1]), p, n)).sum(-1)


_SPAN = lambda t, p, n: (t >= p[:, None]) & (t < n[:, None])  # noqa: E731 - the completion's targets


def _completion_case(logits: torch.Tensor, prompt_len, length, g: torch.Generator | None = None):
    B, L, V = logits.shape
    ids = ints(g or rng(B * 100 + L * 10 + V), V, B, L)
    ids[torch.arange(L) >= t(length)[:, None]] = 0  # padding after the completion holds id 0
    return logits, ids, t(prompt_len), t(length)


def _completion_random(g: torch.Generator):
    B, L = distinct(g, 3, 8)
    B -= 2  # B in 1..6, L in 3..8, B != L
    if B == L:
        L += 1
    V, length = between(g, 2, 9), [between(g, 2, L) for _ in range(B)]
    return _completion_case(logits(g, B, L, V), [between(g, 1, n - 1) for n in length], length, g)


@exercise(
    edge_cases=[
        _completion_case(logits(rng(32), 2, 7, 4), [3, 1], [5, 7]),      # B > 1 first
        _completion_case(logits(rng(31), 1, 6, 5), [2], [5]),            # B == 1, one padding
        _completion_case(logits(rng(33), 3, 5, 6), [4, 1, 2], [5, 2, 3]),  # one-token completions
        _completion_case(logits(rng(34), 2, 8, 3), [2, 5], [6, 8]),
        _completion_case(logits(rng(35), 3, 2, 4), [1, 1, 1], [2, 2, 2]),  # L == 2, B > 1
        _underflow(_completion_case(logits(rng(36), 2, 5, 4), [2, 1], [5, 4]), 0, 3),
    ],
    random_case=_completion_random, seed=204, grad="same", atol=ATOL,
    right=[
        lambda x, ids, p, n: token_logprobs(x[:, :-1], ids[:, 1:].masked_fill(
            ~_SPAN(torch.arange(1, ids.shape[1], device=ids.device), p, n), PAD), ignore_index=PAD).sum(-1),
        lambda x, ids, p, n: torch.stack([pick(logp(x[b, p[b] - 1:n[b] - 1]), ids[b, p[b]:n[b]]).sum() for b in range(len(ids))]),
        lambda x, ids, p, n: torch.where(_SPAN(torch.arange(1, ids.shape[1], device=ids.device), p, n),
                                         pick(logp(x[:, :-1]), ids[:, 1:]), 0.0).sum(-1),
    ],
    mistakes=[
        Mistake("mask_not_shifted", _comp(lambda t, p, n: _SPAN(t - 1, p, n))),
        Mistake("includes_prompt", _comp(lambda t, p, n: t < n[:, None])),
        Mistake("ignores_length", _comp(lambda t, p, n: t >= p[:, None])),
        Mistake("no_shift", lambda x, ids, p, n: (pick(logp(x), ids) * _SPAN(torch.arange(ids.shape[1]), p, n)).sum(-1)),
        Mistake("no_column", _comp(lambda t, p, n: (t >= p) & (t < n))),
        Mistake("prompt_off_by_one", _comp(lambda t, p, n: (t > p[:, None]) & (t < n[:, None]))),
        Mistake("squeezed_batch", lambda x, ids, p, n: completion_logprob(x, ids, p, n).squeeze()),
        Mistake("summed_whole_batch", lambda x, ids, p, n: pick(logp(x[:, :-1]), ids[:, 1:])[
            _SPAN(torch.arange(1, ids.shape[1]), p, n)].sum()),
        Mistake("softmax_then_log", _comp(_SPAN, lambda x, ids: pick(x[:, :-1].softmax(-1).log(), ids[:, 1:]))),
        Mistake("bare_squeeze", _comp(_SPAN, lambda x, ids: logp(x[:, :-1]).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze())),
        Mistake("length_included", _comp(lambda t, p, n: (t >= p[:, None]) & (t <= n[:, None]))),
        Mistake("mean_not_sum", lambda x, ids, p, n: completion_logprob(x, ids, p, n) / (n - p)),
    ],
)
def completion_logprob(logits: torch.Tensor, ids: torch.Tensor, prompt_len: torch.Tensor,
                       length: torch.Tensor) -> torch.Tensor:
    """Log-likelihood of the tokens t with ``prompt_len[b] <= t < length[b]``, each scored by
    ``logits[:, t - 1]``. logits: (B, L, V) float32; ids: (B, L) int64 in [0, V) (id 0 after
    ``length``); prompt_len, length: (B,) int64, ``1 <= prompt_len < length <= L``. Returns (B,)."""
    t = torch.arange(1, ids.shape[1], device=ids.device)  # the positions of the targets ids[:, 1:]
    mask = (t >= prompt_len[:, None]) & (t < length[:, None])
    logp = logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (logp * mask).sum(-1)


# 6. chunked log-probs: gather minus logsumexp, four rows at a time
def _by_4(per_chunk, stop=lambda N: N):
    """``per_chunk(x, y)`` on rows ``[s, s + 4)`` for s in ``range(0, stop(N), 4)``, concatenated."""
    return lambda logits, ids: torch.cat([logits[:0, 0]] + [per_chunk(logits[s:s + 4], ids[s:s + 4])
                                                            for s in range(0, stop(logits.shape[0]), 4)])


def _chunk_case(g: torch.Generator, N: int, V: int) -> tuple:
    return logits(g, N, V), ints(g, V, N)


def _chunked_large(N: int, V: int, seed: int):
    """Logits x30, each row scoring its smallest: ``exp`` overflows, the probability underflows."""
    x = logits(rng(seed), N, V) * 30
    return x, x.argmin(-1)


def _into_preallocated(logits, ids, stop=lambda N: N):
    out = logits.new_zeros(ids.shape[0])  # preallocating reads no row of logits
    for s in range(0, stop(len(ids)), 4):
        out[s:s + 4] = pick(logp(logits[s:s + 4]), ids[s:s + 4])
    return out


@exercise(
    edge_cases=[
        _chunk_case(rng(52), 6, 4),     # 6 rows: a full chunk and a partial one (N > 1 first)
        _chunk_case(rng(51), 1, 5),     # N == 1: a single, partial chunk
        _chunk_case(rng(53), 8, 3),     # two full chunks
        _chunk_case(rng(54), 9, 7),     # one row left over
        _chunk_case(rng(55), 21, 6),    # torch.chunk(x, 4) makes chunks of 6 rows here
        _chunked_large(5, 4, 56),     # logits up to ~147: exp overflows, softmax underflows
    ],
    random_case=from_sizes((1, 13), inputs=_chunk_case),
    seed=206, grad="same", chunk_rows=4, atol=ATOL,
    right=[
        lambda x, y: token_logprobs(x, y, chunk_size=4),
        lambda x, y: torch.stack([row[i] - torch.logsumexp(row, 0) for row, i in zip(x, y)]),
        _into_preallocated,
    ],
    mistakes=[
        Mistake("softmax_then_log", lambda x, y: pick(x.softmax(-1).log(), y)),
        Mistake("naive_logsumexp", _by_4(lambda x, y: pick(x, y) - x.exp().sum(-1).log())),
        Mistake("dropped_remainder", _by_4(lambda x, y: pick(x, y) - torch.logsumexp(x, -1), stop=lambda N: N - N % 4)),
        Mistake("minus_max", lambda x, y: pick(x, y) - x.amax(-1)),
        Mistake("raw_logits", pick),
        Mistake("probabilities", lambda x, y: pick(x.softmax(-1), y)),
        Mistake("normaliser_over_chunk", _by_4(lambda x, y: pick(x, y) - x.exp().sum().log())),
        Mistake("remainder_left_zero", lambda x, y: _into_preallocated(x, y, stop=lambda N: N - N % 4)),
        Mistake("sign", _by_4(lambda x, y: torch.logsumexp(x, -1) - pick(x, y))),
    ],
)
def chunked_logprobs(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """``logits[n, ids[n]] - logsumexp(logits[n])``, 4 rows at a time (the temporaries of 4 rows).
    logits: (N, V) float32; ids: (N,) int64 in [0, V). Returns (N,) float32."""
    return _by_4(lambda x, y: pick(x, y) - torch.logsumexp(x, dim=-1))(logits, ids)  # pick: gather, squeeze
