"""Figures on the built site, in Chromium: whole on a phone, readable on a desktop, sharp.

At 390 x 844 (a phone: a touch screen at scale 3) and 1280 x 900 (a desktop: its column is narrower
than at 1366, where this was first measured, and the figures are as wide), on every chapter page of
the sample (every chapter page with GATHERBOOK_SITE_PAGES=all: site_helpers.browser_pages), both
editions, each figure image (a cell output's <img>):
- lies wholly within the screen (its rendered box, not the page's), and no ancestor scrolls
  sideways to hide part of it;
- has its text at a readable size: the figure's own smallest text and smallest cell value, in
  points, which gb.setup's figure format stores in each PNG (gatherbook.figures.style.text_sizes),
  times the scale the page draws the image at: cell values >= 9 CSS px on the phone, every text
  >= 10 CSS px on the desktop;
- carries at least 2 image pixels per CSS pixel;
- keeps its shape: its rendered height over width within 1% of the image's own (each <img> carries
  an inline width and height; a phone's max-width shrank the width alone, and 36 of 86 figures
  came out stretched, issue 38).
The tests cannot pass vacuously: each edition must show figures, and the measured images must
have loaded (natural width > 0). The pages are measured once per viewport for all the layout
tests (survey.py: the crawl at the desktop width, the phone survey).

``PYTHONPATH=book/ext python tests/site/test_figure_layout.py _build/site`` prints the table per
chapter (every chapter).
"""
from __future__ import annotations

import base64
import sys
from functools import lru_cache
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import site_helpers as sh  # noqa: E402
import survey  # noqa: E402

from gatherbook.figures import style  # noqa: E402

VIEWPORTS = ("phone", "desktop")
PX_PER_PT = style.DPI / 72  # CSS px per point of a figure shown at its own size


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
def text_points(site: Path, page: str, src: str) -> tuple[float, float]:
    """(smallest text, smallest cell value) in points, as the figure's PNG (``src`` on ``page``) stores them."""
    if src.startswith("data:"):
        data = base64.b64decode(src.split(",", 1)[1])
    else:
        data = (site / sh.resolve(page, src)[0]).read_bytes()
    text = png_text(data)
    assert style.TEXT_PT_KEY in text, f"{page} {src[:80]}: no text sizes stored (not drawn after gb.setup?)"
    return float(text[style.TEXT_PT_KEY]), float(text[style.VALUE_PT_KEY])


def figures(site: Path, page: str, figs: list[dict]) -> list[dict]:
    """The figures of survey.FIGURES_JS on ``page``, with their text sizes, density and wholeness."""
    out = []
    for f in figs:
        scale = f["width"] / f["own"]
        text_pt, value_pt = text_points(site, page, f["src"])
        shape = (f["height"] / f["width"]) / (f["natural_height"] / f["natural"]) \
            if f["width"] and f["natural"] and f["natural_height"] else 0.0
        out.append({**f, "stretch": shape, "value_px": value_pt * PX_PER_PT * scale, "min_px": text_pt * PX_PER_PT * scale,
                    "density": f["natural"] / f["width"] if f["width"] else 0.0,
                    "whole": f["left"] >= -0.5 and f["right"] <= f["screen"] + 0.5 and not f["scroller"]})
    return out


def chapter_pages(pages: list[str]) -> list[str]:
    return [p for p in pages if sh.is_chapter(p)]


@pytest.fixture(scope="module")
def figures_by_viewport(site, crawl, phone_survey):
    pages = chapter_pages(sh.browser_pages(site["pages"]))
    layouts = {"desktop": {p: crawl["pages"][p]["layout"] for p in pages},
               "phone": {p: phone_survey[p] for p in pages}}
    return {v: {p: figures(site["path"], p, layout["figures"]) for p, layout in layouts[v].items()}
            for v in VIEWPORTS}


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
            if abs(f["stretch"] - 1) > 0.01:
                problems.append(f"{where}: drawn {f['width']:.0f} x {f['height']:.0f} px, its shape "
                                f"stretched {f['stretch']:.2f} times in height")
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
    pages = chapter_pages(sh.site_pages(site))
    with sh.serve(site) as url, sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=sh.chromium_path(), args=sh.CHROMIUM_ARGS)
        contexts = survey.Contexts(b, url)
        rows = {v: {p: figures(site, p, layout["figures"])
                    for p, layout in survey.survey(contexts, url, pages, v).items()} for v in VIEWPORTS}
        contexts.close()
        b.close()
    print("| page | figure | whole at 390 px | value px at 390 | text px at 390 | text px at 1280 | density "
          "| stretch at 390 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for p, phone in rows["phone"].items():
        for k, (f, d) in enumerate(zip(phone, rows["desktop"][p]), 1):
            print(f"| {p} | {k} | {f['whole']} | {f['value_px']:.1f} | {f['min_px']:.1f} | {d['min_px']:.1f} "
                  f"| {min(f['density'], d['density']):.1f} | {f['stretch']:.2f} |")
