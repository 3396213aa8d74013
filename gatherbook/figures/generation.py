"""The picture of Chapter 7: Mixture-of-Experts routing, tokens to expert groups and back.

One public function, :func:`draw_routing`. Labels are code identifiers and numbers only, so one
figure serves both editions; the caption, in the page's language, lives in the cell metadata.
The figure is narrow (two columns of boxes, about 3.7 inches wide), so it fits a 390 px phone.
End a figure cell with ``;``.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from gatherbook.figures import style

__all__ = ["draw_routing"]

_ROW_H = 0.30  # inches per sorted row
_BOX_W = 0.95


def _box(ax, x: float, y: float, text: str, face, *, w: float = _BOX_W, h: float = 0.24) -> None:
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.0,rounding_size=0.04",
                                facecolor=face, edgecolor=style.EDGE, linewidth=0.8))
    ax.text(x, y, text, ha="center", va="center", fontsize=style.FS_VALUE, family=style.FONT,
            color=style.ink_on(face))


@style.styled
def draw_routing(experts: torch.Tensor, num_experts: int | None = None) -> Figure:
    """Tokens (left) and their rows after the sorted dispatch (right), one colour per expert.

    Introduced in Chapter 7. ``experts``: ``(T, k)`` int64, the experts each token is routed to
    (from :func:`gatherbook.generation.route`). Left: token ``t`` with its experts; right:
    ``x_sorted``, the ``T * k`` rows sorted by expert (stable), each labelled with its token,
    grouped by expert with the group's count. A line joins each token to each of its rows, in
    the colour of the expert: the dispatch reads the lines left to right, the combine
    (``index_add_``) right to left. At most 8 tokens and 8 experts.
    """
    if not isinstance(experts, torch.Tensor) or experts.dim() != 2 or experts.is_floating_point():
        raise TypeError("draw_routing: experts must be a (T, k) integer tensor; got "
                        f"{tuple(experts.shape) if isinstance(experts, torch.Tensor) else type(experts).__name__}.")
    experts = experts.detach().cpu()
    T, k = experts.shape
    E = int(experts.max()) + 1 if num_experts is None else num_experts
    if not (1 <= T <= 8 and 1 <= E <= 8) or int(experts.min()) < 0 or int(experts.max()) >= E:
        raise ValueError(f"draw_routing: needs 1..8 tokens and experts in [0, {E}) with E <= 8; "
                         f"got T={T}, experts in [{int(experts.min())}, {int(experts.max())}].")
    order = experts.reshape(-1).argsort(stable=True)
    sorted_experts = experts.reshape(-1)[order]
    counts = torch.bincount(experts.reshape(-1), minlength=E)
    n = T * k
    gaps = int((counts > 0).sum()) - 1  # a small gap between expert groups
    height = (n + 0.4 * gaps) * _ROW_H + 0.75
    fig = plt.figure(figsize=(3.35, height), facecolor=style.PAPER)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, 3.35)
    ax.set_ylim(height, 0)
    ax.axis("off")
    top = 0.55
    x_tok, x_row, x_grp = 0.55, 2.1, 2.85
    ax.text(x_tok, 0.25, "x[t]", ha="center", fontsize=style.FS_TITLE, family=style.FONT, color=style.INK)
    ax.text(x_row, 0.25, "x_sorted", ha="center", fontsize=style.FS_TITLE, family=style.FONT, color=style.INK)
    # sorted rows, grouped by expert
    row_y, y, prev = [], top, None
    for i in range(n):
        e = int(sorted_experts[i])
        if prev is not None and e != prev:
            y += 0.4 * _ROW_H
        row_y.append(y + _ROW_H / 2)
        prev = e
        y += _ROW_H
    # tokens spread over the same height
    span = row_y[-1] - row_y[0]
    tok_y = [row_y[0] + span * (t + 0.5) / T if T > 1 else row_y[0] + span / 2 for t in range(T)]
    for i in range(n):
        t, e = int(order[i]) // k, int(sorted_experts[i])
        colour = style.CATEGORICAL[e % len(style.CATEGORICAL)]
        ax.plot([x_tok + _BOX_W / 2, x_row - _BOX_W / 2], [tok_y[t], row_y[i]], color=colour, lw=1.3,
                solid_capstyle="round")
        _box(ax, x_row, row_y[i], f"x[{t}]", style.PALETTE[e % len(style.PALETTE)])
    for t in range(T):
        _box(ax, x_tok, tok_y[t], f"x[{t}]", style.PAPER)
    for e in range(E):
        rows = [row_y[i] for i in range(n) if int(sorted_experts[i]) == e]
        if not rows:
            continue
        y0, y1 = rows[0] - 0.11, rows[-1] + 0.11
        colour = style.CATEGORICAL[e % len(style.CATEGORICAL)]
        ax.plot([x_grp - 0.1, x_grp - 0.05, x_grp - 0.05, x_grp - 0.1], [y0, y0, y1, y1], color=colour, lw=1.5)
        ax.text(x_grp, (y0 + y1) / 2, f"e{e}\n n={len(rows)}", va="center", ha="left",
                fontsize=style.FS_LABEL, family=style.FONT, color=style.INK, linespacing=1.1)
    return fig
