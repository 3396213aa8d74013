"""What the site says, one table per edition: ``book/words/<code>.yml``.

Every edition's table has the same keys (``tests/unit/test_sphinx_words.py``); a missing word is an
error, never a silent fall back to English. The themes' own strings stay in
``book/locales/<locale>/LC_MESSAGES/sphinx.po``.
"""
from __future__ import annotations

import functools
from pathlib import Path

import yaml

from gatherbook.editions import CODES, edition

FOLDER = Path(__file__).resolve().parents[2] / "words"  # book/words


@functools.cache
def table(code: str) -> dict[str, str]:
    """The words of edition ``code`` (``book/words/<code>.yml``).

    Raises:
        ValueError: ``code`` is not an edition of the book.
        FileNotFoundError: the edition has no words file.
    """
    edition(code)
    with open(FOLDER / f"{code}.yml", encoding="utf8") as f:
        return dict(yaml.safe_load(f) or {})


def all_tables() -> dict[str, dict[str, str]]:
    return {code: table(code) for code in CODES}


def of(app) -> dict[str, str]:
    """The words of the edition a Sphinx build makes."""
    from .editions import this_edition

    return table(this_edition(app).code)


def keys(table_: dict, prefix: str = "") -> set[str]:
    """The keys of a words table, nested ones as ``explorer.size``."""
    found = set()
    for key, value in table_.items():
        found |= keys(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key}
    return found
