"""The one generic test of every declaration, chapter exercise or Practice puzzle: each declared
right answer passes, each planted wrong answer (every ``Mistake`` and every ``Wrong``) is rejected
with the hint it must get, in every language, a puzzle's loops (``spec``) are right in value but
break its rule, and every declaration has enough of both."""
from __future__ import annotations

import pytest

from gatherbook.exercises import get, names, run_check
from gatherbook.exercises.words import of
from gatherbook.runtime import LANGUAGES

DECLARED = names()

RIGHT = [pytest.param(n, i, id=f"{n}-right{i}") for n in DECLARED for i in range(len(get(n).right))]
MISTAKES = [pytest.param(n, m.key, id=f"{n}-{m.key}") for n in DECLARED for m in get(n).mistakes]
WRONG = [pytest.param(n, i, id=f"{n}-wrong{i}") for n in DECLARED for i in range(len(get(n).wrong))]


@pytest.mark.parametrize("name", DECLARED)
def test_each_exercise_declares_enough_answers(name):
    ex = get(name)
    assert len(ex.right) >= 3, f"{name}: at least 3 right answers written other ways"
    loops = ex.spec is not None and bool(ex.allowed)  # a puzzle's loops: right values, a broken rule
    assert len(ex.mistakes) + len(ex.wrong) + loops >= 4, f"{name}: at least 4 planted wrong answers"


@pytest.mark.parametrize("name", DECLARED)
def test_the_reference_passes(name):
    for lang in LANGUAGES:
        r = run_check(name, get(name).reference, lang=lang)
        assert r.passed, r.message


@pytest.mark.parametrize("name,i", RIGHT)
def test_a_right_answer_written_another_way_passes(name, i):
    for lang in LANGUAGES:
        r = run_check(name, get(name).right[i], lang=lang)
        assert r.passed, r.message


@pytest.mark.parametrize("name,key", MISTAKES)
def test_a_planted_mistake_is_rejected_and_named(name, key):
    m = get(name).mistake(key)
    records = set()
    for lang in LANGUAGES:
        r = run_check(name, m.fn, lang=lang)
        assert r.attempted and not r.passed, r.message
        assert r.hint_key == key, r.message
        assert r.message.endswith(of(name, lang)["hints"][key]), r.message
        records.add(r.record())
    assert len(records) == 1, "every language renders the same record"


@pytest.mark.parametrize("name,i", WRONG)
def test_a_planted_wrong_answer_is_rejected_with_its_hint(name, i):
    w = get(name).wrong[i]
    records = set()
    for lang in LANGUAGES:
        r = run_check(name, w.fn, lang=lang)
        assert r.attempted and not r.passed, f"{w.why}\n{r.message}"
        assert r.hint_key == w.hint, f"{w.why}\n{r.message}"
        if w.kind is not None:
            assert r.kind == w.kind, f"{w.why}\n{r.message}"
        records.add(r.record())
    assert len(records) == 1


@pytest.mark.parametrize("name", [n for n in DECLARED if get(n).spec is not None and get(n).allowed])
def test_the_loops_of_a_puzzle_are_right_but_break_its_rule(name):
    records = set()
    for lang in LANGUAGES:
        r = run_check(name, get(name).spec, lang=lang)
        assert r.kind == "rule" and r.facts["how"] == "loop", r.message
        records.add(r.record())
    assert len(records) == 1
