"""Pictures of gather, drawn from the real tensors in a notebook cell.

Two public functions:

- :func:`draw_gather` -- ``input``, ``index`` and ``out = input.gather(dim, index)`` as grids of
  cells; colour links every ``index`` cell (and its ``out`` cell) to the ``input`` cell it reads.
- :func:`draw_tensors` -- a row of labelled grids, optionally with some cells outlined in red
  (the exercise checker uses it to show where an answer differs from the expected one).

Labels are code identifiers and numbers only, so one figure serves both editions of the book;
the caption (in the page's language) lives in the notebook cell's metadata. A figure ends the
cell with ``;`` (``draw_gather(x, 1, idx);``) so Jupyter shows the picture once and no repr.

Layout: a 0-d tensor is one cell, a 1-d tensor one row of cells, a 2-d tensor a grid with row
numbers on the left and column numbers on top, and a 3-d tensor a row of 2-d slices labelled
``name[0]``, ``name[1]`` ... Pictures are for small tensors: at most :data:`MAX_SLICES` slices,
:data:`MAX_ROWS` rows and :data:`MAX_COLS` columns, i.e. shape ``(4, 8, 10)`` at most.
"""
from __future__ import annotations

import contextvars
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from gatherbook import style

__all__ = ["draw_gather", "draw_tensors", "MAX_SLICES", "MAX_ROWS", "MAX_COLS"]

MAX_SLICES = 4  #: most slices (dim -3 of a 3-d tensor) a picture shows
MAX_ROWS = 8  #: most rows (dim -2) a picture shows
MAX_COLS = 10  #: most columns (the last dim) a picture shows
_MAX_NDIM = 3

# --- style: the book's one figure style (gatherbook.style) -------------------------------------
_FONT = style.FONT
_FS_VALUE, _FS_NUMBER, _FS_LABEL, _FS_TITLE, _FS_FIGTITLE = (
    style.FS_VALUE, style.FS_NUMBER, style.FS_LABEL, style.FS_TITLE, style.FS_FIGTITLE)
_FS_TAG = style.FS_TAG  # link numbers in the corner of linked cells
_INK, _MUTED, _EDGE, _MARK = style.INK, style.MUTED, style.EDGE, style.MARK
_PLAIN_FACE = style.PAPER
_UNSELECTED_FACE = style.QUIET_FACE  # input cells that gather does not read
_UNSELECTED_TEXT = style.QUIET_INK
_PALETTE = style.PALETTE
_PLAIN, _UNSELECTED = -2, -1  # colour ids that are not palette entries

# --- geometry, in inches -----------------------------------------------------------------------
_CELL_H = 0.34
_CELL_W_MIN = 0.40
_CELL_PAD = 0.16  # room left and right of the widest value
_TAG_PAD = 0.035  # from a cell's top-left corner to its link number
_COL_NUMBERS_H = 0.19  # column numbers above a grid
_NUMBER_PAD = 0.05  # from the grid to its row and column numbers
_SLICE_LABEL_H = 0.22  # "input[0]" above a slice
_TITLE_H = 0.30  # panel title
_SLICE_GAP = 0.30  # between the slices of one 3-d tensor
_PANEL_GAP = 0.55  # between panels in a row
_ROW_GAP = 0.18  # between rows of panels
_MARGIN = 0.18
_FIGTITLE_H = 0.42
_ARROW_OFF = 0.14  # from the grid edge to the dim arrow
_ARROW_ROOM = 0.36  # room the dim arrow and its label take beside or under a grid


_text_width = style.text_width


# --- validation --------------------------------------------------------------------------------
def _shape(t: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape)


def _require_tensor(name: str, value: object) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        hint = " Convert it first, e.g. torch.tensor(...)." if isinstance(
            value, (list, tuple, int, float, bool, np.ndarray, np.generic)) else ""
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}.{hint}")
    if value.layout != torch.strided:
        raise ValueError(f"{name} is a {value.layout} tensor; pictures need a dense one: {name}.to_dense().")
    return value


