"""What a search result or a link preview shows of a page: its ``<meta name="description">`` and
Open Graph tags (sphinxext-opengraph, ``_config.yml``: ``ogp_*``; the glossary's in each edition's
words, ``gatherbook_sphinx/glossary.py``).

Every page of each edition has one description, its own opening prose in the edition's language
(not the navigation, which a search engine would otherwise scrape), cut to the edition's
``ogp_description_length``; no two pages of an edition share one. Reads the built pages' files
(the session's one build, ``conftest.py``); no browser.
"""
from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_helpers as sh  # noqa: E402
from survey import CJK  # noqa: E402

from gatherbook.editions import edition  # noqa: E402
from gatherbook_sphinx import words  # noqa: E402

# Sphinx's own pages, made from no source (nothing to describe), at an edition's root
GENERATED = ("search.html", "genindex.html")
SHORTEST = 40  # characters: less is a heading or a label, not a description
ELLIPSIS = "..."  # sphinxext-opengraph's mark of a cut description


class HeadParser(HTMLParser):
    """The ``<meta>`` tags of a page, and the text of its navigation (``<nav>``)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.metas: list[dict] = []
        self.navs: list[list[str]] = []
        self._nav_depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "meta":
            self.metas.append(dict(attrs))
        elif tag == "nav":
            if self._nav_depth == 0:
                self.navs.append([])
            self._nav_depth += 1

    def handle_endtag(self, tag):
        if tag == "nav" and self._nav_depth:
            self._nav_depth -= 1

    def handle_data(self, data):
        if self._nav_depth:
            self.navs[-1].append(data)

    def named(self, name: str) -> list[str]:
        return [m.get("content") or "" for m in self.metas if m.get("name") == name]

    def og(self, prop: str) -> list[str]:
        return [m.get("content") or "" for m in self.metas if m.get("property") == prop]

    def nav_texts(self) -> list[str]:
        return [" ".join(" ".join(parts).split()) for parts in self.navs]


def read_head(file: Path) -> HeadParser:
    parser = HeadParser()
    parser.feed(file.read_text(encoding="utf8", errors="replace"))
    parser.close()
    return parser


def described_pages(site: dict, code: str) -> list[str]:
    """The pages of edition ``code`` that a description belongs on: all but Sphinx's generated
    pages and the redirects (the edition's index.html)."""
    pages = [p for p in site["pages"] if sh.edition_of(p) == code
             and p.split("/", 1)[1] not in GENERATED and sh.parse_page(site["path"] / p).refresh is None]
    assert pages, f"no page of the {code} edition"
    return pages


def description_length(code: str) -> int:
    """``ogp_description_length`` of the edition: ``_config.yml``, or its override."""
    def length(path: Path) -> int | None:
        config = yaml.safe_load(path.read_text(encoding="utf8")) or {}
        return ((config.get("sphinx") or {}).get("config") or {}).get("ogp_description_length")

    override = edition(code).config
    found = length(sh.ROOT / override) if override else None
    return found or length(sh.ROOT / "_config.yml")


@pytest.mark.parametrize("code", sh.EDITIONS)
def test_every_page_has_one_description_in_its_language(site, code):
    limit = description_length(code)
    problems = []
    for page in described_pages(site, code):
        head = read_head(site["path"] / page)
        found = head.named("description")
        if len(found) != 1 or not found[0].strip():
            problems.append(f"{page}: {len(found)} descriptions {found}")
            continue
        text = found[0]
        if not SHORTEST <= len(text) <= limit + len(ELLIPSIS):
            problems.append(f"{page}: {len(text)} characters, not {SHORTEST} to {limit}: {text!r}")
        start = text[:20]
        if code == "en" and CJK.search(text):
            problems.append(f"{page}: Chinese in the English edition's description: {text!r}")
        if code != "en" and not CJK.search(start):
            problems.append(f"{page}: the description does not start in Chinese: {text!r}")
        for nav in head.nav_texts():
            if nav and text.startswith(nav[:20]):
                problems.append(f"{page}: the description is the navigation's text: {text!r}")
        if [text] != head.og("og:description"):
            problems.append(f"{page}: og:description {head.og('og:description')} is not the description")
    assert not problems, "\n".join(problems)


# what sphinxext-opengraph 0.13.0 writes where the text has inline code or emphasis, which
# gatherbook_sphinx/workarounds.py mends (tidy_description): a space inside a bracket, a space next
# to full-width punctuation or between two Chinese characters, a heading's ASCII colon in Chinese
HAN = "\u4e00-\u9fff"
TYPOS = re.compile(rf"[(\[] | [)\]]| [，。、；：！？）]|[，。、；：！？（] |[{HAN}] [{HAN}]|[{HAN}]:|[，。；：][,:.]")


@pytest.mark.parametrize("code", sh.EDITIONS)
def test_descriptions_read_as_the_page_writes_them(site, code):
    typos = []
    for page in described_pages(site, code):
        for text in read_head(site["path"] / page).named("description"):
            body = text[: -len(ELLIPSIS)] if text.endswith(ELLIPSIS) else text
            typos += [f"{page}: {m[0]!r} in {text!r}" for m in TYPOS.finditer(body)]
    assert not typos, "\n".join(typos)


@pytest.mark.parametrize("code", sh.EDITIONS)
def test_no_two_pages_of_an_edition_share_a_description(site, code):
    seen: dict[str, str] = {}
    twice = []
    for page in described_pages(site, code):
        for text in read_head(site["path"] / page).named("description"):
            if text in seen:
                twice.append(f"{seen[text]} and {page}: {text!r}")
            seen.setdefault(text, page)
    assert not twice, "\n".join(twice)


@pytest.mark.parametrize("code", sh.EDITIONS)
def test_open_graph_tags_name_the_page_and_the_book(site, code):
    """og:title is the page's, og:site_name the edition's title; an og:url is a full address
    (none while the site has none: a path would be read against the page's own address)."""
    title = words.table(code)["title"]
    problems = []
    for page in described_pages(site, code):
        head = read_head(site["path"] / page)
        for prop in ("og:title", "og:type", "og:site_name"):
            if len(head.og(prop)) != 1 or not head.og(prop)[0].strip():
                problems.append(f"{page}: {prop} {head.og(prop)}")
        if head.og("og:site_name") != [title]:
            problems.append(f"{page}: og:site_name {head.og('og:site_name')}, not {title!r}")
        problems += [f"{page}: og:url {url!r} is not a full address"
                     for url in head.og("og:url") if not url.startswith(("https://", "http://"))]
        if head.og("og:image") or head.named("twitter:card"):  # no social cards: nothing drawn
            problems.append(f"{page}: an image {head.og('og:image')} {head.named('twitter:card')}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("code", sh.EDITIONS)
def test_the_search_page_and_the_index_ask_search_engines_not_to_list_them(site, code):
    """A search engine's result should be a page of the book, not the site's own search page or
    its general index; every other page may be listed."""
    pages = [p for p in site["pages"] if sh.edition_of(p) == code]
    asked = {p.split("/", 1)[1] for p in pages
             if read_head(site["path"] / p).named("robots") == ["noindex"]}
    assert asked == set(GENERATED), (code, asked)
