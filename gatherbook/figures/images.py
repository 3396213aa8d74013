"""Pictures of image patches for the vision chapter, drawn from the real tensors.

- :func:`draw_patches` -- one or more images, each put back together from its patches
  ``(N, D)``, stacked vertically; patches can be greyed out (dropped) and numbered.
- :func:`draw_patch_rows` -- sequences of patches ``(K, D)`` laid out in their order (the order
  of the tensor, not of the image), each tile numbered, e.g. with the patch number it came from.
- :func:`draw_images` -- images ``(H, W)`` or ``(H, W, 3)`` one under the other, each titled
  with its name and shape; optionally a patch grid drawn over them.

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

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.style import FS_FIGTITLE, FS_LABEL, FS_TITLE, GREYS, INK, PAPER, styled
from gatherbook.vision import unpatchify

__all__ = ["draw_patches", "draw_patch_rows", "draw_images"]

_MARGIN, _TITLE_H, _GAP = 0.15, 0.30, 0.28  # draw_images: inches

_WIDTH = 3.6  # inches: one panel spans the figure, which a phone shows at full width
_LINES = PAPER  # the lines between patches
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


def _label(ax, x: float, y: float, text: str) -> None:
    ax.text(x, y, text, ha="center", va="center", fontsize=FS_LABEL, color=PAPER,
            fontweight="bold", path_effects=[pe.withStroke(linewidth=2.2, foreground=INK)])


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

    Introduced in Chapter 4.
    """
    assert channels in (1, 3), "channels: 1 or 3"
    rows, cols = (args.integer(f"grid[{i}]", g, least=1) for i, g in enumerate(grid))
    args.mapping("panels", panels)
    keep, labels = args.mapping("keep", keep, optional=True), args.mapping("labels", labels, optional=True)
    assert set(keep) | set(labels) <= set(panels), "keep and labels name panels of panels"
    args.label("title", title, optional=True)
    images, texts = [], []
    for name, t in panels.items():
        args.label("a key of panels", name)
        p = args.tensor(f"panels[{name!r}]", t, ndim=2, kind="float").detach().to("cpu", torch.float32)
        assert p.shape[0] == rows * cols, f"panels[{name!r}]: N={p.shape[0]}, grid {grid} holds {rows * cols}"
        if name in keep:
            kept = torch.zeros(p.shape[0], dtype=torch.bool)
            kept[args.tensor(f"keep[{name!r}]", keep[name], ndim=1, kind="int").cpu()] = True
            p = torch.where(kept.unsqueeze(-1), p, _greyed(p, channels))
        images.append(_to_rgb(unpatchify(p.unsqueeze(0), (rows, cols), channels)[0]))
        ids = labels.get(name)
        if ids is not None:
            ids = args.tensor(f"labels[{name!r}]", ids, ndim=1, kind="int").cpu()
            assert not ids.numel() or 0 <= int(ids.min()) <= int(ids.max()) < p.shape[0], "labels: patch numbers"
        texts.append(ids)
    aspect = rows / cols
    head = 0.35 if title else 0.0
    width = _WIDTH if len(images) == 1 else _WIDTH - 0.4  # two panels share a desktop screen
    fig = plt.figure(figsize=(width, len(images) * (width * aspect + 0.4) + head))
    if title:
        fig.suptitle(title, fontsize=FS_FIGTITLE, color=INK)
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

    Introduced in Chapter 4.
    """
    assert channels in (1, 3), "channels: 1 or 3"
    per_row = args.integer("per_row", per_row, least=1)
    args.mapping("rows", rows)
    ids = args.mapping("ids", ids, optional=True)
    assert set(ids) <= set(rows), "ids names entries of rows"
    args.label("title", title, optional=True)
    seqs, tags, D = [], [], None
    for name, t in rows.items():
        args.label("a key of rows", name)
        p = args.tensor(f"rows[{name!r}]", t, ndim=2, kind="float").detach().to("cpu", torch.float32)
        assert math.isqrt(p.shape[1] // channels) ** 2 * channels == p.shape[1], f"rows[{name!r}]: D = P * P * C"
        assert D is None or p.shape[1] == D, f"rows[{name!r}]: D={p.shape[1]}, the first entry's is {D}"
        D = p.shape[1]
        K = p.shape[0]
        assert K > 0, f"rows[{name!r}] has no patches"
        tag = torch.arange(K) if name not in ids else args.tensor(f"ids[{name!r}]", ids[name], ndim=1, kind="int")
        assert len(tag) == K, f"ids[{name!r}] needs {K} entries"
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
        fig.suptitle(title, fontsize=FS_FIGTITLE, color=INK)
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


@styled
def draw_images(images: Mapping[str, torch.Tensor], *, patch: int | None = None,
                width: float = 3.3, title: str | None = None) -> Figure:
    """Draw images side by side (two to a row), each titled with its name and shape.

    Args:
        images: name -> float tensor of shape ``(H, W)`` (grey) or ``(H, W, 3)`` (RGB), values in
            ``[0, 1]`` (values outside are clipped). Different sizes are allowed.
        patch: optional patch size in pixels; thin lines mark the ``patch x patch`` grid.
        width: width of each image in inches, at most what two to a row leave.
        title: optional ASCII text above the picture.

    Introduced in Chapter 5.
    """
    args.mapping("images", images)
    arrays = {}
    for name, t in images.items():
        t = args.tensor(f"images[{name!r}]", t, ndim=(2, 3), kind="float")
        assert t.ndim == 2 or t.shape[-1] == 3, f"images[{name!r}]: (H, W) or (H, W, 3); img.permute(1, 2, 0)"
        arrays[args.label("a key of images", name)] = np.clip(t.detach().cpu().float().numpy(), 0.0, 1.0)
    if patch is not None:
        patch = args.integer("patch", patch, least=1)
        for name, a in arrays.items():
            assert not (a.shape[0] % patch or a.shape[1] % patch), f"patch={patch} must divide {name}'s H, W"
    assert 1.0 <= width <= style.MAX_WIDTH - 2 * _MARGIN, f"width: 1 to {style.MAX_WIDTH - 2 * _MARGIN} inches"
    args.label("title", title, optional=True)
    per_row = min(len(arrays), 2)  # side by side, so the images are compared on one screen
    width = min(width, (style.MAX_WIDTH - 2 * _MARGIN - _GAP * (per_row - 1)) / per_row)
    items = list(arrays.items())
    lines = [items[i:i + per_row] for i in range(0, len(items), per_row)]
    line_h = [max(width * a.shape[0] / a.shape[1] for _, a in line) for line in lines]
    H = _MARGIN + (0.40 if title else 0) + sum(h + _TITLE_H for h in line_h) + _GAP * (len(lines) - 1)
    H = np.ceil((H + _MARGIN) * 100) / 100
    W = np.ceil((per_row * width + _GAP * (per_row - 1) + 2 * _MARGIN) * 100) / 100
    fig = plt.figure(figsize=(W, H), facecolor=PAPER)
    top = _MARGIN
    if title:
        fig.text(_MARGIN / W, 1 - top / H, title, fontsize=FS_FIGTITLE, weight="bold", va="top")
        top += 0.40
    for line, lh in zip(lines, line_h):
        for k, (name, a) in enumerate(line):
            x, h = _MARGIN + k * (width + _GAP), width * a.shape[0] / a.shape[1]
            fig.text(x / W, 1 - (top + _TITLE_H - 0.06) / H, f"{name}  {a.shape}", fontsize=FS_TITLE,
                     color=INK, va="bottom")
            ax = fig.add_axes((x / W, 1 - (top + _TITLE_H + h) / H, width / W, h / H))
            ax.imshow(a, cmap=GREYS if a.ndim == 2 else None, vmin=0, vmax=1, interpolation="nearest")
            ax.set_axis_off()
            ax.set_gid(f"image:{name}")
            if patch is not None:
                for y in range(patch, a.shape[0], patch):
                    ax.axhline(y - 0.5, color=PAPER, linewidth=0.6)
                for xx in range(patch, a.shape[1], patch):
                    ax.axvline(xx - 0.5, color=PAPER, linewidth=0.6)
        top += _TITLE_H + lh + _GAP
    return fig