@lru_cache(maxsize=1)
def _drawable_codepoints() -> frozenset[int]:
    from matplotlib import font_manager, ft2font

    path = font_manager.findfont(font_manager.FontProperties(family=_FONT))
    return frozenset(ft2font.FT2Font(path).get_charmap())


def _require_label(name: str, value: object) -> str:
    """A text the figure will show: a str whose every character the figure font can draw."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}.")
    drawable = _drawable_codepoints()
    for ch in value:
        if not ch.isprintable() or ord(ch) not in drawable:
            raise ValueError(
                f"{name} {value!r} contains {ch!r}, which a figure label cannot show. Figure labels are "
                "code and numbers (input, index, dim=1) so one picture serves both editions; put words "
                "in the page's language in the cell's caption instead."
            )
    return value


def _check_small(name: str, t: torch.Tensor, fn: str) -> None:
    """Raise ValueError if ``t`` is too big for a readable picture."""
    shape = _shape(t)
    limit_text = (
        f"{fn} is for small tensors: at most {MAX_COLS} columns (last dim), {MAX_ROWS} rows (dim -2) "
        f"and {MAX_SLICES} slices (dim -3 of a 3-d tensor), i.e. shape ({MAX_SLICES}, {MAX_ROWS}, {MAX_COLS}) "
        "at most"
    )
    if t.ndim > _MAX_NDIM:
        raise ValueError(
            f"{name} has {t.ndim} dimensions, shape {shape}, but {fn} draws tensors with 0 to {_MAX_NDIM} "
            f"dimensions (shape ({MAX_SLICES}, {MAX_ROWS}, {MAX_COLS}) at most). Draw a slice of it "
            f"(e.g. {name}[0]) or print {name}.shape."
        )
    limits = (MAX_SLICES, MAX_ROWS, MAX_COLS)[_MAX_NDIM - t.ndim :]
    for d, (size, limit) in enumerate(zip(shape, limits)):
        if size > limit:
            cut = f"{name}[{':, ' * d}:{limit}]"
            raise ValueError(
                f"{name} has shape {shape}: {name}.size({d}) is {size}, too big for a picture; {limit_text}. "
                f"Draw a slice such as {cut}, or print {name}.shape."
            )


def _check_gather(input: object, dim: object, index: object) -> tuple[torch.Tensor, int, torch.Tensor]:
    """The checks torch.gather makes (same rules, readable messages). Returns input, dim >= 0, index."""
    input = _require_tensor("input", input)
    index = _require_tensor("index", index)
    if isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got bool {dim!r}.")
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"dim must be an int, got {type(dim).__name__} {dim!r}.") from None

    # torch checks none of the rules below for an index with no elements (only dim's range)
    empty = index.numel() == 0
    if index.dtype not in (torch.int64, torch.int32) and not empty:
        hint = (
            " A bool mask is not an index: to take the True positions use input[mask] or mask.nonzero()."
            if index.dtype == torch.bool else ""
        )
        raise ValueError(
            f"index has dtype {index.dtype}; gather needs an integer index of dtype torch.int64 "
            f"(torch.int32 works too). Convert it with index.long().{hint}"
        )
    ishape, xshape = _shape(index), _shape(input)
    # torch treats a 0-d tensor like a 1-d tensor of one element here
    if max(index.ndim, 1) != max(input.ndim, 1) and not empty:
        raise ValueError(
            f"index has {index.ndim} dimension(s), shape {ishape}, but input has {input.ndim}, shape {xshape}; "
            "gather needs the same number of dimensions in both. Add the missing ones with "
            "index.unsqueeze(d) or index.view(...)."
        )
    n = max(input.ndim, 1)
    if not -n <= dim < n:
        raise ValueError(
            f"dim={dim} is out of range for input with {input.ndim} dimension(s), shape {xshape}; "
            f"dim must be in {-n} .. {n - 1}."
        )
    given, dim = dim, dim % n
    dim_text = f"dim={given}" if given == dim else f"dim={given} (= dim {dim})"
    if not empty:
        for d in range(index.ndim):
            if d != dim and ishape[d] > xshape[d]:
                raise ValueError(
                    f"index.size({d}) is {ishape[d]} but input.size({d}) is {xshape[d]}; gather needs "
                    f"index.size(d) <= input.size(d) for every d other than {dim_text} "
                    f"(index has shape {ishape}, input has shape {xshape}). Only along dim may index be larger."
                )
        size = xshape[dim] if input.ndim else 1
        values = index.detach().cpu().to(torch.int64).reshape(-1)
        bad = ((values < 0) | (values >= size)).nonzero().flatten()
        if len(bad) > 0:
            first = int(bad[0])
            value = int(values[first])
            where = "index" if index.ndim == 0 else f"index[{', '.join(map(str, np.unravel_index(first, ishape)))}]"
            valid = (f"the index values must lie in 0 .. {size - 1}" if size > 0
                     else "no index value is valid, since input is empty along dim")
            more = f" {len(bad) - 1} more index value(s) are out of range too." if len(bad) > 1 else ""
            if value < 0:
                raise ValueError(
                    f"{where} is {value}, but gather takes no negative indices: unlike input[{value}], "
                    f"{value} does not count from the end, and torch.gather raises 'index {value} is out of "
                    f"bounds'. input has size {size} along {dim_text}, so {valid}.{more}"
                )
            raise ValueError(
                f"{where} is {value}, out of range: input (shape {xshape}) has size {size} along "
                f"{dim_text}, so {valid}.{more}"
            )
    return input, dim, index


# --- what a picture shows ----------------------------------------------------------------------
def _two_decimals(v: float) -> str:
    return f"{v:.2f}"


#: how a float cell is written; draw_tensors(float_format=...) sets it for one drawing
_FLOAT_FORMAT: contextvars.ContextVar[Callable[[float], str]] = contextvars.ContextVar(
    "float_format", default=_two_decimals)


def _cell_texts(t: torch.Tensor) -> np.ndarray:
    """The text of every cell, an object array of ``t``'s shape: floats with 2 decimals (or as
    ``draw_tensors(float_format=...)`` says)."""
    t = t.detach().cpu()
    if t.is_floating_point() or t.is_complex():
        fmt = _FLOAT_FORMAT.get()
    else:
        fmt = str  # bool -> True/False, integers as they are
    texts = [fmt(v) for v in t.reshape(-1).tolist()]
    return np.array(texts, dtype=object).reshape(_shape(t))


def _link_ids(input_shape: tuple[int, ...], dim: int, index: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Colour ids that link ``index`` cells to the ``input`` cells they read.

    Returns ``(input_ids, index_ids)`` of shapes ``input_shape`` and ``index.shape``: every input
    cell that gather reads gets its own id (0, 1, 2 ... in the input's row-major order), the other
    input cells get -1; every index cell (and the out cell at the same position) gets the id of
    the input cell it reads. ``index`` must already be valid for ``input_shape`` and ``dim``.
    """
    shape1 = input_shape or (1,)  # torch treats 0-d like (1,)
    idx = index.detach().cpu().to(torch.int64).numpy().reshape(_shape(index) or (1,))
    source = list(np.indices(idx.shape, dtype=np.int64))
    source[dim] = idx
    flat = np.ravel_multi_index(source, shape1)
    input_ids = np.full(int(np.prod(shape1)), _UNSELECTED, dtype=np.int64)
    chosen = np.unique(flat)
    input_ids[chosen] = np.arange(len(chosen))
    return input_ids.reshape(input_shape), input_ids[flat].reshape(_shape(index))


