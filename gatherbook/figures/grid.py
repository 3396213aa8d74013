"""The one renderer of pictures of cells, :func:`render`, and the checker's :func:`draw_tensors`.

Every picture of cells in the book is rows of :class:`Panel` s, with one cell geometry and one
rule for the ink on a coloured cell; rows wrap, so no figure is wider than ``style.MAX_WIDTH``.
One tensor (:func:`panel`): 0-d one cell, 1-d a row, 2-d a grid with row and column numbers, 3-d
a row of 2-d slices ``name[0]``, ``name[1]`` ...; at most ``MAX_SHAPE`` = (4, 8, 10).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.text import Annotation

from gatherbook import args
from gatherbook.figures import style

__all__ = ["draw_tensors"]

MAX_SHAPE = (4, 8, 10)  #: the most slices, rows and columns a picture of a tensor shows
PLAIN, QUIET = -2, -1  #: colour ids that are not palette entries: a plain cell, a quiet one

# --- geometry, in inches -----------------------------------------------------------------------
_CELL_H, _CELL_W_MIN = 0.34, 0.40
_CELL_PAD = 0.16  # room left and right of the widest value
_TAG_PAD = 0.035  # from a cell's top-left corner to its link number
_COL_NUMBERS_H = 0.19  # column numbers above a grid
_NUMBER_PAD = 0.05  # from the grid to its row and column numbers
_SLICE_LABEL_H = 0.22  # "input[0]" above a slice
_TITLE_H, _LINE_H = 0.30, 0.19  # a panel title, each further line of it
_SLICE_GAP, _PANEL_GAP, _ROW_GAP = 0.30, 0.55, 0.18  # between slices, panels of a row, rows
MARGIN, _FIGTITLE_H = 0.18, 0.42
_ARROW_OFF = 0.14  # from the grid edge to the dim arrow
_ARROW_ROOM = 0.36  # room the dim arrow and its label take beside or under a grid
_NOTE_H = 0.30  # each line of text under a picture
_HEADING_H = 0.22  # a heading line over a column or a part of a picture: "(a)"


def shape_title(label: str, t: torch.Tensor) -> str:
    return f"{label}  {tuple(t.shape)}"


def cell_array(values, shape: tuple[int, ...]) -> np.ndarray:
    """An object array of ``shape`` holding ``values`` (a flat list) as they are: a colour stays
    one cell, not a row of numbers."""
    a = np.empty(len(values), dtype=object)
    a[:] = values
    return a.reshape(shape)


def _gids(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """The gid of every cell, ``name[1,0]``, so tests can find it."""
    return cell_array([f"{name}[{','.join(map(str, pos))}]" for pos in np.ndindex(*shape)], shape)


def _cell_w(texts: np.ndarray) -> float:
    """A cell width with room for the widest of ``texts``."""
    widest = max(style.text_width(str(s), style.FS_VALUE) for s in texts.reshape(-1))
    return max(_CELL_W_MIN, widest + _CELL_PAD)


@dataclass
class Grid:
    """One 2-d slice of cells and everything drawn with it; arrays are ``(rows, cols)``."""

    texts: np.ndarray
    ids: np.ndarray  # colour ids: PLAIN, QUIET or a palette index
    mark: np.ndarray | None  # bool: cells to outline in mark_color
    gids: np.ndarray  # "index[1,0]", so tests can find a cell
    label: str | None  # "input[0]" for a slice of a 3-d tensor
    row_names: tuple[str, ...]  # left of the rows: their numbers 0, 1, 2 ..., names, or none
    col_numbers: bool
    cell_w: float
    names_size: float = style.FS_NUMBER  # row numbers are numbers; row names are labels
    empty: bool = False  # the tensor has no elements: drawn as one dashed "empty" cell
    tagged: bool = False  # linked cells also carry their link number (more links than colours)
    faces: np.ndarray | None = None  # colours that replace the ids' faces (None: no cell)
    mark_color: str = style.MARK
    cell_h: float = _CELL_H

    @property
    def width(self) -> float:
        return self.texts.shape[1] * self.cell_w

    @property
    def height(self) -> float:
        return self.texts.shape[0] * self.cell_h

    @property
    def numbers_w(self) -> float:  # room for the row numbers left of the grid
        if not self.row_names:
            return 0.0
        return max(style.text_width(n, self.names_size) for n in self.row_names) + _NUMBER_PAD + 0.04

    @property
    def head(self) -> float:  # room above the grid (column numbers, slice label)
        return (_COL_NUMBERS_H if self.col_numbers else 0.04) + (_SLICE_LABEL_H if self.label else 0.0)


@dataclass
class Panel:
    """One tensor: a title and one grid (a row of them for a 3-d tensor)."""

    title: str
    grids: list[Grid]
    arrow: str | None = None  # "h" / "v": the dim arrow under / beside each grid; "slices": across them
    arrow_label: str = ""
    #: the checker's pictures: a slice label wider than its cells ("yours[0]" over one column)
    #: widens its slot (it runs neither into the next slice nor past the figure), and a panel
    #: without a title (a wrapped tensor's further slices) takes no room for one
    tight: bool = False

    @property
    def head(self) -> float:
        title_h = 0.0 if self.tight and not self.title else _TITLE_H + _LINE_H * self.title.count("\n")
        return title_h + max(g.head for g in self.grids)

    @property
    def title_w(self) -> float:
        return max(style.text_width(line, style.FS_TITLE) for line in self.title.split("\n"))

    @property
    def foot(self) -> float:
        return _ARROW_ROOM if self.arrow in ("h", "slices") else 0.0

    def slot_w(self, g: Grid) -> float:
        label_w = style.text_width(g.label, style.FS_LABEL) + 0.05 if g.label and self.tight else 0.0
        return g.numbers_w + max(g.width, label_w) + (_ARROW_ROOM if self.arrow == "v" else 0.0)


def _as_slices(a: np.ndarray) -> np.ndarray:
    """View an array of 0 to 3 dims as (slices, rows, cols)."""
    return a.reshape((1,) * (3 - a.ndim) + a.shape)


def panel(name: str, t: torch.Tensor, title: str, ids: np.ndarray | None = None,
          mark: torch.Tensor | np.ndarray | None = None, tagged: bool = False,
          faces: np.ndarray | None = None, mark_color: str = style.MARK,
          numbers: bool | None = None, cell_h: float = _CELL_H,
          fmt: Callable[[float], str] = "{:.2f}".format) -> Panel:
    """Cells of tensor ``t`` (0 to 3 dims), named ``name`` in slice labels and cell gids. Arrays of
    ``t``'s shape: ``ids`` (PLAIN, QUIET or a palette index) or ``faces`` (colours), and ``mark``
    (cells outlined in ``mark_color``). ``tagged``: linked cells also show their colour id (more
    links than colours); ``numbers``: row numbers (default: 2-d and 3-d); ``fmt`` writes a float.
    """
    shape = tuple(t.shape)
    if t.ndim > len(MAX_SHAPE) or any(s > m for s, m in zip(shape[::-1], MAX_SHAPE[::-1])):
        raise ValueError(f"{name} has shape {shape}, too big for a picture: at most {MAX_SHAPE}. "
                         f"Draw a slice such as {name}[:2], or print {name}.shape.")
    t = t.detach().cpu()
    if t.numel() == 0:
        texts = np.array([["empty"]], dtype=object)
        return Panel(title, [Grid(texts, np.array([[PLAIN]]), None, np.array([[f"{name}[]"]]), label=None,
                                  row_names=(), col_numbers=False, cell_w=_cell_w(texts), empty=True)])
    write = fmt if t.is_floating_point() or t.is_complex() else str
    texts = cell_array([write(v) for v in t.reshape(-1).tolist()], shape)
    cell_w = _cell_w(texts)
    ids = np.full(shape, PLAIN) if ids is None else ids
    if isinstance(mark, torch.Tensor):
        mark = mark.detach().cpu().numpy()
    marks = None if mark is None else _as_slices(np.asarray(mark, dtype=bool))
    all_faces = None if faces is None else _as_slices(np.asarray(faces, dtype=object))
    numbered = t.ndim >= 2 if numbers is None else numbers
    grids = []
    for k, (s_texts, s_ids, s_gids) in enumerate(zip(_as_slices(texts), _as_slices(ids),
                                                      _as_slices(_gids(name, shape)))):
        grids.append(Grid(
            texts=s_texts, ids=s_ids, mark=None if marks is None else marks[k], gids=s_gids,
            label=f"{name}[{k}]" if t.ndim == 3 else None, col_numbers=t.ndim >= 1,
            row_names=tuple(map(str, range(s_texts.shape[0]))) if numbered else (),
            cell_w=cell_w, tagged=tagged, faces=None if all_faces is None else all_faces[k],
            mark_color=mark_color, cell_h=cell_h,
        ))
    return Panel(title, grids)


def wrap_slices(p: Panel, width: float = style.MAX_WIDTH) -> list[Panel]:
    """``p`` cut into panels of as many slices as fit a figure ``width`` inches wide (the title
    on the first)."""
    n = max(1, int((width - 2 * MARGIN + _SLICE_GAP) // (p.slot_w(p.grids[0]) + _SLICE_GAP)))
    return [Panel(p.title if k == 0 else "", p.grids[k:k + n], tight=p.tight)
            for k in range(0, len(p.grids), n)]


def text_panel(name: str, texts, faces, title: str = "", *, row_names: tuple[str, ...] = (),
               col_numbers: bool = True, mark=None, mark_color: str = style.MARK,
               cell_w: float | None = None) -> Panel:
    """One grid of given texts (a 2-d list) on given faces (colours, same shape): for cells that
    are not one tensor's values (tokens, a table of verdicts). Rows may be named (``row_names``)."""
    texts = np.array(texts, dtype=object)
    face_array = cell_array([f for row in faces for f in row], texts.shape)  # colours may be RGB tuples
    grid = Grid(texts, np.full(texts.shape, PLAIN), None if mark is None else np.asarray(mark, dtype=bool),
                _gids(name, texts.shape), label=None, row_names=row_names, col_numbers=col_numbers,
                cell_w=cell_w or _cell_w(texts), faces=face_array, mark_color=mark_color,
                names_size=style.FS_LABEL)
    return Panel(title, [grid])


