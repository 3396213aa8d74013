"""The pictures of a check (gatherbook.exercises): a case's inputs and its target stacked one under
another (a puzzle's worked example; two examples side by side where they fit), a target cell that
copies an input cell coloured as that cell (the chapters' gather pictures link them the same way);
for a failure, the inputs above and yours beside the expected target (stacked where that row is
too wide); or expected beside got (a chapter exercise's failure). Cells of the kit's one renderer (:mod:`gatherbook.figures.grid`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from matplotlib.figure import Figure

from gatherbook.figures import style
from gatherbook.figures.grid import (MARGIN, PLAIN, QUIET, Panel, cell_array, layout, panel, render,
                                     text_panel, wrap_slices)

FACES = {"input": style.PAPER, "expected": style.PALETTE[0], "yours": style.PALETTE[1]}
BUMP = 1000  # what copy_links adds to one input cell: a copied value moves by exactly this much
WIDTH = 3.6  # inches: the slices of a 3-d tensor wrap within 360 px, which a phone shows whole
SCALAR_GAP = 0.3  # inches between one-cell panels (E, C) where two examples share the width
COLUMN_GAP = 0.4  # inches between two examples side by side (each headed: (a), (b))


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


Spec = tuple[str, Any, str]  # a panel to draw: (label, value, kind)
Rows = list[list[Panel]]


def _blocks(panels: Sequence[Spec], mark: torch.Tensor | None, fmt: Callable[[Any], str],
            links: dict[str, np.ndarray] | None, width: float | None = WIDTH) -> list[Rows] | None:
    """One case's ``panels`` as blocks of rows: a block per tensor (its slices wrapped within
    ``width`` inches; ``None``: one row), one for each run of single values side by side.
    ``None`` when a tensor is too big to draw."""
    blocks: list[Rows] = []
    scalars = None  # the row of one-cell panels being filled
    for label, value, kind in panels:
        if not isinstance(value, torch.Tensor):
            cell = text_panel(label, [[fmt(value)]], [[FACES[kind]]], label, col_numbers=False)
            if scalars is None:
                scalars = []
                blocks.append([scalars])
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
        p.tight = True
        blocks.append([[part] for part in wrap_slices(p, width)] if width else [[p]])
    return blocks


def _narrow(blocks: list[Rows]) -> list[Rows]:
    """``blocks`` with each title that is wider than every row of cells of its example on two
    lines (the name, then the shape and dtype): an example's width is then its widest cells'."""
    def cells_w(row: list[Panel]) -> float:  # a tensor's cells; a row of single values as drawn
        if len(row) == 1 and (not row[0].title or "  " in row[0].title):
            return _span(row[0])
        return layout([row], gap=SCALAR_GAP).width - 2 * MARGIN

    widest = max(cells_w(row) for block in blocks for row in block)
    for block in blocks:
        for row in block:
            for p in row:
                _two_lines(p, widest)
    return blocks


def _two_lines(p: Panel, room: float) -> None:
    """``p``'s title on two lines (its name, then its shape and dtype) when wider than ``room``."""
    if "  " in p.title and p.title_w > room:
        p.title = p.title.replace("  ", "\n", 1)


def _span(p: Panel) -> float:
    """Inches from ``p``'s first cell to its last slice's right edge (where its title starts
    to where its cells end)."""
    return layout([[Panel("", p.grids, tight=p.tight)]]).width - 2 * MARGIN - p.grids[0].numbers_w


def _rows(blocks: list[Rows]) -> Rows:
    return [row for block in blocks for row in block]


def _fits(rows: list, **how: Any) -> bool:
    """Whether ``rows`` drawn side by side stay within the widest figure: measured unwrapped
    (as columns), since :func:`render` would wrap a row that does not."""
    if not how.get("columns"):
        rows, how = [[row] for row in rows], {**how, "columns": True}
    return layout(rows, **how).width <= style.MAX_WIDTH + 1e-9


def _same_cells(panels: Sequence[Panel]) -> None:
    """One cell width for every grid of ``panels`` (target and yours on one scale)."""
    grids = [g for p in panels for g in p.grids if not g.empty]
    for g in grids:
        g.cell_w = max(h.cell_w for h in grids)


@style.styled
def draw_case(panels: Sequence[Spec], *, title: str | None = None,
              mark: torch.Tensor | None = None, fmt: Callable[[Any], str] = str,
              links: dict[str, np.ndarray] | None = None, beside: int = 0) -> Figure | None:
    """Draw ``panels``, each ``(label, value, kind)`` with kind ``input``, ``expected`` or
    ``yours`` (white, blue and orange cells), one under another.

    A tensor is a grid titled with its shape and dtype (3-d: its slices side by side, as many as
    fit 360 px; more dims: viewed as ``(-1, last)``), floats written as the check prints them;
    any other value (a Python number, the name of the error your code raised) is one cell.
    ``mark``: a bool tensor of the ``yours`` tensor's shape; its True cells get a red outline.
    ``fmt`` writes a number (the check passes the one its text uses). ``links``: colour ids (a
    palette index, ``QUIET`` or ``PLAIN``) of a panel's cells by its label, as :func:`copy_links`
    makes them: a target cell and the input cell it copies share a colour. ``beside``: the last
    so many panels stand side by side in one row (expected | yours), cells of one width, when
    that row fits the widest figure (its drawn width decides); else they are stacked too.
    Returns ``None`` when a tensor is too big to draw (over 4 slices, 8 rows or 10 columns).

    Introduced in the Practice part.
    """
    head, tail = panels[:len(panels) - beside], panels[len(panels) - beside:]
    blocks = _blocks(panels, mark, fmt, links)
    if blocks is None:
        return None
    if tail:
        pair = _blocks(tail, mark, fmt, links, width=None)
        placed = _side_by_side(pair, same_scale=all(isinstance(v, torch.Tensor) for _, v, _ in tail))
        if placed is not None:  # the inputs above, their slices wrapped within the widest figure
            rows, how = placed
            top = _packed(_rows(_blocks(head, mark, fmt, links, width=style.MAX_WIDTH)))
            return render([[r] for r in top] + rows, title, **how)
        top = _packed(_rows(blocks[:len(blocks) - len(pair)]), WIDTH)  # stacked: the inputs packed still
        return render(top + _rows(blocks[len(blocks) - len(pair):]), title)
    return render(_rows(blocks), title)


