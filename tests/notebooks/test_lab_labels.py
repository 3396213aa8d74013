"""Exercise and solution labels in JupyterLab (``tools/notebooks.py labels``): in the notebook's language,
numbered as on the site, and the site's fences restored exactly from JupyterLab's form."""
from __future__ import annotations

import importlib.util
import json
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