# --- drawing -----------------------------------------------------------------------------------
_ID_FACES = {PLAIN: (style.PAPER, style.INK), QUIET: (style.QUIET_FACE, style.QUIET_INK)}


def _draw_grid(ax, g: Grid) -> None:
    """Draw grid ``g`` on ``ax``: one data unit per cell, row 0 at the top. Cells are Rectangles
    whose gid names them; row and column numbers are texts (gid ``row`` / ``col``), not ticks
    (slow to make)."""
    rows, cols = g.texts.shape
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_axis_off()
    number_style = dict(fontsize=style.FS_NUMBER, family=style.FONT, color=style.MUTED, clip_on=False)
    if g.col_numbers:
        for j in range(cols):
            ax.text(j + 0.5, -_NUMBER_PAD / g.cell_h, str(j), ha="center", va="bottom", gid="col", **number_style)
    for i, name in enumerate(g.row_names):
        ax.text(-_NUMBER_PAD / g.cell_w, i + 0.5, name, ha="right", va="center_baseline", gid="row",
                **{**number_style, "fontsize": g.names_size})
    for i in range(rows):
        for j in range(cols):
            colour_id = int(g.ids[i, j])
            face, ink = _ID_FACES.get(colour_id) or (style.PALETTE[colour_id % len(style.PALETTE)], style.INK)
            if g.faces is not None:
                face = g.faces[i, j]
                if face is None:  # no cell here (the end of a wrapped line)
                    continue
                ink = style.ink_on(face)
            cell = Rectangle((j, i), 1, 1, facecolor=face, edgecolor=style.EDGE, linewidth=0.8,
                             linestyle="--" if g.empty else "-", clip_on=False, zorder=1)
            cell.set_gid(str(g.gids[i, j]))
            ax.add_artist(cell)  # not add_patch: the limits are set, and updating them is slow
            ax.text(j + 0.5, i + 0.5, str(g.texts[i, j]), ha="center", va="center_baseline", zorder=3, gid="value",
                    fontsize=style.FS_VALUE, family=style.FONT, color=style.MUTED if g.empty else ink,
                    style="italic" if g.empty else "normal")
            if g.tagged and colour_id >= 0:  # the link number: a second cue beside the colour
                ax.text(j + _TAG_PAD / g.cell_w, i + _TAG_PAD / g.cell_h, str(colour_id), ha="left", va="top",
                        zorder=3, fontsize=style.FS_TAG, family=style.FONT, color=style.MUTED, gid="tag")
            if g.mark is not None and g.mark[i, j]:
                outline = Rectangle((j + 0.06, i + 0.06), 0.88, 0.88, fill=False, edgecolor=g.mark_color,
                                    linewidth=2.6, clip_on=False, zorder=2)
                outline.set_gid(f"mark:{g.gids[i, j]}")
                ax.add_artist(outline)


