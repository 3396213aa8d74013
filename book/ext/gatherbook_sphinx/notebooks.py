"""Notebook cells that read differently on the site and in JupyterLab.

A notebook is read in two places: the site (Sphinx, with this extension's directives) and
JupyterLab (with jupyterlab-myst, which shows a directive it does not know, such as
``{gather-explorer}``, as a red "Unknown Directive"). A markdown cell's source is what JupyterLab
shows; when the site should show something else (an interactive widget), the cell's metadata
holds the site's version::

    "metadata": {"gatherbook": {"site": "Try it ...\\n\\n```{gather-explorer}\\n:compact:\\n```"}}

:func:`site_sources` (``source-read``) puts it in place of the source before myst-nb parses the
notebook; JupyterLab never sees it.

Figure captions live in the figure cell's metadata (``mystnb.figure.caption``), where myst-nb
makes them the figure's caption on the site; JupyterLab shows no metadata. So each figure cell is
followed by a caption cell for JupyterLab, a markdown cell marked ``{"gatherbook": {"caption":
true}}`` whose text is the caption (:func:`caption_source`; ``tools/notebooks.py captions`` writes them and
a test holds them equal). The site drops those cells: the figure shows its caption already.
"""
from __future__ import annotations

import json
import re

KEY = "gatherbook"


def caption_source(caption: str) -> str:
    """The markdown of a figure's caption cell: the caption, in italics (one line)."""
    return f"*{' '.join(caption.split())}*"


def is_caption_cell(cell: dict) -> bool:
    return cell.get("cell_type") == "markdown" and bool((cell.get("metadata", {}).get(KEY) or {}).get("caption"))


def figure_caption(cell: dict) -> str | None:
    if cell.get("cell_type") != "code":
        return None
    return ((cell.get("metadata", {}).get("mystnb") or {}).get("figure") or {}).get("caption")


def with_caption_cells(nb: dict) -> int:
    """Give every figure cell of ``nb`` (a notebook as JSON) its caption cell, right after it, with
    the caption's current text (in place). Returns how many cells were added or changed."""
    cells, out, changed = nb.get("cells", []), [], 0
    for i, cell in enumerate(cells):
        if is_caption_cell(cell):
            continue  # written again after its figure cell
        out.append(cell)
        caption = figure_caption(cell)
        if caption:
            old = cells[i + 1] if i + 1 < len(cells) and is_caption_cell(cells[i + 1]) else None
            text = caption_source(caption)
            if old is None or "".join(old["source"]) != text:
                changed += 1
            new = old or {"cell_type": "markdown", "id": f"{cell.get('id', 'cell')}-caption"[:64],
                          "metadata": {KEY: {"caption": True}}, "source": []}
            new["source"] = [text]
            out.append(new)
    nb["cells"] = out
    return changed


def site_version(nb: dict) -> bool:
    """The site's version of ``nb`` (in place): each markdown cell's ``metadata.gatherbook.site``
    in place of its source, an exercise cell's fences put back (:func:`fenced_source`); caption
    cells dropped. Returns whether anything changed."""
    before = len(nb.get("cells", []))
    nb["cells"] = [c for c in nb.get("cells", []) if not is_caption_cell(c)]
    changed = len(nb["cells"]) != before
    for cell in nb.get("cells", []):
        site = (cell.get("metadata", {}).get(KEY) or {}).get("site")
        if cell.get("cell_type") == "markdown" and isinstance(site, str):
            cell["source"] = site
            changed = True
        elif cell.get("cell_type") == "markdown" and lab_meta(cell) is not None:
            cell["source"] = fenced_source(cell)  # the exercise's fences back (lab_labels.py)
            changed = True
    return changed


def site_sources(app, docname: str, source: list) -> None:
    """``source-read``: the site's version of a notebook's cells."""
    if not source or '"gatherbook"' not in source[0] or not source[0].lstrip().startswith("{"):
        return
    try:
        nb = json.loads(source[0])
    except ValueError:
        return
    if site_version(nb):
        source[0] = json.dumps(nb, ensure_ascii=False)


