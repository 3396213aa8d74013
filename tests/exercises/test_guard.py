"""The operations guard (gatherbook/exercises/guard.py), through the check of a puzzle that allows
a few operations: forbidden calls, tensor indices, values taken into Python, Python loops and call
limits are named with the allowed list, in both languages."""
from __future__ import annotations

import pytest
import torch

from gatherbook.exercises import get, run_check


@pytest.mark.parametrize("answer, op", [
    (lambda x, idx: torch.take_along_dim(x, idx.unsqueeze(1), 1).squeeze(1), "take_along_dim"),
    (lambda x, idx: x[torch.arange(x.shape[0]), idx], "x[tensor]"),
    (lambda x, idx: x.gather(1, idx.unsqueeze(1)).flip(0).flip(0).squeeze(1), "flip"),
    (lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(1) + idx.sum() * 0, "sum"),
    (lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(1) + int(idx.sum().item()) * 0, "sum"),
])
def test_guard_rejects_forbidden_calls(answer, op):
    r = run_check("puzzles.pick_per_row", answer, lang="en")
    assert r.status == "failed" and r.kind == "rule", r
    assert r.facts["op"] == op
    assert f"`{op}`" in r.message and "allowed: gather; arithmetic " in r.message


def test_guard_rejects_values_taken_into_python():
    r = run_check("puzzles.reverse", lambda x: torch.tensor(x.tolist()[::-1], dtype=x.dtype), lang="en")
    assert r.kind == "rule" and r.facts["op"] == "tolist"


def test_guard_names_the_call_and_the_allowed_list_in_both_languages():
    answer = lambda x: x.flip(0)  # noqa: E731
    en = run_check("puzzles.reverse", answer, lang="en").message
    zh = run_check("puzzles.reverse", answer, lang="zh").message
    assert "`flip`" in en and "allowed: gather; arithmetic " in en
    assert "`flip`" in zh and "允许使用：gather；算术 " in zh


def test_guard_rejects_a_python_loop():
    def pick_per_row(x, idx):
        out = torch.zeros(x.shape[0], dtype=x.dtype)
        for i in range(x.shape[0]):
            out[i] = x[i].gather(0, idx[i:i + 1])[0]
        return out
    r = run_check("puzzles.pick_per_row", pick_per_row, lang="en")
    assert r.kind == "rule" and r.facts["op"] == "for" and "Python loop" in r.message


def test_a_loop_is_named_even_when_its_first_pass_breaks_another_rule():
    """`x[i, idx[i]]` (a tensor index) and `int(n)` would stop the first pass; the loop is named."""
    def pick_per_row(x, idx):
        out = torch.zeros(x.shape[0], dtype=x.dtype)
        for i in range(x.shape[0]):
            out[i] = x[i, idx[i]]
        return out
    for fn in (pick_per_row, get("puzzles.pick_per_row").spec, get("puzzles.right_to_left").spec,
               lambda x, idx: torch.cat([x[i].gather(0, idx[i:i + 1]) for i in range(x.shape[0])]
                                         + [x.new_zeros(0)])):
        name = "puzzles.right_to_left" if fn is get("puzzles.right_to_left").spec else "puzzles.pick_per_row"
        r = run_check(name, fn, lang="en")
        assert r.kind == "rule" and r.facts["op"] == "for" and "Python loop" in r.message, r.message


def test_an_expression_over_several_lines_is_not_a_loop():
    def pick_per_row(x, idx):
        return x.gather(
            1,
            idx.unsqueeze(1),
        ).squeeze(
            1)
    assert run_check("puzzles.pick_per_row", pick_per_row, lang="en").passed


def test_call_limit():
    r = run_check("puzzles.rank", lambda x: x.argsort(1).argsort(1), lang="en")
    assert r.kind == "rule" and r.facts["op"] == "argsort" and "1 call" in r.message
