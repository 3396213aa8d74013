"""A reader who pastes an error message into the site's search box lands on chapter 6.

The site is built once per session (``conftest.py``), served from 127.0.0.1 and searched in a real browser
(Chromium), the way a reader searches: ``search.html?q=<the pasted message>`` in each edition.
Without Chromium or playwright the test is skipped (and fails when ``CI=true``), like the
browser tests of ``test_pages.py``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

import site_helpers as sh  # noqa: E402

CHAPTER = "06_pitfalls_performance"

# Messages as a reader copies them from a traceback, with the exception's name, and with the
# numbers of *their* tensors (which differ from the chapter's: the search ignores pure numbers).
PASTED = [
    "RuntimeError: Index tensor must have the same number of dimensions as input tensor",
    "RuntimeError: Size does not match at dimension 1 expected index [8, 512, 1] to be no larger "
    "than self [8, 511, 32000] apart from dimension 2",
    "RuntimeError: index 32000 is out of bounds for dimension 2 with size 32000",
    "RuntimeError: index -100 is out of bounds for dimension 1 with size 50257",
    "RuntimeError: gather(): Expected dtype int32/int64 for index",
    "RuntimeError: scatter(): Expected self.dtype to be equal to src.dtype",
    "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.",
    "RuntimeError: CUDA error: device-side assert triggered",
    "torch.take_along_dim(): dtype of indices should be Long but got Float",
    "RuntimeError: reduce argument must be either sum, prod, mean, amax or amin, got avg",
]
CASES = [(e, m) for m in PASTED for e in sh.EDITIONS]
# words a Chinese reader types for an API name the book writes in English
SYNONYMS = {"散射": "05_scatter", "散射 索引": "05_scatter"}
# What a Chinese reader types: words separated by spaces, and the same words run together (which
# the site's search segments itself).
CHINESE_SPACED = ["索引 越界", "设备端 断言"]
CHINESE_UNSPACED = ["索引越界", "设备端断言"]


@pytest.fixture(scope="module")
def search(base_url, contexts):
    """search(edition, query) -> the site paths of the pages the search box lists."""
    base = base_url
    page = contexts().new_page()

    def run(edition: str, query: str) -> list[str]:
        page.goto(f"{base}{edition}/search.html?q={quote(query)}")
        page.wait_for_function("() => (document.querySelector('#search-results p.search-summary')"
                               " || {}).textContent", timeout=30_000)
        hrefs = page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(a => a.href)")
        links = [urlsplit(h) for h in hrefs]
        return [sh.site_path(base, h._replace(query="", fragment="").geturl())
                + (f"#{h.fragment}" if h.fragment else "") for h in links]

    yield run
    page.close()


def _chapter(edition: str) -> str:
    return f"{edition}/notebooks/{edition}/{CHAPTER}.html"


def pages(found: list[str]) -> list[str]:
    return [f.split("#")[0] for f in found]


@pytest.mark.parametrize("edition, message", CASES)
def test_a_pasted_error_message_lists_its_section_first(search, edition, message):
    """The first hit is the chapter, at the section that explains the message (an #id)."""
    found = search(edition, message)
    assert found and found[0].startswith(_chapter(edition) + "#"), \
        f"{edition}: searching {message!r} found {found[:5]}"


@pytest.mark.parametrize("query, chapter", SYNONYMS.items())
def test_a_chinese_name_for_an_api_finds_its_chapter(search, query, chapter):
    found = pages(search("zh", query))
    assert f"zh/notebooks/zh/{chapter}.html" in found[:3], f"zh: searching {query!r} found {found[:5]}"


@pytest.mark.parametrize("query", CHINESE_SPACED)
def test_chinese_words_find_the_chapter(search, query):
    found = pages(search("zh", query))
    assert _chapter("zh") in found, f"zh: searching {query!r} found {found}"


# needs the site's own query segmentation (book/_static/gatherbook-search.js)
@pytest.mark.parametrize("query", CHINESE_UNSPACED)
def test_an_unspaced_chinese_query_finds_the_chapter(search, query):
    found = pages(search("zh", query))
    assert _chapter("zh") in found, f"zh: searching {query!r} found {found}"


# a message whose words the chapter's section quotes, with numbers of the reader's own tensors
QUOTED = ("RuntimeError: index 32000 is out of bounds for dimension 2 with size 32000", "out of bounds for dimension")
NOTHING = "zzqx wvvk"  # no page holds these


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_a_pasted_error_s_snippet_shows_the_match_and_no_stray_highlights(base_url, contexts, edition):
    """The first hit's snippet quotes the section's message (it showed the chapter's prerequisites),
    nothing of a character and none of the message's numbers is highlighted (every "1" and "5"
    of the page lit up), and a search that finds nothing says so in the book's words, not Sphinx's
    "select enough categories" (issue 38)."""
    message, words = QUOTED
    page = contexts().new_page()
    try:
        page.goto(f"{base_url}{edition}/search.html?q={quote(message)}")
        page.wait_for_function("() => (document.querySelector('#search-results p.search-summary')"
                               " || {}).textContent", timeout=30_000)
        page.wait_for_function("() => document.querySelector('#search-results ul.search li p.context')")
        snippet = page.inner_text("#search-results ul.search li p.context")
        terms = page.evaluate("() => (localStorage.getItem('sphinx_highlight_terms') || '').split(' ')")
        lit = page.eval_on_selector_all("#search-results span.highlighted", "els => els.map(e => e.textContent)")
        page.goto(f"{base_url}{edition}/search.html?q={quote(NOTHING)}")
        page.wait_for_function("() => (document.querySelector('#search-results p.search-summary')"
                               " || {}).textContent", timeout=30_000)
        nothing = page.inner_text("#search-results p.search-summary")
    finally:
        page.close()
    assert words in snippet, f"{edition}: the first hit's snippet does not quote the message: {snippet!r}"
    stray = [t for t in terms + lit if t and (len(t) < 2 or t.lstrip("-").replace(".", "").isdigit())]
    assert not stray, f"{edition}: highlighted: {stray} (of {terms})"
    assert "categor" not in nothing and "类别" not in nothing and nothing.strip(), \
        f"{edition}: no results says {nothing!r}"
