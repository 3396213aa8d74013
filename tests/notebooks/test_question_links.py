"""Every link of the questions page (notebooks/<code>/09_questions.ipynb) to a chapter lands on
the section it names (issue 36, a new reader's trial: 34 of 39 links stopped at the chapter's top,
and 19 of the Chinese ones named a heading the Chinese chapter does not have).

A link to a chapter carries an anchor, ``06_pitfalls_performance.ipynb#err-dtype``; the chapter
holds ``<a id="err-dtype"></a>`` right above a heading (JupyterLab and GitHub follow it as it is;
the site: book/ext/gatherbook_sphinx/anchors.py); a link that quotes a heading, “...” in English,
「...」 in Chinese, quotes that heading as the chapter of its own edition writes it. Both editions
link the same sections in the same order.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[([^\]]*)\]\((0\d_\w+\.ipynb)(?:#([\w-]+))?\)")
QUOTED = {"en": re.compile(r"^Chapter (\d), “(.*)”$"), "zh": re.compile(r"^第 (\d) 章「(.*)」$")}


def markdown(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def links(edition: str) -> list[tuple[str, str, str | None]]:
    page = ROOT / "notebooks" / edition / "09_questions.ipynb"
    return [m.groups() for text in markdown(page) for m in LINK.finditer(text)]


def headings_after_anchors(path: Path) -> dict[str, str]:
    """{anchor: the heading under ``<a id="anchor"></a>``} of a notebook."""
    found = {}
    for text in markdown(path):
        for m in re.finditer(r'<a id="([\w-]+)"></a>\n\n(#+ .*)', text):
            found[m.group(1)] = m.group(2).lstrip("#").strip()
    return found


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_every_link_to_a_chapter_lands_on_the_section_it_names(edition):
    found = links(edition)
    assert len(found) >= 39
    problems = []
    for text, target, anchor in found:
        if anchor is None:
            problems.append(f"{text} -> {target}: no #anchor (the reader lands on the chapter's top)")
            continue
        heads = headings_after_anchors(ROOT / "notebooks" / edition / target)
        if anchor not in heads:
            problems.append(f"{text} -> {target}#{anchor}: no <a id=\"{anchor}\"></a> above a heading")
            continue
        quoted = QUOTED[edition].match(text)
        if quoted and target != "09_questions.ipynb":
            chapter, heading = quoted.groups()
            if not target.startswith(f"0{chapter}_") or heading != heads[anchor]:
                problems.append(f"{text} -> {target}#{anchor}: the heading there is {heads[anchor]!r}")
    assert not problems, "\n".join(problems)


def test_both_editions_link_the_same_sections():
    en, zh = ([(target, anchor) for _, target, anchor in links(e)] for e in ("en", "zh"))
    assert en == zh


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_the_list_at_the_top_links_every_question_once(edition):
    """The short list under the page's introduction links each question (each ### heading) once."""
    page = ROOT / "notebooks" / edition / "09_questions.ipynb"
    questions = [a for a, heading in headings_after_anchors(page).items() if heading]
    cells = markdown(page)
    heads = [line for text in cells for line in text.splitlines() if line.startswith("### ")]
    listed = [m.group(3) for m in LINK.finditer(cells[2]) if m.group(2) == "09_questions.ipynb"]
    anchored = [a for a in questions if a in listed]
    assert len(heads) >= 40 and len(listed) == len(heads) == len(set(listed)) == len(anchored)
