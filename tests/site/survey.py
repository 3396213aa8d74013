"""The site tests' visits of the built pages: each sampled page is loaded once per viewport.

A page costs Chromium seconds (layout, MathJax, images), so the checks that only read a page
share its visits, made once per test session (pytest-xdist workers included: :func:`once` keeps
the result in the session's folder beside the build):
- :func:`crawl`, at the desktop width (1280 x 900): every page of the sample (every page with
  ``GATHERBOOK_SITE_PAGES=all``), with what a reader does there (search, a solution opened and
  its code copied, the language switch, the landing page's choice); the facts of PAGE_FACTS_JS,
  and on chapter pages their layout (LAYOUT_JS) before anything is clicked;
- :func:`survey`, at a phone's width (390 x 844, a touch screen at scale 3): LAYOUT_JS on every
  edition page of the sample.
The facts hold no address of the server that made them (the ``base`` of the crawl aside), so a
worker that did not visit the pages reads them as well as the one that did.

Tests that must interact (typing in the search, scrolling the page contents, the explorer's
widget) open their own tab with :func:`open_page` in a context of :class:`Contexts` (conftest.py's
``contexts``), shared by the tests of a process, the crawl and the survey among them.
"""
from __future__ import annotations

import fcntl
import json
import re
import time
from pathlib import Path
from urllib.parse import quote

import site_helpers as sh

SCREENSHOTS = sh.ROOT / "_build" / "screenshots"
REPORT = SCREENSHOTS / "site-report.json"
VIEWPORT = {"width": 1280, "height": 900}
TABS = 2  # tabs loading pages at once, each going from page to page: one per core (in chromium 1 and
#           3 cost more; in its headless shell 1 and 2 cost the same, within the machine's noise)
SETTLE_TIMEOUT = 15.0  # seconds a page may keep loading

# Console errors that are not the site's fault, by exact text, each with the reason.
# (None now: "Got invalid theme mode" is gone since the layout's default_mode is "auto".)
ALLOWED_CONSOLE_ERRORS: set[str] = set()

