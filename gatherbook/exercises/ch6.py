"""Chapter 6 exercises: the silent mistakes of the chapter, written right.

Gathering whole rows (an index expanded to the full width, not a smaller one), token log-probs of
labels with ``-100`` padding (a dummy id *and* the mask, not a clamp alone, and id 0 is a real
token), and the per-sample error of action values (``(B, 1)`` against ``(B,)``). Every first
argument has a first dim that differs from its second (so an answer along the wrong dim cannot
pass by accident), one case has a batch of one, and values have one decimal.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from gatherbook.exercises._checker import Exercise, Mistake, Wrong
from gatherbook.exercises.cases import ATOL, I64, PAD, between, distinct, floats, t, with_value



def _fixed(seed: int, *shape: int) -> torch.Tensor:
    return floats(torch.Generator().manual_seed(seed), *shape, scale=49)


# --------------------------------------------------------------------------------------------
# 1. whole rows

def whole_rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Whole rows of ``x`` in the order ``rows`` gives: ``out[k] = x[rows[k]]``, with gather.

    x: (N, D) float; rows: (K,) int64 in [0, N). Returns (K, D) float.
    """
    return x.gather(0, rows.unsqueeze(1).expand(-1, x.shape[1]))


def _rows_random(g: torch.Generator):
    N, D = distinct(g, 2, 7)
    K = between(g, 1, 6)
    return floats(g, N, D, scale=49), torch.randint(0, N, (K,), generator=g, dtype=I64)


WHOLE_ROWS = Exercise(
    name="ch6.whole_rows",
    title={"en": "Whole rows with gather", "zh": "用 gather 取整行"},
    args=("x", "rows"),
    reference=whole_rows,
    edge_cases=[
        (_fixed(61, 4, 3), t([2, 0, 3])),         # N > D
        (_fixed(62, 1, 4), t([0, 0])),            # N == 1, the same row twice
        (_fixed(63, 3, 5), t([1])),               # K == 1 (bites a bare squeeze)
        (_fixed(64, 5, 2), t([4, 4, 1, 0, 2, 3])),  # K > N, repeats
    ],
    random_case=_rows_random,
    seed=601,
    right=[
        lambda x, rows: x[rows],
        lambda x, rows: x.index_select(0, rows),
        lambda x, rows: F.one_hot(rows, x.shape[0]).to(x.dtype) @ x,
        lambda x, rows: torch.take_along_dim(x, rows[:, None], dim=0),
    ],
    wrong=[
        Wrong(lambda x, rows: x[rows.sort().values], kind="values", why="rows sorted"),
    ],
    mistakes=[
        Mistake("index_not_expanded", lambda x, rows: x.gather(0, rows.unsqueeze(0)),
                en="an index of shape (1, K) along dim=0 reads one element per column, out[0][j] = x[rows[j]][j]: the index is allowed to be smaller than x, and gather reads only its corner. For whole rows, give the index the full width: `rows.unsqueeze(1).expand(-1, x.shape[1])`, shape (K, D).",
                zh="沿 dim=0 使用形状为 (1, K) 的索引，每一列只读一个元素，out[0][j] = x[rows[j]][j]：索引可以比 x 小，gather 只读它对应的左上角。要取整行，就把索引扩展到完整宽度：`rows.unsqueeze(1).expand(-1, x.shape[1])`，形状为 (K, D)。"),
        Mistake("first_column_only", lambda x, rows: x.gather(0, rows.unsqueeze(1)),
                en="an index of shape (K, 1) reads column 0 of each chosen row only: gather's output has the index's shape. `expand(-1, x.shape[1])` the index to (K, D) first.",
                zh="形状为 (K, 1) 的索引只读到每个被选中行的第 0 列：gather 的输出形状与索引相同。先把索引 `expand(-1, x.shape[1])` 成 (K, D)。"),
        Mistake("squeezed_batch",
                lambda x, rows: x.gather(0, rows.unsqueeze(1).expand(-1, x.shape[1])).squeeze(),
                en="with K == 1 `.squeeze()` (bare, or `.squeeze(0)`) drops the row dimension and returns (D,): the answer has shape (K, D) for every K. Squeeze nothing here.",
                zh="K == 1 时，`.squeeze()`（不带维度，或 `.squeeze(0)`）会去掉行这一维，返回 (D,)：无论 K 是多少，答案的形状都是 (K, D)。这里什么都不要 squeeze。"),
    ],
)


# --------------------------------------------------------------------------------------------
# 2. token log-probs with -100 labels

