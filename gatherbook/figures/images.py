"""Pictures of images and their patches for the vision chapters, laid out by one :func:`_layout`.
Patches are :func:`gatherbook.vision.patchify`'s (MAE's): ``D = P * P * C``, (row, column, channel).
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.patheffects as pe
import numpy as np
import torch
from matplotlib.figure import Figure

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.grid import Canvas
from gatherbook.vision import unpatchify

__all__ = ["draw_patches", "draw_patch_rows", "draw_images"]

_MARGIN, _TITLE_H, _GAP = 0.15, 0.30, 0.28  # inches
_WIDTH = 3.6  # inches: one panel spans the figure, which a phone shows at full width
_LUMA = torch.tensor([0.299, 0.587, 0.114])


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


def _tile_label(row: int, col: int, size: int, step: int, text: object) -> tuple[float, float, str]:
    """``text`` at the centre of the ``size`` x ``size`` tile (row, col) of tiles ``step`` pixels apart."""
    return row * step + (size - 1) / 2, col * step + (size - 1) / 2, str(text)


def _layout(items: list[tuple[str, np.ndarray, list[tuple[int, int, str]], int | None]], *, per_row: int,
            width: float, title: str | None) -> Figure:
    """The one layout of images: ``per_row`` to a line, each ``width`` inches wide and titled.
    ``items``: ``(title, image, labels, patch)``, an ``(H, W)`` or ``(H, W, 3)`` array in [0, 1],
    labels ``(row, col, text)`` written over pixel (row, col), thin lines every ``patch`` pixels."""
    lines = [items[i:i + per_row] for i in range(0, len(items), per_row)]
    line_h = [max(width * a.shape[0] / a.shape[1] for _, a, _, _ in line) for line in lines]
    H = math.ceil((2 * _MARGIN + (0.40 if title else 0) + sum(h + _TITLE_H for h in line_h)
                   + _GAP * (len(lines) - 1)) * 100) / 100
    canvas = Canvas(math.ceil((per_row * width + _GAP * (per_row - 1) + 2 * _MARGIN) * 100) / 100, H)
    top = _MARGIN
    if title:
        canvas.text(_MARGIN, top, title, size=style.FS_FIGTITLE, weight="bold", va="top")
        top += 0.40
    for line, lh in zip(lines, line_h):
        for k, (name, a, labels, patch) in enumerate(line):
            x, h = _MARGIN + k * (width + _GAP), width * a.shape[0] / a.shape[1]
            ax = canvas.axes(x, top + _TITLE_H, width, h)
            ax.imshow(a, cmap=style.GREYS if a.ndim == 2 else None, vmin=0, vmax=1, interpolation="nearest")
            ax.set_axis_off()
            ax.set_gid(f"image:{name}")
            ax.set_title(name, fontsize=style.FS_TITLE, color=style.INK)
            for y in range(patch, a.shape[0], patch) if patch else ():
                ax.axhline(y - 0.5, color=style.PAPER, linewidth=0.6)
            for xx in range(patch, a.shape[1], patch) if patch else ():
                ax.axvline(xx - 0.5, color=style.PAPER, linewidth=0.6)
            for r, c, text in labels:
                ax.text(c, r, text, ha="center", va="center", fontsize=style.FS_LABEL, color=style.PAPER, fontweight="bold",
                        path_effects=[pe.withStroke(linewidth=2.2, foreground=style.INK)])
        top += _TITLE_H + lh + _GAP
    return canvas.fig


@style.styled
def draw_patches(panels: Mapping[str, torch.Tensor], grid: tuple[int, int], *,
                 keep: Mapping[str, torch.Tensor] | None = None,
                 labels: Mapping[str, torch.Tensor] | None = None,
                 channels: int = 3, title: str | None = None) -> Figure:
    """Images put back together from their patches, one panel per entry, stacked.

    ``panels``: name -> ``(N, D)`` floats in [0, 1], one image's patches in reading order
    (``N = rows * cols``, ``D = P * P * channels``). ``keep``: name -> patch numbers; the other
    patches are faded grey. ``labels``: name -> ``ids``; patch ``ids[k]`` is labelled ``k``.

    Introduced in Chapter 4.
    """
    assert channels in (1, 3), "channels: 1 or 3"
    rows, cols = (args.integer(f"grid[{i}]", g, least=1) for i, g in enumerate(grid))
    keep, labels = style.mapping("keep", keep, optional=True), style.mapping("labels", labels, optional=True)
    assert set(keep) | set(labels) <= set(style.mapping("panels", panels)), "keep and labels name panels"
    items = []
    for name, t in panels.items():
        p = args.tensor(f"panels[{name!r}]", t, ndim=2, kind="float").detach().to("cpu", torch.float32)
        assert p.shape[0] == rows * cols, f"panels[{name!r}]: N={p.shape[0]}, grid {grid} holds {rows * cols}"
        if name in keep:
            kept = args.tensor(f"keep[{name!r}]", keep[name], ndim=1, kind="int").cpu()
            p = torch.where(torch.isin(torch.arange(len(p)), kept).unsqueeze(-1), p, _greyed(p, channels))
        image = _to_rgb(unpatchify(p.unsqueeze(0), (rows, cols), channels)[0])
        ids = args.tensor(f"labels[{name!r}]", labels.get(name, torch.zeros(0, dtype=torch.long)), ndim=1, kind="int")
        assert not ids.numel() or 0 <= ids.min() <= ids.max() < p.shape[0], "labels: patch numbers"
        P = image.shape[0] // rows
        items.append((name, image, [_tile_label(*divmod(n, cols), P, P, k) for k, n in enumerate(ids.tolist())], P))
    return _layout(items, per_row=1, width=_WIDTH if len(items) == 1 else _WIDTH - 0.4, title=title)


@style.styled
def draw_patch_rows(rows: Mapping[str, torch.Tensor], *, ids: Mapping[str, torch.Tensor] | None = None,
                    per_row: int = 8, channels: int = 3, title: str | None = None) -> Figure:
    """Sequences of patches in order, one block per entry, stacked, ``per_row`` tiles a line.

    ``rows``: name -> ``(K, D)`` floats, K patches of one image (channels 3 or 1). ``ids``:
    name -> ``(K,)`` ints; tile ``k`` is labelled ``ids[name][k]`` (e.g. its patch number in
    the image), else ``k``.

    Introduced in Chapter 4.
    """
    assert channels in (1, 3), "channels: 1 or 3"
    per_row = args.integer("per_row", per_row, least=1)
    ids = style.mapping("ids", ids, optional=True)
    seqs = {name: args.tensor(f"rows[{name!r}]", t, ndim=2, kind="float").detach().to("cpu", torch.float32)
            for name, t in style.mapping("rows", rows).items()}
    assert set(ids) <= set(seqs), "ids names entries of rows"
    D = next(iter(seqs.values())).shape[1]
    P = math.isqrt(D // channels)
    assert P * P * channels == D and all(p.shape[1] == D and len(p) for p in seqs.values()), \
        f"rows: (K, D) patches, K >= 1 and one D = P * P * channels for all (the first has D = {D})"
    gap = max(1, P // 6)
    step, cols = P + gap, min(per_row, max(len(p) for p in seqs.values()))
    items = []
    for name, p in seqs.items():
        tags = args.tensor(f"ids[{name!r}]", ids[name], ndim=1, kind="int") if name in ids else torch.arange(len(p))
        assert len(tags) == len(p), f"ids[{name!r}] needs {len(p)} entries"
        canvas = np.ones((math.ceil(len(p) / per_row) * step - gap, cols * step - gap, 3))
        labels = []
        for k, tag in enumerate(tags.tolist()):
            r, c = divmod(k, per_row)
            tile = unpatchify(p[k].reshape(1, 1, D), (1, 1), channels)[0]
            canvas[r * step:r * step + P, c * step:c * step + P] = _to_rgb(tile)
            labels.append(_tile_label(r, c, P, step, tag))
        items.append((f"{name}  ({len(p)}, {D})", canvas, labels, None))
    return _layout(items, per_row=1, width=_WIDTH, title=title)


@style.styled
def draw_images(images: Mapping[str, torch.Tensor], *, patch: int | None = None,
                width: float = 3.3, title: str | None = None) -> Figure:
    """Images side by side (two to a row), each titled with its name and shape.

    ``images``: name -> floats ``(H, W)`` (grey) or ``(H, W, 3)`` (RGB) in [0, 1] (others are
    clipped), sizes may differ. ``patch``: thin lines mark a grid of ``patch`` pixels.
    ``width``: inches per image, at most what two to a row leave.

    Introduced in Chapter 5.
    """
    arrays = {}
    for name, t in style.mapping("images", images).items():
        t = args.tensor(f"images[{name!r}]", t, ndim=(2, 3), kind="float")
        assert t.ndim == 2 or t.shape[-1] == 3, f"images[{name!r}]: (H, W) or (H, W, 3); img.permute(1, 2, 0)"
        arrays[name] = np.clip(t.detach().cpu().float().numpy(), 0.0, 1.0)
    if patch is not None:
        patch = args.integer("patch", patch, least=1)
        for name, a in arrays.items():
            assert not (a.shape[0] % patch or a.shape[1] % patch), f"patch={patch} must divide {name}'s H, W"
    assert 1.0 <= width <= style.MAX_WIDTH - 2 * _MARGIN, f"width: 1 to {style.MAX_WIDTH - 2 * _MARGIN} inches"
    per_row = min(len(arrays), 2)  # side by side, so the images are compared on one screen
    width = min(width, (style.MAX_WIDTH - 2 * _MARGIN - _GAP * (per_row - 1)) / per_row)
    return _layout([(f"{name}  {a.shape}", a, [], patch) for name, a in arrays.items()], per_row=per_row,
                   width=width, title=title)
