"""A small real image and its patches, for the vision chapter.

- :func:`sample_image` -- the photograph of Grace Hopper that matplotlib ships
  (``matplotlib.cbook.get_sample_data("grace_hopper.jpg")``: read from the installed package,
  never downloaded), cropped to a square and shrunk to ``size x size`` pixels.
- :func:`patchify` / :func:`unpatchify` -- images ``(B, C, H, W)`` to patches ``(B, N, D)`` and
  back, with MAE's layout: patches in reading order (row by row), and the ``D = P * P * C``
  features of a patch ordered ``(row in patch, column in patch, channel)``.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from gatherbook import args

__all__ = ["sample_image", "patchify", "unpatchify"]


def sample_image(size: int = 96) -> torch.Tensor:
    """Grace Hopper's photograph from matplotlib's sample data, as a float tensor.

    The 512 x 600 photo is cropped to its top 512 x 512 square (the face and shoulders) and
    shrunk by area averaging, so every pixel is the mean of the pixels it covers.

    Args:
        size: side of the square result in pixels, from 8 to 512.

    Returns:
        A float32 tensor of shape ``(3, size, size)`` with values in ``[0, 1]`` (RGB), on the CPU.

    Raises:
        TypeError: ``size`` is not an int.
        ValueError: ``size`` is outside ``[8, 512]``.

    Introduced in Chapter 4.
    """
    if not 8 <= args.integer("size", size) <= 512:
        raise ValueError(f"sample_image: size must be between 8 and 512 pixels, got {size}.")
    import matplotlib.cbook as cbook
    import matplotlib.image as mimage

    path = cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)
    pixels = torch.from_numpy(mimage.imread(path).copy())  # (600, 512, 3) uint8
    side = min(pixels.shape[0], pixels.shape[1])
    square = pixels[:side, :side].permute(2, 0, 1).to(torch.float32) / 255.0
    return F.adaptive_avg_pool2d(square, (size, size)).clamp(0.0, 1.0).contiguous()


def patchify(images: torch.Tensor, patch: int) -> torch.Tensor:
    """Cut images into non-overlapping square patches: ``(B, C, H, W) -> (B, N, D)``.

    ``N = (H / patch) * (W / patch)`` patches in reading order (left to right, then top to
    bottom) and ``D = patch * patch * C`` features per patch, ordered (row, column, channel)
    as in MAE's ``patchify``.

    Raises:
        TypeError: ``images`` is not a float tensor or ``patch`` is not an int.
        ValueError: ``images`` is not 4-d, or ``patch`` does not divide H and W.

    Introduced in Chapter 5.
    """
    args.tensor("images", images, ndim=4, kind="float")
    args.integer("patch", patch, least=1)
    B, C, H, W = images.shape
    if H % patch or W % patch:
        raise ValueError(f"patchify: patch={patch} must divide the height and width, got images of "
                         f"shape {tuple(images.shape)} (H={H}, W={W}).")
    h, w = H // patch, W // patch
    x = images.reshape(B, C, h, patch, w, patch)
    return x.permute(0, 2, 4, 3, 5, 1).reshape(B, h * w, patch * patch * C)


def unpatchify(patches: torch.Tensor, grid: tuple[int, int], channels: int = 3) -> torch.Tensor:
    """The inverse of :func:`patchify`: ``(B, N, D) -> (B, C, H, W)``.

    Args:
        patches: ``(B, N, D)`` with ``N = rows * cols`` and ``D = P * P * channels``.
        grid: ``(rows, cols)``, the number of patches down and across.
        channels: C, the number of channels (3 for RGB).

    Returns:
        ``(B, channels, rows * P, cols * P)``.

    Raises:
        TypeError: ``patches`` is not a float tensor, or ``grid``/``channels`` hold non-ints.
        ValueError: the sizes do not fit together (``N != rows * cols`` or D is not
            ``P * P * channels`` for a whole P).

    Introduced in Chapter 5.
    """
    args.tensor("patches", patches, ndim=3, kind="float")
    assert isinstance(grid, tuple) and len(grid) == 2, f"grid must be (rows, cols), got {grid!r}"
    rows, cols = (args.integer(f"grid[{i}]", g) for i, g in enumerate(grid))
    args.integer("channels", channels, least=1)
    B, N, D = patches.shape
    if rows < 1 or cols < 1 or rows * cols != N:
        raise ValueError(f"unpatchify: grid={grid} holds {rows * cols} patches, but patches has "
                         f"N={N} (shape {tuple(patches.shape)}).")
    P = math.isqrt(D // channels) if D % channels == 0 else 0
    if P < 1 or P * P * channels != D:
        raise ValueError(f"unpatchify: D={D} features is not P * P * channels for channels={channels}; "
                         f"patches has shape {tuple(patches.shape)}.")
    x = patches.reshape(B, rows, cols, P, P, channels)
    return x.permute(0, 5, 1, 3, 2, 4).reshape(B, channels, rows * P, cols * P)
