"""Give every figure cell its caption cell for JupyterLab (book/ext/gatherbook_sphinx/notebooks.py).

JupyterLab shows no cell metadata, where the figure captions live for the site; after each figure
cell this writes a markdown cell with the caption, which the site drops. Run it after changing a
caption; ``tests/notebooks/test_figures.py`` says when one is missing or out of date.

Usage: python book/captions.py [NOTEBOOK.ipynb ...]   (default: every notebook)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "ext"))
from gatherbook_sphinx.notebooks import with_caption_cells  # noqa: E402


def main(paths: list[str]) -> int:
    for path in [Path(p) for p in paths] or sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf8"))
        if with_caption_cells(nb):
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf8")
            print(f"captions written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
