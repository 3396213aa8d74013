"""Pictures of scatter (gather read backwards) and of images cut into patches.

Two public functions:

- :func:`draw_scatter` -- ``src``, ``index`` and ``out = self.scatter(dim, index, src)`` (or
  ``scatter_add`` / ``scatter_reduce``) as grids stacked top to bottom, so the picture reads on a
  phone. Colour links every ``src`` cell (and its ``index`` cell) to the ``out`` cell it writes;
  an ``out`` cell that several ``src`` cells write gets a red outline (a collision); ``out``
  cells nobody writes keep ``self``'s value on light grey.
- :func:`draw_images` -- images (``(H, W)`` or ``(H, W, 3)``), one under the other, each titled
  with its name and shape; optionally a patch grid drawn over them.

Labels are code identifiers and numbers only, so one figure serves both editions; captions in the
page's language go in the cell metadata. End a figure cell with ``;``.
"""
from __future__ import annotations

import operator
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from gatherbook import style

__all__ = ["draw_scatter", "draw_images", "MAX_ROWS", "MAX_COLS", "REDUCTIONS"]

MAX_ROWS = 8  #: most rows a scatter picture shows per tensor
MAX_COLS = 10  #: most columns a scatter picture shows per tensor
#: what ``reduce=`` may be: None (plain scatter), "add" (scatter_add) or a scatter_reduce mode
REDUCTIONS = (None, "add", "sum", "prod", "mean", "amax", "amin")

_FONT, _INK, _MUTED, _EDGE, _MARK = style.FONT, style.INK, style.MUTED, style.EDGE, style.MARK
_UNWRITTEN_FACE, _UNWRITTEN_TEXT = style.QUIET_FACE, style.QUIET_INK  # cells nobody writes
_PALETTE = style.PALETTE
_CELL_H, _CELL_W_MIN, _PAD = 0.36, 0.42, 0.16
_FS_VALUE, _FS_NUMBER, _FS_TITLE = style.FS_VALUE, style.FS_NUMBER, style.FS_TITLE
_TITLE_H, _NUMBERS_H, _GAP, _MARGIN, _LEFT = 0.30, 0.20, 0.28, 0.15, 0.28


def _require_tensor(name: str, value: object) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}.")
    if value.layout != torch.strided:
        raise ValueError(f"{name} is a {value.layout} tensor; pictures need a dense one: {name}.to_dense().")
    return value


def _require_ascii(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}.")
    if not value.isascii() or not value.isprintable():
        raise ValueError(f"{name} {value!r} is not printable ASCII; figure labels are code and numbers "
                         "(src, index, dim=1), so put words in the cell's caption instead.")
    return value


