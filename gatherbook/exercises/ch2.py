"""Chapter 2 exercises: per-token log-probabilities of a language model.

Token log-probs with and without the next-token shift, the masked sequence log-likelihood,
completion-only scoring, the PPO/GRPO importance ratio, and a chunked computation that never
builds the full log-softmax. Cases use logits with one decimal (easy to read in feedback),
shapes whose batch size differs from their length (so an answer along the wrong dim cannot pass
by accident), padding of at least two positions, and a batch of one. Exercises that sum over the
positions start with a batch of several rows, so that a sum over the whole batch fails on case 1
with a shape that no squeeze explains; the batch of one comes second. One token case has a logit
of -200, whose probability underflows to 0 in float32: ``softmax(-1).log()`` gives -inf there,
``log_softmax(-1)`` the finite -200 minus the row's logsumexp.
"""
from __future__ import annotations

import torch

from gatherbook.exercises._checker import Exercise, Mistake
from gatherbook.exercises._random import _distinct, _int, case_builders

I64 = torch.int64
ATOL = 1e-5  # float32 answers computed another way (e.g. logsumexp) differ in the last bits
PAD = -100


# --------------------------------------------------------------------------------------------
# small helpers for the cases

def _logits(g: torch.Generator, *shape: int) -> torch.Tensor:
    """Floats with one decimal in [-4.9, 4.9]."""
    return torch.randint(-49, 50, shape, generator=g).float() / 10


def _ids(g: torch.Generator, V: int, *shape: int) -> torch.Tensor:
    return torch.randint(0, V, shape, generator=g, dtype=I64)


def _fixed_logits(B: int, L: int, V: int, seed: int) -> torch.Tensor:
    return _logits(torch.Generator().manual_seed(seed), B, L, V)


def _t(values) -> torch.Tensor:
    return torch.tensor(values, dtype=I64)


def _with(logits: torch.Tensor, where: tuple[int, ...], value: float) -> torch.Tensor:
    """``logits`` with one entry replaced (e.g. a logit so negative that its softmax underflows)."""
    logits = logits.clone()
    logits[where] = value
    return logits


def _logp(logits: torch.Tensor) -> torch.Tensor:
    return logits.log_softmax(-1)


def _pick(logp: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return logp.gather(-1, ids.unsqueeze(-1)).squeeze(-1)


# --------------------------------------------------------------------------------------------
# 1. token log-probs, no shift

def pick_logprobs(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """The log-probability of each given token: ``out[b][t] = log_softmax(logits[b][t])[ids[b][t]]``.

    logits: (B, L, V) float32; ids: (B, L) int64 in [0, V). Returns (B, L) float32.
    """
    return logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


def _token_random(g: torch.Generator):
    B, L = _distinct(g, 1, 6)
    V = _int(g, 2, 9)
    return _logits(g, B, L, V), _ids(g, V, B, L)


PICK_LOGPROBS = Exercise(
    name="ch2.pick_logprobs",
    args=("logits", "ids"),
    reference=pick_logprobs,
    edge_cases=[
        (_fixed_logits(1, 4, 6, 1), _t([[2, 0, 5, 3]])),                       # B == 1
        (_fixed_logits(2, 3, 5, 2), _t([[4, 4, 0], [1, 2, 3]])),
        (_fixed_logits(3, 2, 1, 3), _t([[0, 0], [0, 0], [0, 0]])),              # V == 1: log-prob 0
        (_with(_fixed_logits(2, 5, 4, 4), (0, 1, 2), -200.0),                  # softmax underflows to 0
         _t([[3, 2, 1, 0, 3], [0, 0, 1, 1, 2]])),                              # ... and ids[0][1] reads it
    ],
    random_case=_token_random,
    seed=201,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake("raw_logits", lambda logits, ids: logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1)),
        Mistake(
            "probabilities",
            lambda logits, ids: logits.softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1),
        ),
        Mistake(
            "softmax_then_log",
            lambda logits, ids: logits.softmax(-1).log().gather(-1, ids.unsqueeze(-1)).squeeze(-1),
        ),
        Mistake(
            "softmax_wrong_dim",
            lambda logits, ids: logits.log_softmax(1).gather(-1, ids.unsqueeze(-1)).squeeze(-1),
        ),
        Mistake("forgot_squeeze", lambda logits, ids: logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1))),
        Mistake("no_unsqueeze", lambda logits, ids: logits.log_softmax(-1).gather(-1, ids)),
        Mistake(
            "gather_dim1",
            lambda logits, ids: logits.log_softmax(-1).gather(1, ids.unsqueeze(-1)).squeeze(-1),
        ),
    ],
)


# --------------------------------------------------------------------------------------------
# 2. next-token log-probs: the shift

