"""Deep-dive sections: marked as optional, and folded on the site.

A chapter puts material a reader may skip (history, dtypes, memory internals, library internals)
in a section whose heading starts with the edition's ``deep_dive_prefix`` (``book/words``: en
``Deep dive: ``, zh ``深入：``). On the site such a section is framed and labelled
(``deep_dive_label``, "Deep dive · optional"), and everything under its heading is folded in a
``<details>`` whose summary line says so (``deep_dive_summary``). ``book/_static/gatherbook.js``
opens the fold when the address's ``#id`` or a search hit lies inside it; in print
(``gatherbook.css``, ``@media print``) every fold is open.

The fold is made by a post-transform, after Sphinx has collected the page contents and numbered
the sections, so the sections inside a deep-dive still appear in the page contents and keep their
numbers (the toctree collector does not look inside other nodes).
"""
from __future__ import annotations

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

SECTION_CLASS = "deep-dive"
FOLD_CLASS = "deep-dive-fold"


class deep_dive_fold(nodes.General, nodes.Element):
    """The folded part of a deep-dive section: ``<details>`` with a summary line."""


def prefix_of(app) -> str:
    from .words import of

    return of(app)["deep_dive_prefix"]


def is_deep_dive(section: nodes.section, prefix: str) -> bool:
    """Whether ``section``'s heading starts with ``prefix`` (whitespace around it ignored)."""
    title = section.next_node(nodes.title)
    return (title is not None and title.parent is section
            and title.astext().lstrip().startswith(prefix.strip()))


def fold(section: nodes.section, label: str, summary: str) -> deep_dive_fold:
    """Mark ``section`` as a deep-dive and move everything after its heading into a fold, except
    the italic note that opens it ("*Optional, about N min. Skip to ...*"), which stays in view:
    a reader decides from it whether to open the fold."""
    section["classes"].append(SECTION_CLASS)
    body = [c for c in section.children if not isinstance(c, nodes.title)]
    if body and isinstance(body[0], nodes.paragraph) and len(body[0].children) == 1 \
            and isinstance(body[0][0], nodes.emphasis):
        body = body[1:]
    for child in body:
        section.remove(child)
    node = deep_dive_fold(label=label, summary=summary, classes=[FOLD_CLASS])
    node.extend(body)
    section.append(node)
    return node


class DeepDiveSections(SphinxPostTransform):
    """Fold every section whose heading starts with the edition's deep-dive prefix."""

    default_priority = 40
    formats = ("html",)

    def run(self) -> None:
        from .words import of

        words = of(self.app)
        prefix = words["deep_dive_prefix"]
        for section in list(self.document.findall(nodes.section)):
            if is_deep_dive(section, prefix) and SECTION_CLASS not in section["classes"]:
                fold(section, words["deep_dive_label"], words["deep_dive_summary"])


def visit_fold_html(self, node: deep_dive_fold) -> None:
    self.body.append(
        f'<details class="{FOLD_CLASS}"><summary>'
        f'<span class="deep-dive-label">{self.encode(node["label"])}</span> '
        f'<span class="deep-dive-summary">{self.encode(node["summary"])}</span></summary>\n')


def depart_fold_html(self, node: deep_dive_fold) -> None:
    self.body.append("</details>\n")


def visit_fold_other(self, node: deep_dive_fold) -> None:
    """Builders other than HTML show the section as it is (the fold's children)."""


def depart_fold_other(self, node: deep_dive_fold) -> None:
    pass


HTML = (visit_fold_html, depart_fold_html)
#: builders other than HTML show a deep-dive as the section it is
OTHER_WRITERS = {b: (visit_fold_other, depart_fold_other) for b in ("latex", "text", "man", "texinfo")}