class Canvas:
    """A new pyplot figure of ``width`` x ``height`` inches, addressed in inches from its top-left
    and placed in figure fractions (not via ``dpi_scale_trans``), so that Jupyter's inline
    backend, which crops with ``bbox_inches="tight"``, keeps it all in place."""

    def __init__(self, width: float, height: float) -> None:
        self.w, self.h = width, height
        self.fig = plt.figure(figsize=(width, height), facecolor=style.PAPER, edgecolor=style.PAPER)
        self.fig.patch.set_alpha(1.0)

    def xy(self, x: float, y: float) -> tuple[float, float]:
        return x / self.w, 1.0 - y / self.h

    def axes(self, left: float, top: float, width: float, height: float):
        x0, y1 = self.xy(left, top + height)
        return self.fig.add_axes((x0, y1, width / self.w, height / self.h))

    def text(self, x: float, y: float, text: str, *, size: float, color: str = style.INK, **kw) -> None:
        self.fig.text(*self.xy(x, y), text, fontsize=size, color=color, family=style.FONT, **kw)

    def arrow(self, start: tuple[float, float], end: tuple[float, float]) -> None:
        self.fig.add_artist(FancyArrowPatch(self.xy(*start), self.xy(*end), transform=self.fig.transFigure,
                                            arrowstyle="-|>", mutation_scale=11, linewidth=1.2, color=style.MUTED,
                                            shrinkA=0, shrinkB=0))

    def dim_arrow_h(self, left: float, right: float, bottom: float, label: str) -> None:
        """A left-to-right arrow labelled ``dim=...`` under a grid from ``left`` to ``right``."""
        span, mid, y = max(right - left - 0.16, 0.36), (left + right) / 2, bottom + _ARROW_OFF
        self.arrow((mid - span / 2, y), (mid + span / 2, y))
        self.text(mid, y + 0.05, label, size=style.FS_LABEL, color=style.MUTED, ha="center", va="top")

    def dim_arrow_v(self, x: float, top: float, bottom: float, label: str) -> None:
        """A top-to-bottom arrow labelled ``dim=...`` right of a grid."""
        self.arrow((x, top + 0.04), (x, bottom - 0.04))
        self.text(x + 0.07, (top + bottom) / 2, label, size=style.FS_LABEL, color=style.MUTED, rotation=-90,
                  ha="left", va="center")