@dataclass
class _Grid:
    """One 2-d slice of cells and everything drawn with it."""

    texts: np.ndarray  # (rows, cols) str
    ids: np.ndarray  # (rows, cols) colour id: _PLAIN, _UNSELECTED or a palette index
    mark: np.ndarray | None  # (rows, cols) bool: cells to outline in red
    gids: np.ndarray  # (rows, cols) str: "index[1,0]", so tests can find a cell
    label: str | None  # "input[0]" for a slice of a 3-d tensor
    row_numbers: bool
    col_numbers: bool
    cell_w: float
    empty: bool = False  # the tensor has no elements: drawn as one dashed "empty" cell
    tagged: bool = False  # linked cells also carry their link number (more links than colours)

    @property
    def width(self) -> float:
        return self.texts.shape[1] * self.cell_w

    @property
    def height(self) -> float:
        return self.texts.shape[0] * _CELL_H

    @property
    def numbers_w(self) -> float:  # room for the row numbers left of the grid
        if not self.row_numbers:
            return 0.0
        return _text_width(str(self.texts.shape[0] - 1), _FS_NUMBER) + _NUMBER_PAD + 0.04

    @property
    def head(self) -> float:  # room above the grid (column numbers, slice label)
        return (_COL_NUMBERS_H if self.col_numbers else 0.04) + (_SLICE_LABEL_H if self.label else 0.0)


