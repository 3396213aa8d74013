"""A deep-dive's italic note links the section it tells the reader to skip to (issue 21).

Read from the built chapters of both editions (no browser): every folded deep-dive's note that
says "Skip to" (zh 跳到), above its fold, holds a link to a later section of the same page, and the link's text is that
section's title as the note writes it (book/ext/gatherbook_sphinx/deepdives.py).
"""
from __future__ import annotations

import html
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_helpers as sh  # noqa: E402

DEEP = re.compile(r'<section class="deep-dive" id="([^"]+)">(.*?)<details class="deep-dive-fold">', re.S)
SKIP = re.compile(r"Skip to|跳到")  # deep_dive_skip in book/words/{en,zh}.yml
LINK = re.compile(r'<a class="reference internal" href="#([^"]+)">(.*?)</a>', re.S)


def text(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def section_titles(page: str) -> list[tuple[str, int, str]]:
    """(id, position, title without its number) of every section of the page."""
    found = []
    for m in re.finditer(r'<section[^>]* id="([^"]+)">\s*(?:<span id="[^"]*"></span>\s*)*<h[1-6]>(.*?)</h[1-6]>',
                         page, re.S):
        title = re.sub(r'<span class="section-number">.*?</span>|<a class="headerlink".*?</a>', "",
                       m.group(2), flags=re.S)
        found.append((m.group(1), m.start(), text(title)))
    return found


def test_each_deep_dive_note_links_the_section_to_skip_to(site):
    problems, notes = [], 0
    for path in site["pages"]:
        if not sh.is_chapter(path):
            continue
        page = (site["path"] / path.lstrip("/")).read_text(encoding="utf8")
        sections = {sid: (pos, title) for sid, pos, title in section_titles(page)}
        for deep in DEEP.finditer(page):
            note = re.search(r"<p><em>(.*?)</em></p>", deep.group(2), re.S)
            if not note or not SKIP.search(text(note.group(1))):  # a note that sends nowhere
                continue
            notes += 1
            links = LINK.findall(note.group(1))
            if not links:
                problems.append(f"{path} #{deep.group(1)}: no link in {text(note.group(1))!r}")
            for target, words in links:
                pos, title = sections.get(target, (-1, ""))
                if pos <= deep.start() or text(words).casefold() != title.casefold():
                    problems.append(f"{path} #{deep.group(1)}: {text(words)!r} links #{target} "
                                    f"({title!r}), not a later section of that title")
    assert notes >= 20, f"only {notes} deep-dive notes found on the chapters"
    assert not problems, "\n".join(problems)
