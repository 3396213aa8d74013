"""The printed book and cheat sheets (``make pdf``, book/pdf/build.py).

Two kinds of tests:

- on the PDFs ``make pdf`` made (``$GATHERBOOK_PDF_DIR``, else ``_build/pdf``): page counts, the
  fonts embedded, the text extractable in each language, every chapter in order with its
  solutions, the explorer replaced, the cheat sheets on one page, the sizes. Without PDFs, or
  with PDFs older than the notebooks (an earlier ``make pdf`` left them), they are skipped
  (``make test`` runs before ``make pdf``); with ``GATHERBOOK_PDF_DIR`` set (CI, after ``make
  pdf``) a missing PDF fails and every PDF found is tested.
- on the route itself, with small fixture pages (Chromium): folds print open, and a page that
  asks for anything outside the book stops the build.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

import site_helpers as sh
from gatherbook.editions import CODES, edition

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gatherbook_pdf_build", ROOT / "book" / "pdf" / "build.py")
pdf_build = importlib.util.module_from_spec(_spec)  # book/pdf/build.py
_spec.loader.exec_module(pdf_build)

PDF_DIR_ENV = "GATHERBOOK_PDF_DIR"
BOOK_MAX_BYTES = 20 * 1024 * 1024  # each edition (12 and 15 MB now), published beside the site, not in its 15 MB
CHEATSHEET_MAX_BYTES = 1024 * 1024
POPPLER = all(shutil.which(t) for t in ("pdfinfo", "pdffonts", "pdftotext"))
needs_poppler = pytest.mark.skipif(not POPPLER, reason="poppler-utils is not installed (pdfinfo, pdffonts, pdftotext)")
# what each edition's text must hold, in that language (the glossary's terms, the exercise labels)
KEY_TERMS = {"en": ["gather", "scatter_add_", "log-probabilit", "Exercise", "Solution", "Contents"],
             "zh": ["目录", "对数概率", "索引", "维度", "练习", "解答", "词表"]}


def _dir() -> Path:
    return Path(os.environ.get(PDF_DIR_ENV, "").strip() or ROOT / "_build" / "pdf")


def _older_than_the_book(path: Path) -> bool:
    """``path`` was printed before the last change to a notebook or to the print route."""
    sources = [*ROOT.glob("notebooks/*/*.ipynb"), *(ROOT / "book" / "pdf").rglob("*")]
    return path.stat().st_mtime < max(p.stat().st_mtime for p in sources if p.is_file())


def _pdf(name: str) -> Path:
    path = _dir() / name
    if os.environ.get(PDF_DIR_ENV, "").strip():
        if not path.is_file():
            pytest.fail(f"{PDF_DIR_ENV} is set, but {path} is missing: make pdf", pytrace=False)
        return path
    if not path.is_file():
        pytest.skip(f"no {path}: run make pdf first")
    if _older_than_the_book(path):  # an earlier `make pdf` left it: it shows the book as it was
        pytest.skip(f"{path} is older than the notebooks or book/pdf/: run make pdf to test the print")
    return path


def _info(path: Path) -> dict[str, str]:
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return dict(line.split(":", 1) for line in out.splitlines() if ":" in line)


def _pages(path: Path) -> int:
    return int(_info(path)["Pages"].strip())


def _text(path: Path, *options: str) -> str:
    return subprocess.run(["pdftotext", "-enc", "UTF-8", *options, str(path), "-"], capture_output=True,
                          check=True).stdout.decode("utf8")


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _chapter_titles(code: str) -> list[str]:
    """The first heading of each notebook of the edition's TOC, in book order."""
    toc = yaml.safe_load((ROOT / edition(code).toc).read_text(encoding="utf8"))
    titles = []
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            path = ROOT / f"{chapter['file']}.ipynb"
            if path.is_file():
                nb = json.loads(path.read_text(encoding="utf8"))
                first = "".join(nb["cells"][0]["source"])
                titles.append(re.search(r"^# (.+)$", first, re.M)[1].strip())
    return titles


