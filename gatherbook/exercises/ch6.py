"""Chapter 6 exercises. Their traps: ``(B, 1)`` against ``(B,)``; ``-100`` padding needs a dummy id
*and* the mask (id 0 is a token); ``take_along_dim`` reads ``-100`` as the id ``-100 % V``. First
dims differ from second ones (a wrong dim cannot pass), one case has a batch of one."""
from __future__ import annotations

from dataclasses import replace

import torch
import torch.nn.functional as F

from gatherbook.exercises._checker import Mistake, Wrong, exercise
from gatherbook.exercises.cases import (ATOL, PAD, between, distinct, from_sizes, ints,
                                        logits, padded_labels, rng, t, with_value)
from gatherbook.logprobs import token_logprobs


# 1. whole rows
@exercise(title={"en": "Whole rows with gather", "zh": "用 gather 取整行"},
    edge_cases=[
        (logits(rng(61), 4, 3), t([2, 0, 3])),         # N > D
        (logits(rng(62), 1, 4), t([0, 0])),            # N == 1, the same row twice
        (logits(rng(63), 3, 5), t([1])),               # K == 1 (bites a bare squeeze)
        (logits(rng(64), 5, 2), t([4, 4, 1, 0, 2, 3])),  # K > N, repeats
    ],
    random_case=from_sizes((2, 7), inputs=lambda g, N, D: (
        logits(g, N, D), ints(g, N, between(g, 1, 6)))),
    seed=601,
    right=[
        lambda x, rows: x[rows],
        lambda x, rows: x.index_select(0, rows),
        lambda x, rows: F.one_hot(rows, x.shape[0]).to(x.dtype) @ x,
        lambda x, rows: torch.take_along_dim(x, rows[:, None], dim=0),
    ],
    wrong=[Wrong(lambda x, rows: x[rows.sort().values], kind="values", why="rows sorted")],
    mistakes=[
        Mistake("index_not_expanded", lambda x, rows: x.gather(0, rows.unsqueeze(0)),
                en="an index of shape (1, K) along dim=0 reads one element per column, out[0][j] = x[rows[j]][j]: the index is allowed to be smaller than x, and gather reads only its corner. For whole rows, give the index the full width: `rows.unsqueeze(1).expand(-1, x.shape[1])`, shape (K, D).",
                zh="沿 dim=0 使用形状为 (1, K) 的索引，每一列只读一个元素，out[0][j] = x[rows[j]][j]：索引可以比 x 小，gather 只读它对应的左上角。要取整行，就把索引扩展到完整宽度：`rows.unsqueeze(1).expand(-1, x.shape[1])`，形状为 (K, D)。"),
        Mistake("first_column_only", lambda x, rows: x.gather(0, rows.unsqueeze(1)),
                en="an index of shape (K, 1) reads column 0 of each chosen row only: gather's output has the index's shape. `expand(-1, x.shape[1])` the index to (K, D) first.",
                zh="形状为 (K, 1) 的索引只读到每个被选中行的第 0 列：gather 的输出形状与索引相同。先把索引 `expand(-1, x.shape[1])` 成 (K, D)。"),
        Mistake("squeezed_batch", lambda x, rows: x.gather(0, rows.unsqueeze(1).expand(-1, x.shape[1])).squeeze(),
                en="with K == 1 `.squeeze()` (bare, or `.squeeze(0)`) drops the row dimension and returns (D,): the answer has shape (K, D) for every K. Squeeze nothing here.",
                zh="K == 1 时，`.squeeze()`（不带维度，或 `.squeeze(0)`）会去掉行这一维，返回 (D,)：无论 K 是多少，答案的形状都是 (K, D)。这里什么都不要 squeeze。"),
    ],
)
def whole_rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``out[k] = x[rows[k]]`` with gather. x: (N, D); rows: (K,) int64. Returns (K, D)."""
    return x.gather(0, rows.unsqueeze(1).expand(-1, x.shape[1]))


# 2. the error of each action value
@exercise(
    title={"en": "The error of each taken action's value", "zh": "每个所采取动作的价值误差"},
    edge_cases=[
        (logits(rng(68), 3, 2), t([1, 0, 1]), logits(rng(69), 3)),   # B > A
        (logits(rng(70), 1, 4), t([3]), logits(rng(71), 1)),         # B == 1
        (logits(rng(72), 2, 5), t([0, 0]), logits(rng(73), 2)),      # the same action twice
    ],
    random_case=from_sizes((1, 6), inputs=lambda g, B, A: (
        logits(g, B, A), ints(g, A, B), logits(g, B))),
    seed=603, grad="same",
    grad_args=("q",),  # a target carries no gradient (chapter 3): detaching it is right
    right=[
        lambda q, a, t: q[torch.arange(q.shape[0]), a] - t,
        lambda q, a, t: torch.take_along_dim(q, a[:, None], dim=1)[:, 0] - t,
        lambda q, a, t: q.gather(1, a.view(-1, 1)).view(-1) - t.detach(),  # a target carries no gradient
    ],
    wrong=[
        Wrong(lambda q, a, t: (q.gather(1, a[:, None]).squeeze(1) - t).detach(), "generic.no_grad", "no_grad",
              why="the TD error is trained through q"),
    ],
    mistakes=[
        Mistake("broadcast_b_b", lambda q, a, t: q.gather(1, a.unsqueeze(1)) - t,
                en="`q.gather(1, ...)` is (B, 1); minus a (B,) target it broadcasts to (B, B), every value against every target. `.squeeze(1)` the gathered values first, and check that both shapes are (B,).",
                zh="`q.gather(1, ...)` 的形状是 (B, 1)；减去 (B,) 的目标会广播成 (B, B)，每个值都与每个目标相减。先对取出的值 `.squeeze(1)`，并检查两者的形状都是 (B,)。"),
        Mistake("all_actions_of_every_row", lambda q, a, t: q[:, a] - t,
                en="`q[:, actions]` takes every listed action from every row, (B, B): pair row b with actions[b] only, `q.gather(1, actions.unsqueeze(1)).squeeze(1)`.",
                zh="`q[:, actions]` 会从每一行取出所有列出的动作，得到 (B, B)：让第 b 行只配 actions[b]，`q.gather(1, actions.unsqueeze(1)).squeeze(1)`。"),
        Mistake("wrong_dim", lambda q, a, t: q.gather(0, a.unsqueeze(0)).squeeze(0) - t,
                en="with dim=0 the action chooses a row, not a column: gather along dim=1, where the actions are.",
                zh="dim=0 时动作选的是行而不是列：应沿动作所在的 dim=1 做 gather。"),
    ],
)
def td_error(q: torch.Tensor, actions: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``out[b] = q[b][actions[b]] - target[b]``. q: (B, A); actions, target: (B,). Returns (B,)."""
    return q.gather(1, actions.unsqueeze(1)).squeeze(1) - target


