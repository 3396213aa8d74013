"""The cases are wide enough to catch the answers that passed narrow ones (issue 35): sizes past 8,
fractional values, every dtype a statement allows, long sorts with ties, and values exactly at a
threshold. Each answer below passed every check while the cases were narrower."""
from __future__ import annotations

import pytest
import torch

from gatherbook.exercises import run_check


def _arange(n, like):
    return torch.arange(n, device=like.device)


def wrapped_at_8(x):
    """An index wrapped `% 8`: right for every vector of at most 8 values."""
    N = x.shape[0]
    return x.gather(0, torch.arange(N - 1, -1, -1, device=x.device) % 8)


def argmax_after_long(scores, values):
    """`.long()` before `argmax`: right while every score is a whole number."""
    return values.gather(1, scores.long().argmax(1, keepdim=True)).squeeze(1)


def rank_without_dtype(x):
    """The ranks scattered into `zeros_like(x)` without `dtype=torch.int64`: right while x is int64."""
    B, N = x.shape
    return torch.zeros_like(x).scatter(1, x.argsort(dim=1), _arange(N, x).expand(B, N))


def pick_into_int64(x, idx):
    """The picks added to `torch.zeros(..., dtype=torch.int64)`: right while x is int64 or float."""
    return torch.zeros(x.shape[0], dtype=torch.int64, device=x.device) + x.gather(1, idx.unsqueeze(1)).squeeze(1)


def slots_unstable_sort(expert, score, E, C):
    """Slots claimed in an unstable sort's order: right while ties are few (the CPU's sort keeps
    ties in order below 64 elements)."""
    order = score.argsort(descending=True)
    e = expert.gather(0, order)
    onehot = (e.unsqueeze(1) == torch.arange(E, device=expert.device)).long()
    place = (onehot.cumsum(0) - 1).gather(1, e.unsqueeze(1)).squeeze(1)
    return torch.full_like(expert, -1).scatter(0, order, torch.where(place < C, place, -1))


def slots_at_or_below_c(expert, score, E, C):
    """`<= C` where the rule is `< C`: a token exactly at the capacity is kept."""
    order = score.argsort(descending=True, stable=True)
    e = expert.gather(0, order)
    onehot = (e.unsqueeze(1) == torch.arange(E, device=expert.device)).long()
    place = (onehot.cumsum(0) - 1).gather(1, e.unsqueeze(1)).squeeze(1)
    return torch.full_like(expert, -1).scatter(0, order, torch.where(place <= C, place, -1))


CASES = [
    ("puzzles.reverse", wrapped_at_8, None),
    ("puzzles.value_at_argmax", argmax_after_long, None),
    ("puzzles.rank", rank_without_dtype, None),  # scatter refuses int64 ranks into a float tensor
    ("puzzles.pick_per_row", pick_into_int64, "dtype"),
    ("puzzles.priority_slots", slots_unstable_sort, "values"),
    ("puzzles.priority_slots", slots_at_or_below_c, "values"),
]


@pytest.mark.parametrize("name, answer, kind", CASES, ids=[f"{n}-{a.__name__}" for n, a, _ in CASES])
def test_an_answer_that_passed_narrow_cases_is_rejected(name, answer, kind):
    result = run_check(name, answer, lang="en")
    assert not result.passed, f"{answer.__name__} passes {name}: the cases are still too narrow"
    if kind is not None:
        assert result.kind == kind, result.message


def test_the_unstable_sort_and_the_threshold_are_named():
    """The two slips of a capacity rule get their own hints, not a generic one."""
    assert run_check("puzzles.priority_slots", slots_unstable_sort, lang="en").hint_key == "unstable_sort"
    assert run_check("puzzles.priority_slots", slots_at_or_below_c, lang="en").hint_key == "keeps_c_plus_1"
