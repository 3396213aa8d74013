"""The picture of scatter (gather read backwards), :func:`draw_scatter`: cells of the kit's one
renderer, linked by the same colours as gather's."""
from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.gather import link_ids
from gatherbook.figures.grid import panel, render, shape_title

__all__ = ["draw_scatter", "REDUCTIONS"]

#: what ``reduce=`` may be: None (plain scatter), "add" (scatter_add) or a scatter_reduce mode
REDUCTIONS = (None, "add", "sum", "prod", "mean", "amax", "amin")


@style.styled
def draw_scatter(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor, *,
                 reduce: str | None = None, include_self: bool = True,
                 title: str | None = None) -> Figure:
    """Draw ``src`` and ``index`` side by side (stacked when too wide), and ``out`` below them.

    ``out`` is ``self.scatter(dim, index, src)``, ``self.scatter_add(...)`` (``reduce="add"``)
    or ``self.scatter_reduce(..., reduce, include_self=include_self)``; for ``dim == 1``,
    ``src[i][j]`` goes to ``out[i][index[i][j]]``. Each ``src`` and ``index`` cell gets the
    colour of the ``out`` cell it writes; an ``out`` cell written twice or more is outlined in
    red; the others keep ``self``'s value on grey. An arrow beside ``out`` shows ``dim``. All
    three are 1-d or 2-d, at most 8 x 10, with torch's size rules; only the part of ``src``
    that ``index`` covers is drawn (scatter reads no more).

    Introduced in Chapter 5.
    """
    s = args.tensor("self", self, ndim=(1, 2)).detach().cpu()
    idx = args.tensor("index", index, ndim=(1, 2), kind="int").detach().cpu().long()
    src_ = args.tensor("src", src, ndim=(1, 2)).detach().cpu()
    assert reduce in REDUCTIONS, f"reduce={reduce!r}: one of {REDUCTIONS}"
    assert isinstance(include_self, bool), "include_self: a bool"
    src_ = src_[tuple(slice(0, n) for n in idx.shape)]  # the part scatter reads
    # torch checks the rest (dims, sizes, index range, dtypes) and says what is wrong
    if reduce is None:
        out, call = s.scatter(dim, idx, src_), f"self.scatter({dim}, index, src)"
    elif reduce == "add":  # two lines, so the picture fits a phone
        out, call = s.scatter_add(dim, idx, src_), f"self.scatter_add(\n      {dim}, index, src)"
    else:
        out = s.scatter_reduce(dim, idx, src_, reduce, include_self=include_self)
        call = f"self.scatter_reduce(\n      {dim}, index, src, {reduce!r}"
        call += ")" if include_self else ",\n      include_self=False)"
    # the same links as gather's, read backwards: each src / index cell gets the colour of the
    # out cell it writes; out cells nobody writes stay quiet
    out_ids, in_ids = link_ids(tuple(out.shape), dim % s.ndim, idx)
    writes = np.bincount(in_ids.reshape(-1), minlength=out_ids.size)
    collide = (out_ids >= 0) & (writes[np.maximum(out_ids, 0)] > 1)  # written more than once
    panels = [panel("src", src_, shape_title("src", src_), ids=in_ids),
              panel("index", idx, shape_title("index", idx), ids=in_ids),
              panel("out", out, f"out = {call}", ids=out_ids, mark=collide)]
    panels[-1].arrow = "v" if s.ndim == 2 and dim % s.ndim == 0 else "h"
    panels[-1].arrow_label = f"dim={dim}"
    return render([panels[:2], panels[2:]], title)  # src beside index when they fit; out below
