"""Exercise and solution labels in JupyterLab (``tools/notebooks.py labels``): in the notebook's language,
numbered as on the site, and the site's fences restored exactly from JupyterLab's form."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from gatherbook_sphinx.notebooks import fenced_source, site_version, split_fences, with_lab_labels
from gatherbook_sphinx.words import table

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("notebooks_tool", ROOT / "tools" / "notebooks.py")
notebooks_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(notebooks_tool)

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))

EXERCISE = "````{exercise} 独热目标\n:label: ch5-ex-one-hot\n\n写出 `one_hot`。\n````"
SOLUTION = "````{solution-start} ch5-ex-one-hot\n:class: dropdown\n````\n\n从全零张量出发。"
END = "````{solution-end}\n````"


def md(src: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": src}


def test_labels_in_the_language_numbered_as_on_the_site_and_fences_restored():
    nb = {"cells": [md("引言"), md(EXERCISE), md(SOLUTION), md(END)]}
    assert with_lab_labels(nb, ["5.1"], table("zh")) == 3
    assert [c["source"] for c in nb["cells"]] == [
        "引言", "**练习 5.1（独热目标）**\n\n写出 `one_hot`。", "练习 5.1（独热目标）的解答\n\n<details class=\"gb-solution\"><summary>▸ 思路（点击展开）</summary>\n\n从全零张量出发。\n\n</details>",
        "<!-- solution-end -->\n"]  # the explanation folded: it stays folded after Run All (issue 38)
    assert [fenced_source(c) for c in nb["cells"]] == ["引言", EXERCISE, SOLUTION, END]
    assert with_lab_labels(nb, ["5.1"], table("zh")) == 0  # idempotent
    site_version(nb)
    assert [c["source"] for c in nb["cells"]] == ["引言", EXERCISE, SOLUTION, END]


def test_english_labels_and_an_edited_body_reach_the_site():
    nb = {"cells": [md(EXERCISE.replace("独热目标", "One-hot")), md(SOLUTION)]}
    with_lab_labels(nb, ["5.1"], table("en"))
    assert nb["cells"][0]["source"].startswith("**Exercise 5.1 (One-hot)**\n\n")
    assert nb["cells"][1]["source"].startswith("Solution to Exercise 5.1 (One-hot)\n\n")
    nb["cells"][0]["source"] = nb["cells"][0]["source"].replace("写出", "Write")  # a reader-visible edit
    assert fenced_source(nb["cells"][0]).endswith("Write `one_hot`。\n````")


def test_split_fences_reads_only_exercise_fences():
    assert split_fences("```{note}\nx\n```") is None
    assert split_fences(EXERCISE)[:2] == ("exercise", "独热目标")
    assert split_fences(END)[:2] == ("solution-end", "")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_labels_are_in_step(path):
    """Run ``python tools/notebooks.py labels`` when this fails (after adding or retitling an exercise)."""
    _, changed = notebooks_tool.labelled(path)
    assert changed == 0, f"{changed} exercise cells of {path.name} are out of step: run python tools/notebooks.py labels"


def test_site_numbers_follow_the_toc():
    numbers = notebooks_tool.site_numbers("en")
    ch5 = numbers[(ROOT / "notebooks/en/05_scatter.ipynb").resolve()]
    assert ch5[:2] == ["5.1", "5.2"]
    practice = [n for p, ns in numbers.items() if "08_practice" in p.name for n in ns]
    assert practice == [str(k) for k in range(1, len(practice) + 1)]  # one running count


PUZZLE = "````{exercise} 把向量倒过来\n:label: pz-reverse\n:class: puzzle\n\n写出 `reverse`。\n````"
PUZZLE_SOLUTION = "````{solution-start} pz-reverse\n:class: dropdown\n````\n\n从后往前读。"


@pytest.mark.parametrize("code, exercise, solution", [
    ("zh", "**第 3 题（把向量倒过来）**", "第 3 题（把向量倒过来）的解答"),
    ("en", "**Puzzle 3 (把向量倒过来)**", "Solution to Puzzle 3 (把向量倒过来)"),
])
def test_a_puzzle_is_labelled_as_a_puzzle_not_an_exercise(code, exercise, solution):
    nb = {"cells": [md(PUZZLE), md(PUZZLE_SOLUTION), md(END)]}
    with_lab_labels(nb, ["3"], table(code))
    assert nb["cells"][0]["source"].startswith(exercise + "\n\n")
    assert nb["cells"][1]["source"].startswith(solution + "\n\n")
    assert [fenced_source(c) for c in nb["cells"]] == [PUZZLE, PUZZLE_SOLUTION, END]


def test_exercises_and_puzzles_are_numbered_apart():
    kinds = notebooks_tool.exercise_kinds({"cells": [md(EXERCISE), md(PUZZLE), md(EXERCISE)]})
    assert kinds == ["exercise", "puzzle", "exercise"]


def _practice_pages(code: str) -> list[Path]:
    """The Practice part's notebooks of edition ``code``, in the TOC's order."""
    toc = "_toc.yml" if code == "en" else f"_toc_{code}.yml"
    return [ROOT / f"{doc}.ipynb" for doc, _ in notebooks_tool.toc_order(ROOT / toc)
            if f"/{code}/08_practice" in doc]


@pytest.mark.parametrize("code, word", [("en", r"Puzzle (\d+) \("), ("zh", r"第 (\d+) 题（")])
def test_the_practice_pages_give_each_puzzle_one_number(code, word):
    """Issue 35: a puzzle is "Puzzle 9" / 「第 9 题」 (its box, its solution), numbered 1, 2, ... over
    the part; its heading carries no number; in Chinese 练习 names only the part (练习篇) and the
    chapters' exercises, never a page or a puzzle."""
    numbers = []
    pages = _practice_pages(code)
    assert len(pages) == 6
    for path in pages:
        nb = json.loads(path.read_text(encoding="utf8"))
        for cell in nb["cells"]:
            src = "".join(cell["source"])
            if cell["cell_type"] == "markdown" and src.startswith("## "):  # a puzzle's heading: its name
                assert not re.search(r"\b\d+(\.\d+)?\b", src.split("\n")[0]), src
            if code == "zh" and cell["cell_type"] == "markdown":
                assert not re.search(r"练习(?!篇)", src + json.dumps(cell["metadata"], ensure_ascii=False)), (path.name, src)
        for label in lab_labels(nb):
            m = re.search(word, label)
            assert m, (path.name, label)
            if m.start() == 0 and not label.endswith("的解答"):  # the box (a solution repeats its number)
                numbers.append(int(m.group(1)))
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 32


def lab_labels(nb: dict) -> list[str]:
    labels = [((c["metadata"].get("gatherbook") or {}).get("lab") or {}).get("label", "")
              for c in nb["cells"] if c["cell_type"] == "markdown"]
    return [label.strip("*") for label in labels if label and not label.startswith("<!--")]
