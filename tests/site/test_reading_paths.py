"""The reading-path conventions in a browser, on the two-notebook fixture (tests/site/reading_fixture):
a deep-dive is folded under a summary line that says so and opens on a click, on an address whose
#id lies inside it, and on a search hit inside it; deep-dives and predict answers print open; the
link to ``myths.ipynb#myths`` lands on the myths section. Screenshots: _build/screenshots/reading-*."""
from __future__ import annotations

from pathlib import Path

import pytest

import site_helpers as sh

pytestmark = pytest.mark.slow
SHOTS = sh.ROOT / "_build" / "screenshots"


@pytest.fixture(scope="module")
def fixture_url(reading_fixture_html):
    with sh.serve(reading_fixture_html) as url:
        yield url


@pytest.fixture(scope="module")
def phone(browser):
    """A phone-sized context for this module's tests, a blank tab kept open in it (so that each
    test's tab reuses its renderer: survey.Contexts)."""
    context = browser.new_context(viewport={"width": 390, "height": 800})
    context.new_page()
    yield context
    context.close()


@pytest.fixture()
def page(phone):
    page = phone.new_page()
    yield page
    page.close()


DEEP_TEXT = "text=The deep text sits here."


def test_deep_dive_folded_with_a_summary_that_opens_it(page, fixture_url):
    page.goto(fixture_url + "chapter.html")
    summary = page.locator("section.deep-dive details.deep-dive-fold > summary")
    assert summary.is_visible()
    assert "Deep dive · optional" in summary.inner_text() and "click" in summary.inner_text()
    assert not page.locator(DEEP_TEXT).is_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    summary.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "reading-deep-dive-folded-390.png"))
    summary.click()
    assert page.locator(DEEP_TEXT).is_visible()
    assert page.locator("section#summary").is_visible()  # the main line goes on after it


def test_deep_dive_opens_when_the_address_points_inside(page, fixture_url):
    page.goto(fixture_url + "chapter.html#inside-the-deep-dive")
    page.wait_for_function("document.querySelector('details.deep-dive-fold').open")
    heading = page.locator("#inside-the-deep-dive h3")
    assert heading.is_visible()
    assert 0 <= heading.bounding_box()["y"] < 800  # scrolled to it
    page.goto("about:blank")
    page.goto(fixture_url + "chapter.html#summary")  # elsewhere: folded
    assert not page.locator(DEEP_TEXT).is_visible()
    page.evaluate("location.hash = '#deep-dive-the-shape-rule-exactly'")  # the section itself
    page.wait_for_function("document.querySelector('details.deep-dive-fold').open")


def test_deep_dive_opens_on_a_search_hit_inside(page, fixture_url):
    page.goto(fixture_url + "chapter.html")
    page.evaluate("localStorage.setItem('sphinx_highlight_terms', 'deepword')")
    page.goto(fixture_url + "chapter.html")
    page.wait_for_function("document.querySelector('details.deep-dive-fold').open")
    assert page.locator("span.highlighted").first.is_visible()


def test_folds_print_open(page, fixture_url):
    page.goto(fixture_url + "chapter.html")
    page.emulate_media(media="print")
    assert page.locator(DEEP_TEXT).is_visible()
    assert page.locator("details.predict >> text=one per index").is_visible()
    assert not page.locator("details.deep-dive-fold .deep-dive-summary").is_visible()
    pdf = page.pdf()  # what the browser prints
    assert len(pdf) > 1000


def test_predict_answer_folded_then_shown(page, fixture_url):
    page.goto(fixture_url + "chapter.html")
    answer = page.locator("details.predict >> text=one per index")
    assert not answer.is_visible()
    page.locator("details.predict > summary").click()
    assert answer.is_visible()


def test_link_to_myths_lands_on_the_section(page, fixture_url):
    page.goto(fixture_url + "chapter.html")
    page.locator("a:has-text('Myths about gather')").click()
    page.wait_for_url("**/myths.html#myths")
    box = page.locator("h2:has-text('Myths about gather')").bounding_box()
    assert box and 0 <= box["y"] < 300
