"""Pictures for the chapter on action values and policies (reinforcement learning), cells of
the kit's one renderer; training curves are :func:`gatherbook.figures.charts.draw_curves`."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from matplotlib.figure import Figure

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.grid import cell_array, panel, render, text_panel

__all__ = ["draw_q_picks", "draw_grid_policy", "ARROWS"]

#: FrozenLake / CliffWalking action numbers -> the arrowhead of their direction
ARROWS = "◀▼▶▲"
#: the cells of a grid world that end an episode: letter -> face
_ENDS = {"H": style.HOLE, "G": style.PAPER}


@style.styled
def draw_q_picks(panels: Mapping[str, tuple[torch.Tensor, torch.Tensor]], *,
                 title: str | None = None) -> Figure:
    """Q-tables stacked, one picked cell per row outlined and repeated in a column ``out`` on
    the right, as ``q.gather(1, picks.unsqueeze(1))`` reads it. ``panels``: at most 4 labels
    (e.g. ``"q_next_target"``) -> ``(q, picks)``, ``q`` float ``(B, A)`` at most 8 x 8 and
    ``picks`` ``(B,)`` integers in ``[0, A)``.

    Introduced in Chapter 3.
    """
    assert len(style.mapping("panels", panels)) <= 4, "panels: at most 4"
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
        out = q.gather(1, picks.unsqueeze(1))
        picked = torch.nn.functional.one_hot(picks, q.shape[1]).bool()
        rows.append([panel("q", q, label, faces=faces, mark=picked, mark_color=style.PICK, cell_h=cell_h),
                     panel("out", out, "out", mark=torch.ones_like(out, dtype=torch.bool),
                           mark_color=style.PICK, numbers=False, cell_h=cell_h)])
    return render(rows, title)


@style.styled
def draw_grid_policy(desc: Sequence[Sequence[str]] | np.ndarray, q: torch.Tensor, *,
                     path: Sequence[int] | None = None, title: str | None = None) -> Figure:
    """A grid world: each cell coloured by ``max_a q[s, a]``, with its greedy action as an arrowhead.

    ``desc``: rows of one-letter codes, at most 8 x 5 (gymnasium's ``env.unwrapped.desc``;
    holes ``H`` and goals ``G`` get no arrow). ``q``: ``(n_rows * n_cols, 4)`` float, state
    ``s`` at row ``s // n_cols``; actions left, down, right, up (FrozenLake's numbering).
    ``path``: states to outline (e.g. the greedy path from the start).

    Introduced in Chapter 3.
    """
    rows = [[c.decode() if isinstance(c, bytes) else str(c) for c in row] for row in desc]
    n_rows, n_cols = len(rows), len(rows[0]) if rows else 0
    assert 1 <= n_rows <= 8 and 1 <= n_cols <= 5 and all(len(r) == n_cols for r in rows) \
        and all(len(c) == 1 for r in rows for c in r), "desc: a rectangle of one-letter codes, at most 8 x 5"
    qn = args.tensor("q", q, ndim=2, kind="float").detach().cpu().double().numpy()
    assert qn.shape == (n_rows * n_cols, 4), f"q: shape ({n_rows * n_cols}, 4), one row per cell of desc"
    path = [] if path is None else list(path)
    for k, s in enumerate(path):
        assert 0 <= args.integer(f"path[{k}]", s) < n_rows * n_cols, f"path: states in [0, {n_rows * n_cols})"
    codes = [c for r in rows for c in r]
    v, greedy = qn.max(1), qn.argmax(1)
    live = np.array([c not in _ENDS for c in codes])
    shade = style.shades(*((v[live].min(), v[live].max()) if live.any() else (0.0, 1.0)))
    texts = [c if c in _ENDS else f"{'S' if c == 'S' else ''}{ARROWS[greedy[s]]} {v[s]:.2f}"
             for s, c in enumerate(codes)]
    faces = [_ENDS.get(c) or shade(v[s]) for s, c in enumerate(codes)]
    shape = (n_rows, n_cols)  # the map's cells, state s at row s // n_cols
    policy = text_panel("policy", cell_array(texts, shape), cell_array(faces, shape),
                        "q.argmax(1), q.max(1)", row_names=tuple(map(str, range(n_rows))),
                        mark=np.isin(np.arange(len(codes)), path).reshape(shape), mark_color=style.PICK)
    return render([[policy]], title)