#: a line of text under a picture: (text, face) segments; a face highlights its segment
Note = list[tuple[str, object]]


def _note_gap(line: Note, i: int) -> float:
    """Points between segments i - 1 and i of a note: room for a box's pad."""
    return 3.0 if line[i][1] is not None or line[i - 1][1] is not None else 0.0


@dataclass
class Layout:
    """Where :func:`render` puts everything, in inches from the figure's top-left corner."""

    placed: list  # (panel, x, row_top, grid_top)
    headings: list  # (text, x, top)
    slots: Callable[[Panel], list[float]]
    width: float  # of the figure
    height: float
    note_top: float


def layout(rows: list, title: str | None = None, same_slots: bool = False, gap: float = _PANEL_GAP,
           note: list[Note] | None = None, columns: bool = False, column_gap: float = _PANEL_GAP) -> Layout:
    """The places of :func:`render`'s arguments (the same ones), without drawing: its ``width``
    is the drawn width, by which a caller chooses between two layouts."""
    def panels_of(row) -> list[Panel]:
        groups = row if columns else [row]
        return [p for g in groups if not isinstance(g, str) for p in g]

    common = max(p.slot_w(g) for row in rows if not isinstance(row, str) for p in panels_of(row)
                 for g in p.grids) if same_slots else None

    def slots(p: Panel) -> list[float]:
        return [common or p.slot_w(g) for g in p.grids]

    def panel_w(p: Panel) -> float:
        grids_w = sum(slots(p)) + _SLICE_GAP * (len(p.grids) - 1)
        return max(grids_w, p.grids[0].numbers_w + p.title_w)

    def group_w(group) -> float:  # a column of a row: a heading, or panels side by side
        if isinstance(group, str):
            return style.text_width(group, style.FS_TITLE)
        return sum(panel_w(p) for p in group) + gap * (len(group) - 1) if group else 0.0

    room, lines = style.MAX_WIDTH - 2 * MARGIN, []  # lines: the rows after wrapping, lists of columns
    for row in rows:
        if columns or isinstance(row, str):  # columns: the caller has measured them; a heading: one line
            lines.append(list(row) if columns else [row])
            continue
        lines.append([[]])
        for p in row:  # a panel that would end past the room starts a new line
            if lines[-1][0] and sum(panel_w(q) + gap for q in lines[-1][0]) + panel_w(p) > room:
                lines.append([[]])
            lines[-1][0].append(p)
    n_cols = max((len(line) for line in lines), default=1)
    col_x = [MARGIN]
    for k in range(1, n_cols):  # the k-th column of every line that has one starts at one x
        col_x.append(col_x[-1] + max(group_w(line[k - 1]) for line in lines if len(line) > k) + column_gap)
    placed, headings = [], []
    y, width = MARGIN + (_FIGTITLE_H if title else 0.0), 0.0
    for line in lines:
        panels = [p for g in line if not isinstance(g, str) for p in g]
        head = max([p.head for p in panels] + [_HEADING_H for g in line if isinstance(g, str)])
        for k, group in enumerate(line):
            if isinstance(group, str):
                headings.append((group, col_x[k], y))
                width = max(width, col_x[k] + group_w(group))
                continue
            x = col_x[k]
            for p in group:  # columns: a title right above its cells, though another's has two lines
                placed.append((p, x, y + head - p.head if columns else y, y + head))
                x += panel_w(p) + gap
            if group:
                width = max(width, x - gap)
        body = max((g.height for p in panels for g in p.grids), default=0.0)
        y += head + body + max((p.foot for p in panels), default=0.0) + _ROW_GAP
    note_top = y
    for line in note or []:
        width = max(width, MARGIN + style.text_width("".join(t for t, _ in line), style.FS_VALUE)
                    + sum(_note_gap(line, i) for i in range(1, len(line))) / 72 + 0.05)
        y += _NOTE_H
    fig_w = max(width, MARGIN + (style.text_width(title, style.FS_FIGTITLE) if title else 0.0)) + MARGIN
    fig_h = y - _ROW_GAP + MARGIN + (_ROW_GAP if note else 0.0)
    return Layout(placed, headings, slots, fig_w, fig_h, note_top)