@dataclass
class _Panel:
    """One tensor: a title and one grid (three grids ... for a 3-d tensor)."""

    title: str
    grids: list[_Grid]
    arrow: str | None = None  # "h" / "v": the dim arrow under / beside each grid; "slices": across them
    arrow_label: str = ""

    @property
    def head(self) -> float:
        return _TITLE_H + max(g.head for g in self.grids)

    @property
    def foot(self) -> float:
        return _ARROW_ROOM if self.arrow in ("h", "slices") else 0.0

    def slot_w(self, g: _Grid) -> float:
        return g.numbers_w + g.width + (_ARROW_ROOM if self.arrow == "v" else 0.0)


def _as_slices(a: np.ndarray) -> np.ndarray:
    """View an array of 0 to 3 dims as (slices, rows, cols)."""
    return a.reshape((1,) * (3 - a.ndim) + a.shape)


def _panel(name: str, t: torch.Tensor, title: str, ids: np.ndarray | None = None,
           mark: torch.Tensor | None = None, tagged: bool = False) -> _Panel:
    """Cells of tensor ``t`` (0 to 3 dims), named ``name`` in slice labels and cell gids.

    ``tagged``: write each linked cell's colour id in its corner as well, so that the link
    stays unambiguous when there are more linked cells than palette colours.
    """
    shape = _shape(t)
    texts = _cell_texts(t) if t.numel() else np.array([["empty"]], dtype=object)
    cell_w = max(_CELL_W_MIN, max(_text_width(s, _FS_VALUE) for s in texts.reshape(-1)) + _CELL_PAD)
    if t.numel() == 0:
        empty = _Grid(texts, np.array([[_PLAIN]]), None, np.array([[f"{name}[]"]]), label=None,
                      row_numbers=False, col_numbers=False, cell_w=cell_w, empty=True)
        return _Panel(title, [empty])
    ids = np.full(shape, _PLAIN) if ids is None else ids
    marks = None if mark is None else _as_slices(mark.detach().cpu().numpy().astype(bool))
    positions = np.empty(shape, dtype=object)
    for pos in np.ndindex(*shape):
        positions[pos] = f"{name}[{','.join(map(str, pos))}]"
    grids = []
    for k, (s_texts, s_ids, s_gids) in enumerate(zip(_as_slices(texts), _as_slices(ids), _as_slices(positions))):
        grids.append(_Grid(
            texts=s_texts, ids=s_ids, mark=None if marks is None else marks[k], gids=s_gids,
            label=f"{name}[{k}]" if t.ndim == 3 else None,
            row_numbers=t.ndim >= 2, col_numbers=t.ndim >= 1, cell_w=cell_w, tagged=tagged,
        ))
    return _Panel(title, grids)


def _title(label: str, t: torch.Tensor) -> str:
    return f"{label}  {_shape(t)}"


