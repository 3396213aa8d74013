"""Chapter 2 exercises, easy to hard. Logits have one decimal and B != L; B == 1, size-1 dims and a
logit of -200 (underflows in float32) come early; sums over positions start with B > 1."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from gatherbook.exercises._checker import Mistake, exercise
from gatherbook.exercises.cases import (ATOL, PAD, between, distinct, from_sizes, ints,
                                        log_probs, logits, logp, padded_labels, pick,
                                        rng, t, with_value)
from gatherbook.logprobs import token_logprobs


def _underflow(case: tuple, b: int, t: int) -> tuple:
    """``case`` with the logit that scores ``ids[b][t]`` set to -200 (underflows in float32)."""
    return (with_value(case[0], (b, t - 1, int(case[1][b, t])), -200.0), *case[1:])


_SOFTMAX_LOG = dict(
    en="`softmax(-1).log()` is right on paper, but in float32 a probability below about 1e-45 underflows to 0 and its log is -inf (here, for the very negative logit). `log_softmax(-1)` computes the log-probability directly and stays finite.",
    zh="`softmax(-1).log()` 在数学上没错，但在 float32 中，小于约 1e-45 的概率会下溢为 0，取对数后就是 -inf（这里就是那个非常负的 logit）。`log_softmax(-1)` 直接计算对数概率，结果保持有限。")
_SQUEEZED_BATCH = dict(  # list it before summed_whole_batch: on B == 1 the two agree
    en="on this batch of one the result lost its only dimension: `.squeeze()` (bare, or `.squeeze(0)`) drops the batch dimension of size 1. The answer has shape (B,) even when B == 1, which `.sum(-1)` already gives: squeeze nothing after it (and use `.squeeze(-1)` after the gather).",
    zh="在这个只有一个序列的批次上，结果丢掉了唯一的一维：`.squeeze()`（不带参数，或 `.squeeze(0)`）会把大小为 1 的批次维去掉。即使 B == 1，答案的形状也是 (B,)，而 `.sum(-1)` 已经给出了这个形状：之后不要再 squeeze（gather 之后用 `.squeeze(-1)`）。")
_WHOLE_BATCH = dict(
    en="you summed over the whole batch, giving a single number: `.sum()` adds up every sequence, and so does `logp[mask].sum()`, since `logp[mask]` flattens all rows into one. Each sequence has its own sum, shape (B,): sum over the positions only, `.sum(-1)`.",
    zh="你对整个批次求和，只得到了一个数：`.sum()` 把所有序列加在了一起，`logp[mask].sum()` 也一样，因为 `logp[mask]` 会把所有行展平成一维。每个序列有自己的和，形状为 (B,)：只沿位置求和，即 `.sum(-1)`。")
_PROBABILITIES = dict(en="these are probabilities (`softmax`), not log-probabilities: use `log_softmax(-1)`.",
                      zh="这些是概率（`softmax`），不是对数概率：请用 `log_softmax(-1)`。")
_BARE_SQUEEZE = dict(
    en="a bare `.squeeze()` after the gather also removed the position dim when there is one target per row (L == 2 here), so the mask broadcast against the wrong axis: squeeze only the last dim, `.squeeze(-1)`.",
    zh="每行只剩一个目标时（这里 L == 2），gather 之后不带参数的 `.squeeze()` 把位置维也去掉了，于是掩码沿错误的轴广播：只去掉最后一维，即 `.squeeze(-1)`。")


# 1. the PPO / GRPO importance ratio
def _ratio(g: torch.Generator, B: int, T: int) -> tuple:  # new and old log-probs, (B, T)
    return log_probs(g, B, T), log_probs(g, B, T)


@exercise(title={"en": "The PPO/GRPO importance ratio", "zh": "PPO/GRPO 的重要性比率"},
    edge_cases=[
        (torch.tensor([[-0.5, -1.2, -2.0]]), torch.tensor([[-0.5, -1.0, -3.0]])),   # B == 1; equal -> 1
        _ratio(rng(41), 2, 4),
        _ratio(rng(42), 4, 1),
        _ratio(rng(43), 3, 5),
        (torch.tensor([[-150.0, -0.5], [-120.0, -3.0]]),       # probabilities that underflow to 0
         torch.tensor([[-151.0, -0.5], [-119.5, -2.0]])),      # in float32: exp(new) / exp(old) is 0 / 0
    ],
    random_case=from_sizes((1, 7), inputs=_ratio), seed=205, grad="same",
    right=[
        lambda new, old: (new - old).exp(),
        lambda new, old: torch.exp(-(old - new)),
        lambda new, old: torch.exp(new.double() - old.double()).float(),
    ],
    mistakes=[
        Mistake("ratio_of_logprobs", lambda new, old: new / old,
                en="you divided the log-probabilities; the ratio is of probabilities: `torch.exp(new_logp - old_logp)` (log of a quotient = difference of logs).",
                zh="你把两个对数概率相除了；比率是概率之比：`torch.exp(new_logp - old_logp)`（商的对数等于对数之差）。"),
        Mistake("inverted", lambda new, old: torch.exp(old - new),
                en="this is pi_old / pi_new, upside down: `torch.exp(new_logp - old_logp)`.",
                zh="这是 pi_old / pi_new，颠倒了：应为 `torch.exp(new_logp - old_logp)`。"),
        Mistake("no_exp", lambda new, old: new - old,
                en="this is the log of the ratio: apply `torch.exp` to the difference.", zh="这是比率的对数：对差值再取 `torch.exp`。"),
        Mistake("difference_of_probs", lambda new, old: torch.exp(new) - torch.exp(old),
                en="you subtracted the probabilities; the ratio divides them: `torch.exp(new_logp - old_logp)`.",
                zh="你把两个概率相减了；比率是相除：`torch.exp(new_logp - old_logp)`。"),
        Mistake("divided_probabilities", lambda new, old: new.exp() / old.exp(),
                en="you exponentiated each log-prob on its own (`exp(new_logp) / exp(old_logp)`, or `* exp(-old_logp)`): right on paper, but in float32 a log-prob below about -103 gives a probability of 0, and `exp(-old_logp)` overflows to inf once -old_logp passes about 88: 0 / 0 and 0 * inf are nan. Subtract first, then exponentiate once: `torch.exp(new_logp - old_logp)`.",
                zh="你对两个对数概率分别取了指数（`exp(new_logp) / exp(old_logp)`，或 `* exp(-old_logp)`）：数学上没错，但在 float32 中，低于约 -103 的对数概率对应的概率会下溢为 0，而 -old_logp 超过约 88 时 `exp(-old_logp)` 会上溢为 inf：0 / 0 和 0 * inf 都是 nan。先相减，再取一次指数：`torch.exp(new_logp - old_logp)`。"),
    ],
)
def importance_ratio(new_logp: torch.Tensor, old_logp: torch.Tensor) -> torch.Tensor:
    """The per-token ratio ``pi_new / pi_old``. new_logp, old_logp: (B, T) float32 token
    log-probs (<= 0). Returns (B, T) float32."""
    return torch.exp(new_logp - old_logp)


# 2. the log-probs of K candidate tokens per position
@exercise(
    title={"en": "Log-probabilities of K candidate tokens", "zh": "K 个候选词元的对数概率"},
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
        Mistake("raw_logits", lambda x, c: x.gather(-1, c),
                en="you gathered the raw logits. A logit is a score defined up to a constant per row, not a log-probability: apply `log_softmax(-1)` first, then gather.",
                zh="你 gather 的是原始 logits。logits 只是得分：给一行加上同一个常数，概率不变，logits 却变了，所以它们不是对数概率。先做 `log_softmax(-1)`，再 gather。"),
        Mistake("probabilities", lambda x, c: x.softmax(-1).gather(-1, c),
                **_PROBABILITIES),
        Mistake("softmax_then_log", lambda x, c: x.softmax(-1).log().gather(-1, c), **_SOFTMAX_LOG),
        Mistake("softmax_wrong_dim", lambda x, c: x.log_softmax(1).gather(-1, c),
                en="`log_softmax(1)` normalises over the positions; each position's distribution runs over the vocabulary, the last dim: `log_softmax(-1)`.",
                zh="`log_softmax(1)` 是沿位置维归一化；每个位置的分布是在词表上，即最后一维：`log_softmax(-1)`。"),
        Mistake("extra_unsqueeze", lambda x, c: logp(x).gather(-1, c.unsqueeze(-1)),
                en="`candidates` already has as many dims as the log-probs, (B, L, K) against (B, L, V): gather with it as it is, `gather(-1, candidates)`. The `unsqueeze(-1)` is for one id per position, (B, L).",
                zh="`candidates` 的维数已经与对数概率相同，(B, L, K) 对 (B, L, V)：直接用它做 gather，即 `gather(-1, candidates)`。`unsqueeze(-1)` 是给每个位置只有一个 id 的 (B, L) 用的。"),
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
    title={"en": "Log-probs at the sampling temperature", "zh": "采样温度下的对数概率"},
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
        Mistake("forgot_temperature", lambda x, ids, T: pick(logp(x[:, :-1]), ids[:, 1:]),
                en="these are the log-probs at temperature 1: the tokens were drawn from `softmax(logits / temperature)`, so divide the logits by the temperature before `log_softmax`.",
                zh="这是温度为 1 时的对数概率：词元是从 `softmax(logits / temperature)` 中抽取的，所以在 `log_softmax` 之前先把 logits 除以温度。"),
        Mistake("times_temperature", lambda x, ids, T: pick(logp(x[:, :-1] * T), ids[:, 1:]),
                en="you multiplied the logits by the temperature; a sampler divides them: `logits / temperature` (below 1 it sharpens the distribution).",
                zh="你把 logits 乘以了温度；采样器是除以温度：`logits / temperature`（温度低于 1 时分布变得更尖锐）。"),
        Mistake("divided_after", lambda x, ids, T: pick(logp(x[:, :-1]), ids[:, 1:]) / T,
                en="you divided the log-probs by the temperature after `log_softmax`; the division goes into the logits, before it: `(logits / temperature).log_softmax(-1)`.",
                zh="你在 `log_softmax` 之后把对数概率除以了温度；除法应作用在 logits 上、在它之前：`(logits / temperature).log_softmax(-1)`。"),
        Mistake("no_shift", lambda x, ids, T: pick(logp(x[:, :-1] / T), ids[:, :-1]),
                en="you scored ids[:, t] with logits[:, t], i.e. the current token, not the next one. The logits at t predict the token at t + 1: pair `logits[:, :-1]` with `ids[:, 1:]`.",
                zh="你用 logits[:, t] 给 ids[:, t] 打分，也就是当前词元，而不是下一个。t 处的 logits 预测 t + 1 处的词元：应把 `logits[:, :-1]` 与 `ids[:, 1:]` 配对。"),
        Mistake("probabilities", lambda x, ids, T: pick((x[:, :-1] / T).softmax(-1), ids[:, 1:]),
                **_PROBABILITIES),
        Mistake("softmax_then_log", lambda x, ids, T: pick((x[:, :-1] / T).softmax(-1).log(), ids[:, 1:]),
                **_SOFTMAX_LOG),
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
    title={"en": "Find the bug: a sequence log-likelihood with padding", "zh": "找出错误：带填充的序列对数似然"},
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
        Mistake("mask_not_shifted", _seq(lambda y: y[:, :-1] != PAD),
                en="the mask is cut like the logits, `[:, :-1]`, so it is off by one: it belongs to the targets `labels[:, 1:]`. Use `labels[:, 1:] != -100`.",
                zh="掩码像 logits 一样用 `[:, :-1]` 截取，因而错开了一位：它应该对应目标 `labels[:, 1:]`。请用 `labels[:, 1:] != -100`。"),
        Mistake("times_mask", _seq(lambda y: y[:, 1:] != PAD, where=False),
                en="multiplying by the mask gives nan where the dummy id's log-prob is -inf (a token the model rules out, e.g. a masked vocabulary), because 0 * -inf is nan: select instead, `torch.where(mask, logp, 0.0)`, then sum.",
                zh="乘以掩码时，如果占位 id 的对数概率是 -inf（模型排除的词元，例如被屏蔽的词表项），结果就是 nan，因为 0 * -inf 等于 nan：应改为选择，`torch.where(mask, logp, 0.0)`，再求和。"),
        Mistake("gather_sees_pad", _seq(lambda y: y[:, 1:] != PAD, lambda x, y: pick(logp(x[:, :-1]), y[:, 1:])),
                en="gather raised because it was given the padding label -100 as an index. Replace it by a valid dummy id first, `targets.masked_fill(targets == -100, 0)` (or `clamp(min=0)`), and let the mask remove what the dummy id reads.",
                zh="gather 报错，因为填充标签 -100 被当成了索引。先把它换成一个合法的占位 id：`targets.masked_fill(targets == -100, 0)`（或 `clamp(min=0)`），再用掩码去掉占位 id 读到的值。"),
        Mistake("no_mask", _seq(lambda y: torch.ones_like(y[:, 1:], dtype=torch.bool)),
                en="the padding positions were counted: after replacing -100 by a dummy id, gather reads a real log-prob there. Multiply by the mask `labels[:, 1:] != -100` before the sum.",
                zh="填充位置被算进去了：把 -100 换成占位 id 之后，gather 在那里读到的是真实的对数概率。求和之前先乘以掩码 `labels[:, 1:] != -100`。"),
        Mistake("no_shift", _seq(lambda y: y != PAD, lambda x, y: pick(logp(x), y.clamp(min=0))),
                en="you scored each label with the logits at its own position; the logits at t score the token at t + 1: `logits[:, :-1]` with `labels[:, 1:]`.",
                zh="你用每个标签所在位置的 logits 给它打分；t 处的 logits 给 t + 1 处的词元打分：`logits[:, :-1]` 与 `labels[:, 1:]` 配对。"),
        Mistake("mean_not_sum", lambda x, y: sequence_logprob(x, y) / (y[:, 1:] != PAD).sum(-1).clamp(min=1),
                en="this is the mean log-prob per token; the log-likelihood of a sequence is the sum.", zh="这是每个词元的平均对数概率；序列的对数似然是求和。"),
        Mistake("squeezed_batch", lambda x, y: sequence_logprob(x, y).squeeze(), **_SQUEEZED_BATCH),
        Mistake("summed_whole_batch", lambda x, y: pick(logp(x[:, :-1]), y[:, 1:].clamp(min=0))[y[:, 1:] != PAD].sum(),
                **_WHOLE_BATCH),
        Mistake("softmax_then_log", _seq(lambda y: y[:, 1:] != PAD,
                                         lambda x, y: pick(x[:, :-1].softmax(-1).log(), y[:, 1:].clamp(min=0)),
                                         where=False), **_SOFTMAX_LOG),
        Mistake("bare_squeeze", _seq(lambda y: y[:, 1:] != PAD, lambda x, y: logp(x[:, :-1]).gather(
            -1, y[:, 1:].clamp(min=0).unsqueeze(-1)).squeeze(), where=False), **_BARE_SQUEEZE),
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


@exercise(title={"en": "Score only the completion", "zh": "只给补全部分打分"},
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
        Mistake("mask_not_shifted", _comp(lambda t, p, n: _SPAN(t - 1, p, n)),
                en="the mask is built on the positions of the logits instead of the targets, i.e. cut like the logits: it drops the first completion token and scores the token after the completion. The targets `ids[:, 1:]` are the tokens t = 1, 2, ...: keep `prompt_len <= t < length`.",
                zh="掩码建在了 logits 的位置上而不是目标的位置上，也就是像 logits 那样截取：它漏掉了第一个补全词元，却给补全之后的那个词元打了分。目标 `ids[:, 1:]` 是位置 t = 1, 2, ... 上的词元：保留 `prompt_len <= t < length`。"),
        Mistake("includes_prompt", _comp(lambda t, p, n: t < n[:, None]),
                en="the prompt tokens were scored too. Preference and RL losses score only the completion: also require `t >= prompt_len`.",
                zh="提示部分的词元也被打分了。偏好学习和强化学习的损失只给补全部分打分：还要加上条件 `t >= prompt_len`。"),
        Mistake("ignores_length", _comp(lambda t, p, n: t >= p[:, None]),
                en="the padding after `length` was scored (its id 0 is a valid token, so nothing fails): also require `t < length`.",
                zh="`length` 之后的填充也被打分了（填充的 id 0 是合法的词元 id，所以不会报错）：还要加上条件 `t < length`。"),
        Mistake("no_shift", lambda x, ids, p, n: (pick(logp(x), ids) * _SPAN(torch.arange(ids.shape[1]), p, n)).sum(-1),
                en="each token was scored by the logits at its own position; token t is scored by `logits[:, t - 1]`: pair `logits[:, :-1]` with `ids[:, 1:]`.",
                zh="每个词元都用它自己位置上的 logits 打分；t 处的词元应由 `logits[:, t - 1]` 打分：把 `logits[:, :-1]` 与 `ids[:, 1:]` 配对。"),
        Mistake("no_column", _comp(lambda t, p, n: (t >= p) & (t < n)),  # (L - 1,) against (B,)
                en="`t >= prompt_len` compares the positions t, shape (L - 1,), with prompt_len, shape (B,), element by element: that works for a batch of one only, otherwise it raises a size mismatch (or pairs the wrong entries). Make prompt_len a column, `prompt_len[:, None]` of shape (B, 1), so that the comparison broadcasts to a (B, L - 1) mask; the same for `length[:, None]`.",
                zh="`t >= prompt_len` 把形状为 (L - 1,) 的位置 t 与形状为 (B,) 的 prompt_len 逐元素比较：这只对只有一个序列的批次成立，否则会报大小不匹配的错（或者配错元素）。把 prompt_len 变成一列，即形状为 (B, 1) 的 `prompt_len[:, None]`，比较才会广播成 (B, L - 1) 的掩码；`length[:, None]` 也一样。"),
        Mistake("prompt_off_by_one", _comp(lambda t, p, n: (t > p[:, None]) & (t < n[:, None])),
                en="`t > prompt_len` leaves out the first completion token, which sits at position t = prompt_len (the prompt takes positions 0 to prompt_len - 1): keep `t >= prompt_len[:, None]`.",
                zh="`t > prompt_len` 漏掉了第一个补全词元，它位于位置 t = prompt_len（提示占据位置 0 到 prompt_len - 1）：应保留 `t >= prompt_len[:, None]`。"),
        Mistake("squeezed_batch", lambda x, ids, p, n: completion_logprob(x, ids, p, n).squeeze(), **_SQUEEZED_BATCH),
        Mistake("summed_whole_batch", lambda x, ids, p, n: pick(logp(x[:, :-1]), ids[:, 1:])[
            _SPAN(torch.arange(1, ids.shape[1]), p, n)].sum(), **_WHOLE_BATCH),
        Mistake("softmax_then_log", _comp(_SPAN, lambda x, ids: pick(x[:, :-1].softmax(-1).log(), ids[:, 1:])),
                **_SOFTMAX_LOG),
        Mistake("bare_squeeze", _comp(_SPAN, lambda x, ids: logp(x[:, :-1]).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze()),
                **_BARE_SQUEEZE),
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


def _into_preallocated(logits, ids):
    out = logits.new_zeros(ids.shape[0])  # preallocating reads no row of logits
    for s in range(0, len(ids), 4):
        out[s:s + 4] = pick(logp(logits[s:s + 4]), ids[s:s + 4])
    return out


@exercise(
    title={"en": "Log-probs four rows at a time, without log_softmax", "zh": "不用 log_softmax，每次处理四行的对数概率"},
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
        Mistake("softmax_then_log", lambda x, y: pick(x.softmax(-1).log(), y), **_SOFTMAX_LOG),
        Mistake("naive_logsumexp", _by_4(lambda x, y: pick(x, y) - x.exp().sum(-1).log()),
                en="`x.exp().sum(-1).log()` is logsumexp on paper, but in float32 `exp` overflows to inf for logits above about 88 (here up to about 147). `torch.logsumexp(x, dim=-1)` subtracts the row maximum first and stays finite.",
                zh="`x.exp().sum(-1).log()` 在数学上就是 logsumexp，但在 float32 中 logit 大于约 88 时 `exp` 会上溢为 inf（这里最大约为 147）。`torch.logsumexp(x, dim=-1)` 先减去每行最大值，结果保持有限。"),
        Mistake("dropped_remainder", _by_4(lambda x, y: pick(x, y) - torch.logsumexp(x, -1), stop=lambda N: N - N % 4),
                en="the last, partial chunk is missing: `range(0, N - N % 4, 4)` stops early. Loop over `range(0, N, 4)`; slicing `logits[start:start + 4]` past the end is fine.",
                zh="最后一个不满的块丢了：`range(0, N - N % 4, 4)` 提前结束了。应遍历 `range(0, N, 4)`；切片 `logits[start:start + 4]` 越过末尾也没有问题。"),
        Mistake("minus_max", lambda x, y: pick(x, y) - x.amax(-1),
                en="subtracting the row maximum only makes the exponentials safe; the normaliser is `torch.logsumexp(x, dim=-1)`, which is larger than the maximum.",
                zh="减去每行最大值只是让指数运算不溢出；归一化项是 `torch.logsumexp(x, dim=-1)`，它比最大值更大。"),
        Mistake("raw_logits", pick,
                en="the gathered logits still need the normaliser: subtract `torch.logsumexp(x, dim=-1)` of each row.",
                zh="gather 出来的 logits 还需要减去归一化项：减去每行的 `torch.logsumexp(x, dim=-1)`。"),
        Mistake("probabilities", lambda x, y: pick(x.softmax(-1), y),
                en="these are probabilities; the log-probability is `x[y] - logsumexp(x)`, with no `exp` at the end.",
                zh="这些是概率；对数概率是 `x[y] - logsumexp(x)`，最后不需要 `exp`。"),
        Mistake("normaliser_over_chunk", _by_4(lambda x, y: pick(x, y) - x.exp().sum().log()),
                en="the normaliser was summed over the whole chunk, all its rows together (e.g. `x.exp().sum().log()`); each row needs its own: `torch.logsumexp(x, dim=-1)`.",
                zh="归一化项是对整个块的所有行一起求和得到的（例如 `x.exp().sum().log()`）；每一行都需要自己的归一化项：`torch.logsumexp(x, dim=-1)`。"),
    ],
)
def chunked_logprobs(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """``logits[n, ids[n]] - logsumexp(logits[n])``, 4 rows at a time (the temporaries of 4 rows).
    logits: (N, V) float32; ids: (N,) int64 in [0, V). Returns (N,) float32."""
    return _by_4(lambda x, y: pick(x, y) - torch.logsumexp(x, dim=-1))(logits, ids)  # pick: gather, squeeze
