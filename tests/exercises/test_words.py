"""The words files (gatherbook/words/<code>.yml): every edition has the same keys, key for key, with
the same placeholders; every declaration has its words there, and nothing else is there."""
from __future__ import annotations

import re
import string

import pytest

from gatherbook.editions import CODES
from gatherbook.exercises import get, names
from gatherbook.exercises.words import table


def _keys(tree, path=()):
    """Every leaf of a words file, as ``(path, placeholders)``."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _keys(value, (*path, str(key)))
    elif isinstance(tree, list):
        yield path, len(tree)
    else:
        text = "" if tree is None else str(tree)
        yield path, frozenset(f for _, f, _, _ in string.Formatter().parse(text) if f)


@pytest.mark.parametrize("code", CODES[1:])
def test_every_edition_has_the_first_editions_keys_and_placeholders(code):
    first, other = dict(_keys(table(CODES[0]))), dict(_keys(table(code)))
    # the words that translate the code's own (English comments and shape conditions) are per edition
    own = {("practice", "comments"), ("practice", "conditions")}
    first = {k: v for k, v in first.items() if k[:2] not in own}
    other = {k: v for k, v in other.items() if k[:2] not in own}
    assert set(first) == set(other), set(first) ^ set(other)
    assert {k for k in first if first[k] != other[k]} == set()


@pytest.mark.parametrize("code", CODES)
def test_every_declaration_has_its_words_and_no_words_are_left_over(code):
    words = table(code)["exercises"]
    assert set(words) == set(names()), set(words) ^ set(names())
    for name in names():
        ex, own = get(name), words[name]
        assert own["title"], name
        assert set(own.get("hints", {})) == {m.key for m in ex.mistakes}, name
        assert set(own.get("rules", {})) == {r.key for r in ex.rules}, name
        if ex.spec is not None:
            assert own["task"] and own["why"], name


#: Markdown emphasis, ``*word*``, outside code spans (not ``a * b``, ``gamma**2``, ``B*C``)
EMPHASIS = re.compile(r"(?<![A-Za-z0-9_*])\*(?=[^\s*])[^*\n]*?(?<=[^\s*])\*(?![A-Za-z0-9_*])")


def _plain_texts(words):
    """The words a check prints as plain text: the checker's sentences, the hints and the rules."""
    yield from (("checker", k, v) for k, v in words["checker"].items())
    for name, entry in words["exercises"].items():
        for part in ("hints", "rules"):
            yield from ((name, k, v) for k, v in (entry.get(part) or {}).items())


@pytest.mark.parametrize("code", CODES)
def test_words_printed_as_plain_text_carry_no_markdown_emphasis(code):
    """A trial learner saw "*第一个*" with its asterisks: a check's message is plain text."""
    found = [(name, key, text) for name, key, text in _plain_texts(table(code))
             if EMPHASIS.search(re.sub(r"`[^`]*`", "", str(text)))]
    assert not found, found
    assert EMPHASIS.search("ties go to the *first* position") and EMPHASIS.search("取 *第一个* 位置")
    assert not EMPHASIS.search("0 * -inf is nan, b * K ... b * K + K - 1, gamma**2, B*C")


@pytest.mark.parametrize("code", CODES)
def test_no_words_keep_a_doubled_quote(code):
    """``''`` is YAML's quote inside a single-quoted string only: in a plain (unquoted) value
    it stays two quotes on the page (``the expert''s buffer``)."""
    def strings(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                yield from strings(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from strings(v, f"{path}.{i}")
        elif isinstance(node, str):
            yield path, node
    assert [p for p, s in strings(table(code), code) if "''" in s] == []
