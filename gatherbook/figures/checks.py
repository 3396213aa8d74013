"""The pictures of a check (gatherbook.exercises): a case's inputs, the target and, for a failure,
yours, stacked one under another (the puzzles' worked examples and failures), a target cell that
copies an input cell coloured as that cell (the chapters' gather pictures link them the same way);
or expected beside got (a chapter exercise's failure). Cells of the kit's one renderer (:mod:`gatherbook.figures.grid`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from matplotlib.figure import Figure

from gatherbook.figures import style
from gatherbook.figures.grid import PLAIN, QUIET, cell_array, panel, render, text_panel, wrap_slices

FACES = {"input": style.PAPER, "expected": style.PALETTE[0], "yours": style.PALETTE[1]}
BUMP = 1000  # what copy_links adds to one input cell: a copied value moves by exactly this much
WIDTH = 3.6  # inches: the slices of a 3-d tensor wrap within 360 px, which a phone shows whole


def copy_links(fn: Callable[..., Any], case: Sequence[Any], target: torch.Tensor) -> tuple[int, np.ndarray, np.ndarray] | None:
    """Where each value of ``target = fn(*case)`` came from: ``(arg, source_ids, target_ids)``, the
    first argument whose values the target copies and colour ids of its shape and ``target``'s. A
    target cell is linked when exactly one cell of ``case[arg]`` moves it by exactly :data:`BUMP` when that cell moves by it, and holds that cell's
    value (a copy, as a gather makes): both get the same palette index, numbered in the order of
    the source cells; a source cell nobody copies is ``QUIET`` (grey), a target cell with no single
    source ``PLAIN``. ``None`` when nothing is a copy (a sum, a count, a position) or the tensors
    are too big to try cell by cell (over 120 values)."""
    for arg, x in enumerate(case):
        ids = _links_from(fn, case, target, arg)
        if ids is not None:
            return (arg,) + ids
    return None


def _links_from(fn: Callable[..., Any], case: Sequence[Any], target: torch.Tensor, arg: int):
    x = case[arg]
    if not isinstance(x, torch.Tensor) or x.dtype == torch.bool or not 0 < x.numel() <= 120 \
            or not isinstance(target, torch.Tensor) or target.dtype != x.dtype or not 0 < target.numel() <= 120:
        return None
    flat, base = x.reshape(-1), target.reshape(-1)
    rest = [a.clone() if isinstance(a, torch.Tensor) else a for a in case]
    found = [[] for _ in range(base.numel())]
    for j in range(flat.numel()):
        moved = flat.clone()
        moved[j] += BUMP
        try:
            out = fn(*[moved.view_as(x) if k == arg else (a.clone() if isinstance(a, torch.Tensor) else a)
                       for k, a in enumerate(rest)])
        except Exception:  # the loops may refuse a value that far out: no link from this cell
            continue
        if not isinstance(out, torch.Tensor) or out.shape != target.shape:
            continue
        step = (out.reshape(-1) - base).double()
        for k in torch.nonzero((step - BUMP).abs() < 1e-3).flatten().tolist():
            found[k].append(j)
    source = {k: js[0] for k, js in enumerate(found) if len(js) == 1 and bool(base[k] == flat[js[0]])}
    if not source:
        return None
    order = {j: n for n, j in enumerate(sorted(set(source.values())))}
    src_ids = np.full(flat.numel(), QUIET)
    for j, n in order.items():
        src_ids[j] = n
    tgt_ids = np.full(base.numel(), PLAIN)
    for k, j in source.items():
        tgt_ids[k] = order[j]
    return src_ids.reshape(tuple(x.shape)), tgt_ids.reshape(tuple(target.shape))


@style.styled
def draw_case(panels: Sequence[tuple[str, Any, str]], *, title: str | None = None,
              mark: torch.Tensor | None = None, fmt: Callable[[Any], str] = str,
              links: dict[str, np.ndarray] | None = None) -> Figure | None:
    """Draw ``panels``, each ``(label, value, kind)`` with kind ``input``, ``expected`` or
    ``yours`` (white, blue and orange cells), one under another.

    A tensor is a grid titled with its shape and dtype (3-d: its slices side by side, as many as
    fit 360 px; more dims: viewed as ``(-1, last)``), floats written as the check prints them;
    any other value (a Python number, the name of the error your code raised) is one cell.
    ``mark``: a bool tensor of the ``yours`` tensor's shape; its True cells get a red outline.
    ``fmt`` writes a number (the check passes the one its text uses). ``links``: colour ids (a
    palette index, ``QUIET`` or ``PLAIN``) of a panel's cells by its label, as :func:`copy_links`
    makes them: a target cell and the input cell it copies share a colour. Returns ``None`` when a
    tensor is too big to draw (over 4 slices, 8 rows or 10 columns).

    Introduced in the Practice part.
    """
    rows, scalars = [], None  # scalars: the row of one-cell panels being filled (side by side)
    for label, value, kind in panels:
        if not isinstance(value, torch.Tensor):
            cell = text_panel(label, [[fmt(value)]], [[FACES[kind]]], label, col_numbers=False)
            if scalars is None:
                scalars = []
                rows.append(scalars)
            scalars.append(cell)  # E, C, k ...: one row, not a screen's height of single cells
            continue
        scalars = None
        t = value.detach().cpu()
        title_ = f"{label}  {tuple(t.shape)} {str(t.dtype).removeprefix('torch.')}"
        name = label if t.ndim <= 3 else f"{label}.view(-1, {t.shape[-1]})"
        marked = kind == "yours" and mark is not None and mark.shape == t.shape
        if t.ndim > 3:
            t = t.reshape(-1, t.shape[-1])
        ids = (links or {}).get(label)
        tagged = ids is not None and int(ids.max(initial=-1)) >= len(style.PALETTE)  # colours repeat: numbers too
        try:
            if ids is not None:
                p = panel(name, t, title_, ids=ids.reshape(t.shape), tagged=tagged, fmt=fmt)
            else:
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
