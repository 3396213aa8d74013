"""What a reader downloads: each chapter's exercises without solutions, and the whole book as a zip.

Both are generated at build time into ``_build/`` (never committed, never a second copy kept).

**Exercise notebooks.** Generated from the chapter notebook itself (never kept as a second copy):

- the chapter's setup cell (its first code cell, which states the language with
  ``gb.setup(lang=...)``), so the exercises run on their own, with feedback in their language;
- everything after the heading that opens the exercise section, except what lies between a
  ``{solution-start}`` and its ``{solution-end}`` directive (the solutions), and except the
  paragraphs that link to this very download (``{download}`` roles);
- MyST ``{exercise}`` fences turned into plain Markdown headings, which JupyterLab renders;
- outputs and execution counts cleared.

The notebooks are written under ``_build/exercises/<lang>/`` (generated files stay in ``_build``);
a chapter links to its own with ``{download}`/_build/exercises/<lang>/<name>_exercises.ipynb```.

**The "Run it yourself" zip** (``_build/run/gather-book.zip``, linked from ``book/<lang>/run.md``):
one folder, ``gather-book/``, with the notebooks of both languages (without outputs: the reader
runs them), the helper package, and the files that install and run them. Its bytes depend only on those files (fixed time stamps, sorted
names). The page names the repository when ``_config.yml`` configures one (``repository: url:``),
through the MyST substitution ``{{ gatherbook_repository }}``.
"""
from __future__ import annotations

import copy
import re
import zipfile
from pathlib import Path

import yaml

from gatherbook.editions import CODES, edition

from . import words
from .notebooks import fenced_source, is_puzzle, lab_meta

GENERATED = Path("_build") / "exercises"
_FENCE_OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}\s*(?P<arg>.*)$")
_HEADING = re.compile(r"^#{1,6}\s")



def _directive(cell) -> str | None:
    """Name of the MyST directive a markdown cell opens with, if any (``exercise``, ``solution-start`` ...);
    an exercise cell under JupyterLab's label (notebooks.py) opens with the fence it stands for."""
    if cell.cell_type != "markdown":
        return None
    for line in fenced_source(cell).splitlines():
        if line.strip():
            m = _FENCE_OPEN.match(line.strip())
            return m.group("name") if m else None
    return None


def _plain_exercise_markdown(source: str, lang: str, label: str = "") -> str:
    """Turn ``{exercise}`` fences into a Markdown heading and drop directive options; the heading
    is ``label`` (the cell's JupyterLab label, numbered as on the site: 「第 9 题（…）」) when given."""
    out, fences = [], []
    for line in source.splitlines():
        stripped = line.strip()
        m = _FENCE_OPEN.match(stripped)
        if m and m.group("name") == "exercise":
            fences.append(m.group("fence"))
            title = m.group("arg").strip()
            w = words.table(lang)
            out.append(f"### {label}" if label else
                       w["download_heading"].format(title=title) if title else w["download_word"])
            continue
        if fences and stripped == fences[-1]:
            fences.pop()
            continue
        if fences and re.match(r"^:[\w-]+:", stripped):
            continue  # directive option such as :label:
        out.append(line)
    return "\n".join(out).strip()


def _without_download_links(source: str) -> str:
    """Drop the paragraphs that hold a ``{download}`` role: in the download they point nowhere."""
    paragraphs = re.split(r"\n\s*\n", source)
    return "\n\n".join(p for p in paragraphs if "{download}" not in p).strip()


#: roles that point into the site, which a notebook opened on its own cannot follow: jupyterlab-myst
#: 2.7.0 (its bundle, static/4330.*.js) makes ``{doc}`05_scatter``` a link to a file
#: ``05_scatter`` (no such file beside a downloaded notebook), ``{ref}``/``{numref}`` and
#: ``{term}`` references to labels and a glossary of other pages, ``{download}`` a link to a
#: ``/_build`` path; the roles it renders by themselves (``{math}``, ``{sub}``, ``{kbd}`` ...) stay
SITE_ROLES = ("doc", "ref", "numref", "term", "download")
_SITE_ROLE = re.compile(r"\{(?:%s)\}`([^`]*)`" % "|".join(SITE_ROLES))


def _plain_roles(source: str) -> str:
    """``source`` with each :data:`SITE_ROLES` role turned into its text: ``{doc}`第 5 章
    <05_scatter>``` into ``第 5 章``; a role without text into its target."""
    def text(m: re.Match) -> str:
        body = m.group(1)
        shown = re.match(r"^(.+?)\s*<([^<>]+)>$", body, flags=re.S)
        return shown.group(1).strip() if shown else body.strip()
    return _SITE_ROLE.sub(text, source)


def _heading_level(cell) -> int:
    """The level of the Markdown heading a cell opens with (``## x``: 2); 0 for none."""
    m = _HEADING.match(cell.source.lstrip()) if cell.cell_type == "markdown" else None
    return m.group(0).count("#") if m else 0


