"""Section ids that are the same in both editions, so the language switch can keep the place.

Headings differ between the editions, and so do the ids Sphinx derives from them (``id3`` in
Chinese, ``cross-entropy`` in English). Every titled section also gets ``gb-s<N>``: its position
among the titled sections of the page (1 is the page's title). The two editions of a page have
the same sections in the same order (tests/test_editions.py), so ``gb-s7`` is the same section
in both; ``book/_static/gatherbook.js`` adds the id of the section in view to the switch's link.
"""
from __future__ import annotations

from docutils import nodes

PREFIX = "gb-s"


def titled_sections(doctree) -> list[nodes.section]:
    return [s for s in doctree.findall(nodes.section) if s.children and isinstance(s[0], nodes.title)]


def add_position_ids(app, doctree) -> None:
    for position, section in enumerate(titled_sections(doctree), start=1):
        ident = f"{PREFIX}{position}"
        if ident not in section["ids"]:
            section["ids"].append(ident)


def setup(app):
    app.connect("doctree-read", add_position_ids)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "0.1"}
