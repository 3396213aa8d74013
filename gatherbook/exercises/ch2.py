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
from gatherbook.exercises.cases import ATOL, PAD, between, case_builders, distinct, floats, ints, logp, pick, t, with_value



# --------------------------------------------------------------------------------------------
# small helpers for the cases

def _fixed_logits(B: int, L: int, V: int, seed: int) -> torch.Tensor:
    return floats(torch.Generator().manual_seed(seed), B, L, V, scale=49)


def _underflow(case: tuple, b: int, t: int) -> tuple:
    """``case`` (logits, ids, ...) with the logit that scores ``ids[b][t]`` at position ``t - 1``
    set to -200: its probability underflows to 0 in float32, its log-probability is finite."""
    logits, ids = case[0], case[1]
    return (with_value(logits, (b, t - 1, int(ids[b, t])), -200.0), *case[1:])


# --------------------------------------------------------------------------------------------
# 1. token log-probs, no shift

def pick_logprobs(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """The log-probability of each given token: ``out[b][t] = log_softmax(logits[b][t])[ids[b][t]]``.

    logits: (B, L, V) float32; ids: (B, L) int64 in [0, V). Returns (B, L) float32.
    """
    return logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


def _token_random(g: torch.Generator):
    B, L = distinct(g, 1, 6)
    V = between(g, 2, 9)
    return floats(g, B, L, V, scale=49), ints(g, V, B, L)


PICK_LOGPROBS = Exercise(
    name="ch2.pick_logprobs",
    title={"en": "Log-probability of each given token", "zh": "每个给定词元的对数概率"},
    args=("logits", "ids"),
    reference=pick_logprobs,
    edge_cases=[
        (_fixed_logits(1, 4, 6, 1), t([[2, 0, 5, 3]])),                       # B == 1
        (_fixed_logits(2, 3, 5, 2), t([[4, 4, 0], [1, 2, 3]])),
        (_fixed_logits(3, 2, 1, 3), t([[0, 0], [0, 0], [0, 0]])),              # V == 1: log-prob 0
        (with_value(_fixed_logits(2, 5, 4, 4), (0, 1, 2), -200.0),                  # softmax underflows to 0
         t([[3, 2, 1, 0, 3], [0, 0, 1, 1, 2]])),                              # ... and ids[0][1] reads it
        (_fixed_logits(3, 1, 5, 5), t([[1], [0], [2]])),   # L == 1, B > 1 (bites .squeeze()); ids < V - 1
    ],
    random_case=_token_random,
    seed=201,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake("raw_logits", lambda logits, ids: logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1),
                en="you gathered the raw logits. A logit is a score defined up to a constant per row, not a log-probability: apply `log_softmax(-1)` first, then gather.",
                zh="你 gather 的是原始 logits。logit 只是每行差一个常数的分数，不是对数概率：先做 `log_softmax(-1)`，再 gather。"),
        Mistake(
            "probabilities",
            lambda logits, ids: logits.softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1),
            en="these are probabilities (`softmax`), not log-probabilities: use `log_softmax(-1)` (not `softmax(-1).log()`, which gives -inf where a probability underflows to 0).",
            zh="这些是概率（`softmax`），不是对数概率：请用 `log_softmax(-1)`（不要用 `softmax(-1).log()`，概率下溢为 0 时它会得到 -inf）。",
        ),
        Mistake(
            "softmax_then_log",
            lambda logits, ids: logits.softmax(-1).log().gather(-1, ids.unsqueeze(-1)).squeeze(-1),
            en="`softmax(-1).log()` is right on paper, but in float32 a probability below about 1e-45 underflows to 0 and its log is -inf (here, for the very negative logit). `log_softmax(-1)` computes the log-probability directly and stays finite.",
            zh="`softmax(-1).log()` 在数学上没错，但在 float32 中，小于约 1e-45 的概率会下溢为 0，取对数后就是 -inf（这里就是那个非常负的 logit）。`log_softmax(-1)` 直接计算对数概率，结果保持有限。",
        ),
        Mistake(
            "softmax_wrong_dim",
            lambda logits, ids: logits.log_softmax(1).gather(-1, ids.unsqueeze(-1)).squeeze(-1),
            en="`log_softmax(1)` normalises over the positions; each position's distribution runs over the vocabulary, the last dim: `log_softmax(-1)`.",
            zh="`log_softmax(1)` 是沿位置维归一化；每个位置的分布是在词表上，即最后一维：`log_softmax(-1)`。",
        ),
        Mistake("forgot_squeeze", lambda logits, ids: logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)),
                en="gather's output has the index's shape (B, L, 1): `.squeeze(-1)` it to get (B, L).",
                zh="gather 的输出形状与索引相同，是 (B, L, 1)：调用 `.squeeze(-1)` 得到 (B, L)。"),
        Mistake("no_unsqueeze", lambda logits, ids: logits.log_softmax(-1).gather(-1, ids),
                en="gather needs an index with as many dims as the tensor it reads: `ids` is (B, L) and the log-probs are (B, L, V). Add the last dim with `ids.unsqueeze(-1)`, shape (B, L, 1), then `.squeeze(-1)` the result.",
                zh="gather 要求索引的维数与被读取的张量相同：`ids` 是 (B, L)，对数概率是 (B, L, V)。用 `ids.unsqueeze(-1)` 补上最后一维，形状为 (B, L, 1)，再对结果调用 `.squeeze(-1)`。"),
        Mistake(
            "gather_dim1",
            lambda logits, ids: logits.log_softmax(-1).gather(1, ids.unsqueeze(-1)).squeeze(-1),
            en="`gather(1, ...)` reads along the positions, the L axis: each id is taken as a position (and an id >= L is out of bounds). The ids number entries of the vocabulary, the last dim: gather along `dim=-1`.",
            zh="`gather(1, ...)` 沿位置维（L 那一维）读取：每个 id 都被当成了位置（id >= L 时就越界了）。id 是词表中词元的编号，位于最后一维：应沿 `dim=-1` 做 gather。",
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
    B, L = distinct(g, 2, 7)
    B -= 1  # B in 1..6, L in 2..7 (and B != L + 1 is irrelevant: B != L is what counts)
    if B == L:
        L += 1
    V = between(g, 2, 9)
    return floats(g, B, L, V, scale=49), ints(g, V, B, L)


NEXT_PICK_LOGPROBS = Exercise(
    name="ch2.next_token_logprobs",
    title={"en": "Shift by one and score the next token", "zh": "错开一位，给下一个词元打分"},
    args=("logits", "ids"),
    reference=next_token_logprobs,
    edge_cases=[
        (_fixed_logits(1, 5, 6, 11), t([[2, 0, 5, 3, 1]])),                   # B == 1
        (_fixed_logits(2, 4, 5, 12), t([[4, 1, 0, 2], [1, 2, 3, 3]])),
        (_fixed_logits(3, 2, 4, 13), t([[0, 1], [2, 3], [3, 3]])),             # L == 2: one score per row
        (_fixed_logits(2, 6, 3, 14), t([[0, 1, 2, 0, 1, 2], [2, 2, 1, 1, 0, 0]])),
        _underflow((_fixed_logits(2, 4, 5, 15), t([[0, 1, 2, 1], [2, 3, 0, 1]])), 1, 1),  # ids < V - 1
    ],
    random_case=_next_random,
    seed=202,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake("no_shift", lambda logits, ids: pick(logp(logits[:, :-1]), ids[:, :-1]),
                en="you scored ids[:, t] with logits[:, t], i.e. the current token, not the next one. The logits at t predict the token at t + 1: pair `logits[:, :-1]` with `ids[:, 1:]`.",
                zh="你用 logits[:, t] 给 ids[:, t] 打分，也就是当前词元，而不是下一个。t 处的 logits 预测 t + 1 处的词元：应把 `logits[:, :-1]` 与 `ids[:, 1:]` 配对。"),
        Mistake("shift_backwards", lambda logits, ids: pick(logp(logits[:, 1:]), ids[:, :-1]),
                en="the shift goes the other way: the logits at t + 1 scored the token at t, which the model has already seen. Use `logits[:, :-1]` with `ids[:, 1:]`.",
                zh="错位方向反了：你用 t + 1 处的 logits 给 t 处的词元打分，而模型已经看到过那个词元。应使用 `logits[:, :-1]` 与 `ids[:, 1:]`。"),
        Mistake(
            "raw_logits",
            lambda logits, ids: logits[:, :-1].gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1),
            en="the shift is right, but you gathered raw logits: apply `log_softmax(-1)` before the gather.",
            zh="错位是对的，但你 gather 的是原始 logits：在 gather 之前先做 `log_softmax(-1)`。",
        ),
        Mistake("not_cut", lambda logits, ids: pick(logp(logits), ids),
                en="the result has one score per position, (B, L), including the first token, which nothing predicts. Cut the logits at the end and the ids at the start: (B, L - 1).",
                zh="结果每个位置一个分数，形状 (B, L)，连第一个词元也算上了，而它没有任何预测。把 logits 去掉最后一个位置、ids 去掉第一个位置：形状 (B, L - 1)。"),
        Mistake("both_cut_at_start", lambda logits, ids: pick(logp(logits[:, 1:]), ids[:, 1:]),
                en="both were cut at the start: `logits[:, 1:]` with `ids[:, 1:]` scores each token with the logits at its own position, as if there were no shift. The logits at t predict the token at t + 1: cut the logits at the end, `logits[:, :-1]`, and the ids at the start, `ids[:, 1:]`.",
                zh="logits 和 ids 都从开头截掉了一位：`logits[:, 1:]` 与 `ids[:, 1:]` 配对，等于用每个词元自己位置上的 logits 给它打分，相当于没有错位。t 处的 logits 预测 t + 1 处的词元：logits 去掉末尾，即 `logits[:, :-1]`，ids 去掉开头，即 `ids[:, 1:]`。"),
        Mistake("softmax_then_log", lambda logits, ids: pick(logits[:, :-1].softmax(-1).log(), ids[:, 1:]),
                en="`softmax(-1).log()` is right on paper, but in float32 a probability below about 1e-45 underflows to 0 and its log is -inf (here, for the very negative logit). `log_softmax(-1)` computes the log-probability directly and stays finite.",
                zh="`softmax(-1).log()` 在数学上没错，但在 float32 中，小于约 1e-45 的概率会下溢为 0，取对数后就是 -inf（这里就是那个非常负的 logit）。`log_softmax(-1)` 直接计算对数概率，结果保持有限。"),
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


def _sequence_bare_squeeze(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    targets = labels[:, 1:]
    lp = logp(logits[:, :-1]).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze()
    return (lp * (targets != PAD)).sum(-1)


def _sequence_summed_whole_batch(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    targets = labels[:, 1:]
    mask = targets != PAD
    lp = pick(logp(logits[:, :-1]), targets.clamp(min=0))
    return lp[mask].sum()  # lp[mask] is 1D: every row's values in one line


def _padded(g: torch.Generator, V: int, B: int, L: int) -> torch.Tensor:
    labels = ints(g, V, B, L)
    for b in range(B):
        n = between(g, 1, L)  # tokens kept; the first row is padded by at least 2 when L allows it
        if b == 0 and L >= 3:
            n = min(n, L - 2)
        labels[b, n:] = PAD
    return labels


def _sequence_random(g: torch.Generator):
    B, L = distinct(g, 1, 7)
    L += 1  # L in 2..8
    if B == L:
        B = B - 1 if B > 1 else B + 2
    V = between(g, 2, 9)
    return floats(g, B, L, V, scale=49), _padded(g, V, B, L)


SEQUENCE_LOGPROB = Exercise(
    name="ch2.sequence_logprob",
    title={"en": "Sequence log-likelihood with padding", "zh": "带填充的序列对数似然"},
    args=("logits", "labels"),
    reference=sequence_logprob,
    edge_cases=[
        (_fixed_logits(2, 5, 4, 22), t([[1, 3, PAD, PAD, PAD], [0, 2, 2, 1, 3]])),     # B > 1 first
        (_fixed_logits(1, 4, 5, 21), t([[2, 0, 4, 3]])),                               # B == 1, no padding
        (_fixed_logits(3, 6, 6, 23), t([[5, 1, 0, 2, PAD, PAD], [3, PAD, PAD, PAD, PAD, PAD],
                                         [0, 1, 2, 3, 4, 5]])),                        # a row with nothing to score
        (_fixed_logits(2, 3, 7, 24), t([[6, 6, 6], [2, PAD, PAD]])),
        (_fixed_logits(3, 2, 4, 25), t([[1, 2], [0, PAD], [3, 3]])),                  # L == 2, B > 1
        _underflow((_fixed_logits(2, 4, 5, 26), t([[4, 1, 3, PAD], [0, 2, 2, 1]])), 0, 2),
    ],
    random_case=_sequence_random,
    seed=203,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake(
            "gather_sees_pad",
            lambda logits, labels: (pick(logp(logits[:, :-1]), labels[:, 1:]) * (labels[:, 1:] != PAD)).sum(-1),
            en="gather raised because it was given the padding label -100 as an index. Replace it by a valid dummy id first, `targets.masked_fill(targets == -100, 0)` (or `clamp(min=0)`), and let the mask remove what the dummy id reads.",
            zh="gather 报错，因为填充标签 -100 被当成了索引。先把它换成一个合法的占位 id：`targets.masked_fill(targets == -100, 0)`（或 `clamp(min=0)`），再用掩码去掉占位 id 读到的值。",
        ),
        Mistake(
            "no_mask",
            lambda logits, labels: pick(logp(logits[:, :-1]), labels[:, 1:].clamp(min=0)).sum(-1),
            en="the padding positions were counted: after replacing -100 by a dummy id, gather reads a real log-prob there. Multiply by the mask `labels[:, 1:] != -100` before the sum.",
            zh="填充位置被算进去了：把 -100 换成占位 id 之后，gather 在那里读到的是真实的对数概率。求和之前先乘以掩码 `labels[:, 1:] != -100`。",
        ),
        Mistake(
            "mask_not_shifted",
            lambda logits, labels: (pick(logp(logits[:, :-1]), labels[:, 1:].clamp(min=0))
                                    * (labels[:, :-1] != PAD)).sum(-1),
            en="the mask is cut like the logits, `[:, :-1]`, so it is off by one: it belongs to the targets `labels[:, 1:]`. Use `labels[:, 1:] != -100`.",
            zh="掩码像 logits 一样用 `[:, :-1]` 截取，因而错开了一位：它应该对应目标 `labels[:, 1:]`。请用 `labels[:, 1:] != -100`。",
        ),
        Mistake(
            "no_shift",
            lambda logits, labels: (pick(logp(logits), labels.clamp(min=0)) * (labels != PAD)).sum(-1),
            en="you scored each label with the logits at its own position; the logits at t score the token at t + 1: `logits[:, :-1]` with `labels[:, 1:]`.",
            zh="你用每个标签所在位置的 logits 给它打分；t 处的 logits 给 t + 1 处的词元打分：`logits[:, :-1]` 与 `labels[:, 1:]` 配对。",
        ),
        Mistake(
            "mean_not_sum",
            lambda logits, labels: (sequence_logprob(logits, labels)
                                    / (labels[:, 1:] != PAD).sum(-1).clamp(min=1)),
            en="this is the mean log-prob per token; the log-likelihood of a sequence is the sum.",
            zh="这是每个词元的平均对数概率；序列的对数似然是求和。",
        ),
        Mistake(  # before summed_whole_batch: on a batch of one the two give the same number
            "squeezed_batch",
            lambda logits, labels: sequence_logprob(logits, labels).squeeze(),
            en="on this batch of one the result lost its only dimension: a bare `.squeeze()` drops every dimension of size 1, the batch included. The answer has shape (B,) even when B == 1, which `.sum(-1)` already gives: squeeze nothing after it (and use `.squeeze(-1)` after the gather).",
            zh="在这个只有一个序列的批次上，结果丢掉了唯一的一维：不带参数的 `.squeeze()` 会去掉所有大小为 1 的维度，批次维也不例外。即使 B == 1，答案的形状也是 (B,)，而 `.sum(-1)` 已经给出了这个形状：之后不要再 squeeze（gather 之后用 `.squeeze(-1)`）。",
        ),
        Mistake("summed_whole_batch", _sequence_summed_whole_batch,
                en="you summed over the whole batch, giving a single number: `.sum()` adds up every sequence, and so does `logp[mask].sum()`, since `logp[mask]` flattens all rows into one. Each sequence has its own log-likelihood, shape (B,): multiply by the mask and sum over the positions only, `(logp * mask).sum(-1)`.",
                zh="你对整个批次求和，只得到了一个数：`.sum()` 把所有序列加在了一起，`logp[mask].sum()` 也一样，因为 `logp[mask]` 会把所有行展平成一维。每个序列有自己的对数似然，形状为 (B,)：乘以掩码后只沿位置求和，即 `(logp * mask).sum(-1)`。"),
        Mistake("softmax_then_log", lambda logits, labels: (pick(logits[:, :-1].softmax(-1).log(),
                                                                  labels[:, 1:].clamp(min=0))
                                                            * (labels[:, 1:] != PAD)).sum(-1),
                en="`softmax(-1).log()` is right on paper, but in float32 a probability below about 1e-45 underflows to 0 and its log is -inf (here, for the very negative logit). `log_softmax(-1)` computes the log-probability directly and stays finite.",
                zh="`softmax(-1).log()` 在数学上没错，但在 float32 中，小于约 1e-45 的概率会下溢为 0，取对数后就是 -inf（这里就是那个非常负的 logit）。`log_softmax(-1)` 直接计算对数概率，结果保持有限。"),
        Mistake("bare_squeeze", _sequence_bare_squeeze,
                en="a bare `.squeeze()` after the gather also removed the position dim when there is one target per row (L == 2 here), so the mask broadcast against the wrong axis: squeeze only the last dim, `.squeeze(-1)`.",
                zh="每行只剩一个目标时（这里 L == 2），gather 之后不带参数的 `.squeeze()` 把位置维也去掉了，于是掩码沿错误的轴广播：只去掉最后一维，即 `.squeeze(-1)`。"),
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
    return (pick(logp(logits[:, :-1]), ids[:, 1:]) * mask).sum(-1)


def _completion_softmax_then_log(logits, ids, prompt_len, length):
    t = torch.arange(1, ids.shape[1])
    mask = (t >= prompt_len[:, None]) & (t < length[:, None])
    return (pick(logits[:, :-1].softmax(-1).log(), ids[:, 1:]) * mask).sum(-1)


def _completion_bare_squeeze(logits, ids, prompt_len, length):
    t = torch.arange(1, ids.shape[1])
    mask = (t >= prompt_len[:, None]) & (t < length[:, None])
    return (logp(logits[:, :-1]).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze() * mask).sum(-1)


def _completion_no_column(logits, ids, prompt_len, length):
    t = torch.arange(1, ids.shape[1])
    return _completion_masked_sum(logits, ids, (t >= prompt_len) & (t < length))  # (L - 1,) vs (B,)


def _completion_prompt_off_by_one(logits, ids, prompt_len, length):
    t = torch.arange(1, ids.shape[1])
    return _completion_masked_sum(logits, ids, (t > prompt_len[:, None]) & (t < length[:, None]))


def _completion_summed_whole_batch(logits, ids, prompt_len, length):
    t = torch.arange(1, ids.shape[1])
    mask = (t >= prompt_len[:, None]) & (t < length[:, None])
    return pick(logp(logits[:, :-1]), ids[:, 1:])[mask].sum()


def _completion_case(logits: torch.Tensor, prompt_len, length, g: torch.Generator | None = None):
    B, L, V = logits.shape
    g = g or torch.Generator().manual_seed(B * 100 + L * 10 + V)
    ids = ints(g, V, B, L)
    length_t, prompt_t = t(length), t(prompt_len)
    ids[torch.arange(L) >= length_t[:, None]] = 0
    return logits, ids, prompt_t, length_t


def _completion_random(g: torch.Generator):
    B, L = distinct(g, 3, 8)
    B -= 2  # B in 1..6, L in 3..8
    if B == L:
        L += 1
    V = between(g, 2, 9)
    length = [between(g, 2, L) for _ in range(B)]
    prompt = [between(g, 1, n - 1) for n in length]
    return _completion_case(floats(g, B, L, V, scale=49), prompt, length, g)


COMPLETION_LOGPROB = Exercise(
    name="ch2.completion_logprob",
    title={"en": "Score only the completion", "zh": "只给补全部分打分"},
    args=("logits", "ids", "prompt_len", "length"),
    reference=completion_logprob,
    edge_cases=[
        _completion_case(_fixed_logits(2, 7, 4, 32), [3, 1], [5, 7]),           # B > 1 first
        _completion_case(_fixed_logits(1, 6, 5, 31), [2], [5]),                 # B == 1, one padding
        _completion_case(_fixed_logits(3, 5, 6, 33), [4, 1, 2], [5, 2, 3]),      # one-token completions
        _completion_case(_fixed_logits(2, 8, 3, 34), [2, 5], [6, 8]),
        _completion_case(_fixed_logits(3, 2, 4, 35), [1, 1, 1], [2, 2, 2]),     # L == 2, B > 1
        _underflow(_completion_case(_fixed_logits(2, 5, 4, 36), [2, 1], [5, 4]), 0, 3),
    ],
    random_case=_completion_random,
    seed=204,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake(
            "mask_not_shifted",
            lambda logits, ids, p, n: (pick(logp(logits[:, :-1]), ids[:, 1:])
                                       * ((torch.arange(ids.shape[1] - 1) >= p[:, None])
                                          & (torch.arange(ids.shape[1] - 1) < n[:, None]))).sum(-1),
            en="the mask is built on the positions of the logits instead of the targets, i.e. cut like the logits: it drops the first completion token and scores the token after the completion. The targets `ids[:, 1:]` are the tokens t = 1, 2, ...: keep `prompt_len <= t < length`.",
            zh="掩码建在了 logits 的位置上而不是目标的位置上，也就是像 logits 那样截取：它漏掉了第一个补全词元，却给补全之后的那个词元打了分。目标 `ids[:, 1:]` 是位置 t = 1, 2, ... 上的词元：保留 `prompt_len <= t < length`。",
        ),
        Mistake(
            "includes_prompt",
            lambda logits, ids, p, n: (pick(logp(logits[:, :-1]), ids[:, 1:])
                                       * (torch.arange(1, ids.shape[1]) < n[:, None])).sum(-1),
            en="the prompt tokens were scored too. Preference and RL losses score only the completion: also require `t >= prompt_len`.",
            zh="提示部分的词元也被打分了。偏好学习和强化学习的损失只给补全部分打分：还要加上条件 `t >= prompt_len`。",
        ),
        Mistake(
            "ignores_length",
            lambda logits, ids, p, n: (pick(logp(logits[:, :-1]), ids[:, 1:])
                                       * (torch.arange(1, ids.shape[1]) >= p[:, None])).sum(-1),
            en="the padding after `length` was scored (its id 0 is a valid token, so nothing fails): also require `t < length`.",
            zh="`length` 之后的填充也被打分了（填充的 id 0 是合法的词元 id，所以不会报错）：还要加上条件 `t < length`。",
        ),
        Mistake(
            "no_shift",
            lambda logits, ids, p, n: (pick(logp(logits), ids)
                                       * ((torch.arange(ids.shape[1]) >= p[:, None])
                                          & (torch.arange(ids.shape[1]) < n[:, None]))).sum(-1),
            en="each token was scored by the logits at its own position; token t is scored by `logits[:, t - 1]`: pair `logits[:, :-1]` with `ids[:, 1:]`.",
            zh="每个词元都用它自己位置上的 logits 打分；t 处的词元应由 `logits[:, t - 1]` 打分：把 `logits[:, :-1]` 与 `ids[:, 1:]` 配对。",
        ),
        Mistake("no_column", _completion_no_column,
                en="`t >= prompt_len` compares the positions t, shape (L - 1,), with prompt_len, shape (B,), element by element: that works for a batch of one only, otherwise it raises a size mismatch (or pairs the wrong entries). Make prompt_len a column, `prompt_len[:, None]` of shape (B, 1), so that the comparison broadcasts to a (B, L - 1) mask; the same for `length[:, None]`.",
                zh="`t >= prompt_len` 把形状为 (L - 1,) 的位置 t 与形状为 (B,) 的 prompt_len 逐元素比较：这只对只有一个序列的批次成立，否则会报大小不匹配的错（或者配错元素）。把 prompt_len 变成一列，即形状为 (B, 1) 的 `prompt_len[:, None]`，比较才会广播成 (B, L - 1) 的掩码；`length[:, None]` 也一样。"),
        Mistake("prompt_off_by_one", _completion_prompt_off_by_one,
                en="`t > prompt_len` leaves out the first completion token, which sits at position t = prompt_len (the prompt takes positions 0 to prompt_len - 1): keep `t >= prompt_len[:, None]`.",
                zh="`t > prompt_len` 漏掉了第一个补全词元，它位于位置 t = prompt_len（提示占据位置 0 到 prompt_len - 1）：应保留 `t >= prompt_len[:, None]`。"),
        Mistake(  # before summed_whole_batch: on a batch of one the two give the same number
            "squeezed_batch",
            lambda logits, ids, p, n: completion_logprob(logits, ids, p, n).squeeze(),
            en="on this batch of one the result lost its only dimension: a bare `.squeeze()` drops every dimension of size 1, the batch included. The answer has shape (B,) even when B == 1, which `.sum(-1)` already gives: squeeze nothing after it (and use `.squeeze(-1)` after the gather).",
            zh="在这个只有一个序列的批次上，结果丢掉了唯一的一维：不带参数的 `.squeeze()` 会去掉所有大小为 1 的维度，批次维也不例外。即使 B == 1，答案的形状也是 (B,)，而 `.sum(-1)` 已经给出了这个形状：之后不要再 squeeze（gather 之后用 `.squeeze(-1)`）。",
        ),
        Mistake("summed_whole_batch", _completion_summed_whole_batch,
                en="you summed over the whole batch, giving a single number: `.sum()` adds up every sequence, and so does `logp[mask].sum()`, since `logp[mask]` flattens all rows into one. Each sequence has its own completion score, shape (B,): multiply by the mask and sum over the positions only, `(logp * mask).sum(-1)`.",
                zh="你对整个批次求和，只得到了一个数：`.sum()` 把所有序列加在了一起，`logp[mask].sum()` 也一样，因为 `logp[mask]` 会把所有行展平成一维。每个序列的补全部分有自己的得分，形状为 (B,)：乘以掩码后只沿位置求和，即 `(logp * mask).sum(-1)`。"),
        Mistake("softmax_then_log", _completion_softmax_then_log,
                en="`softmax(-1).log()` is right on paper, but in float32 a probability below about 1e-45 underflows to 0 and its log is -inf (here, for the very negative logit). `log_softmax(-1)` computes the log-probability directly and stays finite.",
                zh="`softmax(-1).log()` 在数学上没错，但在 float32 中，小于约 1e-45 的概率会下溢为 0，取对数后就是 -inf（这里就是那个非常负的 logit）。`log_softmax(-1)` 直接计算对数概率，结果保持有限。"),
        Mistake("bare_squeeze", _completion_bare_squeeze,
                en="a bare `.squeeze()` after the gather also removed the position dim when there is one target per row (L == 2 here), so the mask broadcast against the wrong axis: squeeze only the last dim, `.squeeze(-1)`.",
                zh="每行只剩一个目标时（这里 L == 2），gather 之后不带参数的 `.squeeze()` 把位置维也去掉了，于是掩码沿错误的轴广播：只去掉最后一维，即 `.squeeze(-1)`。"),
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
    title={"en": "The PPO/GRPO importance ratio", "zh": "PPO/GRPO 的重要性比率"},
    args=("new_logp", "old_logp"),
    reference=importance_ratio,
    edge_cases=[
        (torch.tensor([[-0.5, -1.2, -2.0]]), torch.tensor([[-0.5, -1.0, -3.0]])),   # B == 1; equal -> 1
        _ratio_fixed(2, 4, 41),
        _ratio_fixed(4, 1, 42),
        _ratio_fixed(3, 5, 43),
        (torch.tensor([[-150.0, -0.5], [-120.0, -3.0]]),       # probabilities that underflow to 0
         torch.tensor([[-151.0, -0.5], [-119.5, -2.0]])),      # in float32: exp(new) / exp(old) is 0 / 0
    ],
    random_case=_ratio_random,
    seed=205,
    grad="same",
    mistakes=[
        Mistake("ratio_of_logprobs", lambda new, old: new / old,
                en="you divided the log-probabilities; the ratio is of probabilities: `torch.exp(new_logp - old_logp)` (log of a quotient = difference of logs).",
                zh="你把两个对数概率相除了；比率是概率之比：`torch.exp(new_logp - old_logp)`（商的对数等于对数之差）。"),
        Mistake("inverted", lambda new, old: torch.exp(old - new),
                en="this is pi_old / pi_new, upside down: `torch.exp(new_logp - old_logp)`.",
                zh="这是 pi_old / pi_new，颠倒了：应为 `torch.exp(new_logp - old_logp)`。"),
        Mistake("no_exp", lambda new, old: new - old,
                en="this is the log of the ratio: apply `torch.exp` to the difference.",
                zh="这是比率的对数：对差值再取 `torch.exp`。"),
        Mistake("difference_of_probs", lambda new, old: torch.exp(new) - torch.exp(old),
                en="you subtracted the probabilities; the ratio divides them: `torch.exp(new_logp - old_logp)`.",
                zh="你把两个概率相减了；比率是相除：`torch.exp(new_logp - old_logp)`。"),
        Mistake("divided_probabilities", lambda new, old: new.exp() / old.exp(),
                en="you divided the probabilities, `exp(new_logp) / exp(old_logp)`: right on paper, but in float32 a log-prob below about -103 gives a probability of 0, and 0 / 0 is nan. Subtract first, then exponentiate once: `torch.exp(new_logp - old_logp)`.",
                zh="你把两个概率相除了，即 `exp(new_logp) / exp(old_logp)`：数学上没错，但在 float32 中，低于约 -103 的对数概率对应的概率会下溢为 0，而 0 / 0 是 nan。先相减，再取一次指数：`torch.exp(new_logp - old_logp)`。"),
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


def _naive_logsumexp(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    pieces = []
    for start in range(0, logits.shape[0], 4):
        x, y = logits[start:start + 4], ids[start:start + 4]
        pieces.append(x.gather(-1, y.unsqueeze(-1)).squeeze(-1) - x.exp().sum(-1).log())
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
    return floats(g, N, V, scale=49), ints(g, V, N)


_chunked_random, _chunked_fixed = case_builders(_chunked_inputs, 1, 13)


def _chunked_large(N: int, V: int, seed: int):
    """Logits 30 times larger, each row scoring its smallest logit: ``exp`` overflows to inf and
    the probability underflows to 0 in float32, while ``logit - logsumexp`` stays finite."""
    logits = _chunked_fixed(N, V, seed)[0] * 30
    return logits, logits.argmin(-1)


CHUNKED_LOGPROBS = Exercise(
    name="ch2.chunked_logprobs",
    title={"en": "Log-probs four rows at a time, without log_softmax", "zh": "不用 log_softmax，每次处理四行的对数概率"},
    args=("logits", "ids"),
    reference=chunked_logprobs,
    edge_cases=[
        _chunked_fixed(6, 4, 52),     # 6 rows: a full chunk and a partial one (N > 1 first)
        _chunked_fixed(1, 5, 51),     # N == 1: a single, partial chunk
        _chunked_fixed(8, 3, 53),     # two full chunks
        _chunked_fixed(9, 7, 54),     # one row left over
        _chunked_fixed(21, 6, 55),    # torch.chunk(x, 4) makes chunks of 6 rows here
        _chunked_large(5, 4, 56),     # logits up to ~147: exp overflows, softmax underflows
    ],
    random_case=_chunked_random,
    seed=206,
    grad="same",
    chunk_rows=4,
    atol=ATOL,
    mistakes=[
        Mistake("softmax_then_log", lambda logits, ids: pick(logits.softmax(-1).log(), ids),
                en="`softmax(-1).log()` is right on paper, but in float32 a probability below about 1e-45 underflows to 0 and its log is -inf (here, for the very negative logit). `log_softmax(-1)` computes the log-probability directly and stays finite.",
                zh="`softmax(-1).log()` 在数学上没错，但在 float32 中，小于约 1e-45 的概率会下溢为 0，取对数后就是 -inf（这里就是那个非常负的 logit）。`log_softmax(-1)` 直接计算对数概率，结果保持有限。"),
        Mistake("naive_logsumexp", _naive_logsumexp,
                en="`x.exp().sum(-1).log()` is logsumexp on paper, but in float32 `exp` overflows to inf for logits above about 88 (here up to about 147). `torch.logsumexp(x, dim=-1)` subtracts the row maximum first and stays finite.",
                zh="`x.exp().sum(-1).log()` 在数学上就是 logsumexp，但在 float32 中 logit 大于约 88 时 `exp` 会上溢为 inf（这里最大约为 147）。`torch.logsumexp(x, dim=-1)` 先减去每行最大值，结果保持有限。"),
        Mistake("dropped_remainder", _dropped_remainder,
                en="the last, partial chunk is missing: `range(0, N - N % 4, 4)` stops early. Loop over `range(0, N, 4)`; slicing `logits[start:start + 4]` past the end is fine.",
                zh="最后一个不满的块丢了：`range(0, N - N % 4, 4)` 提前结束了。应遍历 `range(0, N, 4)`；切片 `logits[start:start + 4]` 越过末尾也没有问题。"),
        Mistake(
            "minus_max",
            lambda logits, ids: logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1) - logits.amax(-1),
            en="subtracting the row maximum only makes the exponentials safe; the normaliser is `torch.logsumexp(x, dim=-1)`, which is larger than the maximum.",
            zh="减去每行最大值只是让指数运算不溢出；归一化项是 `torch.logsumexp(x, dim=-1)`，它比最大值更大。",
        ),
        Mistake("raw_logits", lambda logits, ids: logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1),
                en="the gathered logits still need the normaliser: subtract `torch.logsumexp(x, dim=-1)` of each row.",
                zh="gather 出来的 logits 还需要减去归一化项：减去每行的 `torch.logsumexp(x, dim=-1)`。"),
        Mistake(
            "probabilities",
            lambda logits, ids: logits.softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1),
            en="these are probabilities; the log-probability is `x[y] - logsumexp(x)`, with no `exp` at the end.",
            zh="这些是概率；对数概率是 `x[y] - logsumexp(x)`，最后不需要 `exp`。",
        ),
        Mistake("normaliser_over_chunk", _normaliser_over_chunk,
                en="the normaliser was summed over the whole chunk, all its rows together (e.g. `x.exp().sum().log()`); each row needs its own: `torch.logsumexp(x, dim=-1)`.",
                zh="归一化项是对整个块的所有行一起求和得到的（例如 `x.exp().sum().log()`）；每一行都需要自己的归一化项：`torch.logsumexp(x, dim=-1)`。"),
    ],
)


EXERCISES = [PICK_LOGPROBS, NEXT_PICK_LOGPROBS, SEQUENCE_LOGPROB, COMPLETION_LOGPROB, IMPORTANCE_RATIO,
             CHUNKED_LOGPROBS]