# ---------------------------------------------------------------------------------------------
# The PDFs make pdf made
# ---------------------------------------------------------------------------------------------

def test_a_pdf_older_than_the_notebooks_is_skipped_but_tested_in_ci(tmp_path, monkeypatch):
    """A PDF an earlier `make pdf` left behind is not the book as it is: `make test` skips it;
    after `make pdf` (GATHERBOOK_PDF_DIR set, as CI does) every PDF found is tested."""
    old = tmp_path / "book.pdf"
    old.write_bytes(b"%PDF-1.7")
    os.utime(old, (0, 0))
    monkeypatch.setitem(globals(), "_dir", lambda: tmp_path)
    monkeypatch.delenv(PDF_DIR_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="older than the notebooks"):
        _pdf("book.pdf")
    monkeypatch.setenv(PDF_DIR_ENV, str(tmp_path))
    assert _pdf("book.pdf") == old

@needs_poppler
@pytest.mark.parametrize("code", CODES)
def test_the_book_has_every_chapter_in_order(code):
    text = _squash(_text(_pdf(pdf_build.BOOK_PDF.format(code=code))))
    at = text.index(_squash(pdf_build.words(code)["contents"]))
    for title in _chapter_titles(code):
        found = text.find(_squash(title), at + 1)
        assert found > at, f"{title!r} is not in the {code} book after the one before it"
        at = found


def _page_texts(path: Path, *options: str) -> list[str]:
    return _text(path, *options).split("\f")


@needs_poppler
@pytest.mark.parametrize("code", CODES)
def test_the_contents_give_the_page_each_chapter_opens(code):
    """Each chapter's line in the contents ends with a page number, and that page opens with
    the chapter's title; the numbers grow."""
    path = _pdf(pdf_build.BOOK_PDF.format(code=code))
    pages = _page_texts(path)
    laid_out = _page_texts(path, "-layout")  # (a title and its number on one line)
    contents = next(i for i, p in enumerate(pages) if p.strip().startswith(pdf_build.words(code)["contents"]))
    numbers = []
    for title in _chapter_titles(code):
        want = _squash(title)  # (the contents and the page put its number before it: "1. ")
        line = next((ln for ln in laid_out[contents].splitlines() if want in _squash(ln)), None)
        assert line is not None, f"{title!r} is not in the contents"
        n = int(re.search(r"(\d+)\s*$", line)[1])
        assert want in _squash(pages[n - 1])[:len(want) + 6], f"page {n} does not open with {title!r}"
        numbers.append(n)
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)


@needs_poppler
def test_page_counts():
    counts = {code: _pages(_pdf(pdf_build.BOOK_PDF.format(code=code))) for code in CODES}
    for code, n in counts.items():
        assert 120 <= n <= 600, f"the {code} book has {n} pages"
    # the editions say the same: their lengths are close (Chinese text is shorter)
    assert max(counts.values()) <= 1.35 * min(counts.values()), counts


@needs_poppler
@pytest.mark.parametrize("code", CODES)
def test_the_cheat_sheet_fits_one_a4_page(code):
    info = _info(_pdf(pdf_build.CHEATSHEET_PDF.format(code=code)))
    assert info["Pages"].strip() == "1"
    width, height = (float(v) for v in re.findall(r"[\d.]+", info["Page size"])[:2])
    assert abs(width - 595.3) < 2 and abs(height - 841.9) < 2, info["Page size"]  # A4 in points


@needs_poppler
@pytest.mark.parametrize("name", [pdf_build.BOOK_PDF, pdf_build.CHEATSHEET_PDF])
@pytest.mark.parametrize("code", CODES)
def test_every_font_is_embedded(name, code):
    path = _pdf(name.format(code=code))
    out = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True, check=True).stdout
    rows = out.splitlines()[2:]
    assert rows
    not_embedded = [r for r in rows if r.split()[-5] != "yes"]
    assert not not_embedded, not_embedded
    if code == "zh" or name == pdf_build.BOOK_PDF:  # (the English book's glossary is bilingual)
        assert any("WenQuanYi" in r for r in rows), "no Chinese font embedded"