# A term of each edition that the chapter must be found by (the Chinese one is a jieba word).
SEARCH_TERMS = {"en": "gather", "zh": "索引"}
INTERFACE = {
    "en": {"search": "Search this book...", "show": "Click to show", "hide": "Click to hide",
           "exercise": "Exercise", "solution": "Solution", "puzzle": r"Puzzle \d+ "},
    "zh": {"search": "搜索本书……", "show": "点击显示", "hide": "点击隐藏",
           "exercise": "练习", "solution": "解答", "puzzle": r"第 \d+ 题（"},  # a Practice puzzle
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
# Opening pages, and the crawl
# ---------------------------------------------------------------------------------------------
class Watch:
    """Everything that goes wrong on one page (tab): console errors, uncaught exceptions, failed
    requests, 4xx/5xx responses; and the requests still in flight."""

    def __init__(self, page, inside: str | None = None):
        self.page = page
        self.inside = (inside, "data:", "blob:", "about:") if inside else None
        self.reset()
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("request", self._request)
        page.on("requestfinished", lambda request: self.pending.discard(request))
        page.on("requestfailed", self._failed)
        page.on("response", lambda r: r.status >= 400 and self.bad_status.append(f"{r.status} {r.url}"))

    def reset(self):
        """Forget the page before: the tab goes on to another address."""
        self.console_errors, self.page_errors, self.bad_status = [], [], []
        self.failed = []  # (url, failure, URL of the document that asked for it)
        self.requests = 0
        self.pending = set()
        self.document_of = {}
        self.stalled = []  # still loading when settle() gave up
        self.outside = []  # requests for addresses outside ``inside`` (the site)

    @property
    def inflight(self) -> int:
        return len(self.pending)

    def _console(self, msg):
        if msg.type == "error" and msg.text not in ALLOWED_CONSOLE_ERRORS:
            where = (msg.location or {}).get("url", "")
            self.console_errors.append(f"{msg.text} ({where})" if where else msg.text)

    def _request(self, request):
        if self.inside and not request.url.startswith(self.inside):
            self.outside.append(f"{request.url} (from {request.frame.url})")
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
    """A browser context whose tabs (:func:`open_page`, :func:`tabs`) record every request outside
    ``base_url`` (their Watch's ``outside``).

    Chromium is started with every host name unresolvable (``sh.CHROMIUM_ARGS``), so such a
    request also fails instead of leaving the machine. (Observed, not routed: Playwright turns
    the HTTP cache off while routing, and every page would fetch the theme's scripts again.)
    """
    context = browser.new_context(**{"viewport": VIEWPORT, **options})
    context.inside = base_url  # for the Watch of each of its tabs
    return context


class Contexts:
    """The browser contexts of one test process, one per set of options (``viewport``,
    ``has_touch``, ...), shared by its tests: ``contexts(**options)``.

    A test opens its own tab there (:func:`open_page`) and closes it. Each context keeps a tab
    open while it lives, on the landing page: a new tab then reuses the renderer process of the
    context and what that has compiled, where the first tab of a context, or one after the last
    tab closed, starts a new one. Measured on six pages, in chromium (before the tests moved to its
    headless shell), in core-seconds: 14 with a tab kept open, 22 without, 28 with a context for
    each page.

    The site keeps a reader's state in its origin's local storage: a search leaves its words for
    the next page to highlight (and to open the deep-dives they are in), the theme button its
    mode. :meth:`forget` empties it, from that tab, after every test (tests/site/conftest.py), so
    that no test sees what the one before it left. (Session storage belongs to a tab; the site
    keeps nothing there, and each test's tab is new.)

    Every context has the options of :data:`SHARED` unless told otherwise: the light theme, and
    the clipboard for the copy buttons.
    """
    SHARED = {"color_scheme": "light", "permissions": ["clipboard-read", "clipboard-write"]}

    def __init__(self, browser, base_url: str):
        self.browser, self.base_url, self.open = browser, base_url, {}

    def __call__(self, **options):
        options = {**self.SHARED, **options}
        key = json.dumps(options, sort_keys=True)
        if key not in self.open:
            context = new_context(self.browser, self.base_url, **options)
            context.keep = context.new_page()  # the tab that keeps the renderer process
            context.keep.goto(self.base_url + "index.html")
            self.open[key] = context
        return self.open[key]

    def forget(self):
        """Empty the site's local storage in every context (what the tests before left there)."""
        for context in self.open.values():
            context.keep.evaluate("() => localStorage.clear()")

    def close(self):
        for context in self.open.values():
            context.close()
        self.open.clear()


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


def start_page(context, url, viewport=None):
    """Open ``url`` in a new tab (of ``viewport``'s size, if given, instead of the context's) and
    return as soon as the navigation has committed."""
    page = context.new_page()
    if viewport:
        page.set_viewport_size(viewport)
    watch = Watch(page, getattr(context, "inside", None))
    page.goto(url, wait_until="commit")
    return page, watch


def go_on(page, watch, url):
    """Take the tab ``page`` on to ``url`` (a fresh record in ``watch``) and return as soon as the
    navigation has committed. A tab that goes from page to page costs Chromium about half of
    what a new tab for each page does (measured in chromium: 12 against 22 core-seconds for six
    pages)."""
    page.goto("about:blank")  # the page before is gone: nothing it does is recorded for the next
    watch.reset()
    page.goto(url, wait_until="commit")
    return page, watch


def tabs(context, count: int) -> list:
    """``count`` tabs of ``context`` (at least one), each with its Watch, to reuse from page to page."""
    inside = getattr(context, "inside", None)
    return [(page, Watch(page, inside)) for page in (context.new_page() for _ in range(max(1, count)))]


def open_page(context, url, redirect_to=None, viewport=None):
    page, watch = start_page(context, url, viewport)
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


# Where a reader is when they click the language switch: in the middle of a section (scrolled
# 200 px into it) or inside an exercise (120 px into exercise 3, or the page's first exercise).
SCROLL_INTO_JS = """([id, by]) => { const e = document.getElementById(id);
    (id.startsWith('gb-s') ? (e.closest('section') || e) : e).scrollIntoView({block: 'start', behavior: 'instant'});
    window.scrollBy({top: by, behavior: 'instant'}); }"""
# Whether the element ``landed`` is the one of id ``target`` or inside its section
LANDED_JS = """([landed, target]) => { const e = document.getElementById(landed), t = document.getElementById(target);
    return !!(e && t && (landed === target || (t.closest('section') || t).contains(e))); }"""


def switch_target(page, where: str) -> str:
    """The id the reader is in before a click on the switch: the middle section of the page (the
    last one left out: it may sit too low to reach the top) or exercise 3 (ids gb-s<N>, gb-e<N>)."""
    ids = page.evaluate("() => [...document.querySelectorAll('[id^=gb-]')].map(e => e.id)")
    exercises = [i for i in ids if i.startswith("gb-e")]
    if where == "exercise" and exercises:
        return "gb-e3" if "gb-e3" in exercises else exercises[0]
    sections = [i for i in ids if i.startswith("gb-s")]
    sections = sections[:-1] if len(sections) > 1 else sections
    return sections[len(sections) // 2]


def act_switch(page, watch, base_url, path, first_by_section):
    """Click the language switch from inside the page (a section's middle, or an exercise), then the
    switch of the page reached from inside the other kind of place (with every page, make test-all,
    then the round trip again with the kinds swapped); one record per click: the
    page and <html lang> reached, where the reader was (``target``), the id the address lands on,
    whether that is the target or inside it, its top in the window, and the switch's top before
    the click (a reader's click where the switch is on screen: the article header stays at the
    top; Playwright's click() would first scroll the page to it)."""
    records = []
    kinds = ("section", "exercise") if first_by_section else ("exercise", "section")
    trips = [(sh.other_edition(path), kinds[0]), (path, kinds[1])]
    if sh.every_page():  # and the other way round: from a section and from an exercise, both ways
        trips += [(sh.other_edition(path), kinds[1]), (path, kinds[0])]
    for there, kind in trips:
        target = switch_target(page, kind)
        page.evaluate(SCROLL_INTO_JS, [target, 200 if target.startswith("gb-s") else 120])
        box = page.locator("a.gatherbook-language-switch").bounding_box()
        assert box, f"{page.url}: the language switch is not drawn"
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_url(lambda url: url.split("#")[0] == base_url + there, wait_until="load")
        settle(page, watch)
        landed = page.url.split("#")[-1] if "#" in page.url else ""
        records.append({
            "reached": [sh.site_path(base_url, page.url.split("#")[0]),
                        page.evaluate("document.documentElement.lang")],
            "kind": "section" if target.startswith("gb-s") else "exercise", "target": target,
            "landed": landed, "inside": bool(landed) and page.evaluate(LANDED_JS, [landed, target]),
            "top": page.evaluate("id => document.getElementById(id).getBoundingClientRect().top", landed)
                   if landed else None,
            "switch_top": box["y"],
            # words of a search highlighted there (a reader who came by the switch sees none)
            "highlighted": page.evaluate("document.querySelectorAll('span.highlighted').length")})
    return records


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


def crawl(site, base_url, contexts):
    """Visit every page once (a sample of each kind without GATHERBOOK_SITE_PAGES=all: site_helpers)
    at the desktop width; returns {"pages": {page: facts}, "outside": [...], "seconds": s, "base": url}.
    A chapter page's facts hold its layout (LAYOUT_JS) as loaded, before the crawl clicks anything."""
    start = time.perf_counter()
    context = contexts()
    pages = sh.browser_pages(site["pages"])
    first_chapters = {e: (chapter_pages(pages, e) or [None])[0] for e in sh.EDITIONS}
    shots = {"index.html": "landing.png",
             **{f"{e}/book/{e}/intro.html": f"{e}-intro.png" for e in sh.EDITIONS},
             **{c: f"{e}-chapter.png" for e, c in first_chapters.items() if c}}
    queries = {f"{e}/search.html": f"?q={quote(term)}" for e, term in SEARCH_TERMS.items()}
    facts, outside = {}, []
    contexts.forget()  # (what a test before left)
    lanes = tabs(context, min(TABS, len(pages)))
    # a search leaves its words for the next page that loads (Contexts): the search pages come
    # last, each alone, and their words are forgotten after each
    plain = [p for p in pages if p not in queries]
    batches = [plain[at:at + len(lanes)] for at in range(0, len(plain), len(lanes))]
    batches += [[p] for p in pages if p in queries]
    try:
        for paths in batches:  # a few tabs load at once; each is then read in turn
            batch = [(path, *go_on(page, watch, base_url + path + queries.get(path, "")))
                     for path, (page, watch) in zip(paths, lanes)]
            for path, page, watch in batch:
                refresh = sh.parse_page(site["path"] / path).refresh
                target = sh.resolve(path, refresh)[0] if refresh else None
                page.wait_for_load_state("load")
                if target:
                    page.wait_for_url(base_url + target, wait_until="load")
                if path in queries:
                    page.wait_for_function("() => (document.querySelector("
                                           "'#search-results p.search-summary') || {}).textContent",
                                           timeout=20_000)
                settle(page, watch)
                info = page.evaluate(PAGE_FACTS_JS)
                info.update(redirect=target, actions={})
                if sh.edition_of(path):
                    info["tables"] = page.evaluate(TABLE_CODE_JS)
                if sh.is_chapter(path):
                    page.wait_for_function(IMAGES_LOADED_JS)
                    info["layout"] = page.evaluate(LAYOUT_JS)
                if path in shots:
                    screenshot(page, shots[path])
                if path == "index.html":
                    info["actions"]["landing"] = attempt(act_landing, page, base_url)
                if sh.is_chapter(path) and info["solutions"]:
                    info["actions"]["solution"] = attempt(act_solution, page, sh.edition_of(path))
                if sh.is_chapter(path) and sh.edition_of(path) == "en":  # last: it leaves the page
                    # from a section there and an exercise back, or the other way round, by chapter
                    first_by_section = chapter_pages(pages, "en").index(path) % 2 == 0
                    info["actions"]["switch"] = attempt(act_switch, page, watch, base_url, path,
                                                        first_by_section)
                if info["actions"]:
                    settle(page, watch)
                info.update(problems=watch.problems(), requests=watch.requests)
                outside += watch.outside
                facts[path] = info
            if paths[0] in queries:
                contexts.forget()
    finally:
        for page, _ in lanes:
            page.close()
    seconds = round(time.perf_counter() - start, 2)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps({
        "pages_visited": len(facts), "pages": sorted(facts), "crawl_seconds": seconds,
        "build_seconds": site["seconds"], "requests": sum(f["requests"] for f in facts.values()),
    }, indent=1, ensure_ascii=False), encoding="utf8")
    return {"pages": facts, "outside": outside, "seconds": seconds, "base": base_url}



def action(crawl, page, name):
    """What the crawl's action ``name`` (landing, solution, switch) recorded on ``page``; fails the
    test when it was not done or raised."""
    result = crawl["pages"][page]["actions"].get(name)
    assert result is not None, f"{name} was not done on {page}"
    assert not (isinstance(result, dict) and "error" in result), f"{name} on {page}: {result['error']}"
    return result


def assert_clean(watch, what):
    assert watch.inside, "a tab of a context not made by new_context: its requests are not checked"
    problems = watch.problems() + [f"request outside the site: {u}" for u in watch.outside]
    assert not problems, f"{what}:\n  " + "\n  ".join(problems)



# ---------------------------------------------------------------------------------------------
# The layout of a page, read in one evaluate(): what the layout tests assert on
# ---------------------------------------------------------------------------------------------
VIEWPORTS = {
    "desktop": {"viewport": VIEWPORT},
    # a phone: is_mobile honours the page's <meta viewport>; the measures are in CSS px, so the
    # scale changes none of them (the figures have no srcset), only what a screenshot would show
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
              "device_scale_factor": 3},
}
IMAGES_LOADED_JS = "() => [...document.images].every(i => i.complete)"

