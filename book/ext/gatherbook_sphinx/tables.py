"""Tables whose cells hold a line of code read whole on a phone.

Chapter 1's use-case table puts a whole line (``q.gather(1, actions.unsqueeze(1)).squeeze(1)``)
in one of three columns: at 390 px that column is a few characters wide, and the line broke
inside identifiers. A table with an inline literal of :data:`LONG_CODE` characters or more gets
the class :data:`CLASS`; ``book/_static/gatherbook.css`` stacks such a table on a phone (each row
a block, its cells one under the other, code breaking only at its spaces). Wider screens keep
the table as it is.
"""
from __future__ import annotations

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

CLASS = "gb-code-table"
LONG_CODE = 28  # characters of one inline literal: more than a third of a phone's column


def has_long_code(table: nodes.table, at_least: int = LONG_CODE) -> bool:
    return any(len(lit.astext()) >= at_least for entry in table.findall(nodes.entry)
               for lit in entry.findall(nodes.literal))


class CodeTables(SphinxPostTransform):
    """Mark every table with a long line of inline code (:data:`CLASS`)."""

    default_priority = 45
    formats = ("html",)

    def run(self) -> None:
        for table in self.document.findall(nodes.table):
            if has_long_code(table) and CLASS not in table["classes"]:
                table["classes"].append(CLASS)