def _check_scatter(self: object, dim: object, index: object, src: object,
                   reduce: object) -> tuple[torch.Tensor, int, torch.Tensor, torch.Tensor]:
    """torch.scatter's rules with readable messages; returns CPU copies and dim >= 0."""
    self = _require_tensor("self", self)
    index = _require_tensor("index", index)
    src = _require_tensor("src", src)
    if isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got bool {dim!r}.")
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"dim must be an int, got {type(dim).__name__} {dim!r}.") from None
    if reduce not in REDUCTIONS:
        raise ValueError(f"reduce={reduce!r} is not a reduction draw_scatter knows; expected one of "
                         f"{', '.join(map(repr, REDUCTIONS))}.")
    if index.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"index has dtype {index.dtype}; scatter needs torch.int64 (or torch.int32). "
                         "Convert it with index.long().")
    if src.dtype != self.dtype:
        raise ValueError(f"src has dtype {src.dtype} but self has dtype {self.dtype}; scatter needs the "
                         f"same dtype in both, e.g. src.to(self.dtype).")
    for name, t in (("self", self), ("index", index), ("src", src)):
        if t.ndim not in (1, 2):
            raise ValueError(f"{name} has {t.ndim} dimension(s), shape {tuple(t.shape)}; draw_scatter "
                             "draws 1-d and 2-d tensors. Draw a slice such as " + f"{name}[0].")
        if t.ndim == 2 and t.shape[0] > MAX_ROWS or t.shape[-1] > MAX_COLS:
            raise ValueError(f"{name} has shape {tuple(t.shape)}, too big for a picture: at most "
                             f"{MAX_ROWS} rows and {MAX_COLS} columns.")
    if not (self.ndim == index.ndim == src.ndim):
        raise ValueError(f"self, index and src need the same number of dimensions; got shapes "
                         f"{tuple(self.shape)}, {tuple(index.shape)} and {tuple(src.shape)}.")
    n = self.ndim
    if not -n <= dim < n:
        raise ValueError(f"dim={dim} is out of range for self of shape {tuple(self.shape)}; "
                         f"expected {-n} .. {n - 1}.")
    dim %= n
    for d in range(n):
        if index.shape[d] > src.shape[d]:
            raise ValueError(f"index.size({d}) is {index.shape[d]} but src.size({d}) is {src.shape[d]}; "
                             "scatter needs index.size(d) <= src.size(d) for every d.")
        if d != dim and index.shape[d] > self.shape[d]:
            raise ValueError(f"index.size({d}) is {index.shape[d]} but self.size({d}) is {self.shape[d]}; "
                             f"scatter needs index.size(d) <= self.size(d) for every d other than dim={dim}.")
    values = index.detach().cpu().long()
    if values.numel() and (int(values.min()) < 0 or int(values.max()) >= self.shape[dim]):
        raise ValueError(f"index holds values from {int(values.min())} to {int(values.max())}, but self "
                         f"has size {self.shape[dim]} along dim={dim}: every value must lie in "
                         f"0 .. {self.shape[dim] - 1}.")
    return self.detach().cpu(), dim, values, src.detach().cpu()


def _texts(t: torch.Tensor) -> np.ndarray:
    fmt = "{:.2f}".format if t.is_floating_point() else str
    a = np.array([fmt(v) for v in t.reshape(-1).tolist()], dtype=object)
    return a.reshape(tuple(t.shape) if t.ndim == 2 else (1, t.numel()))


def _targets(dim: int, index: torch.Tensor, out_shape: tuple[int, ...]) -> np.ndarray:
    """Flat position in ``out`` that every index (= src) cell writes, shape ``index.shape``."""
    idx = index.numpy()
    pos = list(np.indices(idx.shape))
    pos[dim] = idx
    return np.ravel_multi_index(pos, out_shape) if idx.size else np.zeros(idx.shape, dtype=np.int64)


def _title_h(title: str) -> float:
    """Room for a title of one or more lines, in inches."""
    return _TITLE_H + 0.19 * title.count("\n")


