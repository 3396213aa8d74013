"""Chapter 3 exercises, easy to hard. Cases: one-decimal values; B != A (a (B, B) broadcast cannot
pass for (B,)); B == 1 (a bare ``squeeze()`` bites); rows both terminated and truncated; Q-rows
without ties; a logit of -200 that underflows. Each target is written once in the graph (``_dqn``,
``_double``, ``_n_step``): the reference is its ``.detach()``, the graph version a wrong answer."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.distributions import Categorical

from gatherbook.exercises.declaration import Mistake, Wrong, exercise
from gatherbook.exercises.cases import (ATOL, b, between, distinct, distinct_rows, f,
                                        flags, floats, from_sizes, ints, pick, t)


def _gamma(g: torch.Generator) -> torch.Tensor:
    return torch.tensor([0.9, 0.5, 0.99, 0.8][between(g, 0, 3)])


_q_and_actions = from_sizes((1, 7), inputs=lambda g, B, A: (
    floats(g, B, A, scale=49), ints(g, A, B)))


def _bootstrap(reward, gamma, terminated, next_v):
    return reward + gamma * (1 - terminated.float()) * next_v


# 1. Q-values of the taken actions
@exercise(
    edge_cases=[
        (f([[0.5, -1.2, 2.0, 0.3], [1.5, 0.1, -0.4, 0.8], [-2.2, 0.9, 0.0, 1.1]]), t([3, 0, 3])),
        (f([[0.4, -0.7, 1.9, 0.2, -1.0]]), t([2])),                       # B == 1
        (f([[0.7], [-0.3], [1.4], [0.0]]), t([0, 0, 0, 0])),               # A == 1
        (f([[-1.5, -0.5, -2.5], [-0.1, -3.0, -0.2]]), t([1, 2])),          # negative values
    ],
    random_case=_q_and_actions, seed=301, grad="same",
    right=[
        lambda q, a: q[torch.arange(q.shape[0]), a],
        lambda q, a: torch.stack([q[i, a[i]] for i in range(q.shape[0])]),
        lambda q, a: (q * F.one_hot(a, q.shape[1]).to(q.dtype)).sum(1),
        lambda q, a: torch.take_along_dim(q, a[:, None], dim=1)[:, 0],
    ],
    wrong=[Wrong(lambda q, a: q_taken(q.detach(), a), "generic.no_grad", "no_grad",
                 why="the right values cut out of the graph: the loss could not train the Q-network")],
    mistakes=[
        Mistake("forgot_squeeze", lambda q, a: q.gather(1, a.unsqueeze(1))),
        Mistake("squeezed_batch", lambda q, a: q.gather(1, a.unsqueeze(1)).squeeze()),
        Mistake("column_index", lambda q, a: q[:, a]),
        Mistake("max_not_taken", lambda q, a: q.max(dim=1).values),
        Mistake("no_unsqueeze", lambda q, a: q.gather(1, a)),
        Mistake("gather_dim0", lambda q, a: q.gather(0, a.unsqueeze(0)).squeeze(0)),
    ],
)
def q_taken(q: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """``out[i] = q[i, actions[i]]``. q: (B, A) float32; actions: (B,) int64. Returns (B,)."""
    return q.gather(1, actions.unsqueeze(1)).squeeze(1)


# 2. policy log-probs of the taken actions
@exercise(
    edge_cases=[
        (f([[1.0, -0.5, 2.0, 0.0], [0.3, 0.3, -1.2, 0.8], [-2.0, 1.5, 0.4, -0.1]]), t([2, 0, 1])),
        (f([[0.5, -1.5, 1.0]]), t([1])),                                  # B == 1
        (f([[-200.0, 0.0, 1.0], [2.0, -200.0, 0.5]]), t([0, 1])),           # softmax underflows to 0
        (f([[0.4], [-1.1], [2.3]]), t([0, 0, 0])),                          # A == 1: log-prob 0
        (f([[-float("inf"), 0.5, 1.0], [0.2, -float("inf"), -float("inf")]]), t([2, 0])),  # masked actions
    ],
    random_case=_q_and_actions, seed=304, atol=ATOL, grad="same",
    wrong=[
        Wrong(lambda x, a: policy_logprobs(x.detach(), a), "generic.no_grad", "no_grad"),
        Wrong(lambda x, a: (x.log_softmax(-1) * F.one_hot(a, x.shape[1])).sum(-1), kind="values",
              why="one-hot product: 0 * -inf is nan where an action is masked"),
    ],
    right=[
        lambda x, a: Categorical(logits=x).log_prob(a),
        lambda x, a: -F.cross_entropy(x, a, reduction="none"),
        lambda x, a: x.log_softmax(1)[torch.arange(x.shape[0]), a],
    ],
    mistakes=[
        Mistake("probabilities", lambda x, a: pick(x.softmax(-1), a)),
        Mistake("softmax_then_log", lambda x, a: pick(x.softmax(-1).log(), a)),
        Mistake("raw_logits", lambda x, a: pick(x, a)),
        Mistake("softmax_over_batch", lambda x, a: pick(x.log_softmax(0), a)),
        Mistake("forgot_squeeze", lambda x, a: x.log_softmax(-1).gather(1, a.unsqueeze(1))),
        Mistake("cross_entropy_sign", lambda x, a: F.cross_entropy(x, a, reduction="none")),
    ],
)
def policy_logprobs(logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Returns ``log_softmax(logits[i])[actions[i]]`` for each row i, (B,), differentiable."""
    return logits.log_softmax(-1).gather(1, actions.unsqueeze(1)).squeeze(1)


