"""The pictures of Chapter 7: beam search's flat top-k and cache reorder, the top-p cut, and
Mixture-of-Experts routing (tokens to expert groups and back) and capacity.

:func:`draw_beam_step`, :func:`draw_top_p`, :func:`draw_routing`, :func:`draw_capacity`. Labels,
titles and keys are code identifiers and numbers only (the names of the chapter's code: ``probs``,
``order[b]``, ``cache[1]``, ``kept.sum(1)``), so one figure serves both editions and shows no
English in the Chinese one; the caption, in the page's language, lives in the cell metadata.
The figure is narrow (two columns of boxes, about 3.7 inches wide), so it fits a 390 px phone.
End a figure cell with ``;``.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Patch

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.grid import cell_array, panel, render, text_panel

__all__ = ["draw_beam_step", "draw_top_p", "draw_routing", "draw_capacity"]

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
        ax.text(x_grp, (y0 + y1) / 2, f"e{e}\nn={len(rows)}", va="center", ha="left",
                fontsize=style.FS_LABEL, family=style.FONT, color=style.INK, linespacing=1.1)
    return fig


@style.styled
def draw_beam_step(scores: torch.Tensor, num_beams: int) -> Figure:
    """One step of beam search for one row: the flat top-k over ``scores`` and the cache reorder.

    Introduced in Chapter 7. ``scores`` ``(K, V)`` (or ``(1, K, V)``), each old beam's total
    log-probability extended by each token, ``K = num_beams``. Top: the grid, each row in its
    beam's colour, the ``K`` best cells of the whole grid outlined. Bottom: the cache rows, new
    row ``i`` a copy of old row ``beam[i]`` (``index_select(0, beam)``), beside the token it
    appends. Labels are code (``cache[1]``, ``token``), the same in every edition.
    """
    scores = args.tensor("scores", scores, kind="float").detach().cpu()
    scores = scores[0] if scores.dim() == 3 and scores.shape[0] == 1 else scores
    if scores.dim() != 2 or scores.shape[0] != num_beams or not 1 <= num_beams <= 4 or scores.shape[1] > 8:
        raise ValueError(f"draw_beam_step: scores must be (K, V) with K = num_beams <= 4 and V <= 8; "
                         f"got {tuple(scores.shape)}, num_beams = {num_beams!r}.")
    K, V = scores.shape
    best = scores.reshape(-1).topk(K).indices  # (K,): flat positions, best first
    beam, token = best // V, best % V
    faces = cell_array([style.PALETTE[b % len(style.PALETTE)] for b in range(K) for _ in range(V)], (K, V))
    mark = torch.zeros(K * V, dtype=torch.bool)
    mark[best] = True
    # the axes named as the code names them (rows: beam, columns: token), and the outlined
    # cells' flat positions f = beam * V + token, as reshape(-1).topk gives them
    grid = panel("scores", scores, f"scores[beam, token] {tuple(scores.shape)}\n"
                 f"reshape(-1).topk({K}): f = {best.tolist()}", faces=faces,
                 mark=mark.view(K, V), mark_color=style.MARK)
    old = text_panel("old", [[f"cache[{b}]"] for b in range(K)],
                     [[style.PALETTE[b % len(style.PALETTE)]] for b in range(K)], "cache",
                     row_names=tuple(map(str, range(K))), col_numbers=False)
    new = text_panel("new", [[f"cache[{int(b)}]", str(int(t))] for b, t in zip(beam, token)],
                     [[style.PALETTE[int(b) % len(style.PALETTE)], style.PAPER] for b in beam],
                     f"cache[{beam.tolist()}], token", row_names=tuple(map(str, range(K))), col_numbers=False)
    return render([[grid], [old, new]], None)


_TOP, _BEFORE_Y = 1.32, 1.18  # the top-p chart's y range, and the height of its `before` row


@style.styled
def draw_top_p(logits: torch.Tensor, p: float) -> Figure:
    """Each row's probabilities sorted, most likely first, and where top-p cuts them.

    Introduced in Chapter 7. ``logits`` ``(B, V)``, B <= 3, V <= 10. One bar chart per row
    ``b``, stacked, labelled with the names of the chapter's top-p code: the bars are ``probs``
    (sorted), each under its token id (``order[b]``), and a row named ``before`` above them gives
    the mass ranked above each bar; the key names the kept bars (``before < p``, coloured) and
    the removed ones (``before >= p``, pale), and a dashed line labelled ``p = ...`` marks the cut.
    """
    logits = args.tensor("logits", logits, kind="float").detach().cpu()
    if logits.dim() != 2 or not 1 <= logits.shape[0] <= 3 or logits.shape[1] > 10:
        raise ValueError(f"draw_top_p: logits must be (B, V) with B <= 3 and V <= 10; got {tuple(logits.shape)}.")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"draw_top_p: p must lie in [0, 1]; got {p!r}.")
    B, V = logits.shape
    sorted_logits, order = logits.sort(dim=-1, descending=True, stable=True)
    probs = sorted_logits.softmax(-1)
    before = probs.cumsum(-1) - probs
    keep = before < p
    keep[:, 0] = True
    key_h = 0.32  # inches: the key above the charts
    fig, axes = plt.subplots(B, 1, figsize=(style.CHART_WIDTH, 1.55 * B + 0.2 + key_h), squeeze=False)
    for b, ax in enumerate(axes[:, 0]):
        x = np.arange(V)
        faces = [style.BAR if k else style.FAINT_FACE for k in keep[b].tolist()]
        ax.bar(x, probs[b].numpy(), color=faces, edgecolor=style.EDGE, linewidth=0.6, width=0.75)
        # the numbers are `before`, not the bars' heights: a row of their own above the bars,
        # named at its left (a "0.00" over the tallest bar read as its value: issue 37)
        for i in range(V):
            ax.text(i, _BEFORE_Y, f"{before[b, i].item():.2f}", ha="center", va="center",
                    fontsize=style.FS_TAG, color=style.INK if keep[b, i] else style.MUTED)
        ax.text(-0.7, _BEFORE_Y, "before", ha="right", va="center", fontsize=style.FS_TAG, color=style.MUTED)
        n = int(keep[b].sum())
        if n < V:
            ax.axvline(n - 0.5, ymax=1.0 / _TOP, color=style.MARK, linestyle="--", linewidth=1)
            right = n - 0.5 < V / 2  # the label on the side with more room
            ax.text(n - 0.5 + (0.1 if right else -0.1), 0.62, f"p = {p:g}", ha="left" if right else "right",
                    va="center", fontsize=style.FS_TAG, color=style.MARK)
        ax.set_xticks(x, [str(i) for i in order[b].tolist()], fontsize=style.FS_LABEL)
        ax.set_ylim(0, _TOP)
        ax.set_yticks([0, 0.5, 1])
        ax.set_xlim(-0.6, V - 0.4)
        ax.set_ylabel(f"probs[{b}]")
        ax.set_title(f"b = {b}", loc="left", fontsize=style.FS_TITLE)
        ax.spines[["top", "right"]].set_visible(False)
        ax.spines["left"].set_bounds(0, 1)  # the probs axis ends at 1: the `before` row sits above it
    axes[-1, 0].set_xlabel("order[b]")
    key = [Patch(facecolor=style.BAR, edgecolor=style.EDGE, linewidth=0.6, label=f"before < {p:g}"),
           Patch(facecolor=style.FAINT_FACE, edgecolor=style.EDGE, linewidth=0.6, label=f"before >= {p:g}")]
    fig.legend(handles=key, loc="upper center", ncol=2, handlelength=1.4, columnspacing=1.6,
               bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(h_pad=0.6, rect=(0, 0, 1, 1 - key_h / fig.get_figheight()))
    return fig


@style.styled
def draw_capacity(experts: torch.Tensor, slots: torch.Tensor, capacity: int) -> Figure:
    """Each (token, slot) pair's expert and place in that expert's queue, the dropped pairs marked.

    Introduced in Chapter 7. ``experts`` ``(T, k)`` int64, at most 8 tokens and expert ids below 8;
    ``slots`` ``(T, k)`` each pair's place in its expert's queue (``gb.capacity_slots``: the
    picture draws the tensors the notebook computed). The cell of pair ``(t, j)`` reads
    ``e{expert}:{slot}`` (``experts:slots``) in its expert's colour; a slot ``>= capacity`` is
    dropped (a white cell outlined in red); the column ``kept.sum(1)`` counts each token's pairs
    that remain (``kept = slots < capacity``). A token whose every pair is dropped keeps only the
    residual ``x[t]``.
    """
    experts = args.tensor("experts", experts, kind="int").detach().cpu()
    slots = args.tensor("slots", slots, kind="int").detach().cpu()
    if experts.dim() != 2 or not 1 <= experts.shape[0] <= 8 or int(experts.min()) < 0 \
            or int(experts.max()) >= 8 or slots.shape != experts.shape:
        raise ValueError(f"draw_capacity: experts must be (T, k) with T <= 8 and expert ids in [0, 8), and "
                         f"slots of the same shape; got experts {tuple(experts.shape)} with ids up to "
                         f"{int(experts.max()) if experts.numel() else None}, slots {tuple(slots.shape)}.")
    args.integer("capacity", capacity, least=0)
    dropped = slots >= capacity
    texts = [[f"e{int(e)}:{int(s)}" for e, s in zip(er, sr)] for er, sr in zip(experts, slots)]
    faces = [[style.FAINT_FACE if d else style.PALETTE[int(e) % len(style.PALETTE)] for e, d in zip(er, dr)]
             for er, dr in zip(experts, dropped)]
    T = experts.shape[0]
    pairs = text_panel("slots", texts, faces, f"experts:slots\ncapacity = {capacity}",
                       row_names=tuple(f"x[{t}]" for t in range(T)), mark=dropped.numpy())
    kept = (~dropped).sum(1)
    left = text_panel("kept", [[str(int(n))] for n in kept],
                      [[style.FAINT_FACE if n == 0 else style.PAPER] for n in kept], "kept.sum(1)",
                      col_numbers=False, mark=(kept == 0).numpy()[:, None])
    return render([[pairs, left]], None, gap=0.3)
