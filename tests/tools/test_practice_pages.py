"""The Practice pages that tools/notebooks.py writes from the declarations (tools/practice_pages.py):
the stored notebooks carry the declarations' code, a heading per puzzle in ladder order, and the
Chinese edition comments its code in Chinese."""
from __future__ import annotations

import importlib.util
import io
import json
import re
import sys
import tokenize
from pathlib import Path

import pytest

from gatherbook.exercises import get, pages
from gatherbook.exercises.words import table

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
_spec = importlib.util.spec_from_file_location("practice_pages", ROOT / "tools" / "practice_pages.py")
practice_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(practice_pages)

LEVEL = {name: level for _, _, level, names in pages() for name in names}
ALL = [get(name) for name in LEVEL]


def _short(name: str) -> str:
    return name.split(".", 1)[1]


def test_notebooks_carry_the_declarations():
    """The Practice notebooks' loop and solution cells are the package's (regenerate with
    `python tools/notebooks.py practice` after changing a declaration)."""
    sources = set()
    for path in sorted((ROOT / "notebooks").glob("*/08_practice_*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf8"))
        sources |= {"".join(c["source"]).rstrip("\n") for c in nb["cells"] if c["cell_type"] == "code"}
    for p in ALL:
        assert practice_pages.source(p.spec, f"{_short(p.name)}_spec").rstrip("\n") in sources, p.name
        assert practice_pages.source(p.reference, f"{_short(p.name)}_solution").rstrip("\n") in sources, p.name


def test_the_written_pages_are_the_stored_ones():
    """Every cell's source and metadata as the writer makes them today (outputs aside)."""
    for name, cells in practice_pages.notebooks().items():
        stored = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf8"))["cells"]
        ours = [c for c in stored if not c["metadata"].get("gatherbook", {}).get("caption")]
        assert len(ours) == len(cells), name
        for mine, theirs in zip(cells, ours):
            text = "".join(theirs["source"]) if isinstance(theirs["source"], list) else theirs["source"]
            if "lab" not in theirs["metadata"].get("gatherbook", {}):  # a Lab label stands in for the fences
                assert "".join(mine["source"]) == text, (name, text[:80])


def test_each_puzzle_is_a_heading_of_its_page_in_both_editions():
    """The page's contents ("On this page") list every puzzle: one ``## `name``` heading each, with
    no number of its own (the puzzle's one number is its box's, issue 35)."""
    for lang in ("en", "zh"):
        headings = []
        for path in sorted((ROOT / "notebooks" / lang).glob("08_practice_*.ipynb")):
            nb = json.loads(path.read_text(encoding="utf8"))
            headings += [m.group(1) for c in nb["cells"] if c["cell_type"] == "markdown"
                         for m in re.finditer(r"^## `(\w+)`$", "".join(c["source"]), re.M)]
        assert ["puzzles." + name for name in headings] == list(LEVEL), lang


def test_the_allowed_operations_are_stated_once_per_page():
    """The page's base set once, at the top; under a puzzle only its difference (``+ `gather```),
    and slicing named in words, not as ``x[...]`` (issue 35)."""
    for lang in ("en", "zh"):
        arith = f"{table(lang)['practice']['groups']['arith']} `+ - *"
        for number, stem, _, names in pages():
            cells = practice_pages.page_cells([n for n, *_ in pages()].index(number), lang)
            text = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
            assert sum(t.count(arith) for t in text) == 1, (lang, stem)
            assert arith in text[0] and not any("x[...]" in t for t in text), (lang, stem)


def test_every_puzzle_has_a_folded_hint_before_its_solution():
    """A nudge between the check and the solution: a dropdown on the site, a <details> in JupyterLab."""
    for lang in ("en", "zh"):
        for number, stem, _, names in pages():
            cells = practice_pages.page_cells([n for n, *_ in pages()].index(number), lang)
            for name in names:
                check = next(i for i, c in enumerate(cells) if "".join(c["source"]) == f'gb.check("{name}", {_short(name)})')
                hint, solution = cells[check + 1], cells[check + 2]
                nudge = table(lang)["exercises"][name]["nudge"]
                assert "".join(hint["source"]).startswith("<details") and nudge in "".join(hint["source"]), name
                assert ":class: dropdown" in hint["metadata"]["gatherbook"]["site"], name
                assert "".join(solution["source"]).startswith("````{solution-start}"), name


def test_the_pages_hold_every_puzzle_once_in_ladder_order():
    """Level 4 takes two pages (4a, 4b); no page is longer than level 1's eight puzzles."""
    ladder = pages()
    assert max(len(names) for *_, names in ladder) <= 8
    for number, stem, level, names in ladder:
        assert level == int(number[0])
        assert (ROOT / "notebooks" / "en" / f"{stem}.ipynb").is_file(), stem


