"""Pictures of a puzzle's case: its inputs, the target, and (for a failure) yours, stacked.

Panels go one under another, so the picture stays narrow enough for a phone (390 px): each
tensor is a grid of cells with its numbers in them (3D: one grid per slice, ``x[0]``, ``x[1]`` ...),
a Python number is one line (``k = 2``). Labels are code identifiers and numbers only, so one
picture serves both editions. Colours and fonts come from :mod:`gatherbook.style`.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch

from gatherbook.figures import style

CELL = 0.30        # inches: the smallest cell side
PAD = 0.08         # inches: space around the picture
LABEL_H = 0.26     # inches: a panel's label line
GAP = 0.12         # inches: between panels and slices
FACES = {"input": style.PAPER, "expected": style.PALETTE[0], "yours": style.PALETTE[1]}


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "T" if v else "F"
    if isinstance(v, float):
        s = f"{v:.4f}".rstrip("0")
        s = s + "0" if s.endswith(".") else s
        return "-0.0" if s == "-0.0" else s
    return str(v)


def _grid(t: torch.Tensor) -> list[list[str]]:
    """A 0-2D tensor as rows of cell texts (1D: one row; 0D: one cell)."""
    if t.ndim == 0:
        return [[_text(t.item())]]
    if t.ndim == 1:
        return [[_text(v) for v in t.tolist()]]
    return [[_text(v) for v in row] for row in t.tolist()]


def _slices(name: str, t: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
    if t.ndim <= 2:
        return [(name, t)]
    if t.ndim == 3:
        return [(f"{name}[{i}]", t[i]) for i in range(t.shape[0])]
    return [(f"{name}.view(-1, {t.shape[-1]})", t.reshape(-1, t.shape[-1]))]


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


@style.styled
def draw_case(panels: Sequence[tuple[str, Any, str]], *, title: str | None = None,
              mark: torch.Tensor | None = None):
    """Draw ``panels``, each ``(label, value, kind)`` with kind ``input``, ``expected`` or ``yours``.

    ``mark``: a bool tensor of the ``yours`` panel's shape; its True cells get a red outline.
    Returns the matplotlib Figure (end the cell with ``;``).

    Introduced in Practice, the part after Chapter 7.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    fs = style.FS_VALUE - 1
    char = style.EM * fs / 72
    rows: list[tuple] = []   # ("label", text, kind) | ("grid", cells, kind, cell_w, marked)
    if title:
        rows.append(("title", title, None))
    for label, value, kind in panels:
        if not isinstance(value, torch.Tensor):
            rows.append(("label", f"{label} = {_text(value)}", kind))
            continue
        value = value.detach().cpu()
        rows.append(("label", f"{label}: {tuple(value.shape)} {_dtype(value)}", kind))
        if value.numel() == 0:
            rows.append(("label", "  (empty)", kind))
            continue
        marks = mark.reshape(value.shape) if (kind == "yours" and mark is not None
                                               and mark.shape == value.shape) else None
        for k, (sub, part) in enumerate(_slices(label, value)):
            cells = _grid(part)
            width = max(CELL, max(len(c) for r in cells for c in r) * char + 0.10)
            part_mark = None
            if marks is not None:
                m = marks[k] if value.ndim == 3 else marks
                part_mark = _grid(m.reshape(part.shape))
            if value.ndim == 3:
                rows.append(("sub", sub, kind))
            rows.append(("grid", cells, kind, width, part_mark))
    # sizes in inches
    W = 0.0
    H = PAD
    for r in rows:
        if r[0] == "grid":
            W = max(W, len(r[1][0]) * r[3])
            H += len(r[1]) * CELL + GAP
        else:
            W = max(W, len(r[1]) * style.EM * style.FS_LABEL / 72)
            H += LABEL_H if r[0] != "sub" else LABEL_H * 0.8
    W = max(W + 2 * PAD, 1.6)
    H += PAD
    fig = plt.figure(figsize=(round(W * 100) / 100, round(H * 100) / 100), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, W)
    ax.set_ylim(H, 0)
    ax.axis("off")
    y = PAD
    for r in rows:
        if r[0] == "grid":
            _, cells, kind, cw, part_mark = r
            for i, row in enumerate(cells):
                for j, text in enumerate(row):
                    x0, y0 = PAD + j * cw, y + i * CELL
                    ax.add_patch(Rectangle((x0, y0), cw, CELL, facecolor=FACES[kind],
                                           edgecolor=style.EDGE, linewidth=0.8))
                    ax.text(x0 + cw / 2, y0 + CELL / 2, text, ha="center", va="center",
                            fontsize=fs, color=style.INK)
                    if part_mark is not None and part_mark[i][j] == "T":
                        ax.add_patch(Rectangle((x0 + 0.02, y0 + 0.02), cw - 0.04, CELL - 0.04,
                                               fill=False, edgecolor=style.MARK, linewidth=2.0))
            y += len(cells) * CELL + GAP
        else:
            kind = r[0]
            size = style.FS_TITLE if kind == "title" else style.FS_LABEL
            colour = style.MUTED if kind == "sub" else style.INK
            h = LABEL_H * (0.8 if kind == "sub" else 1.0)
            ax.text(PAD, y + h * 0.55, r[1], ha="left", va="center", fontsize=size, color=colour,
                    fontweight="bold" if kind == "title" else "normal")
            y += h
    return fig