@needs_poppler
@pytest.mark.parametrize("code", CODES)
def test_the_text_can_be_copied_in_its_language(code):
    text = _text(_pdf(pdf_build.BOOK_PDF.format(code=code)))
    missing = [t for t in KEY_TERMS[code] if t not in text]
    assert not missing, f"pdftotext does not find {missing} in the {code} book"
    sheet = _text(_pdf(pdf_build.CHEATSHEET_PDF.format(code=code)))
    for line in ("out = input.gather(1, index)", "scatter_add_", "include_self=False"):
        assert line in sheet
    assert pdf_build.words(code)["cheatsheet_title"].split()[0] in sheet or "gather" in sheet


@needs_poppler
@pytest.mark.parametrize("code", CODES)
def test_solutions_print_open(code):
    """The code of every chapter's solutions (folded on the site) is in the text."""
    text = _squash(_text(_pdf(pdf_build.BOOK_PDF.format(code=code))))
    names = set()
    for nb in sorted((ROOT / "notebooks" / code).glob("0*.ipynb")):
        names |= set(re.findall(r"def (\w+_solution)\(", nb.read_text(encoding="utf8")))
    assert names
    missing = sorted(n for n in names if n not in text)
    assert not missing, f"solutions not printed: {missing[:10]}"


@needs_poppler
@pytest.mark.parametrize("code", CODES)
def test_the_explorer_is_a_picture_and_its_address(code):
    text = _squash(_text(_pdf(pdf_build.BOOK_PDF.format(code=code))))
    said = pdf_build.words(code)
    caption = said["explorer_caption"].split("{where}")[0]
    assert text.count(_squash(caption)) >= 1
    assert _squash(said["explorer_noscript"]) not in text
    assert _squash(said["explorer"]["random"]) not in text  # no dead controls


def test_the_site_address_is_the_configured_one_or_none(tmp_path, monkeypatch):
    """The print names the site's address only when _config.yml gives one (html: baseurl); the
    book has none yet, and the print invents none (issue 38)."""
    monkeypatch.setattr(pdf_build, "ROOT", tmp_path)
    (tmp_path / "_config.yml").write_text("html:\n  baseurl: ''\n", encoding="utf8")
    assert pdf_build.site_address("en", "book/en/explorer") == ("", "en/book/en/explorer.html")
    (tmp_path / "_config.yml").write_text("html:\n  baseurl: https://books.example/gather/\n", encoding="utf8")
    assert pdf_build.site_address("zh", "book/zh/intro")[0] == "https://books.example/gather/zh/book/zh/intro.html"


