"""The no-solutions exercise notebook that the build publishes for each chapter."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
from gatherbook_sphinx import downloads  # noqa: E402
from gatherbook_sphinx.downloads import exercises_only, generate_all  # noqa: E402

from gatherbook.editions import CODES  # noqa: E402
from gatherbook.exercises import get, messages, words  # noqa: E402

md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def chapter(*extra):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("# Chapter 1: gather"),
        code("import torch\nfrom gatherbook.exercises import check"),
        code("x = torch.arange(3)\nprint(x)"),
        md("## Exercises"),
        md("Intro.\n\nDownload {download}`this <x.ipynb>` here."),
        md("````{exercise} Pick one element per row\n:label: ch1-ex-pick\n\nWrite `pick`.\n````"),
        code("def pick(x, idx):\n    raise NotImplementedError"),
        code('check("ch1.pick_per_row", pick)'),
        md("````{solution-start} ch1-ex-pick\n:class: dropdown\n````"),
        code("def pick(x, idx):\n    return SOLUTION"),
        code('check("ch1.pick_per_row", pick)'),
        md("````{solution-end}\n````"),
        *extra,
    ]
    return nb


def test_keeps_setup_exercise_stub_and_check_and_drops_solutions():
    out = exercises_only(chapter(), "en")
    sources = [c.source for c in out.cells]
    text = "\n".join(sources)
    assert "SOLUTION" not in text
    assert "import torch\nfrom gatherbook.exercises import check" in sources  # the setup cell
    assert "print(x)" not in text                                              # chapter body dropped
    assert sources.count('check("ch1.pick_per_row", pick)') == 1
    assert "def pick(x, idx):\n    raise NotImplementedError" in sources
    assert "### Exercise: Pick one element per row" in text
    assert "{exercise}" not in text and ":label:" not in text and "````" not in text
    assert "Intro." in sources and "{download}" not in text and "## Exercises" not in text
    assert all(c.get("outputs", []) == [] for c in out.cells if c.cell_type == "code")


def test_chinese_download_keeps_the_setup_cell_that_states_the_language():
    nb = chapter()
    nb.cells[1] = code('import gatherbook as gb\ndev = gb.setup(lang="zh")')
    out = exercises_only(nb, "zh")
    text = "\n".join(c.source for c in out.cells)
    assert 'gb.setup(lang="zh")' in text and "GATHERBOOK_LANG" not in text
    assert "### 练习：Pick one element per row" in text


def test_unbalanced_solution_directives_are_clear_errors():
    nb = chapter()
    del nb.cells[11]  # the solution-end
    with pytest.raises(ValueError, match="no \\{solution-end\\}"):
        exercises_only(nb, "en")
    with pytest.raises(ValueError, match="without \\{solution-start\\}"):
        exercises_only(chapter(md("````{solution-end}\n````")), "en")


def test_no_exercises_and_bad_language_are_clear_errors():
    nb = nbformat.v4.new_notebook(cells=[md("# Title"), code("1")])
    with pytest.raises(ValueError, match="no \\{exercise\\} directive"):
        exercises_only(nb, "en")
    with pytest.raises(ValueError, match="expected one of"):
        exercises_only(chapter(), "fr")


def practice_page():
    """A Practice page as tools/practice_pages.py writes it: the rule in the title cell, a heading
    per puzzle, each puzzle's operations line relative to the rule."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("# Level 3: in real code\n\n*Why level 3:* ...\n\n**Allowed on this page:** `+ -`.\n\n"
           "To work on your own machine, download {download}`these puzzles <x.ipynb>`."),
        code('import gatherbook as gb\ndev = gb.setup(lang="en")'),
        md("## `first`"),
        md("````{exercise} The first\n:label: first\n\nDo it.\n\n**Operations:** the page's set.\n\n"
           "Taught in {doc}`Chapter 5 <05_scatter>`, see {ref}`sec-dup` and {math}`x_i`.\n````"),
        code("def first(x):\n    raise NotImplementedError"),
        md("````{solution-start} first\n:class: dropdown\n````"),
        code("def first_solution(x):\n    return SOLUTION"),
        md("````{solution-end}\n````"),
        md("## `second`"),
        md("````{exercise} The second\n:label: second\n\nAgain.\n````"),
        code("def second(x):\n    raise NotImplementedError"),
        md("Next: {doc}`05_scatter`."),
    ]
    return nb


def test_a_practice_page_download_keeps_the_pages_rule_and_every_puzzles_heading():
    """A trial learner's download of level 3 began at the first puzzle's heading and left it out:
    no rule ("the page's set" of what?), no heading for the first puzzle, and {doc} roles raw."""
    out = exercises_only(practice_page(), "en")
    sources = [c.source for c in out.cells]
    text = "\n".join(sources)
    assert "**Allowed on this page:** `+ -`." in text and "*Why level 3:*" in text
    assert "## `first`" in sources and "## `second`" in sources
    assert text.index("Allowed on this page") < text.index('gb.setup(lang="en")') < text.index("## `first`")
    assert "SOLUTION" not in text and "{download}" not in text and "# Level 3" not in sources
    assert "Taught in Chapter 5, see sec-dup and {math}`x_i`." in text  # site roles as text; math stays
    assert "Next: 05_scatter." in text and not re.search(r"\{(doc|ref|numref|term)\}", text)