def next_token_logprobs(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """How likely the model finds each token after the first, given the tokens before it.

    ``logits[:, t]`` scores the token at ``t + 1``: ``out[b][t] = log_softmax(logits[b][t])[ids[b][t + 1]]``.
    logits: (B, L, V) float32; ids: (B, L) int64 in [0, V), L >= 2. Returns (B, L - 1) float32.
    """
    return logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)


def _next_random(g: torch.Generator):
    B, L = _distinct(g, 2, 7)
    B -= 1  # B in 1..6, L in 2..7 (and B != L + 1 is irrelevant: B != L is what counts)
    if B == L:
        L += 1
    V = _int(g, 2, 9)
    return _logits(g, B, L, V), _ids(g, V, B, L)


NEXT_PICK_LOGPROBS = Exercise(
    name="ch2.next_token_logprobs",
    args=("logits", "ids"),
    reference=next_token_logprobs,
    edge_cases=[
        (_fixed_logits(1, 5, 6, 11), _t([[2, 0, 5, 3, 1]])),                   # B == 1
        (_fixed_logits(2, 4, 5, 12), _t([[4, 1, 0, 2], [1, 2, 3, 3]])),
        (_fixed_logits(3, 2, 4, 13), _t([[0, 1], [2, 3], [3, 3]])),             # L == 2: one score per row
        (_fixed_logits(2, 6, 3, 14), _t([[0, 1, 2, 0, 1, 2], [2, 2, 1, 1, 0, 0]])),
    ],
    random_case=_next_random,
    seed=202,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake("no_shift", lambda logits, ids: _pick(_logp(logits[:, :-1]), ids[:, :-1])),
        Mistake("shift_backwards", lambda logits, ids: _pick(_logp(logits[:, 1:]), ids[:, :-1])),
        Mistake(
            "raw_logits",
            lambda logits, ids: logits[:, :-1].gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1),
        ),
        Mistake("not_cut", lambda logits, ids: _pick(_logp(logits), ids)),
        Mistake("both_cut_at_start", lambda logits, ids: _pick(_logp(logits[:, 1:]), ids[:, 1:])),
    ],
)


# --------------------------------------------------------------------------------------------
# 3. sequence log-likelihood with padding labels