# Each figure image (a cell output's <img>): its box, its natural size (width and height: the shape
# it must keep), its own CSS size (the width attribute that 'retina' PNGs carry), and whether an ancestor scrolls sideways with content hidden.
FIGURES_JS = """() => [...document.querySelectorAll('.bd-content div.cell_output img')].map(img => {
  const r = img.getBoundingClientRect();
  let scroller = null;
  for (let e = img.parentElement; e && e !== document.body; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (['auto', 'scroll'].includes(s.overflowX) && e.scrollWidth > e.clientWidth + 1) {
      scroller = e.className || e.tagName; break;
    }
  }
  return {src: img.getAttribute('src'), left: r.left, right: r.right, width: r.width, height: r.height,
          natural: img.naturalWidth, natural_height: img.naturalHeight, own: parseFloat(img.style.width) || parseFloat(img.getAttribute('width')) || img.naturalWidth,
          screen: document.documentElement.clientWidth, scroller};
})"""

# The page's width against the screen's, and the first elements that stick out
WIDTHS_JS = """() => {
  const doc = document.scrollingElement || document.documentElement;
  const wide = [...document.querySelectorAll('article.bd-article *')]
      .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest('.pst-scrollable-table-container, table, div.cell_output div.output, pre, .highlight, mjx-container'))
      .slice(0, 3).map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 60));
  // the screen's width: on a phone, innerWidth grows with an over-wide page (the browser zooms
  // out), so it cannot be the yardstick; clientWidth stays the device width
  return {scroll: doc.scrollWidth, width: document.documentElement.clientWidth, wide};
}"""

