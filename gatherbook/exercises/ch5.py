"""Chapter 5 exercises, easy to hard: duplicate indices where they show a mistake, a batch of
one, sizes that differ."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from gatherbook.exercises.declaration import Mistake, Wrong, exercise
from gatherbook.exercises.cases import (I64, between, coded, distinct, expanded, f,
                                        floats, from_sizes, ints, perms, t)


# 1. one-hot targets
@exercise(
    edge_cases=[
        (f([[0.5, -1.0, 2.0, 0.0, 1.5]] * 4), t([2, 0, 3, 3])),   # max label < C - 1
        (f([[1.0, 2.0, 3.0]]), t([1])),                            # N == 1
        (f([[0.0, 1.0]] * 5), t([1, 0, 1, 1, 0])),                # N > C
        (torch.full((3, 1), 4.0, dtype=torch.float64), t([0, 0, 0])),  # C == 1, float64
        (f([[-float("inf"), 0.5, float("inf")], [1.0, -float("inf"), 2.0]]), t([2, 1])),   # masked logits: -inf and inf entries
    ],
    random_case=from_sizes((1, 7), inputs=lambda g, N, C: (
        floats(g, N, C), ints(g, C, N))),
    seed=501,
    right=[
        lambda logits, y: F.one_hot(y, logits.shape[1]).to(logits.dtype),
        lambda logits, y: (y[:, None] == torch.arange(logits.shape[1], device=y.device)).to(logits.dtype),
        lambda logits, y: torch.eye(logits.shape[1], dtype=logits.dtype, device=logits.device)[y],
    ],
    mistakes=[
        Mistake("wrong_dim", lambda logits, y: torch.zeros_like(logits).scatter_(0, y[:, None], 1.0)),
        Mistake("int_dtype", lambda logits, y: F.one_hot(y, logits.shape[1])),
        Mistake("classes_from_labels", lambda logits, y: F.one_hot(y).to(logits.dtype)),
        Mistake("into_logits", lambda logits, y: logits.clone().scatter_(1, y[:, None], 1.0)),
        Mistake("unsqueeze_wrong_axis", lambda logits, y: torch.zeros_like(logits).scatter_(1, y.unsqueeze(0), 1.0)),
        Mistake("zeros_default_dtype", lambda logits, y: torch.zeros(logits.shape).scatter_(1, y[:, None], 1.0)),
    ],
    wrong=[
        Wrong(lambda logits, y: (logits * 0).scatter(1, y[:, None], 1.0), why="logits * 0 is nan at -inf and inf"),
        Wrong(lambda logits, y: (logits - logits).scatter(1, y[:, None], 1.0), why="inf - inf is nan"),
    ],
)
def one_hot(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``out[i][labels[i]] = 1``, else 0. logits: (N, C); labels: (N,) int64 in [0, C).
    Returns (N, C) with logits' dtype."""
    return torch.zeros_like(logits).scatter_(1, labels.unsqueeze(1), 1.0)


# 2. a histogram per row
def _edges(bins: int) -> torch.Tensor:
    return torch.linspace(0, 1, bins + 1)


def _counts(x, edges):  # zeros of the answer's shape and dtype, (B, bins) int64
    return torch.zeros(x.shape[0], edges.numel() - 1, dtype=I64, device=x.device)


def _bins(x, edges):
    return (x * (edges.numel() - 1)).long()


