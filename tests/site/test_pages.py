"""The site as readers use it: built once, served from localhost, read in a real browser (Chromium).

The session builds the site once with ``book/build.py`` (strict: ``-W --keep-going -n``; conftest.py),
serves it from 127.0.0.1, and visits every page of the sample once in one shared headless Chromium
(two tabs, each going from page to page: ``survey.crawl``, once per session), collecting everything
the tests below assert on. While a page is open the crawl also does what a reader does there: searches (the
search pages are visited with a query), opens and closes a solution and copies its code, clicks
the language switch there and back, picks a language on the landing page. Only the dark theme
needs a visit of its own.

Without a browser (no Chromium at ``$GATHERBOOK_CHROMIUM`` or on PATH, or no ``playwright``) the
browser tests are skipped, and fail instead when ``CI=true``; the checks that need no browser
(build, links, cross-language pages) always run. Screenshots go to ``_build/screenshots/``, with
``site-report.json`` (the pages visited, build and crawl seconds).
"""
from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

import site_helpers as sh  # tests/site/ is on sys.path (rootdir-relative import mode)
from survey import (CJK, INTERFACE, SCREENSHOTS, SEARCH_TERMS, action, assert_clean, chapter_pages, new_context,
                    open_page, screenshot)


def test_the_build_writes_nothing_outside_build(site):
    """`make book` keeps everything it makes under _build/ (the source tree stays clean)."""
    assert site["made_outside_build"] == [], site["made_outside_build"]


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def here(base_url: str, crawl, url: str) -> str:
    """A URL of the crawl's facts (made by whichever worker crawled) on this worker's server."""
    return base_url + sh.site_path(crawl["base"], url)


# ---------------------------------------------------------------------------------------------
# Build and static checks (no browser)
# ---------------------------------------------------------------------------------------------
def test_site_is_built_once_strictly_without_warnings(site):
    assert len(site["builds"]) == 1, f"the site was built {len(site['builds'])} times: {site['builds']}"
    warnings = [line for line in site["log"].splitlines() if "WARNING" in line or "ERROR" in line]
    assert not warnings, "the build printed warnings:\n" + "\n".join(warnings)
    for edition in sh.EDITIONS:
        assert (site["path"] / edition / "index.html").is_file()
        assert chapter_pages(site["pages"], edition), f"no chapter page in the {edition} edition"
    assert site["pages"][0] == "index.html"


def test_internal_links_resolve(site):
    problems = sh.link_problems(site["path"], site["pages"])
    assert not problems, f"{len(problems)} broken internal references:\n" + "\n".join(problems[:50])


def test_no_page_loads_anything_from_outside_the_site(site):
    found = sh.external_loads(site["path"], site["pages"])
    assert not found, "pages load files from outside the site:\n" + "\n".join(found)


def test_every_page_has_its_counterpart_in_the_other_edition(site):
    problems = []
    for page in site["pages"]:
        if sh.edition_of(page) is None:
            continue
        twin = sh.other_edition(page)
        if twin not in site["pages"]:
            problems.append(f"{page}: no {twin}")
            continue
        parsed = sh.parse_page(site["path"] / page)
        if parsed.refresh:  # the edition's index.html: a redirect, like its twin
            if not sh.parse_page(site["path"] / twin).refresh:
                problems.append(f"{page} redirects but {twin} does not")
            continue
        targets = [sh.resolve(page, href)[0] for href in parsed.switches]
        if targets != [twin]:
            problems.append(f"{page}: language switch goes to {targets}, expected [{twin!r}]")
    assert not problems, "\n".join(problems)


def test_chinese_pages_have_no_stray_spaces_from_line_breaks(site):
    """A line break inside a Chinese sentence shows as a space; the build must have joined them."""
    cjk, punct = "\u4e00-\u9fff\u3000-\u303f\uff00-\uffef", "\u3000-\u303f\uff00-\uffef"
    stray = re.compile(rf"[{cjk}][ \t]*\n[ \t]*[{cjk}]|[{punct}][ \t]*\n[ \t]*\S|\S[ \t]*\n[ \t]*[{punct}]")
    problems = []
    for page in site["pages"]:
        if sh.edition_of(page) != "zh":
            continue
        html = (site["path"] / page).read_text(encoding="utf8")
        for paragraph in re.findall(r"<(?:p|li|td|th)\b[^>]*>(.*?)</(?:p|li|td|th)>", html, flags=re.S):
            paragraph = re.split(r"<(?:ul|ol)\b", paragraph)[0]  # an item's own text, not its nested list's
            text = re.sub(r"<[^>]+>", "", re.sub(r"<(pre|script)\b.*?</\1>", "", paragraph, flags=re.S)).strip()
            problems += [f"{page}: {m.group()!r}" for m in stray.finditer(text)]
    assert not problems, "\n".join(problems[:20])


