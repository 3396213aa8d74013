"""The questions page (09_questions) on a phone and a desktop: its page contents fit their sidebar,
and a heading that quotes an error message does not fill a phone's screen (issue 36, a new
reader's trial).

Its entries quote long messages; a literal's ``span.pre`` does not wrap, so the entries took the
message's width: to x = 453 in the 390 px phone's drawer, past the desktop sidebar's right edge
at 1366 px. Every entry is measured with the nested lists shown (the theme shows a section's
entries only while the reader is in it). On the phone, the tallest heading that quotes code was
238 of 844 px (bold monospace at .72 em of the heading); book/_static/gatherbook.css sets it
smaller there.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_helpers as sh  # noqa: E402
from survey import VIEWPORTS, open_page  # noqa: E402

PAGE = "{edition}/notebooks/{edition}/09_questions.html"
SHOW_ALL = ".bd-sidebar-secondary nav ul { display: block !important; visibility: visible !important; }"
ENTRIES_JS = """() => [...document.querySelectorAll('.bd-sidebar-secondary .toc-entry > a')]
  .filter((a) => a.getBoundingClientRect().width > 0).map((a) => {
    const sidebar = a.closest('.bd-sidebar-secondary').getBoundingClientRect();
    const right = Math.max(a.getBoundingClientRect().right,
                           ...[...a.querySelectorAll('*')].map((e) => e.getBoundingClientRect().right));
    return {text: a.textContent.trim().slice(0, 60), right: Math.round(right),
            edge: Math.round(Math.min(sidebar.right, document.documentElement.clientWidth))};
  })"""
HEADINGS_JS = """() => [...document.querySelectorAll('article.bd-article :is(h2, h3, h4)')]
  .filter((h) => h.querySelector('code')).map((h) => ({text: h.textContent.trim().slice(0, 60),
    height: Math.round(h.getBoundingClientRect().height)}))"""


SIZES = {"desktop": {"viewport": {"width": 1366, "height": 900}}, "phone": VIEWPORTS["phone"]}


@pytest.mark.parametrize("viewport", ("desktop", "phone"))
@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_no_page_contents_entry_is_wider_than_its_sidebar(site, base_url, contexts, edition, viewport):
    page, _ = open_page(contexts(**SIZES[viewport]), base_url + PAGE.format(edition=edition))
    try:
        page.add_style_tag(content=SHOW_ALL)
        if viewport == "phone":
            page.locator(".secondary-toggle").first.click()
            page.wait_for_timeout(800)
        entries = page.evaluate(ENTRIES_JS)
    finally:
        page.close()
    assert len(entries) >= 40, f"{edition} {viewport}: only {len(entries)} entries measured"
    wide = [e for e in entries if e["right"] > e["edge"] + 1]
    assert not wide, f"{edition} {viewport}: {len(wide)} entries past the sidebar's edge: {wide[:3]}"


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_a_heading_that_quotes_a_message_leaves_most_of_a_phone_screen(site, base_url, contexts, edition):
    phone = VIEWPORTS["phone"]
    page, _ = open_page(contexts(**phone), base_url + PAGE.format(edition=edition))
    try:
        headings = page.evaluate(HEADINGS_JS)
    finally:
        page.close()
    assert len(headings) >= 10
    screen = phone["viewport"]["height"]
    tall = [h for h in headings if h["height"] > screen * 0.22]
    assert not tall, f"{edition}: headings taller than 22% of a {screen} px screen: {tall}"
