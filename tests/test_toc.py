"""Every notebook and page is in its edition's table of contents, and the TOC lists nothing missing."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from gatherbook_site import TOC_FILES, counterpart, toc_docnames  # noqa: E402

from gatherbook.editions import CODES  # noqa: E402

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


def test_chinese_line_breaks_join_without_stray_spaces():
    from gatherbook_site import join_cjk_text
    assert join_cjk_text("元素。\n本章") == "元素。本章"
    assert join_cjk_text("每一列，\n而你要") == "每一列，而你要"
    assert join_cjk_text("一个\n元素") == "一个元素"
    assert join_cjk_text("形状为\n(3, 4)") == "形状为\n(3, 4)"      # Chinese then Latin: the space stays
    assert join_cjk_text("the\nrow") == "the\nrow"                  # English is untouched
    assert join_cjk_text("返回 2 行。\n`x` 的") == "返回 2 行。`x` 的"


def test_chinese_soft_breaks_between_text_nodes_are_joined():
    """MyST gives a soft line break a text node of its own: the join must look across nodes."""
    from types import SimpleNamespace

    from docutils import nodes
    from docutils.core import publish_doctree
    from gatherbook_site import join_cjk_lines
    from myst_parser.parsers.docutils_ import Parser

    source = "长度 6\n超过了。\n元素。\n本章从一维讲到\n三维，形状为\n(3, 4)，用\n`x` 表示\n\n```\n代码\n里面\n```"
    for lang, expected in [("zh", "长度 6\n超过了。元素。本章从一维讲到三维，形状为\n(3, 4)，用\nx 表示"),
                           ("en", "长度 6\n超过了。\n元素。\n本章从一维讲到\n三维，形状为\n(3, 4)，用\nx 表示")]:
        doctree = publish_doctree(source, parser=Parser())
        join_cjk_lines(SimpleNamespace(config=SimpleNamespace(gatherbook_this_language=lang)), doctree)
        paragraph, code = list(doctree.findall(nodes.paragraph))[0], list(doctree.findall(nodes.literal_block))[0]
        assert paragraph.astext() == expected, lang
        assert code.astext().strip() == "代码\n里面"  # code is never touched