def _grid(fig: Figure, top: float, title: str, texts: np.ndarray, faces: np.ndarray,
          marks: np.ndarray | None, name: str, W: float, H: float, cell_w: float,
          numbers: bool) -> float:
    """Draw one titled grid with its top at ``top`` inches; return the bottom in inches."""
    rows, cols = texts.shape
    fig.text(_LEFT / W, 1 - (top + _title_h(title) - 0.06) / H, title, fontsize=_FS_TITLE, family=_FONT,
             color=_INK, ha="left", va="bottom", linespacing=1.15)
    top += _title_h(title) + _NUMBERS_H
    ax = fig.add_axes((_LEFT / W, 1 - (top + rows * _CELL_H) / H, cols * cell_w / W, rows * _CELL_H / H))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_axis_off()
    style = dict(fontsize=_FS_NUMBER, family=_FONT, color=_MUTED, clip_on=False)
    for j in range(cols):
        ax.text(j + 0.5, -0.12, str(j), ha="center", va="bottom", gid="col", **style)
    if numbers:
        for i in range(rows):
            ax.text(-0.12 * _CELL_H / cell_w, i + 0.5, str(i), ha="right", va="center", gid="row", **style)
    for i in range(rows):
        for j in range(cols):
            face = faces[i, j]
            pos = f"{i},{j}" if numbers else f"{j}"
            cell = Rectangle((j, i), 1, 1, facecolor=face, edgecolor=_EDGE, linewidth=0.8, clip_on=False)
            cell.set_gid(f"{name}[{pos}]")
            ax.add_artist(cell)
            ink = _UNWRITTEN_TEXT if face == _UNWRITTEN_FACE else _INK
            ax.text(j + 0.5, i + 0.5, texts[i, j], ha="center", va="center", fontsize=_FS_VALUE,
                    family=_FONT, color=ink)
            if marks is not None and marks[i, j]:
                ring = Rectangle((j + 0.06, i + 0.06), 0.88, 0.88, fill=False, edgecolor=_MARK,
                                 linewidth=2.6, clip_on=False)
                ring.set_gid(f"mark:{name}[{pos}]")
                ax.add_artist(ring)
    return top + rows * _CELL_H


