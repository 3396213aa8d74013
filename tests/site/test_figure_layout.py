"""Figures on the built site, in Chromium: whole on a phone, readable on a desktop, sharp.

At 390 x 844 (scale 3, a phone) and 1366 x 900 (a desktop), on every chapter page of both
editions, each figure image (a cell output's <img>):
- lies wholly within the screen (its rendered box, not the page's), and no ancestor scrolls
  sideways to hide part of it;
- has its text at a readable size: the figure's own smallest text and smallest cell value, in
  points, which gb.setup's figure format stores in each PNG (gatherbook.figures.style.text_sizes),
  times the scale the page draws the image at: cell values >= 9 CSS px on the phone, every text
  >= 10 CSS px on the desktop;
- carries at least 2 image pixels per CSS pixel.
The tests cannot pass vacuously: each edition must show figures, and the measured images must
have loaded (natural width > 0).

``GATHERBOOK_SITE=_build/site`` measures an already built site instead of building one;
``python tests/site/test_figure_layout.py _build/site`` prints the table per chapter.
"""
from __future__ import annotations

import base64
import os
import sys
import urllib.request
from functools import lru_cache
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import site_helpers as sh  # noqa: E402

from gatherbook.figures import style  # noqa: E402

VIEWPORTS = {"phone": dict(width=390, height=844, scale=3), "desktop": dict(width=1366, height=900, scale=1)}
PX_PER_PT = style.DPI / 72  # CSS px per point of a figure shown at its own size

# For each figure image: its box, its natural size, its own CSS size (the width attribute that
# 'retina' PNGs carry), and whether an ancestor scrolls sideways with content hidden.
_MEASURE = """() => [...document.querySelectorAll('.bd-content div.cell_output img')].map(img => {
  const r = img.getBoundingClientRect();
  let scroller = null;
  for (let e = img.parentElement; e && e !== document.body; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (['auto', 'scroll'].includes(s.overflowX) && e.scrollWidth > e.clientWidth + 1) {
      scroller = e.className || e.tagName; break;
    }
  }
  return {src: img.getAttribute('src'), url: img.currentSrc || img.src, left: r.left, right: r.right, width: r.width,
          natural: img.naturalWidth, own: parseFloat(img.style.width) || parseFloat(img.getAttribute('width')) || img.naturalWidth,
          screen: document.documentElement.clientWidth, scroller};
})"""


def png_text(data: bytes) -> dict[str, str]:
    """The tEXt entries of a PNG file."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    found, at = {}, 8
    while at < len(data):
        n, kind = int.from_bytes(data[at:at + 4], "big"), data[at + 4:at + 8]
        if kind == b"tEXt":
            key, _, value = data[at + 8:at + 8 + n].partition(b"\0")
            found[key.decode("latin-1")] = value.decode("latin-1")
        if kind == b"IEND":
            break
        at += 12 + n
    return found


@lru_cache(maxsize=None)
def text_points(url: str) -> tuple[float, float]:
    """(smallest text, smallest cell value) in points, as the figure's PNG stores them."""
    if url.startswith("data:"):
        data = base64.b64decode(url.split(",", 1)[1])
    else:
        with urllib.request.urlopen(url) as r:
            data = r.read()
    text = png_text(data)
    assert style.TEXT_PT_KEY in text, f"{url[:80]}: no text sizes stored (not drawn after gb.setup?)"
    return float(text[style.TEXT_PT_KEY]), float(text[style.VALUE_PT_KEY])


def measure(browser, base_url: str, pages: list[str], viewport: str) -> dict[str, list[dict]]:
    v = VIEWPORTS[viewport]
    context = browser.new_context(viewport={"width": v["width"], "height": v["height"]},
                                  device_scale_factor=v["scale"])
    found = {}
    try:
        page = context.new_page()
        for p in pages:
            page.goto(f"{base_url}/{p}", wait_until="load")
            page.wait_for_function("[...document.images].every(i => i.complete)")
            figs = page.evaluate(_MEASURE)
            for f in figs:
                scale = f["width"] / f["own"]
                text_pt, value_pt = text_points(f["url"])
                f["value_px"] = value_pt * PX_PER_PT * scale
                f["min_px"] = text_pt * PX_PER_PT * scale
                f["density"] = f["natural"] / f["width"] if f["width"] else 0.0
                f["whole"] = f["left"] >= -0.5 and f["right"] <= f["screen"] + 0.5 and not f["scroller"]
            found[p] = figs
    finally:
        context.close()
    return found


def chapter_pages(site: Path) -> list[str]:
    return [p for p in sh.site_pages(site) if sh.is_chapter(p)]


@pytest.fixture(scope="module")
def built(request):
    """``$GATHERBOOK_SITE`` when set, else the session's one build (tests/site/conftest.py)."""
    given = os.environ.get("GATHERBOOK_SITE", "").strip()
    return Path(given) if given else Path(request.getfixturevalue("site")["path"])


@pytest.fixture(scope="module")
def figures_by_viewport(built, browser):
    with sh.serve(built) as url:
        return {v: measure(browser, url, chapter_pages(built), v) for v in VIEWPORTS}


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_every_figure_is_whole_readable_and_sharp(figures_by_viewport, viewport):
    by_page = figures_by_viewport[viewport]
    for edition in sh.EDITIONS:
        shown = [f for p, fs in by_page.items() if sh.edition_of(p) == edition for f in fs]
        assert len(shown) >= 10, f"{viewport}: only {len(shown)} figures in the {edition} chapters"
        assert all(f["natural"] > 0 for f in shown), "an image did not load"
    problems = []
    for p, figs in by_page.items():
        for f in figs:
            where = f"{p} {f['src']}"
            if not f["whole"]:
                problems.append(f"{where}: not whole ({f['left']:.0f}..{f['right']:.0f} of "
                                f"{f['screen']} px, scroller {f['scroller']})")
            if f["density"] < 2 - 1e-6:
                problems.append(f"{where}: {f['density']:.2f} image px per CSS px")
            if viewport == "phone" and f["value_px"] < 9:
                problems.append(f"{where}: cell values at {f['value_px']:.1f} CSS px")
            if viewport == "desktop" and f["min_px"] < 10:
                problems.append(f"{where}: text at {f['min_px']:.1f} CSS px")
    assert not problems, "\n".join(problems)


if __name__ == "__main__":  # the table of the closing note
    from playwright.sync_api import sync_playwright

    site = Path(sys.argv[1])
    with sh.serve(site) as url, sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=sh.chromium_path(), args=sh.CHROMIUM_ARGS)
        rows = {v: measure(b, url, chapter_pages(site), v) for v in VIEWPORTS}
        b.close()
    print("| page | figure | whole at 390 px | value px at 390 | text px at 390 | text px at 1366 | density |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for p, phone in rows["phone"].items():
        for k, (f, d) in enumerate(zip(phone, rows["desktop"][p]), 1):
            print(f"| {p} | {k} | {f['whole']} | {f['value_px']:.1f} | {f['min_px']:.1f} | {d['min_px']:.1f} "
                  f"| {min(f['density'], d['density']):.1f} |")
