"""The picture of a puzzle's case (Practice): its inputs, the target and, for a failure, yours,
stacked one under another as cells of the kit's one renderer (:mod:`gatherbook.figures.grid`)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from matplotlib.figure import Figure

from gatherbook.figures import style
from gatherbook.figures.grid import cell_array, panel, render, text_panel, wrap_slices

FACES = {"input": style.PAPER, "expected": style.PALETTE[0], "yours": style.PALETTE[1]}
WIDTH = 3.6  # inches: the slices of a 3-d tensor wrap within 360 px, which a phone shows whole


@style.styled
def draw_case(panels: Sequence[tuple[str, Any, str]], *, title: str | None = None,
              mark: torch.Tensor | None = None) -> Figure | None:
    """Draw ``panels``, each ``(label, value, kind)`` with kind ``input``, ``expected`` or
    ``yours`` (white, blue and orange cells), one under another.

    A tensor is a grid titled with its shape and dtype (3-d: its slices side by side, as many as
    fit 360 px; more dims: viewed as ``(-1, last)``), floats written as the check prints them;
    any other value (a Python number, the name of the error your code raised) is one cell.
    ``mark``: a bool tensor of the ``yours`` tensor's shape; its True cells get a red outline.
    Returns ``None`` when a tensor is too big to draw (over 4 slices, 8 rows or 10 columns).

    Introduced in Practice, the part after Chapter 7.
    """
    from gatherbook.exercises._messages import scalar  # the numbers the check prints

    rows = []
    for label, value, kind in panels:
        if not isinstance(value, torch.Tensor):
            cell = text_panel(label, [[scalar(value)]], [[FACES[kind]]], label, col_numbers=False)
            rows.append([cell])
            continue
        t = value.detach().cpu()
        title_ = f"{label}  {tuple(t.shape)} {str(t.dtype).removeprefix('torch.')}"
        name = label if t.ndim <= 3 else f"{label}.view(-1, {t.shape[-1]})"
        marked = kind == "yours" and mark is not None and mark.shape == t.shape
        if t.ndim > 3:
            t = t.reshape(-1, t.shape[-1])
        try:
            p = panel(name, t, title_, faces=cell_array([FACES[kind]] * t.numel(), tuple(t.shape)),
                      mark=mark.reshape(t.shape) if marked else None, fmt=scalar)
        except ValueError:  # too big for a picture: the printed text says it all
            return None
        rows += [[part] for part in wrap_slices(p, WIDTH)]
    return render(rows, title)
