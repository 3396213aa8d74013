"""The editions of the book, in one table: every other place reads the languages from here.

The build (``book/build.py``), the Sphinx extension (``book/ext/gatherbook_sphinx``), the
runtime (the languages a notebook may state) and the tests read :data:`EDITIONS`. Adding a language is one row here,
plus the files CONTRIBUTING.md lists under "Adding a language" (its notebooks, its TOC, its
config override, its words in ``book/words/<code>.yml``, ``book/locales``, the checker's words).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Edition:
    """One language edition of the book.

    Attributes:
        code: the short code: folder names (``notebooks/<code>/``, ``book/<code>/``), the site's
            ``<site>/<code>/``, ``gb.setup(lang=<code>)``.
        tag: the BCP 47 tag of ``<html lang>`` and ``hreflang`` (``zh-CN``).
        name: the language's name in itself, as the language switch shows it.
        toc: the edition's table of contents, relative to the repository root.
        config: the YAML merged over ``_config.yml`` for this edition (``None``: none).
        cjk_titles: exercise titles in full-width brackets, 「练习 1.1（…）」, and solution titles
            in Chinese order, 「练习 1.1（…）的解答」 (book/ext/gatherbook_sphinx/titles.py).
    """

    code: str
    tag: str
    name: str
    toc: str
    config: str | None = None
    cjk_titles: bool = False


EDITIONS: tuple[Edition, ...] = (
    Edition("en", "en", "English", "_toc.yml"),
    Edition("zh", "zh-CN", "中文", "_toc_zh.yml", "book/zh/config.yml", cjk_titles=True),
)

#: The codes, in book order (the first is the default).
CODES: tuple[str, ...] = tuple(e.code for e in EDITIONS)


def edition(code: object, what: str = "lang") -> Edition:
    """The edition whose code is ``code``.

    Raises:
        ValueError: ``code`` is not an edition's code (the message names ``what`` was given).
    """
    for e in EDITIONS:
        if e.code == code:
            return e
    raise ValueError(f"{what}={code!r} is not a language of this book; expected one of {', '.join(CODES)}.")

