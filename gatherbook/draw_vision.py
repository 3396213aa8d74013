"""Pictures of image patches for the vision chapter, drawn from the real tensors.

- :func:`draw_patches` -- one or more images, each put back together from its patches
  ``(N, D)``, stacked vertically; patches can be greyed out (dropped) and numbered.
- :func:`draw_patch_rows` -- sequences of patches ``(K, D)`` laid out in their order (the order
  of the tensor, not of the image), each tile numbered, e.g. with the patch number it came from.

Patches use the layout of :func:`gatherbook.vision.patchify` (MAE's): ``D = P * P * C``,
ordered (row, column, channel). Labels are code identifiers and numbers only; captions live in
the notebook. Panels are stacked vertically so the figure reads at phone width.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.patheffects as pe
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from gatherbook.style import FS_LABEL, FS_TITLE, INK, PAPER, styled
from gatherbook.vision import unpatchify

__all__ = ["draw_patches", "draw_patch_rows"]

_WIDTH = 3.6  # inches: one panel spans the figure, which a phone shows at full width
_LINES = PAPER  # the lines between patches
_LUMA = torch.tensor([0.299, 0.587, 0.114])


def _check_label(what: str, value: object, fn: str) -> str:
    if not isinstance(value, str) or not value or not value.isascii():
        raise TypeError(f"{fn}: {what} must be a non-empty ASCII str (a code identifier), got {value!r}.")
    return value


def _check_patches(name: str, t: object, fn: str, channels: int) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{fn}: {name} must be a torch.Tensor of shape (N, D), got {type(t).__name__}.")
    if t.ndim != 2 or not t.is_floating_point():
        raise ValueError(f"{fn}: {name} must be a 2-d floating-point tensor (N, D) of one image's "
                         f"patches, got shape {tuple(t.shape)} and dtype {t.dtype}.")
    D = t.shape[1]
    P = math.isqrt(D // channels) if D % channels == 0 else 0
    if P < 1 or P * P * channels != D:
        raise ValueError(f"{fn}: {name} has D={D} features, which is not P * P * channels for "
                         f"channels={channels}.")
    return t.detach().to("cpu", torch.float32)


def _check_ids(name: str, ids: object, n: int, fn: str, length: int | None = None) -> torch.Tensor:
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"{fn}: {name} must be a 1-d integer torch.Tensor of patch numbers, "
                        f"got {type(ids).__name__}.")
    if ids.ndim != 1 or ids.is_floating_point() or ids.dtype == torch.bool:
        raise ValueError(f"{fn}: {name} must be a 1-d integer tensor of patch numbers, got shape "
                         f"{tuple(ids.shape)} and dtype {ids.dtype}.")
    ids = ids.detach().cpu().long()
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise ValueError(f"{fn}: {name} holds patch numbers from {int(ids.min())} to "
                         f"{int(ids.max())}; they must be in [0, {n}).")
    if length is not None and ids.numel() != length:
        raise ValueError(f"{fn}: {name} has {ids.numel()} entries but its patches have {length}.")
    return ids


def _check_mapping(what: str, value: object, keys: Mapping, fn: str) -> Mapping:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{fn}: {what} must be a mapping name -> tensor (or None), got {type(value).__name__}.")
    for k in value:
        if k not in keys:
            raise ValueError(f"{fn}: {what} has the key {k!r}, which is not a panel; "
                             f"the panels are {', '.join(map(repr, keys))}.")
    return value


def _check_channels(channels: object, fn: str) -> int:
    if isinstance(channels, bool) or not isinstance(channels, int):
        raise TypeError(f"{fn}: channels must be an int (3 for RGB, 1 for grey), got {type(channels).__name__}.")
    if channels not in (1, 3):
        raise ValueError(f"{fn}: channels must be 1 or 3, got {channels}.")
    return channels


def _greyed(patches: torch.Tensor, channels: int) -> torch.Tensor:
    """Each patch as a faded grey version of itself (same shape)."""
    N, D = patches.shape
    px = patches.reshape(N, D // channels, channels)
    lum = px.mean(-1, keepdim=True) if channels == 1 else px @ _LUMA.unsqueeze(-1)
    return (0.62 + 0.3 * lum).expand(-1, -1, channels).reshape(N, D)


def _to_rgb(img: torch.Tensor) -> np.ndarray:
    """(C, H, W) in [0, 1] -> (H, W, 3) numpy."""
    if img.shape[0] == 1:
        img = img.expand(3, -1, -1)
    return img.clamp(0, 1).permute(1, 2, 0).numpy()


def _label(ax, x: float, y: float, text: str) -> None:
    ax.text(x, y, text, ha="center", va="center", fontsize=FS_LABEL, color=PAPER,
            fontweight="bold", path_effects=[pe.withStroke(linewidth=2.2, foreground="black")])


def _check_grid(grid: object, fn: str) -> tuple[int, int]:
    if (not isinstance(grid, tuple) or len(grid) != 2
            or any(isinstance(g, bool) or not isinstance(g, int) or g < 1 for g in grid)):
        raise TypeError(f"{fn}: grid must be a tuple (rows, cols) of two positive ints, got {grid!r}.")
    return grid


@styled
def draw_patches(panels: Mapping[str, torch.Tensor], grid: tuple[int, int], *,
                 keep: Mapping[str, torch.Tensor] | None = None,
                 labels: Mapping[str, torch.Tensor] | None = None,
                 channels: int = 3, title: str | None = None) -> Figure:
    """Draw images put back together from their patches, one panel per entry, stacked vertically.

    Args:
        panels: name -> ``(N, D)`` float tensor, the patches of one image in reading order
            (``N = rows * cols``, ``D = P * P * channels``, values in [0, 1]).
        grid: ``(rows, cols)`` patches down and across.
        keep: optional name -> 1-d int tensor of patch numbers; the other patches of that panel
            are drawn in faded grey (dropped).
        labels: optional name -> 1-d int tensor ``ids``; patch ``ids[k]`` is labelled ``k``
            (pass ``torch.arange(N)`` to number every patch, or ``topk``'s indices to show
            each kept patch's position in the result).
        channels: 3 (RGB) or 1.
        title: optional text above the figure (code and numbers only).

    Returns:
        The matplotlib Figure (end the cell with ``;``).

    Raises:
        TypeError: a mapping, key, tensor, ``grid`` or ``channels`` has the wrong type.
        ValueError: ``panels`` is empty, a tensor's shape does not fit ``grid``/``channels``, a
            patch number is out of range, or ``keep``/``labels`` names an unknown panel.
    """
    fn = "draw_patches"
    channels = _check_channels(channels, fn)
    rows, cols = _check_grid(grid, fn)
    if not isinstance(panels, Mapping):
        raise TypeError(f"{fn}: panels must be a mapping name -> (N, D) tensor, got {type(panels).__name__}.")
    if not panels:
        raise ValueError(f"{fn}: panels is empty; pass at least one name -> patches, e.g. {{'x': x[0]}}.")
    keep = _check_mapping("keep", keep, panels, fn)
    labels = _check_mapping("labels", labels, panels, fn)
    if title is not None:
        _check_label("title", title, fn)
    images, texts = [], []
    for name, t in panels.items():
        _check_label("a key of panels", name, fn)
        p = _check_patches(f"panels[{name!r}]", t, fn, channels)
        if p.shape[0] != rows * cols:
            raise ValueError(f"{fn}: panels[{name!r}] has N={p.shape[0]} patches but grid={grid} "
                             f"holds {rows * cols}.")
        if name in keep:
            kept = torch.zeros(p.shape[0], dtype=torch.bool)
            kept[_check_ids(f"keep[{name!r}]", keep[name], p.shape[0], fn)] = True
            p = torch.where(kept.unsqueeze(-1), p, _greyed(p, channels))
        images.append(_to_rgb(unpatchify(p.unsqueeze(0), (rows, cols), channels)[0]))
        ids = labels.get(name)
        texts.append(None if ids is None else _check_ids(f"labels[{name!r}]", ids, p.shape[0], fn))
    aspect = rows / cols
    head = 0.35 if title else 0.0
    fig = plt.figure(figsize=(_WIDTH, len(images) * (_WIDTH * aspect + 0.4) + head))
    if title:
        fig.suptitle(title, fontsize=FS_TITLE + 0.5, color=INK)
    H, W = images[0].shape[:2]
    P = H // rows
    for i, (name, img, ids) in enumerate(zip(panels, images, texts)):
        ax = fig.add_subplot(len(images), 1, i + 1)
        ax.imshow(img, interpolation="nearest", extent=(0, W, H, 0))
        for r in range(1, rows):
            ax.axhline(r * P, color=_LINES, lw=0.6)
        for c in range(1, cols):
            ax.axvline(c * P, color=_LINES, lw=0.6)
        if ids is not None:
            for k, n in enumerate(ids.tolist()):
                _label(ax, (n % cols + 0.5) * P, (n // cols + 0.5) * P, str(k))
        ax.set_title(name, fontsize=FS_TITLE, color=INK)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    return fig


@styled
def draw_patch_rows(rows: Mapping[str, torch.Tensor], *, ids: Mapping[str, torch.Tensor] | None = None,
                    per_row: int = 8, channels: int = 3, title: str | None = None) -> Figure:
    """Draw sequences of patches in their order, one block per entry, stacked vertically.

    Args:
        rows: name -> ``(K, D)`` float tensor, K patches of one image in the tensor's order.
        ids: optional name -> ``(K,)`` int tensor; tile ``k`` is labelled ``ids[name][k]``
            (e.g. the patch number in the image). Without it, tile ``k`` is labelled ``k``.
        per_row: tiles per line (a long sequence wraps).
        channels: 3 (RGB) or 1.
        title: optional text above the figure (code and numbers only).

    Returns:
        The matplotlib Figure (end the cell with ``;``).

    Raises:
        TypeError: a mapping, key, tensor, ``per_row`` or ``channels`` has the wrong type.
        ValueError: ``rows`` is empty, an entry is not ``(K, D)`` with ``D = P * P * channels``,
            the entries differ in D, ``ids`` has the wrong length, or names an unknown entry.
    """
    fn = "draw_patch_rows"
    channels = _check_channels(channels, fn)
    if isinstance(per_row, bool) or not isinstance(per_row, int):
        raise TypeError(f"{fn}: per_row must be an int, got {type(per_row).__name__}.")
    if per_row < 1:
        raise ValueError(f"{fn}: per_row must be at least 1, got {per_row}.")
    if not isinstance(rows, Mapping):
        raise TypeError(f"{fn}: rows must be a mapping name -> (K, D) tensor, got {type(rows).__name__}.")
    if not rows:
        raise ValueError(f"{fn}: rows is empty; pass at least one name -> patches.")
    ids = _check_mapping("ids", ids, rows, fn)
    if title is not None:
        _check_label("title", title, fn)
    seqs, tags, D = [], [], None
    for name, t in rows.items():
        _check_label("a key of rows", name, fn)
        p = _check_patches(f"rows[{name!r}]", t, fn, channels)
        if D is not None and p.shape[1] != D:
            raise ValueError(f"{fn}: rows[{name!r}] has D={p.shape[1]} but the first entry has D={D}; "
                             "all entries need the same patch size.")
        D = p.shape[1]
        K = p.shape[0]
        if K == 0:
            raise ValueError(f"{fn}: rows[{name!r}] has no patches (K=0).")
        tag = torch.arange(K) if name not in ids else _check_ids(
            f"ids[{name!r}]", ids[name], 10 ** 9, fn, length=K)
        seqs.append(p)
        tags.append(tag.tolist())
    P = math.isqrt(D // channels)
    gap = max(1, P // 6)
    lines = [math.ceil(p.shape[0] / per_row) for p in seqs]
    cols = min(per_row, max(p.shape[0] for p in seqs))
    tile = _WIDTH / cols
    head = 0.35 if title else 0.0
    fig = plt.figure(figsize=(_WIDTH, sum(n * tile + 0.4 for n in lines) + head))
    if title:
        fig.suptitle(title, fontsize=FS_TITLE + 0.5, color=INK)
    gs = fig.add_gridspec(len(seqs), 1, height_ratios=[n * tile + 0.4 for n in lines])
    for i, (name, p, tag, n) in enumerate(zip(rows, seqs, tags, lines)):
        step = P + gap
        canvas = np.ones((n * step - gap, cols * step - gap, 3))
        for k in range(p.shape[0]):
            r, c = divmod(k, per_row)
            one = unpatchify(p[k].reshape(1, 1, D), (1, 1), channels)[0]
            canvas[r * step:r * step + P, c * step:c * step + P] = _to_rgb(one)
        ax = fig.add_subplot(gs[i])
        ax.imshow(canvas, interpolation="nearest")
        for k in range(p.shape[0]):
            r, c = divmod(k, per_row)
            _label(ax, c * step + (P - 1) / 2, r * step + (P - 1) / 2, str(tag[k]))
        ax.set_title(f"{name}  ({p.shape[0]}, {D})", fontsize=FS_TITLE, color=INK)
        ax.axis("off")
    fig.tight_layout()
    return fig
