"""The words of the package, one file per edition: ``gatherbook/words/<code>.yml``.

Each file holds every sentence the package shows a reader in that edition: the checker's messages
(``checker``), each exercise's and puzzle's title, task and hints under its name (``exercises``),
and the Practice pages' prose (``practice``, read by the maintainers' notebook writer). The files
have the same keys (tests/exercises/test_words.py); the code holds no language's words.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

FOLDER = Path(__file__).resolve().parent / "words"


@functools.lru_cache(maxsize=None)
def table(lang: str) -> dict[str, Any]:
    """The whole words file of edition ``lang``."""
    with open(FOLDER / f"{lang}.yml", encoding="utf8") as f:
        return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def text(lang: str, key: str, **params: Any) -> str:
    """The checker's sentence ``key`` in ``lang``, filled with ``params``."""
    return table(lang)["checker"][key].format(**params)


def of(name: str, lang: str) -> dict[str, Any]:
    """The words of exercise ``name`` in ``lang``: ``title``, ``hints``, ``rules`` (and a puzzle's
    ``task`` and ``why``)."""
    return table(lang)["exercises"][name]
