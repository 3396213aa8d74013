"""Code that wraps honestly on a phone: each line of a highlighted block is its own box.

A phone's column holds some 40 of the book's 88 columns, so code cells and their outputs wrap
there (``book/_static/figures.css``). Wrapped as one ``pre``, each wrapped part went to column 0
and a break could fall inside a token (``manual_seed(7`` / ``))``): in Python a continuation that
starts at column 0 reads as a dedented statement (issue 38). :class:`LineFormatter` writes every
line as ``<span class="gb-line" style="--gb-indent: N">`` (N: the line's own indent in columns)
and a ``<wbr>`` after each punctuation or operator token (an arrow ``->``, a minus sign and its
number ``-5.0`` and a comment's short bracketed group ``# (B, K, V)`` kept whole), so the stylesheet can give a wrapped
line a hanging indent deeper than its own and let it break only between tokens. The line's
newline stays outside its span: copying the block (``innerText``) gives the source unchanged.

Inline code (``code.literal``) is written by Sphinx as one ``span.pre`` per word; a long word
broke anywhere, and a table's narrow column cut names (``sque|eze(-1)``, ``GATHERBOOK_D|EVICE``,
issue 38). :func:`breakable_literals` puts a ``<wbr>`` after each dot, opening bracket, comma and
``=`` inside such a word, and the stylesheet lets a word break there and at its spaces only.
"""
from __future__ import annotations

import html
import re

from pygments.formatters import HtmlFormatter

LINE_CLASS = "gb-line"
# a break opportunity after these tokens' spans: punctuation and operators (Pygments' p, o, ow)
BREAK_AFTER = re.compile(r'(<span class="(?:p|o|ow)">[^<]*</span>)')
TAG = re.compile(r"<[^>]+>")
# an arrow inside a string or comment (a docstring's ``(B, N)  ->  (B,)``): browsers may break
# after a hyphen, and ``-`` / ``>`` on two lines is no arrow
ARROW = '<span class="gb-nobreak">-&gt;</span>'
# a minus sign written against its number (``-5.0``, ``x-1``): no break after the sign, which
# on a phone left ``-`` at a line's end and ``5.0]]])`` on the next (issue 37)
SIGNED = re.compile(r'(<span class="o">-</span>)<wbr>(<span class="(?:m[a-z]?|il)">[^<]*</span>)')
# a short bracketed group in a comment, a shape such as ``# (B, K, V)``: kept on one line
COMMENT = re.compile(r'(<span class="c1?">)([^<]*)(</span>)')
SHORT_GROUP = re.compile(r"(?:^# )?(?:\([^()]{1,15}\)|\[[^\[\]]{1,15}\])")  # with the "# " it follows


def indent_of(line_html: str) -> int:
    """The number of leading spaces of a formatted line (its text without the tags)."""
    text = html.unescape(TAG.sub("", line_html))
    return len(text) - len(text.lstrip(" "))


def line_box(line_html: str) -> str:
    """One formatted line (its newline, if any, kept after the box)."""
    body = line_html.rstrip("\n")
    end = line_html[len(body):]
    body = BREAK_AFTER.sub(r"\1<wbr>", body).replace("-&gt;", ARROW)
    body = SIGNED.sub(r'<span class="gb-nobreak">\1\2</span>', body)
    body = COMMENT.sub(lambda m: m[1] + SHORT_GROUP.sub(r'<span class="gb-nobreak">\g<0></span>', m[2]) + m[3],
                       body)
    return (f'<span class="{LINE_CLASS}" style="--gb-indent: {indent_of(body)}">{body}</span>{end}')


# a word of inline code as Sphinx writes it
LITERAL_WORD = re.compile(r'(<span class="pre">)([^<]*)(</span>)')
# after a dot (not inside a number), an opening bracket, a comma or "=", before more of the word
BETWEEN_TOKENS = re.compile(r"(?:(?<=[(\[,=])|(?<=(?<![\d.])\.))(?=[^\s)\]\d.])")


def breakable_literals(body: str) -> str:
    """``body`` (a page's HTML) with a ``<wbr>`` between the tokens of each inline code word."""
    return LITERAL_WORD.sub(lambda m: m[1] + BETWEEN_TOKENS.sub("<wbr>", m[2]) + m[3], body)


def page_context(app, context: dict) -> None:
    """``html-page-context``: the page's inline code breakable between its tokens."""
    if isinstance(context.get("body"), str):
        context["body"] = breakable_literals(context["body"])


class LineFormatter(HtmlFormatter):
    """Pygments' HTML formatter with each line in a :data:`LINE_CLASS` box."""

    def wrap(self, source):
        return super().wrap((kind, line_box(text) if kind == 1 else text) for kind, text in source)


def use_line_formatter(app) -> None:
    """``builder-inited``: the HTML builders' highlighter formats with :class:`LineFormatter`."""
    for name in ("highlighter", "dark_highlighter"):
        bridge = getattr(app.builder, name, None)
        if bridge is not None and bridge.formatter is HtmlFormatter:
            bridge.formatter = LineFormatter
