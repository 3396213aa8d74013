"""Cut the executing machine's paths out of the notebooks' stored outputs (``make execute`` runs it).

A cell that is meant to raise stores IPython's traceback, whose frames name absolute paths
(``/home/someone/repo/gatherbook/logprobs.py``, ``/.../site-packages/torch/_tensor.py``); a
warning names them too. The downloadable notebooks should not carry the machine that executed
them: this keeps each path from the package's own folder or the module on, as the site does
(book/ext/gatherbook_sphinx/outputs.py). nbval compares neither tracebacks nor these paths' prefixes,
so the notebooks' tests are unaffected.

It also joins a cell's consecutive prints to the same stream into one output: a loaded machine
flushes ``stdout`` in chunks, and the chunks would otherwise show in a diff (and in a notebook
reader's JSON) as changes where nothing changed.

Usage: python book/tidy_outputs.py NOTEBOOK.ipynb [...]
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

sys.path.insert(0, str(Path(__file__).resolve().parent / "ext"))  # the site's extension package
from gatherbook_sphinx.outputs import strip_machine_paths  # noqa: E402


def tidy(nb) -> int:
    """Strip machine paths from ``nb``'s outputs and join split streams, in place; returns how
    many outputs changed."""
    changed = 0
    for cell in nb.cells:
        if cell.get("outputs"):
            before = len(cell.outputs)
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


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    for path in paths:
        p = Path(path)
        if p.suffix != ".ipynb" or not p.is_file():
            print(f"tidy_outputs: {path!r} is not a notebook file (.ipynb)", file=sys.stderr)
            return 2
        nb = nbformat.read(p, as_version=4)
        if tidy(nb):
            nbformat.write(nb, p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
