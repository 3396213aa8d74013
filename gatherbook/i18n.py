"""The language of the running notebook (kept for older imports; see :mod:`gatherbook.runtime`)."""
from __future__ import annotations

from gatherbook.runtime import LANG_ENV as ENV_VAR, LANGUAGES, language, resolve

__all__ = ["ENV_VAR", "LANGUAGES", "language", "resolve", "pick"]


def pick(en: str, zh: str, lang: str | None = None) -> str:
    """Return ``en`` or ``zh`` according to ``lang`` (default: :func:`language`)."""
    return zh if resolve(lang) == "zh" else en