@pytest.mark.parametrize("lang", CODES)
def test_the_real_practice_downloads_hold_the_rule_every_heading_and_no_site_roles(tmp_path, lang):
    from gatherbook.exercises import pages
    from gatherbook.exercises.words import table

    rule = table(lang)["practice"]["page"]["base"].split("{ops}")[0]  # "**Allowed on this page:** "
    for number, stem, _, names in pages():
        nb = downloads.with_fences(nbformat.read(ROOT / "notebooks" / lang / f"{stem}.ipynb", 4))
        text = "\n".join(c.source for c in exercises_only(nb, lang).cells)
        assert rule in text, (lang, number)
        for name in names:
            assert f"## `{name.split('.', 1)[1]}`" in text, (lang, number, name)
        assert not re.search(r"\{(%s)\}`" % "|".join(downloads.SITE_ROLES), text), (lang, number)


@pytest.mark.parametrize("lang", CODES)
def test_every_chapter_with_exercises_gets_a_download(tmp_path, lang):
    """The real chapters: each exercise's check call survives, no solution code does."""
    docs = {str(p.relative_to(ROOT).with_suffix("")) for p in (ROOT / "notebooks" / lang).glob("*.ipynb")}
    # generate into a copy of the tree layout so the real _build/exercises is untouched
    for doc in docs:
        target = tmp_path / f"{doc}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / f"{doc}.ipynb").read_bytes())
    written = generate_all(tmp_path, lang, docs)
    for path in written:
        chapter_nb = nbformat.read(tmp_path / "notebooks" / lang / path.name.replace("_exercises", ""), 4)
        ex = nbformat.read(path, 4)
        chapter_checks = {c.source for c in chapter_nb.cells if c.cell_type == "code" and "check(" in c.source
                          and "_solution)" not in c.source}  # a solution's check goes with the solution
        ex_code = [c.source for c in ex.cells if c.cell_type == "code"]
        assert chapter_checks <= set(ex_code), f"{path.name}: a check call is missing"
        assert len(ex_code) == len(set(ex_code)), f"{path.name}: a cell appears twice (a solution leaked?)"


@pytest.mark.slow
@pytest.mark.parametrize("lang", CODES)
def test_downloaded_exercises_run_top_to_bottom(tmp_path, lang):
    """What a reader downloads runs as it is, outside the book's folders, in the right language."""
    from nbclient import NotebookClient

    docs = {str(p.relative_to(ROOT).with_suffix("")) for p in (ROOT / "notebooks" / lang).glob("*.ipynb")}
    src = tmp_path / "src"
    for doc in docs:
        (src / doc).parent.mkdir(parents=True, exist_ok=True)
        (src / f"{doc}.ipynb").write_bytes((ROOT / f"{doc}.ipynb").read_bytes())
    written = generate_all(src, lang, docs)
    assert written, "no chapter has exercises"
    for path in written[:1]:  # one chapter is enough to prove the mechanism; keep the suite fast
        nb = nbformat.read(path, 4)
        NotebookClient(nb, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
        checks = [(c.source.split('"')[1], "".join(o.get("text", "") for o in c.get("outputs", [])))
                  for c in nb.cells if c.cell_type == "code" and c.source.startswith("gb.check(")]
        assert checks, "no check cell in the download"
        for name, text in checks:
            if get(name).bug:  # find-the-bug: the stub is the buggy code, so its check fails
                assert text.startswith(f"✘ {name}"), (name, text)
            else:  # every other stub still raises its NotImplementedError
                assert text == messages.fit(words.text(lang, "not_attempted", name=name)) + "\n", (name, text)


def test_the_download_has_its_words_in_every_edition():
    from gatherbook_sphinx import words

    for code in CODES:
        assert {"download_title", "download_heading", "download_word"} <= set(words.table(code))


def test_every_chapter_links_its_own_download_at_the_generated_path():
    """A chapter's {download} link names the file generate_all writes: its edition, its name."""
    link = re.compile(r"\{download\}`[^`<]*<([^>]+)>`")
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        nb = nbformat.read(path, 4)
        targets = [t for c in nb.cells if c.cell_type == "markdown" for t in link.findall(c.source)]
        has_exercises = any(downloads._directive(c) == "exercise" for c in nb.cells)
        expected = f"/{downloads.GENERATED.as_posix()}/{path.parent.name}/{path.stem}_exercises.ipynb"
        assert targets == ([expected] if has_exercises else []), path.relative_to(ROOT)


def test_a_practice_page_download_names_its_puzzles_as_the_site_does():
    """Issue 35: the puzzles' download is the Practice part's (练习篇), each puzzle headed by its one
    number (「第 9 题（…）」, the cell's JupyterLab label), never 练习, the chapters' exercises' word."""
    import json

    path = ROOT / "notebooks" / "zh" / "08_practice_2_3d.ipynb"
    nb = downloads.with_fences(nbformat.reads(path.read_text(encoding="utf8"), as_version=4))
    text = "\n".join(c.source for c in exercises_only(nb, "zh").cells)
    assert text.startswith("# 练习篇 · 第 2 级")
    headings = re.findall(r"^### (.*)$", text, flags=re.M)
    assert headings and all(re.match(r"第 \d+ 题（", h) for h in headings), headings
    assert "练习：" not in text and "谜题" not in text
    assert json.dumps(headings, ensure_ascii=False).count("第 9 题") == 1
