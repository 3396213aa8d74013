"""The print build's Sphinx extension (loaded only by ``book/pdf/build.py``, never by the site)."""
from __future__ import annotations


def html_handlers_for_singlehtml(app) -> None:
    """``builder-inited``: Sphinx 7.4 looks up node handlers under the builder's name and only
    falls back to its format when that name has none; sphinx-exercise 1.2.1 registers
    ``singlehtml`` handlers, so every node that other extensions register for ``html`` only
    (myst-nb's, sphinx-jupyterbook-latex's ``HiddenCellNode``) would be unknown to ``singlehtml``.
    Give ``singlehtml`` the ``html`` handlers it lacks."""
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for name, pair in handlers.get("html", {}).items():
        single.setdefault(name, pair)


def setup(app):
    app.connect("builder-inited", html_handlers_for_singlehtml)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
