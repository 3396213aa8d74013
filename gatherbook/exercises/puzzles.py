"""The practice puzzles, declared as exercises (``puzzles.<name>``) for the book's checker.

The puzzles themselves live in :mod:`gatherbook.puzzles` (``level1.py`` ... ``level4.py``: the
loops, the solution, right answers, planted wrong answers, edge cases, a hypothesis strategy, the
allowed operations; their words in ``_texts.py``). This module turns each into an
:class:`~gatherbook.exercises._checker.Exercise`:

- ``reference``: the definition written as loops;
- ``edge_cases``: the hand-written ones; then ``search``: hypothesis's smallest failing case;
- ``mistakes``: the planted wrong answers with their hints; ``right``: the solution and the other
  right answers; ``wrong``: the loops themselves, right in value but rejected by the rule;
- ``rules``: the operations guard (only the allowed operations, no Python loop).
"""
from __future__ import annotations

from typing import Any, Callable

from gatherbook.exercises._checker import Exercise, Mistake, Rule, Wrong
from gatherbook.puzzles import PUZZLES, Puzzle, ops_text
from gatherbook.puzzles._core import search
from gatherbook.puzzles._guard import TO_PYTHON, Forbidden, guarded_call
from gatherbook.puzzles._texts import PUZZLES as WORDS, UI


def _what(p: Puzzle, e: Forbidden, lang: str) -> str:
    ui = UI[lang]
    if e.loop is not None:
        head = ui["kind.loop"].format(line=e.loop[0])
    elif e.op == "x[tensor]":
        head = ui["kind.forbidden_index"]
    elif e.limit:
        head = ui["kind.forbidden_limit"].format(op=e.op, limit=e.limit)
    elif e.op in TO_PYTHON:
        head = ui["kind.forbidden_python"].format(op=e.op)
    else:
        head = ui["kind.forbidden"].format(op=e.op)
    return head + "\n" + ui["allowed"].format(ops=ops_text(p))


def guard_rule(p: Puzzle) -> Rule:
    """The rule that the answer calls only the puzzle's operations and runs no Python loop."""
    def test(fn: Callable[..., Any], case: tuple) -> dict | None:
        try:
            guarded_call(fn, case, p.ops, p.limits)
        except Forbidden as e:
            return {"op": e.op, "what_en": _what(p, e, "en"), "what_zh": _what(p, e, "zh")}
        except Exception:  # an error only under the guard (the values were right): not this rule's
            return None
        return None
    return Rule("allowed_ops", test, en="{what_en}", zh="{what_zh}")


def exercise(p: Puzzle) -> Exercise:
    en, zh = WORDS["en"][p.name], WORDS["zh"][p.name]
    return Exercise(
        name=f"puzzles.{p.name}",
        title={"en": en["title"], "zh": zh["title"]},
        args=p.args,
        reference=p.solution,  # the loops are the definition; the reference must obey the rule too
        edge_cases=list(p.edges),
        random_case=None, n_random=0,
        search=lambda fn, p=p: search(p, fn),
        rtol=p.rtol, atol=p.atol,
        mistakes=[Mistake(w.key, w.fn, en=en[w.key], zh=zh[w.key]) for w in p.wrongs],
        right=list(p.rights),
        wrong=[Wrong(p.spec, hint=None, kind="rule", why="the loops: right values, but a Python loop")],
        rules=[guard_rule(p)],
    )


EXERCISES = [exercise(p) for p in PUZZLES]