@style.styled
def draw_scatter(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor, *,
                 reduce: str | None = None, include_self: bool = True,
                 title: str | None = None) -> Figure:
    """Draw ``src``, ``index`` and the scatter result ``out``, stacked top to bottom.

    ``out`` is ``self.scatter(dim, index, src)`` (``reduce=None``), ``self.scatter_add(dim,
    index, src)`` (``reduce="add"``) or ``self.scatter_reduce(dim, index, src, reduce,
    include_self=include_self)``; for ``dim == 1``, ``src[i][j]`` goes to ``out[i][index[i][j]]``.
    Each ``src`` cell and its ``index`` cell get the colour of the ``out`` cell they write; an
    ``out`` cell written by two or more ``src`` cells is outlined in red; ``out`` cells that no
    index names keep ``self``'s value on grey. An arrow beside ``out`` shows ``dim``.

    Shapes: ``self``, ``index`` and ``src`` are 1-d or 2-d (the same number of dims), at most 8
    rows and 10 columns; ``index.size(d) <= src.size(d)`` for every ``d`` and
    ``index.size(d) <= self.size(d)`` for ``d != dim``; ``src`` has ``self``'s dtype. Only the
    part of ``src`` that ``index`` covers is drawn (scatter reads no more).

    Returns:
        The matplotlib Figure (end the cell with ``;``).

    Raises:
        TypeError: a tensor argument is not a tensor, ``dim`` is not an int, or ``title`` not a str.
        ValueError: the arguments break a rule of scatter (the message says which), ``reduce`` is
            unknown, or a tensor is too big for a picture.
    """
    s, d, idx, src_ = _check_scatter(self, dim, index, src, reduce)
    if not isinstance(include_self, bool):
        raise TypeError(f"include_self must be a bool, got {type(include_self).__name__} {include_self!r}.")
    if title is not None:
        _require_ascii("title", title)
    src_ = src_[tuple(slice(0, n) for n in idx.shape)]  # the part scatter reads
    if reduce is None:
        out, call = s.scatter(d, idx, src_), f"self.scatter({dim}, index, src)"
    elif reduce == "add":  # two lines, so the picture fits a phone (358 px of text column)
        out, call = s.scatter_add(d, idx, src_), f"self.scatter_add(\n      {dim}, index, src)"
    else:
        out = s.scatter_reduce(d, idx, src_, reduce, include_self=include_self)
        call = f"self.scatter_reduce(\n      {dim}, index, src, {reduce!r}"
        call += ")" if include_self else ",\n      include_self=False)"
    target = _targets(d, idx, tuple(out.shape))
    flat_faces = np.full(out.numel(), _UNWRITTEN_FACE, dtype=object)
    written, counts = np.unique(target, return_counts=True)
    for k, t in enumerate(written):
        flat_faces[t] = _PALETTE[k % len(_PALETTE)]
    collide = np.zeros(out.numel(), dtype=bool)
    collide[written[counts > 1]] = True
    in_faces = np.empty(target.shape, dtype=object)
    for p in np.ndindex(*target.shape):
        in_faces[p] = flat_faces[target[p]]

    two_d = s.ndim == 2
    as2 = (lambda a: a) if two_d else (lambda a: a.reshape(1, -1))
    panels = [("src", f"src  {tuple(src_.shape)}", _texts(src_), as2(in_faces), None),
              ("index", f"index  {tuple(idx.shape)}", _texts(idx), as2(in_faces), None),
              ("out", f"out = {call}", _texts(out), as2(flat_faces.reshape(tuple(out.shape))),
               as2(collide.reshape(tuple(out.shape))))]
    widest = max(len(t) for p in panels for t in p[2].reshape(-1))
    cell_w = max(_CELL_W_MIN, style.text_width("x" * widest, _FS_VALUE) + _PAD)
    cols = max(p[2].shape[1] for p in panels)
    title_w = max(style.text_width(line, _FS_TITLE) for p in panels for line in p[1].split("\n"))
    arrow_room = 0.45
    W = _LEFT + max(cols * cell_w + arrow_room, title_w) + _MARGIN
    H = _MARGIN + (0.40 if title else 0.0) + sum(_title_h(p[1]) + _NUMBERS_H + p[2].shape[0] * _CELL_H
                                                  for p in panels) + _GAP * 2 + 0.10 + _MARGIN
    W, H = np.ceil(W * 100) / 100, np.ceil(H * 100) / 100
    fig = plt.figure(figsize=(W, H), facecolor="white")
    top = _MARGIN
    if title:
        fig.text(_LEFT / W, 1 - top / H, title, fontsize=11.5, weight="bold", family=_FONT,
                 ha="left", va="top")
        top += 0.40
    for name, head, texts, faces, marks in panels:
        grid_top = top + _title_h(head) + _NUMBERS_H
        bottom = _grid(fig, top, head, texts, faces, marks, name, W, H, cell_w, two_d)
        top = bottom + _GAP
    # the dim arrow beside (dim 0 of a 2-d out) or under (the last dim) the out grid
    rows, ncols = panels[-1][2].shape
    right = _LEFT + ncols * cell_w
    if two_d and d == 0:
        x = right + 0.14
        start, end = (x / W, 1 - (grid_top + 0.04) / H), (x / W, 1 - (bottom - 0.04) / H)
        lx, ly, rot = (x + 0.07) / W, 1 - (grid_top + bottom) / 2 / H, -90
    else:
        y = (grid_top + bottom) / 2
        start, end = ((right + 0.08) / W, 1 - y / H), ((right + 0.40) / W, 1 - y / H)
        lx, ly, rot = (right + 0.24) / W, 1 - (y - 0.12) / H, 0
    fig.add_artist(FancyArrowPatch(start, end, transform=fig.transFigure, arrowstyle="-|>",
                                   mutation_scale=11, linewidth=1.2, color=_MUTED))
    fig.text(lx, ly, f"dim={dim}", fontsize=8.5, family=_FONT, color=_MUTED, rotation=rot,
             ha="left" if rot else "center", va="center" if rot else "bottom")
    return fig


def _as_image(name: str, t: object) -> np.ndarray:
    t = _require_tensor(name, t)
    if not t.is_floating_point():
        raise ValueError(f"{name} has dtype {t.dtype}; draw_images needs a float image with values in "
                         "[0, 1], e.g. img.float() / 255.")
    if t.ndim == 2 or (t.ndim == 3 and t.shape[-1] == 3):
        a = t.detach().cpu().float().numpy()
        return np.clip(a, 0.0, 1.0)
    raise ValueError(f"{name} has shape {tuple(t.shape)}; draw_images needs (H, W) or (H, W, 3) "
                     "(channels last: img.permute(1, 2, 0) turns (3, H, W) around).")


