"""The language of the running notebook: ``"en"`` or ``"zh"``.

The English and Chinese notebooks share their code cell for cell (the edition-parity tests
hold them to it), so a notebook cannot say which language it is in. The kernel can: Jupyter,
nbval and nbconvert all start it in the notebook's folder, ``notebooks/en`` or ``notebooks/zh``.
The environment variable ``GATHERBOOK_LANG`` (``en`` or ``zh``) overrides that guess, e.g.
in a downloaded exercise notebook opened from another folder.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "GATHERBOOK_LANG"
LANGUAGES = ("en", "zh")


def language() -> str:
    """Return ``"en"`` or ``"zh"``: the language feedback should be written in.

    Raises:
        ValueError: ``GATHERBOOK_LANG`` is set to something other than ``en`` or ``zh``.
    """
    wanted = os.environ.get(ENV_VAR, "").strip().lower()
    if wanted:
        if wanted not in LANGUAGES:
            raise ValueError(
                f"{ENV_VAR}={os.environ[ENV_VAR]!r} is not a language of this book; "
                f"expected one of {', '.join(LANGUAGES)}."
            )
        return wanted
    return "zh" if Path.cwd().name == "zh" else "en"


def resolve(lang: str | None = None) -> str:
    """``lang`` itself when it is ``"en"`` or ``"zh"``; :func:`language` when it is ``None``.

    Raises:
        ValueError: ``lang`` is anything else.
    """
    lang = language() if lang is None else lang
    if lang not in LANGUAGES:
        raise ValueError(f"lang={lang!r} is not a language of this book; expected one of {', '.join(LANGUAGES)}.")
    return lang


def pick(en: str, zh: str, lang: str | None = None) -> str:
    """Return ``en`` or ``zh`` according to ``lang`` (default: :func:`language`)."""
    return zh if resolve(lang) == "zh" else en