def label_logp(logp: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The log-prob of each label, 0.0 where the label is ``-100`` (padding).

    ``out[b][t] = logp[b][t][labels[b][t]]`` where ``labels[b][t] != -100``, else ``0.0``.
    logp: (B, L, V) float log-probabilities; labels: (B, L) int64, ids in [0, V) or -100.
    Returns (B, L) float.
    """
    mask = labels != PAD
    safe = labels.masked_fill(~mask, 0)
    return torch.where(mask, logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1), 0.0)  # not `* mask`: 0 * -inf is nan


def _labels(g: torch.Generator, V: int, B: int, L: int) -> torch.Tensor:
    labels = torch.randint(0, V, (B, L), generator=g, dtype=I64)
    labels[0, 0] = 0  # id 0 is a real token
    keep = torch.randint(1, L + 1, (B,), generator=g)
    labels[torch.arange(L)[None, :] >= keep[:, None]] = PAD
    labels[-1, -1] = PAD  # at least one padding position
    return labels


def _masked_random(g: torch.Generator):
    B, L = distinct(g, 1, 6)
    V = between(g, 2, 7)
    return floats(g, B, L, V, scale=49).log_softmax(-1), _labels(g, V, B, L)


def _logp(seed: int, *shape: int) -> torch.Tensor:
    return _fixed(seed, *shape).log_softmax(-1)


LABEL_LOGP = Exercise(
    name="ch6.label_logp",
    title={"en": "Log-probs of labels with padding", "zh": "带填充标签的对数概率"},
    args=("logp", "labels"),
    reference=label_logp,
    edge_cases=[
        (_logp(65, 2, 4, 5), t([[0, 3, PAD, PAD], [4, 0, 1, 2]])),    # id 0 is a token
        (_logp(66, 1, 3, 4), t([[2, PAD, PAD]])),                     # B == 1
        (_logp(67, 3, 2, 6), t([[PAD, PAD], [5, 0], [1, PAD]])),     # a row with nothing scored
        (with_value(_logp(68, 2, 3, 4), (0, 2, 0), float("-inf")),    # the dummy id's log-prob is -inf
         t([[1, 2, PAD], [0, 3, 1]])),                                 # (a masked vocabulary)
    ],
    random_case=_masked_random,
    seed=602,
    grad="same",
    atol=ATOL,
    right=[
        lambda logp, labels: torch.where(labels != PAD, torch.take_along_dim(logp, labels.clamp(min=0)[..., None], dim=-1)[..., 0], 0.0),
        lambda logp, labels: -F.nll_loss(logp.transpose(1, 2), labels, ignore_index=PAD, reduction="none"),
        lambda logp, labels: torch.stack([torch.stack([logp[b, t, y] if y != PAD else logp.new_zeros(()) for t, y in enumerate(row)]) for b, row in enumerate(labels)]),
    ],
    mistakes=[
        Mistake("gather_sees_pad", lambda logp, labels: logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1),
                en="gather read the label -100 and raised: replace padding by a valid dummy id (`labels.masked_fill(~mask, 0)`), gather, then keep the result only where `mask`: `torch.where(mask, picked, 0.0)`.",
                zh="gather 读到了标签 -100 并报错：先把填充换成一个合法的占位 id（`labels.masked_fill(~mask, 0)`），再 gather，最后只在 `mask` 处保留结果：`torch.where(mask, picked, 0.0)`。"),
        Mistake("clamp_only",
                lambda logp, labels: logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1),
                en="`clamp(min=0)` turned -100 into the id 0 and gather read token 0's log-prob at every padding position: keep the result only where `mask = labels != -100`, with `torch.where(mask, picked, 0.0)`.",
                zh="`clamp(min=0)` 把 -100 变成了 id 0，于是每个填充位置都读到了词元 0 的对数概率：用 `torch.where(mask, picked, 0.0)` 只在 `mask = labels != -100` 处保留结果。"),
        Mistake("times_mask",
                lambda logp, labels: (logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
                                      * (labels != PAD)),
                en="multiplying by the mask gives nan where the dummy id's log-prob is -inf (a token the model rules out), because 0 * -inf is nan: select instead, `torch.where(mask, picked, 0.0)`.",
                zh="乘以掩码时，如果占位 id 的对数概率是 -inf（模型排除的词元），结果就是 nan，因为 0 * -inf 等于 nan：应改为选择，`torch.where(mask, picked, 0.0)`。"),
        Mistake("second_log_softmax",
                lambda logp, labels: -F.cross_entropy(logp.transpose(1, 2), labels, ignore_index=PAD, reduction="none"),
                en="`F.cross_entropy` applies `log_softmax` itself: given log-probs, it applies it a second time. The values stay the same (log-probs are already normalised) but the gradient does not: pick from `logp` directly (`gather`, or `-F.nll_loss(..., reduction=\"none\")`).",
                zh="`F.cross_entropy` 自己会做一次 `log_softmax`：输入已经是对数概率时，它就做了第二次。数值不变（对数概率已经归一化），梯度却变了：直接从 `logp` 里取（`gather`，或 `-F.nll_loss(..., reduction=\"none\")`）。"),
        Mistake("zero_is_padding",
                lambda logp, labels: (logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
                                      * (labels > 0)),
                en="`labels > 0` also masks the id 0, a real token: padding is exactly `labels != -100`.",
                zh="`labels > 0` 把 id 0 也屏蔽了，而它是一个真实的词元：填充恰好是 `labels != -100`。"),
    ],
)


# --------------------------------------------------------------------------------------------
# 3. the error of each action value

def td_error(q: torch.Tensor, actions: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The error of the value of each taken action: ``out[b] = q[b][actions[b]] - target[b]``.

    q: (B, A) float action values; actions: (B,) int64 in [0, A); target: (B,) float.
    Returns (B,) float.
    """
    return q.gather(1, actions.unsqueeze(1)).squeeze(1) - target


def _td_random(g: torch.Generator):
    B, A = distinct(g, 1, 6)
    return (floats(g, B, A, scale=49), torch.randint(0, A, (B,), generator=g, dtype=I64), floats(g, B, scale=49))


TD_ERROR = Exercise(
    name="ch6.td_error",
    title={"en": "The error of each taken action's value", "zh": "每个所采取动作的价值误差"},
    args=("q", "actions", "target"),
    reference=td_error,
    edge_cases=[
        (_fixed(68, 3, 2), t([1, 0, 1]), _fixed(69, 3)),   # B > A
        (_fixed(70, 1, 4), t([3]), _fixed(71, 1)),         # B == 1
        (_fixed(72, 2, 5), t([0, 0]), _fixed(73, 2)),      # the same action twice
    ],
    random_case=_td_random,
    seed=603,
    grad="same",
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

EXERCISES = [WHOLE_ROWS, LABEL_LOGP, TD_ERROR]
