"""The edition being built, and the way between the editions.

Each language is its own Sphinx build (see ``book/build.py``); the two are published side by
side as ``<site>/en/...`` and ``<site>/zh/...``. The edition being built is learnt one way only:
the config value ``gatherbook_edition`` (a code of :data:`gatherbook.editions.EDITIONS`, set by
the edition's config override); :func:`this_edition` reads it. This module gives every page:

- ``<html lang>`` as a BCP 47 tag (``en``, ``zh-CN``) instead of Sphinx's ``zh_CN``;
- a link to the same page in the other language (``language-switch.html`` renders it);
- section ids that are the same in both editions (``gb-s<N>``), so the switch keeps the place.
"""
from __future__ import annotations

from pathlib import Path

from docutils import nodes

from gatherbook.editions import CODES, EDITIONS, Edition, edition

CONFIG = "gatherbook_edition"
EXERCISE_PREFIX = "gb-e"
SECTION_PREFIX = "gb-s"


def this_edition(app) -> Edition:
    """The edition this Sphinx build makes (``gatherbook_edition``).

    Raises:
        ValueError: the config names no edition of the book.
    """
    return edition(getattr(app.config, CONFIG), what=CONFIG)


def check_edition(app, config) -> None:
    """``config-inited``: fail early, naming the setting, when it names no edition."""
    edition(config[CONFIG], what=CONFIG)


def toc_docnames(root: Path, code: str) -> set[str]:
    """All document names (no suffix) listed in the TOC of edition ``code`` (read by
    sphinx-external-toc, the parser the build itself uses)."""
    from sphinx_external_toc.parsing import parse_toc_yaml

    return set(parse_toc_yaml(Path(root) / edition(code).toc))


def counterpart(pagename: str, this: str, other: str) -> str:
    """The page name of ``pagename`` in the other language: ``notebooks/en/x`` -> ``notebooks/zh/x``.

    Pages without a language folder in their path (the bilingual glossary, ``search``,
    ``genindex``) are their own counterpart.
    """
    parts = pagename.split("/")
    return "/".join(other if p == this else p for p in parts)


def _relative_to_site_root(pagename: str) -> str:
    # a page is published at <site>/<lang>/<pagename>.html
    return "../" * (pagename.count("/") + 1)


def read_other_tocs(app) -> None:
    """``builder-inited``: the pages of the other editions, for the switch."""
    this = this_edition(app).code
    app.env.gatherbook_other_docs = {
        code: toc_docnames(app.srcdir, code) for code in CODES if code != this}


def page_context(app, pagename: str, context: dict) -> None:
    """``<html lang>`` and ``gatherbook_switches`` (one link per other edition)."""
    this = this_edition(app)
    context["language"] = this.tag
    switches = []
    for other in EDITIONS:
        if other.code == this.code:
            continue
        target = counterpart(pagename, this.code, other.code)
        known = app.env.gatherbook_other_docs.get(other.code, set())
        if target not in known and pagename not in ("search", "genindex"):
            # no counterpart page: offer the other edition's landing page instead
            target = "index"
        switches.append({
            "url": _relative_to_site_root(pagename) + f"{other.code}/{target}.html",
            "lang": other.tag,
            "label": other.name,
        })
    context["gatherbook_switches"] = switches


def titled_sections(doctree) -> list[nodes.section]:
    return [s for s in doctree.findall(nodes.section) if s.children and isinstance(s[0], nodes.title)]


def add_position_ids(app, doctree) -> None:
    """``doctree-read``: every titled section also gets ``gb-s<N>``, its position among the titled
    sections of the page (1 is the page's title). Headings, and so Sphinx's ids, differ between
    the editions; the two editions of a page have the same sections in the same order
    (tests/unit/test_editions.py), so ``gb-s7`` is the same section in both, and
    ``book/_static/gatherbook.js`` adds the id of the section in view to the switch's link."""
    for position, section in enumerate(titled_sections(doctree), start=1):
        ident = f"{SECTION_PREFIX}{position}"
        if ident not in section["ids"]:
            section["ids"].append(ident)
    # exercises too (``gb-e<N>``): a switch from inside an exercise or its solution lands on the
    # same exercise, not at the top of the exercises section
    from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node

    exercises = doctree.findall(lambda n: isinstance(n, (exercise_node, exercise_enumerable_node)))
    for position, node in enumerate(exercises, start=1):
        ident = f"{EXERCISE_PREFIX}{position}"
        if ident not in node["ids"]:
            node["ids"].append(ident)
