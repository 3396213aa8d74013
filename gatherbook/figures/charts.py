"""Charts: one bar chart (:func:`bars`) and one line chart (:func:`lines`) that every measured
quantity of the book uses; the ``draw_*`` functions below are the book's uses of them. A bar's
label sits above it, so long code labels need no room beside the bars and a chart fits a phone.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from gatherbook import args
from gatherbook.figures import style

__all__ = ["bars", "lines", "draw_peaks", "draw_ratios", "draw_errors", "draw_curves"]

_ROW = 0.52  # inches per bar: its label above, the bar below
_MARKERS = ("o", "s", "^", "D")


@style.styled
def bars(values: Mapping[str, float], *, text: str = "{:.0f}", xlabel: str = "",
         log: bool = False, reference: float | None = None, reference_label: str | None = None,
         high: str | None = None, title: str | None = None) -> Figure:
    """Horizontal bars, one per entry of ``values`` (label -> number), top to bottom, each number
    written at its bar's end by ``text`` (a format string or a function). ``log``: a log axis;
    ``reference``: a dashed line, labelled ``reference_label``; bars above it take colour ``high``.

    Introduced in Chapter 2.
    """
    fmt = text.format if isinstance(text, str) else text
    values = {k: args.reals(f"values[{k!r}]", [v])[0] for k, v in style.mapping("values", values).items()}
    style.label("xlabel", xlabel)
    labels, v = list(values), np.array(list(values.values()), dtype=float)
    assert not log or (v > 0).all() and (reference is None or reference > 0), "a log axis needs values > 0"
    fig = plt.figure(figsize=(style.CHART_WIDTH, _ROW * len(v) + 0.75 + (0.3 if title else 0.0)))
    ax = fig.add_subplot()
    y = np.arange(len(v))[::-1] * 1.6  # room above each bar for its label
    low = min(v.min(), reference or v.min()) / 3 if log else 0.0
    faces = [high if high and reference is not None and x > reference else style.BAR for x in v]
    ax.barh(y, v - low, left=low, height=0.8, color=faces, edgecolor=style.EDGE, linewidth=0.6)
    if log:
        ax.set_xscale("log")
    hi = max(v.max(), reference or 0.0)
    ax.set_xlim(low, hi * (6 if log else 1.25))
    values = []
    for yi, x, label in zip(y, v, labels):
        ax.text(low if log else 0.0, yi + 0.5, label, va="bottom", fontsize=style.FS_LABEL)
        values.append(ax.text(x * (1.08 if log else 1.0), yi, " " + fmt(x), va="center", fontsize=style.FS_VALUE,
                              gid="value"))
    if reference is not None:  # dashed beside each bar only, so that it crosses no label
        ax.vlines([reference] * len(y), y - 0.45, y + 0.45, color=style.MARK, linestyle="--", linewidth=1)
        if reference_label:
            ax.text(reference, y.max() + 1.25, reference_label + " ", color=style.MARK,
                    fontsize=style.FS_LABEL, ha="right", va="bottom")
    ax.set_ylim(-0.6, y.max() + 1.5)
    ax.set_yticks([])
    ax.spines["left"].set_visible(False)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title, loc="left")
    fig.tight_layout()
    if reference is not None:  # a value that the dashed line would cross moves just past it
        renderer, at = fig.canvas.get_renderer(), ax.transData.transform((reference, 0))[0]
        for t in values:
            box = t.get_window_extent(renderer)
            if box.x0 - 3 <= at <= box.x1 + 3:
                t.set_x(reference * 1.08 if log else reference)
    return fig


@style.styled
def lines(x: Sequence[float], ys: Mapping[str, Sequence[float]], *, xlabel: str,
          ylabel: str | None = None, log: bool = False, stacked: bool = False,
          title: str | None = None) -> Figure:
    """Lines of ``ys`` (label -> ``n`` numbers) against ``x`` (``n`` numbers): in one panel with a
    legend under it and ``ylabel``, or ``stacked``, one panel per line named by its label,
    sharing ``x``. ``log``: a log y axis, values below 1e-9 (zeros too) drawn at 1e-9.

    Introduced in Chapter 2.
    """
    xs = args.reals("x", x)
    curves = {k: args.reals(f"ys[{k!r}]", v) for k, v in style.mapping("ys", ys).items()}
    style.label("xlabel", xlabel)
    style.label("ylabel", ylabel, optional=True)
    for k, v in curves.items():
        assert len(v) == len(xs), f"ys[{k!r}] has {len(v)} values for {len(xs)} x positions"
    n = len(curves) if stacked else 1
    ncol = 2 if max(map(len, curves)) <= 16 else 1  # a legend as wide as the chart at most
    legend_h = 0.0 if stacked else 0.28 * math.ceil(len(curves) / ncol)
    fig, axes = plt.subplots(n, 1, figsize=(style.CHART_WIDTH,
                                            (1.9 if stacked else 2.8) * n + legend_h + (0.3 if title else 0.0)),
                             sharex=True, squeeze=False)
    colours = plt.get_cmap(style.SEQUENTIAL)(np.linspace(0.1, 0.75, len(curves))) if stacked else [None] * len(curves)
    for i, ((label, y), colour) in enumerate(zip(curves.items(), colours)):
        ax = axes[i if stacked else 0, 0]
        ax.plot(xs, [max(e, 1e-9) for e in y] if log else y, marker=_MARKERS[i % len(_MARKERS)],
                markersize=3 if stacked else 5, linewidth=1.6, label=label, color=colour)
        ax.grid(True)
        ax.set_yscale("log" if log else "linear")
        if stacked:
            ax.set_ylabel(label)
    if not stacked:
        axes[0, 0].set_ylabel(ylabel or "")
        fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower left", ncol=ncol,
                   bbox_to_anchor=(0.0, 0.0))
    axes[-1, 0].set_xlabel(xlabel)
    if title:
        fig.suptitle(title, x=0.02, ha="left")
    fig.tight_layout(rect=(0, legend_h / fig.get_figheight(), 1, 1))
    return fig


# --- the book's charts -------------------------------------------------------------------------
def draw_peaks(peaks: Mapping[str, int], *, reference: int | None = None,
               reference_label: str = "logits", xlabel: str = "peak_memory (MB)",
               title: str | None = None) -> Figure:
    """Bars of measured peak memory in MB (``peaks`` maps a label to bytes, each >= 0);
    ``reference`` (bytes) draws a dashed line, e.g. at the size of the logits tensor.

    Introduced in Chapter 2.
    """
    mb = {k: float(v) / 1e6 for k, v in style.mapping("peaks", peaks).items()}
    assert min(mb.values()) >= 0, "peaks: bytes >= 0"
    ref = None if reference is None else args.reals("reference", [reference])[0] / 1e6
    return bars(mb, text="{:.0f} MB", xlabel=xlabel, reference=ref, title=title,
                reference_label=None if ref is None else f"{reference_label} = {ref:.0f} MB")


def _ratio(v: float) -> str:
    """``1234x``, ``42x``, ``1.5x``, ``0.29x``: at most 3 significant digits, never an exponent."""
    return f"{v:.0f}x" if v >= 10 else f"{v:.2g}x" if v >= 0.01 else f"{v:.1e}x"


def draw_ratios(ratios: Mapping[str, float], *, xlabel: str, reference: float = 1.0) -> Figure:
    """Bars of positive ratios (label -> number, written ``0.31x``, ``1585x``) on a log axis with a
    dashed line at ``reference``: blue at or below it, orange above (a pair that red-green
    colour-blind readers tell apart).

    Introduced in Chapter 6.
    """
    return bars(ratios, text=_ratio, xlabel=xlabel, log=True, reference=reference,
                high=style.CATEGORICAL[1])


def draw_errors(x: Sequence[float], errors: Mapping[str, Sequence[float]], *, xlabel: str,
                ylabel: str = "max |err|", title: str | None = None) -> Figure:
    """Lines of errors (log scale) against ``x``; ``errors`` maps a label to one value per ``x``
    (values below 1e-9, zeros included, are drawn at 1e-9).

    Introduced in Chapter 2.
    """
    return lines(x, errors, xlabel=xlabel, ylabel=ylabel, log=True, title=title)


def draw_curves(x: Sequence[float], curves: Mapping[str, Sequence[float]], *, xlabel: str = "step",
                title: str | None = None) -> Figure:
    """Training curves, one panel per entry of ``curves`` (1 to 4), stacked, sharing ``x``
    (``True``/``False`` count as 1/0, so a success flag draws as a step line).

    Introduced in Chapter 3.
    """
    assert 1 <= len(style.mapping("curves", curves)) <= 4, "curves: 1 to 4 entries"
    ys = {k: [float(v) for v in (vs.tolist() if hasattr(vs, "tolist") else vs)] for k, vs in curves.items()}
    return lines(x, ys, xlabel=xlabel, stacked=True, title=title)
