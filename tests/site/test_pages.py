"""The site as readers use it: built once, served from localhost, read in a real browser (Chromium).

The module builds the site once per test session with ``book/build.py`` (strict: ``-W --keep-going
-n``), serves it from 127.0.0.1, and visits every page once in one shared headless Chromium
(several tabs at a time), collecting everything the tests below assert on. While a page is open
the crawl also does what a reader does there: searches (the search pages are visited with a
query), opens and closes a solution and copies its code, clicks the language switch there and
back, picks a language on the landing page. Only the dark theme needs a visit of its own.

Without a browser (no Chromium at ``$GATHERBOOK_CHROMIUM`` or on PATH, or no ``playwright``) the
browser tests are skipped, and fail instead when ``CI=true``; the checks that need no browser
(build, links, cross-language pages) always run. Screenshots go to ``_build/screenshots/``, with
``site-report.json`` (the pages visited, build and crawl seconds).
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import nbformat
import pytest

import site_helpers as sh  # tests/site/ is on sys.path (rootdir-relative import mode)

SCREENSHOTS = sh.ROOT / "_build" / "screenshots"
REPORT = SCREENSHOTS / "site-report.json"
VIEWPORT = {"width": 1280, "height": 900}
TABS = 8  # pages loading at once during the crawl
SETTLE_TIMEOUT = 15.0  # seconds a page may keep loading

# Console errors that are not the site's fault, by exact text, each with the reason.
# (None now: "Got invalid theme mode" is gone since the layout's default_mode is "auto".)
ALLOWED_CONSOLE_ERRORS: set[str] = set()

# A term of each edition that the chapter must be found by (the Chinese one is a jieba word).
SEARCH_TERMS = {"en": "gather", "zh": "索引"}
INTERFACE = {
    "en": {"search": "Search this book...", "show": "Click to show", "hide": "Click to hide",
           "exercise": "Exercise", "solution": "Solution"},
    "zh": {"search": "搜索本书……", "show": "点击显示", "hide": "点击隐藏",
           "exercise": "练习", "solution": "解答"},
}
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")

# Everything one page tells us, collected in one evaluate() after it has settled.
PAGE_FACTS_JS = r"""() => {
  const content = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const text = el => (el ? el.textContent.replace(/\s+/g, ' ').trim() : '');
  const prose = content.cloneNode(true);
  // (search results quote the page sources, TeX included, by design)
  prose.querySelectorAll('pre, code, .math, script, style, mjx-container, #search-results').forEach(e => e.remove());
  const inSolution = e => !!e.closest('.solution');
  const codeCells = [...content.querySelectorAll('.cell_input pre')];
  const screen = e => !e.closest('.onlyprint');   // the theme's print-only header is display:none
  return {
    url: location.href,
    lang: document.documentElement.getAttribute('lang'),
    title: document.title,
    headings: [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].filter(screen)
                .map(h => [Number(h.tagName[1]), text(h)]),
    images: [...content.querySelectorAll('img')].map(i => ({src: i.getAttribute('src'),
                alt: (i.getAttribute('alt') || '').trim(),
                loaded: (i.complete && i.naturalWidth > 0) || i.loading === 'lazy'})),
    figures: content.querySelectorAll('.cell_output img').length,
    switches: [...document.querySelectorAll('a.gatherbook-language-switch')]
                .map(a => ({href: a.href, hreflang: a.getAttribute('hreflang'), text: text(a)})),
    switch_in_line: (() => {   // on the line of the theme's header buttons, not wrapped below
      const s = document.querySelector('a.gatherbook-language-switch'), b = document.querySelector('.article-header-buttons');
      if (!s || !b) return null;
      const r = s.getBoundingClientRect(), q = b.getBoundingClientRect();
      return Math.abs((r.top + r.bottom) / 2 - (q.top + q.bottom) / 2) < 8;
    })(),
    math_total: content.querySelectorAll('.math').length,
    math_raw: [...content.querySelectorAll('.math')].filter(m => !m.querySelector('mjx-container'))
                .map(m => m.textContent.trim().slice(0, 80)),
    mjx: document.querySelectorAll('mjx-container').length,
    raw_tex: (prose.textContent.match(/\$[^$\s][^$]{0,80}\$|\\\(|\\\[/g) || []).slice(0, 5),
    code_cells: codeCells.length,
    code_cells_without_copy: codeCells.filter(p => !(p.parentElement.querySelector('button.copybtn'))).length,
    copy_buttons: document.querySelectorAll('button.copybtn').length,
    ipynb_buttons: [...document.querySelectorAll('a.btn-download-source-button')]
                .map(a => a.href).filter(h => /\.ipynb$/.test(h)),
    downloads: [...content.querySelectorAll('a.reference.download')].map(a => ({href: a.href, text: text(a)})),
    exercises: [...content.querySelectorAll('.exercise > .admonition-title')].map(text),
    solutions: [...content.querySelectorAll('.solution > .admonition-title')].map(text),
    solution_code: codeCells.filter(inSolution).map(p => p.textContent.trim()),
    other_code: codeCells.filter(p => !inSolution(p)).map(p => p.textContent.trim()),
    search_placeholders: [...document.querySelectorAll('input[name="q"]')].map(i => i.placeholder),
    toggle_hints: [...document.querySelectorAll('button.toggle-button')].map(b => b.dataset.toggleHint),
    details_summaries: [...content.querySelectorAll('details > summary')].map(text),
    text_length: text(content).length,
    search_results: [...document.querySelectorAll('#search-results ul.search li a')].map(a => a.href),
    search_summary: text(document.querySelector('#search-results p.search-summary')),
  };
}"""


# ---------------------------------------------------------------------------------------------
# Fixtures: one build, one server, one browser, one visit of every page
# ---------------------------------------------------------------------------------------------
def test_the_build_writes_nothing_outside_build(site):
    """`make book` keeps everything it makes under _build/ (the source tree stays clean)."""
    assert site["made_outside_build"] == [], site["made_outside_build"]


class Watch:
    """Everything that goes wrong on one page (tab): console errors, uncaught exceptions, failed
    requests, 4xx/5xx responses; and the requests still in flight."""

    def __init__(self, page):
        self.page = page
        self.console_errors, self.page_errors, self.bad_status = [], [], []
        self.failed = []  # (url, failure, URL of the document that asked for it)
        self.requests = 0
        self.pending = set()
        self.document_of = {}
        self.stalled = []  # still loading when settle() gave up
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("request", self._request)
        page.on("requestfinished", lambda request: self.pending.discard(request))
        page.on("requestfailed", self._failed)
        page.on("response", lambda r: r.status >= 400 and self.bad_status.append(f"{r.status} {r.url}"))

    @property
    def inflight(self) -> int:
        return len(self.pending)

    def _console(self, msg):
        if msg.type == "error" and msg.text not in ALLOWED_CONSOLE_ERRORS:
            where = (msg.location or {}).get("url", "")
            self.console_errors.append(f"{msg.text} ({where})" if where else msg.text)

    def _request(self, request):
        self.requests += 1
        self.pending.add(request)
        self.document_of[request] = request.frame.url

    def _failed(self, request):
        self.pending.discard(request)
        self.failed.append((request.url, request.failure or "", self.document_of.get(request, "")))

    def problems(self) -> list[str]:
        here = self.page.url
        failed = [f"{url} ({failure})" for url, failure, document in self.failed
                  # cancelled because the tab went on to another page (a click, a redirect)
                  if not ("ERR_ABORTED" in failure and document != here)]
        return ([f"console error: {m}" for m in self.console_errors]
                + [f"uncaught exception: {m}" for m in self.page_errors]
                + [f"failed request: {m}" for m in failed]
                + [f"request still pending after {SETTLE_TIMEOUT:g} s: {m}" for m in self.stalled]
                + [f"HTTP {m}" for m in self.bad_status])


def new_context(browser, base_url, **options):
    """A browser context that records every request outside ``base_url`` in ``context.outside``.

    Chromium is started with every host name unresolvable (``sh.CHROMIUM_ARGS``), so such a
    request also fails instead of leaving the machine. (Observed, not routed: Playwright turns
    the HTTP cache off while routing, and every page would fetch the theme's scripts again.)
    """
    context = browser.new_context(**{"viewport": VIEWPORT, **options})
    context.outside = []

    def observe(request):
        if not request.url.startswith((base_url, "data:", "blob:", "about:")):
            context.outside.append(f"{request.url} (from {request.frame.url})")

    context.on("request", observe)
    return context


def settle(page, watch, timeout=None):
    """Wait until MathJax has typeset, fonts are in, and no request is in flight for a moment."""
    page.wait_for_load_state("load")
    page.evaluate("""async () => {
        if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
        if (document.fonts) await document.fonts.ready;
    }""")
    deadline, quiet_since = time.monotonic() + (timeout or SETTLE_TIMEOUT), None
    while time.monotonic() < deadline:
        if watch.inflight <= 0:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= 0.15:
                return
        else:
            quiet_since = None
        page.wait_for_timeout(25)
    watch.stalled += [request.url for request in watch.pending]


def start_page(context, url):
    """Open ``url`` in a new tab and return as soon as the navigation has committed."""
    page = context.new_page()
    watch = Watch(page)
    page.goto(url, wait_until="commit")
    return page, watch


def open_page(context, url, redirect_to=None):
    page, watch = start_page(context, url)
    page.wait_for_load_state("load")
    if redirect_to:
        page.wait_for_url(redirect_to, wait_until="load")
    settle(page, watch)
    return page, watch


def chapter_pages(pages, edition=None):
    return [p for p in pages if sh.is_chapter(p) and (edition is None or sh.edition_of(p) == edition)]


def screenshot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name))


def act_landing(page, base_url):
    """Pick each language on the landing page: [(page reached, its <html lang>)]."""
    reached = []
    for hreflang, edition in (("en", "en"), ("zh-CN", "zh")):
        page.click(f"a[hreflang='{hreflang}']")
        page.wait_for_url(f"{base_url}{edition}/book/{edition}/intro.html", wait_until="load")
        reached.append([sh.site_path(base_url, page.url), page.evaluate("document.documentElement.lang")])
        page.goto(base_url + "index.html", wait_until="load")
    return reached


def act_switch(page, base_url, path):
    """Click the language switch, then the switch of the page reached: [(page, <html lang>)]."""
    reached = []
    for there in (sh.other_edition(path), path):
        page.click("a.gatherbook-language-switch")
        # (the switch adds the id of the section in view: test_site_reader.py checks it)
        page.wait_for_url(lambda url: url.split("#")[0] == base_url + there, wait_until="load")
        reached.append([sh.site_path(base_url, page.url.split("#")[0]),
                        page.evaluate("document.documentElement.lang")])
    return reached


def act_solution(page, edition):
    """Open the first solution by clicking its title's words, copy its code, close it again."""
    want, problems = INTERFACE[edition], []
    solution = page.locator(".solution.dropdown").first
    title = solution.locator(".admonition-title").first
    code = solution.locator(".cell_input pre").first
    output = solution.locator(".cell_output").first
    button = solution.locator("button.toggle-button").first
    if code.is_visible():
        problems.append("the solution shows before a click")
    if button.get_attribute("data-toggle-hint") != want["show"]:
        problems.append(f"closed hint {button.get_attribute('data-toggle-hint')!r}, want {want['show']!r}")
    # a reader clicks the title's words, which are a link to the exercise
    title.scroll_into_view_if_needed()
    words = title.locator("a").first if title.locator("a").count() else title
    box = words.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    code.wait_for(state="visible", timeout=5_000)
    if not code.inner_text().strip():
        problems.append("the solution's code is empty")
    if not (output.is_visible() and output.inner_text().strip()):
        problems.append("the solution's output is not shown")
    if button.get_attribute("data-toggle-hint") != want["hide"]:
        problems.append(f"open hint {button.get_attribute('data-toggle-hint')!r}, want {want['hide']!r}")
    # its copy button puts the code on the clipboard
    page.bring_to_front()
    code.hover()
    solution.locator(".cell_input button.copybtn").first.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    if copied.strip() != code.inner_text().strip():
        problems.append(f"the copy button copied {copied[:80]!r}")
    # and the chevron closes it
    button.click()
    code.wait_for(state="hidden", timeout=5_000)
    return {"problems": problems, "code": code.text_content().strip()[:200]}


def attempt(action, *args):
    try:
        return action(*args)
    except Exception as exc:  # recorded, and reported by the test that looks at this action
        return {"error": f"{type(exc).__name__}: {exc}".splitlines()[0]}


@pytest.fixture(scope="module")
def crawl(site, base_url, browser):
    """Visit every page once (a sample of each kind without GATHERBOOK_SITE_PAGES=all: site_helpers);
    returns {"pages": {page: facts}, "outside": [...], "seconds": s}."""
    start = time.perf_counter()
    context = new_context(browser, base_url, color_scheme="light",
                          permissions=["clipboard-read", "clipboard-write"])
    pages = sh.browser_pages(site["pages"])
    first_chapters = {e: (chapter_pages(pages, e) or [None])[0] for e in sh.EDITIONS}
    shots = {"index.html": "landing.png",
             **{f"{e}/book/{e}/intro.html": f"{e}-intro.png" for e in sh.EDITIONS},
             **{c: f"{e}-chapter.png" for e, c in first_chapters.items() if c}}
    queries = {f"{e}/search.html": f"?q={quote(term)}" for e, term in SEARCH_TERMS.items()}
    facts = {}
    for at in range(0, len(pages), TABS):  # a few tabs load at once; each is then read in turn
        batch = [(path, *start_page(context, base_url + path + queries.get(path, "")))
                 for path in pages[at:at + TABS]]
        for path, page, watch in batch:
            refresh = sh.parse_page(site["path"] / path).refresh
            target = sh.resolve(path, refresh)[0] if refresh else None
            page.wait_for_load_state("load")
            if target:
                page.wait_for_url(base_url + target, wait_until="load")
            if path in queries:
                page.wait_for_function("() => (document.querySelector('#search-results p.search-summary')"
                                       " || {}).textContent", timeout=20_000)
            settle(page, watch)
            info = page.evaluate(PAGE_FACTS_JS)
            info.update(redirect=target, actions={})
            if path in shots:
                screenshot(page, shots[path])
            if path == "index.html":
                info["actions"]["landing"] = attempt(act_landing, page, base_url)
            if sh.is_chapter(path) and info["solutions"]:
                info["actions"]["solution"] = attempt(act_solution, page, sh.edition_of(path))
            if sh.is_chapter(path) and sh.edition_of(path) == "en":  # last: it leaves the page
                info["actions"]["switch"] = attempt(act_switch, page, base_url, path)
            if info["actions"]:
                settle(page, watch)
            info.update(problems=watch.problems(), requests=watch.requests)
            page.close()
            facts[path] = info
    outside = list(context.outside)
    context.close()
    seconds = round(time.perf_counter() - start, 2)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps({
        "pages_visited": len(facts), "pages": sorted(facts), "crawl_seconds": seconds,
        "build_seconds": site["seconds"], "requests": sum(f["requests"] for f in facts.values()),
    }, indent=1, ensure_ascii=False), encoding="utf8")
    return {"pages": facts, "outside": outside, "seconds": seconds}


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def assert_clean(watch, context, what):
    problems = watch.problems() + [f"request outside the site: {u}" for u in context.outside]
    assert not problems, f"{what}:\n  " + "\n  ".join(problems)


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
    problems = [f"{page}: {p}" for page, facts in pages.items() for p in facts["problems"]]
    assert not problems, f"{len(problems)} problems on {len(pages)} pages:\n" + "\n".join(problems)


def test_no_request_leaves_the_site(crawl):
    assert not crawl["outside"], "requests outside the site:\n" + "\n".join(crawl["outside"])


def test_html_lang(crawl):
    wrong = {page: f["lang"] for page, f in crawl["pages"].items()
             if f["lang"] != sh.HTML_LANG.get(sh.edition_of(page), "en")}
    assert not wrong, f"<html lang> is wrong: {wrong}"


def test_language_switch_goes_to_the_same_page_and_back(site, base_url, crawl):
    pages = crawl["pages"]
    problems = []
    for page, facts in pages.items():
        if sh.edition_of(page) is None or facts["redirect"]:
            continue
        hrefs = [sh.site_path(base_url, s["href"]) for s in facts["switches"]]
        twin = sh.other_edition(page)
        if hrefs != [twin]:
            problems.append(f"{page}: switch -> {hrefs}, expected {twin}")
            continue
        back = [sh.site_path(base_url, s["href"]) for s in pages[twin]["switches"]]
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
        problems += [f"{page}: exercise label {t!r}" for t in f["exercises"] if not t.startswith(want["exercise"])]
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
        status, body = fetch(f["ipynb_buttons"][0])
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
            status, body = fetch(link["href"])
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
def action(crawl, page, name):
    result = crawl["pages"][page]["actions"].get(name)
    assert result is not None, f"{name} was not done on {page}"
    assert not (isinstance(result, dict) and "error" in result), f"{name} on {page}: {result['error']}"
    return result


def test_landing_page_leads_to_both_editions(crawl):
    reached = action(crawl, "index.html", "landing")
    assert reached == [["en/book/en/intro.html", "en"], ["zh/book/zh/intro.html", "zh-CN"]], reached


def test_clicking_the_language_switch_on_a_chapter_and_back(site, crawl):
    for chapter in chapter_pages(list(crawl["pages"]), "en"):
        twin = sh.other_edition(chapter)
        reached = action(crawl, chapter, "switch")
        assert reached == [[twin, "zh-CN"], [chapter, "en"]], f"{chapter}: {reached}"


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_search_finds_the_chapter(site, base_url, crawl, edition):
    facts = crawl["pages"][f"{edition}/search.html"]
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
        assert_clean(watch, context, f"{chapter} in the dark theme")
    finally:
        context.close()


def test_screenshots_are_written(crawl):
    names = ["landing.png", "en-intro.png", "zh-intro.png", "en-chapter.png", "zh-chapter.png",
             "en-chapter-dark.png"]
    missing = [n for n in names if not (SCREENSHOTS / n).is_file() or (SCREENSHOTS / n).stat().st_size < 5000]
    assert not missing, f"screenshots missing in {SCREENSHOTS}: {missing}"
