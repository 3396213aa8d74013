"""Pictures for the chapter on action values and policies (reinforcement learning).

- :func:`draw_q_picks` -- Q-tables ``(B, A)`` stacked vertically, one cell per row outlined: the
  action whose value is read (taken actions, a ``max``, or another network's ``argmax``).
- :func:`draw_grid_policy` -- a grid world with the greedy action of every cell drawn as an arrow
  and each cell coloured by its state value ``max_a Q(s, a)``.
- :func:`draw_curves` -- training curves stacked vertically, one panel per quantity.

Labels are code identifiers, numbers and ASCII only (one figure serves both editions of the
book); colour scales are viridis (readable by red-green colour-blind readers). A figure ends its
notebook cell with ``;`` so that Jupyter shows the picture and no repr.
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from gatherbook.style import FONT as _FONT
from gatherbook.style import INK as _INK
from gatherbook.style import MUTED as _MUTED
from gatherbook.style import styled

__all__ = ["draw_q_picks", "draw_grid_policy", "draw_curves", "ARROWS"]

_PICK = "#e66100"  # orange outline: visible on every viridis colour
_MAX_ROWS, _MAX_COLS, _MAX_PANELS = 8, 8, 4
_MAX_TITLE = 60

#: FrozenLake / CliffWalking action numbers -> arrow direction (dx, dy), y pointing down.
ARROWS = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}


def _check_title(title: object, fn: str) -> None:
    if title is not None and (not isinstance(title, str) or len(title) > _MAX_TITLE):
        raise TypeError(f"{fn}: title must be None or a string of at most {_MAX_TITLE} characters; "
                        f"got {title!r}.")


def _real_2d(name: str, value: object, fn: str) -> np.ndarray:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{fn}: {name} must be a torch.Tensor; got {type(value).__name__}.")
    if value.ndim != 2 or not value.is_floating_point():
        raise ValueError(f"{fn}: {name} must be a 2-d floating-point tensor; got shape "
                         f"{tuple(value.shape)} and dtype {value.dtype}.")
    return value.detach().cpu().double().numpy()


def _figure(width: float, height: float) -> Figure:
    return plt.figure(figsize=(width, height), facecolor="white")


@styled
def draw_q_picks(panels: Mapping[str, tuple[torch.Tensor, torch.Tensor]], *,
                 title: str | None = None) -> Figure:
    """Q-tables stacked vertically, with one picked cell per row outlined.

    ``panels`` maps a label (e.g. ``"q_next_target"``) to ``(q, picks)``: ``q`` of shape
    ``(B, A)`` (float, at most 8 x 8) and ``picks`` of shape ``(B,)`` (integers in ``[0, A)``),
    the column read in each row. Each cell shows its value; the picked value is also written
    in a column on the right, so the panel reads as ``q.gather(1, picks.unsqueeze(1))``.
    """
    fn = "draw_q_picks"
    if not isinstance(panels, Mapping) or not panels or len(panels) > _MAX_PANELS:
        raise TypeError(f"{fn}: panels must be a mapping label -> (q, picks) with 1 to {_MAX_PANELS} "
                        f"entries; got {panels!r:.80}.")
    _check_title(title, fn)
    checked = []
    for label, pair in panels.items():
        if not isinstance(label, str) or not label.isascii():
            raise TypeError(f"{fn}: every label must be an ASCII string; got {label!r}.")
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"{fn}: panels[{label!r}] must be a pair (q, picks); got {type(pair).__name__}.")
        q = _real_2d(f"panels[{label!r}][0]", pair[0], fn)
        picks = pair[1]
        if not isinstance(picks, torch.Tensor) or picks.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"{fn}: panels[{label!r}][1] (picks) must be an int64 or int32 tensor; got "
                            f"{getattr(picks, 'dtype', type(picks).__name__)}.")
        B, A = q.shape
        if not (1 <= B <= _MAX_ROWS and 1 <= A <= _MAX_COLS):
            raise ValueError(f"{fn}: panels[{label!r}][0] (q) has shape {q.shape}; a picture holds at most "
                             f"({_MAX_ROWS}, {_MAX_COLS}).")
        if tuple(picks.shape) != (B,):
            raise ValueError(f"{fn}: panels[{label!r}][1] (picks) must have shape ({B},), one column per row "
                             f"of q; got {tuple(picks.shape)}.")
        p = picks.detach().cpu().numpy()
        if (p < 0).any() or (p >= A).any():
            raise ValueError(f"{fn}: panels[{label!r}][1] (picks) must hold columns in [0, {A}); got "
                             f"{p.tolist()}.")
        checked.append((label, q, p))
    lo = min(q.min() for _, q, _ in checked)
    hi = max(q.max() for _, q, _ in checked)
    norm = plt.Normalize(lo, hi if hi > lo else lo + 1)
    cmap = plt.get_cmap("viridis")
    cell = 0.62
    heights = [len(q) * cell + 0.75 for _, q, _ in checked]
    width = (max(q.shape[1] for _, q, _ in checked) + 2.6) * cell + 0.4
    fig = _figure(max(width, 3.9), sum(heights) + (0.35 if title else 0.1))
    top = 1.0 - (0.35 / fig.get_figheight() if title else 0.0)
    y0 = top
    for (label, q, p), h in zip(checked, heights):
        frac = h / fig.get_figheight()
        ax = fig.add_axes([0.02, y0 - frac, 0.96, frac])
        y0 -= frac
        B, A = q.shape
        ax.set_xlim(-1.0, A + 1.8)
        ax.set_ylim(B + 0.1, -1.2)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.text(-1.0, -0.85, label, family=_FONT, fontsize=10, color=_INK, va="center")
        for a in range(A):
            ax.text(a + 0.5, -0.25, str(a), family=_FONT, fontsize=8, color=_MUTED, ha="center", va="center")
        ax.text(A + 1.2, -0.25, "out", family=_FONT, fontsize=8, color=_MUTED, ha="center", va="center")
        for b in range(B):
            ax.text(-0.3, b + 0.5, str(b), family=_FONT, fontsize=8, color=_MUTED, ha="center", va="center")
            for a in range(A):
                face = cmap(norm(q[b, a]))
                ink = "white" if norm(q[b, a]) < 0.55 else _INK
                ax.add_patch(Rectangle((a, b), 1, 1, facecolor=face, edgecolor="white", linewidth=1))
                ax.text(a + 0.5, b + 0.5, f"{q[b, a]:.2f}", family=_FONT, fontsize=8.5, color=ink,
                        ha="center", va="center")
            ax.add_patch(Rectangle((p[b] + 0.04, b + 0.04), 0.92, 0.92, fill=False, edgecolor=_PICK,
                                   linewidth=2.6))
            ax.add_patch(Rectangle((A + 0.7, b + 0.04), 1.0, 0.92, facecolor="white", edgecolor=_PICK,
                                   linewidth=1.6))
            ax.text(A + 1.2, b + 0.5, f"{q[b, p[b]]:.2f}", family=_FONT, fontsize=8.5, color=_INK,
                    ha="center", va="center")
    if title:
        fig.text(0.02, 1 - 0.2 / fig.get_figheight(), title, family=_FONT, fontsize=10.5, color=_INK,
                 va="center")
    return fig


@styled
def draw_grid_policy(desc: Sequence[Sequence[str]] | np.ndarray, q: torch.Tensor, *,
                     path: Sequence[int] | None = None, title: str | None = None) -> Figure:
    """A grid world: each cell coloured by ``max_a q[s, a]``, with its greedy action as an arrow.

    ``desc``: the map as rows of one-letter codes, e.g. gymnasium's ``env.unwrapped.desc``
    (bytes or str; ``H`` holes and ``G`` goals get no arrow). ``q``: ``(n_rows * n_cols, 4)``
    float, state ``s`` being row ``s // n_cols``, column ``s % n_cols``; actions 0 to 3 are
    left, down, right, up (FrozenLake's and CliffWalking's numbering). ``path``: states to
    outline (e.g. the greedy path from the start).
    """
    fn = "draw_grid_policy"
    try:
        rows = [[c.decode() if isinstance(c, bytes) else str(c) for c in row] for row in desc]
    except TypeError:
        raise TypeError(f"{fn}: desc must be rows of one-letter codes (e.g. env.unwrapped.desc); "
                        f"got {type(desc).__name__}.") from None
    n_rows = len(rows)
    n_cols = len(rows[0]) if rows else 0
    if not (1 <= n_rows <= 12 and 1 <= n_cols <= 12) or any(len(r) != n_cols for r in rows) \
            or any(len(c) != 1 for r in rows for c in r):
        raise ValueError(f"{fn}: desc must be a rectangle of one-letter codes, at most 12 x 12; got "
                         f"{n_rows} rows of lengths {[len(r) for r in rows]}.")
    qn = _real_2d("q", q, fn)
    if qn.shape != (n_rows * n_cols, 4):
        raise ValueError(f"{fn}: q must have shape ({n_rows * n_cols}, 4), one row per cell of desc; "
                         f"got {qn.shape}.")
    _check_title(title, fn)
    path = [] if path is None else list(path)
    if any(not isinstance(s, numbers.Integral) or not 0 <= s < n_rows * n_cols for s in path):
        raise ValueError(f"{fn}: path must hold states in [0, {n_rows * n_cols}); got {path}.")
    v = qn.max(1)
    greedy = qn.argmax(1)
    live = np.array([c not in "HG" for r in rows for c in r])
    lo, hi = (v[live].min(), v[live].max()) if live.any() else (0.0, 1.0)
    norm = plt.Normalize(lo, hi if hi > lo else lo + 1)
    cmap = plt.get_cmap("viridis")
    cell = 0.85
    fig = _figure(n_cols * cell + 0.9, n_rows * cell + (0.75 if title else 0.35))
    ax = fig.add_axes([0.02, 0.02, 0.96, (n_rows * cell + 0.2) / fig.get_figheight()])
    ax.set_xlim(-0.45, n_cols + 0.05)
    ax.set_ylim(n_rows + 0.05, -0.05)
    ax.set_aspect("equal")
    ax.axis("off")
    for s in range(n_rows * n_cols):
        r, c = divmod(s, n_cols)
        code = rows[r][c]
        if code == "H":
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor="#3a3a3a", edgecolor="white", linewidth=1.5))
            ax.text(c + 0.5, r + 0.5, "H", family=_FONT, fontsize=12, color="white", ha="center", va="center")
            continue
        if code == "G":
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor="white", edgecolor=_INK, linewidth=1.5))
            ax.text(c + 0.5, r + 0.5, "G", family=_FONT, fontsize=12, color=_INK, ha="center", va="center")
            continue
        shade = norm(v[s])
        ax.add_patch(Rectangle((c, r), 1, 1, facecolor=cmap(shade), edgecolor="white", linewidth=1.5))
        ink = "white" if shade < 0.55 else _INK
        dx, dy = ARROWS[int(greedy[s])]
        ax.annotate("", xy=(c + 0.5 + 0.3 * dx, r + 0.42 + 0.3 * dy),
                    xytext=(c + 0.5 - 0.3 * dx, r + 0.42 - 0.3 * dy),
                    arrowprops=dict(arrowstyle="-|>", color=ink, linewidth=2.2, mutation_scale=16))
        ax.text(c + 0.5, r + 0.86, f"{v[s]:.2f}", family=_FONT, fontsize=7.5, color=ink, ha="center",
                va="center")
        if code == "S":
            ax.text(c + 0.1, r + 0.14, "S", family=_FONT, fontsize=8, color=ink, ha="center", va="center")
    for s in path:
        r, c = divmod(s, n_cols)
        ax.add_patch(Rectangle((c + 0.05, r + 0.05), 0.9, 0.9, fill=False, edgecolor=_PICK, linewidth=2.4))
    for r in range(n_rows):
        ax.text(-0.25, r + 0.5, str(r), family=_FONT, fontsize=8, color=_MUTED, ha="center", va="center")
    if title:
        fig.text(0.03, 1 - 0.22 / fig.get_figheight(), title, family=_FONT, fontsize=10.5, color=_INK,
                 va="center")
    return fig


@styled
def draw_curves(x: Sequence[float], curves: Mapping[str, Sequence[float]], *, xlabel: str = "step",
                title: str | None = None) -> Figure:
    """Training curves, one panel per entry of ``curves``, stacked vertically, sharing ``x``.

    ``x``: ``n`` numbers (e.g. training steps); ``curves[label]``: ``n`` numbers (``True``/``False``
    count as 1/0, so a success flag draws as a step line).
    """
    fn = "draw_curves"

    def reals(name: str, values: object) -> list[float]:
        if isinstance(values, torch.Tensor):
            values = values.tolist()
        if not isinstance(values, Sequence) or isinstance(values, str) or not values:
            raise TypeError(f"{fn}: {name} must be a non-empty sequence of numbers; got {values!r:.80}.")
        if any(not isinstance(v, numbers.Real) for v in values):
            raise TypeError(f"{fn}: {name} must hold real numbers only; got {values!r:.80}.")
        return [float(v) for v in values]

    xs = reals("x", x)
    if not isinstance(curves, Mapping) or not curves or len(curves) > _MAX_PANELS:
        raise TypeError(f"{fn}: curves must be a mapping label -> values with 1 to {_MAX_PANELS} entries; "
                        f"got {curves!r:.80}.")
    ys = {}
    for label, values in curves.items():
        if not isinstance(label, str) or not label.isascii():
            raise TypeError(f"{fn}: every label must be an ASCII string; got {label!r}.")
        ys[label] = reals(f"curves[{label!r}]", values)
        if len(ys[label]) != len(xs):
            raise ValueError(f"{fn}: curves[{label!r}] has {len(ys[label])} values for {len(xs)} x positions.")
    if not isinstance(xlabel, str):
        raise TypeError(f"{fn}: xlabel must be a string; got {xlabel!r}.")
    _check_title(title, fn)
    n = len(ys)
    fig, axes = plt.subplots(n, 1, figsize=(4.6, 1.9 * n + (0.3 if title else 0.0)), sharex=True,
                             squeeze=False, facecolor="white")
    colours = plt.get_cmap("viridis")(np.linspace(0.15, 0.7, n))
    for ax, (label, y), colour in zip(axes[:, 0], ys.items(), colours):
        ax.plot(xs, y, color=colour, linewidth=1.8, marker="o", markersize=3)
        ax.set_ylabel(label, family=_FONT, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(True, color="#e0e0e0", linewidth=0.6)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    axes[-1, 0].set_xlabel(xlabel, family=_FONT, fontsize=9)
    if title:
        fig.suptitle(title, family=_FONT, fontsize=10.5, x=0.02, ha="left")
    fig.tight_layout()
    return fig