# Code blocks whose lines are all within the book's 88 characters that still scroll sideways. (A
# line over 88 characters is the notebook's to fix, and tests of the notebooks' line lengths hold it.)
MAX_CHARS = 88
CODE_JS = """() => {
  // display columns: Chinese characters and full-width punctuation take two
  const columns = l => l.length + (l.match(/[\\u1100-\\u115f\\u2e80-\\ua4cf\\uac00-\\ud7a3\\uf900-\\ufaff\\ufe30-\\ufe4f\\uff00-\\uff60\\uffe0-\\uffe6]/g) || []).length;
  return [...document.querySelectorAll('article.bd-article div.cell pre')]
    .filter(p => p.scrollWidth > p.clientWidth + 1)
    .filter(p => Math.max(...p.textContent.split('\\n').map(columns)) <= %d)
    .map(p => ({where: p.closest('.cell_output') ? 'output' : 'input',
                chars: Math.max(...p.textContent.split('\\n').map(columns)),
                line: p.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a, '').slice(0, 100)}));
}""" % MAX_CHARS

# How code wraps (on a phone): every line of every code block (the deep dives and predict answers
# opened), character by character, as the reader sees it: where a line wraps, the characters on
# each side of the break and how far in (in columns) its continuation starts, against the line's own
# indent and the block's width in columns, and the length of the word the break falls in. A break "inside a token": between two word characters, or inside an operator (``**``).
WRAP_JS = r"""() => {
  const folded = [...document.querySelectorAll('article.bd-article details:not([open])')];
  folded.forEach((d) => { d.open = true; });
  const breaks = [];
  let lines = 0;
  for (const pre of document.querySelectorAll('article.bd-article div.highlight pre')) {
    const probe = document.createElement('span');
    probe.textContent = '0'.repeat(20);
    pre.appendChild(probe);
    const ch = probe.getBoundingClientRect().width / 20;
    probe.remove();
    const style = getComputedStyle(pre);
    const left = pre.getBoundingClientRect().left + parseFloat(style.paddingLeft);
    const columns = Math.floor((pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)) / ch);
    const chars = [];  // [character, node, offset] of the block's text, in order
    const walk = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode())
      for (let i = 0; i < n.data.length; i++) chars.push([n.data[i], n, i]);
    const range = document.createRange();
    let start = 0;
    for (let end = 0; end <= chars.length; end++) {
      if (end < chars.length && chars[end][0] !== '\n') continue;
      const line = chars.slice(start, end);
      start = end + 1;
      const text = line.map((c) => c[0]).join('');
      if (!text.trim()) continue;
      lines++;
      const indent = text.length - text.trimStart().length;
      let prev = null;
      for (let k = 0; k < line.length; k++) {
        if (line[k][0] === ' ') continue;
        range.setStart(line[k][1], line[k][2]);
        range.setEnd(line[k][1], line[k][2] + 1);
        const r = range.getClientRects()[0];
        if (!r) continue;
        if (prev && r.top > prev.top + 2) {
          // the word the break falls in (letters, digits, _ and .): wider than the continuation's
          // room, it cannot go to the next line whole
          let a = k, b = k;
          while (a > 0 && /[\w.]/.test(text[a - 1])) a--;
          while (b < text.length && /[\w.]/.test(text[b])) b++;
          breaks.push({line: text.slice(0, 100), indent, before: text.slice(Math.max(0, k - 12), k),
                       after: text.slice(k, k + 12), spaced: line[k - 1][0] === ' ',
                       column: Math.round((r.left - left) / ch), columns, word: b - a});
        }
        prev = {top: r.top, k};
      }
    }
  }
  folded.forEach((d) => { d.open = false; });
  return {lines, breaks};
}"""

