"""Links to a place inside another notebook: ``[Myths about gather](06_pitfalls_performance.ipynb#myths)``.

The target cell starts with an HTML anchor, ``<a id="myths"></a>``, which JupyterLab and GitHub
follow as it is. myst-parser 3.0.1 resolves ``doc.ipynb#name`` only against the heading slugs it
recorded for ``doc`` (``env.metadata[doc]["myst_slugs"]``, filled only with
``myst_heading_anchors``), so under ``-W`` the link above failed with "local id not found". At
``doctree-read`` :func:`record_html_anchors` adds each ``<a id="..."></a>`` of the page to those
slugs, pointing at the anchor itself; the published page keeps the raw ``<a id>``, so the link
lands where it lands in JupyterLab. The link text is the reader's; a link without text gets the
title of the section that follows the anchor.
"""
from __future__ import annotations

import re

from docutils import nodes

# an anchor's opening tag with an id (or a name) and nothing else; myst-parser gives the inline
# ``<a id="myths"></a>`` as two raw nodes, ``<a id="myths">`` and ``</a>``
ANCHOR = re.compile(r"""<a\s+(?:id|name)\s*=\s*["']([A-Za-z][\w.:-]*)["']\s*>""")


def html_anchors(doctree: nodes.Node) -> list[tuple[str, nodes.raw]]:
    """Every ``<a id="..."></a>`` in ``doctree``'s raw HTML, with its node, in page order."""
    found = []
    for raw in doctree.findall(nodes.raw):
        if "html" in raw.get("format", "").split():
            found += [(m.group(1), raw) for m in ANCHOR.finditer(raw.astext())]
    return found


def _title_after(node: nodes.Node) -> str:
    section = node.next_node(nodes.section, siblings=True, ascend=True)
    title = section.next_node(nodes.title) if section is not None else None
    return title.astext() if title is not None else ""


def record_html_anchors(app, doctree: nodes.document) -> None:
    """``doctree-read``: make each HTML anchor of the page a target of ``page.ipynb#id`` links."""
    env = app.env
    anchors = html_anchors(doctree)
    if not anchors:
        return
    slugs = env.metadata[env.docname].setdefault("myst_slugs", {})
    for name, raw in anchors:
        slugs.setdefault(name, (raw.line or 0, name, _title_after(raw) or name))
