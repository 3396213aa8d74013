"""The pictures of gather (:func:`draw_gather`) and of its index shapes (:func:`draw_index_shapes`).

Wrong arguments get the readable statement of gather's rules that ``torch.gather`` gives
tersely: a reader meets them here first.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.figure import Figure

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.grid import QUIET, Note, panel, render, shape_title, text_panel

__all__ = ["draw_gather", "draw_index_shapes"]


def _check_gather(input: object, dim: object, index: object) -> tuple[torch.Tensor, int, torch.Tensor]:
    """The checks torch.gather makes (same rules, readable messages). Returns input, dim >= 0, index."""
    input = args.tensor("input", input)
    index = args.tensor("index", index)
    dim = args.integer("dim", dim)

    # torch checks none of the rules below for an index with no elements (only dim's range)
    empty = index.numel() == 0
    if index.dtype not in (torch.int64, torch.int32) and not empty:
        hint = (" A bool mask is not an index: to take the True positions use input[mask] or "
                "mask.nonzero()." if index.dtype == torch.bool else "")
        raise ValueError(f"index has dtype {index.dtype}; gather needs an integer index of dtype "
                         f"torch.int64 (torch.int32 works too). Convert it with index.long().{hint}")
    ishape, xshape = tuple(index.shape), tuple(input.shape)
    # torch treats a 0-d tensor like a 1-d tensor of one element here
    if max(index.ndim, 1) != max(input.ndim, 1) and not empty:
        raise ValueError(f"index has {index.ndim} dimension(s), shape {ishape}, but input has "
                         f"{input.ndim}, shape {xshape}; gather needs the same number of dimensions "
                         "in both. Add the missing ones with index.unsqueeze(d) or index.view(...).")
    n = max(input.ndim, 1)
    if not -n <= dim < n:
        raise ValueError(f"dim={dim} is out of range for input with {input.ndim} dimension(s), "
                         f"shape {xshape}; dim must be in {-n} .. {n - 1}.")
    given, dim = dim, dim % n
    dim_text = f"dim={given}" if given == dim else f"dim={given} (= dim {dim})"
    if empty:
        return input, dim, index
    for d in range(index.ndim):
        if d != dim and ishape[d] > xshape[d]:
            raise ValueError(f"index.size({d}) is {ishape[d]} but input.size({d}) is {xshape[d]}; "
                             "gather needs index.size(d) <= input.size(d) for every d other than "
                             f"{dim_text} (index has shape {ishape}, input has shape {xshape}). "
                             "Only along dim may index be larger.")
    size = xshape[dim] if input.ndim else 1
    values = index.detach().cpu().to(torch.int64).reshape(-1)
    bad = ((values < 0) | (values >= size)).nonzero().flatten()
    if len(bad) > 0:
        first, value = int(bad[0]), int(values[bad[0]])
        where = f"index[{', '.join(map(str, np.unravel_index(first, ishape)))}]" if index.ndim else "index"
        valid = (f"the index values must lie in 0 .. {size - 1}" if size > 0
                 else "no index value is valid, since input is empty along dim")
        more = f" {len(bad) - 1} more index value(s) are out of range too." if len(bad) > 1 else ""
        why = (f"but gather takes no negative indices: unlike input[{value}], {value} does not "
               f"count from the end, and torch.gather raises 'index {value} is out of bounds'. "
               "input has size" if value < 0 else f"out of range: input (shape {xshape}) has size")
        raise ValueError(f"{where} is {value}, {why} {size} along {dim_text}, so {valid}.{more}")
    return input, dim, index


def link_ids(input_shape: tuple[int, ...], dim: int, index: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Colour ids ``(input_ids, index_ids)`` that link ``index`` cells to the ``input`` cells they
    read: each input cell read gets its own id (0, 1, 2 ... in row-major order), the others -1
    (QUIET); each index cell (and its out cell) the id of the cell it reads. ``index`` is valid."""
    if index.numel() == 0:  # nothing is read (and an empty index may even differ in ndim)
        return np.full(input_shape, QUIET), np.zeros(tuple(index.shape), dtype=np.int64)
    shape1 = input_shape or (1,)  # torch treats 0-d like (1,)
    idx = index.detach().cpu().to(torch.int64).numpy().reshape(tuple(index.shape) or (1,))
    source = list(np.indices(idx.shape, dtype=np.int64))
    source[dim] = idx
    flat = np.ravel_multi_index(source, shape1)
    input_ids = np.full(int(np.prod(shape1)), QUIET, dtype=np.int64)
    chosen = np.unique(flat)
    input_ids[chosen] = np.arange(len(chosen))
    return input_ids.reshape(input_shape), input_ids[flat].reshape(tuple(index.shape))


