"""The interactive gather explorer: a ``{gather-explorer}`` directive and its script, per page.

A page (Markdown or a notebook's Markdown cell) places an explorer with::

    ```{gather-explorer}
    :compact:
    ```

Options (all optional): ``:compact:`` (the small version: a 3 x 4 input, gather only),
``:op:`` (``gather`` or ``scatter``), ``:shape:`` (input shape, ``3,4``), ``:dim:``,
``:index-shape:`` (``3,2``) and ``:index:`` (its entries in row-major order, ``3,0,1,1,2,2``).

The directive writes a ``<div class="gather-explorer">`` with those settings as data attributes
the page's language and its words; ``book/_explorer/gather-explorer.js`` draws the explorer into it. The
script and its style sheet are added to the pages that hold an explorer only: they live outside
``book/_static``, whose every ``.js``/``.css`` Jupyter Book adds to every page.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

from . import words

STATIC = Path(__file__).resolve().parents[2] / "_explorer"  # book/_explorer
JS, CSS = "gather-explorer.js", "gather-explorer.css"
MARKER = "data-gather-explorer"
_INTS = re.compile(r"^\s*-?\d+(\s*,\s*-?\d+)*\s*$")


def _ints(name: str):
    """An option converter: a comma-separated list of integers."""
    def convert(value):
        value = (value or "").strip()
        if value and not _INTS.match(value):
            raise ValueError(f":{name}: must be integers separated by commas, like 3,4; got {value!r}")
        return ",".join(part.strip() for part in value.split(",")) if value else ""
    return convert


def _op(value):
    return directives.choice(value, ("gather", "scatter"))


class GatherExplorer(Directive):
    has_content = False
    option_spec = {
        "compact": directives.flag,
        "op": _op,
        "shape": _ints("shape"),
        "dim": directives.unchanged_required,
        "index-shape": _ints("index-shape"),
        "index": _ints("index"),
    }

    def run(self):
        env = self.state.document.settings.env
        lang = env.config.gatherbook_edition
        said = words.table(lang)
        # the script's words, in the page's language (book/words/<code>.yml: explorer)
        attrs = {MARKER: "", "data-lang": lang, "data-words": json.dumps(said["explorer"], ensure_ascii=False)}
        if "compact" in self.options:
            attrs["data-compact"] = "1"
        for key in ("op", "shape", "dim", "index-shape", "index"):
            if self.options.get(key) not in (None, ""):
                if key == "dim" and not re.match(r"^-?\d+$", self.options[key].strip()):
                    raise self.error(f":dim: must be an integer, got {self.options[key]!r}")
                attrs[f"data-{key}"] = str(self.options[key]).strip()
        text = " ".join(f'{k}="{html.escape(v, quote=True)}"' if v else k for k, v in attrs.items())
        markup = (f'<div class="gather-explorer" {text}>'
                  f'<noscript><p>{html.escape(said["explorer_noscript"])}</p></noscript></div>')
        return [nodes.raw("", markup, format="html")]


def has_explorer(doctree) -> bool:
    return doctree is not None and any(
        MARKER in node.astext() for node in doctree.findall(nodes.raw))


def page_context(app, doctree) -> None:
    if has_explorer(doctree):
        # added during html-page-context: on this page only (Sphinx's add_js_file)
        app.add_css_file(CSS)
        app.add_js_file(JS)


def add_static_path(app, config) -> None:
    """``config-inited``: book/_explorer is a static folder of its own (not every page's)."""
    path = str(STATIC)
    if path not in config.html_static_path:
        config.html_static_path.append(path)
