"""Deep-dive sections: marked as optional, and folded on the site.

A chapter puts material a reader may skip (history, dtypes, memory internals, library internals)
in a section whose heading starts with the edition's ``deep_dive_prefix`` (``book/words``: en
``Deep dive: ``, zh ``深入：``). On the site such a section is framed and labelled
(``deep_dive_label``, "Deep dive · optional"), and everything under its heading is folded in a
``<details>`` whose summary line says so (``deep_dive_summary``). The section the italic note
names after ``deep_dive_skip`` ("*... Skip to Summary if ...*", 「…可以直接跳到「小结」。」) becomes a
link to it: the note is plain text in the notebook (JupyterLab shows the next section right below,
unfolded), the title of a later section of the page written as it is (quotes, 「」 and case as
the reader's sentence has them). ``book/_static/gatherbook.js``
opens the fold when the address's ``#id`` or a search hit lies inside it; in print
(``gatherbook.css``, ``@media print``) every fold is open.

The fold is made by a post-transform, after Sphinx has collected the page contents and numbered
the sections, so the sections inside a deep-dive still appear in the page contents and keep their
numbers (the toctree collector does not look inside other nodes).
"""
from __future__ import annotations

import re

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


def note_of(section: nodes.section) -> nodes.emphasis | None:
    """The italic note that opens a deep-dive (a paragraph that is one emphasis), or None."""
    for child in section.children:
        if isinstance(child, nodes.title):
            continue
        if isinstance(child, nodes.paragraph) and len(child.children) == 1 \
                and isinstance(child[0], nodes.emphasis):
            return child[0]
        return None
    return None


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


def link_skip_targets(section: nodes.section, note: nodes.emphasis, cue: str) -> list[str]:
    """In ``note`` (a deep-dive's italic note), link the titles of the sections after ``section``
    that follow ``cue``: the first mention of each becomes a reference to that section. Returns
    the linked ids."""
    root = section
    while root.parent is not None:
        root = root.parent
    # the sections after this one in page order, not inside it
    inside = {id(s) for s in section.findall(nodes.section)}
    order = list(root.findall(nodes.section))
    later = []
    for s in order[[id(o) for o in order].index(id(section)) + 1:]:
        title = s.next_node(nodes.title)
        if id(s) not in inside and s["ids"] and title is not None and title.parent is s:
            later.append((title.astext().strip(), s["ids"][0]))
    if not later:
        return []
    later.sort(key=lambda t: -len(t[0]))  # the longest title first ("Deep dive: x" before "x")
    # a title as a whole word (not "Summary" in "Summarys"), across a line break of the note
    pattern = re.compile(r"(?<![A-Za-z0-9_])(?:"
                         + "|".join("(" + r"\s+".join(map(re.escape, t.split())) + ")" for t, _ in later)
                         + r")(?![A-Za-z0-9_])", re.IGNORECASE)
    linked, cued = [], False
    for text in list(note.findall(nodes.Text)):
        if not isinstance(text.parent, nodes.emphasis):  # not inside code or another link
            continue
        source = str(text)
        start = 0
        if not cued:
            at = source.find(cue)
            if at < 0:
                continue
            cued, start = True, at + len(cue)
        pieces, last = [], 0
        for m in pattern.finditer(source, start):
            refid = later[m.lastindex - 1][1]
            if refid in linked:  # each section once: the place the note sends the reader to
                continue
            pieces += [nodes.Text(source[last:m.start()]),
                       nodes.reference("", "", nodes.Text(m.group(0)), internal=True, refid=refid)]
            linked.append(refid)
            last = m.end()
        if pieces:
            pieces.append(nodes.Text(source[last:]))
            parent = text.parent
            at = parent.index(text)
            parent.remove(text)
            for offset, piece in enumerate([p for p in pieces if str(p) or not isinstance(p, nodes.Text)]):
                parent.insert(at + offset, piece)
    return linked


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
                note = note_of(section)
                if note is not None:
                    link_skip_targets(section, note, words["deep_dive_skip"])


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