# 3. token log-probs with -100 labels
def _picked(logp, labels):  # gather at a dummy id 0 where the label is padding: no mask yet
    return logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)


def _wrapped(logp, labels):  # take_along_dim reads the label -100 as the id -100 % V
    return torch.take_along_dim(logp, labels.unsqueeze(-1), dim=-1).squeeze(-1)


def _masked_random(g: torch.Generator):
    (B, L), V = distinct(g, 1, 6), between(g, 2, 7)
    lp, labels = logits(g, B, L, V).log_softmax(-1), padded_labels(g, V, B, L)
    labels[0, 0] = 0  # id 0 is a real token
    return lp, labels


@exercise(
    title={"en": "Log-probs of labels with padding", "zh": "带填充标签的对数概率"},
    edge_cases=[
        (logits(rng(65), 2, 4, 5).log_softmax(-1), t([[0, 3, PAD, PAD], [4, 0, 1, 2]])),    # id 0 is a token
        (logits(rng(66), 1, 3, 4).log_softmax(-1), t([[2, PAD, PAD]])),                     # B == 1
        (logits(rng(67), 3, 2, 6).log_softmax(-1), t([[PAD, PAD], [5, 0], [1, PAD]])),     # a row with nothing scored
        (with_value(logits(rng(68), 2, 3, 4).log_softmax(-1), (0, 2, 0), float("-inf")),    # the dummy id's log-prob is -inf
         t([[1, 2, PAD], [0, 3, 1]])),                                 # (a masked vocabulary)
    ],
    random_case=_masked_random, seed=602, grad="same", atol=ATOL,
    right=[
        lambda logp, labels: torch.where(labels != PAD, torch.take_along_dim(logp, labels.clamp(min=0)[..., None], dim=-1)[..., 0], 0.0),
        lambda logp, labels: -F.nll_loss(logp.transpose(1, 2), labels, ignore_index=PAD, reduction="none"),
        lambda logp, labels: torch.stack([torch.stack([logp[b, t, y] if y != PAD else logp.new_zeros(()) for t, y in enumerate(row)]) for b, row in enumerate(labels)]),
    ],
    mistakes=[
        Mistake("gather_sees_pad", lambda logp, labels: logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1),
                en="gather read the label -100 and raised: replace padding by a valid dummy id (`labels.masked_fill(~mask, 0)`), gather, then keep the result only where `mask`: `torch.where(mask, picked, 0.0)`.",
                zh="gather 读到了标签 -100 并报错：先把填充换成一个合法的占位 id（`labels.masked_fill(~mask, 0)`），再 gather，最后只在 `mask` 处保留结果：`torch.where(mask, picked, 0.0)`。"),
        Mistake("clamp_only", _picked,
                en="token 0's log-prob was read at every padding position and kept, as `labels.clamp(min=0)` without a mask does: keep only what `mask = labels != -100` allows, `torch.where(mask, picked, 0.0)`.",
                zh="每个填充位置都读到并保留了词元 0 的对数概率，正是只做 `labels.clamp(min=0)` 而不加掩码的结果：用 `torch.where(mask, picked, 0.0)` 只保留 `mask = labels != -100` 处的值。"),
        Mistake("take_along_dim_wraps", _wrapped,
                en="`take_along_dim` read each label -100 as the id -100 % V, a real token, without an error, and its log-prob was kept: replace padding by a dummy id, then keep only what `mask = labels != -100` allows, `torch.where(mask, picked, 0.0)`.",
                zh="`take_along_dim` 把每个标签 -100 当成了 id -100 % V，也就是一个真实的词元，不报错，它的对数概率也被保留了下来：先把填充换成占位 id，再按 `mask = labels != -100` 只保留有效位置，即 `torch.where(mask, picked, 0.0)`。"),
        Mistake("times_mask", lambda logp, labels: _picked(logp, labels) * (labels != PAD),
                en="nan where a dummy id's log-prob is -inf (a token the model rules out), as multiplying by the mask gives: 0 * -inf is nan. Select instead, `torch.where(mask, picked, 0.0)`.",
                zh="当某个占位 id 的对数概率为 -inf（模型排除的词元）时，结果是 nan，正是乘以掩码的结果：0 * -inf 等于 nan。应改为选择，`torch.where(mask, picked, 0.0)`。"),
        Mistake("second_log_softmax", lambda logp, labels: -F.cross_entropy(logp.transpose(1, 2), labels, ignore_index=PAD, reduction="none"),
                en="the values are right but the gradient is that of a second `log_softmax`, which `F.cross_entropy` and `token_logprobs` apply to their input themselves: given log-probs, pick from `logp` directly (`gather`, or `-F.nll_loss(..., reduction=\"none\")`).",
                zh="数值对了，梯度却多经过了一次 `log_softmax`：`F.cross_entropy` 和 `token_logprobs` 都会自己对输入做 `log_softmax`。输入已经是对数概率时，直接从 `logp` 里取（`gather`，或 `-F.nll_loss(..., reduction=\"none\")`）。"),
        Mistake("zero_is_padding", lambda logp, labels: _picked(logp, labels) * (labels > 0),
                en="the id 0 was masked too, as `labels > 0` does; id 0 is a real token: padding is exactly `labels != -100`.",
                zh="id 0 也被屏蔽了，正是 `labels > 0` 的结果；而 id 0 是一个真实的词元：填充恰好是 `labels != -100`。"),
    ],
    wrong=[
        Wrong(lambda logp, labels: token_logprobs(logp, labels, ignore_index=PAD), hint="second_log_softmax",
              kind="grad", why="log-probs passed to token_logprobs, which expects logits"),
        Wrong(lambda logp, labels: logp.gather(-1, labels.clamp(min=0)[..., None]).squeeze().masked_fill(labels.squeeze() == PAD, 0.0),
              hint="generic.size_one", kind="shape", why="a bare squeeze: (B, L) becomes (L,) when B == 1"),
    ],
)
def label_logp(logp: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``out[b][t] = logp[b][t][labels[b][t]]``, ``0.0`` where the label is ``-100`` (padding).

    logp: (B, L, V) log-probabilities; labels: (B, L) int64 in [0, V) or -100. Returns (B, L)."""
    return torch.where(labels != PAD, _picked(logp, labels), 0.0)  # not `* mask`: 0 * -inf is nan


# 4. find the bug: a sequence's log-prob
_LABEL = label_logp.exercise
_SHARED = ("take_along_dim_wraps", "clamp_only", "times_mask", "zero_is_padding")  # its sums, same hints


@exercise(
    bug="take_along_dim_wraps",  # the stub is this mistake
    title={"en": "Find the bug: the log-prob of a padded sequence", "zh": "找出错误：带填充序列的对数概率"},
    edge_cases=_LABEL.edge_cases,
    random_case=_masked_random, seed=604, grad="same", atol=ATOL,
    right=[
        lambda logp, labels: -F.nll_loss(logp.transpose(1, 2), labels, ignore_index=PAD, reduction="none").sum(-1),
        lambda logp, labels: torch.where(labels != PAD, _wrapped(logp, labels.clamp(min=0)), 0.0).sum(-1),
        lambda logp, labels: torch.stack([sum((logp[b, t, y] for t, y in enumerate(row) if y != PAD), logp.new_zeros(())) for b, row in enumerate(labels)]),
    ],
    mistakes=[replace(m, fn=lambda lp, y, fn=m.fn: fn(lp, y).sum(-1)) for m in _LABEL.mistakes if m.key in _SHARED] + [
        Mistake("mean", lambda logp, labels: label_logp(logp, labels).sum(-1) / (labels != PAD).sum(-1),
                en="you divided by the number of labels: a sequence's log-prob is the sum of its tokens' log-probs, not their mean.",
                zh="你除以了标签的个数：序列的对数概率是各词元对数概率之和，而不是平均值。"),
    ],
    wrong=[Wrong(lambda logp, labels: label_logp(logp, labels).sum(), None, "shape", why="summed over the batch too")],
)
def seq_logp(logp: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Each sequence's log-prob, padding left out. logp: (B, L, V); labels: (B, L). Returns (B,)."""
    return label_logp(logp, labels).sum(-1)