def sequence_logprob(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Log-likelihood of each sequence: the sum of its next-token log-probs, padding excluded.

    logits: (B, L, V) float32; labels: (B, L) int64, token ids in [0, V) or -100 (padding, at the
    end of a row). Position t + 1 is scored by ``logits[:, t]`` when ``labels[:, t + 1] != -100``.
    Returns (B,) float32.
    """
    targets = labels[:, 1:]
    mask = targets != PAD
    logp = logits[:, :-1].log_softmax(-1).gather(-1, targets.masked_fill(~mask, 0).unsqueeze(-1)).squeeze(-1)
    return (logp * mask).sum(-1)


def _sequence_summed_whole_batch(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    targets = labels[:, 1:]
    mask = targets != PAD
    logp = _pick(_logp(logits[:, :-1]), targets.clamp(min=0))
    return logp[mask].sum()  # lp[mask] is 1D: every row's values in one line


def _padded(g: torch.Generator, V: int, B: int, L: int) -> torch.Tensor:
    labels = _ids(g, V, B, L)
    for b in range(B):
        n = _int(g, 1, L)  # tokens kept; the first row is padded by at least 2 when L allows it
        if b == 0 and L >= 3:
            n = min(n, L - 2)
        labels[b, n:] = PAD
    return labels


def _sequence_random(g: torch.Generator):
    B, L = _distinct(g, 1, 7)
    L += 1  # L in 2..8
    if B == L:
        B = B - 1 if B > 1 else B + 2
    V = _int(g, 2, 9)
    return _logits(g, B, L, V), _padded(g, V, B, L)


SEQUENCE_LOGPROB = Exercise(
    name="ch2.sequence_logprob",
    args=("logits", "labels"),
    reference=sequence_logprob,
    edge_cases=[
        (_fixed_logits(2, 5, 4, 22), _t([[1, 3, PAD, PAD, PAD], [0, 2, 2, 1, 3]])),     # B > 1 first
        (_fixed_logits(1, 4, 5, 21), _t([[2, 0, 4, 3]])),                               # B == 1, no padding
        (_fixed_logits(3, 6, 6, 23), _t([[5, 1, 0, 2, PAD, PAD], [3, PAD, PAD, PAD, PAD, PAD],
                                         [0, 1, 2, 3, 4, 5]])),                        # a row with nothing to score
        (_fixed_logits(2, 3, 7, 24), _t([[6, 6, 6], [2, PAD, PAD]])),
    ],
    random_case=_sequence_random,
    seed=203,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake(
            "gather_sees_pad",
            lambda logits, labels: (_pick(_logp(logits[:, :-1]), labels[:, 1:]) * (labels[:, 1:] != PAD)).sum(-1),
        ),
        Mistake(
            "no_mask",
            lambda logits, labels: _pick(_logp(logits[:, :-1]), labels[:, 1:].clamp(min=0)).sum(-1),
        ),
        Mistake(
            "mask_not_shifted",
            lambda logits, labels: (_pick(_logp(logits[:, :-1]), labels[:, 1:].clamp(min=0))
                                    * (labels[:, :-1] != PAD)).sum(-1),
        ),
        Mistake(
            "no_shift",
            lambda logits, labels: (_pick(_logp(logits), labels.clamp(min=0)) * (labels != PAD)).sum(-1),
        ),
        Mistake(
            "mean_not_sum",
            lambda logits, labels: (sequence_logprob(logits, labels)
                                    / (labels[:, 1:] != PAD).sum(-1).clamp(min=1)),
        ),
        Mistake(  # before summed_whole_batch: on a batch of one the two give the same number
            "squeezed_batch",
            lambda logits, labels: sequence_logprob(logits, labels).squeeze(),
        ),
        Mistake("summed_whole_batch", _sequence_summed_whole_batch),
    ],
)


# --------------------------------------------------------------------------------------------
# 4. score only the completion

def completion_logprob(logits: torch.Tensor, ids: torch.Tensor, prompt_len: torch.Tensor,
                       length: torch.Tensor) -> torch.Tensor:
    """Log-likelihood of the completion only: tokens at positions ``prompt_len[b] <= t < length[b]``.

    logits: (B, L, V) float32; ids: (B, L) int64 in [0, V) (padding after ``length`` holds id 0);
    prompt_len, length: (B,) int64 with ``1 <= prompt_len < length <= L``. Token t is scored by
    ``logits[:, t - 1]``. Returns (B,) float32.
    """
    L = ids.shape[1]
    t = torch.arange(1, L, device=ids.device)
    mask = (t >= prompt_len[:, None]) & (t < length[:, None])
    logp = logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (logp * mask).sum(-1)


def _completion_masked_sum(logits: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The sum of the target log-probs (``ids[:, 1:]`` scored by ``logits[:, :-1]``) where ``mask``."""
    return (_pick(_logp(logits[:, :-1]), ids[:, 1:]) * mask).sum(-1)


def _completion_no_column(logits, ids, prompt_len, length):
    t = torch.arange(1, ids.shape[1])
    return _completion_masked_sum(logits, ids, (t >= prompt_len) & (t < length))  # (L - 1,) vs (B,)


def _completion_prompt_off_by_one(logits, ids, prompt_len, length):
    t = torch.arange(1, ids.shape[1])
    return _completion_masked_sum(logits, ids, (t > prompt_len[:, None]) & (t < length[:, None]))


def _completion_summed_whole_batch(logits, ids, prompt_len, length):
    t = torch.arange(1, ids.shape[1])
    mask = (t >= prompt_len[:, None]) & (t < length[:, None])
    return _pick(_logp(logits[:, :-1]), ids[:, 1:])[mask].sum()


def _completion_case(logits: torch.Tensor, prompt_len, length, g: torch.Generator | None = None):
    B, L, V = logits.shape
    g = g or torch.Generator().manual_seed(B * 100 + L * 10 + V)
    ids = _ids(g, V, B, L)
    length_t, prompt_t = _t(length), _t(prompt_len)
    ids[torch.arange(L) >= length_t[:, None]] = 0
    return logits, ids, prompt_t, length_t


def _completion_random(g: torch.Generator):
    B, L = _distinct(g, 3, 8)
    B -= 2  # B in 1..6, L in 3..8
    if B == L:
        L += 1
    V = _int(g, 2, 9)
    length = [_int(g, 2, L) for _ in range(B)]
    prompt = [_int(g, 1, n - 1) for n in length]
    return _completion_case(_logits(g, B, L, V), prompt, length, g)


COMPLETION_LOGPROB = Exercise(
    name="ch2.completion_logprob",
    args=("logits", "ids", "prompt_len", "length"),
    reference=completion_logprob,
    edge_cases=[
        _completion_case(_fixed_logits(2, 7, 4, 32), [3, 1], [5, 7]),           # B > 1 first
        _completion_case(_fixed_logits(1, 6, 5, 31), [2], [5]),                 # B == 1, one padding
        _completion_case(_fixed_logits(3, 5, 6, 33), [4, 1, 2], [5, 2, 3]),      # one-token completions
        _completion_case(_fixed_logits(2, 8, 3, 34), [2, 5], [6, 8]),
    ],
    random_case=_completion_random,
    seed=204,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake(
            "mask_not_shifted",
            lambda logits, ids, p, n: (_pick(_logp(logits[:, :-1]), ids[:, 1:])
                                       * ((torch.arange(ids.shape[1] - 1) >= p[:, None])
                                          & (torch.arange(ids.shape[1] - 1) < n[:, None]))).sum(-1),
        ),
        Mistake(
            "includes_prompt",
            lambda logits, ids, p, n: (_pick(_logp(logits[:, :-1]), ids[:, 1:])
                                       * (torch.arange(1, ids.shape[1]) < n[:, None])).sum(-1),
        ),
        Mistake(
            "ignores_length",
            lambda logits, ids, p, n: (_pick(_logp(logits[:, :-1]), ids[:, 1:])
                                       * (torch.arange(1, ids.shape[1]) >= p[:, None])).sum(-1),
        ),
        Mistake(
            "no_shift",
            lambda logits, ids, p, n: (_pick(_logp(logits), ids)
                                       * ((torch.arange(ids.shape[1]) >= p[:, None])
                                          & (torch.arange(ids.shape[1]) < n[:, None]))).sum(-1),
        ),
        Mistake("no_column", _completion_no_column),
        Mistake("prompt_off_by_one", _completion_prompt_off_by_one),
        Mistake(  # before summed_whole_batch: on a batch of one the two give the same number
            "squeezed_batch",
            lambda logits, ids, p, n: completion_logprob(logits, ids, p, n).squeeze(),
        ),
        Mistake("summed_whole_batch", _completion_summed_whole_batch),
    ],
)


