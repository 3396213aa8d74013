"""The gather book's Sphinx extension: everything the site adds to Jupyter Book, in one package.

Listed once in ``_config.yml`` (``sphinx: local_extensions: {gatherbook_sphinx: book/ext}``).
:func:`setup` below is the only place that connects events; each module holds one concern and
connects nothing itself:

- :mod:`.deepdives`: sections headed "Deep dive: " framed and folded;
- :mod:`.codelines`: each line of highlighted code in a box of its own (wraps with a hanging indent),
  inline code breakable between its tokens only;
- :mod:`.anchors`: ``page.ipynb#name`` links to an ``<a id="name"></a>`` in another notebook;
- :mod:`.glossary`: an anchor for each glossary term, and the page's description in each edition;
- :mod:`.editions`: which edition is being built (``gatherbook_edition``, the one way to learn
  it), ``<html lang>``, the language switch and the section ids it keeps the place with;
- :mod:`.search`: the Chinese search index (jieba's words and every pair of characters);
- :mod:`.downloads`: each chapter's exercises without solutions, and the "Run it yourself" zip;
- :mod:`.outputs`: published tracebacks and outputs without the building machine's paths
  (``tools/notebooks.py tidy`` uses it for the stored notebooks);
- :mod:`.explorer`: the ``{gather-explorer}`` directive and its script;
- :mod:`.mathjax`: MathJax offline, only the components the pages use;
- :mod:`.notebooks`: cells that read differently on the site and in JupyterLab (widgets);
- :mod:`.tables`: tables with a line of code stack on a phone;
- :mod:`.titles`: exercise and solution titles written the Chinese way;
- :mod:`.words`: what the site says, one table per edition;
- :mod:`.workarounds`: fixes for the tools' bugs, each naming the version it works around.

Tests and tools import it as a package (``book/ext`` on ``sys.path``; pytest's ``pythonpath``).
"""
from __future__ import annotations

from gatherbook.editions import CODES

from . import (anchors, codelines, deepdives, downloads, editions, glossary, explorer, mathjax, notebooks, outputs, search, tables, titles,
               words, workarounds)

__all__ = ["anchors", "codelines", "deepdives", "downloads", "editions", "glossary", "explorer", "mathjax", "notebooks", "outputs", "search", "tables", "titles", "words",
           "workarounds", "setup"]


def on_page_context(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """``html-page-context``, before the themes' own (priority 501 and on), which render the
    header's templates (the language switch) with what is in the context then."""
    if isinstance(context.get("script_files"), list):
        workarounds.drop_duplicate_scripts(context["script_files"])
    editions.page_context(app, pagename, context)


def before_opengraph(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """``html-page-context``, before sphinxext-opengraph's (priority 500), which writes a page's
    ``<meta name="description">`` and Open Graph tags from its opening prose."""
    glossary.page_description(app, context, doctree)


def on_page_context_late(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """``html-page-context``, after sphinx-book-theme has made its header buttons (priority 501)."""
    workarounds.relabel_print_button(context.get("header_buttons", []),
                                     words.of(app)["print_label"])
    titles.no_space_before_full_width_bracket(app, context)
    search.page_context(app, pagename)
    codelines.page_context(app, context)
    workarounds.summaries_named_by_their_words(context)
    explorer.page_context(app, doctree)
    workarounds.tidy_opengraph_tags(context, doctree)
    workarounds.not_for_search_engines(pagename, context)


def setup(app):
    app.setup_extension("sphinx_exercise")
    app.add_config_value(editions.CONFIG, CODES[0], "html")
    app.add_directive("gather-explorer", explorer.GatherExplorer)
    app.add_post_transform(titles.ChineseExerciseTitles)
    app.add_post_transform(titles.PuzzleSolutionTitles)
    app.add_enumerable_node(titles.puzzle_node, notebooks.PUZZLE, None, **titles.PUZZLE_WRITERS)
    app.add_post_transform(deepdives.DeepDiveSections)
    app.add_post_transform(tables.CodeTables)
    app.add_node(deepdives.deep_dive_fold, html=deepdives.HTML, **deepdives.OTHER_WRITERS)
    app.add_js_file("gatherbook.js")  # every page: the switch keeps the place; tooltips go after a click
    search.register()

    app.connect("config-inited", editions.check_edition)
    app.connect("config-inited", titles.puzzle_numfig)  # after sphinx-exercise's numfig (connected first)
    app.connect("config-inited", explorer.add_static_path)
    app.connect("config-inited", downloads.add_repository_substitution)
    app.connect("config-inited", mathjax.set_path)
    app.connect("builder-inited", workarounds.quiet_jieba)
    app.connect("builder-inited", codelines.use_line_formatter)
    app.connect("builder-inited", workarounds.html_handlers_for_singlehtml)  # the print's build
    app.connect("builder-inited", editions.read_other_tocs)
    app.connect("builder-inited", downloads.write_downloads)
    app.connect("source-read", notebooks.site_sources)
    app.connect("doctree-read", titles.mark_puzzles)  # before Sphinx numbers them (env-get-updated)
    app.connect("doctree-read", editions.add_position_ids)
    app.connect("doctree-read", outputs.rewrite_tracebacks)
    app.connect("doctree-read", anchors.record_html_anchors)
    app.connect("doctree-read", glossary.term_anchors)
    app.connect("html-page-context", before_opengraph, priority=499)
    app.connect("html-page-context", on_page_context, priority=500)
    app.connect("html-page-context", on_page_context_late, priority=600)
    app.connect("build-finished", workarounds.write_index_redirect, priority=400)
    app.connect("build-finished", mathjax.copy_components)
    app.connect("build-finished", workarounds.prune_unused_static)
    app.connect("build-finished", downloads.sources_without_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
