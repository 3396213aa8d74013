"""The reader-facing parts of the book's Sphinx extension (book/ext/gatherbook_sphinx), without a build."""
from __future__ import annotations

import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
from gatherbook_sphinx import downloads as reader_download  # noqa: E402
from gatherbook_sphinx import outputs as tb  # noqa: E402
from gatherbook_sphinx import search as reader_search  # noqa: E402
from gatherbook_sphinx import workarounds  # noqa: E402

TRACEBACK = """\
---------------------------------------------------------------------------
ValueError                                Traceback (most recent call last)
Cell In[33], line 1
----> 1 token_logprobs(logits, targets)

File /home/someone/gather-book/gatherbook/logprobs.py:154, in token_logprobs(logits, ids)
    153     \"\"\"
--> 154     _check(logits, ids)

File /home/someone/gather-book/gatherbook/logprobs.py:54, in _check(logits, ids)
---> 54     raise ValueError(

ValueError: ids must have shape (2, 34); got (2, 33) from /root/.venv/lib/python3.11/site-packages/torch/x.py"""


def test_traceback_keeps_header_reader_frame_and_exception():
    out = tb.reader_traceback(TRACEBACK)
    assert out.splitlines() == [
        "-" * 75,
        "ValueError                                Traceback (most recent call last)",
        "Cell In[33], line 1",
        "----> 1 token_logprobs(logits, targets)",
        "",
        tb.ELLIPSIS,
        "",
        "ValueError: ids must have shape (2, 34); got (2, 33) from torch/x.py",
    ]


def test_traceback_without_frames_only_loses_paths():
    text = "UserWarning: /work/main/gatherbook/draw.py:12: something"
    assert tb.reader_traceback(text) == "UserWarning: gatherbook/draw.py:12: something"


def test_bigrams_cover_every_pair_of_chinese_characters():
    assert reader_search.bigrams("gather 之书：对数概率") == ["之书", "对数", "数概", "概率"]
    assert reader_search.bigrams("no Chinese here") == []


def test_the_chinese_indexer_keeps_the_latin_words_of_its_own_edition_in_a_set(monkeypatch):
    # Sphinx 7.4 scanned a list of every Latin word so far for each word it stemmed
    # (search.LatinTerms); each indexer's words are its own, and stemming is unchanged.
    # (Without jieba's Chinese words: loading its dictionary takes a second.)
    from sphinx.search import zh

    monkeypatch.setattr(zh, "JIEBA", False)
    first, second = reader_search.SearchChineseWithBigrams({}), reader_search.SearchChineseWithBigrams({})
    assert first.stem("ids") == "id"
    assert "gather" in first.split("用 gather 按 ids 取值")
    assert isinstance(first.latin_terms, set) and {"gather", "ids"} <= first.latin_terms
    assert not second.latin_terms
    assert first.stem("ids") == "ids"  # a word of the text, too short once stemmed: kept whole
    assert first.stem("indices") == "indic" and second.stem("ids") == "id"


def test_print_button_is_relabelled_inside_groups():
    buttons = [{"type": "group", "buttons": [{"type": "link", "text": ".ipynb"},
                                             {"type": "javascript", "javascript": "window.print()",
                                              "text": ".pdf", "tooltip": "列印成 PDF"}]}]
    assert workarounds.relabel_print_button(buttons, "打印为 PDF…") == 1
    assert buttons[0]["buttons"][1]["text"] == buttons[0]["buttons"][1]["tooltip"] == "打印为 PDF…"


def test_zip_is_the_same_bytes_each_time_and_holds_one_folder(tmp_path):
    a, b = tmp_path / "a.zip", tmp_path / "b.zip"
    names = reader_download.write_zip(ROOT, a)
    reader_download.write_zip(ROOT, b)
    assert a.read_bytes() == b.read_bytes()
    assert names and all(n.startswith("gather-book/") for n in names)
    with zipfile.ZipFile(a) as zf:
        assert "gather-book/requirements.txt" in zf.namelist()


def test_repository_sentence_only_when_one_is_configured(tmp_path):
    assert "git clone https://example.org/r" in reader_download.repository_text("https://example.org/r", "en")
    assert "git clone" not in reader_download.repository_text("", "zh")
    (tmp_path / "_config.yml").write_text("title: x\n")
    assert reader_download.configured_repository(tmp_path) == ""
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://example.org/r\n")
    assert reader_download.configured_repository(tmp_path) == "https://example.org/r"


def test_an_editions_index_page_is_titled_with_the_books_title(tmp_path):
    """The edition's index.html (a redirect to its landing page) shows the book's title, not
    Jupyter Book's "Project name not set" (its ``project``; the title is ``html_title``)."""
    from types import SimpleNamespace

    config = SimpleNamespace(html_favicon="", root_doc="book/zh/intro", html_title="gather 之书",
                             project="Project name not set", gatherbook_edition="zh")
    app = SimpleNamespace(config=config, builder=SimpleNamespace(name="html"), outdir=str(tmp_path))
    workarounds.write_index_redirect(app, None)
    page = (tmp_path / "index.html").read_text(encoding="utf8")
    assert "<title>gather 之书</title>" in page and 'lang="zh' in page
    assert "Project name not set" not in page and 'url=book/zh/intro.html"' in page


def test_a_description_keeps_the_space_the_page_has_before_a_bracket():
    """sphinxext-opengraph strips each text piece, then joins with no space before "(": "gives
    a (B, K) table" came out "gives a(B, K) table". The page's own text says which is which: a
    space it has comes back; a call, "gather(1, idx)", stays as it is."""
    page = "It gives a (B, K) table, read with x.gather(1, idx) below."
    said = "It gives a(B, K) table, read with x.gather(1, idx) bel..."
    assert workarounds.tidy_description(said, page) == "It gives a (B, K) table, read with x.gather(1, idx)..."
    assert workarounds.tidy_description("a(B, K)") == "a(B, K)"  # no page text: nothing to go by


def test_a_cut_description_ends_at_a_word_and_a_lead_in_gets_its_colon():
    """sphinxext-opengraph cuts at a character count ("every other coordin...") and joins a bold
    lead-in paragraph to the list after it with a space ("What you will learn Five minutes")."""
    cut = workarounds.tidy_description("the index value replaces the coordinate, and every other coordin...")
    assert cut == "the index value replaces the coordinate, and every other..."
    zh = workarounds.tidy_description("沿 dim 的坐标换成索引值，其余坐标就是输出元素自己的位置，本章你将学到五分钟掌...")
    assert zh == "沿 dim 的坐标换成索引值，其余坐标就是输出元素自己的位置..."
    led = workarounds.tidy_description("Its rule. What you will learn Five minutes to the rule.",
                                       leads=("What you will learn",))
    assert led == "Its rule. What you will learn: Five minutes to the rule."
    assert workarounds.tidy_description("本章你将学到 五分钟掌握规则", leads=("本章你将学到",)) == "本章你将学到：五分钟掌握规则"