def _section_start(cells, first: int, last: int) -> int:
    """The cell of the heading whose section holds every exercise (cells ``first`` .. ``last``):
    a chapter's "Exercises"; on a Practice page, where each puzzle has a heading of its own, the
    page's title (its intro states the rule that each puzzle's operations line is relative to)."""
    for i in range(first, -1, -1):
        level = _heading_level(cells[i])
        if level and not any(0 < _heading_level(c) <= level for c in cells[i + 1:last + 1]):
            return i
    return 0


def _title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return "exercises"


def with_fences(nb):
    """``nb`` with its exercise cells' fences back (JupyterLab's labels taken off, notebooks.py)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = fenced_source(cell)
    return nb


def exercises_only(nb, lang: str):
    """Return a new notebook holding the exercises of ``nb`` without their solutions.

    Raises:
        ValueError: ``nb`` has no ``{exercise}`` directive, or a ``{solution-start}`` without
            its ``{solution-end}``.
    """
    import nbformat  # here, not at the top: importing it takes seconds (jsonschema)

    edition(lang)  # ValueError: not an edition of the book
    cells = nb.cells
    first_ex = next((i for i, c in enumerate(cells) if _directive(c) == "exercise"), None)
    if first_ex is None:
        raise ValueError("the notebook has no {exercise} directive, so there is nothing to extract")
    last_ex = max(i for i, c in enumerate(cells) if _directive(c) == "exercise")
    start = _section_start(cells, first_ex, last_ex)
    intro = cells[start].source.lstrip().partition("\n")[2] if _heading_level(cells[start]) else ""
    setup = next((c for c in cells if c.cell_type == "code"), None)

    new = nbformat.v4.new_notebook(metadata=copy.deepcopy(nb.metadata))
    puzzles = any(is_puzzle(fenced_source(c)) for c in cells if _directive(c) == "exercise")
    heading = words.table(lang)["download_puzzles_title" if puzzles else "download_title"]
    new.cells.append(nbformat.v4.new_markdown_cell(heading.format(title=_title(nb))))
    if setup is not None and cells.index(setup) < start:
        new.cells.append(nbformat.v4.new_code_cell(setup.source))
    if intro := _plain_roles(_without_download_links(intro)):  # under its heading: a page's rule
        new.cells.append(nbformat.v4.new_markdown_cell(intro))

    in_solution = False
    for i, cell in enumerate(cells[start + 1:], start + 1):
        kind = _directive(cell)
        if kind == "solution-start":
            if in_solution:
                raise ValueError(f"cell {i}: a second {{solution-start}} before {{solution-end}}")
            in_solution = True
            continue
        if kind == "solution-end":
            if not in_solution:
                raise ValueError(f"cell {i}: {{solution-end}} without {{solution-start}}")
            in_solution = False
            continue
        if in_solution:
            continue
        if cell.cell_type == "markdown":
            label = (lab_meta(cell) or {}).get("label", "").strip("*") if kind == "exercise" else ""
            text = _plain_roles(_without_download_links(_plain_exercise_markdown(cell.source, lang, label)))
            if text:
                new.cells.append(nbformat.v4.new_markdown_cell(text))
        elif cell.cell_type == "code":
            new.cells.append(nbformat.v4.new_code_cell(cell.source))
    if in_solution:
        raise ValueError("a {solution-start} has no {solution-end} before the end of the notebook")
    return new


def generate_all(srcdir: Path, lang: str, docnames: set[str]) -> list[Path]:
    """Write the exercise notebook of every chapter of ``lang`` that has exercises."""
    import nbformat

    written = []
    outdir = srcdir / GENERATED / lang
    outdir.mkdir(parents=True, exist_ok=True)
    for doc in sorted(docnames):
        path = srcdir / f"{doc}.ipynb"
        if not path.is_file():
            continue
        nb = with_fences(nbformat.read(path, as_version=4))
        if not any(_directive(c) == "exercise" for c in nb.cells):
            continue
        target = outdir / f"{path.stem}_exercises.ipynb"
        nbformat.write(exercises_only(nb, lang), target)
        written.append(target)
    return written



# ---------------------------------------------------------------------------------------------
# The "Run it yourself" zip
# ---------------------------------------------------------------------------------------------
ZIP_NAME = "gather-book.zip"
FOLDER = "gather-book"
RUN_GENERATED = Path("_build") / "run"  # generated files stay in _build
# What the reader needs: (folder under the source root, glob), shipped as they are
CONTENTS = [
    ("notebooks", "*/*.ipynb"),
    ("gatherbook", "**/*.py"), ("gatherbook", "bench_results/*.json"),  # ch6 shows a recorded run
    (".", "pyproject.toml"),
]
# The reader's own files (book/reader/), at the zip's top: the README in each language, a
# Makefile whose every target works there; and requirements.txt without the site's and the
# tests' tools (:func:`reader_requirements`).
READER = Path("book") / "reader"
READER_FILES = ("README.md", "README.zh.md", "Makefile")
#: packages of requirements.txt that build or test the site, which a reader does not need
NOT_FOR_READERS = {"jupyter-book", "sphinx", "myst-nb", "myst-parser", "sphinx-book-theme",
                   "sphinx-exercise", "sphinx-togglebutton", "sphinx-copybutton",
                   "sphinx-mathjax-offline", "sphinxext-opengraph", "jieba", "nbval", "pytest",
                   "pytest-xdist", "playwright"}
_EPOCH = (2026, 1, 1, 0, 0, 0)



def files_to_ship(root: Path) -> list[Path]:
    """The files of the zip, relative to ``root``, sorted."""
    found = set()
    for folder, pattern in CONTENTS:
        for path in (root / folder).glob(pattern):
            rel = path.relative_to(root)
            if path.is_file() and "__pycache__" not in rel.parts and ".ipynb_checkpoints" not in rel.parts:
                found.add(rel)
    return sorted(found)


def reader_requirements(text: str) -> str:
    """``requirements.txt`` for readers: every line but the site's and the tests' tools (and the
    comments that head only those)."""
    out, comments = [], []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            comments.append(line)
            continue
        name = re.split(r"[=<>!~\[; ]", stripped, maxsplit=1)[0].lower()
        if name in NOT_FOR_READERS:
            comments = []
            continue
        out += comments + [line]
        comments = []
    return "\n".join(out) + "\n"


def configured_site(root: Path) -> str:
    """``html: baseurl:`` of the project's ``_config.yml``: the published site's address ("" if none)."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf8")) or {}
    return str((config.get("html") or {}).get("baseurl") or "").strip()


