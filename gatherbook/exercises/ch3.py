"""Chapter 3 exercises: action values and policies in reinforcement learning.

Q-values of the taken actions, the DQN target with ``terminated`` and ``truncated``, the
Double-DQN target, policy log-probs, and the n-step target. Cases use values with one decimal (easy
to read in feedback), batches whose size differs from the number of actions (so that a ``(B, B)``
broadcast cannot pass for a ``(B,)`` answer), a batch of one (where a bare ``squeeze()`` bites),
rows that are terminated, truncated, or both (gymnasium reports both at once when an episode
terminates on its last allowed step), Q-rows without ties (so that the online and the target
network's choices are well defined and differ), and a logit of -200 whose probability underflows
in float32. Targets are declared ``grad="none"`` (a fixed target: no gradient may flow back into
the target network) and log-probs ``grad="same"``; the checker also rejects an answer that changes
its inputs (the replay batch) in place.

``SIDE_EFFECT_MISTAKES`` holds the planted wrong answers whose *values* are right and whose fault
is a side effect: a gradient into the target network, a replay batch changed in place, a log-prob
cut out of the graph. The checker names these by kind (``has_grad``, ``mutated_input``,
``no_grad``), with its generic hint; ``tests/test_exercises_ch3.py`` runs each of them.
"""
from __future__ import annotations

import torch

from gatherbook.exercises._checker import Exercise, Mistake
from gatherbook.exercises.cases import ATOL, I64, b, between, distinct, f, floats, pick, t



# --------------------------------------------------------------------------------------------
# small helpers for the cases

def _distinct_rows(g: torch.Generator, B: int, A: int) -> torch.Tensor:
    """(B, A) floats with one decimal and no ties within a row (argmax and max are well defined)."""
    perms = torch.stack([torch.randperm(A, generator=g) for _ in range(B)]).float()
    return (perms * 7 + torch.randint(0, 7, (B, 1), generator=g).float() - 3 * A) / 10


def _gamma(g: torch.Generator) -> torch.Tensor:
    return torch.tensor([0.9, 0.5, 0.99, 0.8][between(g, 0, 3)])


def _flags(g: torch.Generator, B: int, p: float) -> torch.Tensor:
    return torch.rand(B, generator=g) < p


# --------------------------------------------------------------------------------------------
# 1. Q-values of the taken actions

