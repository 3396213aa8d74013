"""The cheat sheet (book/<code>/cheatsheet.md): every line of code on it runs and is checked.

Its code lives in book/cheatsheet/<code>.py, in regions (``# [name]`` ... ``# [/name]``) that
the page includes with ``literalinclude``; the lines around each region check its claims.
"""
from __future__ import annotations

import io
import re
import runpy
import tokenize
from pathlib import Path

import pytest

from gatherbook.editions import CODES

ROOT = Path(__file__).resolve().parents[2]
REGION = re.compile(r"^# \[(?P<name>[\w-]+)\]$", re.M)
INCLUDE = re.compile(r"```\{literalinclude\} \.\./cheatsheet/(?P<file>\w+)\.py\n(?P<options>(?::.*\n)*)```")


def source(code: str) -> str:
    return (ROOT / "book" / "cheatsheet" / f"{code}.py").read_text(encoding="utf8")


def page(code: str) -> str:
    return (ROOT / "book" / code / "cheatsheet.md").read_text(encoding="utf8")


def regions(text: str) -> dict[str, str]:
    found = {}
    for m in REGION.finditer(text):
        end = text.index(f"# [/{m['name']}]", m.end())
        found[m["name"]] = text[m.end():end].strip("\n")
    return found


def code_only(text: str) -> list[tuple[int, str]]:
    """The tokens of a Python source without comments and docstring layout (what must match)."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in skip]
    if tokens and tokens[0].type == tokenize.STRING:  # the module docstring (in its language)
        tokens = tokens[1:]
    return [(t.type, t.string) for t in tokens]


@pytest.mark.parametrize("code", CODES)
def test_the_cheat_sheet_code_runs_and_its_checks_pass(code):
    runpy.run_path(str(ROOT / "book" / "cheatsheet" / f"{code}.py"), run_name="cheatsheet")


def test_both_languages_have_the_same_code():
    first = code_only(source(CODES[0]))
    for code in CODES[1:]:
        assert code_only(source(code)) == first, f"book/cheatsheet/{code}.py differs in code, not only comments"


@pytest.mark.parametrize("code", CODES)
def test_the_page_shows_every_region_once_and_no_other_code(code):
    text = page(code)
    shown = []
    for m in INCLUDE.finditer(text):
        assert m["file"] == code, f"book/{code}/cheatsheet.md includes another language's code"
        options = dict(re.findall(r'^:([\w-]+): ?"?(.*?)"?$', m["options"], re.M))
        name = re.fullmatch(r"# \[([\w-]+)\]", options["start-after"])[1]
        assert options["end-before"] == f"# [/{name}]"
        shown.append(name)
    assert sorted(shown) == sorted(regions(source(code))), "regions not shown, or shown twice"
    assert len(shown) == len(set(shown))
    rest = INCLUDE.sub("", text)
    assert "```" not in rest and "~~~" not in rest, "code on the page that no test runs"


@pytest.mark.parametrize("code", CODES)
def test_the_cheat_sheet_is_in_the_toc(code):
    from gatherbook.editions import edition

    assert f"file: book/{code}/cheatsheet" in (ROOT / edition(code).toc).read_text(encoding="utf8")
