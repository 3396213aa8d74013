"""Local Sphinx extension of the gather book.

Each language is its own Sphinx build (see ``book/build.py``); the two are published side by
side as ``<site>/en/...`` and ``<site>/zh/...``. This extension gives every page:

- ``<html lang>`` as a BCP 47 tag (``en``, ``zh-CN``) instead of Sphinx's ``zh_CN``;
- a link to the same page in the other language (``language-switch.html`` renders it);
- the exercise notebooks without solutions, generated before the sources are read so that
  the chapter's ``{download}`` role finds them (``exercise_download.py``);
- in the Chinese edition, no stray space where a source line breaks inside a Chinese sentence
  (``join_cjk_lines``);
- an ``index.html`` that redirects to the landing page as a complete page (language, title,
  icon), instead of sphinx-external-toc's one-line redirect.
"""
from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import yaml
from docutils import nodes

sys.path.insert(0, str(Path(__file__).parent))
import exercise_download  # noqa: E402

# language code of the build -> (BCP 47 tag, name of the language in itself)
LANG_TAGS = {"en": "en", "zh": "zh-CN"}
TOC_FILES = {"en": "_toc.yml", "zh": "_toc_zh.yml"}


def toc_docnames(toc_path: Path) -> set[str]:
    """All document names (no suffix) listed in a Jupyter Book ``_toc.yml``."""
    names: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if key in node:
                    names.add(str(Path(node[key]).with_suffix("")))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load(toc_path.read_text(encoding="utf8")))
    return names


def counterpart(pagename: str, this: str, other: str) -> str:
    """The page name of ``pagename`` in the other language: ``notebooks/en/x`` -> ``notebooks/zh/x``.

    Pages without a language folder in their path (the bilingual glossary, ``search``,
    ``genindex``) are their own counterpart.
    """
    parts = pagename.split("/")
    return "/".join(other if p == this else p for p in parts)


def _relative_to_site_root(pagename: str) -> str:
    # a page is published at <site>/<lang>/<pagename>.html
    return "../" * (pagename.count("/") + 1)


def on_builder_inited(app) -> None:
    this = app.config.gatherbook_this_language
    if this not in LANG_TAGS:
        raise ValueError(f"gatherbook_this_language={this!r}; expected one of {sorted(LANG_TAGS)}")
    srcdir = Path(app.srcdir)
    app.env.gatherbook_other_docs = {
        lang: toc_docnames(srcdir / toc) for lang, toc in TOC_FILES.items() if lang != this
    }
    exercise_download.generate_all(srcdir, this, toc_docnames(srcdir / TOC_FILES[this]))


def _drop_duplicate_scripts(scripts: list) -> None:
    """Keep one copy of each ``<script>`` (in place).

    Sphinx 7.4 writes an inline script added by an extension after the builder started twice
    (``None`` vs ``''`` file name; fixed upstream in sphinx-doc/sphinx#13402): the second
    ``const THEBE_JS_URL = ...`` of sphinx-thebe is a SyntaxError in every reader's console.
    """
    seen, kept = set(), []
    for js in scripts:
        key = (getattr(js, "filename", js) or "", getattr(js, "priority", None),
               tuple(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(js)
    scripts[:] = kept


def on_page_context(app, pagename, templatename, context, doctree) -> None:
    this = app.config.gatherbook_this_language
    if isinstance(context.get("script_files"), list):
        _drop_duplicate_scripts(context["script_files"])
    context["language"] = LANG_TAGS[this]
    switches = []
    for other, name in app.config.gatherbook_languages.items():
        if other == this:
            continue
        target = counterpart(pagename, this, other)
        known = app.env.gatherbook_other_docs.get(other, set())
        if target not in known and pagename not in ("search", "genindex"):
            # no counterpart page: offer the other edition's landing page instead
            target = "index"
        switches.append({
            "url": _relative_to_site_root(pagename) + f"{other}/{target}.html",
            "lang": LANG_TAGS[other],
            "label": name,
        })
    context["gatherbook_switches"] = switches


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
    """Write ``index.html`` -> the root page; runs before sphinx-external-toc, which then keeps it."""
    if exception is not None or app.builder.name != "html" or app.config.root_doc == "index":
        return
    favicon = app.config.html_favicon
    icon = ""
    if favicon and "://" not in favicon:
        icon = f'\n<link rel="icon" href="_static/{html.escape(Path(favicon).name)}">'
    url = html.escape(f"{app.config.root_doc}.html")
    Path(app.outdir, "index.html").write_text(_REDIRECT.format(
        lang=LANG_TAGS[app.config.gatherbook_this_language], url=url,
        title=html.escape(app.config.project), icon=icon), encoding="utf8")


# Chinese characters and full-width punctuation (CJK symbols, ideographs, full-width forms).
_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_PUNCT = "\u3000-\u303f\uff00-\uffef"
# A line break inside a paragraph becomes a space in HTML. Between two Chinese characters, or next
# to full-width punctuation, that space is wrong; between Chinese and Latin it is the space the
# style wants, so it stays.
_CJK_BREAK = re.compile(rf"(?<=[{_CJK}])[ \t]*\n[ \t]*(?=[{_CJK}])"
                        rf"|(?<=[{_PUNCT}])[ \t]*\n[ \t]*|[ \t]*\n[ \t]*(?=[{_PUNCT}])")
_VERBATIM = (nodes.FixedTextElement, nodes.literal, nodes.math, nodes.raw)


def join_cjk_text(text: str) -> str:
    """Remove the line breaks that would show as stray spaces inside Chinese text."""
    return _CJK_BREAK.sub("", text)


def join_cjk_lines(app, doctree) -> None:
    """In the Chinese edition, drop soft line breaks inside Chinese sentences (not in code or math).

    MyST makes a soft line break a text node of its own (``"\\n"``), so each text node is judged
    with the characters around it: the end of the text before it and the start of the text after.
    """
    if app.config.gatherbook_this_language != "zh":
        return
    texts = [t for t in doctree.findall(nodes.Text)
             if not any(isinstance(a, _VERBATIM) for a in _ancestors(t.parent))]
    for i, node in enumerate(texts):
        if "\n" not in node or node.parent is None:
            continue
        before = str(texts[i - 1])[-1:] if i > 0 else ""
        after = str(texts[i + 1])[:1] if i + 1 < len(texts) else ""
        joined = join_cjk_text(before + str(node) + after)
        joined = joined[len(before):len(joined) - len(after)]
        if joined != str(node):
            # by identity: Node.replace() finds the child with ==, and every "\n" node is == "\n"
            parent = node.parent
            position = next(k for k, child in enumerate(parent.children) if child is node)
            parent[position] = nodes.Text(joined)


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


def setup(app):
    app.add_config_value("gatherbook_this_language", "en", "html")
    app.add_config_value("gatherbook_languages", {"en": "English", "zh": "中文"}, "html")
    app.connect("builder-inited", on_builder_inited)
    app.connect("html-page-context", on_page_context)
    app.connect("doctree-read", join_cjk_lines)
    app.connect("build-finished", write_index_redirect, priority=400)  # etoc's runs at 500
    app.setup_extension("reader_pages")  # search, tracebacks, section ids, print label (reader_*.py)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "0.1"}
