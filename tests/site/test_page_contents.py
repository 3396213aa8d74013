"""The page contents on the right ("On this page") highlight the section the reader is in (issue 21).

The theme's highlighting (pydata-sphinx-theme's IntersectionObserver) picked the lowest heading in
the top 30% of the window: beside folded deep-dives (a heading and one line each) that was a
section below the reader's; scrolling up, or arriving in the middle of a section, it kept the old
entry. ``book/_static/gatherbook.js`` now follows the scroll position.

The check scrolls a long chapter of each edition (of the chapters in the browser tests' sample,
the one with the most entries in its page contents, read from the built pages) at 1366 px: down
to every heading in turn, as a click in the page contents puts it (just under the sticky header),
then back up to the middle of every section taller than the window. After each scroll the
highlighted entry must be that section's. Headings inside a closed fold are not on screen and are
not visited.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_helpers as sh  # noqa: E402
from survey import chapter_pages, open_page  # noqa: E402

DESKTOP = {"width": 1366, "height": 800}
TOC_ENTRY = re.compile(r'<li class="[^"]*toc-entry[^"]*"><a class="reference internal nav-link" href="#')

# The page-contents links whose heading is drawn, with the heading's top on the page (px).
ENTRIES_JS = r"""() => {
  const out = [];
  document.querySelectorAll('#pst-page-toc-nav a').forEach((a) => {
    const href = a.getAttribute('href') || '';
    const target = href.length > 1 ? document.getElementById(decodeURIComponent(href.slice(1))) : null;
    if (!target) return;
    const heading = target.querySelector('h1, h2, h3, h4, h5, h6') || target;
    // inside a closed fold (whose content Chromium lays out hidden, client rects and all)
    if (!heading.checkVisibility()) return;
    out.push({href, text: a.textContent.trim(), top: heading.getBoundingClientRect().top + scrollY});
  });
  // where a click in the page contents puts a heading: the theme's scroll-padding-top
  const padding = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0;
  return {entries: out, padding, scrollMax: document.documentElement.scrollHeight - innerHeight};
}"""

# Scroll instantly to y, let the page react (scroll events, observers: two frames and a moment),
# then read the highlighted entry.
SCROLL_JS = r"""async (y) => {
  window.scrollTo({top: y, behavior: 'instant'});
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  await new Promise((r) => setTimeout(r, 120));
  const active = [...document.querySelectorAll('#pst-page-toc-nav a.active')];
  return active.length ? active[active.length - 1].getAttribute('href') : null;
}"""

# Follow a page-contents link as a click does (the entry may sit in a folded part of the list).
CLICK_JS = r"""async (href) => {
  [...document.querySelectorAll('#pst-page-toc-nav a')].find((a) => a.getAttribute('href') === href).click();
  await new Promise((r) => setTimeout(r, 300));
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const active = [...document.querySelectorAll('#pst-page-toc-nav a.active')];
  return active.length ? active[active.length - 1].getAttribute('href') : null;
}"""


def longest_chapter(site_path: Path, pages: list[str], edition: str) -> str:
    def entries(page):
        return len(TOC_ENTRY.findall((site_path / page.lstrip("/")).read_text(encoding="utf8")))
    return max(chapter_pages(pages, edition), key=entries)


def misplaced_highlights(page) -> tuple[int, list[str]]:
    """Scroll ``page`` (loaded) to each section; (positions checked, the wrong highlights)."""
    facts = page.evaluate(ENTRIES_JS)
    entries, scroll_max = facts["entries"], facts["scrollMax"]
    # a click in the page contents leaves the heading this far below the window's top
    # (the theme's scroll-padding-top: the sticky article header and 1rem)
    offset = facts["padding"]
    assert offset > 0, "no scroll-padding-top: where does a click put a heading?"
    visits = []
    for entry in entries:  # down: every heading just under the header, as a click puts it
        y = entry["top"] - offset
        if 0 < y <= scroll_max:
            visits.append((y, entry, "heading at the top"))
    window = page.viewport_size["height"]
    for entry, after in reversed(list(zip(entries, entries[1:]))):  # up: the middle of long sections
        if after["top"] - entry["top"] > window:
            y = (entry["top"] + after["top"]) / 2 - offset
            if 0 < y <= scroll_max:
                visits.append((y, entry, "middle of the section, scrolling up"))
    wrong = []
    for y, entry, how in visits:
        got = page.evaluate(SCROLL_JS, y)
        if got != entry["href"]:
            shown = next((e["text"] for e in entries if e["href"] == got), got)
            wrong.append(f"{entry['text']!r} ({how}, y={y:.0f}): highlighted {shown!r}")
    for entry in entries[1::3]:  # a click in the page contents (last: a click on a deep-dive opens its fold)
        got = page.evaluate(CLICK_JS, entry["href"])
        if got != entry["href"]:
            shown = next((e["text"] for e in entries if e["href"] == got), got)
            wrong.append(f"{entry['text']!r} (clicked in the page contents): highlighted {shown!r}")
    return len(visits) + len(entries[1::3]), wrong


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_page_contents_highlight_the_section_in_view(site, base_url, contexts, edition):
    path = longest_chapter(site["path"], sh.browser_pages(site["pages"]), edition)
    page, _ = open_page(contexts(), base_url + path.lstrip("/"), viewport=DESKTOP)
    try:
        checked, wrong = misplaced_highlights(page)
    finally:
        page.close()
    assert checked >= 10, f"{path}: only {checked} positions to check"
    assert not wrong, f"{path}: {len(wrong)} of {checked} positions highlight another section:\n" \
        + "\n".join(wrong)
