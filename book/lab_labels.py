"""Write the exercise and solution labels that JupyterLab shows, in each notebook's language and
numbered as on the site (book/ext/gatherbook_sphinx/notebooks.py: ``with_lab_labels``).

jupyterlab-myst would title an exercise "Exercise 1" in English, numbered per notebook, and show a
folded solution's ``{solution-start}`` fence as its placeholder. This moves each exercise's fence
lines into the cell's metadata (the site puts them back) and writes a label in their place:
「练习 5.1（独热目标）」, 「练习 5.1（独热目标）的解答」. Numbers follow the site: chapter.k in
the TOC's numbered part, one running count over the unnumbered pages (the Practice part).

Run it after adding, removing or retitling an exercise (idempotent);
``tests/notebooks/test_lab_labels.py`` says when a notebook is out of step.

Usage: python book/lab_labels.py [NOTEBOOK.ipynb ...]   (default: every notebook)
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
from gatherbook_sphinx.notebooks import count_exercises, with_lab_labels  # noqa: E402
from gatherbook_sphinx.words import table  # noqa: E402


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
    numbered parts), and with one running count over the pages outside them."""
    edition = next(e for e in EDITIONS if e.code == code)
    numbers, chapter, running = {}, 0, 0
    for docname, numbered in toc_order(ROOT / edition.toc):
        path = ROOT / f"{docname}.ipynb"
        n = count_exercises(json.loads(path.read_text(encoding="utf8"))) if path.exists() else 0
        if numbered:
            chapter += 1
            numbers[path] = [f"{chapter}.{k}" for k in range(1, n + 1)]
        else:
            numbers[path] = [str(running + k) for k in range(1, n + 1)]
            running += n
    return numbers


def labelled(path: Path) -> tuple[dict, int]:
    """The notebook at ``path`` with its labels written (and how many cells changed)."""
    code = path.parent.name
    nb = json.loads(path.read_text(encoding="utf8"))
    numbers = site_numbers(code).get(path.resolve(), [])
    return nb, with_lab_labels(nb, numbers, table(code))


def main(paths: list[str]) -> int:
    codes = [e.code for e in EDITIONS]
    for path in [Path(p).resolve() for p in paths] or sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        if path.parent.name not in codes:
            continue
        nb, changed = labelled(path)
        if changed:
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf8")
            print(f"labels written ({changed} cells): {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