# --- drawing -----------------------------------------------------------------------------------
def _face_and_text(colour_id: int) -> tuple[object, str]:
    if colour_id == _PLAIN:
        return _PLAIN_FACE, _INK
    if colour_id == _UNSELECTED:
        return _UNSELECTED_FACE, _UNSELECTED_TEXT
    return _PALETTE[colour_id % len(_PALETTE)], _INK


def _draw_grid(ax, g: _Grid) -> None:
    """Draw grid ``g`` on ``ax``: one data unit per cell, row 0 at the top.

    Cells are Rectangles whose gid names them (``"index[1,0]"``); the row and column numbers are
    plain texts (gid ``"row"`` / ``"col"``) rather than axis ticks, which are slow to make.
    """
    rows, cols = g.texts.shape
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_axis_off()
    number_style = dict(fontsize=_FS_NUMBER, family=_FONT, color=_MUTED, clip_on=False)
    if g.col_numbers:
        for j in range(cols):
            ax.text(j + 0.5, -_NUMBER_PAD / _CELL_H, str(j), ha="center", va="bottom", gid="col", **number_style)
    if g.row_numbers:
        for i in range(rows):
            ax.text(-_NUMBER_PAD / g.cell_w, i + 0.5, str(i), ha="right", va="center_baseline", gid="row",
                    **number_style)
    for i in range(rows):
        for j in range(cols):
            face, ink = _face_and_text(int(g.ids[i, j]))
            cell = Rectangle((j, i), 1, 1, facecolor=face, edgecolor=_EDGE, linewidth=0.8,
                             linestyle="--" if g.empty else "-", clip_on=False, zorder=1)
            cell.set_gid(str(g.gids[i, j]))
            ax.add_artist(cell)  # not add_patch: the limits are set, and updating them is slow
            ax.text(j + 0.5, i + 0.5, str(g.texts[i, j]), ha="center", va="center_baseline", zorder=3,
                    fontsize=_FS_VALUE, family=_FONT, color=_MUTED if g.empty else ink,
                    style="italic" if g.empty else "normal")
            if g.tagged and g.ids[i, j] >= 0:  # the link number: a second cue beside the colour
                ax.text(j + _TAG_PAD / g.cell_w, i + _TAG_PAD / _CELL_H, str(int(g.ids[i, j])),
                        ha="left", va="top", zorder=3, fontsize=_FS_TAG, family=_FONT,
                        color=_MUTED, gid="tag")
            if g.mark is not None and g.mark[i, j]:
                outline = Rectangle((j + 0.06, i + 0.06), 0.88, 0.88, fill=False, edgecolor=_MARK,
                                    linewidth=2.6, clip_on=False, zorder=2)
                outline.set_gid(f"mark:{g.gids[i, j]}")
                ax.add_artist(outline)


class _Canvas:
    """A new pyplot figure of ``width`` x ``height`` inches, addressed in inches from its top-left.

    Everything is placed in figure fractions (not in inches via ``dpi_scale_trans``), so that
    Jupyter's inline backend, which crops with ``bbox_inches="tight"``, keeps it all in place.
    """

    def __init__(self, width: float, height: float) -> None:
        self.w, self.h = width, height
        self.fig = plt.figure(figsize=(width, height), facecolor="white", edgecolor="white")
        self.fig.patch.set_alpha(1.0)

    def _xy(self, x: float, y: float) -> tuple[float, float]:
        return x / self.w, 1.0 - y / self.h

    def axes(self, left: float, top: float, width: float, height: float):
        x0, y1 = self._xy(left, top + height)
        return self.fig.add_axes((x0, y1, width / self.w, height / self.h))

    def text(self, x: float, y: float, text: str, *, size: float, color: str = _INK, **kw) -> None:
        self.fig.text(*self._xy(x, y), text, fontsize=size, color=color, family=_FONT, **kw)

    def arrow(self, start: tuple[float, float], end: tuple[float, float]) -> None:
        self.fig.add_artist(FancyArrowPatch(self._xy(*start), self._xy(*end), transform=self.fig.transFigure,
                                            arrowstyle="-|>", mutation_scale=11, linewidth=1.2, color=_MUTED,
                                            shrinkA=0, shrinkB=0))

    def dim_arrow_h(self, left: float, right: float, bottom: float, label: str) -> None:
        """A left-to-right arrow under a grid that spans ``left`` to ``right``, labelled ``dim=...``."""
        span = max(right - left - 0.16, 0.36)
        mid, y = (left + right) / 2, bottom + _ARROW_OFF
        self.arrow((mid - span / 2, y), (mid + span / 2, y))
        self.text(mid, y + 0.05, label, size=_FS_LABEL, color=_MUTED, ha="center", va="top")

    def dim_arrow_v(self, x: float, top: float, bottom: float, label: str) -> None:
        """A top-to-bottom arrow right of a grid, labelled ``dim=...``."""
        self.arrow((x, top + 0.04), (x, bottom - 0.04))
        self.text(x + 0.07, (top + bottom) / 2, label, size=_FS_LABEL, color=_MUTED, rotation=-90,
                  ha="left", va="center")


