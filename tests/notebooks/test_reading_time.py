"""Every chapter states its reading time by one measure (``gatherbook_sphinx.reading_time``):
prose at the edition's rate (200 English words, 300 Chinese characters a minute), half a minute a
code cell, folded solutions, hidden code, caption repeats and outputs not counted; the core
without the deep dives, and with them. The numbers in each opening are that measure, give or
take ``SLACK`` minutes (a sentence added later need not move them)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gatherbook.editions import CODES
from gatherbook_sphinx import reading_time as R

ROOT = Path(__file__).resolve().parents[2]
# What a page's opening states, per edition: (core, with the deep dives), or the whole page (here,
# not in the extension: the build names no edition, tests/unit/test_edition_codes.py).
STATED = {
    "en": re.compile(r"\*\*Time:\*\* the core about (\d+) min; with the deep-dives about (\d+) min\."),
    "zh": re.compile(r"\*\*阅读时间\*\*：核心内容约 (\d+) 分钟；连同深入部分约 (\d+) 分钟。"),
}
STATED_PAGE = {
    "en": re.compile(r"the page, read through, about (\d+) min"),
    "zh": re.compile(r"通读全页约 (\d+) 分钟"),
}
SLACK = 2
CHAPTERS = sorted(p.name for p in (ROOT / "notebooks" / CODES[0]).glob("0[1-7]_*.ipynb"))
PAGES = sorted(p.name for p in (ROOT / "notebooks" / CODES[0]).glob("09_*.ipynb"))


def cells(lang: str, name: str) -> list[dict]:
    with open(ROOT / "notebooks" / lang / name, encoding="utf8") as f:
        return json.load(f)["cells"]


def opening(nb: list[dict]) -> str:
    return "".join(nb[0]["source"])


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_states_its_measured_reading_time(lang, name):
    nb = cells(lang, name)
    stated = STATED[lang].search(opening(nb))
    assert stated, f"{lang}/{name}: no reading time in the opening cell ({STATED[lang].pattern})"
    core, full = R.chapter_minutes(nb, lang)
    said = tuple(int(n) for n in stated.groups())
    assert abs(said[0] - core) <= SLACK and abs(said[1] - full) <= SLACK, (
        f"{lang}/{name} states {said[0]}/{said[1]} min (core/with deep dives); "
        f"the measure gives {core}/{full}")


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("name", PAGES)
def test_page_states_its_measured_reading_time(lang, name):
    nb = cells(lang, name)
    stated = STATED_PAGE[lang].search(opening(nb))
    if stated is None:
        pytest.skip(f"{lang}/{name} states no reading time")
    minutes = R.reading_minutes(nb, lang)
    assert abs(int(stated.group(1)) - minutes) <= SLACK, (lang, name, stated.group(1), minutes)


def test_the_measure_leaves_out_solutions_captions_and_hidden_code_and_splits_deep_dives():
    md = lambda s, **m: {"cell_type": "markdown", "source": s, "metadata": m}  # noqa: E731
    code = lambda s, **m: {"cell_type": "code", "source": s, "metadata": m, "outputs": []}  # noqa: E731
    nb = [md("# T\n\n" + "word " * 399), code("x = 1"), code("x = 2"),
          md("*cap " * 1000, gatherbook={"caption": True}),
          md("Solution " + "why " * 4000, gatherbook={"lab": {"header": "````{solution-start} a\n````"}}),
          code("def s(): pass", jupyter={"source_hidden": True}), code("visible_but_folded = 1"),
          md("<!-- solution-end -->", gatherbook={"lab": {"header": "````{solution-end}\n````"}}),
          md("## Deep dive: more\n\n```\n# not a heading\n```\n" + "deep " * 391), code("y = 2"), code("y = 3"),
          md("### inside the dive\n\n" + "deep " * 200),
          md("## Summary\n\n" + "word " * 199)]
    assert R.chapter_minutes(nb, "en") == (4, 8)  # 600 words / 200 + 2 cells / 2, and as much again
    assert R.reading_minutes(nb, "en") == 8
    assert R.prose_units("读读 read it") == 4


# book/<code>/intro.md: a chapter's core on average, the seven cores, the seven chapters whole
INTRO = {
    "en": (r"A chapter in about (\d+) minutes", r"The seven cores take about ([\d½¼¾]+) hours",
           r"about ([\d½¼¾]+) hours for the\s+seven chapters"),
    "zh": (r"约 (\d+) 分钟读完一章", r"七章的核心内容合计约 ([\d.]+) 小时", r"七章合计约 ([\d.]+) 小时"),
}


def hours(text: str) -> float:
    return float(text[:-1] or 0) + {"½": .5, "¼": .25, "¾": .75}[text[-1]] if text[-1] in "½¼¾" \
        else float(text)


@pytest.mark.parametrize("lang", CODES)
def test_the_introduction_sums_the_chapters_times(lang):
    """The introduction's "a chapter in about N minutes" is the cores' mean (within 5 min), and its
    totals the sums of the chapters' measured times (within a quarter of an hour)."""
    import re

    text = (ROOT / "book" / lang / "intro.md").read_text(encoding="utf8")
    times = [R.chapter_minutes(cells(lang, name), lang) for name in CHAPTERS]
    each, cores, whole = (re.search(p, text) for p in INTRO[lang])
    assert each and cores and whole, f"book/{lang}/intro.md: the reading times moved ({INTRO[lang]})"
    core_sum, full_sum = sum(c for c, _ in times), sum(f for _, f in times)
    assert abs(int(each.group(1)) - core_sum / len(times)) <= 5, (each.group(0), core_sum / len(times))
    assert abs(hours(cores.group(1)) * 60 - core_sum) <= 15, (cores.group(0), core_sum)
    assert abs(hours(whole.group(1)) * 60 - full_sum) <= 15, (whole.group(0), full_sum)


@pytest.mark.parametrize("lang", CODES)
def test_chapter_one_says_its_first_section_takes_five_minutes(lang):
    """Chapter 1's opening says the first section alone, the rule, takes five minutes."""
    nb = cells(lang, CHAPTERS[0])
    assert ("takes five" if lang == "en" else "五分钟就够") in opening(nb)
    sections = [i for i, c in enumerate(nb) if c["cell_type"] == "markdown"
                and any(line.startswith("## ") for line in "".join(c["source"]).splitlines())]
    assert sections[0] > 0, "chapter 1's first section starts after its opening cell"
    assert R.reading_minutes(nb[sections[0]:sections[1]], lang) == 5