# Inline code in the page's tables, character by character: each place a code literal goes on to
# the next line (the characters on each side, and whether a space was between them), and each
# table that scrolls sideways (its hidden width in px).
TABLE_CODE_JS = r"""() => {
  const range = document.createRange();
  const breaks = [], scrolling = [];
  let literals = 0;
  for (const table of document.querySelectorAll('article.bd-article table')) {
    if (table.scrollWidth > table.clientWidth + 1) scrolling.push(table.scrollWidth - table.clientWidth);
    for (const code of table.querySelectorAll('td code.literal, th code.literal')) {
      literals++;
      const chars = [];
      const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode())
        for (let i = 0; i < n.data.length; i++) chars.push([n.data[i], n, i]);
      const text = chars.map((c) => c[0]).join('');
      let prev = null;
      chars.forEach(([c, node, i], k) => {
        if (/\s/.test(c)) return;
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const r = range.getClientRects()[0];
        if (!r) return;
        if (prev !== null && r.top > prev + 2)
          breaks.push({code: text, before: text.slice(Math.max(0, k - 12), k), after: text.slice(k, k + 12),
                       spaced: /\s/.test(text[k - 1])});
        prev = r.top;
      });
    }
  }
  return {literals, breaks, scrolling};
}"""

LAYOUT_JS = "() => ({figures: (%s)(), widths: (%s)(), code: (%s)()})" % (FIGURES_JS, WIDTHS_JS, CODE_JS)


