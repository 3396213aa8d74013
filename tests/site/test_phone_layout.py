"""Code in a table, and the cheat sheet's commented code, read whole on a phone (issue 21); code in
tables never broken inside a name, code that wraps on a phone honest about it (issue 38).

Chapter 1's use-case table at 390 px, both editions (measured by the phone survey:
survey.USE_CASE_TABLE_JS): nothing sticks out of the column (its code broke inside identifiers
when the line had a third of the column: every table's code is now measured character by
character, at both widths, by test_tables_never_break_an_identifier). The table is stacked on a
phone (book/ext/gatherbook_sphinx/tables.py marks it; book/_static/gatherbook.css lays it out).

The cheat sheet at 390 px, both editions: every trailing comment of its code starts a line of its
own, near the left edge, and is not cut over lines (the aligned comments wrapped mid-sentence).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_helpers as sh  # noqa: E402
from survey import SCREENSHOTS, VIEWPORTS, open_page  # noqa: E402

CHAPTER = "notebooks/{edition}/01_gather_basics.html"


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_use_case_table_keeps_code_words_whole_on_a_phone(phone_survey, edition):
    path = f"{edition}/" + CHAPTER.format(edition=edition)
    assert path in phone_survey, f"{path} is not in the phone survey"
    facts = phone_survey[path]["table"]  # survey.USE_CASE_TABLE_JS
    assert facts, f"{path}: no table with a line of code"
    assert facts["words"] >= 10, facts
    # a word of code may go on to the next line between its tokens (after a dot or a bracket), not
    # inside a name: test_tables_never_break_an_identifier measures each place it breaks
    assert facts["overflow"] <= 1, f"{path}: the table sticks out {facts['overflow']} px"


# Every comment of the cheat sheet's code: where it starts against its block, and on how many lines.
COMMENTS_JS = r"""() => {
  const out = [];
  document.querySelectorAll('article.bd-article div.highlight pre').forEach((pre) => {
    const left = pre.getBoundingClientRect().left + parseFloat(getComputedStyle(pre).paddingLeft);
    const ch = parseFloat(getComputedStyle(pre).fontSize) * 0.61;
    pre.querySelectorAll('.c1').forEach((c) => {
      const rects = [...c.getClientRects()];
      out.push({text: c.textContent, indent: Math.round((rects[0].left - left) / ch),
                lines: new Set(rects.map((r) => Math.round(r.top))).size});
    });
  });
  return out;
}"""


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_cheat_sheet_comments_on_lines_of_their_own_on_a_phone(site, base_url, contexts, edition):
    path = f"{edition}/book/{edition}/cheatsheet.html"
    page, _ = open_page(contexts(**VIEWPORTS["phone"]), base_url + path)
    try:
        comments = page.evaluate(COMMENTS_JS)
        page.locator("article.bd-article div.highlight pre").nth(3).scroll_into_view_if_needed()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"cheatsheet-{edition}-390.png"))
    finally:
        page.close()
    assert len(comments) >= 10, f"{path}: only {len(comments)} comments found"
    bad = [c for c in comments if c["indent"] > 4 or c["lines"] > 1]
    assert not bad, f"{path}: {len(bad)} comments mid-line or cut over lines at 390 px:\n" \
        + "\n".join(f"{c['text']!r}: starts {c['indent']} characters in, on {c['lines']} lines" for c in bad)


WORD = re.compile(r"\w")
OPERATORS = {"**", "//", "==", "!=", "<=", ">=", "->", ":=", "+=", "-=", "*=", "/=", "<<", ">>"}


def inside_a_token(before: str, after: str) -> bool:
    """A break between ``before`` and ``after`` (no space between them) cuts a token: two ASCII word
    characters (an identifier, a number) or a two-character operator (``**``, ``->``)."""
    a, b = before[-1:], after[:1]
    return bool(a and b) and ((bool(WORD.match(a)) and bool(WORD.match(b)) and (a + b).isascii())
                              or a + b in OPERATORS)


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_code_wraps_with_a_hanging_indent_between_tokens_on_a_phone(phone_survey, edition):
    """Every wrapped line of code on a phone (survey.WRAP_JS, deep dives opened): its continuation
    starts deeper than the line's own indent (at column 0 it read as a dedented statement; a line
    that starts past the middle of the block, inside brackets, hangs from the middle), and
    the break falls at a space or between two tokens, never inside an identifier, a number or an
    operator (``manual_seed(7`` / ``))``, issue 38)."""
    pages = {p: facts["wrap"] for p, facts in phone_survey.items()
             if sh.edition_of(p) == edition and sh.is_chapter(p)}
    assert pages, f"no chapter page of the {edition} edition in the phone survey"
    breaks = [(p, b) for p, wrap in pages.items() for b in wrap["breaks"]]
    assert len(breaks) >= 10, f"only {len(breaks)} wrapped lines of code measured: nothing to hold"
    bad = []
    for p, b in breaks:
        if b["column"] <= min(b["indent"], b["columns"] // 2 - 1):
            bad.append(f"{p}: continuation at column {b['column']}, the line's indent is {b['indent']}: "
                       f"{b['line']!r}")
        if not b["spaced"] and inside_a_token(b["before"], b["after"]) \
                and b["word"] <= b["columns"] - b["column"]:  # a word wider than its room must break
            bad.append(f"{p}: broken inside a token: {b['before']!r} / {b['after']!r} in {b['line']!r}")
    assert not bad, f"{len(bad)} of {len(breaks)} wrapped lines mislead:\n" + "\n".join(bad[:30])


@pytest.mark.parametrize("viewport", ("desktop", "phone"))
def test_tables_never_break_an_identifier(crawl, phone_survey, viewport):
    """Inline code in every table of the sampled pages (survey.TABLE_CODE_JS), both editions: a
    literal goes on to the next line only at a space or between two tokens (after a dot, a
    bracket, a comma: book/ext/gatherbook_sphinx/codelines.py marks the places), never inside a
    name (``sque|eze(-1)``, ``GATHERBOOK_D|EVICE``, ``scatter_a|dd`` at 1280 px, issue 38); no
    table scrolls sideways."""
    facts = ({p: f["tables"] for p, f in crawl["pages"].items() if "tables" in f} if viewport == "desktop"
             else {p: f["tables"] for p, f in phone_survey.items()})
    assert sum(t["literals"] for t in facts.values()) >= 50, "too little code in tables to hold"
    bad = [f"{p}: {b['before']!r} / {b['after']!r} in {b['code']!r}" for p, t in facts.items()
           for b in t["breaks"] if not b["spaced"] and inside_a_token(b["before"], b["after"])]
    bad += [f"{p}: a table scrolls {px} px sideways" for p, t in facts.items() for px in t["scrolling"]]
    assert not bad, f"{viewport}: {len(bad)} identifiers broken or tables scrolling:\n" + "\n".join(bad[:30])