def test_chinese_pages_have_chinese_tooltips(site):
    """Tooltips and screen-reader labels that Sphinx and the themes leave in English are translated
    (book/locales, book/_templates); each English string here once showed on every Chinese page."""
    english = ["Link to this heading", "Link to this image", "Color mode", "System Settings",
               "Toggle primary sidebar", "Toggle secondary sidebar", "Main", "Page"]
    problems = []
    for page in site["pages"]:
        if sh.edition_of(page) != "zh":
            continue
        html = (site["path"] / page).read_text(encoding="utf8")
        labels = re.findall(r'(?:title|aria-label)="([^"]*)"', html)
        problems += [f"{page}: {label!r}" for label in labels if label in english]
    assert not problems, "\n".join(problems[:20])


def test_landing_page_links_both_editions(site):
    parsed = sh.parse_page(site["path"] / "index.html")
    targets = {sh.resolve("index.html", url)[0] for tag, _, url in parsed.refs if tag == "a"}
    assert {"en/index.html", "zh/index.html"} <= targets, targets


# ---------------------------------------------------------------------------------------------
# Every page in the browser
# ---------------------------------------------------------------------------------------------
def test_every_page_loads_cleanly(site, crawl):
    """Every page with GATHERBOOK_SITE_PAGES=all (CI), else the sample of each kind."""
    pages = crawl["pages"]
    assert sorted(pages) == sorted(sh.browser_pages(site["pages"])) and len(pages) >= 2 * 5 + 1
    assert set(sh.SAMPLE) <= set(site["pages"]), f"the sample names pages the site lacks: {sh.SAMPLE}"
    problems = [f"{page}: {p}" for page, facts in pages.items() for p in facts["problems"]]
    assert not problems, f"{len(problems)} problems on {len(pages)} pages:\n" + "\n".join(problems)


def test_no_request_leaves_the_site(crawl):
    assert not crawl["outside"], "requests outside the site:\n" + "\n".join(crawl["outside"])


def test_html_lang(crawl):
    wrong = {page: f["lang"] for page, f in crawl["pages"].items()
             if f["lang"] != sh.HTML_LANG.get(sh.edition_of(page), "en")}
    assert not wrong, f"<html lang> is wrong: {wrong}"


def test_language_switch_goes_to_the_same_page_and_back(site, crawl):
    pages, base_url = crawl["pages"], crawl["base"]
    problems = []
    for page, facts in pages.items():
        if sh.edition_of(page) is None or facts["redirect"]:
            continue
        hrefs = [sh.site_path(base_url, s["href"]) for s in facts["switches"]]
        twin = sh.other_edition(page)
        if hrefs != [twin]:
            problems.append(f"{page}: switch -> {hrefs}, expected {twin}")
            continue
        if twin in pages:
            back = [sh.site_path(base_url, s["href"]) for s in pages[twin]["switches"]]
        else:  # a twin outside the sample: its switch as built
            back = [sh.resolve(twin, href)[0] for href in sh.parse_page(site["path"] / twin).switches]
        if back != [page]:
            problems.append(f"{page} -> {twin}: its switch -> {back}, expected {page}")
        if facts["switch_in_line"] is False:
            problems.append(f"{page}: the switch is not on the line of the header buttons")
        other = "zh" if sh.edition_of(page) == "en" else "en"
        if facts["switches"][0]["hreflang"] != sh.HTML_LANG[other]:
            problems.append(f"{page}: switch hreflang {facts['switches'][0]['hreflang']!r}")
    assert not problems, "\n".join(problems)


def test_images_have_alt_text_and_load(crawl):
    problems = [f"{page}: {img['src']} " + ("has no alt text" if not img["alt"] else "did not load")
                for page, f in crawl["pages"].items() for img in f["images"]
                if not img["alt"] or not img["loaded"]]
    assert not problems, "\n".join(problems)
    for edition in sh.EDITIONS:
        assert sum(f["figures"] for p, f in crawl["pages"].items() if sh.edition_of(p) == edition), (
            f"no figure in the {edition} chapters: the alt-text check would check nothing")