@needs_poppler
@pytest.mark.parametrize("code", CODES)
def test_without_an_address_the_print_names_none(code):
    """With html: baseurl empty (the site is not published), the cover has no "On the website:"
    line and no page prints a web address of the book's own: the explorer's caption names its
    page and its path on the site instead."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    if str((config.get("html") or {}).get("baseurl") or "").strip():
        pytest.skip("_config.yml gives the site's address: test_the_explorer_is_a_picture_and_its_address holds it")
    said = pdf_build.words(code)
    text = _squash(_text(_pdf(pdf_build.BOOK_PDF.format(code=code))))
    assert _squash(said["website"].split("{url}")[0]) not in text
    where = said["explorer_where_path"].split("{title}")[0]
    assert text.count(_squash(where)) >= 1, "the explorer's caption does not say where it is"
    for address in ("127.0.0.1:", "localhost", "file://", "/_build/"):
        assert address not in text, address


@pytest.mark.parametrize("code", CODES)
def test_sizes(code):
    book = _pdf(pdf_build.BOOK_PDF.format(code=code)).stat().st_size
    sheet = _pdf(pdf_build.CHEATSHEET_PDF.format(code=code)).stat().st_size
    assert book <= BOOK_MAX_BYTES, f"the {code} book is {book / 2**20:.1f} MiB"
    assert sheet <= CHEATSHEET_MAX_BYTES, f"the {code} cheat sheet is {sheet / 2**10:.0f} KiB"


def test_the_pages_link_to_the_published_pdfs():
    """The landing, "Run it yourself" and cheat sheet pages link to ``<site>/pdf/<name>``: the
    names make pdf publishes, from the edition's folder (three levels under the site's root)."""
    wanted = {f"../../../{pdf_build.PUBLISHED}/{n.format(code=c)}"
              for n in (pdf_build.BOOK_PDF, pdf_build.CHEATSHEET_PDF) for c in CODES}
    for code in CODES:
        for page in ("intro", "run", "cheatsheet"):
            text = (ROOT / "book" / code / f"{page}.md").read_text(encoding="utf8")
            links = set(re.findall(r'href="(\.\./[^"]+\.pdf)"', text))
            assert links and links <= wanted, (code, page, links - wanted)
    assert {f"{n.format(code=code)}" for n in (pdf_build.BOOK_PDF,) for code in CODES} <= {
        Path(w).name for w in wanted}


def test_publishing_puts_each_pdf_where_the_pages_link(tmp_path):
    out, site = tmp_path / "pdf", tmp_path / "site"
    out.mkdir()
    (site / "en" / "book" / "en").mkdir(parents=True)
    (site / "index.html").write_text("<html></html>", encoding="utf8")
    names = [n.format(code=c) for n in (pdf_build.BOOK_PDF, pdf_build.CHEATSHEET_PDF) for c in CODES]
    for name in names:
        (out / name).write_bytes(b"%PDF-1.4 " + name.encode())
    target = pdf_build.publish(out, site, CODES)
    page = site / "en" / "book" / "en"  # where intro.md, run.md and cheatsheet.md are published
    for name in names:
        assert (page / f"../../../{pdf_build.PUBLISHED}/{name}").resolve() == (target / name).resolve()
        assert (target / name).read_bytes() == (out / name).read_bytes()


def test_the_pages_link_a_pdf_only_once_it_is_there(tmp_path):
    """After make book alone the landing's "In print" names are text that says how to make them
    (they were links that returned 404 until make pdf: issue 38); publishing the PDFs links them."""
    out, site = tmp_path / "pdf", tmp_path / "site"
    out.mkdir()
    page = site / "en" / "book" / "en" / "intro.html"
    page.parent.mkdir(parents=True)
    (site / "index.html").write_text("<html></html>", encoding="utf8")
    links = "".join(f'<a href="../../../{pdf_build.PUBLISHED}/{n.format(code=c)}" hreflang="{c}">{c}</a> · '
                    for n in (pdf_build.BOOK_PDF, pdf_build.CHEATSHEET_PDF) for c in CODES)
    before = f'<html><body><p class="gatherbook-pdf-links">{links}</p></body></html>'
    page.write_text(before, encoding="utf8")
    site_build = importlib.util.spec_from_file_location("gatherbook_site_build", ROOT / "book" / "build.py")
    module = importlib.util.module_from_spec(site_build)
    site_build.loader.exec_module(module)
    assert module.link_pdfs(site) == 2 * len(CODES)
    assert sh.link_problems(site, ["en/book/en/intro.html"]) == []
    assert "make pdf" in page.read_text(encoding="utf8") and "<a " not in page.read_text(encoding="utf8")
    for n in (pdf_build.BOOK_PDF, pdf_build.CHEATSHEET_PDF):
        for c in CODES:
            (out / n.format(code=c)).write_bytes(b"%PDF-1.4")
    pdf_build.publish(out, site, CODES)
    assert page.read_text(encoding="utf8") == before
    assert sh.link_problems(site, ["en/book/en/intro.html"]) == []


PAPER = """<html><body><article><section id="ch"><h1>Chapter</h1>
<p>{screen}</p><p>{pointer}</p>
<div class="exercise admonition" id="ex1"><p class="admonition-title">Exercise 1.1</p></div>
<div class="cell"><div class="cell_output"><pre>… ch1.first not attempted yet: the stub raises</pre></div></div>
<div class="solution dropdown admonition" id="sol1"><p class="admonition-title">Solution 1.1</p>
<p>SOLUTIONONE</p></div>
<div class="exercise admonition" id="ex2"><p class="admonition-title">Exercise 1.2</p></div>
<div class="solution dropdown admonition" id="sol2"><p>SOLUTIONTWO</p></div>
<section id="summary"><h2>Summary</h2><p>SUMMARYTEXT</p></section>
</section></article></body></html>"""


@pytest.mark.parametrize("code", CODES)
def test_a_chapter_on_paper_gathers_its_solutions_and_says_nothing_of_screens(code):
    """Solutions go to the chapter's end under their heading (45 printed pages held an exercise
    and its solution together), the screen's sentences are written for paper, and a stub's "not
    attempted yet" check output is left out (issue 38); the cover names the authors once."""
    from bs4 import BeautifulSoup

    said = pdf_build.words(code)
    screen = next(s for s, p in said["paper"] if p)
    pointer = next(s for s, p in said["paper"] if not p)
    soup = BeautifulSoup(PAPER.format(screen=screen, pointer=pointer + " and more words"), "html.parser")
    chapter = pdf_build.for_paper(soup.find("section").extract(), said)  # cut out, as assemble() does
    blocks = [c for c in chapter.find_all(recursive=False) if c.name]
    assert [b.get("id") or b.get("class", [""])[0] for b in blocks][-3:] == ["ex2", "summary", "print-solutions"]
    gathered = blocks[-1]
    assert gathered.h2.get_text() == said["solutions"]
    assert [d["id"] for d in gathered.select("div.solution")] == ["sol1", "sol2"]
    text = chapter.get_text(" ")
    assert screen not in text and dict(said["paper"])[screen] in text
    assert pointer not in text and "not attempted" not in text
    assert text.index("SUMMARYTEXT") < text.index("SOLUTIONONE") < text.index("SOLUTIONTWO")
    credit = pdf_build.cover_credit(said)
    assert credit.count(said["author"]) == 1 and str(said["copyright"]) in credit