def _render(rows: list[list[_Panel]], title: str | None, same_slots: bool = False) -> Figure:
    """Lay out rows of panels (left to right, rows top to bottom) on a new pyplot figure.

    All positions are worked out in inches from the top-left corner, so cells have the same size
    in every panel and nothing overlaps. ``same_slots`` gives every grid the same slot width, so
    that slice k of every row sits in the same column (the rows of a 3-d gather picture).
    """
    all_slots = [p.slot_w(g) for row in rows for p in row for g in p.grids]
    common = max(all_slots) if same_slots else None

    def slots(p: _Panel) -> list[float]:
        return [common if common else p.slot_w(g) for g in p.grids]

    def panel_w(p: _Panel) -> float:
        grids_w = sum(slots(p)) + _SLICE_GAP * (len(p.grids) - 1)
        return max(grids_w, p.grids[0].numbers_w + _text_width(p.title, _FS_TITLE))

    placed = []  # (panel, x, row_top, grid_top), inches
    y, width = _MARGIN + (_FIGTITLE_H if title else 0.0), 0.0
    for row in rows:
        head = max(p.head for p in row)
        body = max(g.height for p in row for g in p.grids)
        x = _MARGIN
        for p in row:
            placed.append((p, x, y, y + head))
            x += panel_w(p) + _PANEL_GAP
        width = max(width, x - _PANEL_GAP)
        y += head + body + max(p.foot for p in row) + _ROW_GAP
    fig_w = max(width, _MARGIN + (_text_width(title, _FS_FIGTITLE) if title else 0.0)) + _MARGIN
    fig_h = y - _ROW_GAP + _MARGIN
    # whole pixels at 100 dpi, so Jupyter's "<Figure size 852x228 ...>" is a tidy, stable text
    canvas = _Canvas(math.ceil(fig_w * 100) / 100, math.ceil(fig_h * 100) / 100)

    if title:
        canvas.text(_MARGIN, _MARGIN, title, size=_FS_FIGTITLE, weight="bold", ha="left", va="top")
    for p, x, row_top, grid_top in placed:  # titles of a row on one line, grids of a row top-aligned
        canvas.text(x + p.grids[0].numbers_w, row_top + _TITLE_H - 0.07, p.title, size=_FS_TITLE,
                    ha="left", va="bottom")
        gx = x
        for g, slot in zip(p.grids, slots(p)):
            left, bottom = gx + g.numbers_w, grid_top + g.height
            _draw_grid(canvas.axes(left, grid_top, g.width, g.height), g)
            if g.label:
                canvas.text(left, grid_top - (_COL_NUMBERS_H if g.col_numbers else 0.0) - 0.02, g.label,
                            size=_FS_LABEL, color=_MUTED, ha="left", va="bottom")
            if p.arrow == "h":
                canvas.dim_arrow_h(left, left + g.width, bottom, p.arrow_label)
            elif p.arrow == "v":
                canvas.dim_arrow_v(left + g.width + _ARROW_OFF, grid_top, bottom, p.arrow_label)
            gx += slot + _SLICE_GAP
        if p.arrow == "slices":
            last = p.grids[-1]
            right = gx - _SLICE_GAP - slots(p)[-1] + last.numbers_w + last.width
            canvas.dim_arrow_h(x + p.grids[0].numbers_w, right, grid_top + max(g.height for g in p.grids),
                               p.arrow_label)
    return canvas.fig


