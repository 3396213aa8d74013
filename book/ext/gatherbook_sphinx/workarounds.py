"""Workarounds for the tools the site is built with, each named with the version it works around.

When an upstream fix arrives (the versions are pinned in requirements.txt), delete the function
and its line in ``setup()`` (``__init__.py``); the site tests say whether the symptom is back.
"""
from __future__ import annotations

import html
import logging
import re
import shutil
from pathlib import Path

from docutils import nodes


def drop_duplicate_scripts(scripts: list) -> None:
    """Keep one copy of each ``<script>`` (in place).

    Sphinx 7.4.7 writes an inline script added by an extension after the builder started twice
    (``None`` vs ``''`` file name; fixed upstream in sphinx-doc/sphinx#13402, Sphinx 8.2): the
    second ``const THEBE_JS_URL = ...`` of sphinx-thebe is a SyntaxError in every reader's console.
    """
    seen, kept = set(), []
    for js in scripts:
        key = (getattr(js, "filename", js) or "", getattr(js, "priority", None),
               tuple(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(js)
    scripts[:] = kept


def relabel_print_button(buttons: list, label: str) -> int:
    """Give sphinx-book-theme's print button (``window.print()``) ``label`` as text and tooltip.

    sphinx-book-theme 1.3.0 labels it ``.pdf``, as if it were a file to download; it opens the
    browser's print dialog. Returns how many buttons were relabelled (the menu nests groups).
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


def quiet_jieba(app) -> None:
    """jieba 0.42.1 (the Chinese search index's word cutter) logs four lines of its own start-up
    in the middle of the build's output; keep only its warnings."""
    try:
        import jieba
    except ImportError:
        return
    jieba.setLogLevel(logging.WARNING)


_REDIRECT = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0; url={url}">
<title>{title}</title>
<link rel="canonical" href="{url}">{icon}
</head>
<body><p><a href="{url}">{title}</a></p></body>
</html>
"""


def write_index_redirect(app, exception) -> None:
    """``index.html`` -> the root page as a complete page (language, title, icon).

    sphinx-external-toc 1.0.1 writes a one-line redirect without ``<html lang>`` or ``<title>``
    unless the file exists; this runs before it (priority 400 < its 500), so it keeps this one.
    """
    from .editions import this_edition

    if exception is not None or app.builder.name != "html" or app.config.root_doc == "index":
        return
    favicon = app.config.html_favicon
    icon = ""
    if favicon and "://" not in favicon:
        icon = f'\n<link rel="icon" href="_static/{html.escape(Path(favicon).name)}">'
    url = html.escape(f"{app.config.root_doc}.html")
    # the book's title (_config.yml's title is Sphinx's html_title; its project stays Jupyter
    # Book's "Project name not set", which this page showed as its title)
    title = html.escape(app.config.html_title or app.config.project)
    Path(app.outdir, "index.html").write_text(_REDIRECT.format(
        lang=this_edition(app).tag, url=url, title=title, icon=icon),
        encoding="utf8")


#: Files the themes copy into ``_static`` that no page uses (globs relative to ``_static``).
UNUSED_STATIC = (
    # pydata-sphinx-theme 0.17.1 ships source maps (3.4 MB) next to its scripts and styles;
    # browsers fetch them only for their developer tools
    "**/*.map",
    # sphinx-book-theme 1.3.0 copies its gettext catalogs (.po/.mo of 46 languages, 0.7 MB)
    # into _static; Sphinx reads them from the package, no page loads them
    "locales",
    # pydata-sphinx-theme 0.17.1's Font Awesome: the .ttf fallbacks of the woff2 fonts, which
    # every browser the theme supports reads instead
    "vendor/fontawesome/webfonts/*.ttf",
)


def prune_unused_static(app, exception) -> None:
    """``build-finished``: delete :data:`UNUSED_STATIC` from the output's ``_static``."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for pattern in UNUSED_STATIC:
        for path in static.glob(pattern):
            if path.is_dir():
                shutil.rmtree(path)
            elif path.is_file():
                path.unlink()


def html_handlers_for_singlehtml(app) -> None:
    """``builder-inited`` (the print's ``singlehtml`` build, book/pdf/build.py): Sphinx 7.4 looks
    up node handlers under the builder's name and only falls back to its format when that name
    has none; sphinx-exercise 1.2.1 registers ``singlehtml`` handlers, so every node that other
    extensions register for ``html`` only (myst-nb's, sphinx-jupyterbook-latex's
    ``HiddenCellNode``) would be unknown to ``singlehtml``. Give ``singlehtml`` the ``html``
    handlers it lacks. (It was the print's own extension, book/pdf/gatherbook_print.py: issue 34.)"""
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for name, pair in handlers.get("html", {}).items():
        single.setdefault(name, pair)


# myst-nb 1.4.0 names a hidden cell part's <summary> "Toggle hidden content" whatever it shows
# ("Show the output (it gives the answer)"): a name without the words it shows (axe-core's
# label-content-name-mismatch, serious). Without the label the summary is named by its words.
_TOGGLE_LABEL = '<summary aria-label="Toggle hidden content">'


def summaries_named_by_their_words(context: dict) -> None:
    """``html-page-context``: myst-nb's hidden-cell summaries lose their fixed aria-label."""
    if isinstance(context.get("body"), str) and _TOGGLE_LABEL in context["body"]:
        context["body"] = context["body"].replace(_TOGGLE_LABEL, "<summary>")


# sphinxext-opengraph 0.13.0 writes a page's description from its text, a leaf of the doctree at a
# time, joined by a space unless the next starts with ASCII punctuation, with ":" after a heading
# and "," after a list item. Written for English: around inline code and emphasis in Chinese it
# leaves "位置 。", "元素， torch.gather", "规则: gather", "；, 在", "要 写入 的", and in both
# languages "( book/cheatsheet/en.py)"; and "a(B, A) table" (inline code that starts with "("
# loses the space before it: the page's own text, where it has one, tells it from a call). And with no site
# address (ogp_site_url, while html.baseurl is "") its og:url is the page's path from the
# edition's root, which a reader of the tag resolves against the page's own address: a wrong page.
_OGP_DESCRIPTION = re.compile(r'(<meta (?:property="og:description"|name="description") content=")([^"]*)(")')
_OGP_RELATIVE_URL = re.compile(r'<meta property="og:url" content="(?![a-z][a-z0-9+.-]*:)[^"]*" />\n?')
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_FULL_WIDTH_PUNCT = "，。、；：！？"
_DESCRIPTION_FIXES = (
    (re.compile(f"(?<=[{_FULL_WIDTH_PUNCT}])[,:.]"), ""),  # a list's or heading's mark after "；"
    (re.compile(f"(?<=[{_HAN}]):"), "："),  # a Chinese heading's colon
    (re.compile(f"(?<=[{_HAN}]),"), "，"),  # a Chinese list item's comma
    (re.compile(f" +(?=[{_FULL_WIDTH_PUNCT}）」』”》】])"), ""),
    (re.compile(f"(?<=[{_FULL_WIDTH_PUNCT}（「『“《【]) +"), ""),
    (re.compile(r"(?<=[(\[]) +"), ""),
    (re.compile(r" +(?=[)\]])"), ""),
    (re.compile(f"(?<=[{_HAN}]) +(?=[{_HAN}])"), ""),  # "要 写入 的" (emphasis): Chinese has no spaces
)
_ELLIPSIS = "..."  # the extension's mark of a description cut at ogp_description_length


_GLUED_BRACKET = re.compile(r"(\w+)\((?=([^\s()]{1,8}))")  # "a(B, A)": a word, then "(" and what follows


_CUT_AT = re.compile(f"[\\s{_FULL_WIDTH_PUNCT}]")  # where a cut description may end: a space, or after "，"
_CUT_BACK = 30  # characters a cut may move back to end at a word (or a Chinese clause)


def tidy_description(text: str, page_text: str = "", leads: tuple[str, ...] = ()) -> str:
    """``text`` (a description as sphinxext-opengraph writes it) without its joins' typos;
    ``page_text``, the page's own text (whitespace collapsed), tells "a (B, A)" from a call;
    ``leads``, the page's bold lead-in paragraphs ("What you will learn"), get the colon the
    list after them needs. A cut description ends at a word, or after a Chinese comma."""
    cut = text.endswith(_ELLIPSIS)
    if cut:
        text = text[: -len(_ELLIPSIS)]
        ends = [m.end() for m in _CUT_AT.finditer(text, max(0, len(text) - _CUT_BACK))]
        if ends:
            text = text[: ends[-1]].rstrip(" ,:;" + _FULL_WIDTH_PUNCT)
    for lead in leads:
        text = text.replace(lead + " ", lead + ": ", 1)
    for pattern, replacement in _DESCRIPTION_FIXES:
        text = pattern.sub(replacement, text)

    def spaced(m: re.Match) -> str:
        word, after = html.unescape(m[1]), html.unescape(m[2])
        apart = f"{word} ({after}" in page_text and f"{word}({after}" not in page_text
        return f"{m[1]} (" if apart else m[0]

    if page_text:
        text = _GLUED_BRACKET.sub(spaced, text)
    return text.rstrip() + (_ELLIPSIS if cut else "")


def _lead_in(p: nodes.paragraph) -> bool:
    """A paragraph of one bold run ("What you will learn"; the doctree has empty text around it)."""
    parts = [c for c in p.children if not (isinstance(c, nodes.Text) and not c.astext().strip())]
    return len(parts) == 1 and isinstance(parts[0], nodes.strong)


def tidy_opengraph_tags(context: dict, doctree=None) -> None:
    """``html-page-context``, after sphinxext-opengraph's: its descriptions tidied (against the
    page's own text, ``doctree``), and its relative og:url left out."""
    tags = context.get("metatags")
    if not isinstance(tags, str) or "og:" not in tags:
        return
    page_text, leads = "", ()
    if doctree is not None:
        page_text = " ".join(doctree.astext().split())
        leads = tuple(html.escape(p.astext(), quote=True) for p in doctree.findall(nodes.paragraph) if _lead_in(p))
    tags = _OGP_DESCRIPTION.sub(lambda m: m[1] + tidy_description(m[2], page_text, leads) + m[3], tags)
    context["metatags"] = _OGP_RELATIVE_URL.sub("", tags)


#: Sphinx's pages made from no source: a search result that lands there answers nothing
NOT_FOR_SEARCH_ENGINES = ("search", "genindex")
_NOINDEX = '<meta name="robots" content="noindex" />\n'


def not_for_search_engines(pagename: str, context: dict) -> None:
    """``html-page-context``: the search page and the general index ask search engines not to
    list them (their own results are the book's pages)."""
    if pagename in NOT_FOR_SEARCH_ENGINES:
        context["metatags"] = (context.get("metatags") or "") + _NOINDEX