def q_taken(q: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """The Q-value of the action taken in each row: ``out[i] = q[i, actions[i]]``.

    q: (B, A) float32; actions: (B,) int64 in [0, A). Returns (B,) float32.
    """
    return q.gather(1, actions.unsqueeze(1)).squeeze(1)


def _q_random(g: torch.Generator):
    B, A = distinct(g, 1, 7)
    return floats(g, B, A, scale=49), torch.randint(0, A, (B,), generator=g, dtype=I64)


def _q_taken_detached(q, actions):
    # the right values cut out of the graph: the loss could not train the Q-network
    return q.detach().gather(1, actions.unsqueeze(1)).squeeze(1)


Q_TAKEN = Exercise(
    name="ch3.q_taken",
    title={"en": "Q-values of the taken actions", "zh": "所采取动作的 Q 值"},
    args=("q", "actions"),
    reference=q_taken,
    edge_cases=[
        (f([[0.5, -1.2, 2.0, 0.3], [1.5, 0.1, -0.4, 0.8], [-2.2, 0.9, 0.0, 1.1]]), t([3, 0, 3])),
        (f([[0.4, -0.7, 1.9, 0.2, -1.0]]), t([2])),                       # B == 1
        (f([[0.7], [-0.3], [1.4], [0.0]]), t([0, 0, 0, 0])),               # A == 1
        (f([[-1.5, -0.5, -2.5], [-0.1, -3.0, -0.2]]), t([1, 2])),          # negative values
    ],
    random_case=_q_random,
    seed=301,
    grad="same",
    mistakes=[
        Mistake("forgot_squeeze", lambda q, a: q.gather(1, a.unsqueeze(1)),
                en="the gathered values are (B, 1): `.squeeze(1)` them to (B,). Left as (B, 1), a loss against a (B,) target broadcasts to (B, B) and trains without an error.",
                zh="gather 出来的值是 (B, 1)：用 `.squeeze(1)` 变成 (B,)。如果保持 (B, 1)，它与 (B,) 的目标计算损失时会广播成 (B, B)，训练照常进行，不报任何错误。"),
        Mistake("squeezed_batch", lambda q, a: q.gather(1, a.unsqueeze(1)).squeeze(),
                en="a bare `.squeeze()` also drops the batch dim when B == 1: the answer is (B,) even for one transition. Squeeze only dim 1: `.squeeze(1)`.",
                zh="不带参数的 `.squeeze()` 在 B == 1 时会把批次维也去掉：即使只有一个转移，答案也是 (B,)。只去掉第 1 维：`.squeeze(1)`。"),
        Mistake("column_index", lambda q, a: q[:, a],
                en="`q[:, actions]` takes every listed column for every row, shape (B, B). Pair each row with its own action: `q.gather(1, actions.unsqueeze(1))` or `q[torch.arange(B), actions]`.",
                zh="`q[:, actions]` 为每一行取出所有列出的列，形状是 (B, B)。要让每行只配它自己的动作：`q.gather(1, actions.unsqueeze(1))` 或 `q[torch.arange(B), actions]`。"),
        Mistake("max_not_taken", lambda q, a: q.max(dim=1).values,
                en="this is each row's best value, max_a Q(s, a), whatever action was taken. Read the taken action's column: gather with `actions`.",
                zh="这是每行的最大值 max_a Q(s, a)，与实际采取了哪个动作无关。应读取所采取动作那一列：用 `actions` 做 gather。"),
        Mistake("no_unsqueeze", lambda q, a: q.gather(1, a),
                en="gather needs an index with as many dims as `q`: `actions` is (B,) and `q` (B, A). Use `actions.unsqueeze(1)`, shape (B, 1).",
                zh="gather 要求索引的维数与 `q` 相同：`actions` 是 (B,)，`q` 是 (B, A)。用 `actions.unsqueeze(1)`，形状为 (B, 1)。"),
        Mistake("gather_dim0", lambda q, a: q.gather(0, a.unsqueeze(0)).squeeze(0),
                en="`gather(0, ...)` takes each action as a row number. The actions number the columns of `q`: gather along dim=1.",
                zh="`gather(0, ...)` 把每个动作当成了行号。动作编号的是 `q` 的列：应沿 dim=1 做 gather。"),
    ],
)


# --------------------------------------------------------------------------------------------
# 2. the DQN target, terminated vs truncated

def dqn_target(next_q_target: torch.Tensor, reward: torch.Tensor, terminated: torch.Tensor,
               truncated: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """``reward + gamma * (1 - terminated) * max_a next_q_target[:, a]``, with no gradient.

    next_q_target: (B, A) float32; reward: (B,) float32; terminated, truncated: (B,) bool;
    gamma: 0-d float32 tensor. Returns (B,) float32. ``truncated`` does not stop bootstrapping.
    """
    with torch.no_grad():
        return reward + gamma * (~terminated).float() * next_q_target.max(dim=1).values


def _q_first(case: tuple) -> tuple:
    """A case written (reward, q, ...) as the exercise takes it: (q, reward, ...)."""
    return (case[1], case[0], *case[2:])


def _dqn_random(g: torch.Generator):
    B, A = distinct(g, 1, 7)
    return (floats(g, B, A, scale=49), floats(g, B, scale=49), _flags(g, B, 0.3), _flags(g, B, 0.3), _gamma(g))


def _dqn_no_grad_graph(next_q_target, reward, terminated, truncated, gamma):
    return reward + gamma * (1 - terminated.float()) * next_q_target.max(dim=1).values


def _dqn_in_place(next_q_target, reward, terminated, truncated, gamma):
    with torch.no_grad():
        reward += gamma * (1 - terminated.float()) * next_q_target.max(dim=1).values
    return reward


DQN_TARGET = Exercise(
    name="ch3.dqn_target",
    title={"en": "DQN targets with terminal states", "zh": "带终止状态的 DQN 目标"},
    args=("next_q_target", "reward", "terminated", "truncated", "gamma"),
    reference=dqn_target,
    edge_cases=[_q_first(c) for c in [
        (f([0.0, 1.0, 0.0, -1.0]),
         f([[0.5, 1.5, -0.5], [2.0, 0.0, 1.0], [0.8, -0.2, 0.4], [-1.0, -0.6, -2.0]]),
         b([False, True, False, False]), b([False, False, True, False]), f(0.9)),
        (f([0.5]), f([[1.0, 2.0]]), b([False]), b([True]), f(0.9)),          # B == 1, truncated
        (f([1.0, 0.0, 0.5]), f([[0.1, 0.4, 0.3, 0.2], [1.2, -0.4, 0.6, 0.0], [-0.3, 0.9, 0.2, 0.5]]),
         b([True, False, False]), b([True, True, False]), f(0.5)),              # both flags at once
        (f([0.0, 0.0, 1.0, 0.0, 0.0]), f([[0.5, 0.2], [0.3, 0.9], [1.0, 0.4], [-0.5, -0.1], [0.0, 0.6]]),
         b([False, False, True, False, True]), b([False, True, False, False, False]), f(0.99)),
    ]],
    random_case=_dqn_random,
    seed=302,
    atol=ATOL,
    grad="none",
    mistakes=[
        Mistake("no_terminal_mask",
                lambda q, r, te, tr, g: r + g * q.max(dim=1).values,
                en="the terminated rows still bootstrap: after a terminal state there is no future, so multiply the next value by `(1 - terminated)`.",
                zh="已终止的行仍在自举：终止状态之后没有未来，所以下一状态的价值要乘以 `(1 - terminated)`。"),
        Mistake("done_includes_truncated",
                lambda q, r, te, tr, g: r + g * (~(te | tr)).float() * q.max(dim=1).values,
                en="a truncated row lost its bootstrap term. `truncated` means a time limit stopped the episode; the next state still has a value: mask with `terminated` only.",
                zh="被截断的行丢掉了自举项。`truncated` 表示回合被时间限制叫停，下一状态仍然有价值：只用 `terminated` 做掩码。"),
        Mistake("keepdim_max",
                lambda q, r, te, tr, g: r + g * (1 - te.float()) * q.max(dim=1, keepdim=True).values,
                en="`max(dim=1, keepdim=True)` is (B, 1); with (B,) rewards the target broadcasts to (B, B). Use `max(dim=1).values`, shape (B,).",
                zh="`max(dim=1, keepdim=True)` 是 (B, 1)；与 (B,) 的奖励相加后目标广播成 (B, B)。用 `max(dim=1).values`，形状为 (B,)。"),
        Mistake("mask_inverted",
                lambda q, r, te, tr, g: r + g * te.float() * q.max(dim=1).values,
                en="the mask is the wrong way round: bootstrap where the episode goes on, `(1 - terminated)`, not `terminated`.",
                zh="掩码反了：回合继续的地方才自举，应乘 `(1 - terminated)`，而不是 `terminated`。"),
        Mistake("mean_not_max",
                lambda q, r, te, tr, g: r + g * (1 - te.float()) * q.mean(dim=1),
                en="DQN bootstraps from the best next action, `max(dim=1).values`, not the mean over the actions.",
                zh="DQN 从最好的下一动作自举，即 `max(dim=1).values`，而不是各动作的平均值。"),
        Mistake("discounted_reward",
                lambda q, r, te, tr, g: g * (r + (1 - te.float()) * q.max(dim=1).values),
                en="gamma discounts the future only: `reward + gamma * (...)`, not `gamma * (reward + ...)`.",
                zh="gamma 只折扣未来：应为 `reward + gamma * (...)`，而不是 `gamma * (reward + ...)`。"),
    ],
)


# --------------------------------------------------------------------------------------------
# 3. the Double-DQN target

def double_dqn_target(next_q_online: torch.Tensor, next_q_target: torch.Tensor, reward: torch.Tensor,
                      terminated: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """The online network picks ``a* = argmax_a next_q_online[:, a]``, the target network values it.

    next_q_online, next_q_target: (B, A) float32; reward: (B,) float32; terminated: (B,) bool;
    gamma: 0-d float32 tensor. Returns ``reward + gamma * (1 - terminated) * next_q_target[i, a*t]``, (B,)
    float32, with no gradient.
    """
    with torch.no_grad():
        best = next_q_online.argmax(dim=1, keepdim=True)
        return reward + gamma * (~terminated).float() * next_q_target.gather(1, best).squeeze(1)


def _reward_third(case: tuple) -> tuple:
    """A case written (reward, online, target, ...) as the exercise takes it: (online, target, reward, ...)."""
    return (case[1], case[2], case[0], *case[3:])


def _double_random(g: torch.Generator):
    B, A = distinct(g, 1, 7)
    A += 1  # A in 2..8: a choice to make
    if A == B:
        A += 1
    online, target = _distinct_rows(g, B, A), _distinct_rows(g, B, A)
    same = online.argmax(1) == target.argmax(1)
    target[same] = target[same].roll(1, dims=1)  # the networks disagree in every row
    return (online, target, floats(g, B, scale=49), _flags(g, B, 0.3), _gamma(g))


def _double_with(value):
    """A Double-DQN target whose next-state value is ``value(online, target)``, shape (B,)."""
    return lambda on, ta, r, te, g: r + g * (1 - te.float()) * value(on, ta)


def _double_in_graph(next_q_online, next_q_target, reward, terminated, gamma):
    best = next_q_online.argmax(dim=1, keepdim=True)
    return reward + gamma * (1 - terminated.float()) * next_q_target.gather(1, best).squeeze(1)


DOUBLE_DQN_TARGET = Exercise(
    name="ch3.double_dqn_target",
    title={"en": "Double-DQN targets", "zh": "Double DQN 目标"},
    args=("next_q_online", "next_q_target", "reward", "terminated", "gamma"),
    reference=double_dqn_target,
    edge_cases=[_reward_third(c) for c in [
        (f([0.0, 1.0, 0.5]),
         f([[0.1, 0.9, 0.3, -0.2], [1.2, 0.4, 0.0, 0.5], [-0.3, -0.1, -0.8, 0.2]]),   # argmax 1, 0, 3
         f([[0.6, 0.2, 0.8, 0.1], [0.3, 0.7, -0.1, 0.2], [0.4, 0.0, 0.5, -0.6]]),     # argmax 2, 1, 2
         b([False, False, True]), f(0.9)),
        (f([0.0]), f([[0.2, 1.1, -0.4]]), f([[1.5, -0.5, 0.7]]), b([False]), f(0.9)),  # B == 1
        (f([1.0, 0.0, 0.0, -1.0]), f([[0.4, 0.1], [-0.2, 0.3], [0.9, 1.0], [0.0, -0.5]]),
         f([[0.2, 0.6], [0.8, -0.3], [0.5, 0.1], [1.2, 0.4]]), b([True, False, False, True]), f(0.5)),
    ]],
    random_case=_double_random,
    seed=303,
    atol=ATOL,
    grad="none",
    mistakes=[
        Mistake("online_max", _double_with(lambda on, ta: on.max(dim=1).values),
                en="this is the online network's own max: it both chooses and values, like DQN with the wrong network. Let it choose (`argmax`), and read that action's value in `next_q_target`.",
                zh="这是在线网络自己的最大值：它既选又评，相当于用错了网络的 DQN。让它只负责选（`argmax`），再到 `next_q_target` 中读取该动作的值。"),
        Mistake("target_max", _double_with(lambda on, ta: ta.max(dim=1).values),
                en="this is the plain DQN target (the target network's max). In Double DQN the online network chooses the action: `next_q_online.argmax(1, keepdim=True)`.",
                zh="这是普通 DQN 的目标（目标网络的最大值）。Double DQN 由在线网络选择动作：`next_q_online.argmax(1, keepdim=True)`。"),
        Mistake("swapped", _double_with(lambda on, ta: on.gather(1, ta.argmax(1, keepdim=True)).squeeze(1)),
                en="the roles are swapped: the online network chooses (`argmax` of `next_q_online`), the target network values (gather from `next_q_target`).",
                zh="两个角色弄反了：在线网络负责选（对 `next_q_online` 取 `argmax`），目标网络负责评（从 `next_q_target` 中 gather）。"),
        Mistake("no_terminal_mask",
                lambda on, ta, r, te, g: r + g * ta.gather(1, on.argmax(1, keepdim=True)).squeeze(1),
                en="the terminated rows still bootstrap: multiply by `(1 - terminated)`.",
                zh="已终止的行仍在自举：乘以 `(1 - terminated)`。"),
        Mistake("forgot_squeeze", _double_with(lambda on, ta: ta.gather(1, on.argmax(1, keepdim=True))),
                en="the gathered values are (B, 1): `.squeeze(1)` them to (B,). Left as (B, 1), a loss against a (B,) target broadcasts to (B, B) and trains without an error.",
                zh="gather 出来的值是 (B, 1)：用 `.squeeze(1)` 变成 (B,)。如果保持 (B, 1)，它与 (B,) 的目标计算损失时会广播成 (B, B)，训练照常进行，不报任何错误。"),
        Mistake("argmax_without_keepdim", _double_with(lambda on, ta: ta.gather(1, on.argmax(1))),
                en="`argmax(dim=1)` is (B,), and gather needs a (B, 1) index: use `argmax(dim=1, keepdim=True)`.",
                zh="`argmax(dim=1)` 是 (B,)，而 gather 需要 (B, 1) 的索引：用 `argmax(dim=1, keepdim=True)`。"),
    ],
)


# --------------------------------------------------------------------------------------------
# 4. policy log-probs of the taken actions

def policy_logprobs(logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """``out[i] = log_softmax(logits[i])[actions[i]]``, differentiable with respect to the logits.

    logits: (B, A) float32; actions: (B,) int64 in [0, A). Returns (B,) float32.
    """
    return logits.log_softmax(-1).gather(1, actions.unsqueeze(1)).squeeze(1)


def _policy_random(g: torch.Generator):
    B, A = distinct(g, 1, 7)
    return floats(g, B, A, scale=49), torch.randint(0, A, (B,), generator=g, dtype=I64)


def _policy_detached(logits, actions):
    with torch.no_grad():
        return logits.log_softmax(-1).gather(1, actions.unsqueeze(1)).squeeze(1)


POLICY_LOGPROBS = Exercise(
    name="ch3.policy_logprobs",
    title={"en": "Policy log-probs of the taken actions", "zh": "所采取动作的策略对数概率"},
    args=("logits", "actions"),
    reference=policy_logprobs,
    edge_cases=[
        (f([[1.0, -0.5, 2.0, 0.0], [0.3, 0.3, -1.2, 0.8], [-2.0, 1.5, 0.4, -0.1]]), t([2, 0, 1])),
        (f([[0.5, -1.5, 1.0]]), t([1])),                                  # B == 1
        (f([[-200.0, 0.0, 1.0], [2.0, -200.0, 0.5]]), t([0, 1])),           # softmax underflows to 0
        (f([[0.4], [-1.1], [2.3]]), t([0, 0, 0])),                          # A == 1: log-prob 0
    ],
    random_case=_policy_random,
    seed=304,
    atol=ATOL,
    grad="same",
    mistakes=[
        Mistake("probabilities", lambda x, a: pick(x.softmax(-1), a),
                en="these are probabilities (`softmax`), not log-probabilities: gather from `log_softmax(-1)`.",
                zh="这些是概率（`softmax`），不是对数概率：应从 `log_softmax(-1)` 中 gather。"),
        Mistake("softmax_then_log", lambda x, a: pick(x.softmax(-1).log(), a),
                en="`softmax(-1).log()` gives -inf where a probability underflows to 0 in float32 (the logit of -200 here); `log_softmax(-1)` stays finite.",
                zh="在 float32 中概率下溢为 0 时（这里是 -200 的 logit），`softmax(-1).log()` 会得到 -inf；`log_softmax(-1)` 则保持有限。"),
        Mistake("raw_logits", lambda x, a: pick(x, a),
                en="logits are scores defined up to a constant per row, not log-probabilities: apply `log_softmax(-1)` before the gather.",
                zh="logits 是每行差一个常数的分数，不是对数概率：在 gather 之前先做 `log_softmax(-1)`。"),
        Mistake("softmax_over_batch", lambda x, a: pick(x.log_softmax(0), a),
                en="`log_softmax(0)` normalises over the batch; each state's distribution runs over its actions, the last dim: `log_softmax(-1)`.",
                zh="`log_softmax(0)` 是沿批次归一化；每个状态的分布是在它的各个动作上，即最后一维：`log_softmax(-1)`。"),
        Mistake("forgot_squeeze", lambda x, a: x.log_softmax(-1).gather(1, a.unsqueeze(1)),
                en="the gathered values are (B, 1): `.squeeze(1)` them to (B,). Left as (B, 1), a loss against a (B,) target broadcasts to (B, B) and trains without an error.",
                zh="gather 出来的值是 (B, 1)：用 `.squeeze(1)` 变成 (B,)。如果保持 (B, 1)，它与 (B,) 的目标计算损失时会广播成 (B, B)，训练照常进行，不报任何错误。"),
        Mistake("cross_entropy_sign", lambda x, a: torch.nn.functional.cross_entropy(x, a, reduction="none"),
                en="cross-entropy is minus the log-prob: `-F.cross_entropy(logits, actions, reduction='none')`.",
                zh="交叉熵是对数概率的相反数：应为 `-F.cross_entropy(logits, actions, reduction='none')`。"),
    ],
)


# --------------------------------------------------------------------------------------------
# 5. the n-step target

def n_step_target(rewards: torch.Tensor, terminated: torch.Tensor, next_q_target: torch.Tensor,
                  gamma: torch.Tensor) -> torch.Tensor:
    """``sum_k gamma**k rewards[:, k] + gamma**n (1 - done) max_a next_q_target[:, a]``, no gradient.

    rewards: (B, n) float32 (0 after a termination); terminated: (B, n) bool; next_q_target: (B, A)
    float32; gamma: 0-d float32 tensor. ``done`` = terminated at any of the n steps. Returns (B,) float32.
    """
    n = rewards.shape[1]
    with torch.no_grad():
        discounts = gamma ** torch.arange(n, dtype=rewards.dtype, device=rewards.device)
        done = terminated.any(dim=1)
        return (rewards * discounts).sum(dim=1) + gamma ** n * (~done).float() * next_q_target.max(dim=1).values


def _n_step_case(g: torch.Generator, B: int, n: int, A: int):
    rewards = floats(g, B, n, scale=49)
    terminated = torch.zeros(B, n, dtype=torch.bool)
    for b in range(B):
        if torch.rand(1, generator=g).item() < 0.4:
            k = between(g, 0, n - 1)
            terminated[b, k] = True
            rewards[b, k + 1:] = 0.0
    return rewards, terminated, floats(g, B, A, scale=49), _gamma(g)


def _n_step_random(g: torch.Generator):
    B, A = distinct(g, 1, 6)
    n = between(g, 1, 5)
    return _n_step_case(g, B, n + 1 if n == B else n, A)  # n != B: the rows are not the steps


def _n_step_with(discounts, done, bootstrap_discount):
    """An n-step target built from the given pieces (each a function of the inputs)."""
    def fn(rewards, terminated, q, gamma):
        n = rewards.shape[1]
        ret = (rewards * discounts(gamma, n)).sum(dim=1)
        return ret + bootstrap_discount(gamma, n) * (~done(terminated)).float() * q.max(dim=1).values
    return fn


def _powers(gamma, n, start=0):
    return gamma ** torch.arange(start, start + n, dtype=torch.float32)


def _any_done(t):
    return t.any(dim=1)


def _n_step_in_place(rewards, terminated, next_q_target, gamma):
    n = rewards.shape[1]
    with torch.no_grad():
        rewards *= gamma ** torch.arange(n, dtype=rewards.dtype, device=rewards.device)
        done = terminated.any(dim=1)
        return rewards.sum(dim=1) + gamma ** n * (~done).float() * next_q_target.max(dim=1).values


def _n_step_in_graph(rewards, terminated, next_q_target, gamma):
    n = rewards.shape[1]
    discounts = gamma ** torch.arange(n, dtype=rewards.dtype, device=rewards.device)
    done = terminated.any(dim=1)
    return (rewards * discounts).sum(dim=1) + gamma ** n * (~done).float() * next_q_target.max(dim=1).values


N_STEP_TARGET = Exercise(
    name="ch3.n_step_target",
    title={"en": "n-step targets", "zh": "n 步目标"},
    args=("rewards", "terminated", "next_q_target", "gamma"),
    reference=n_step_target,
    edge_cases=[
        (f([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.5, -1.0, 0.5], [0.0, 2.0, 0.0]]),
         b([[False, False, False], [True, False, False], [False, False, True], [False, True, False]]),
         f([[0.5, 1.5], [2.0, 0.0], [0.8, -0.2], [1.0, 3.0]]), f(0.9)),      # ends at step 0, 1, 2, never
        (f([[0.5]]), b([[False]]), f([[1.0, 2.0, -1.0]]), f(0.9)),          # B == 1, n == 1: plain DQN
        (f([[0.0, 0.0, 0.0, 1.0], [-1.0, 0.5, 0.0, 0.0]]),
         b([[False, False, False, False], [False, True, False, False]]),
         f([[0.3, 0.1, 0.2], [0.4, 0.9, -0.5]]), f(0.5)),
    ],
    random_case=_n_step_random,
    seed=305,
    atol=ATOL,
    grad="none",
    mistakes=[
        Mistake("last_step_only", _n_step_with(_powers, lambda t: t[:, -1], lambda g, n: g ** n),
                en="only `terminated[:, -1]` was checked; an episode that terminated at an earlier step has no future either: `terminated.any(dim=1)`.",
                zh="只检查了 `terminated[:, -1]`；在更早的某一步终止的回合同样没有未来：`terminated.any(dim=1)`。"),
        Mistake("no_terminal_mask", _n_step_with(_powers, lambda t: torch.zeros_like(t[:, 0]),
                                                 lambda g, n: g ** n),
                en="rows that terminated within the n steps still bootstrap: multiply the bootstrap term by `(1 - done)`, `done = terminated.any(dim=1)`.",
                zh="在这 n 步内终止的行仍在自举：自举项要乘以 `(1 - done)`，其中 `done = terminated.any(dim=1)`。"),
        Mistake("gamma_not_powered", _n_step_with(_powers, _any_done, lambda g, n: g),
                en="the state after n steps is n steps away: its value is discounted by `gamma ** n`, not `gamma`.",
                zh="n 步之后的状态距离现在 n 步：它的价值要折扣 `gamma ** n`，而不是 `gamma`。"),
        Mistake("discount_off_by_one", _n_step_with(lambda g, n: _powers(g, n, 1), _any_done,
                                                    lambda g, n: g ** n),
                en="the first reward is not discounted: the discounts are `gamma ** torch.arange(n)`, i.e. 1, gamma, gamma**2 ...",
                zh="第一个奖励不打折扣：折扣系数是 `gamma ** torch.arange(n)`，即 1、gamma、gamma**2 ……"),
        Mistake("undiscounted_rewards", _n_step_with(lambda g, n: torch.ones(n), _any_done,
                                                     lambda g, n: g ** n),
                en="each reward k is discounted by `gamma ** k`: multiply by `gamma ** torch.arange(n)` before the sum.",
                zh="第 k 个奖励要折扣 `gamma ** k`：求和之前先乘以 `gamma ** torch.arange(n)`。"),
        Mistake("bootstrap_gamma_n_minus_1", _n_step_with(_powers, _any_done, lambda g, n: g ** (n - 1)),
                en="the bootstrap term comes after the n-th reward (discounted by gamma ** (n - 1)): it gets `gamma ** n`.",
                zh="自举项位于第 n 个奖励（折扣为 gamma ** (n - 1)）之后：它的折扣是 `gamma ** n`。"),
    ],
)


EXERCISES = [Q_TAKEN, DQN_TARGET, DOUBLE_DQN_TARGET, POLICY_LOGPROBS, N_STEP_TARGET]

#: Planted wrong answers with the right values and a wrong side effect, per exercise:
#: ``(key, fn, kind)``, ``kind`` being what the checker reports (see the module docstring).
SIDE_EFFECT_MISTAKES = {
    "ch3.q_taken": [("detached", _q_taken_detached, "no_grad")],
    "ch3.dqn_target": [("target_with_grad", _dqn_no_grad_graph, "has_grad"),
                       ("in_place_reward", _dqn_in_place, "mutated_input")],
    "ch3.double_dqn_target": [("target_with_grad", _double_in_graph, "has_grad")],
    "ch3.policy_logprobs": [("detached", _policy_detached, "no_grad")],
    "ch3.n_step_target": [("target_with_grad", _n_step_in_graph, "has_grad"),
                          ("in_place_rewards", _n_step_in_place, "mutated_input")],
}

