"""The reading-path conventions on the site (book/ext/gatherbook_sphinx/deepdives.py, anchors.py),
built from the two-notebook fixture tests/site/reading_fixture with -W: a deep-dive section is
framed and folded with its subsections still in the page contents, a predict answer's markdown is
parsed inside its <details>, and ``page.ipynb#myths`` resolves to the ``<a id="myths">`` there."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from docutils import nodes

from gatherbook_sphinx import anchors, deepdives

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "site" / "reading_fixture"


def section(title: str, *children: nodes.Node) -> nodes.section:
    s = nodes.section("", nodes.title(title, title), *children)
    return s


def test_deep_dive_is_told_by_its_heading_prefix():
    assert deepdives.is_deep_dive(section("Deep dive: the shape rule, exactly"), "Deep dive: ")
    assert deepdives.is_deep_dive(section("深入：形状规则的精确表述"), "深入：")
    assert not deepdives.is_deep_dive(section("The deep dive we skipped"), "Deep dive: ")
    assert not deepdives.is_deep_dive(section("Summary"), "深入：")


def test_fold_keeps_the_heading_and_folds_the_rest():
    para, sub = nodes.paragraph("", "text"), section("Inside")
    s = section("Deep dive: x", para, sub)
    fold = deepdives.fold(s, "Deep dive · optional", "Folded")
    assert "deep-dive" in s["classes"]
    assert [type(c) for c in s.children] == [nodes.title, deepdives.deep_dive_fold]
    assert fold.children == [para, sub]
    assert (fold["label"], fold["summary"]) == ("Deep dive · optional", "Folded")


def test_the_italic_note_stays_in_view_above_the_fold():
    note = nodes.paragraph("", "", nodes.emphasis("", "Optional, about 5 min. Skip to Summary."))
    para = nodes.paragraph("", "text")
    s = section("Deep dive: x", note, para)
    fold = deepdives.fold(s, "Deep dive · optional", "Folded")
    assert [type(c) for c in s.children] == [nodes.title, nodes.paragraph, deepdives.deep_dive_fold]
    assert s.children[1] is note and fold.children == [para]


def _chapter(note_text: str, *titles: str):
    """A page: a deep-dive opening with ``note_text``, then sections with ``titles``."""
    note = nodes.emphasis("", note_text)
    deep = section("Deep dive: x", nodes.paragraph("", "", note), section("Inside"))
    deep["ids"], deep[2]["ids"] = ["deep-dive-x"], ["inside"]
    later = [section(t) for t in titles]
    for i, s in enumerate(later):
        s["ids"] = [f"s{i}"]
    nodes.section("", nodes.title("Ch", "Ch"), deep, *later)
    deepdives.fold(deep, "label", "summary")
    return deep, note


@pytest.mark.parametrize("text, cue, titles, linked, words", [
    ("Optional, about 5 min. Skip to Summary if you trust the rule.", "Skip to",
     ["Inside", "Summary"], ["s1"], ["Summary"]),
    # two targets, a title across the note's line break, a case of its own; each target once
    ("Optional. Skip to Deep dive: memory at real\nsizes, or to the summary, if the summary...",
     "Skip to", ["Deep dive: memory at real sizes", "Summary"], ["s0", "s1"],
     ["Deep dive: memory at real\nsizes", "summary"]),
    ('Optional. Skip to "Summary" if a fixed choice is all you need.', "Skip to", ["Summary"], ["s0"],
     ["Summary"]),
    ("选读，约 2 分钟。如果上面的公式对你已经足够，可以直接跳到「小结」。", "跳到", ["小结"], ["s0"], ["小结"]),
    # a title before the cue, or a word that only contains one, is not linked
    ("Summary first. Skip to nothing if Summarys bore you.", "Skip to", ["Summary"], [], []),
])
def test_the_notes_skip_target_becomes_a_link_to_that_section(text, cue, titles, linked, words):
    deep, note = _chapter(text, *titles)
    assert deepdives.note_of(deep) is note
    assert deepdives.link_skip_targets(deep, note, cue) == linked
    refs = list(note.findall(nodes.reference))
    assert [r["refid"] for r in refs] == linked and [r.astext() for r in refs] == words
    assert note.astext() == text  # the sentence reads as before


def test_html_anchor_is_found_in_the_split_raw_nodes_myst_makes():
    doc = nodes.paragraph("", "", nodes.raw("", '<a id="myths">', format="html"),
                          nodes.raw("", "</a>", format="html"))
    assert [name for name, _ in anchors.html_anchors(doc)] == ["myths"]
    assert anchors.html_anchors(nodes.paragraph("", "", nodes.raw("", '<a href="x">', format="html"))) == []


@pytest.fixture(scope="module")
def built(reading_fixture_html) -> Path:
    """FIXTURE built with -W, once per session (conftest.py: the browser tests open it too)."""
    return reading_fixture_html


@pytest.mark.slow
def test_deep_dive_is_framed_and_folded_on_the_page(built):
    page = (built / "chapter.html").read_text(encoding="utf8")
    frame = re.search(r'<section class="deep-dive" id="([^"]+)">\s*<h2>Deep dive: the shape rule, exactly'
                      r'.*?</h2>\s*<p><em>(Optional, about 5 min\..*?)</em></p>\s*'
                      r'<details class="deep-dive-fold"><summary>(.*?)</summary>(.*?)</details>\s*</section>',
                      page, flags=re.S)
    assert frame, "no framed, folded deep-dive section"
    # the note stays in view, above the fold, and links the section it sends the reader to
    summary_id = re.search(r'<section id="([^"]+)">\s*<h2>Summary', page).group(1)
    assert re.search(rf'Skip to <a class="reference internal" href="#{summary_id}">Summary</a> if', frame.group(2))
    assert "Deep dive · optional" in frame.group(3) and "click" in frame.group(3)
    assert "The deep text sits here." in frame.group(4) and 'id="inside-the-deep-dive"' in frame.group(4)
    # the subsection inside the fold is still in the page contents
    assert 'href="#inside-the-deep-dive"' in page
    assert page.count('class="deep-dive"') == 1  # the summary is not folded


@pytest.mark.slow
def test_predict_answer_markdown_is_parsed_inside_details(built):
    page = (built / "chapter.html").read_text(encoding="utf8")
    answer = re.search(r'<details class="predict"><summary>Answer</summary>(.*?)</details>', page, flags=re.S)
    assert answer and "<strong>picked</strong>" in answer.group(1) and "<code" in answer.group(1)


@pytest.mark.slow
def test_link_to_an_anchor_in_another_notebook_lands_on_it(built):
    page = (built / "chapter.html").read_text(encoding="utf8")
    assert re.search(r'<a class="reference internal" href="myths.html#myths">.*?Myths about gather', page, re.S)
    assert '<a id="myths"></a>' in (built / "myths.html").read_text(encoding="utf8")


def test_glossary_term_ids_come_from_the_english_term():
    from gatherbook_sphinx.glossary import term_id

    assert term_id("`scatter_add`") == "term-scatter-add"
    assert term_id("log-probability") == "term-log-probability"
    assert term_id("index") == "term-index"