# --- public ------------------------------------------------------------------------------------
@style.styled
def draw_gather(input: torch.Tensor, dim: int, index: torch.Tensor, *, title: str | None = None) -> Figure:
    """Draw ``input``, ``index`` and ``out = torch.gather(input, dim, index)`` as grids of cells.

    Shapes: ``input`` has 0 to 3 dims; ``index`` has as many (torch lets a 0-d and a 1-d tensor
    pair up) and ``index.size(d) <= input.size(d)`` for every ``d != dim``; ``out`` has
    ``index``'s shape and ``out[i][j] = input[i][index[i][j]]`` for ``dim == 1`` (likewise for
    the other dims). Every ``input`` cell that gather reads gets its own colour, and each
    ``index`` cell and its ``out`` cell get the colour of the ``input`` cell they read; cells
    nobody reads stay light grey. When gather reads more input cells than the palette has
    colours (9), colours repeat, so every linked cell also shows its link number (0, 1, 2 ...,
    the read input cells in row-major order) small in its top-left corner: colour and number
    together always name the source cell. An arrow on ``input`` shows the direction of ``dim``.

    1-d and 0-d tensors are drawn as rows of cells stacked ``input`` / ``index`` / ``out``; 2-d
    tensors side by side; 3-d tensors as three rows of slices (``input[0]``, ``input[1]`` ...).
    Sizes: at most 4 slices, 8 rows and 10 columns per tensor. Values are computed on CPU
    copies, so the tensors may live on any device.

    Args:
        input: the tensor to read from.
        dim: the dimension along which ``index`` picks (negative counts from the end).
        index: int64 (or int32) tensor of positions along ``dim``, each in ``0 .. input.size(dim)-1``.
        title: optional text above the picture (code and numbers only: no CJK).

    Returns:
        The matplotlib Figure (made with pyplot, so Jupyter shows it once; end the cell with ``;``).

    Raises:
        TypeError: ``input`` or ``index`` is not a tensor, or ``dim`` is not an int.
        ValueError: the arguments break a rule of ``torch.gather`` (the message says which and how
            to fix it), or a tensor is too big for a picture.
    """
    input, d, index = _check_gather(input, dim, index)
    for name, t in (("input", input), ("index", index)):
        _check_small(name, t, "draw_gather")
    if title is not None:
        _require_label("title", title)
    x_cpu, i_cpu = input.detach().cpu(), index.detach().cpu()
    out = torch.gather(x_cpu, d, i_cpu)
    if i_cpu.numel():
        input_ids, index_ids = _link_ids(_shape(input), d, i_cpu)
    else:  # nothing is read (and an empty index may even differ from input in ndim)
        input_ids, index_ids = np.full(_shape(input), _UNSELECTED), np.zeros(_shape(i_cpu), dtype=np.int64)
    # more input cells read than colours: colours repeat, so every linked cell gets its number
    tagged = int(input_ids.max(initial=-1)) >= len(_PALETTE)

    panels = [
        _panel("input", x_cpu, _title("input", x_cpu), ids=input_ids, tagged=tagged),
        _panel("index", i_cpu, _title("index", i_cpu), ids=index_ids, tagged=tagged),
        _panel("out", out, _title(f"out = input.gather({dim}, index)", out), ids=index_ids,
               tagged=tagged),
    ]
    arrow_on = panels[0]
    if input.ndim == 3:
        arrow_on.arrow = "slices" if d == 0 else ("v" if d == 1 else "h")
    elif input.ndim == 2:
        arrow_on.arrow = "v" if d == 0 else "h"
    else:  # 0-d and 1-d: one row of cells
        arrow_on.arrow = "h"
    arrow_on.arrow_label = f"dim={dim}"
    if input.numel() == 0:
        arrow_on.arrow = None
    if input.ndim == 2:
        return _render([panels], title)
    return _render([[p] for p in panels], title, same_slots=input.ndim == 3)


