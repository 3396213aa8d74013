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
true}}`` whose text is the caption (:func:`caption_source`; ``book/captions.py`` writes them and
a test holds them equal). The site drops those cells: the figure shows its caption already.
"""
from __future__ import annotations

import json

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
    in place of its source; caption cells dropped. Returns whether anything changed."""
    before = len(nb.get("cells", []))
    nb["cells"] = [c for c in nb.get("cells", []) if not is_caption_cell(c)]
    changed = len(nb["cells"]) != before
    for cell in nb.get("cells", []):
        site = (cell.get("metadata", {}).get(KEY) or {}).get("site")
        if cell.get("cell_type") == "markdown" and isinstance(site, str):
            cell["source"] = site
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
