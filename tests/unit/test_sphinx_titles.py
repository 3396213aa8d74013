"""book/ext/gatherbook_sphinx/titles.py: Chinese pages title exercises 「练习 1（…）」 and solutions
「练习 1（…）的解答」; English pages keep sphinx-exercise's titles. A puzzle (``:class: puzzle``) is
「第 1 题（…）」 / "Puzzle 1 (…)", numbered apart from the exercises, its solution too."""
from __future__ import annotations

import subprocess
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PAGE = """Page
====

.. exercise:: Pick one per row
   :label: ex-pick

   Write it.

.. solution:: ex-pick

   The answer.

.. exercise:: Reverse it
   :label: pz-reverse
   :class: puzzle

   Write it.

.. solution:: pz-reverse

   The answer.
"""


def build(tmp_path: Path, language: str, edition: str) -> str:
    """Build PAGE in a fresh process (Sphinx's translations are global to a process)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.rst").write_text(PAGE, encoding="utf-8")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'book' / 'ext')!r})\n"
        "from gatherbook_sphinx import titles\n"
        f"extensions = ['sphinx_exercise']\nlanguage = {language!r}\nnumfig = True\n"
        f"gatherbook_edition = {edition!r}\n"
        "def setup(app):  # the titles' part of gatherbook_sphinx.setup()\n"
        "    app.add_config_value('gatherbook_edition', 'en', 'html')\n"
        "    app.add_post_transform(titles.ChineseExerciseTitles)\n"
        "    app.add_post_transform(titles.PuzzleSolutionTitles)\n"
        "    app.add_enumerable_node(titles.puzzle_node, 'puzzle', None, **titles.PUZZLE_WRITERS)\n"
        "    app.connect('config-inited', titles.puzzle_numfig)\n"
        "    app.connect('doctree-read', titles.mark_puzzles)\n"
        "    app.connect('html-page-context',\n"
        "                lambda app, p, t, context, d: titles.no_space_before_full_width_bracket(app, context))\n",
        encoding="utf-8")
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", str(src),
                    str(tmp_path / "out")], check=True)
    return (tmp_path / "out" / "index.html").read_text(encoding="utf-8")


def titles(html: str) -> list[str]:
    found = re.findall(r'<p class="admonition-title">(.*?)</p>', html, flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", "", t).split()) for t in found]  # spaces as a browser shows them


@pytest.mark.slow
def test_chinese_titles(tmp_path):
    html = build(tmp_path, "zh_CN", "zh")
    assert titles(html) == ["练习 1（Pick one per row）", "练习 1（Pick one per row）的解答",
                            "第 1 题（Reverse it）", "第 1 题（Reverse it）的解答"]


@pytest.mark.slow
def test_english_titles_are_left_alone(tmp_path):
    html = build(tmp_path, "en", "en")
    assert titles(html) == ["Exercise 1 (Pick one per row)", "Solution to Exercise 1 (Pick one per row)",
                            "Puzzle 1 (Reverse it)", "Solution to Puzzle 1 (Reverse it)"]


@pytest.mark.parametrize("code, chinese", [("zh", True), ("en", False)])
def test_the_edition_decides(code, chinese):
    from gatherbook_sphinx import titles

    class App:
        class config:
            gatherbook_edition = code

    assert titles._is_chinese(App) is chinese


def test_a_build_of_no_edition_is_named():
    from gatherbook_sphinx import titles

    class App:
        class config:
            gatherbook_edition = "zh_CN"

    with pytest.raises(ValueError, match=r"gatherbook_edition='zh_CN' is not a language of this book"):
        titles._is_chinese(App)