PREDICT = """<html><body><article><section id="ch"><h1>Chapter</h1>
<p><strong>Predict.</strong> QUESTIONONE?</p>
<details class="predict"><summary>▸ Answer</summary><p>ANSWERONE</p></details>
<div class="cell"><div class="cell_input"><pre>CODEONE</pre></div>
<div class="cell_output"><div class="output text_html"><details class="predict-output"><summary>▸ Output</summary>
<pre>OUTPUTONE</pre></details></div></div></div>
<p>PROSEBETWEEN</p>
<p><strong>先想一想</strong>。QUESTIONTWO？</p>
<details class="predict"><summary>▸ Answer</summary><p>ANSWERTWO</p></details>
<div class="cell"><div class="cell_input"><pre>CODETWO</pre></div>
<div class="cell_output"><div class="output text_html"><details class="predict-output"><summary>▸ Output</summary>
<pre>OUTPUTTWO</pre></details></div></div></div>
<div class="exercise admonition" id="ex1"><p class="admonition-title">Exercise 1.1</p></div>
<div class="solution dropdown admonition" id="sol1"><p>SOLUTIONONE</p></div>
</section></article></body></html>"""


@pytest.mark.parametrize("code", CODES)
def test_a_chapter_on_paper_gathers_its_predict_answers_before_its_solutions(code):
    """Paper prints every fold open: a Predict's answer, and the output under it that gives it
    (gb.folded), printed right beside the question. On paper each goes to the chapter's end,
    after the chapter and before its solutions, with its question repeated; the question keeps
    its code and a line that says where the answer is."""
    from bs4 import BeautifulSoup

    said = pdf_build.words(code)
    soup = BeautifulSoup(PREDICT, "html.parser")
    chapter = pdf_build.for_paper(soup.find("section").extract(), said)
    blocks = [c for c in chapter.find_all(recursive=False) if c.name]
    assert [b.get("class", [""])[0] for b in blocks][-2:] == ["print-answers", "print-solutions"]
    answers = blocks[-2]
    assert answers.h2.get_text() == said["predict_answers"]
    body = " ".join(b.get_text(" ") for b in blocks[:-2])
    for hidden in ("ANSWERONE", "OUTPUTONE", "ANSWERTWO", "OUTPUTTWO", "▸"):
        assert hidden not in body, f"{hidden} still printed beside its question"
    for kept in ("QUESTIONONE", "CODEONE", "PROSEBETWEEN", "CODETWO", said["predict_see"].format(n=2)):
        assert kept in body, kept
    assert not chapter.select("details.predict") and len(chapter.select("div.cell_output")) == 0
    entries = [" ".join(e.get_text(" ").split()) for e in answers.select("div.print-answer")]
    assert len(entries) == 2
    for n, (entry, word) in enumerate(zip(entries, ("ONE", "TWO")), start=1):
        assert entry.startswith(said["predict_answer"].format(n=n))
        assert entry.index(f"QUESTION{word}") < entry.index(f"ANSWER{word}") < entry.index(f"OUTPUT{word}")
        assert "Predict." not in entry and "先想一想。" not in entry and "。QUESTION" not in entry  # its bold lead
    assert "▸" not in chapter.get_text(), "a fold's marker printed on paper"