def _packed(rows: Rows, width: float = style.MAX_WIDTH) -> Rows:
    """``rows`` with each one moved up beside the row above where both fit a figure ``width``
    inches wide (the inputs x | idx: a shorter picture)."""
    packed: Rows = []
    for row in rows:
        if packed and layout([[packed[-1] + row]], columns=True).width <= width + 1e-9:
            packed[-1] = packed[-1] + row
        else:
            packed.append(list(row))
    return packed


def _side_by_side(pair: list[Rows], same_scale: bool) -> tuple[list, dict] | None:
    """``pair``'s panels (expected, yours) side by side, on one scale when both are tensors
    (``same_scale``), as rows of columns and how to render them: in one row; else with titles
    wider than their cells on two lines; else, for tensors of several slices, slice k beside
    slice k, row by row. ``None`` when none of these fits the widest figure."""
    row = [p for block in pair for r in block for p in r]
    if same_scale:
        _same_cells(row)
        first, *rest = row
        for p in rest:  # rows in line with the expected's: their numbers once, on the left
            if [g.texts.shape for g in p.grids] == [g.texts.shape for g in first.grids]:
                for g in p.grids:
                    g.row_names = ()
    how = dict(columns=True, gap=COLUMN_GAP, column_gap=COLUMN_GAP)
    for narrow in (False, True):  # then with titles wider than their cells on two lines
        for p in row if narrow else ():
            _two_lines(p, _span(p))
        if _fits([[row]], **how):
            return [[row]], how
    if len(row) == 2 and all(len(p.grids) > 1 for p in row):  # slice k of expected beside slice k of yours
        half = (style.MAX_WIDTH - 2 * MARGIN - COLUMN_GAP) / 2 + 2 * MARGIN
        n = min(len(wrap_slices(p, half)[0].grids) for p in row)  # slices a row, the same for both
        parts = [[Panel(p.title if k == 0 else "", p.grids[k:k + n], tight=True) for k in range(0, len(p.grids), n)]
                 for p in row]
        for ps in parts:  # a title as wide as its first slices' cells, or on two lines
            _two_lines(ps[0], _span(ps[0]))
        rows = [[[ps[k]] if k < len(ps) else [] for ps in parts] for k in range(max(map(len, parts)))]
        if _fits(rows, **how):
            return rows, how
    return None


@style.styled
def draw_examples(cases: Sequence[Sequence[Spec]], *, links: Sequence[dict[str, np.ndarray] | None],
                  fmt: Callable[[Any], str] = str, headings: Sequence[str] = ("(a)", "(b)"),
                  title: str | None = None) -> Figure | None:
    """Two (or more) worked examples, each drawn as :func:`draw_case` draws one (``cases``: its
    panels; ``links``: its colour links), headed ``(a)``, ``(b)`` ...: side by side, input beside
    input and target beside target, where that fits the widest figure (the drawn width decides),
    else one under another. ``None`` when a tensor is too big to draw.

    Introduced in the Practice part.
    """
    assert len(cases) == len(links) == len(headings) >= 2, "one heading and one links per case"
    for narrow in (False, True):  # side by side; then with titles of two lines where they are wider
        every = [_blocks(panels, None, fmt, ids) for panels, ids in zip(cases, links)]
        if narrow and all(b is not None for b in every):
            every = [_narrow(b) for b in every]
        if any(b is None for b in every):
            return None
        if len({len(b) for b in every}) > 1:  # not the same arguments: not side by side
            break
        rows = [list(headings)]  # block k of each example side by side: input beside input
        for parts in zip(*every):
            rows += [[part[r] if r < len(part) else [] for part in parts] for r in range(max(map(len, parts)))]
        how = dict(columns=True, gap=SCALAR_GAP, column_gap=COLUMN_GAP)
        if _fits(rows, **how):
            return render(rows, title, **how)
    every = [_blocks(panels, None, fmt, ids) for panels, ids in zip(cases, links)]
    stacked = []
    for heading, blocks in zip(headings, every):  # each example's inputs packed: x | idx
        stacked += [heading] + _packed(_rows(blocks[:-1]), WIDTH) + _rows(blocks[-1:])
    return render(stacked, title)


def draw_failed_case(result, args: Sequence[str], fmt: Callable[[Any], str] = str) -> Figure | None:
    """A failed check's case: the inputs (named ``args``) above, expected and yours beside each
    other (on one scale, the differing cells outlined) where that fits, else stacked; when the
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
    fig = draw_case(panels, mark=r.differs, fmt=fmt, beside=len(panels) - len(args))
    if fig is not None and style.phone_height(*fig.get_size_inches()) > style.PHONE_SCREEN:
        import matplotlib.pyplot as plt

        plt.close(fig)  # taller than a phone's screen: the printed text says it all
        return None
    return fig


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
