"""The running notebook's language and device, in one place.

Every chapter's setup cell says both, once and explicitly::

    import gatherbook as gb
    dev = gb.setup(lang="en")   # the notebook's language; returns the device

so a notebook downloaded anywhere (Colab, VS Code, a Downloads folder) prints its exercise feedback
in its own language. Where no notebook said it (a script, a test), the language falls back to
``GATHERBOOK_LANG`` and then to the working folder's name (``notebooks/zh`` means Chinese).

The device is CUDA when a GPU is available, else the CPU; ``GATHERBOOK_DEVICE=cpu|cuda`` overrides.
"""
from __future__ import annotations

import os
from pathlib import Path

import torch

from gatherbook.editions import CODES as LANGUAGES, edition

LANG_ENV = "GATHERBOOK_LANG"
DEVICE_ENV = "GATHERBOOK_DEVICE"
_DEVICES = ("cpu", "cuda")

_language: str | None = None  # set by setup() / set_language()


def _checked_language(lang: object, where: str) -> str:
    return edition(lang, where).code


def set_language(lang: str | None) -> None:
    """Make ``lang`` (an edition's code, :data:`LANGUAGES`) the language of feedback; ``None`` forgets it."""
    global _language
    _language = None if lang is None else _checked_language(lang, "lang")


def language() -> str:
    """The language: set by :func:`setup`, else ``GATHERBOOK_LANG``, else the working folder's name
    when it is an edition's code (``notebooks/zh``), else the first edition's.

    Raises:
        ValueError: ``GATHERBOOK_LANG`` is set to something that is not a language of the book.
    """
    if _language is not None:
        return _language
    wanted = os.environ.get(LANG_ENV, "").strip()
    if wanted:
        if wanted.lower() not in LANGUAGES:
            _checked_language(os.environ[LANG_ENV], LANG_ENV)
        return wanted.lower()
    folder = Path.cwd().name
    return folder if folder in LANGUAGES else LANGUAGES[0]


def resolve(lang: str | None = None) -> str:
    """``lang`` itself when it is a language of the book; :func:`language` when it is ``None``.

    Raises:
        ValueError: ``lang`` is anything else.
    """
    return language() if lang is None else _checked_language(lang, "lang")


def device() -> torch.device:
    """Return the device every notebook of the book uses.

    CUDA when a GPU is available, otherwise the CPU. ``GATHERBOOK_DEVICE`` (``cpu`` or ``cuda``)
    overrides the choice; asking for ``cuda`` on a machine without a usable GPU is an error rather
    than a silent fallback.

    Raises:
        ValueError: ``GATHERBOOK_DEVICE`` holds something other than ``cpu`` or ``cuda``,
            or asks for ``cuda`` where none is available.

    Introduced in Chapter 1.
    """
    wanted = os.environ.get(DEVICE_ENV, "").strip().lower()
    if wanted == "":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if wanted not in _DEVICES:
        raise ValueError(
            f"{DEVICE_ENV}={os.environ[DEVICE_ENV]!r} is not a device this book knows; "
            f"expected one of {', '.join(_DEVICES)} (or leave it unset to pick CUDA when available)."
        )
    if wanted == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"{DEVICE_ENV}=cuda, but torch.cuda.is_available() is False on this machine "
            f"(torch {torch.__version__}); unset {DEVICE_ENV} or set it to 'cpu'."
        )
    return torch.device(wanted)


def setup(lang: str) -> torch.device:
    """A notebook's setup: set its language (``"en"``, ``"zh"`` ...) and return its device.

    Raises:
        ValueError: ``lang`` is not a language of the book, or ``GATHERBOOK_DEVICE`` is invalid.

    Introduced in Chapter 1.
    """
    set_language(_checked_language(lang, "lang"))
    __import__("gatherbook.figures.style").figures.style.use_book_format()  # 2x PNG figures (h19)
    return device()