# 3. the DQN target, terminated vs truncated
def _dqn(next_q_target, reward, terminated, truncated, gamma, next_v=lambda q: q.max(dim=1).values):
    return _bootstrap(reward, gamma, terminated, next_v(next_q_target))


def _dqn_in_place(next_q_target, reward, terminated, truncated, gamma):
    with torch.no_grad():
        reward += gamma * (1 - terminated.float()) * next_q_target.max(dim=1).values
    return reward


def _dqn_random(g: torch.Generator):
    q, actions = _q_and_actions(g)  # B != A
    return q, floats(g, len(q), scale=49), flags(g, len(q), p=0.3), flags(g, len(q), p=0.3), _gamma(g)


@exercise(
    edge_cases=[
        (f([[0.5, 1.5, -0.5], [2.0, 0.0, 1.0], [0.8, -0.2, 0.4], [-1.0, -0.6, -2.0]]),
         f([0.0, 1.0, 0.0, -1.0]), b([False, True, False, False]), b([False, False, True, False]),
         f(0.9)),
        (f([[1.0, 2.0]]), f([0.5]), b([False]), b([True]), f(0.9)),      # B == 1, truncated
        (f([[0.1, 0.4, 0.3, 0.2], [1.2, -0.4, 0.6, 0.0], [-0.3, 0.9, 0.2, 0.5]]),
         f([1.0, 0.0, 0.5]), b([True, False, False]), b([True, True, False]), f(0.5)),  # both flags
        (f([[0.5, 0.2], [0.3, 0.9], [1.0, 0.4], [-0.5, -0.1], [0.0, 0.6]]), f([0.0, 0.0, 1.0, 0.0, 0.0]),
         b([False, False, True, False, True]), b([False, True, False, False, False]), f(0.99)),
    ],
    random_case=_dqn_random, seed=302, atol=ATOL, grad="none",
    right=[
        lambda q, r, te, tr, g: (r + g * (~te).float() * q.max(1).values).detach(),
        lambda q, r, te, tr, g: torch.where(te, r, r + g * q.amax(dim=1)).detach(),
        lambda q, r, te, tr, g: torch.where(te, 0.0, g * q.max(dim=1).values).add(r).detach(),
    ],
    wrong=[
        Wrong(_dqn, "generic.has_grad", "has_grad"),
        Wrong(_dqn_in_place, "generic.mutated_input", "mutated_input"),
    ],
    mistakes=[
        Mistake("no_terminal_mask", lambda q, r, te, tr, g: r + g * q.max(dim=1).values),
        Mistake("done_includes_truncated", lambda q, r, te, tr, g: _dqn(q, r, te | tr, tr, g)),
        Mistake("keepdim_max", lambda *a: _dqn(*a, next_v=lambda q: q.max(dim=1, keepdim=True).values)),
        Mistake("mask_inverted", lambda q, r, te, tr, g: _dqn(q, r, ~te, tr, g)),
        Mistake("mean_not_max", lambda *a: _dqn(*a, next_v=lambda q: q.mean(dim=1))),
        Mistake("discounted_reward",
                lambda q, r, te, tr, g: g * (r + (1 - te.float()) * q.max(dim=1).values)),
        Mistake("max_of_batch", lambda *a: _dqn(*a, next_v=lambda q: q.max())),
        Mistake("reward_masked", lambda q, r, te, tr, g: (r + g * q.max(dim=1).values) * (1 - te.float())),
        Mistake("argmax_not_max", lambda *a: _dqn(*a, next_v=lambda q: q.argmax(dim=1))),
    ],
)
def dqn_target(next_q_target: torch.Tensor, reward: torch.Tensor, terminated: torch.Tensor,
               truncated: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """Returns ``reward + gamma * (1 - terminated) * max_a next_q_target[:, a]``, (B,), no grad."""
    return _dqn(next_q_target, reward, terminated, truncated, gamma).detach()


# 4. find the bug: a Double-DQN target (the notebook's stub has the roles swapped)
def _double(choose, value, reward, terminated, gamma):
    """Double DQN in the graph: the first table chooses the next action, the second values it."""
    best = choose.argmax(dim=1, keepdim=True)  # (B, 1)
    return _bootstrap(reward, gamma, terminated, value.gather(1, best).squeeze(1))


def _double_random(g: torch.Generator):
    B, A = distinct(g, 1, 7)
    A += 1 + (A + 1 == B)  # A in 2..9 and never B: a choice to make
    online, target = distinct_rows(g, B, A), distinct_rows(g, B, A)
    same = online.argmax(1) == target.argmax(1)
    target[same] = target[same].roll(1, dims=1)  # the networks disagree in every row
    return online, target, floats(g, B, scale=49), flags(g, B, p=0.3), _gamma(g)


@exercise(
    bug="swapped",
    edge_cases=[
        (f([[0.1, 0.9, 0.3, -0.2], [1.2, 0.4, 0.0, 0.5], [-0.3, -0.1, -0.8, 0.2]]),   # argmax 1, 0, 3
         f([[0.6, 0.2, 0.8, 0.1], [0.3, 0.7, -0.1, 0.2], [0.4, 0.0, 0.5, -0.6]]),     # argmax 2, 1, 2
         f([0.0, 1.0, 0.5]), b([False, False, True]), f(0.9)),
        (f([[0.2, 1.1, -0.4]]), f([[1.5, -0.5, 0.7]]), f([0.0]), b([False]), f(0.9)),  # B == 1
        (f([[0.4, 0.1], [-0.2, 0.3], [0.9, 1.0], [0.0, -0.5]]),
         f([[0.2, 0.6], [0.8, -0.3], [0.5, 0.1], [1.2, 0.4]]),
         f([1.0, 0.0, 0.0, -1.0]), b([True, False, False, True]), f(0.5)),
    ],
    random_case=_double_random, seed=303, atol=ATOL, grad="none",
    right=[
        lambda on, ta, r, te, g: (r + g * (~te).float() * ta[torch.arange(ta.shape[0]), on.argmax(1)]).detach(),
        lambda on, ta, r, te, g: (r + g * (1 - te.float()) * (ta * F.one_hot(on.argmax(1), on.shape[1]).to(ta.dtype)).sum(1)).detach(),
        lambda on, ta, r, te, g: torch.where(te, r, r + g * torch.take_along_dim(ta, on.argmax(1, keepdim=True), 1)[:, 0]).detach(),
    ],
    wrong=[Wrong(_double, "generic.has_grad", "has_grad")],
    mistakes=[
        Mistake("swapped", lambda on, ta, *a: _double(ta, on, *a)),
        Mistake("online_max", lambda on, ta, *a: _double(on, on, *a)),
        Mistake("target_max", lambda on, ta, *a: _double(ta, ta, *a)),
        Mistake("no_terminal_mask", lambda on, ta, r, te, g: _double(on, ta, r, torch.zeros_like(te), g)),
        Mistake("forgot_squeeze", lambda on, ta, r, te, g: _bootstrap(r, g, te, ta.gather(1, on.argmax(1, keepdim=True)))),
        Mistake("argmax_without_keepdim", lambda on, ta, r, te, g: _bootstrap(r, g, te, ta.gather(1, on.argmax(1)))),
    ],
)
def double_dqn_target(next_q_online: torch.Tensor, next_q_target: torch.Tensor, reward: torch.Tensor,
                      terminated: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """Returns the target with ``a* = argmax next_q_online`` valued by ``next_q_target``; (B,)."""
    return _double(next_q_online, next_q_target, reward, terminated, gamma).detach()


# 5. the n-step target
def _n_step(rewards, terminated, next_q_target, gamma, *, first=0, bootstrap=0, done=None):
    """The n-step target in the graph; the mistakes change the discounts' first power ``first``,
    the bootstrap's power ``n + bootstrap``, or ``done`` (``terminated.any(dim=1)``)."""
    n = rewards.shape[1]
    discounts = gamma ** torch.arange(first, first + n, dtype=rewards.dtype, device=rewards.device)
    ended = terminated.any(dim=1) if done is None else done(terminated)
    return _bootstrap((rewards * discounts).sum(dim=1), gamma ** (n + bootstrap), ended,
                      next_q_target.max(dim=1).values)


def _n_step_random(g: torch.Generator):
    (B, A), n = distinct(g, 1, 6), between(g, 1, 5)
    n += n == B  # the rows are not the steps
    rewards, terminated = floats(g, B, n, scale=49), torch.zeros(B, n, dtype=torch.bool)
    for row in range(B):
        if torch.rand(1, generator=g).item() < 0.4:
            k = between(g, 0, n - 1)
            terminated[row, k] = True
            rewards[row, k + 1:] = 0.0
    return rewards, terminated, floats(g, B, A, scale=49), _gamma(g)


def _n_step_in_place(rewards, terminated, next_q_target, gamma):
    with torch.no_grad():  # the right values, but the replay batch's rewards discounted in place
        rewards *= gamma ** torch.arange(rewards.shape[1], dtype=rewards.dtype)
        return rewards.sum(1) + _n_step(torch.zeros_like(rewards), terminated, next_q_target, gamma)


def _n_step_loop(rewards, terminated, q, gamma):
    ret, alive = rewards.new_zeros(rewards.shape[0]), rewards.new_ones(rewards.shape[0])
    for k in range(rewards.shape[1]):
        ret = ret + gamma ** k * rewards[:, k]
        alive = alive * (~terminated[:, k]).float()
    return (ret + gamma ** rewards.shape[1] * alive * q.max(1).values).detach()


@exercise(
    edge_cases=[
        (f([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.5, -1.0, 0.5], [0.0, 2.0, 0.0]]),
         b([[False, False, False], [True, False, False], [False, False, True], [False, True, False]]),
         f([[0.5, 1.5], [2.0, 0.0], [0.8, -0.2], [1.0, 3.0]]), f(0.9)),      # ends at step 0, 1, 2, never
        (f([[0.5]]), b([[False]]), f([[1.0, 2.0, -1.0]]), f(0.9)),          # B == 1, n == 1: plain DQN
        (f([[0.0, 0.0, 0.0, 1.0], [-1.0, 0.5, 0.0, 0.0]]),
         b([[False, False, False, False], [False, True, False, False]]),
         f([[0.3, 0.1, 0.2], [0.4, 0.9, -0.5]]), f(0.5)),
    ],
    random_case=_n_step_random, seed=305, atol=ATOL, grad="none",
    right=[
        _n_step_loop,
        lambda r, te, q, g: ((r * g ** torch.arange(r.shape[1], device=r.device)).sum(1) + g ** r.shape[1] * (~te.any(1)) * q.amax(1)).detach(),
        lambda r, te, q, g: (torch.where(te.any(1), 0.0, g ** r.shape[1] * q.max(1).values)
                             + (r * torch.stack([g ** k for k in range(r.shape[1])])).sum(1)).detach(),
    ],
    wrong=[
        Wrong(_n_step, "generic.has_grad", "has_grad"),
        Wrong(_n_step_in_place, "generic.mutated_input", "mutated_input"),
    ],
    mistakes=[
        Mistake("last_step_only", lambda *a: _n_step(*a, done=lambda te: te[:, -1])),
        Mistake("no_terminal_mask", lambda *a: _n_step(*a, done=lambda te: torch.zeros_like(te[:, 0]))),
        Mistake("gamma_not_powered",
                lambda r, te, q, g: _n_step(r, te, q, g, bootstrap=1 - r.shape[1])),
        Mistake("discount_off_by_one", lambda *a: _n_step(*a, first=1)),
        Mistake("undiscounted_rewards",
                lambda r, te, q, g: r.sum(1) + _n_step(torch.zeros_like(r), te, q, g)),
        Mistake("bootstrap_gamma_n_minus_1", lambda *a: _n_step(*a, bootstrap=-1)),
        Mistake("done_all_steps", lambda *a: _n_step(*a, done=lambda te: te.all(dim=1))),
    ],
)
def n_step_target(rewards: torch.Tensor, terminated: torch.Tensor, next_q_target: torch.Tensor,
                  gamma: torch.Tensor) -> torch.Tensor:
    """Returns ``sum_k gamma**k rewards[:, k] + gamma**n (1 - any(terminated)) max next_q_target``."""
    return _n_step(rewards, terminated, next_q_target, gamma).detach()
