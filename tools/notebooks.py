"""The maintainers' one command that writes notebooks: every writer reads and writes the
notebooks' JSON here (one indent, UTF-8 as it is, a final newline), and is idempotent.

    python tools/notebooks.py practice           # the Practice pages, from the declarations
    python tools/notebooks.py captions [NB ...]  # a caption cell under each figure cell (JupyterLab)
    python tools/notebooks.py labels [NB ...]    # exercise and solution labels, as the site numbers them
    python tools/notebooks.py tidy NB ...        # outputs without the executing machine's paths
    python tools/notebooks.py all                # practice, captions and labels (then `make execute`)

``practice`` writes notebooks/<code>/08_practice*.ipynb from ``gatherbook.exercises`` (the
declarations and the words files: tools/practice_pages.py), with their captions and labels; a code
cell that changed loses its stored outputs: execute the notebooks afterwards. ``captions``: JupyterLab shows no cell metadata, where the site's figure captions live,
so each figure cell gets a markdown cell with its caption, which the site drops
(``tests/notebooks/test_figures.py`` says when one is due). ``labels``: jupyterlab-myst would title
an exercise "Exercise 1", in English, numbered per notebook; each exercise's fence lines move into
the cell's metadata (the site puts them back) and a label in the notebook's language takes their
place, numbered as on the site (``tests/notebooks/test_lab_labels.py`` says when it is due).
``tidy`` (``make execute`` runs it) keeps each path in the stored outputs from the package's own
folder on, as the site does, and joins a cell's consecutive prints to one stream. Without NB, a
command takes every notebook.
"""
from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "ext"))
sys.path.insert(0, str(ROOT))
from gatherbook.editions import EDITIONS  # noqa: E402
from gatherbook_sphinx.notebooks import exercise_kinds, with_caption_cells, with_lab_labels  # noqa: E402
from gatherbook_sphinx.outputs import strip_machine_paths  # noqa: E402
from gatherbook_sphinx.words import table  # noqa: E402

NOTEBOOKS = ROOT / "notebooks"


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf8"))


def write(path: Path, nb: dict) -> None:
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf8")


def _paths(paths: list[str]) -> list[Path]:
    return [Path(p).resolve() for p in paths] or sorted(NOTEBOOKS.glob("*/*.ipynb"))


# --- practice ------------------------------------------------------------------------------------

def notebook(cells: list[dict]) -> dict:
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i:03d}"
    return {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def _outputs_kept(cells: list[dict], path: Path) -> list[dict]:
    """``cells`` with the stored outputs of each code cell whose code did not change."""
    if not path.exists():
        return cells
    stored = [c for c in read(path)["cells"] if c["cell_type"] == "code"]
    old = {"".join(c["source"]): c for c in stored}
    for cell in cells:
        before = old.get("".join(cell["source"])) if cell["cell_type"] == "code" else None
        if before is not None:
            cell["outputs"], cell["execution_count"] = before["outputs"], before["execution_count"]
    return cells


def practice(paths: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "tools"))
    import practice_pages

    written = []
    for name, cells in practice_pages.notebooks().items():
        path = NOTEBOOKS / f"{name}.ipynb"
        write(path, notebook(_outputs_kept(cells, path)))
        written.append(str(path))
        print(f"written: notebooks/{name}.ipynb")
    return captions(written) or labels(written)  # JupyterLab's captions and labels, as for every notebook


# --- captions ------------------------------------------------------------------------------------

def captions(paths: list[str]) -> int:
    for path in _paths(paths):
        nb = read(path)
        if with_caption_cells(nb):
            write(path, nb)
            print(f"captions written: {path}")
    return 0


# --- labels --------------------------------------------------------------------------------------