def render(rows: list, title: str | None, same_slots: bool = False, gap: float = _PANEL_GAP,
           note: list[Note] | None = None, columns: bool = False, column_gap: float = _PANEL_GAP) -> Figure:
    """Lay out rows of panels (left to right, rows top to bottom) on a new pyplot figure, in
    inches from the top-left corner, so cells have one size in every panel and nothing overlaps.
    A row wider than ``style.MAX_WIDTH`` wraps. ``same_slots``: one slot width for every grid, so
    slice k of every row sits in one column. ``gap``: inches between the panels of a row.
    ``note``: lines under the panels, each ``(text, face)`` segments (a face: set on a box).
    A row may be a ``str``: a heading line (bold) over the rows after it.
    ``columns``: each row is a list of columns instead, each a list of panels (empty: nothing
    there) or a heading; the k-th column of every row starts at one x, so two examples stand side
    by side, input beside input; nothing wraps (the caller measures :func:`layout`'s width first);
    ``column_gap``: inches between the columns (``gap``: between the panels of one column).
    """
    at = layout(rows, title, same_slots, gap, note, columns, column_gap)
    placed, slots, note_top = at.placed, at.slots, at.note_top
    # whole pixels at 100 dpi, so Jupyter's "<Figure size 852x228 ...>" is a tidy, stable text
    canvas = Canvas(math.ceil(at.width * 100) / 100, math.ceil(at.height * 100) / 100)

    if title:
        canvas.text(MARGIN, MARGIN, title, size=style.FS_FIGTITLE, weight="bold", ha="left", va="top")
    for text, x, top in at.headings:  # "(a)", "(b)": which example a column or a part shows
        canvas.text(x, top + _HEADING_H - 0.07, text, size=style.FS_TITLE, weight="bold", ha="left",
                    va="bottom")
    for p, x, row_top, grid_top in placed:  # titles of a row on one line, grids of a row top-aligned
        title_bottom = row_top + _TITLE_H + _LINE_H * p.title.count("\n") - 0.07
        canvas.text(x + p.grids[0].numbers_w, title_bottom, p.title, size=style.FS_TITLE,
                    ha="left", va="bottom", linespacing=1.15)
        gx = x
        for g, slot in zip(p.grids, slots(p)):
            left, bottom = gx + g.numbers_w, grid_top + g.height
            _draw_grid(canvas.axes(left, grid_top, g.width, g.height), g)
            if g.label:
                canvas.text(left, grid_top - (_COL_NUMBERS_H if g.col_numbers else 0.0) - 0.02, g.label,
                            size=style.FS_LABEL, color=style.MUTED, ha="left", va="bottom")
            if p.arrow == "h":
                canvas.dim_arrow_h(left, left + g.width, bottom, p.arrow_label)
            elif p.arrow == "v":
                canvas.dim_arrow_v(left + g.width + _ARROW_OFF, grid_top, bottom, p.arrow_label)
            gx += slot + _SLICE_GAP
        if p.arrow == "slices":  # from the first slice's left edge to the last one's right edge
            bottom = grid_top + max(g.height for g in p.grids)
            canvas.dim_arrow_h(x + p.grids[0].numbers_w, left + p.grids[-1].width, bottom, p.arrow_label)
    for k, line in enumerate(note or []):  # each segment placed right after the one before it
        prev = None
        for i, (text, face) in enumerate(line):
            box = None if face is None else dict(boxstyle="square,pad=0.15", facecolor=face, edgecolor=style.EDGE,
                                                 linewidth=0.6)
            kw = dict(fontsize=style.FS_VALUE, family=style.FONT, color=style.INK, ha="left", bbox=box, gid="value")
            if prev is None:
                prev = canvas.fig.text(*canvas.xy(MARGIN, note_top + (k + 0.5) * _NOTE_H), text,
                                       va="center_baseline", **kw)
            else:
                prev = canvas.fig.add_artist(Annotation(text, xy=(1, 0), xycoords=prev, textcoords="offset points",
                                                        xytext=(_note_gap(line, i), 0), va="bottom", **kw))
    return canvas.fig