# --- Exercise and solution labels for JupyterLab (tools/notebooks.py labels) --------------------------
#
# jupyterlab-myst titles an ``{exercise}`` "Exercise 1" in English, numbered per notebook, and a
# folded solution cell shows its first line, the ``{solution-start}`` fence, as its placeholder.
# So the cells are stored in JupyterLab's form: the fence lines are moved into the cell's metadata
# (``{"gatherbook": {"lab": {"header": ..., "footer": ..., "label": ...}}}``) and a label in the
# notebook's language, numbered as on the site, takes their place:
#
#     ````{exercise} One-hot targets          **Exercise 5.1 (One-hot targets)**
#     :label: ch5-ex-one-hot             ->
#                                             Write `one_hot(...)` ...
#     Write `one_hot(...)` ...
#     ````
#
# The text under the label stays the cell's source (edit it there); a solution's text is folded
# under a <details> line (LAB_FOLD: it stays folded after Run All). :func:`site_version` puts the
# fences back for the site. A cell written with its fences (a new exercise) is turned into this
# form by ``tools/notebooks.py labels``, which is idempotent.

LAB = "lab"
# A solution's explanation in JupyterLab, folded under a line that says what it is: JupyterLab
# shows a cell whose source is hidden again when it runs a markdown cell, so after Run All every
# explanation lay open under its check (issue 38); a <details> stays closed when it renders.
LAB_FOLD = ("\n<details class=\"gb-solution\"><summary>{summary}</summary>\n", "\n\n</details>")
SOLUTION_END = "<!-- solution-end -->"
LABELLED = ("exercise", "solution-start", "solution-end")
_FENCE = re.compile(r"\A(?P<fence>`{3,}|:{3,})\{(?P<kind>exercise|solution-start|solution-end)\}[ \t]*"
                    r"(?P<arg>[^\n]*)\n(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)")
_LABEL_OPTION = re.compile(r"^[ \t]*:label:[ \t]*(\S+)", re.M)
_CLASS_OPTION = re.compile(r"^[ \t]*:class:[ \t]*([^\n]*)", re.M)
#: the class that makes an ``{exercise}`` a puzzle of the Practice part (``:class: puzzle``, written
#: by tools/practice_pages.py): numbered on its own and titled "Puzzle 9" / 「第 9 题」 on the site
#: (titles.py) and in JupyterLab, never "Exercise" / 「练习」, which name the chapters' exercises
PUZZLE = "puzzle"


def is_puzzle(header: str) -> bool:
    """Whether an ``{exercise}`` fence's header (its first line and options) makes a puzzle."""
    m = _CLASS_OPTION.search(header)
    return bool(m) and PUZZLE in m.group(1).split()


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def lab_meta(cell: dict) -> dict | None:
    meta = (cell.get("metadata", {}).get(KEY) or {}).get(LAB)
    return meta if isinstance(meta, dict) else None


def fenced_source(cell: dict) -> str:
    """The cell's source with its exercise fences (what the site parses); unchanged for any other
    cell, and for a labelled cell whose label line was edited away (the labels test says so)."""
    src, meta = _source(cell), lab_meta(cell)
    if cell.get("cell_type") != "markdown" or meta is None:
        return src
    label = meta.get("label", "")
    if label:
        if not src.startswith(label + "\n"):
            return src
        src = src[len(label) + 1:]
    opening, closing = meta.get("open", ""), meta.get("close", "")
    if opening and src.startswith(opening) and src.endswith(closing):  # a solution's fold (LAB_FOLD)
        src = src[len(opening):len(src) - len(closing)]
    return meta.get("header", "") + src + meta.get("footer", "")