CHECK = """<html><body><article><section id="ch"><h1>Chapter</h1>
<div class="exercise admonition" id="ex1"><p class="admonition-title">Exercise 1.1</p><p>BUGQUESTION</p></div>
<div class="cell"><div class="cell_input"><pre>STUBCODE</pre></div></div>
<div class="cell"><div class="cell_input"><pre>CHECKCODE</pre></div>
<div class="cell_output"><div class="output text_html"><details class="predict-output"><summary>▸ Output</summary>
<pre>CHECKOUTPUT</pre><img alt="expected against got" src="x.png"></details></div></div></div>
<p>AFTERCHECK</p>
<div class="solution dropdown admonition" id="sol1"><p>SOLUTIONONE</p></div>
<div class="exercise admonition" id="ex2"><p class="admonition-title">Exercise 1.2</p></div>
<div class="solution dropdown admonition" id="sol2"><p>SOLUTIONTWO</p></div>
</section></article></body></html>"""


@pytest.mark.parametrize("code", CODES)
def test_a_checks_folded_output_prints_after_its_exercises_solution(code):
    """A "Find the bug" check's output is folded on the screen (the reader predicts first); paper
    opens every fold, so there it moves to the end of that exercise's solution, at the chapter's
    end, its label without the screen's marker, and the check's cell keeps its code."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(CHECK, "html.parser")
    chapter = pdf_build.for_paper(soup.find("section").extract(), pdf_build.words(code))
    gathered = chapter.select_one("section.print-solutions")
    first, second = gathered.select("div.solution")
    assert first.get_text(" ").index("SOLUTIONONE") < first.get_text(" ").index("CHECKOUTPUT")
    assert first.summary.get_text() == pdf_build.words(code)["check_output"]  # whose output it is
    assert first.select_one("img") is not None and "CHECKOUTPUT" not in second.get_text()
    body = chapter.get_text(" ").split("SOLUTIONONE")[0]
    assert "CHECKCODE" in body and "CHECKOUTPUT" not in body and "▸" not in chapter.get_text()
    assert not chapter.select("div.cell_output")


@needs_poppler
@pytest.mark.parametrize("code", CODES)
def test_no_printed_predict_answer_shares_a_page_with_its_question(code):
    """Every Predict question of the edition's notebooks says on paper where its answer is, and
    no page that holds such a line prints the folded output's label (the answer's output); the
    folded outputs of "Find the bug" checks print once each too, after their solutions."""
    from gatherbook.exercises.words import table

    said = pdf_build.words(code)
    pages = _text(_pdf(pdf_build.BOOK_PDF.format(code=code))).split("\f")
    notebooks = [nb.read_text(encoding="utf8") for nb in (ROOT / "notebooks" / code).glob("0*.ipynb")]
    asked = sum(nb.count('class=\\"predict\\"') for nb in notebooks)
    folded = sum(nb.count('class=\\"predict-output\\"') for nb in notebooks)  # asked + the checks'
    see = _squash(said["predict_see"].split("{n}")[0])
    label = _squash(table(code)["notebook"]["folded_output"].lstrip("▸ "))  # (paper prints no marker)
    beside = [n + 1 for n, page in enumerate(pages) if see in _squash(page) and label in _squash(page)]
    assert asked >= 20 and sum(_squash(p).count(see) for p in pages) == asked
    assert folded > asked  # (chapters 1 and 7 fold a check's output)
    assert sum(_squash(p).count(label) for p in pages) == asked  # each output once, with its answer
    checks = sum(_squash(p).count(_squash(said["check_output"])) for p in pages)
    assert checks == folded - asked  # and each check's, after its solution
    assert not beside, f"{code}: pages {beside} print a Predict question with its answer's output"


@pytest.mark.parametrize("code", CODES)
def test_the_screens_words_are_in_the_book(code):
    """Each sentence the print rewrites is still in the book's pages (else the table is stale)."""
    said = pdf_build.words(code)
    pages = [*(ROOT / "notebooks" / code).glob("*.ipynb"), *(ROOT / "book" / code).glob("*.md"),
             ROOT / "gatherbook" / "puzzles" / "_notebooks.py"]
    text = " ".join(" ".join(p.read_text(encoding="utf8").replace("\\n", " ").split()) for p in pages if p.is_file())
    text = re.sub(r"[`*]", "", text)
    missing = [screen for screen, _ in said["paper"] if screen not in text]
    assert not missing, f"{code}: print.paper rewrites words no page has: {missing}"