# --- public ------------------------------------------------------------------------------------
@style.styled
def draw_tensors(tensors: Mapping[str, torch.Tensor], *, title: str | None = None,
                 mark: Mapping[str, torch.Tensor] | None = None,
                 float_format: Callable[[float], str] | None = None) -> Figure:
    """A row of grids, one per entry of ``tensors`` (titled with its key and shape), in order.

    Each tensor: 0 to 3 dims, at most 4 slices, 8 rows and 10 columns. Floats have 2 decimals, or
    ``float_format``'s (the checker's, so that picture and text show the same numbers). ``mark``:
    some keys -> bool tensors of their shapes; True cells get a red outline (where answers differ).

    Introduced in Chapter 1 (the exercise checker's picture).
    """
    for name, t in style.mapping("tensors", tensors).items():
        args.tensor(f"tensors[{name!r}]", t)
    mark = style.mapping("mark", mark, optional=True)
    for name, m in mark.items():
        assert name in tensors, f"mark[{name!r}] names no entry of tensors ({', '.join(tensors)})"
        assert args.tensor(f"mark[{name!r}]", m, kind="bool").shape == tensors[name].shape, \
            f"mark[{name!r}] needs the shape of tensors[{name!r}]"
    assert float_format is None or callable(float_format), "float_format: a function float -> str"
    fmt = {"fmt": float_format} if float_format else {}
    return render([[panel(name, t, shape_title(name, t), mark=mark.get(name), **fmt)
                    for name, t in tensors.items()]], title)