def reader_files(root: Path) -> dict[str, bytes]:
    """The reader's own files, by their name in the zip's folder."""
    url = configured_site(root)
    files = {}
    for name in READER_FILES:
        text = (root / READER / name).read_text(encoding="utf8")
        if name.startswith("README"):
            code = next((c for c in CODES[1:] if f".{c}." in name), CODES[0])  # README.<code>.md
            said = words.table(code)
            # the address when _config.yml gives it (html: baseurl); else where the reader got the zip
            text = text.replace("{site_sentence}", said["reader_site"].format(url=url) if url else said["reader_no_site"])
        files[name] = text.encode("utf8")
    files["requirements.txt"] = reader_requirements(
        (root / "requirements.txt").read_text(encoding="utf8")).encode("utf8")
    return files


def without_outputs(data: bytes) -> bytes:
    """A notebook (its bytes) with outputs and execution counts cleared: the reader runs it,
    and the site shows what it prints. Each chapter's outputs would otherwise be in the site
    three times (its page, its ``.ipynb`` download, the zip)."""
    import nbformat

    nb = nbformat.reads(data.decode("utf8"), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return (nbformat.writes(nb) + "\n").encode("utf8")


def write_zip(root: Path, target: Path) -> list[str]:
    """Write the reader's zip of ``root`` to ``target``; returns the names in it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    names = []
    tmp = target.with_suffix(".tmp")
    contents = {rel.as_posix(): (root / rel).read_bytes() for rel in files_to_ship(root)}
    contents.update(reader_files(root))
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel in sorted(contents):
            info = zipfile.ZipInfo(f"{FOLDER}/{rel}", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            data = contents[rel]
            if rel.endswith(".ipynb"):
                data = without_outputs(data)
            zf.writestr(info, data, compresslevel=9)
            names.append(info.filename)
    tmp.replace(target)
    return names


def repository_text(url: str, lang: str) -> str:
    url = (url or "").strip()
    w = words.table(lang)
    return (w["repository_text"] if url else w["no_repository_text"]).format(url=url)


def configured_repository(root: Path) -> str:
    """``repository: url:`` of the project's ``_config.yml`` ("" when there is none).

    (Read from the file: Jupyter Book fills in its own repository as a default otherwise.)
    """
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf8")) or {}
    return str((config.get("repository") or {}).get("url") or "")


def add_repository_substitution(app, config) -> None:
    """``config-inited``: the run page's ``{{ gatherbook_repository }}``."""
    url = configured_repository(Path(app.srcdir))
    subs = dict(getattr(config, "myst_substitutions", {}) or {})
    subs["gatherbook_repository"] = repository_text(url, config.gatherbook_edition)
    config.myst_substitutions = subs


def write_downloads(app) -> None:
    """``builder-inited``: the exercise notebooks of this edition's chapters, and the zip."""
    from . import editions

    root = Path(app.srcdir)
    generate_all(root, app.config.gatherbook_edition, editions.toc_docnames(root, app.config.gatherbook_edition))
    write_zip(root, root / RUN_GENERATED / ZIP_NAME)


def sources_without_outputs(app, exception) -> None:
    """``build-finished``: the page's ``.ipynb`` download (``_sources/``) without outputs, as in the
    zip (:func:`without_outputs`): the page shows the outputs, the reader's run makes them."""
    if exception is not None or app.builder.format != "html":
        return
    for path in (Path(app.outdir) / "_sources").rglob("*.ipynb"):
        path.write_bytes(without_outputs(path.read_bytes()))
