"""The glossary's terms: an anchor for each, and a table that reads on a phone.

``book/glossary.md`` is one list-table of class ``glossary-table`` (term, 术语, definition). At
``doctree-read`` :func:`term_anchors` gives each row an id made from its English term,
``term-<term>`` (``glossary.html#term-scatter-add``), the same in both editions, so a chapter can
link a term (``[scatter_add](../../book/glossary.md#term-scatter-add)``, resolved under -W) and the
language switch keeps it. The phone layout is CSS (``gatherbook.css``: the
three columns become one block per term below 640 px).
"""
from __future__ import annotations

from docutils import nodes

TABLE_CLASS = "glossary-table"


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
