"""Pictures of the benchmark in the chapter on pitfalls and performance.

- :func:`draw_ratios` -- measured ratios (e.g. time of each method / time of indexing) as
  horizontal bars on a log scale, with a line at 1.

Memory peaks are drawn with :func:`gatherbook.draw_logprobs.draw_peaks`. Labels are code
identifiers and numbers only (one figure serves both editions); font and inks come from
:mod:`gatherbook.style`; end the notebook cell with ``;``.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from gatherbook.style import CATEGORICAL, FS_LABEL, FS_VALUE, INK, styled

__all__ = ["draw_ratios"]

# blue below the reference (faster / smaller), orange above it: a blue-orange pair reads for
# red-green colour-blind readers
_BAR, _OVER = CATEGORICAL[0], CATEGORICAL[1]
_MAX_LABEL = 40


def _label(v: float) -> str:
    """``1234x``, ``42x``, ``1.5x``, ``0.29x``: at most 3 significant digits, never an exponent."""
    return f"{v:.0f}x" if v >= 10 else f"{v:.2g}x" if v >= 0.01 else f"{v:.1e}x"


@styled
def draw_ratios(ratios: Mapping[str, float], *, xlabel: str, reference: float = 1.0) -> Figure:
    """Horizontal bars of positive ratios on a log scale, one per label, and a dashed line at
    ``reference``. Bars below the reference are blue, above it orange; each bar is labelled with
    its value (``0.31x``, ``1585x``).

    Args:
        ratios: non-empty mapping from a label (a code identifier, <= 40 characters) to a
            positive finite number.
        xlabel: the x axis label (a code expression such as ``"t / t(x[rows, ids])"``).
        reference: where the dashed line goes (positive).

    Raises:
        TypeError: ``ratios`` not a mapping of str to numbers; ``xlabel`` not a str.
        ValueError: an empty mapping, a label too long, a ratio or reference <= 0 or not finite.
    """
    if not isinstance(ratios, Mapping):
        raise TypeError(f"draw_ratios: ratios must be a mapping label -> ratio; got {type(ratios).__name__}.")
    if not ratios:
        raise ValueError("draw_ratios: ratios must not be empty; got {}.")
    if not isinstance(xlabel, str):
        raise TypeError(f"draw_ratios: xlabel must be a str; got {type(xlabel).__name__}.")
    for name, value in [*ratios.items(), ("reference", reference)]:
        if not isinstance(name, str):
            raise TypeError(f"draw_ratios: every label must be a str; got {name!r}.")
        if len(name) > _MAX_LABEL:
            raise ValueError(f"draw_ratios: label {name!r} is longer than {_MAX_LABEL} characters.")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"draw_ratios: ratios[{name!r}] must be a number; got {type(value).__name__}.")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"draw_ratios: ratios[{name!r}] must be positive and finite "
                             f"(the axis is logarithmic); got {value!r}.")
    labels = list(ratios)
    values = np.array([float(ratios[k]) for k in labels])
    fig = plt.figure(figsize=(6.0, 0.55 * len(labels) + 1.1))
    ax = fig.add_subplot()
    y = np.arange(len(labels))[::-1]
    colours = [_BAR if v <= reference else _OVER for v in values]
    low = min(values.min(), reference) / 3
    ax.set_xscale("log")
    ax.barh(y, values - low, left=low, color=colours)  # each bar spans [low, value]
    ax.axvline(reference, color=INK, linestyle="--", linewidth=1)
    for yi, v in zip(y, values):
        ax.text(v * 1.12, yi, _label(v), va="center", fontsize=FS_VALUE + 1)
    ax.set_yticks(y, labels, fontsize=FS_VALUE + 1)
    ax.set_xlim(low, max(values.max(), reference) * 6)
    ax.set_xlabel(xlabel, fontsize=FS_LABEL + 1)
    ax.tick_params(axis="x", labelsize=FS_LABEL)
    fig.tight_layout()
    return fig
