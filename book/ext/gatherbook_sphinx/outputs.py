"""Notebook outputs as published: tracebacks show what a reader needs, and nothing of the machine that built the book.

A cell that is meant to raise is stored with IPython's full traceback: every frame inside the
helper package, each with the absolute path of the machine that executed the notebook. On the
page that becomes a screen of internals and ``File /home/someone/...``. When the page is built
(:func:`rewrite_tracebacks`; the notebooks keep their stored outputs, which nbval compares), each traceback keeps:

- IPython's header (``ValueError    Traceback (most recent call last)``);
- the frames of the reader's own cells (``Cell In[3], line 1`` and its lines);
- one ``(...)`` where frames of library code were (no paths, no source);
- the exception and its message, with any absolute path in it cut to the package's own path.

``tools/notebooks.py tidy`` (``make execute``) applies :func:`strip_machine_paths` to the stored
notebooks, so the downloads carry no machine paths either.
"""
from __future__ import annotations

import re

from docutils import nodes

# The start of a frame in IPython's traceback, once ANSI colours are stripped.
_CELL_FRAME = re.compile(r"^(Cell In ?\[\d*\], line \d+|Input In \[\d*\])")
_OTHER_FRAME = re.compile(r"^File [^\n]*?(:\d+)?, in |^File <|^File /")
# An absolute path of the building machine, up to the part a reader can place: the package's
# own folder (``gatherbook/x.py``) or a module under site-packages (``torch/nn/functional.py``).
_MACHINE_PATH = re.compile(
    r"(?:[A-Za-z]:)?(?:/|\\)(?:[^\s'\"():,]*(?:/|\\))?"
    r"(?:site-packages|dist-packages|lib(?:64)?/python3[.\d]*)(?:/|\\)"
    r"|(?:[A-Za-z]:)?/(?:work|root|home|tmp|Users|opt|usr)/[^\s'\"():,]*?/(?=gatherbook/)")
ELLIPSIS = "   (...)"  # as IPython marks lines it leaves out (its lexer knows it)


def strip_machine_paths(text: str) -> str:
    """Remove the building machine's part of absolute paths (``/home/x/repo/gatherbook/a.py`` ->
    ``gatherbook/a.py``; ``/.../site-packages/torch/f.py`` -> ``torch/f.py``)."""
    return _MACHINE_PATH.sub("", text)


def reader_traceback(text: str) -> str:
    """The traceback ``text`` (IPython's, colours stripped) as a reader should see it.

    Text that does not look like a traceback with frames is returned with paths stripped only.
    """
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if _CELL_FRAME.match(line) or _OTHER_FRAME.match(line)]
    if not starts:
        return strip_machine_paths(text)
    last = starts[-1]
    # the exception: the first unindented line after a blank line, after the last frame's start
    exc = next((j for j in range(last + 1, len(lines))
                if lines[j].strip() and lines[j][0] not in " -" and not lines[j - 1].strip()), len(lines))
    out = lines[:starts[0]]
    bounds = starts + [exc]
    for start, end in zip(bounds, bounds[1:]):
        frame = lines[start:end]
        if _CELL_FRAME.match(lines[start]):
            out += frame
        elif out[-2:] != [ELLIPSIS, ""]:
            out += [ELLIPSIS, ""]
    out += lines[exc:]
    return strip_machine_paths("\n".join(out))


def rewrite_tracebacks(app, doctree) -> None:
    """Rewrite every traceback output of the page (myst-nb marks them ``output traceback``)."""
    for node in doctree.findall(nodes.literal_block):
        if "traceback" not in node.get("classes", []):
            continue
        text = node.astext()
        new = reader_traceback(text)
        if new != text:
            node.children = []
            node += nodes.Text(new)
            node.rawsource = new
    for node in doctree.findall(nodes.literal_block):  # stream outputs (warnings) name paths too
        if "output" in node.get("classes", []) and "traceback" not in node.get("classes", []):
            text = node.astext()
            new = strip_machine_paths(text)
            if new != text:
                node.children = []
                node += nodes.Text(new)
                node.rawsource = new