def test_headings_are_in_order_with_one_h1(crawl):
    problems = []
    for page, f in crawl["pages"].items():
        if f["redirect"]:
            continue
        levels = [level for level, _ in f["headings"]]
        if levels.count(1) != 1 or not levels or levels[0] != 1:
            problems.append(f"{page}: headings {f['headings']}: want exactly one h1, first")
        for (a, ta), (b, tb) in zip(f["headings"], f["headings"][1:]):
            if b > a + 1:
                problems.append(f"{page}: h{a} {ta!r} is followed by h{b} {tb!r} (skips a level)")
    assert not problems, "\n".join(problems)


def test_math_is_typeset_by_mathjax(site, crawl):
    problems = []
    for page, f in crawl["pages"].items():
        if f["math_raw"]:
            problems.append(f"{page}: formulas left as TeX: {f['math_raw']}")
        if f["raw_tex"]:
            problems.append(f"{page}: TeX in the prose that no formula took: {f['raw_tex']}")
    assert not problems, "\n".join(problems)
    for edition in sh.EDITIONS:
        chapters = chapter_pages(list(crawl["pages"]), edition)
        assert any(crawl["pages"][c]["mjx"] for c in chapters), f"no MathJax output on any {edition} chapter"


def test_interface_strings_are_in_the_page_language(crawl):
    problems = []
    for page, f in crawl["pages"].items():
        edition = sh.edition_of(page)
        if edition is None or f["redirect"]:
            continue
        want = INTERFACE[edition]
        if not f["search_placeholders"] or set(f["search_placeholders"]) != {want["search"]}:
            problems.append(f"{page}: search box placeholder {f['search_placeholders']}")
        if set(f["toggle_hints"]) - {want["show"]}:
            problems.append(f"{page}: toggle hints {f['toggle_hints']}")
        problems += [f"{page}: exercise label {t!r}" for t in f["exercises"]
                     if not (t.startswith(want["exercise"]) or re.match(want["puzzle"], t))]
        problems += [f"{page}: solution label {t!r}" for t in f["solutions"] if want["solution"] not in t]
        if edition == "zh":
            problems += [f"{page}: fold label {s!r} is not Chinese" for s in f["details_summaries"]
                         if not CJK.search(s)]
    assert not problems, "\n".join(problems)
    for edition in sh.EDITIONS:
        chapters = [f for p, f in crawl["pages"].items() if sh.is_chapter(p) and sh.edition_of(p) == edition]
        assert any(f["solutions"] and f["toggle_hints"] for f in chapters), (
            f"no solution dropdown in the {edition} chapters")


def test_code_cells_have_copy_buttons(crawl):
    problems = [f"{page}: {f['code_cells_without_copy']} of {f['code_cells']} code cells have no copy button"
                for page, f in crawl["pages"].items() if f["code_cells_without_copy"]]
    assert not problems, "\n".join(problems)
    assert all(crawl["pages"][p]["code_cells"] for p in crawl["pages"] if sh.is_chapter(p))


def test_every_chapter_offers_its_notebook(base_url, crawl):
    for page, f in crawl["pages"].items():
        if not sh.is_chapter(page):
            continue
        assert len(f["ipynb_buttons"]) == 1, f"{page}: .ipynb download buttons {f['ipynb_buttons']}"
        status, body = fetch(here(base_url, crawl, f["ipynb_buttons"][0]))
        assert status == 200, f"{page}: {f['ipynb_buttons'][0]} -> HTTP {status}"
        nb = nbformat.reads(body.decode("utf8"), as_version=4)
        nbformat.validate(nb)
        source = nbformat.read(Path(__file__).resolve().parents[2] / page.split("/", 1)[1]
                               .replace(".html", ".ipynb"), as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        assert code == [c.source for c in source.cells if c.cell_type == "code"], (
            f"{page}: the downloaded notebook is not the chapter")
        # without outputs, as in the zip: the page shows them, the reader's run makes them
        assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), page


def test_exercise_downloads_are_notebooks_without_solutions(base_url, crawl):
    checked = 0
    for page, f in crawl["pages"].items():
        if not f["exercises"]:
            continue
        links = [d for d in f["downloads"] if d["href"].endswith("_exercises.ipynb")]
        assert links, f"{page} has exercises but no link to download them without solutions"
        for link in links:
            status, body = fetch(here(base_url, crawl, link["href"]))
            assert status == 200, f"{page}: {link['href']} -> HTTP {status}"
            nb = nbformat.reads(body.decode("utf8"), as_version=4)
            nbformat.validate(nb)
            code = [c.source.strip() for c in nb.cells if c.cell_type == "code"]
            assert code, f"{page}: {link['href']} has no code cells"
            assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
                f"{page}: {link['href']} keeps outputs")
            # solution cells, except those that also stand outside the solutions (a check call)
            only_solution = set(f["solution_code"]) - set(f["other_code"])
            leaked = [s for s in only_solution if any(s in c for c in code)]
            assert not leaked, f"{page}: {link['href']} holds solution code:\n" + "\n---\n".join(leaked)
            checked += 1
    assert checked >= len(sh.EDITIONS), "no exercise download was checked"