def _explain(explain: object, index: torch.Tensor, dim: int,
             index_ids: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...], list[Note]]:
    """For ``explain`` (a position of ``index``): that position, the input cell it reads, and the
    note ``out[2][0] = input[2][index[2][0]] = input[2][2]``, the replaced coordinate on the
    index cell's colour."""
    shape = tuple(index.shape)
    assert isinstance(explain, (tuple, list)) and len(explain) == len(shape) > 0, \
        f"explain: a position of index, a tuple of {len(shape)} int(s) such as {(0,) * len(shape)}"
    pos = tuple(args.integer(f"explain[{k}]", v) for k, v in enumerate(explain))
    assert all(0 <= p < n for p, n in zip(pos, shape)), f"explain={pos} lies outside index, of shape {shape}"
    read = list(pos)
    read[dim] = int(index[pos])
    face = style.PALETTE[int(index_ids[pos]) % len(style.PALETTE)]

    def at(name: str, coords) -> str:
        return name + "".join(f"[{c}]" for c in coords)

    before, after = at("input", pos[:dim]), "".join(f"[{c}]" for c in pos[dim + 1:])
    lhs = [(at("out", pos) + " = " + before + "[", None), (at("index", pos), face), ("]" + after, None)]
    rhs = [(" = " + before + "[", None), (str(read[dim]), face), ("]" + after, None)]
    if style.text_width("".join(t for t, _ in lhs + rhs), style.FS_VALUE) <= style.MAX_WIDTH - 0.4:
        return pos, tuple(read), [lhs + rhs]
    return pos, tuple(read), [lhs, [(" " * len(at("out", pos)) + rhs[0][0], None)] + rhs[1:]]


@style.styled
def draw_gather(input: torch.Tensor, dim: int, index: torch.Tensor, *, title: str | None = None,
                explain: tuple[int, ...] | None = None) -> Figure:
    """Draw ``input``, ``index`` and ``out = torch.gather(input, dim, index)`` as grids of cells.

    Shapes as torch.gather takes them (0 to 3 dims; at most 4 slices, 8 rows, 10 columns). Each
    ``input`` cell read gets its own colour, shared by the ``index`` and ``out`` cells that read
    it (unread cells stay grey); with more reads than colours (9) each linked cell also shows its
    link number. An arrow on ``input`` shows ``dim``. ``explain``: a position of ``index``, e.g.
    ``(2, 0)``: outlines that ``out`` cell, its ``index`` cell and the ``input`` cell read, and
    writes ``out[2][0] = input[2][index[2][0]] = input[2][2]`` under the grids.

    Introduced in Chapter 1.
    """
    input, d, index = _check_gather(input, dim, index)
    x_cpu, i_cpu = input.detach().cpu(), index.detach().cpu()
    out = torch.gather(x_cpu, d, i_cpu)
    input_ids, index_ids = link_ids(tuple(input.shape), d, i_cpu)
    # more input cells read than colours: colours repeat, so every linked cell gets its number
    tagged = int(input_ids.max(initial=-1)) >= len(style.PALETTE)

    marks, note = [None, None, None], None
    if explain is not None:
        pos, read, note = _explain(explain, i_cpu, d, index_ids)
        marks = [np.zeros(tuple(t.shape), dtype=bool) for t in (x_cpu, i_cpu, out)]
        marks[0][read], marks[1][pos], marks[2][pos] = True, True, True
    panels = [
        panel(name, t, shape_title(text, t), ids=ids, tagged=tagged, mark=m, mark_color=style.PICK)
        for name, t, text, ids, m in zip(("input", "index", "out"), (x_cpu, i_cpu, out),
                                         ("input", "index", f"out = input.gather({dim}, index)"),
                                         (input_ids, index_ids, index_ids), marks)
    ]
    # the dim arrow on input, by input.ndim and dim: across the slices, down the rows, or along
    # the cells of a row (0-d and 1-d: one row of cells); none on an empty input
    arrows = {3: ("slices", "v", "h"), 2: ("v", "h")}.get(input.ndim, ("h",))
    panels[0].arrow, panels[0].arrow_label = arrows[d] if input.numel() else None, f"dim={dim}"
    if input.ndim == 2:
        return render([panels], title, note=note)
    return render([[p] for p in panels], title, same_slots=input.ndim == 3, note=note)


