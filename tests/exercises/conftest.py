"""Declarations made for a test: a part of its own (a chapter module written into a temporary
folder), with its words given in the test, beside or instead of the book's."""
from __future__ import annotations

import sys

import pytest

from gatherbook import exercises
from gatherbook.exercises import declaration
from gatherbook.exercises.words import table


@pytest.fixture
def words(monkeypatch):
    """``words(name, en={...}, zh={...})``: exercise ``name``'s words for this test only."""
    def put(name: str, **per_lang: dict) -> None:
        for lang, entry in per_lang.items():
            monkeypatch.setitem(table(lang)["exercises"], name, entry)
    return put


@pytest.fixture
def chapter(tmp_path, monkeypatch):
    """``chapter("ch12", code)``: make ``code`` the only part of the book, as
    ``gatherbook/exercises/ch12.py`` would be."""
    def put(part: str, code: str) -> None:
        (tmp_path / f"{part}.py").write_text(code, encoding="utf-8")
        monkeypatch.setattr(exercises, "__path__", [*exercises.__path__, str(tmp_path)])
        monkeypatch.setattr(declaration, "PARTS", {part: (part,)})
        monkeypatch.setattr(declaration, "_REGISTRY", {})
        monkeypatch.setattr(declaration, "_LOADED", {})
        monkeypatch.delitem(sys.modules, f"gatherbook.exercises.{part}", raising=False)
    return put


@pytest.fixture
def declare(monkeypatch):
    """``declare(ex)``: put the declaration ``ex`` in the registry for this test; returns its name."""
    def put(ex) -> str:
        declaration.load(ex.part)
        monkeypatch.setitem(declaration._REGISTRY, ex.name, ex)
        return ex.name
    return put
