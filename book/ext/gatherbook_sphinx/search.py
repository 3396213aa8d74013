"""The Chinese edition's search index: jieba's words, and every pair of adjacent Chinese characters.

Sphinx cuts Chinese text into words with jieba; a phrase that jieba cut into single characters
(「之书」, 「负的」) is then in no index entry, and a reader who types it finds nothing. Indexing
each pair of adjacent Chinese characters as well gives every phrase of two or more characters
entries that cover it; ``book/_static/gatherbook-search.js`` matches a typed phrase against
the entries that occur inside it. (The index grows by the number of distinct pairs in the
edition, tens of kilobytes.) A page that holds one form of a synonym (独热, one-hot) is
indexed under the other too (:data:`SYNONYMS`), and a page that holds a Chinese term of the
book's glossary (词元, 图像块, 逆置换) under the English term beside it (:func:`glossary_terms`):
Chinese readers type the English terms (token, patch, inverse permutation) that the Chinese
edition translates. The indexer also keeps Sphinx 7.4's Latin words in a set
(:class:`LatinTerms`: the Chinese edition's build about 12 CPU seconds faster).
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

from sphinx.search.zh import SearchChinese

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")


# A word Chinese readers type and its other form, which the pages may use instead (独热 beside
# one-hot): a page that holds either form is indexed under both, so either query finds it.
SYNONYMS = (("独热", "one-hot"),)


def synonyms(text: str) -> list[str]:
    """The other form of each synonym ``text`` holds: 独热 for one-hot, ``one`` and ``hot`` (the
    words Sphinx makes of "one-hot") for 独热."""
    lower, found = text.lower(), []
    for chinese, latin in SYNONYMS:
        if chinese in text:
            found += re.findall(r"\w+", latin)
        if latin in lower:
            found.append(chinese)
    return found


GLOSSARY = Path(__file__).resolve().parents[2] / "glossary.md"
_ROW = re.compile(r"^\* - (?P<en>.*)\n  - (?P<zh>.*)$", re.M)
_ASIDE = re.compile(r"`[^`]*`|\([^)]*\)|（[^）]*）")  # code, and what parentheses hold
_ALTERNATIVES = re.compile(r"\s*/\s*")


@functools.lru_cache(maxsize=None)
def glossary_terms(path: Path = GLOSSARY) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The glossary's Chinese terms of two characters or more, each with the words of its English
    term: ``(("词元", ("token",)), ("逆置换", ("inverse", "permutation")), ...)``.

    Read from the list-table of ``book/glossary.md`` (a row: ``* - <term>``, ``  - <术语>``);
    a row of alternatives (``environment / state / action``, ``环境 / 状态 / 动作``) pairs them
    in order, and a row whose alternatives do not pair up is left out, as is a Chinese term of two
    runs of characters. Code and what parentheses hold are not a term's words (``dimension
    (`dim`)``, ``维度（`dim`）``), nor the Latin words the Chinese term keeps (KV 缓存: cache).
    """
    pairs = []
    for row in _ROW.finditer(path.read_text(encoding="utf8")):
        ens = _ALTERNATIVES.split(_ASIDE.sub("", row["en"]).strip())
        zhs = _ALTERNATIVES.split(_ASIDE.sub("", row["zh"]).strip())
        if len(ens) != len(zhs):
            continue
        for en, zh in zip(ens, zhs):
            chinese = _CJK_RUN.findall(zh)
            latin = set(re.findall(r"[a-z0-9]+", zh.lower()))  # KV 缓存: 缓存 is the cache
            words = tuple(w for w in re.findall(r"[a-z0-9]+", en.lower()) if w not in latin)
            if len(chinese) == 1 and words:
                pairs.append((chinese[0], words))
    return tuple(pairs)


def bigrams(text: str) -> list[str]:
    """Every pair of adjacent Chinese characters in ``text``, in order."""
    return [run[i:i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)]


class LatinTerms(set):
    """The Latin words the indexer has seen, as a set that Sphinx 7.4's ``SearchChinese`` can use.

    Workaround (Sphinx 7.4.7: Jupyter Book 1 requires sphinx~=7.0; fixed in 8.1, sphinx-doc/sphinx#12995):
    ``SearchChinese`` keeps them in a list, one class attribute shared by every instance, which
    ``split`` extends with each text's words and ``stem`` searches (``word in latin_terms``) for
    every word it stems: a scan of every Latin word occurrence of the edition so far, for each
    word. That was about 12 of the 26 CPU seconds of the Chinese edition's build (measured on an
    idle 2-core machine: 25.9 -> 14.2 s, the same searchindex.js). A set answers ``in`` alike;
    ``extend`` is the name ``split`` calls. A build makes one indexer, so its own set holds the
    words the shared list held; Sphinx 8.1 does the same.
    """

    extend = set.update


class SearchChineseWithBigrams(SearchChinese):
    def init(self, options: dict[str, str]) -> None:
        super().init(options)
        self.latin_terms = LatinTerms()  # (this instance's own: see LatinTerms)

    def split(self, input: str) -> list[str]:  # noqa: A002 - Sphinx's name
        glossary = [w for zh, words in glossary_terms() if zh in input for w in words]
        return super().split(input) + bigrams(input) + synonyms(input) + glossary


def register() -> None:
    """Index the Chinese edition with :class:`SearchChineseWithBigrams` (Sphinx's ``zh`` slot)."""
    from sphinx.search import languages

    languages["zh"] = SearchChineseWithBigrams


def page_context(app, pagename: str) -> None:
    """The search page's own script: Chinese words and phrases, hits that lead to the match.
    Added before searchtools.js, which the search template adds after the page's own scripts."""
    if pagename == "search":
        from .words import of

        # its words for "nothing found" (Sphinx's own asks for "enough categories": the site has none)
        app.add_js_file("gatherbook-search.js", **{"data-no-match": of(app)["search_no_match"]})