# --------------------------------------------------------------------------------------------
# 5. the PPO / GRPO importance ratio

def importance_ratio(new_logp: torch.Tensor, old_logp: torch.Tensor) -> torch.Tensor:
    """The per-token probability ratio ``pi_new / pi_old`` from log-probabilities.

    new_logp, old_logp: (B, T) float32 token log-probs (<= 0). Returns (B, T) float32,
    ``exp(new_logp - old_logp)``.
    """
    return torch.exp(new_logp - old_logp)


def _neg(g: torch.Generator, *shape: int) -> torch.Tensor:
    """Log-probs with one decimal in [-4.0, -0.1]."""
    return -torch.randint(1, 41, shape, generator=g).float() / 10


def _ratio_inputs(g: torch.Generator, B: int, T: int):
    return _neg(g, B, T), _neg(g, B, T)


_ratio_random, _ratio_fixed = case_builders(_ratio_inputs, 1, 7)


IMPORTANCE_RATIO = Exercise(
    name="ch2.importance_ratio",
    args=("new_logp", "old_logp"),
    reference=importance_ratio,
    edge_cases=[
        (torch.tensor([[-0.5, -1.2, -2.0]]), torch.tensor([[-0.5, -1.0, -3.0]])),   # B == 1; equal -> 1
        _ratio_fixed(2, 4, 41),
        _ratio_fixed(4, 1, 42),
        _ratio_fixed(3, 5, 43),
    ],
    random_case=_ratio_random,
    seed=205,
    grad="same",
    mistakes=[
        Mistake("ratio_of_logprobs", lambda new, old: new / old),
        Mistake("inverted", lambda new, old: torch.exp(old - new)),
        Mistake("no_exp", lambda new, old: new - old),
        Mistake("difference_of_probs", lambda new, old: torch.exp(new) - torch.exp(old)),
    ],
)


# --------------------------------------------------------------------------------------------
# 6. chunked log-probs: gather minus logsumexp, four rows at a time

