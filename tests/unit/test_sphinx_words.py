"""What the site says, one table per edition (book/words/<code>.yml): every edition has every
word, none is empty, and a missing word is an error rather than English in its place."""
from __future__ import annotations

import re

import pytest

from gatherbook.editions import CODES, EDITIONS
from gatherbook_sphinx import words

PLACEHOLDER = re.compile(r"\{(\w+)\}")


def test_every_edition_has_a_words_table():
    assert set(words.all_tables()) == set(CODES)


@pytest.mark.parametrize("code", CODES[1:])
def test_every_edition_has_every_key_of_the_first(code):
    first, other = words.keys(words.table(CODES[0])), words.keys(words.table(code))
    assert other == first, f"{code}: missing {sorted(first - other)}, extra {sorted(other - first)}"


@pytest.mark.parametrize("code", CODES)
def test_no_word_is_empty_and_placeholders_match(code):
    def flat(table, prefix=""):
        for key, value in table.items():
            yield from flat(value, f"{prefix}{key}.") if isinstance(value, dict) else [(prefix + key, value)]
    first = dict(flat(words.table(CODES[0])))
    for key, value in flat(words.table(code)):
        assert isinstance(value, str) and value.strip(), f"{code}: {key} is empty"
        assert set(PLACEHOLDER.findall(value)) == set(PLACEHOLDER.findall(first[key])), (code, key)


def test_a_missing_word_is_an_error_not_a_fallback(monkeypatch, tmp_path):
    (tmp_path / "en.yml").write_text("print_label: x\n", encoding="utf8")
    monkeypatch.setattr(words, "FOLDER", tmp_path)
    words.table.cache_clear()
    try:
        with pytest.raises(FileNotFoundError):
            words.table("zh")
        with pytest.raises(KeyError):
            words.table("en")["no_such_word"]
    finally:
        words.table.cache_clear()


def test_the_site_index_offers_every_edition_in_its_words():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("gatherbook_book_build", root / "book" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    page = build.site_index()
    assert "{{" not in page
    for e in EDITIONS:
        assert f'href="{e.code}/index.html" hreflang="{e.tag}"' in page
        assert words.table(e.code)["title"] in page and words.table(e.code)["index_choice"] in page