def _comments(source: str) -> list[str]:
    return [t.string.lstrip("#").strip() for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type == tokenize.COMMENT]


def test_chinese_notebooks_comment_their_code_in_chinese():
    """The zh practice notebooks' code cells comment in Chinese (code notation such as
    ``(B, K) -> (B, K, D)`` stays as it is); every comment's words are used."""
    cjk = re.compile(r"[\u4e00-\u9fff]")
    english = []
    for path in sorted((ROOT / "notebooks" / "zh").glob("08_practice*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf8"))
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                english += [(path.name, c) for c in _comments("".join(cell["source"]))
                            if practice_pages.WORDS_IN_COMMENT.search(c) and not cjk.search(c)]
    assert not english
    used = {c for p in ALL for fn in (p.spec, p.reference) for c in _comments(practice_pages.source(fn))}
    used |= set(_comments(practice_pages.SETUP))
    comments = table("zh")["practice"]["comments"]
    assert set(comments) <= used, set(comments) - used


def test_a_translated_comment_past_88_columns_goes_above_its_line(monkeypatch):
    monkeypatch.setitem(table("zh")["practice"], "comments", {"short": "短", "long words": "很长的注释" * 8})
    source = "def f(x):\n    y = x + 1  # short\n    return y * 2  # long words\n"
    assert practice_pages.localized(source, "zh") == (
        "def f(x):\n    y = x + 1  # 短\n    # " + "很长的注释" * 8 + "\n    return y * 2\n")
    assert practice_pages.localized(source, "en") == source
    with pytest.raises(KeyError, match="no zh words"):
        practice_pages.localized("x = 1  # not translated yet\n", "zh")


def test_the_chinese_shapes_lines_hold_no_english_words():
    code_words = {"int64", "float", "bool", "int", "dtype", "in"}
    for p in ALL:
        # a method of an argument (``lengths.sum()``) is code too
        found = re.findall(r"(?<![.\w])[A-Za-z_]{2,}", practice_pages.shapes(p.signature, "zh"))
        assert set(found) - code_words - set(p.args) == set(), p.name


def test_reading_time_counts_prose_and_loops_not_hints_or_solutions():
    """The intro's "time to read" per level: prose at 200 English words (300 Chinese characters)
    a minute and each puzzle's loops and stub at half a minute; folded hints and solutions not."""
    md, code = practice_pages.md, practice_pages.code
    page = [md("word " * 400), code("def f_spec(x):\n    return x"), code("def f(x):\n    raise"),
            code('gb.check("puzzles.f", f)'),
            practice_pages.md("hint " * 4000, gatherbook={"site": "..."}),
            md("````{solution-start} pz-f\n````\n\n" + "why " * 4000),
            code("def f_solution(x):\n    return x", jupyter={"source_hidden": True}),
            md("````{solution-end}\n````")]
    assert practice_pages.reading_minutes(page, "en") == 3  # 400 / 200 + 2 cells / 2
    assert practice_pages.reading_minutes([md("读" * 600)], "zh") == 2
    for lang in ("en", "zh"):
        intro = "".join(practice_pages.intro_cells(lang)[0]["source"])
        for k, (number, *_) in enumerate(pages()):
            minutes = practice_pages.reading_minutes(practice_pages.page_cells(k, lang), lang)
            assert 3 <= minutes <= 30, (lang, number, minutes)
            item = table(lang)["practice"]["intro"]["time_item"]
            assert item.format(page=table(lang)["practice"]["page_numbers"][number], minutes=minutes) in intro


def test_the_board_says_it_counts_since_the_kernel_started():
    """The board lives in memory (gatherbook.exercises._BOARD): "solved in this session" left open
    whether a restart, or another notebook, keeps it (issue 35). Each page's board words say what
    the intro page says: since this notebook's kernel started, each notebook its own."""
    for lang, words in (("en", ("kernel started", "restarting the kernel clears it", "each notebook")),
                        ("zh", ("自内核启动以来", "重启内核就会清空", "每个 notebook"))):
        seen = 0
        for name, cells in practice_pages.notebooks().items():
            if not name.startswith(f"{lang}/08_practice_"):
                continue
            board = ["".join(c["source"]) for c in cells if "".join(c["source"]).startswith(("## Your board", "## 你的进度"))]
            assert len(board) == 1 and all(w in board[0] for w in words), (name, board)
            seen += 1
        assert seen == len(pages()), lang