def chunked_logprobs(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Token log-probs without a full log-softmax: ``logits[n, ids[n]] - logsumexp(logits[n])``.

    Processes 4 rows at a time, so the temporary memory is that of 4 rows, whatever N.
    logits: (N, V) float32; ids: (N,) int64 in [0, V). Returns (N,) float32, equal to
    ``logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)``.
    """
    pieces = []
    for start in range(0, logits.shape[0], 4):
        x, y = logits[start:start + 4], ids[start:start + 4]
        pieces.append(x.gather(-1, y.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(x, dim=-1))
    return torch.cat(pieces)


def _dropped_remainder(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    pieces = [logits[:0, 0]]
    for start in range(0, logits.shape[0] - logits.shape[0] % 4, 4):
        x, y = logits[start:start + 4], ids[start:start + 4]
        pieces.append(x.gather(-1, y.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(x, dim=-1))
    return torch.cat(pieces)


def _normaliser_over_chunk(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    pieces = []
    for start in range(0, logits.shape[0], 4):
        x, y = logits[start:start + 4], ids[start:start + 4]
        pieces.append(x.gather(-1, y.unsqueeze(-1)).squeeze(-1) - x.exp().sum().log())  # all rows at once
    return torch.cat(pieces)


def _chunked_inputs(g: torch.Generator, N: int, V: int):
    return _logits(g, N, V), _ids(g, V, N)


_chunked_random, _chunked_fixed = case_builders(_chunked_inputs, 1, 13)


CHUNKED_LOGPROBS = Exercise(
    name="ch2.chunked_logprobs",
    args=("logits", "ids"),
    reference=chunked_logprobs,
    edge_cases=[
        _chunked_fixed(6, 4, 52),     # 6 rows: a full chunk and a partial one (N > 1 first)
        _chunked_fixed(1, 5, 51),     # N == 1: a single, partial chunk
        _chunked_fixed(8, 3, 53),     # two full chunks
        _chunked_fixed(9, 7, 54),     # one row left over
    ],
    random_case=_chunked_random,
    seed=206,
    grad="same",
    chunk_rows=4,
    atol=ATOL,
    mistakes=[
        Mistake("dropped_remainder", _dropped_remainder),
        Mistake(
            "minus_max",
            lambda logits, ids: logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1) - logits.amax(-1),
        ),
        Mistake("raw_logits", lambda logits, ids: logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1)),
        Mistake(
            "probabilities",
            lambda logits, ids: logits.softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1),
        ),
        Mistake("normaliser_over_chunk", _normaliser_over_chunk),
    ],
)


EXERCISES = [PICK_LOGPROBS, NEXT_PICK_LOGPROBS, SEQUENCE_LOGPROB, COMPLETION_LOGPROB, IMPORTANCE_RATIO,
             CHUNKED_LOGPROBS]


#: Titles (the exercises' headings in the book) and hints, per language and exercise.
MESSAGES = {
    "en": {
        "pick_logprobs": {
            "title": "Log-probability of each given token",
            "raw_logits": ("you gathered the raw logits. A logit is a score defined up to a constant "
                           "per row, not a log-probability: apply `log_softmax(-1)` first, then "
                           "gather."),
            "probabilities": ("these are probabilities (`softmax`), not log-probabilities: use "
                              "`log_softmax(-1)` (not `softmax(-1).log()`, which gives -inf where a "
                              "probability underflows to 0)."),
            "softmax_then_log": ("`softmax(-1).log()` is right on paper, but in float32 a "
                                 "probability below about 1e-45 underflows to 0 and its log is -inf "
                                 "(here, for the very negative logit). `log_softmax(-1)` computes "
                                 "the log-probability directly and stays finite."),
            "softmax_wrong_dim": ("`log_softmax(1)` normalises over the positions; each position's "
                                  "distribution runs over the vocabulary, the last dim: "
                                  "`log_softmax(-1)`."),
            "forgot_squeeze": ("gather's output has the index's shape (B, L, 1): `.squeeze(-1)` it "
                               "to get (B, L)."),
            "no_unsqueeze": ("gather needs an index with as many dims as the tensor it reads: `ids` "
                             "is (B, L) and the log-probs are (B, L, V). Add the last dim with "
                             "`ids.unsqueeze(-1)`, shape (B, L, 1), then `.squeeze(-1)` the result."),
            "gather_dim1": ("`gather(1, ...)` reads along the positions, the L axis: each id is "
                            "taken as a position (and an id >= L is out of bounds). The ids number "
                            "entries of the vocabulary, the last dim: gather along `dim=-1`."),
        },
        "next_token_logprobs": {
            "title": "Shift by one and score the next token",
            "no_shift": ("you scored ids[:, t] with logits[:, t], i.e. the current token, not the "
                         "next one. The logits at t predict the token at t + 1: pair `logits[:, "
                         ":-1]` with `ids[:, 1:]`."),
            "shift_backwards": ("the shift goes the other way: the logits at t + 1 scored the token "
                                "at t, which the model has already seen. Use `logits[:, :-1]` with "
                                "`ids[:, 1:]`."),
            "raw_logits": ("the shift is right, but you gathered raw logits: apply `log_softmax(-1)` "
                           "before the gather."),
            "not_cut": ("the result has one score per position, (B, L), including the first token, "
                        "which nothing predicts. Cut the logits at the end and the ids at the start: "
                        "(B, L - 1)."),
            "both_cut_at_start": ("both were cut at the start: `logits[:, 1:]` with `ids[:, 1:]` "
                                  "scores each token with the logits at its own position, as if "
                                  "there were no shift. The logits at t predict the token at t + 1: "
                                  "cut the logits at the end, `logits[:, :-1]`, and the ids at the "
                                  "start, `ids[:, 1:]`."),
        },
        "sequence_logprob": {
            "title": "Sequence log-likelihood with padding",
            "gather_sees_pad": ("gather raised because it was given the padding label -100 as an "
                                "index. Replace it by a valid dummy id first, "
                                "`targets.masked_fill(targets == -100, 0)` (or `clamp(min=0)`), and "
                                "let the mask remove what the dummy id reads."),
            "no_mask": ("the padding positions were counted: after replacing -100 by a dummy id, "
                        "gather reads a real log-prob there. Multiply by the mask `labels[:, 1:] != "
                        "-100` before the sum."),
            "mask_not_shifted": ("the mask is cut like the logits, `[:, :-1]`, so it is off by one: "
                                 "it belongs to the targets `labels[:, 1:]`. Use `labels[:, 1:] != "
                                 "-100`."),
            "no_shift": ("you scored each label with the logits at its own position; the logits at t "
                         "score the token at t + 1: `logits[:, :-1]` with `labels[:, 1:]`."),
            "mean_not_sum": ("this is the mean log-prob per token; the log-likelihood of a sequence "
                             "is the sum."),
            "squeezed_batch": ("on this batch of one the result lost its only dimension: a bare "
                               "`.squeeze()` drops every dimension of size 1, the batch included. "
                               "The answer has shape (B,) even when B == 1, which `.sum(-1)` already "
                               "gives: squeeze nothing after it (and use `.squeeze(-1)` after the "
                               "gather)."),
            "summed_whole_batch": ("you summed over the whole batch, giving a single number: "
                                   "`.sum()` adds up every sequence, and so does `logp[mask].sum()`, "
                                   "since `logp[mask]` flattens all rows into one. Each sequence has "
                                   "its own log-likelihood, shape (B,): multiply by the mask and sum "
                                   "over the positions only, `(logp * mask).sum(-1)`."),
        },
        "completion_logprob": {
            "title": "Score only the completion",
            "mask_not_shifted": ("the mask is built on the positions of the logits instead of the "
                                 "targets, i.e. cut like the logits: it drops the first completion "
                                 "token and scores the token after the completion. The targets "
                                 "`ids[:, 1:]` are the tokens t = 1, 2, ...: keep `prompt_len <= t < "
                                 "length`."),
            "includes_prompt": ("the prompt tokens were scored too. Preference and RL losses score "
                                "only the completion: also require `t >= prompt_len`."),
            "ignores_length": ("the padding after `length` was scored (its id 0 is a valid token, so "
                               "nothing fails): also require `t < length`."),
            "no_shift": ("each token was scored by the logits at its own position; token t is scored "
                         "by `logits[:, t - 1]`: pair `logits[:, :-1]` with `ids[:, 1:]`."),
            "no_column": ("`t >= prompt_len` compares the positions t, shape (L - 1,), with "
                          "prompt_len, shape (B,), element by element: that works for a batch of one "
                          "only, otherwise it raises a size mismatch (or pairs the wrong entries). "
                          "Make prompt_len a column, `prompt_len[:, None]` of shape (B, 1), so that "
                          "the comparison broadcasts to a (B, L - 1) mask; the same for `length[:, "
                          "None]`."),
            "prompt_off_by_one": ("`t > prompt_len` leaves out the first completion token, which "
                                  "sits at position t = prompt_len (the prompt takes positions 0 to "
                                  "prompt_len - 1): keep `t >= prompt_len[:, None]`."),
            "squeezed_batch": ("on this batch of one the result lost its only dimension: a bare "
                               "`.squeeze()` drops every dimension of size 1, the batch included. "
                               "The answer has shape (B,) even when B == 1, which `.sum(-1)` already "
                               "gives: squeeze nothing after it (and use `.squeeze(-1)` after the "
                               "gather)."),
            "summed_whole_batch": ("you summed over the whole batch, giving a single number: "
                                   "`.sum()` adds up every sequence, and so does `logp[mask].sum()`, "
                                   "since `logp[mask]` flattens all rows into one. Each sequence has "
                                   "its own completion score, shape (B,): multiply by the mask and "
                                   "sum over the positions only, `(logp * mask).sum(-1)`."),
        },
        "importance_ratio": {
            "title": "The PPO/GRPO importance ratio",
            "ratio_of_logprobs": ("you divided the log-probabilities; the ratio is of probabilities: "
                                  "`torch.exp(new_logp - old_logp)` (log of a quotient = difference "
                                  "of logs)."),
            "inverted": "this is pi_old / pi_new, upside down: `torch.exp(new_logp - old_logp)`.",
            "no_exp": "this is the log of the ratio: apply `torch.exp` to the difference.",
            "difference_of_probs": ("you subtracted the probabilities; the ratio divides them: "
                                    "`torch.exp(new_logp - old_logp)`."),
        },
        "chunked_logprobs": {
            "title": "Log-probs four rows at a time, without log_softmax",
            "dropped_remainder": ("the last, partial chunk is missing: `range(0, N - N % 4, 4)` "
                                  "stops early. Loop over `range(0, N, 4)`; slicing "
                                  "`logits[start:start + 4]` past the end is fine."),
            "minus_max": ("subtracting the row maximum only makes the exponentials safe; the "
                          "normaliser is `torch.logsumexp(x, dim=-1)`, which is larger than the "
                          "maximum."),
            "raw_logits": ("the gathered logits still need the normaliser: subtract "
                           "`torch.logsumexp(x, dim=-1)` of each row."),
            "probabilities": ("these are probabilities; the log-probability is `x[y] - "
                              "logsumexp(x)`, with no `exp` at the end."),
            "normaliser_over_chunk": ("the normaliser was summed over the whole chunk, all its rows "
                                      "together (e.g. `x.exp().sum().log()`); each row needs its "
                                      "own: `torch.logsumexp(x, dim=-1)`."),
        },
    },
    "zh": {
        "pick_logprobs": {
            "title": "每个给定词元的对数概率",
            "raw_logits": ("你 gather 的是原始 logits。logit 只是每行差一个常数的分数，不是对数概率：先做 `log_softmax(-1)`，再 "
                           "gather。"),
            "probabilities": ("这些是概率（`softmax`），不是对数概率：请用 `log_softmax(-1)`（不要用 "
                              "`softmax(-1).log()`，概率下溢为 0 时它会得到 -inf）。"),
            "softmax_then_log": ("`softmax(-1).log()` 在数学上没错，但在 float32 中，小于约 1e-45 的概率会下溢为 0，取对数后就是 "
                                 "-inf（这里就是那个非常负的 logit）。`log_softmax(-1)` 直接计算对数概率，结果保持有限。"),
            "softmax_wrong_dim": "`log_softmax(1)` 是沿位置维归一化；每个位置的分布是在词表上，即最后一维：`log_softmax(-1)`。",
            "forgot_squeeze": "gather 的输出形状与索引相同，是 (B, L, 1)：调用 `.squeeze(-1)` 得到 (B, L)。",
            "no_unsqueeze": ("gather 要求索引的维数与被读取的张量相同：`ids` 是 (B, L)，对数概率是 (B, L, V)。用 "
                             "`ids.unsqueeze(-1)` 补上最后一维，形状为 (B, L, 1)，再对结果调用 `.squeeze(-1)`。"),
            "gather_dim1": ("`gather(1, ...)` 沿位置维（L 那一维）读取：每个 id 都被当成了位置（id >= L 时就越界了）。id "
                            "是词表中词元的编号，位于最后一维：应沿 `dim=-1` 做 gather。"),
        },
        "next_token_logprobs": {
            "title": "错开一位，给下一个词元打分",
            "no_shift": ("你用 logits[:, t] 给 ids[:, t] 打分，也就是当前词元，而不是下一个。t 处的 logits 预测 t + 1 处的词元：应把 "
                         "`logits[:, :-1]` 与 `ids[:, 1:]` 配对。"),
            "shift_backwards": ("错位方向反了：你用 t + 1 处的 logits 给 t 处的词元打分，而模型已经看到过那个词元。应使用 `logits[:, "
                                ":-1]` 与 `ids[:, 1:]`。"),
            "raw_logits": "错位是对的，但你 gather 的是原始 logits：在 gather 之前先做 `log_softmax(-1)`。",
            "not_cut": ("结果每个位置一个分数，形状 (B, L)，连第一个词元也算上了，而它没有任何预测。把 logits 去掉最后一个位置、ids 去掉第一个位置：形状 "
                        "(B, L - 1)。"),
            "both_cut_at_start": ("logits 和 ids 都从开头截掉了一位：`logits[:, 1:]` 与 `ids[:, 1:]` "
                                  "配对，等于用每个词元自己位置上的 logits 给它打分，相当于没有错位。t 处的 logits 预测 t + 1 "
                                  "处的词元：logits 去掉末尾，即 `logits[:, :-1]`，ids 去掉开头，即 `ids[:, 1:]`。"),
        },
        "sequence_logprob": {
            "title": "带填充的序列对数似然",
            "gather_sees_pad": ("gather 报错，因为填充标签 -100 被当成了索引。先把它换成一个合法的占位 "
                                "id：`targets.masked_fill(targets == -100, 0)`（或 "
                                "`clamp(min=0)`），再用掩码去掉占位 id 读到的值。"),
            "no_mask": ("填充位置被算进去了：把 -100 换成占位 id 之后，gather 在那里读到的是真实的对数概率。求和之前先乘以掩码 `labels[:, 1:] "
                        "!= -100`。"),
            "mask_not_shifted": ("掩码像 logits 一样用 `[:, :-1]` 截取，因而错开了一位：它应该对应目标 `labels[:, 1:]`。请用 "
                                 "`labels[:, 1:] != -100`。"),
            "no_shift": ("你用每个标签所在位置的 logits 给它打分；t 处的 logits 给 t + 1 处的词元打分：`logits[:, :-1]` 与 "
                         "`labels[:, 1:]` 配对。"),
            "mean_not_sum": "这是每个词元的平均对数概率；序列的对数似然是求和。",
            "squeezed_batch": ("在这个只有一个序列的批次上，结果丢掉了唯一的一维：不带参数的 `.squeeze()` 会去掉所有大小为 1 "
                               "的维度，批次维也不例外。即使 B == 1，答案的形状也是 (B,)，而 `.sum(-1)` 已经给出了这个形状：之后不要再 "
                               "squeeze（gather 之后用 `.squeeze(-1)`）。"),
            "summed_whole_batch": ("你对整个批次求和，只得到了一个数：`.sum()` 把所有序列加在了一起，`logp[mask].sum()` 也一样，因为 "
                                   "`logp[mask]` 会把所有行展平成一维。每个序列有自己的对数似然，形状为 (B,)：乘以掩码后只沿位置求和，即 "
                                   "`(logp * mask).sum(-1)`。"),
        },
        "completion_logprob": {
            "title": "只给补全部分打分",
            "mask_not_shifted": ("掩码建在了 logits 的位置上而不是目标的位置上，也就是像 logits "
                                 "那样截取：它漏掉了第一个补全词元，却给补全之后的那个词元打了分。目标 `ids[:, 1:]` 是位置 t = 1, 2, ... "
                                 "上的词元：保留 `prompt_len <= t < length`。"),
            "includes_prompt": "提示部分的词元也被打分了。偏好学习和强化学习的损失只给补全部分打分：还要加上条件 `t >= prompt_len`。",
            "ignores_length": "`length` 之后的填充也被打分了（填充的 id 0 是合法的词元 id，所以不会报错）：还要加上条件 `t < length`。",
            "no_shift": ("每个词元都用它自己位置上的 logits 打分；t 处的词元应由 `logits[:, t - 1]` 打分：把 `logits[:, :-1]` "
                         "与 `ids[:, 1:]` 配对。"),
            "no_column": ("`t >= prompt_len` 把形状为 (L - 1,) 的位置 t 与形状为 (B,) 的 prompt_len "
                          "逐元素比较：这只对只有一个序列的批次成立，否则会报大小不匹配的错（或者配错元素）。把 prompt_len 变成一列，即形状为 (B, 1) 的 "
                          "`prompt_len[:, None]`，比较才会广播成 (B, L - 1) 的掩码；`length[:, None]` 也一样。"),
            "prompt_off_by_one": ("`t > prompt_len` 漏掉了第一个补全词元，它位于位置 t = prompt_len（提示占据位置 0 到 "
                                  "prompt_len - 1）：应保留 `t >= prompt_len[:, None]`。"),
            "squeezed_batch": ("在这个只有一个序列的批次上，结果丢掉了唯一的一维：不带参数的 `.squeeze()` 会去掉所有大小为 1 "
                               "的维度，批次维也不例外。即使 B == 1，答案的形状也是 (B,)，而 `.sum(-1)` 已经给出了这个形状：之后不要再 "
                               "squeeze（gather 之后用 `.squeeze(-1)`）。"),
            "summed_whole_batch": ("你对整个批次求和，只得到了一个数：`.sum()` 把所有序列加在了一起，`logp[mask].sum()` 也一样，因为 "
                                   "`logp[mask]` 会把所有行展平成一维。每个序列的补全部分有自己的得分，形状为 (B,)：乘以掩码后只沿位置求和，即 "
                                   "`(logp * mask).sum(-1)`。"),
        },
        "importance_ratio": {
            "title": "PPO/GRPO 的重要性比率",
            "ratio_of_logprobs": "你把两个对数概率相除了；比率是概率之比：`torch.exp(new_logp - old_logp)`（商的对数等于对数之差）。",
            "inverted": "这是 pi_old / pi_new，颠倒了：应为 `torch.exp(new_logp - old_logp)`。",
            "no_exp": "这是比率的对数：对差值再取 `torch.exp`。",
            "difference_of_probs": "你把两个概率相减了；比率是相除：`torch.exp(new_logp - old_logp)`。",
        },
        "chunked_logprobs": {
            "title": "不用 log_softmax，每次处理四行的对数概率",
            "dropped_remainder": ("最后一个不满的块丢了：`range(0, N - N % 4, 4)` 提前结束了。应遍历 `range(0, N, 4)`；切片 "
                                  "`logits[start:start + 4]` 越过末尾也没有问题。"),
            "minus_max": "减去每行最大值只是让指数运算不溢出；归一化项是 `torch.logsumexp(x, dim=-1)`，它比最大值更大。",
            "raw_logits": "gather 出来的 logits 还需要减去归一化项：减去每行的 `torch.logsumexp(x, dim=-1)`。",
            "probabilities": "这些是概率；对数概率是 `x[y] - logsumexp(x)`，最后不需要 `exp`。",
            "normaliser_over_chunk": ("归一化项是对整个块的所有行一起求和得到的（例如 "
                                      "`x.exp().sum().log()`）；每一行都需要自己的归一化项：`torch.logsumexp(x, "
                                      "dim=-1)`。"),
        },
    },
}