@style.styled
def draw_images(images: Mapping[str, torch.Tensor], *, patch: int | None = None,
                width: float = 3.3, title: str | None = None) -> Figure:
    """Draw images one under the other, each titled with its name and shape.

    Args:
        images: name -> float tensor of shape ``(H, W)`` (grey) or ``(H, W, 3)`` (RGB), values in
            ``[0, 1]`` (values outside are clipped). Different sizes are allowed.
        patch: optional patch size in pixels; thin lines mark the ``patch x patch`` grid.
        width: width of each image in inches (3.3 fits a phone's 358 px text column).
        title: optional ASCII text above the picture.

    Returns:
        The matplotlib Figure (end the cell with ``;``).

    Raises:
        TypeError: ``images`` is not a mapping, a key is not a str, a value not a tensor, or
            ``patch`` not an int.
        ValueError: ``images`` is empty, an image has the wrong shape or dtype, or ``patch`` is
            not positive or does not divide every image's height and width.
    """
    if not isinstance(images, Mapping):
        raise TypeError(f"images must be a mapping of name -> tensor, got {type(images).__name__}.")
    if len(images) == 0:
        raise ValueError("images is empty; pass at least one name -> image, e.g. {'img': img}.")
    arrays = {}
    for name, t in images.items():
        _require_ascii("a key of images", name)
        arrays[name] = _as_image(f"images[{name!r}]", t)
    if patch is not None:
        if isinstance(patch, bool) or not isinstance(patch, int):
            raise TypeError(f"patch must be an int or None, got {type(patch).__name__} {patch!r}.")
        if patch <= 0:
            raise ValueError(f"patch must be positive, got {patch}.")
        for name, a in arrays.items():
            if a.shape[0] % patch or a.shape[1] % patch:
                raise ValueError(f"patch={patch} does not divide images[{name!r}] of shape {a.shape[:2]}; "
                                 "the height and width must be multiples of patch.")
    if isinstance(width, bool) or not isinstance(width, (int, float)) or not 1.0 <= width <= 8.0:
        raise ValueError(f"width must be a number of inches from 1 to 8, got {width!r}.")
    if title is not None:
        _require_ascii("title", title)
    heights = [width * a.shape[0] / a.shape[1] for a in arrays.values()]
    H = _MARGIN + (0.40 if title else 0) + sum(h + _TITLE_H for h in heights) + _GAP * (len(heights) - 1)
    H = np.ceil((H + _MARGIN) * 100) / 100
    W = np.ceil((width + 2 * _MARGIN) * 100) / 100
    fig = plt.figure(figsize=(W, H), facecolor="white")
    top = _MARGIN
    if title:
        fig.text(_MARGIN / W, 1 - top / H, title, fontsize=11.5, weight="bold", family=_FONT, va="top")
        top += 0.40
    for (name, a), h in zip(arrays.items(), heights):
        fig.text(_MARGIN / W, 1 - (top + _TITLE_H - 0.06) / H, f"{name}  {a.shape}", fontsize=_FS_TITLE,
                 family=_FONT, color=_INK, va="bottom")
        top += _TITLE_H
        ax = fig.add_axes((_MARGIN / W, 1 - (top + h) / H, width / W, h / H))
        ax.imshow(a, cmap="gray" if a.ndim == 2 else None, vmin=0, vmax=1, interpolation="nearest")
        ax.set_axis_off()
        ax.set_gid(f"image:{name}")
        if patch is not None:
            for y in range(patch, a.shape[0], patch):
                ax.axhline(y - 0.5, color="white", linewidth=0.6)
            for x in range(patch, a.shape[1], patch):
                ax.axvline(x - 0.5, color="white", linewidth=0.6)
        top += h + _GAP
    return fig