@exercise(
    edge_cases=[
        (f([[0.1, 0.7, 0.75, 0.0, 0.3], [0.9, 0.9, 0.9, 0.2, 0.6]]), _edges(4)),  # repeats
        (f([[0.5, 0.05, 0.55]]), _edges(1)),                                     # B == 1, one bin
        (f([[0.2], [0.3], [0.1]]), _edges(5)),                                   # top bins empty
        (f([[0.25, 0.5, 0.99, 0.0]]), _edges(2)),
    ],
    random_case=from_sizes((1, 8), (1, 6), inputs=lambda g, B, N, bins: (
        ints(g, 1000, B, N).float() / 1000, _edges(bins))),
    seed=502,
    right=[
        lambda x, e: torch.stack([torch.bincount((r * (e.numel() - 1)).long(), minlength=e.numel() - 1) for r in x]),
        lambda x, e: F.one_hot((x * (e.numel() - 1)).long(), e.numel() - 1).sum(1),
        lambda x, e: x.new_zeros(x.shape[0], e.numel() - 1, dtype=torch.long).scatter_reduce(1, (x * (e.numel() - 1)).long(), torch.ones_like(x, dtype=torch.long), "sum"),
    ],
    mistakes=[
        Mistake("scatter_not_add", lambda x, e: _counts(x, e).scatter_(1, _bins(x, e), 1)),
        Mistake("float_index", lambda x, e: _counts(x, e).scatter_add_(1, (x * (e.numel() - 1)).floor(), torch.ones_like(x, dtype=I64))),
        Mistake("float_counts", lambda x, e: torch.zeros(x.shape[0], e.numel() - 1, device=x.device).scatter_add_(1, _bins(x, e), torch.ones_like(x))),
        Mistake("one_histogram", lambda x, e: torch.bincount(_bins(x, e).flatten(), minlength=e.numel() - 1)),
        Mistake("no_minlength", lambda x, e: torch.stack([torch.bincount(r) for r in _bins(x, e)])),
        Mistake("bins_off_by_one", lambda x, e: torch.zeros(x.shape[0], e.numel(), dtype=I64, device=x.device).scatter_add_(
            1, _bins(x, e), torch.ones_like(x, dtype=I64))),
        Mistake("bucketize_index", lambda x, e: _counts(x, e).scatter_add_(1, torch.bucketize(x, e), torch.ones_like(x, dtype=I64))),
    ],
)
def histogram(x: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    """``out[b][k]``: how many values of row b fall in bin k = ``floor(v * bins)``. x: (B, N) in
    [0, 1); edges: ``torch.linspace(0, 1, bins + 1)``. Returns (B, bins) int64."""
    b = _bins(x, edges)
    return _counts(x, edges).scatter_add_(1, b, torch.ones_like(b))


# 3. un-pruning: put processed patches back
def _unprune_random(g: torch.Generator):
    (B, N), D = distinct(g, 1, 6), between(g, 1, 4)
    K = between(g, 1, N)
    return floats(g, B, N, D), floats(g, B, K, D), perms(g, B, N)[:, :K]


@exercise(
    edge_cases=[
        (coded(2, 5, 3), -1 - coded(2, 2, 3), t([[3, 0], [1, 4]])),
        (coded(1, 4, 2), -1 - coded(1, 1, 2), t([[2]])),           # B == 1, K == 1
        (coded(3, 2, 1), -1 - coded(3, 2, 1), t([[1, 0], [0, 1], [1, 0]])),  # K == N, D == 1
        (coded(2, 3, 2).float(), -1 - coded(2, 2, 2).float(), t([[2, 1], [0, 2]])),
    ],
    random_case=_unprune_random, seed=505,
    right=[
        lambda p, k, keep: p.clone().scatter_(1, expanded(keep, p), k),
        lambda p, k, keep: p.index_put((torch.arange(p.shape[0])[:, None], keep), k),
        lambda p, k, keep: torch.stack([p[b].index_copy(0, keep[b], k[b]) for b in range(p.shape[0])]),
    ],
    wrong=[
        Wrong(lambda p, k, keep: p.scatter_(1, expanded(keep, p), k), "generic.mutated_input",
              "mutated_input", why="scatter_ writes into the caller's patches"),
    ],
    mistakes=[
        Mistake("no_expand", lambda p, k, keep: p.scatter(1, keep.unsqueeze(-1), k)),
        Mistake("zeros_canvas", lambda p, k, i: torch.zeros_like(p).scatter(1, expanded(i, p), k)),
        Mistake("wrong_dim", lambda p, k, keep: p.scatter(2, expanded(keep, p), k)),
        Mistake("scatter_add", lambda p, k, keep: p.scatter_add(1, expanded(keep, p), k)),
        Mistake("gather_not_scatter", lambda p, k, keep: p.gather(1, expanded(keep, p))),
    ],
)
def unprune(patches: torch.Tensor, kept: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Row ``keep[b][k]`` of item b of ``patches`` (B, N, D) replaced by ``kept[b][k]`` (B, K, D);
    keep: (B, K) int64, distinct in each row. Returns a new (B, N, D); patches is not modified."""
    return patches.scatter(1, expanded(keep, patches), kept)


# 4. the inverse of a gather: undo MAE's shuffle
@exercise(
    edge_cases=[
        (coded(2, 4, 3), t([[2, 0, 3, 1], [1, 3, 0, 2]])),   # not its own inverse
        (coded(1, 3, 2), t([[1, 2, 0]])),                    # B == 1, a 3-cycle
        (coded(3, 2, 1), t([[1, 0], [0, 1], [1, 0]])),       # D == 1
        (coded(2, 5, 2).float(), t([[4, 2, 0, 1, 3], [0, 1, 2, 3, 4]])),
    ],
    random_case=from_sizes((1, 6), (1, 4), inputs=lambda g, B, N, D: (
        floats(g, B, N, D), perms(g, B, N))),
    seed=504,
    right=[
        lambda s, ids: s.gather(1, expanded(ids.argsort(1), s)),
        lambda s, ids: torch.take_along_dim(s, ids.argsort(1)[..., None], dim=1),
        lambda s, ids: torch.zeros_like(s).index_put_((torch.arange(s.shape[0])[:, None], ids), s),
    ],
    wrong=[
        Wrong(lambda s, ids: torch.zeros_like(s).scatter(1, expanded(ids.argsort(1), s), s),
              "shuffle_again", why="scatter with the inverse is gather with the shuffle"),
    ],
    mistakes=[
        Mistake("shuffle_again", lambda s, ids: s.gather(1, expanded(ids, s))),
        Mistake("no_expand", lambda s, ids: torch.zeros_like(s).scatter(1, ids.unsqueeze(-1), s)),
        Mistake("wrong_dim", lambda s, ids: torch.zeros_like(s).scatter(0, expanded(ids, s), s)),
    ],
)
def unshuffle(shuffled: torch.Tensor, ids_shuffle: torch.Tensor) -> torch.Tensor:
    """Undo ``shuffled = x.gather(1, ids_shuffle[..., None].expand(-1, -1, D))``: (B, N, D), with
    ids_shuffle (B, N) int64, each row a permutation of 0..N-1. Returns x."""
    idx = expanded(ids_shuffle, shuffled)
    return torch.zeros_like(shuffled).scatter(1, idx, shuffled)


# 5. the gradient of a gather, by hand
def _autograd_bwd(x, index, grad_out):
    leaf = x.detach().requires_grad_()  # a leaf of its own: the caller's x is left alone
    return torch.autograd.grad((leaf.gather(1, index) * grad_out).sum(), leaf)[0]


@exercise(
    edge_cases=[
        (f([[0.0] * 4] * 2), t([[1, 1, 3], [0, 2, 0]]), f([[1.0, 2.0, 4.0], [0.5, 1.5, 2.5]])),
        (f([[0.0, 0.0, 0.0]]), t([[2]]), f([[3.0]])),                    # B == 1, K == 1
        (f([[0.0, 0.0]] * 3), t([[1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0]]),
         f([[1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0], [-1.0, 2.0, -3.0, 4.0]])),  # K > N
        (torch.tensor([[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]], dtype=torch.float64),
         t([[2, 0], [1, 2]]),
         torch.tensor([[0.25, -0.5], [2.0, 1.0]], dtype=torch.float64)),   # no repeats, x != 0
        (f([[-float("inf"), 1.0, float("inf")], [0.5, float("inf"), -float("inf")]]), t([[1, 1], [0, 2]]), f([[1.0, 2.0], [3.0, 4.0]])),  # inf in x
    ],
    random_case=from_sizes((1, 6), (1, 8), inputs=lambda g, B, N, K: (
        floats(g, B, N), ints(g, N, B, K), floats(g, B, K))),
    seed=506,
    right=[
        _autograd_bwd,
        lambda x, i, go: torch.einsum("bk,bkn->bn", go, F.one_hot(i, x.shape[1]).to(go.dtype)),
        lambda x, i, go: torch.zeros_like(x).index_put_((torch.arange(x.shape[0])[:, None].expand_as(i), i), go, accumulate=True),
    ],
    mistakes=[
        Mistake("scatter_not_add", lambda x, i, go: torch.zeros_like(x).scatter(1, i, go)),
        Mistake("wrong_dim", lambda x, i, go: torch.zeros_like(x).scatter_add_(0, i, go)),
        Mistake("gather_back", lambda x, i, go: go.gather(1, i)),
        Mistake("added_to_x", lambda x, i, go: x.clone().scatter_add_(1, i, go)),
        Mistake("zeros_default_dtype", lambda x, i, go: torch.zeros(x.shape).scatter_add_(1, i, go)),
    ],
    wrong=[
        Wrong(lambda x, i, go: (x * 0).scatter_add(1, i, go), why="x * 0 is nan at inf"),
        Wrong(lambda x, i, go: (x - x).scatter_add(1, i, go), why="inf - inf is nan"),
        Wrong(lambda x, i, go: (lambda leaf: (leaf.gather(1, i) * go).sum().backward() or leaf.grad)(
            x.requires_grad_()), hint="generic.second_call", kind="second_call",
            why="autograd on the caller's x: its .grad accumulates from call to call"),
    ],
)
def gather_bwd(x: torch.Tensor, index: torch.Tensor, grad_out: torch.Tensor) -> torch.Tensor:
    """The gradient of ``(x.gather(1, index) * grad_out).sum()`` with respect to ``x`` (B, N); index:
    (B, K) int64 in [0, N), repeats allowed; grad_out: (B, K). Returns (B, N)."""
    return torch.zeros_like(x).scatter_add_(1, index, grad_out)


# 6. k-means update: a segment mean
@exercise(
    edge_cases=[
        (f([[1.0, 2.0], [3.0, 4.0], [5.0, 0.0], [7.0, 8.0], [9.0, 1.0]]), t([0, 2, 0, 2, 2]),
         f([[0.5, 0.5], [9.0, 9.0], [4.0, 4.0]])),                         # centroid 1 empty
        (f([[2.0, -1.0, 4.0]]), t([1]), f([[1.0, 1.0, 1.0], [3.0, 3.0, 3.0]])),  # N == 1
        (f([[1.0], [2.0], [6.0]]), t([0, 0, 0]), f([[3.0]])),             # D == 1, G == 1
        (f([[2.0, 2.0], [4.0, 0.0]]), t([1, 1]), f([[1.0, 1.0], [0.0, 0.0], [5.0, 5.0]])),
        (f([[1.0, -2.0], [-1.0, 2.0], [3.0, 3.0]]), t([0, 0, 1]),
         f([[4.0, 4.0], [1.0, 1.0]])),                                    # cluster 0's points average to 0
    ],
    random_case=from_sizes((1, 8), (1, 5), inputs=lambda g, N, D, G: (
        floats(g, N, D), ints(g, G, N), floats(g, G, D))),
    seed=503,
    right=[
        lambda x, a, c: torch.where((torch.bincount(a, minlength=c.shape[0]) > 0)[:, None], torch.zeros_like(c).index_add_(0, a, x) / torch.bincount(a, minlength=c.shape[0]).clamp(min=1)[:, None].to(x.dtype), c),
        lambda x, a, c: torch.stack([x[a == g].mean(0) if (a == g).any() else c[g] for g in range(c.shape[0])]),
        lambda x, a, c: c.index_reduce(0, a, x, "mean", include_self=False),
    ],
    mistakes=[
        Mistake("include_self", lambda x, a, c: c.scatter_reduce(0, expanded(a, x), x, "mean")),
        Mistake("empty_to_zero", lambda x, a, c: torch.zeros_like(c).scatter_reduce(0, expanded(a, x), x, "mean", include_self=False)),
        Mistake("sum_not_mean", lambda x, a, c: torch.zeros_like(c).index_add_(0, a, x)),
        Mistake("empty_is_nan", lambda x, a, c: torch.zeros_like(c).index_add_(0, a, x)
                / torch.bincount(a, minlength=c.shape[0])[:, None]),
        Mistake("no_expand", lambda x, a, c: c.scatter_reduce(0, a[:, None], x, "mean", include_self=False)),
        Mistake("no_expand_sum", lambda x, a, c: (lambda n: torch.where(n > 0, torch.zeros_like(c).scatter_add(
            0, a[:, None], x) / n.clamp(min=1), c))(torch.bincount(a, minlength=c.shape[0])[:, None])),
    ],
    wrong=[
        Wrong(lambda x, a, c: (lambda m: torch.where((m == 0).all(1, keepdim=True), c, m))(
            torch.zeros_like(c).scatter_reduce(0, expanded(a, x), x, "mean", include_self=False)),
            why="a mean of exactly 0 taken for an empty cluster"),
    ],
)
def recenter(x: torch.Tensor, assign: torch.Tensor, centroids: torch.Tensor) -> torch.Tensor:
    """Each centroid becomes the mean of its points; one without points is kept. x: (N, D);
    assign: (N,) int64 in [0, G); centroids: (G, D), not modified. Returns (G, D)."""
    idx = assign.unsqueeze(1).expand(-1, x.shape[1])
    return centroids.scatter_reduce(0, idx, x, "mean", include_self=False)


# 7. find the bug: the largest value per segment
@exercise(
    bug="include_self",
    edge_cases=[
        (f([[-1.5, 2.0], [-0.5, -3.0], [4.0, 1.0]]), t([1, 1, 0]), 3),  # segment 1 < 0 in column 0; 2 empty
        (f([[-2.0, -1.0, -4.0]]), t([0]), 1),                            # N == 1, all negative
        (f([[3.0], [-1.0], [-2.0], [5.0]]), t([2, 0, 0, 2]), 3),        # D == 1, N > n
    ],
    random_case=from_sizes((1, 7), (1, 5), inputs=lambda g, N, D, n: (
        floats(g, N, D), ints(g, n, N), n)),
    seed=507,
    right=[
        lambda x, s, n: torch.stack([x[s == k].amax(0) if (s == k).any() else x.new_zeros(x.shape[1]) for k in range(n)]),
        lambda x, s, n: x.new_zeros(n, x.shape[1]).index_reduce_(0, s, x, "amax", include_self=False),
        lambda x, s, n: x.new_full((n, x.shape[1]), -torch.inf).scatter_reduce(0, expanded(s, x), x, "amax").nan_to_num(neginf=0.0),
    ],
    mistakes=[
        Mistake("include_self", lambda x, s, n: x.new_zeros(n, x.shape[1]).scatter_reduce(0, expanded(s, x), x, "amax")),
        Mistake("empty_is_inf", lambda x, s, n: x.new_full((n, x.shape[1]), -torch.inf).scatter_reduce(0, expanded(s, x), x, "amax")),
        Mistake("scatter_not_reduce", lambda x, s, n: x.new_zeros(n, x.shape[1]).scatter(0, expanded(s, x), x)),
        Mistake("no_expand", lambda x, s, n: x.new_zeros(n, x.shape[1]).scatter_reduce(0, s[:, None], x, "amax", include_self=False)),
    ],
)
def segment_max(x: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    """``out[s][d]``: the largest ``x[i][d]`` (x: (N, D)) over the rows with ``seg[i] == s``, 0.0 for
    a segment without rows; seg: (N,) int64 in [0, n). Returns (n, D). The stub omits include_self."""
    return x.new_zeros(n, x.shape[1]).scatter_reduce(0, expanded(seg, x), x, "amax", include_self=False)
