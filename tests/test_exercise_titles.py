"""book/_ext/exercise_titles.py: Chinese pages title exercises 「练习 1（…）」 and solutions
「练习 1（…）的解答」; English pages keep sphinx-exercise's titles."""
from __future__ import annotations

import subprocess
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PAGE = """Page
====

.. exercise:: Pick one per row
   :label: ex-pick

   Write it.

.. solution:: ex-pick

   The answer.
"""


def build(tmp_path: Path, language: str) -> str:
    """Build PAGE in a fresh process (Sphinx's translations are global to a process)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.rst").write_text(PAGE, encoding="utf-8")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'book' / '_ext')!r})\n"
        f"extensions = ['exercise_titles']\nlanguage = {language!r}\nnumfig = True\n",
        encoding="utf-8")
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", str(src),
                    str(tmp_path / "out")], check=True)
    return (tmp_path / "out" / "index.html").read_text(encoding="utf-8")


def titles(html: str) -> list[str]:
    found = re.findall(r'<p class="admonition-title">(.*?)</p>', html, flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", "", t).split()) for t in found]  # spaces as a browser shows them


def test_chinese_titles(tmp_path):
    html = build(tmp_path, "zh_CN")
    assert titles(html) == ["练习 1（Pick one per row）", "练习 1（Pick one per row）的解答"]


def test_english_titles_are_left_alone(tmp_path):
    html = build(tmp_path, "en")
    assert titles(html) == ["Exercise 1 (Pick one per row)", "Solution to Exercise 1 (Pick one per row)"]


@pytest.mark.parametrize("language, chinese", [("zh_CN", True), ("zh-cn", True), ("en", False),
                                               (None, False)])
def test_language_detection(language, chinese):
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        import exercise_titles
    finally:
        sys.path.remove(str(ROOT / "book" / "_ext"))

    class App:
        class config:
            pass

    App.config.language = language
    assert exercise_titles._is_chinese(App) is chinese