def split_fences(src: str) -> tuple[str, str, str, str, str] | None:
    """``(kind, title_or_target, header, body, footer)`` of a fenced exercise cell, else None."""
    m = _FENCE.match(src)
    if not m:
        return None
    kind, fence = m.group("kind"), m.group("fence")
    header, rest, footer = m.group(0), src[m.end():], ""
    if kind == "exercise":
        close = re.search(r"\n" + re.escape(fence) + r"[ \t]*\n?\Z", rest)
        if not close:
            return None
        rest, footer = rest[:close.start()], rest[close.start():]
    else:  # solution-start / -end: the directive is only its fence lines
        close = re.match(re.escape(fence) + r"[ \t]*(\n|\Z)", rest)
        if not close:
            return None
        header, rest = header + close.group(0), rest[close.end():]
    return kind, m.group("arg").strip(), header, rest, footer


def exercise_labels(cells: list[dict], numbers: list[str], words: dict) -> dict[str, tuple[str, str, bool]]:
    """``{label: (number, title, puzzle)}`` for the exercises among ``cells``, numbered with
    ``numbers``."""
    found, k = {}, 0
    for cell in cells:
        parts = split_fences(fenced_source(cell)) if cell.get("cell_type") == "markdown" else None
        if parts and parts[0] == "exercise":
            label = _LABEL_OPTION.search(parts[2])
            if label:
                found[label.group(1)] = (numbers[k] if k < len(numbers) else "?", parts[1], is_puzzle(parts[2]))
            k += 1
    return found


def exercise_kinds(nb: dict) -> list[str]:
    """``"puzzle"`` or ``"exercise"`` for each ``{exercise}`` of ``nb``, in order (each kind is
    numbered on its own: Sphinx counts each enumerable node type apart)."""
    kinds = []
    for c in nb.get("cells", []):
        parts = split_fences(fenced_source(c)) if c.get("cell_type") == "markdown" else None
        if parts and parts[0] == "exercise":
            kinds.append(PUZZLE if is_puzzle(parts[2]) else "exercise")
    return kinds


#: the words of a label: (an exercise or its solution, a puzzle or not) -> the words' key
_LAB_WORDS = {("exercise", False): "lab_exercise", ("solution", False): "lab_solution",
              ("exercise", True): "lab_puzzle", ("solution", True): "lab_puzzle_solution"}


def _title(words: dict, kind: str, number: str, title: str, puzzle: bool = False) -> str:
    key = _LAB_WORDS["exercise" if kind == "exercise" else "solution", puzzle] + ("" if title else "_untitled")
    return words[key].format(number=number, title=title)


def with_lab_labels(nb: dict, numbers: list[str], words: dict) -> int:
    """Write ``nb``'s exercise cells in JupyterLab's form (in place), the exercises numbered
    ``numbers`` in order and labelled with ``words`` (an edition's words table). Returns how many
    cells changed."""
    cells = nb.get("cells", [])
    labels = exercise_labels(cells, numbers, words)
    changed = 0
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        parts = split_fences(fenced_source(cell))
        if not parts:
            continue
        kind, arg, header, body, footer = parts
        if kind == "exercise":
            label = _LABEL_OPTION.search(header)
            number, title, puzzle = labels.get(label.group(1) if label else "", ("?", arg, is_puzzle(header)))
            text = f"**{_title(words, kind, number, title, puzzle)}**"
        elif kind == "solution-start":
            number, title, puzzle = labels.get(arg, ("?", "", False))
            text = _title(words, kind, number, title, puzzle)
        else:  # solution-end: nothing to show, but a cell JupyterLab renders (an empty one it edits)
            text = SOLUTION_END
        meta = {"header": header, "footer": footer, "label": text}
        if kind == "solution-start" and body.strip():
            opening, closing = LAB_FOLD
            meta.update(open=opening.format(summary=words["lab_solution_fold"]), close=closing)
            body = meta["open"] + body + closing
        new_src = (text + "\n" + body) if text else body
        if _source(cell) != new_src or lab_meta(cell) != meta:
            changed += 1
        cell["source"] = new_src
        cell.setdefault("metadata", {}).setdefault(KEY, {})[LAB] = meta
    return changed