@style.styled
def draw_tensors(tensors: Mapping[str, torch.Tensor], *, title: str | None = None,
                 mark: Mapping[str, torch.Tensor] | None = None,
                 float_format: Callable[[float], str] | None = None) -> Figure:
    """Draw a row of labelled grids, one per entry of ``tensors`` (label: key and shape).

    Shapes: each tensor has 0 to 3 dims (0-d: one cell; 3-d: a row of slices ``name[0]`` ...),
    at most 4 slices, 8 rows and 10 columns; the tensors may differ in shape and dtype (bool,
    integer, floating: floats are written with 2 decimals). ``mark`` maps some of the keys to a
    bool tensor of that entry's shape; its True cells get a thick red outline (where an answer
    differs from the expected one, say).

    Args:
        tensors: name -> tensor, drawn left to right in the mapping's order.
        title: optional text above the picture (code and numbers only: no CJK).
        mark: optional name -> bool tensor of the same shape as ``tensors[name]``.
        float_format: optional function that writes a float cell (default: 2 decimals), e.g. the
            exercise checker's, so that its picture and its text show the same numbers.

    Returns:
        The matplotlib Figure (made with pyplot, so Jupyter shows it once; end the cell with ``;``).

    Raises:
        TypeError: ``tensors`` or ``mark`` is not a mapping, a key is not a str, or a value is
            not a tensor.
        ValueError: ``tensors`` is empty, a tensor is too big for a picture, or a mark names an
            unknown key or differs from its tensor in shape or is not bool.
    """
    if not isinstance(tensors, Mapping):
        raise TypeError(f"tensors must be a mapping of name -> torch.Tensor (e.g. a dict), "
                        f"got {type(tensors).__name__}.")
    if len(tensors) == 0:
        raise ValueError("tensors is empty; pass at least one name -> tensor, e.g. {'x': x}.")
    for name, t in tensors.items():
        _require_label("a key of tensors", name)
        _require_tensor(f"tensors[{name!r}]", t)
        _check_small(name, t, "draw_tensors")
    mark = {} if mark is None else mark
    if not isinstance(mark, Mapping):
        raise TypeError(f"mark must be a mapping of name -> bool tensor (or None), got {type(mark).__name__}.")
    for name, m in mark.items():
        if name not in tensors:
            raise ValueError(f"mark has the key {name!r}, but tensors has no such entry; "
                             f"the keys of tensors are {', '.join(map(repr, tensors))}.")
        _require_tensor(f"mark[{name!r}]", m)
        if m.dtype != torch.bool:
            raise ValueError(f"mark[{name!r}] has dtype {m.dtype}; it needs dtype torch.bool "
                             "(True cells get a red outline), e.g. got != expected.")
        if _shape(m) != _shape(tensors[name]):
            raise ValueError(f"mark[{name!r}] has shape {_shape(m)} but tensors[{name!r}] has shape "
                             f"{_shape(tensors[name])}; a mark needs the shape of its tensor.")
    if title is not None:
        _require_label("title", title)
    if float_format is not None and not callable(float_format):
        raise TypeError(f"float_format must be a function float -> str (or None), "
                        f"got {type(float_format).__name__}.")
    token = _FLOAT_FORMAT.set(float_format or _two_decimals)
    try:
        panels = [_panel(name, t, _title(name, t), mark=mark.get(name)) for name, t in tensors.items()]
    finally:
        _FLOAT_FORMAT.reset(token)
    return _render([panels], title)
