"""What every page of the gather book adds for its readers (set up by ``gatherbook_site``).

- ``gatherbook.js`` on every page (the language switch keeps the place; tooltips go away after
  a click), ``gatherbook-search.js`` on the search page (Chinese words and phrases, hits that
  lead to the match);
- the download menu's ``.pdf`` entry says what it does: it opens the browser's print dialog;
- jieba's start-up lines out of the build's output;
- published tracebacks and section ids (``reader_tracebacks``, ``reader_sections``).
"""
from __future__ import annotations

import logging

# The download menu's print entry, by edition: its text and tooltip.
PRINT_LABEL = {"en": "Print to PDF…", "zh": "打印为 PDF…"}


def relabel_print_button(buttons: list, label: str) -> int:
    """Give sphinx-book-theme's print button (``window.print()``) ``label`` as text and tooltip.

    Returns how many buttons were relabelled (the menu nests groups of buttons).
    """
    count = 0
    for button in buttons:
        if button.get("type") == "group":
            count += relabel_print_button(button.get("buttons", []), label)
        elif button.get("type") == "javascript" and "print()" in button.get("javascript", ""):
            button["text"] = label
            button["tooltip"] = label
            count += 1
    return count


def on_page_context(app, pagename, templatename, context, doctree) -> None:
    lang = app.config.gatherbook_this_language
    relabel_print_button(context.get("header_buttons", []), PRINT_LABEL.get(lang, PRINT_LABEL["en"]))
    if pagename == "search":
        # before searchtools.js, which the search template adds after the page's own scripts
        app.add_js_file("gatherbook-search.js")


def quiet_jieba(app) -> None:
    """jieba (the Chinese search index's word cutter) logs four lines of its own start-up in the
    middle of the build's output; keep only its warnings."""
    try:
        import jieba
    except ImportError:
        return
    jieba.setLogLevel(logging.WARNING)


def setup(app):
    app.connect("builder-inited", quiet_jieba)
    app.add_js_file("gatherbook.js")
    # after sphinx-book-theme's add_header_buttons (priority 501)
    app.connect("html-page-context", on_page_context, priority=600)
    app.setup_extension("reader_tracebacks")
    app.setup_extension("reader_sections")
    app.setup_extension("reader_search")
    app.setup_extension("reader_download")
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "0.1"}