# ---------------------------------------------------------------------------------------------
# The route, on fixture pages
# ---------------------------------------------------------------------------------------------
FOLDS = """<html lang="en"><head><link rel="stylesheet" href="print/print.css"></head><body>
<main class="bd-main"><div class="bd-content"><article class="bd-article">
<section class="print-chapter" id="ch"><h1>Fixture chapter</h1>
<p><strong>Predict.</strong> What does it print?</p>
<details class="predict"><summary>Answer</summary><p>PREDICTANSWERTEXT</p></details>
<section class="deep-dive" id="dd"><h2>Deep dive: the fixture</h2>
<details class="deep-dive-fold"><summary>Optional</summary><p>DEEPDIVETEXT</p></details></section>
<details class="hide above-input"><summary>Show code cell source</summary><pre>HIDDENCODETEXT</pre></details>
<p class="gatherbook-pdf-links"><a href="../../../pdf/x.pdf">LINKTEXT</a></p>
</section></article></div></main></body></html>"""


@pytest.fixture()
def chromium(monkeypatch, browser):
    """The tests' Chromium (tests/site/conftest.py), which skips (fails with CI=true) without one;
    the route is handed it (book/pdf/build.py: browser_on), since Playwright's sync API starts
    once per process. That is the headless shell where there is one (site_helpers.chromium_path),
    whereas ``make pdf`` prints with chromium; both print these fixtures alike (both pass)."""
    reason = sh.browser_unavailable_reason()
    if reason:
        if sh.on_ci():
            pytest.fail(f"CI=true, but the PDF route cannot run: {reason}.", pytrace=False)
        pytest.skip(f"skipped: {reason} (with CI=true this is a failure)")
    if not os.environ.get(pdf_build.CHROMIUM_ENV):
        monkeypatch.setenv(pdf_build.CHROMIUM_ENV, sh.chromium_path())
    return browser


