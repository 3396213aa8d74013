"""A find-the-bug exercise: the stub is a buggy function, declared as one of the planted mistakes
(``Exercise(bug=<its key>)``). Unchanged, the stub is reported as wrong with that mistake's hint,
never as "not attempted", also when the bug is a fault (an input changed in place) rather than a
wrong value."""
from __future__ import annotations

import pytest

from gatherbook import exercises
from gatherbook.exercises import Exercise, Mistake, run_check
from gatherbook.exercises.cases import f
from gatherbook.exercises.words import of


def _declared(bug: str, *mistakes: Mistake) -> Exercise:
    return Exercise(
        name="ch1.row_sum", args=("x",),
        reference=lambda x: x.sum(dim=1),
        edge_cases=[(f([[1.0, 2.0], [3.0, 5.0]]),), (f([[-1.0, 4.0, 0.5]]),)],
        mistakes=mistakes, bug=bug)


def _sum_dim0(x):  # the planted mistake, as the declaration holds it
    return x.sum(dim=0)


def _shipped_stub(x):  # the same bug as the notebook's stub cell defines it (another function)
    total = x.sum(dim=0)
    return total


def _in_place(x):  # the right sum, but the caller's x is zeroed
    total = x.sum(dim=1)
    x.zero_()
    return total


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_unchanged_buggy_stub_is_still_wrong_with_its_planted_hint(declare, words, lang):
    hints = {"en": "rows are summed along dim=1", "zh": "每行沿 dim=1 求和"}
    name = declare(_declared("dim0", Mistake("dim0", _sum_dim0)))
    words(name, **{code: {"title": "row_sum", "hints": {"dim0": text}} for code, text in hints.items()})
    r = run_check(name, _shipped_stub, lang=lang)
    assert (r.status, r.kind, r.hint_key) == ("failed", "values", "dim0"), r.message
    assert r.attempted and r.message.endswith(hints[lang])
    assert run_check(name, lambda x: x.sum(dim=1), lang=lang).passed


def test_a_bug_that_changes_the_input_in_place_is_named_by_its_hint(declare, words):
    name = declare(_declared("in_place", Mistake("in_place", _in_place)))
    words(name, en={"title": "row_sum", "hints": {"in_place": "`mul_` changes x"}})
    r = run_check(name, _in_place, lang="en")
    assert (r.status, r.kind, r.hint_key) == ("failed", "mutated_input", "in_place"), r.message
    r = run_check(name, lambda x: x.mul_(2).sum(dim=1), lang="en")  # another in-place answer: generic
    assert (r.kind, r.hint_key) == ("mutated_input", "generic.mutated_input"), r.message


def test_bug_must_name_a_declared_mistake():
    from types import SimpleNamespace

    from gatherbook.exercises import declaration

    ex = _declared("no_such_key", Mistake("dim0", _sum_dim0))
    with pytest.raises(AssertionError, match="bug='no_such_key'"):
        declaration._validate("ch1", SimpleNamespace(EXERCISES=[ex], __name__="ch1"))
    assert "ch1.row_sum" not in declaration._REGISTRY



@pytest.mark.parametrize("chapter", range(1, 8), ids=lambda n: f"ch{n}")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_chapter_has_one_find_the_bug_reported_with_its_planted_hint(chapter, lang):
    bugs = [n for n in exercises.names() if n.startswith(f"ch{chapter}.") and exercises.get(n).bug]
    assert len(bugs) == 1, f"ch{chapter}: find-the-bug exercises {bugs}"
    ex = exercises.get(bugs[0])
    planted = ex.mistake(ex.bug)
    r = run_check(ex.name, planted.fn, lang=lang)
    assert (r.status, r.hint_key) in {("failed", ex.bug), ("raised", ex.bug)}, r.message
    hint = " ".join(of(ex.name, lang)["hints"][ex.bug].split("`")[0].split())  # the hint's first words
    assert hint in " ".join(r.message.split()), r.message
