"""Pictures for the chapter on action values and policies (reinforcement learning):
:func:`draw_q_picks` (the kit's grid renderer) and :func:`draw_grid_policy`, a grid world of
arrows on the colour-blind-safe :data:`~gatherbook.figures.style.SEQUENTIAL` scale. Training
curves are :func:`gatherbook.figures.charts.draw_curves`.
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.grid import cell_array, panel, render

__all__ = ["draw_q_picks", "draw_grid_policy", "ARROWS"]

#: FrozenLake / CliffWalking action numbers -> arrow direction (dx, dy), y pointing down.
ARROWS = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}
#: the cells of a grid world that end an episode: letter -> (face, edge, ink)
_ENDS = {"H": (style.HOLE, style.PAPER, style.PAPER), "G": (style.PAPER, style.INK, style.INK)}


@style.styled
def draw_q_picks(panels: Mapping[str, tuple[torch.Tensor, torch.Tensor]], *,
                 title: str | None = None) -> Figure:
    """Q-tables stacked vertically, with one picked cell per row outlined.

    ``panels`` maps a label (e.g. ``"q_next_target"``) to ``(q, picks)``: ``q`` of shape
    ``(B, A)`` (float, at most 8 x 8) and ``picks`` of shape ``(B,)`` (integers in ``[0, A)``),
    the column read in each row. Each cell shows its value; the picked value is also written
    in a column on the right, so the panel reads as ``q.gather(1, picks.unsqueeze(1))``.

    Introduced in Chapter 3.
    """
    args.mapping("panels", panels)
    assert len(panels) <= 4, "panels: at most 4"
    checked = []
    for label, (q, picks) in panels.items():
        q = args.tensor(f"panels[{label!r}][0]", q, ndim=2, kind="float").detach().cpu().double()
        picks = args.tensor(f"panels[{label!r}][1]", picks, ndim=1, kind="int").detach().cpu().long()
        B, A = q.shape  # panel() refuses a q too big to draw
        assert picks.shape == (B,) and 0 <= picks.min() <= picks.max() < A, \
            f"panels[{label!r}]: picks of shape ({B},), columns in [0, {A})"
        checked.append((label, q, picks))
    shade = style.shades(min(float(q.min()) for _, q, _ in checked), max(float(q.max()) for _, q, _ in checked))
    rows = []
    cell_h = 0.34 if len(checked) < 3 else 0.28  # three panels share one desktop screen
    for label, q, picks in checked:
        faces = cell_array([shade(v) for v in q.reshape(-1).tolist()], tuple(q.shape))
        picked = torch.zeros(q.shape, dtype=torch.bool)
        picked[torch.arange(len(picks)), picks] = True
        out = q.gather(1, picks.unsqueeze(1))
        rows.append([panel("q", q, label, faces=faces, mark=picked, mark_color=style.PICK, cell_h=cell_h),
                     panel("out", out, "out", mark=torch.ones_like(out, dtype=torch.bool),
                           mark_color=style.PICK, numbers=False, cell_h=cell_h)])
    return render(rows, title)


@style.styled
def draw_grid_policy(desc: Sequence[Sequence[str]] | np.ndarray, q: torch.Tensor, *,
                     path: Sequence[int] | None = None, title: str | None = None) -> Figure:
    """A grid world: each cell coloured by ``max_a q[s, a]``, with its greedy action as an arrow.

    ``desc``: the map as rows of one-letter codes, e.g. gymnasium's ``env.unwrapped.desc``
    (bytes or str; ``H`` holes and ``G`` goals get no arrow). ``q``: ``(n_rows * n_cols, 4)``
    float, state ``s`` being row ``s // n_cols``, column ``s % n_cols``; actions 0 to 3 are
    left, down, right, up (FrozenLake's and CliffWalking's numbering). ``path``: states to
    outline (e.g. the greedy path from the start).

    Introduced in Chapter 3.
    """
    rows = [[c.decode() if isinstance(c, bytes) else str(c) for c in row] for row in desc]
    n_rows, n_cols = len(rows), len(rows[0]) if rows else 0
    assert 1 <= n_rows <= 12 and 1 <= n_cols <= 12 and all(len(r) == n_cols for r in rows) \
        and all(len(c) == 1 for r in rows for c in r), "desc: a rectangle of one-letter codes, at most 12 x 12"
    qn = args.tensor("q", q, ndim=2, kind="float").detach().cpu().double().numpy()
    assert qn.shape == (n_rows * n_cols, 4), f"q: shape ({n_rows * n_cols}, 4), one row per cell of desc"
    path = [] if path is None else list(path)
    assert all(isinstance(s, numbers.Integral) and 0 <= s < n_rows * n_cols for s in path), \
        f"path: states in [0, {n_rows * n_cols})"
    v = qn.max(1)
    greedy = qn.argmax(1)
    live = np.array([c not in "HG" for r in rows for c in r])
    shade = style.shades(*((v[live].min(), v[live].max()) if live.any() else (0.0, 1.0)))
    cell = min(0.85, (style.MAX_WIDTH - 0.9) / n_cols)
    fig = plt.figure(figsize=(n_cols * cell + 0.9, n_rows * cell + (0.75 if title else 0.35)))
    ax = fig.add_axes([0.02, 0.02, 0.96, (n_rows * cell + 0.2) / fig.get_figheight()])
    ax.set_xlim(-0.45, n_cols + 0.05)
    ax.set_ylim(n_rows + 0.05, -0.05)
    ax.set_aspect("equal")
    ax.axis("off")
    for s in range(n_rows * n_cols):
        r, c = divmod(s, n_cols)
        code = rows[r][c]
        if code in _ENDS:  # a hole or the goal: its letter, no value and no arrow
            face, edge, ink = _ENDS[code]
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor=face, edgecolor=edge, linewidth=1.5))
            ax.text(c + 0.5, r + 0.5, code, fontsize=style.FS_CHAR, color=ink, ha="center", va="center")
            continue
        ax.add_patch(Rectangle((c, r), 1, 1, facecolor=shade(v[s]), edgecolor=style.PAPER, linewidth=1.5))
        ink = style.ink_on(shade(v[s]))
        dx, dy = ARROWS[int(greedy[s])]
        ax.annotate("", xy=(c + 0.5 + 0.3 * dx, r + 0.42 + 0.3 * dy),
                    xytext=(c + 0.5 - 0.3 * dx, r + 0.42 - 0.3 * dy),
                    arrowprops=dict(arrowstyle="-|>", color=ink, linewidth=2.2, mutation_scale=16))
        ax.text(c + 0.5, r + 0.84, f"{v[s]:.2f}", fontsize=style.FS_VALUE, color=ink, ha="center",
                va="center", gid="value")
        if code == "S":
            ax.text(c + 0.1, r + 0.14, "S", fontsize=style.FS_NUMBER, color=ink, ha="center", va="center")
    for s in path:
        r, c = divmod(s, n_cols)
        ax.add_patch(Rectangle((c + 0.05, r + 0.05), 0.9, 0.9, fill=False, edgecolor=style.PICK, linewidth=2.4))
    for r in range(n_rows):
        ax.text(-0.25, r + 0.5, str(r), fontsize=style.FS_NUMBER, color=style.MUTED, ha="center", va="center")
    if title:
        fig.text(0.03, 1 - 0.22 / fig.get_figheight(), title, fontsize=style.FS_TITLE, color=style.INK,
                 va="center")
    return fig