def _fixture(tmp_path: Path, html: str) -> Path:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    pdf_build.for_print(soup.find("article"))
    (tmp_path / "print").mkdir()
    shutil.copy2(pdf_build.HERE / "print.css", tmp_path / "print" / "print.css")
    (tmp_path / "page.html").write_text(str(soup), encoding="utf8")
    return tmp_path


@needs_poppler
def test_folds_print_open_and_the_links_to_the_pdfs_go(tmp_path, chromium):
    folder = _fixture(tmp_path, FOLDS)
    with pdf_build.browser_on(folder, chromium) as (page, base, refused):
        page.goto(base + "page.html")
        text = _text_of(page.pdf(**pdf_build.PRINT), tmp_path)
    assert not refused
    for hidden in ("PREDICTANSWERTEXT", "DEEPDIVETEXT", "HIDDENCODETEXT", "Deep dive: the fixture"):
        assert hidden in text, hidden
    assert "LINKTEXT" not in text


def _text_of(pdf: bytes, tmp_path: Path) -> str:
    path = tmp_path / "out.pdf"
    path.write_bytes(pdf)
    return _text(path)


def test_a_request_outside_the_book_is_refused_and_named(tmp_path, chromium):
    folder = _fixture(tmp_path, FOLDS.replace("</h1>", '</h1><img src="https://example.org/x.png">'
                                                      '<link rel="stylesheet" href="http://example.org/a.css">'))
    with pdf_build.browser_on(folder, chromium) as (page, base, refused):
        page.goto(base + "page.html")
    assert sorted(refused) == ["http://example.org/a.css", "https://example.org/x.png"]


def test_the_build_stops_when_the_print_asks_for_the_network(tmp_path, chromium):
    folder = _fixture(tmp_path, FOLDS.replace("</h1>", '</h1><img src="https://example.org/x.png">'))
    (folder / "print.html").write_text((folder / "page.html").read_text(encoding="utf8"), encoding="utf8")
    info = {"chapters": [("ch", "Fixture chapter", "chapter")], "cheatsheet": False}
    with pytest.raises(SystemExit, match="example.org"):
        pdf_build.print_pdfs(folder, info, tmp_path / "b.pdf", tmp_path / "s.pdf", chromium)


# Two Chinese chapters as Sphinx's single page has them: the same heading ids in both ("id1",
# "summary"), a link inside each to its own heading, links to a whole chapter and into one.
SAME_IDS = """<article>
<section id="about"><h1>关于本书</h1><p><a class="reference internal" href="#document-ch/two">第 2 章</a>
<a class="reference internal" href="book/zh/intro.html#myths">误解</a></p></section>
<section id="one"><h1>第 1 章</h1><p><a class="reference internal" href="#id1">跳到「小结」</a></p>
<section id="id1"><h2>小结</h2></section></section>
<section id="two"><h1>第 2 章</h1><p><a class="reference internal" href="#id1">跳到「小结」</a>
<a href="#document-ch/one">第 1 章</a></p><a id="myths"></a>
<section id="id1"><h2>小结</h2></section></section>
</article>"""


def test_each_chapters_links_land_in_that_chapter_on_the_single_page():
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(SAME_IDS, "html.parser")
    parts = soup.article.find_all("section", recursive=False)
    renamed = pdf_build.unique_ids(parts)
    ids = [e["id"] for e in soup.find_all(id=True)]
    assert len(ids) == len(set(ids)), f"ids still repeat: {ids}"
    assert renamed[1] == {} and list(renamed[2]) == ["id1"]
    for part in parts[1:]:  # each chapter's "skip to the summary" lands on its own summary
        target = soup.find(id=part.p.a["href"][1:])
        assert target is not None and part in target.parents, part.h1.text
    changed = pdf_build.relink_documents(parts, {"ch/one": "one", "ch/two": "two"}, "book/zh/intro.html")
    hrefs = [a["href"] for a in soup.find_all("a", href=True)]
    assert changed == 3 and "#two" in hrefs and "#one" in hrefs and "#myths" in hrefs
    assert all(soup.find(id=h[1:]) is not None for h in hrefs), hrefs
