"""Accessibility: axe-core's WCAG 2.1 A and AA rules find nothing serious or critical on the site.

Every page of the sample (every page with GATHERBOOK_SITE_PAGES=all: site_helpers.browser_pages),
both editions, in four ways of reading it: a desktop (1280 x 900) and a phone (390 x 844), each in
the light and the dark theme. With the sample (``make test``) each page is audited in one of the
four, the pages taking turns, so every page and every way is audited in under a minute; with
every page (``make test-all``) each page is audited in all four.

axe-core comes from npm (``package.json``, pinned in ``package-lock.json``), installed into
``node_modules/`` by ``make npm`` (``.ci/run`` runs it); the test injects its file into each page:
nothing is fetched while the tests run. Without it the test is skipped (with CI=true, a failure).

Issue 38 found 286 serious violations on 91 page views: the theme's search and colour-mode
buttons showed words their names did not hold (every page), and links in exercise boxes were
4.29:1 against their tinted background (4.5:1 needed).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_helpers as sh  # noqa: E402
from survey import VIEWPORTS, go_on, settle, tabs  # noqa: E402

AXE = sh.ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
WAYS = [(viewport, theme) for viewport in ("desktop", "phone") for theme in ("light", "dark")]
SERIOUS = ("serious", "critical")

RUN_JS = """async (tags) => (await axe.run(document, {runOnly: {type: 'tag', values: tags}}))
  .violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary.split('\\n').slice(1).join(' ').trim())}))"""


def audited(pages: list[str], way: int) -> list[str]:
    """The pages audited in ``WAYS[way]``: every one with every page, else every fourth."""
    return pages if sh.every_page() else pages[way::len(WAYS)]


@pytest.fixture(scope="module")
def axe_source():
    if not AXE.is_file():
        reason = f"no {AXE.relative_to(sh.ROOT)}: run `make npm` (npm install from package-lock.json)"
        if sh.on_ci():
            pytest.fail(f"CI=true, but the accessibility test cannot run: {reason}", pytrace=False)
        pytest.skip(reason)
    return AXE.read_text(encoding="utf8")


@pytest.mark.parametrize("way", range(len(WAYS)), ids=[f"{v}-{t}" for v, t in WAYS])
def test_no_serious_accessibility_violations(site, base_url, contexts, axe_source, way):
    viewport, theme = WAYS[way]
    pages = [p for p in sh.browser_pages(site["pages"]) if not sh.parse_page(site["path"] / p).refresh]
    pages = audited(pages, way)
    assert pages, "no page to audit"
    [(page, watch)] = tabs(contexts(**{**VIEWPORTS[viewport], "color_scheme": theme}), 1)
    found = []
    try:
        for path in pages:
            go_on(page, watch, base_url + path)
            settle(page, watch)
            if sh.edition_of(path):  # the language chooser (index.html) has one look
                assert page.evaluate("() => document.documentElement.dataset.theme") == theme, \
                    f"{path}: not in the {theme} theme"
            page.add_script_tag(content=axe_source)
            found += [(path, v) for v in page.evaluate(RUN_JS, TAGS) if v["impact"] in SERIOUS]
    finally:
        page.close()
    lines = [f"{path}: {v['impact']} {v['id']} ({v['help']}), {len(v['nodes'])} elements, e.g. {v['nodes'][0]}"
             for path, v in found]
    assert not found, (f"{viewport}, {theme} theme: {sum(len(v['nodes']) for _, v in found)} elements in "
                       f"serious or critical violations on {len({p for p, _ in found})} of {len(pages)} pages:\n"
                       + "\n".join(lines[:40]))
