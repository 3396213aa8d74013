"""The pictures of a check (gatherbook.exercises): a case's inputs, the target and, for a failure,
yours, stacked one under another (the puzzles' worked examples and failures); or expected beside
got (a chapter exercise's failure). Cells of the kit's one renderer (:mod:`gatherbook.figures.grid`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from matplotlib.figure import Figure

from gatherbook.figures import style
from gatherbook.figures.grid import cell_array, panel, render, text_panel, wrap_slices

FACES = {"input": style.PAPER, "expected": style.PALETTE[0], "yours": style.PALETTE[1]}
WIDTH = 3.6  # inches: the slices of a 3-d tensor wrap within 360 px, which a phone shows whole


@style.styled
def draw_case(panels: Sequence[tuple[str, Any, str]], *, title: str | None = None,
              mark: torch.Tensor | None = None, fmt: Callable[[Any], str] = str) -> Figure | None:
    """Draw ``panels``, each ``(label, value, kind)`` with kind ``input``, ``expected`` or
    ``yours`` (white, blue and orange cells), one under another.

    A tensor is a grid titled with its shape and dtype (3-d: its slices side by side, as many as
    fit 360 px; more dims: viewed as ``(-1, last)``), floats written as the check prints them;
    any other value (a Python number, the name of the error your code raised) is one cell.
    ``mark``: a bool tensor of the ``yours`` tensor's shape; its True cells get a red outline.
    ``fmt`` writes a number (the check passes the one its text uses). Returns ``None`` when a
    tensor is too big to draw (over 4 slices, 8 rows or 10 columns).

    Introduced in the Practice part.
    """
    rows = []
    for label, value, kind in panels:
        if not isinstance(value, torch.Tensor):
            cell = text_panel(label, [[fmt(value)]], [[FACES[kind]]], label, col_numbers=False)
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
                      mark=mark.reshape(t.shape) if marked else None, fmt=fmt)
        except ValueError:  # too big for a picture: the printed text says it all
            return None
        rows += [[part] for part in wrap_slices(p, WIDTH)]
    return render(rows, title)


def draw_failed_case(result, args: Sequence[str], fmt: Callable[[Any], str] = str) -> Figure | None:
    """A failed check's case: the inputs (named ``args``), expected and yours, stacked; when the
    answer raised, the error's name stands for yours. ``None`` when there is nothing to draw (a
    rule broken, over 200 numbers)."""
    r = result
    if r.status not in ("failed", "raised") or r.kind == "rule" or r.inputs is None \
            or not isinstance(r.expected, torch.Tensor):
        return None
    panels = [(a, v, "input") for a, v in zip(args, r.inputs)]
    panels.append(("expected", r.expected, "expected"))
    if r.status == "raised":
        panels.append(("yours", r.facts["type"], "yours"))  # the error's name
    elif isinstance(r.got, torch.Tensor):
        panels.append(("yours", r.got, "yours"))
    if sum(v.numel() for _, v, _ in panels if isinstance(v, torch.Tensor)) > 200:
        return None
    return draw_case(panels, mark=r.differs, fmt=fmt)


def draw_expected_got(result, fmt: Callable[[Any], str] = str) -> Figure | None:
    """A failed check's expected beside got (0 to 3 dims, at most ``(4, 8, 10)``; the differing
    cells marked for a values failure), or ``None`` when that makes no sense to draw."""
    from gatherbook.figures.grid import draw_tensors

    e, g = result.expected, result.got
    drawable = all(isinstance(t, torch.Tensor) and t.ndim <= 3 and t.numel() > 0 for t in (e, g))
    if result.kind not in ("shape", "values") or not drawable:
        return None
    mark = {"got": result.differs} if result.differs is not None else None
    try:
        return draw_tensors({"expected": e, "got": g}, title=f"{result.name}  #{result.case}", mark=mark,
                            float_format=fmt)
    except ValueError:  # too big (or shapes it cannot draw): the text says it all
        return None
