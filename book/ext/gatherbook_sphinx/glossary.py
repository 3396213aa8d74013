"""The glossary's terms: an anchor for each, and a table that reads on a phone.

``book/glossary.md`` is one list-table of class ``glossary-table`` (term, 术语, definition). At
``doctree-read`` :func:`term_anchors` gives each row an id made from its English term,
``term-<term>`` (``glossary.html#term-scatter-add``), the same in both editions, so a chapter can
link a term (``[scatter_add](../../book/glossary.md#term-scatter-add)``, resolved under -W) and the
language switch keeps it. The phone layout is CSS (``gatherbook.css``: the
three columns become one block per term below 640 px).

The page is one for both editions and opens in both languages, so the description that
sphinxext-opengraph takes from a page's opening prose would be English in the Chinese edition and
run on into the table's headings: :func:`page_description` gives it the edition's words instead
(``glossary_description``).
"""
from __future__ import annotations

import html

from docutils import nodes

from . import words

TABLE_CLASS = "glossary-table"


def is_glossary(doctree) -> bool:
    return doctree is not None and any(TABLE_CLASS in table["classes"]
                                       for table in doctree.findall(nodes.table))


def page_description(app, context: dict, doctree) -> None:
    """``html-page-context``, before sphinxext-opengraph's: the glossary's description in the
    edition's words, the extension's own way (a page's ``og:description`` field, and a
    ``<meta name="description">`` already there, which it then does not write again)."""
    if app.builder.name == "singlehtml" or not is_glossary(doctree):  # (the print: every page in one)
        return
    said = words.of(app)["glossary_description"]
    context["meta"] = {**(context.get("meta") or {}), "og:description": said}
    context["metatags"] = (context.get("metatags") or "") + (
        f'<meta name="description" content="{html.escape(said)}" />\n')


def term_id(term: str) -> str:
    """``term-<slug>`` of an English term (``scatter_add`` -> ``term-scatter-add``)."""
    return nodes.make_id("term-" + term.strip().strip("`"))


def term_anchors(app, doctree: nodes.document) -> None:
    """``doctree-read``: an id on each row of the glossary table, from its first cell."""
    for table in doctree.findall(nodes.table):
        if TABLE_CLASS not in table["classes"]:
            continue
        for tbody in table.findall(nodes.tbody):
            for row in tbody.findall(nodes.row):
                entry = row.next_node(nodes.entry)
                ident = term_id(entry.astext()) if entry is not None else ""
                if ident and ident not in doctree.ids:
                    row["ids"].append(ident)
                    doctree.ids[ident] = row
                    # a target of ``[gather](../book/glossary.md#term-gather)`` links (as anchors.py)
                    slugs = app.env.metadata[app.env.docname].setdefault("myst_slugs", {})
                    slugs.setdefault(ident, (row.line or 0, ident, entry.astext()))
