"""The Chinese edition's search index: jieba's words, and every pair of adjacent Chinese characters.

Sphinx cuts Chinese text into words with jieba; a phrase that jieba cut into single characters
(「之书」, 「负的」) is then in no index entry, and a reader who types it finds nothing. Indexing
each pair of adjacent Chinese characters as well gives every phrase of two or more characters
entries that cover it; ``book/_static/gatherbook-search.js`` matches a typed phrase against
the entries that occur inside it. (The index grows by the number of distinct pairs in the
edition, tens of kilobytes.)
"""
from __future__ import annotations

import re

from sphinx.search.zh import SearchChinese

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")


def bigrams(text: str) -> list[str]:
    """Every pair of adjacent Chinese characters in ``text``, in order."""
    return [run[i:i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)]


class SearchChineseWithBigrams(SearchChinese):
    def split(self, input: str) -> list[str]:  # noqa: A002 - Sphinx's name
        return super().split(input) + bigrams(input)


def register() -> None:
    """Index the Chinese edition with :class:`SearchChineseWithBigrams` (Sphinx's ``zh`` slot)."""
    from sphinx.search import languages

    languages["zh"] = SearchChineseWithBigrams


def page_context(app, pagename: str) -> None:
    """The search page's own script: Chinese words and phrases, hits that lead to the match.
    Added before searchtools.js, which the search template adds after the page's own scripts."""
    if pagename == "search":
        app.add_js_file("gatherbook-search.js")
