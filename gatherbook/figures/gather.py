"""The picture of gather: :func:`draw_gather`, drawn from the real tensors in a notebook cell.

``input``, ``index`` and ``out = input.gather(dim, index)`` as grids of cells (the kit's one
renderer, :mod:`gatherbook.figures.grid`); colour links every ``index`` cell (and its ``out``
cell) to the ``input`` cell it reads. Wrong arguments get the readable statement of gather's
rules that ``torch.gather`` gives tersely: a reader meets them here first.
"""
from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.grid import QUIET, _shape, panel, render, shape_title

__all__ = ["draw_gather"]


def _check_gather(input: object, dim: object, index: object) -> tuple[torch.Tensor, int, torch.Tensor]:
    """The checks torch.gather makes (same rules, readable messages). Returns input, dim >= 0, index."""
    input = args.tensor("input", input)
    index = args.tensor("index", index)
    dim = args.integer("dim", dim)

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
    input_ids = np.full(int(np.prod(shape1)), QUIET, dtype=np.int64)
    chosen = np.unique(flat)
    input_ids[chosen] = np.arange(len(chosen))
    return input_ids.reshape(input_shape), input_ids[flat].reshape(_shape(index))


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
    """
    input, d, index = _check_gather(input, dim, index)
    args.label("title", title, optional=True)
    x_cpu, i_cpu = input.detach().cpu(), index.detach().cpu()
    out = torch.gather(x_cpu, d, i_cpu)
    if i_cpu.numel():
        input_ids, index_ids = _link_ids(_shape(input), d, i_cpu)
    else:  # nothing is read (and an empty index may even differ from input in ndim)
        input_ids, index_ids = np.full(_shape(input), QUIET), np.zeros(_shape(i_cpu), dtype=np.int64)
    # more input cells read than colours: colours repeat, so every linked cell gets its number
    tagged = int(input_ids.max(initial=-1)) >= len(style.PALETTE)

    panels = [
        panel("input", x_cpu, shape_title("input", x_cpu), ids=input_ids, tagged=tagged),
        panel("index", i_cpu, shape_title("index", i_cpu), ids=index_ids, tagged=tagged),
        panel("out", out, shape_title(f"out = input.gather({dim}, index)", out), ids=index_ids,
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
        return render([panels], title)
    return render([[p] for p in panels], title, same_slots=input.ndim == 3)