def toc_order(toc: Path) -> list[tuple[str, bool]]:
    """``(docname, numbered)`` for each page of a jb-book TOC, in reading order."""
    data = yaml.safe_load(toc.read_text(encoding="utf8"))
    pages = [(data["root"], False)]

    def walk(entries, numbered):
        for entry in entries or []:
            if "file" in entry:
                pages.append((entry["file"], numbered))
            walk(entry.get("sections"), numbered)

    for part in data.get("parts", []):
        walk(part.get("chapters"), bool(part.get("numbered")))
    walk(data.get("chapters"), False)
    return pages


@functools.cache
def site_numbers(code: str) -> dict[Path, list[str]]:
    """Each notebook of edition ``code`` and the site's numbers of its exercises, in order.

    Sphinx numbers an exercise chapter.k in a numbered chapter (the chapter counted across the
    numbered parts), and with one running count over the pages outside them; each kind apart
    (the Practice part's puzzles are a node type of their own: 1, 2, ... over the part)."""
    edition = next(e for e in EDITIONS if e.code == code)
    numbers, chapter, running = {}, 0, {}
    for docname, numbered in toc_order(ROOT / edition.toc):
        path = ROOT / f"{docname}.ipynb"
        kinds = exercise_kinds(json.loads(path.read_text(encoding="utf8"))) if path.exists() else []
        counts = {} if numbered else running
        chapter += numbered
        numbers[path] = []
        for kind in kinds:
            counts[kind] = counts.get(kind, 0) + 1
            numbers[path].append(f"{chapter}.{counts[kind]}" if numbered else str(counts[kind]))
    return numbers


def labelled(path: Path) -> tuple[dict, int]:
    """The notebook at ``path`` with its labels written (and how many cells changed)."""
    code = path.parent.name
    nb = json.loads(path.read_text(encoding="utf8"))
    numbers = site_numbers(code).get(path.resolve(), [])
    return nb, with_lab_labels(nb, numbers, table(code))


def labels(paths: list[str]) -> int:
    codes = [e.code for e in EDITIONS]
    for path in _paths(paths):
        if path.parent.name not in codes:
            continue
        nb, changed = labelled(path)
        if changed:
            write(path, nb)
            print(f"labels written ({changed} cells): {path.relative_to(ROOT)}")
    return 0


# --- tidy ----------------------------------------------------------------------------------------

def tidy(nb) -> int:
    """Strip machine paths from ``nb``'s outputs and join split streams, in place; returns how
    many outputs changed."""
    changed = 0
    for cell in nb.cells:
        if cell.get("outputs"):
            before = len(cell.outputs)
            from nbconvert.preprocessors import CoalesceStreamsPreprocessor

            CoalesceStreamsPreprocessor().preprocess_cell(cell, {}, 0)  # nbconvert's joining
            changed += before - len(cell.outputs)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                new = [strip_machine_paths(line) for line in out.get("traceback", [])]
                changed += sum(a != b for a, b in zip(new, out["traceback"]))
                out["traceback"] = new
            elif out.get("output_type") == "stream":
                new = strip_machine_paths(out.get("text", ""))
                changed += new != out.get("text", "")
                out["text"] = new
    return changed


def tidy_files(paths: list[str]) -> int:
    import nbformat

    if not paths:
        print("usage: python tools/notebooks.py tidy NOTEBOOK.ipynb [...]", file=sys.stderr)
        return 2
    for path in paths:
        p = Path(path)
        if p.suffix != ".ipynb" or not p.is_file():
            print(f"tidy: {path!r} is not a notebook file (.ipynb)", file=sys.stderr)
            return 2
        nb = nbformat.read(p, as_version=4)
        if tidy(nb):
            nbformat.write(nb, p)
    return 0


def everything(paths: list[str]) -> int:
    return practice([]) or captions(paths) or labels(paths)  # the Practice pages, then every notebook


COMMANDS = {"practice": practice, "captions": captions, "labels": labels, "tidy": tidy_files, "all": everything}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python tools/notebooks.py {{{'|'.join(COMMANDS)}}} [NOTEBOOK.ipynb ...]", file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
