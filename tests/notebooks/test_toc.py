"""Every notebook and page is in its edition's table of contents, and the TOC lists nothing missing."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
from gatherbook.editions import CODES, EDITIONS  # noqa: E402
from gatherbook_sphinx.editions import counterpart  # noqa: E402
from gatherbook_sphinx.editions import toc_docnames as _toc_docnames  # noqa: E402

TOC_FILES = {e.code: e.toc for e in EDITIONS}


def toc_docnames(toc_path: Path) -> set[str]:
    code = next(c for c, t in TOC_FILES.items() if ROOT / t == toc_path)
    return _toc_docnames(ROOT, code)

SHARED_PAGES = {"book/glossary"}  # bilingual pages that both editions list


def pages_on_disk(lang: str) -> set[str]:
    found = {str(p.relative_to(ROOT).with_suffix("")) for p in (ROOT / "notebooks" / lang).glob("*.ipynb")}
    found |= {str(p.relative_to(ROOT).with_suffix("")) for p in (ROOT / "book" / lang).glob("*.md")}
    return found | SHARED_PAGES


def test_toc_files_exist_for_each_edition():
    assert tuple(TOC_FILES) == CODES
    for toc in TOC_FILES.values():
        assert (ROOT / toc).is_file(), toc


def test_every_toc_entry_exists():
    for lang, toc in TOC_FILES.items():
        for doc in toc_docnames(ROOT / toc):
            assert any((ROOT / f"{doc}{ext}").is_file() for ext in (".md", ".ipynb")), (
                f"{toc} lists {doc}, which is neither {doc}.md nor {doc}.ipynb")


def test_every_page_is_in_its_toc():
    for lang, toc in TOC_FILES.items():
        listed = toc_docnames(ROOT / toc)
        missing = pages_on_disk(lang) - listed
        assert not missing, f"{toc} does not list: {sorted(missing)}"
        strays = {d for d in listed for other in CODES if other != lang and f"/{other}/" in f"/{d}/"}
        assert not strays, f"{toc} lists pages of the other edition: {sorted(strays)}"


def test_every_page_has_a_counterpart():
    first = toc_docnames(ROOT / TOC_FILES[CODES[0]])
    for other in CODES[1:]:
        assert {counterpart(d, CODES[0], other) for d in first} == toc_docnames(ROOT / TOC_FILES[other])


def test_both_tocs_list_chapters_in_the_same_order():
    def order(toc):
        text = (ROOT / toc).read_text(encoding="utf8")
        return [re.sub(rf"/({'|'.join(CODES)})/", "/*/", m) for m in re.findall(r"(?:root|file):\s*(\S+)", text)]
    assert all(order(TOC_FILES[code]) == order(TOC_FILES[CODES[0]]) for code in CODES[1:])


def test_both_editions_have_same_toc_shape():
    def shape(code):
        toc = yaml.safe_load((ROOT / TOC_FILES[code]).read_text(encoding="utf8"))
        return [(len(p["chapters"]), p.get("numbered", False)) for p in toc["parts"]]
    assert all(shape(code) == shape(CODES[0]) for code in CODES[1:])


# Chinese characters and full-width punctuation (CJK symbols, ideographs, full-width forms).
_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
# A soft line break (inside a paragraph) with Chinese on both sides: a browser or JupyterLab
# shows it as a stray space ("元素。 本章"). Between Chinese and Latin text the space is wanted.
_PUNCT = "\u3000-\u303f\uff00-\uffef"
_CJK_BREAK = re.compile(rf"[{_CJK}]\n[{_CJK}]|[{_PUNCT}]\n.|.\n[{_PUNCT}]")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_BLOCK_START = re.compile(r"^\s*(#|[-*+] |\d+[.)] |>|\||:::|```|\$\$|<)")


def soft_breaks_inside_chinese(markdown: str) -> list[str]:
    """The lines of ``markdown`` that end inside a Chinese sentence and continue on the next line
    (code blocks, math blocks, tables, list items and headings that start the next line excepted)."""
    found, in_code = [], False
    lines = markdown.split("\n")
    for line, nxt in zip(lines, lines[1:]):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code or not line.strip() or not nxt.strip() or _BLOCK_START.match(nxt) or "$$" in line:
            continue
        if _CJK_BREAK.search(line.rstrip()[-1:] + "\n" + nxt.lstrip()[:1]):
            found.append(f"{line.strip()[-30:]} / {nxt.strip()[:30]}")
    return found


def test_soft_break_detector():
    assert soft_breaks_inside_chinese("读出一个元素。\n本章") == ["读出一个元素。 / 本章"]
    assert soft_breaks_inside_chinese("形状为\n(3, 4)") == []          # Chinese then Latin: fine
    assert soft_breaks_inside_chinese("the\nrow") == []
    assert soft_breaks_inside_chinese("```\n代码\n里面\n```") == []    # code is never touched
    assert soft_breaks_inside_chinese("一段。\n- 列表") == []           # a list starts
    assert soft_breaks_inside_chinese("返回 2 行。\n`x` 的") != []      # after full-width punctuation


def test_chinese_markdown_has_no_line_break_inside_a_sentence():
    """The Chinese notebooks and pages are written without soft line breaks between Chinese
    characters, so JupyterLab and the site show no stray spaces (the site joins nothing)."""
    import nbformat

    problems = []
    for path in sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, 4).cells):
            if cell.cell_type == "markdown":
                problems += [f"{path.name} cell {i}: {p}" for p in soft_breaks_inside_chinese(cell.source)]
    for path in sorted((ROOT / "book" / "zh").glob("*.md")):
        problems += [f"{path.name}: {p}" for p in soft_breaks_inside_chinese(path.read_text(encoding="utf8"))]
    assert not problems, "\n".join(problems[:20])
