"""Chapter 6 exercises. Their traps: ``(B, 1)`` against ``(B,)``; ``-100`` padding needs a dummy id
*and* the mask (id 0 is a token); ``take_along_dim`` reads ``-100`` as the id ``-100 % V``. First
dims differ from second ones (a wrong dim cannot pass), one case has a batch of one."""
from __future__ import annotations

from dataclasses import replace

import torch
import torch.nn.functional as F

from gatherbook.exercises.declaration import Mistake, Wrong, exercise
from gatherbook.exercises.cases import (ATOL, PAD, between, distinct, from_sizes, ints,
                                        logits, padded_labels, rng, t, with_value)
from gatherbook.logprobs import token_logprobs


# 1. whole rows
@exercise(
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
        Mistake("index_not_expanded", lambda x, rows: x.gather(0, rows.unsqueeze(0))),
        Mistake("first_column_only", lambda x, rows: x.gather(0, rows.unsqueeze(1))),
        Mistake("squeezed_batch", lambda x, rows: x.gather(0, rows.unsqueeze(1).expand(-1, x.shape[1])).squeeze()),
        Mistake("expanded_d_by_k", lambda x, rows: x.gather(0, rows.unsqueeze(0).expand(x.shape[1], -1))),
    ],
)
def whole_rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``out[k] = x[rows[k]]`` with gather. x: (N, D); rows: (K,) int64. Returns (K, D)."""
    return x.gather(0, rows.unsqueeze(1).expand(-1, x.shape[1]))


# 2. the error of each action value
@exercise(
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
        Mistake("broadcast_b_b", lambda q, a, t: q.gather(1, a.unsqueeze(1)) - t),
        Mistake("all_actions_of_every_row", lambda q, a, t: q[:, a] - t),
        Mistake("wrong_dim", lambda q, a, t: q.gather(0, a.unsqueeze(0)).squeeze(0) - t),
        Mistake("sign", lambda q, a, t: -td_error(q, a, t)),
        Mistake("max_not_taken", lambda q, a, t: q.max(dim=1).values - t),
        Mistake("squared", lambda q, a, t: td_error(q, a, t) ** 2),
        Mistake("abs", lambda q, a, t: td_error(q, a, t).abs()),
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
        Mistake("gather_sees_pad", lambda logp, labels: logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1)),
        Mistake("clamp_only", _picked),
        Mistake("take_along_dim_wraps", _wrapped),
        Mistake("times_mask", lambda logp, labels: _picked(logp, labels) * (labels != PAD)),
        Mistake("second_log_softmax", lambda logp, labels: -F.cross_entropy(logp.transpose(1, 2), labels, ignore_index=PAD, reduction="none")),
        Mistake("zero_is_padding", lambda logp, labels: _picked(logp, labels) * (labels > 0)),
        Mistake("zero_is_padding_where", lambda logp, labels: torch.where(labels > 0, _picked(logp, labels), 0.0)),
        Mistake("mask_inverted", lambda logp, labels: torch.where(labels == PAD, _picked(logp, labels), 0.0)),
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
_SHARED = ("take_along_dim_wraps", "clamp_only", "times_mask", "zero_is_padding", "zero_is_padding_where",
           "mask_inverted")  # its sums, same hints


@exercise(
    bug="take_along_dim_wraps",
    edge_cases=_LABEL.edge_cases,
    random_case=_masked_random, seed=604, grad="same", atol=ATOL,
    right=[
        lambda logp, labels: -F.nll_loss(logp.transpose(1, 2), labels, ignore_index=PAD, reduction="none").sum(-1),
        lambda logp, labels: torch.where(labels != PAD, _wrapped(logp, labels.clamp(min=0)), 0.0).sum(-1),
        lambda logp, labels: torch.stack([sum((logp[b, t, y] for t, y in enumerate(row) if y != PAD), logp.new_zeros(())) for b, row in enumerate(labels)]),
    ],
    mistakes=[replace(m, fn=lambda lp, y, fn=m.fn: fn(lp, y).sum(-1)) for m in _LABEL.mistakes if m.key in _SHARED] + [
        Mistake("mean", lambda logp, labels: label_logp(logp, labels).sum(-1) / (labels != PAD).sum(-1)),
        Mistake("mean_of_scored", lambda logp, labels: label_logp(logp, labels).sum(-1) / (labels != PAD).sum(-1).clamp(min=1)),
        Mistake("shifted", lambda logp, labels: label_logp(logp[:, :-1], labels[:, 1:]).sum(-1)),
    ],
    wrong=[Wrong(lambda logp, labels: label_logp(logp, labels).sum(), None, "shape", why="summed over the batch too")],
)
def seq_logp(logp: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Each sequence's log-prob, padding left out. logp: (B, L, V); labels: (B, L). Returns (B,)."""
    return label_logp(logp, labels).sum(-1)