# ---------------------------------------------------------------------------------------------
# Clicking
# ---------------------------------------------------------------------------------------------
def test_landing_page_leads_to_both_editions(crawl):
    reached = action(crawl, "index.html", "landing")
    assert reached == [["en/book/en/intro.html", "en"], ["zh/book/zh/intro.html", "zh-CN"]], reached


def test_clicking_the_language_switch_on_a_chapter_and_back(site, crawl):
    for chapter in chapter_pages(list(crawl["pages"]), "en"):
        twin = sh.other_edition(chapter)
        reached = [click["reached"] for click in action(crawl, chapter, "switch")]
        trips = 2 if sh.every_page() else 1
        assert reached == [[twin, "zh-CN"], [chapter, "en"]] * trips, f"{chapter}: {reached}"


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_search_finds_the_chapter(site, crawl, edition):
    facts, base_url = crawl["pages"][f"{edition}/search.html"], crawl["base"]
    found = {sh.site_path(base_url, u).split("#")[0].split("?")[0] for u in facts["search_results"]}
    chapter = chapter_pages(list(crawl["pages"]), edition)[0]
    term = SEARCH_TERMS[edition]
    assert chapter in found, (f"searching {term!r} on {edition}/search.html found {sorted(found)} "
                              f"({facts['search_summary']!r}), not {chapter}")
    assert all(sh.edition_of(u) == edition for u in found), f"results from another edition: {found}"
    if edition == "zh":
        assert CJK.search(facts["search_summary"]), f"search summary not in Chinese: {facts['search_summary']!r}"


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_solution_dropdown_opens_and_shows_code_and_output(site, crawl, edition):
    chapters = [c for c in chapter_pages(list(crawl["pages"]), edition) if crawl["pages"][c]["solutions"]]
    assert chapters, f"no chapter of the {edition} edition has a solution"
    for chapter in chapters:
        result = action(crawl, chapter, "solution")
        assert not result["problems"], f"{chapter}: " + "; ".join(result["problems"])


def test_dark_theme_keeps_figures_on_white(site, base_url, browser):
    chapter = chapter_pages(site["pages"], "en")[0]
    context = new_context(browser, base_url, color_scheme="dark")
    context.add_init_script("try { localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark'); } catch (e) {}")
    try:
        page, watch = open_page(context, base_url + chapter)
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        looks = page.eval_on_selector_all(".cell_output img", """imgs => imgs.map(i => {
            const s = getComputedStyle(i); return s.backgroundColor + ' / filter ' + s.filter; })""")
        assert looks, f"no figure on {chapter}"
        assert set(looks) == {"rgb(255, 255, 255) / filter none"}, f"figures in the dark theme: {looks}"
        page.evaluate("document.querySelector('.cell_output img').closest('.cell').scrollIntoView({block: 'center'})")
        screenshot(page, "en-chapter-dark.png")
        assert_clean(watch, f"{chapter} in the dark theme")
    finally:
        context.close()


def test_the_browser_lays_chinese_out_at_the_font_s_own_widths(contexts):
    # a reader's Chromium places each Chinese character at its font's width (about 1 em in a CJK
    # font's full-width characters: 143.9 px for these ten); the headless shell, by default, at a
    # whole pixel (140 px), which breaks Chinese lines elsewhere (site_helpers.CHROMIUM_ARGS:
    # --font-render-hinting=none)
    page = contexts().new_page()
    try:
        page.set_content('<p lang="zh-CN" style="font: 14.4px sans-serif"><span>保留图像中得分最高的</span></p>')
        width = page.evaluate("document.querySelector('span').getBoundingClientRect().width")
    finally:
        page.close()
    assert abs(width - 10 * 14.4) < 0.5, f"10 Chinese characters at 14.4 px are {width} px wide, not about 144"


def test_screenshots_are_written(crawl):
    names = ["landing.png", "en-intro.png", "zh-intro.png", "en-chapter.png", "zh-chapter.png",
             "en-chapter-dark.png"]
    missing = [n for n in names if not (SCREENSHOTS / n).is_file() or (SCREENSHOTS / n).stat().st_size < 5000]
    assert not missing, f"screenshots missing in {SCREENSHOTS}: {missing}"
