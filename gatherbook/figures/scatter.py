"""The picture of scatter (gather read backwards): :func:`draw_scatter`.

``src``, ``index`` and ``out = self.scatter(dim, index, src)`` (or ``scatter_add`` /
``scatter_reduce``) as grids stacked top to bottom (the kit's one renderer), so the picture
reads on a phone. Colour links every ``src`` cell (and its ``index`` cell) to the ``out`` cell it
writes; an ``out`` cell that several ``src`` cells write gets a red outline (a collision); ``out``
cells nobody writes keep ``self``'s value on light grey.
"""
from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.grid import QUIET, panel, render, shape_title

__all__ = ["draw_scatter", "REDUCTIONS"]

#: what ``reduce=`` may be: None (plain scatter), "add" (scatter_add) or a scatter_reduce mode
REDUCTIONS = (None, "add", "sum", "prod", "mean", "amax", "amin")


def _check_scatter(self: object, dim: object, index: object, src: object,
                   reduce: object) -> tuple[torch.Tensor, int, torch.Tensor, torch.Tensor]:
    """torch.scatter's rules with readable messages; returns CPU copies and dim >= 0."""
    self = args.tensor("self", self, ndim=(1, 2))
    index = args.tensor("index", index, ndim=(1, 2), kind="int")
    src = args.tensor("src", src, ndim=(1, 2))
    dim = args.integer("dim", dim)
    if reduce not in REDUCTIONS:
        raise ValueError(f"reduce={reduce!r} is not a reduction draw_scatter knows; expected one of "
                         f"{', '.join(map(repr, REDUCTIONS))}.")
    if src.dtype != self.dtype:
        raise ValueError(f"src has dtype {src.dtype} but self has dtype {self.dtype}; scatter needs the "
                         f"same dtype in both, e.g. src.to(self.dtype).")
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


def _targets(dim: int, index: torch.Tensor, out_shape: tuple[int, ...]) -> np.ndarray:
    """Flat position in ``out`` that every index (= src) cell writes, shape ``index.shape``."""
    idx = index.numpy()
    pos = list(np.indices(idx.shape))
    pos[dim] = idx
    return np.ravel_multi_index(pos, out_shape) if idx.size else np.zeros(idx.shape, dtype=np.int64)


@style.styled
def draw_scatter(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor, *,
                 reduce: str | None = None, include_self: bool = True,
                 title: str | None = None) -> Figure:
    """Draw ``src`` and ``index`` side by side (stacked when too wide), and ``out`` below them.

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

    Introduced in Chapter 5.
    """
    s, d, idx, src_ = _check_scatter(self, dim, index, src, reduce)
    assert isinstance(include_self, bool), "include_self: a bool"
    args.label("title", title, optional=True)
    src_ = src_[tuple(slice(0, n) for n in idx.shape)]  # the part scatter reads
    if reduce is None:
        out, call = s.scatter(d, idx, src_), f"self.scatter({dim}, index, src)"
    elif reduce == "add":  # two lines, so the picture fits a phone
        out, call = s.scatter_add(d, idx, src_), f"self.scatter_add(\n      {dim}, index, src)"
    else:
        out = s.scatter_reduce(d, idx, src_, reduce, include_self=include_self)
        call = f"self.scatter_reduce(\n      {dim}, index, src, {reduce!r}"
        call += ")" if include_self else ",\n      include_self=False)"
    target = _targets(d, idx, tuple(out.shape))
    out_ids = np.full(out.numel(), QUIET, dtype=np.int64)  # out cells nobody writes: quiet
    written, counts = np.unique(target, return_counts=True)
    out_ids[written] = np.arange(len(written))
    collide = np.zeros(out.numel(), dtype=bool)
    collide[written[counts > 1]] = True
    in_ids = out_ids[target]  # each src / index cell: the colour of the out cell it writes
    shape = tuple(out.shape)
    panels = [panel("src", src_, shape_title("src", src_), ids=in_ids),
              panel("index", idx, shape_title("index", idx), ids=in_ids),
              panel("out", out, f"out = {call}", ids=out_ids.reshape(shape),
                    mark=collide.reshape(shape))]
    panels[-1].arrow = "v" if s.ndim == 2 and d == 0 else "h"
    panels[-1].arrow_label = f"dim={dim}"
    return render([panels[:2], panels[2:]], title)  # src beside index when they fit; out below