# The first table of the page whose cells hold a line of code (chapter 1's use cases): its code
# words split over lines, and its width against the column's (tests/site/test_phone_layout.py).
USE_CASE_TABLE_JS = r"""() => {
  const table = [...document.querySelectorAll('article.bd-article table')]
    .find((t) => [...t.querySelectorAll('td code')].some((c) => c.textContent.length >= 28));
  if (!table) return null;
  table.scrollIntoView();
  const split = [...table.querySelectorAll('td code span.pre')]
    .filter((s) => new Set([...s.getClientRects()].map((r) => Math.round(r.top))).size > 1)
    .map((s) => s.textContent);
  const column = document.querySelector('article.bd-article').getBoundingClientRect();
  const box = table.getBoundingClientRect();
  return {split, words: table.querySelectorAll('td code span.pre').length,
          overflow: Math.max(0, table.scrollWidth - table.clientWidth, box.right - column.right)};
}"""


def survey_pages(site) -> list[str]:
    """The edition pages of the sample (every one with GATHERBOOK_SITE_PAGES=all), redirects left out."""
    return [p for p in sh.browser_pages(site["pages"])
            if sh.edition_of(p) and not sh.parse_page(site["path"] / p).refresh]


def survey(contexts, base_url: str, pages: list[str], viewport: str) -> dict[str, dict]:
    """``{page: LAYOUT_JS's facts}`` for ``pages`` at ``viewport`` (VIEWPORTS), each loaded once,
    a few tabs at a time, and read when it has settled and its images are in."""
    found = {}
    lanes = tabs(contexts(**VIEWPORTS[viewport]), min(TABS, len(pages)))
    try:
        for at in range(0, len(pages), len(lanes)):
            batch = [(path, *go_on(page, watch, base_url + path))
                     for path, (page, watch) in zip(pages[at:at + len(lanes)], lanes)]
            for path, page, watch in batch:
                settle(page, watch)
                page.wait_for_function(IMAGES_LOADED_JS)
                found[path] = page.evaluate(LAYOUT_JS)
                found[path]["tables"] = page.evaluate(TABLE_CODE_JS)
                if viewport == "phone":
                    found[path]["wrap"] = page.evaluate(WRAP_JS)
                if viewport == "phone" and path.endswith("/01_gather_basics.html"):
                    found[path]["table"] = page.evaluate(USE_CASE_TABLE_JS)  # scrolls to it
                    screenshot(page, f"use-case-table-{sh.edition_of(path)}-390.png")
    finally:
        for page, _ in lanes:
            page.close()
    return found


def once(file: Path, compute):
    """``compute()``'s JSON-able result, computed by the first process of the session to ask and
    kept in ``file`` (in the session's folder: tests/site/conftest.py) for the others."""
    file.parent.mkdir(parents=True, exist_ok=True)
    with open(file.with_name(file.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if file.is_file():
                return json.loads(file.read_text(encoding="utf8"))
            text = json.dumps(compute(), ensure_ascii=False)
            file.write_text(text, encoding="utf8")
            return json.loads(text)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
