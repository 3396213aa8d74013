"""The Chinese notebooks print no English sentence of the book's own (issue 21).

One code cell serves both editions, so what it prints must read in both: values and booleans
under code-identifier labels (`goal_after: True`, `len(caught) = 0`), as chapters 1 and 4 do,
never an English phrase (`greedy policy reaches the goal: True`).

An "English sentence" here is a run of three or more plain English words (Python keywords
and True/False/None are not words: `for r in runs` is code). Library text is
allowed: error outputs and stderr are not read, and in stdout only runs that the cell's own
string literals contain count (or share two words in a row with one of them: a run that a
print puts together from a name and a label, `divided by T: ratio`), so a PyTorch message or
docstring that a cell prints (a
`UserWarning`'s text, `use_deterministic_algorithms.__doc__`'s lines, an exception's message)
passes, while a label the book wrote does not.
"""
from __future__ import annotations

import ast
import json
import keyword
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ZH = sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))
RUN = 3  # words in a row that make a sentence
WORD = re.compile(r"^[A-Za-z][a-z]*[,.;:!?]?$")
NOT_WORDS = set(keyword.kwlist)  # True, False, None, for, in, and, not, ...


def english_runs(text: str) -> list[str]:
    """Runs of RUN or more plain words (no digits, brackets, dots or underscores inside)."""
    runs, current = [], []
    for token in text.split():
        if WORD.match(token) and token.rstrip(",.;:!?") not in NOT_WORDS:
            current.append(token.rstrip(",.;:!?"))
            continue
        if len(current) >= RUN:
            runs.append(" ".join(current))
        current = []
    if len(current) >= RUN:
        runs.append(" ".join(current))
    return runs


def literals(source: str) -> list[str]:
    """The string constants of a code cell, f-strings' literal parts included."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Module)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docstrings]


def printed_text(cell: dict) -> str:
    """stdout and displayed text/plain of a cell (not errors, not stderr)."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            parts.append("".join(out["text"]))
        elif out.get("output_type") in ("execute_result", "display_data"):
            parts.append("".join(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def print_literals(source: str) -> list[str]:
    """The string constants inside print(...) calls: the labels a cell writes."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "print"]
    return [c.value for call in calls for c in ast.walk(call)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)]


def sentences_in_literals(nb: dict) -> list[str]:
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            for lit in print_literals("".join(cell["source"])):
                found += [f"cell {i} source: {run!r}" for run in english_runs(lit)]
    return found


def word_pairs(text: str) -> set[tuple[str, str]]:
    """Two plain words in a row (as english_runs reads them)."""
    pairs, previous = set(), None
    for token in text.split():
        word = token.rstrip(",.;:!?") if WORD.match(token) else None
        if word in NOT_WORDS:
            word = None
        if previous and word:
            pairs.add((previous, word))
        previous = word
    return pairs


def sentences_in_outputs(nb: dict) -> list[str]:
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        own = " ".join(" ".join(lit.split()) for lit in literals(source))
        own_pairs = set().union(*(word_pairs(lit) for lit in literals(source)))
        for line in printed_text(cell).splitlines():
            found += [f"cell {i} output: {run!r}" for run in english_runs(line)
                      if run in own or word_pairs(run) & own_pairs]
    return found


@pytest.mark.parametrize("path", ZH, ids=lambda p: p.stem)
def test_zh_code_writes_no_english_sentence(path):
    bad = sentences_in_literals(json.loads(path.read_text(encoding="utf-8")))
    assert not bad, f"zh/{path.name}: print values under code labels:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", ZH, ids=lambda p: p.stem)
def test_zh_outputs_show_no_english_sentence(path):
    bad = sentences_in_outputs(json.loads(path.read_text(encoding="utf-8")))
    assert not bad, (f"zh/{path.name}: stored outputs print English (re-execute the notebook "
                     "after changing its prints):\n" + "\n".join(bad))


def test_the_checks_find_what_they_look_for():
    assert english_runs("greedy policy reaches the goal: True") == ["greedy policy reaches the goal"]
    assert english_runs("goal_after: True") == []
    assert english_runs('torch.allclose(result["grad"], single.grad, atol=1e-6): True') == []
    assert english_runs("True True True True") == []
    assert english_runs("all(torch.equal(runs[0], r) for r in runs): True") == []
    assert english_runs("same Huber loss: True") == ["same Huber loss"]
    code = {"cell_type": "code", "source": [
        'def f():\n    """A docstring with many English words in it."""\n'
        'text = "Alice was beginning to get very tired"\n'
        'print("greedy policy reaches the goal:", ok)\nprint("len(caught):", n)\n'
        'for name in ["forgot T", "divided by T"]:\n    print(f"{name}: ratio {lo}")\n'],
        "outputs": [{"output_type": "stream", "name": "stdout", "text": [
            "greedy policy reaches the goal: True\n",
            "Alice was beginning to get very tired\n",
            "The reduce argument of torch.scatter with Tensor src is deprecated\n",
            "len(caught): 0\n",
            "divided by T: ratio 0.82\n"]},
            {"output_type": "error", "ename": "E", "evalue": "an error with many words in it"}]}
    nb = {"cells": [code]}
    assert sentences_in_literals(nb) == ["cell 0 source: 'greedy policy reaches the goal'"]
    assert sentences_in_outputs(nb) == ["cell 0 output: 'greedy policy reaches the goal'",
                                        "cell 0 output: 'Alice was beginning to get very tired'",
                                        "cell 0 output: 'divided by T ratio'"]