def _default_shapes(xshape: tuple[int, ...], dim: int) -> list[tuple[int, ...]]:
    """Index shapes that teach the rules for an input of ``xshape``: one per case, in order."""
    def with_size(d: int, n: int) -> tuple[int, ...]:
        return tuple(n if k == d else s for k, s in enumerate(xshape))

    other = next((d for d in range(len(xshape)) if d != dim), None)
    shapes = [with_size(dim, 1), xshape, with_size(dim, 2 * xshape[dim])]
    if other is not None:
        shapes += [with_size(other, 1), with_size(other, xshape[other] + 1)]
    shapes += [xshape[:dim] + xshape[dim + 1:], xshape + (1,)]
    return list(dict.fromkeys(s for s in shapes if s))  # no duplicates, no 0-d


@style.styled
def draw_index_shapes(input_shape: tuple[int, ...] = (3, 4), dim: int = 1, *,
                      shapes: list[tuple[int, ...]] | None = None, title: str | None = None) -> Figure:
    """A table of index shapes against an input of ``input_shape``: what ``torch.gather`` does.

    Each row: an index shape, ``out.shape`` and what ``torch.gather`` does with an index of zeros
    of that shape: ``fine``; ``silent`` (index smaller than input off ``dim``: gather reads only a
    leading slice, and no error tells you); ``error`` (torch raises). ``input_shape``: 1 to 3
    sizes of 1 to 8; ``shapes``: at most 10 (default: one per rule).

    Introduced in Chapter 1.
    """
    assert isinstance(input_shape, tuple) and 1 <= len(input_shape) <= 3, "input_shape: 1 to 3 sizes"
    xshape = tuple(args.integer(f"input_shape[{k}]", n, least=1) for k, n in enumerate(input_shape))
    assert max(xshape) <= 8, f"input_shape {xshape}: sizes of at most 8 make a readable table"
    d = args.integer("dim", dim)
    assert -len(xshape) <= d < len(xshape), f"dim={d} is out of range for input_shape {xshape}"
    d %= len(xshape)
    shapes = _default_shapes(xshape, d) if shapes is None else shapes
    assert isinstance(shapes, (list, tuple)) and 1 <= len(shapes) <= 10, "shapes: 1 to 10 shapes"
    for k, s in enumerate(shapes):
        assert isinstance(s, tuple) and all(isinstance(n, int) and 0 <= n <= 16 for n in s), \
            f"shapes[{k}]: a tuple of sizes 0 to 16, such as (3, 1)"
    x = torch.arange(math.prod(xshape)).reshape(xshape)
    rows, faces = [], []
    for s in shapes:
        try:
            out = torch.gather(x, d, torch.zeros(s, dtype=torch.long))
        except RuntimeError:
            verdict, out_text = "error", "-"
            wrong = [k for k in range(min(len(s), len(xshape))) if k != d and s[k] > xshape[k]]
            why = (f"ndim {len(s)} != {len(xshape)}" if len(s) != len(xshape)
                   else f"size({wrong[0]}): {s[wrong[0]]} > {xshape[wrong[0]]}" if wrong else "RuntimeError")
        else:
            out_text = str(tuple(out.shape))
            short = [k for k in range(len(s)) if k != d and out.shape[k] < xshape[k]]
            verdict = "silent" if short else "fine"
            why = ("reads input[" + ", ".join(f":{s[k]}" if k in short else ":" for k in range(len(s))) + "]"
                   if short else f"size({d}): {s[d]} > {xshape[d]} ok" if s[d] > xshape[d] else "")
        rows.append((str(s), out_text, verdict, why))
        faces.append(style.VERDICT_FACES[verdict])
    columns = [text_panel(name, [[r[k]] for r in rows], [[style.PAPER if k != 2 else f] for f in faces], name,
                          col_numbers=False)
               for k, name in enumerate(("index.shape", "out.shape", "verdict", "note"))]
    return render([columns], title or f"input.shape = {xshape}, dim={dim}", gap=0.12)
