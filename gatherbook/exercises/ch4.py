"""Chapter 4 exercises, easy to hard. Patches ``x[b][n][d]`` hold ``100*b + 10*n + d`` in the
hand-written cases (a value says where it came from); scores within a row all differ (the top-k
and every order are unique); B != N. Each selection is trained through: an answer cut out of the
graph (``.detach()``, ``.data``) is wrong."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from gatherbook.exercises.declaration import Mistake, Wrong, exercise
from gatherbook.exercises.cases import (F32, between, coded, distinct, distinct_rows,
                                        expanded, f, floats, from_sizes, probs, rng,
                                        row_ids, t)


def _cut_graph(name):
    """The values of the reference called ``name`` (defined below: looked up when called), with
    no gradient back into ``x``: two ways to leave the graph."""
    return [Wrong(lambda x, *r: globals()[name](x.detach(), *r), "generic.no_grad", "no_grad"),
            Wrong(lambda x, *r: globals()[name](x.data, *r), "generic.no_grad", "no_grad")]


def _top(scores: torch.Tensor, k: int) -> torch.Tensor:
    return scores.topk(k, dim=1).indices  # (B, k), highest score first


_patches_and_scores = from_sizes((1, 7), inputs=lambda g, B, N: (
    floats(g, B, N, between(g, 1, 5)), distinct_rows(g, B, N), between(g, 1, N)))


_TOPK_EDGES = [
    (coded(2, 5, 3, dtype=F32), f([[0.3, 0.9, -0.2, 0.5, 0.1], [0.7, -0.4, 0.2, 0.0, 0.8]]), 3),
    (coded(1, 4, 2, dtype=F32), f([[0.1, 0.4, 0.3, 0.2]]), 2),                             # B == 1
    (coded(3, 4, 2, dtype=F32), f([[0.5, 0.1, 0.2, 0.9], [0.0, 0.6, 0.3, 0.1], [0.2, 0.8, 0.4, 0.7]]),
     1),                                                                           # k == 1
    (coded(2, 3, 1, dtype=F32), f([[0.2, 0.1, 0.3], [0.1, 0.3, 0.2]]), 3),                 # D == 1, k == N
]


# 1. the top-k patches, in score order
@exercise(
    edge_cases=_TOPK_EDGES,
    random_case=_patches_and_scores, seed=401, grad="same", grad_args=("x",),
    wrong=_cut_graph("top_k_patches"),
    right=[
        lambda x, s, k: x[row_ids(x), s.topk(k, dim=1).indices],
        lambda x, s, k: torch.take_along_dim(x, s.topk(k, dim=1).indices[:, :, None], dim=1),
        lambda x, s, k: F.one_hot(s.topk(k, dim=1).indices, x.shape[1]).to(x.dtype) @ x,
        lambda x, s, k: x.gather(1, expanded(s.argsort(dim=1, descending=True)[:, :k], x)),
    ],
    mistakes=[
        Mistake("forgot_expand", lambda x, s, k: x.gather(1, _top(s, k).unsqueeze(-1))),
        Mistake("gather_dim2", lambda x, s, k: x.gather(2, expanded(_top(s, k), x))),
        Mistake("smallest", lambda x, s, k: top_k_patches(x, -s, k)),
        Mistake("topk_dim0",
                lambda x, s, k: x.gather(1, expanded(s.topk(k, dim=0).indices.T, x))),
        Mistake("image_order", lambda x, s, k: top_k_in_image_order(x, s, k)),
        Mistake("index_all_images", lambda x, s, k: x[:, _top(s, k)]),
        Mistake("best_last", lambda x, s, k: x.gather(1, expanded(s.argsort(dim=1)[:, -k:], x))),
    ],
)
def top_k_patches(x: torch.Tensor, scores: torch.Tensor, k: int) -> torch.Tensor:
    """Returns ``out[b][j] = x[b][idx[b][j]]``, idx: row b's k best patches, best first; (B, k, D)."""
    return x.gather(1, expanded(_top(scores, k), x))


# 2. find the bug: the top-k patches in image order (the notebook's stub keeps score order)
@exercise(
    bug="score_order",
    edge_cases=_TOPK_EDGES,
    random_case=_patches_and_scores, seed=402, grad="same", grad_args=("x",),
    wrong=_cut_graph("top_k_in_image_order"),
    right=[
        lambda x, s, k: x[torch.zeros(s.shape, dtype=torch.bool, device=s.device).scatter(1, _top(s, k), True)].reshape(x.shape[0], k, x.shape[2]),
        lambda x, s, k: x[row_ids(x), s.topk(k, dim=1).indices.sort(dim=1).values],
        lambda x, s, k: torch.stack([x[b, s[b].topk(k).indices.sort().values] for b in range(len(x))]),
    ],
    mistakes=[
        Mistake("score_order", top_k_patches),
        Mistake("forgot_expand",
                lambda x, s, k: x.gather(1, _top(s, k).sort(dim=1).values.unsqueeze(-1))),
        Mistake("sorted_descending", lambda x, s, k: x.gather(1, expanded(
            _top(s, k).sort(dim=1, descending=True).values, x))),
        Mistake("sort_dim0", lambda x, s, k: x.gather(1, expanded(
            _top(s, k).sort(dim=0).values, x))),
        Mistake("increasing_score", lambda x, s, k: x.gather(1, expanded(s.argsort(dim=1)[:, -k:], x))),
        Mistake("argsort_not_sort", lambda x, s, k: x.gather(1, expanded(_top(s, k).argsort(dim=1), x))),
    ],
)
def top_k_in_image_order(x: torch.Tensor, scores: torch.Tensor, k: int) -> torch.Tensor:
    """Returns the same k patches as ``top_k_patches``, ordered by patch number (reading order)."""
    return x.gather(1, expanded(_top(scores, k).sort(dim=1).values, x))


# 3. MAE random masking and the restore
def _mae(x, noise, keep, restore=lambda ids_shuffle: ids_shuffle.argsort(dim=1)):
    """Keep the ``keep`` patches of smallest noise, append zeros, gather with ``restore(ids_shuffle)``
    (the mistakes pass another restore, or ``None`` for none)."""
    B, N, D = x.shape
    ids_shuffle = noise.argsort(dim=1)
    kept = x.gather(1, expanded(ids_shuffle[:, :keep], x))
    full = torch.cat([kept, x.new_zeros(B, N - keep, D)], dim=1)  # shuffled order
    return full if restore is None else full.gather(1, expanded(restore(ids_shuffle), x))


@exercise(
    edge_cases=[
        (coded(2, 5, 2, dtype=F32), f([[0.4, 0.1, 0.3, 0.0, 0.2], [0.1, 0.4, 0.0, 0.2, 0.3]]), 2),
        (coded(1, 4, 3, dtype=F32), f([[0.3, 0.1, 0.0, 0.2]]), 2),              # B == 1
        (coded(3, 4, 1, dtype=F32), f([[0.2, 0.0, 0.3, 0.1], [0.1, 0.3, 0.2, 0.0],
                                       [0.0, 0.2, 0.1, 0.3]]), 4),      # keep == N
        (coded(2, 3, 2, dtype=F32), f([[0.2, 0.0, 0.1], [0.0, 0.1, 0.2]]), 1),   # keep == 1
    ],
    random_case=_patches_and_scores, seed=403, grad="same", grad_args=("x",),
    wrong=_cut_graph("mask_and_restore"),
    right=[
        lambda x, noise, keep: x * (noise.argsort(dim=1).argsort(dim=1) < keep)[:, :, None],
        lambda x, n, keep: torch.zeros_like(x).scatter(1, expanded(n.argsort(1)[:, :keep], x), torch.take_along_dim(x, n.argsort(1)[:, :keep, None], dim=1)),
        lambda x, n, keep: x * (n <= n.kthvalue(keep, 1, keepdim=True).values)[..., None],
    ],
    mistakes=[
        Mistake("restore_with_perm", lambda *a: _mae(*a, restore=lambda ids: ids)),
        Mistake("no_restore", lambda *a: _mae(*a, restore=None)),
        Mistake("restore_argsort_dim0", lambda *a: _mae(*a, restore=lambda ids: ids.argsort(dim=0))),
        Mistake("kept_largest_noise", lambda x, noise, keep: _mae(x, -noise, keep)),
    ],
)
def mask_and_restore(x: torch.Tensor, noise: torch.Tensor, keep: int) -> torch.Tensor:
    """Returns MAE's masking then the decoder's unshuffle: kept patches in place, zeros elsewhere."""
    return _mae(x, noise, keep)


# 4. EViT: keep the class token and the tokens it attends to most
def _evit(x, attn, k, *, cls_attn=lambda a: a[:, :, 0, 1:].mean(dim=1), skip_cls=True, keep_cls=True):
    """EViT's selection; the mistakes change one step (which attention, where to gather, the cls)."""
    idx = cls_attn(attn).topk(k, dim=1).indices  # (B, k), patch tokens counted from 0
    others = (x[:, 1:] if skip_cls else x).gather(1, expanded(idx, x))
    return torch.cat([x[:, :1], others], dim=1) if keep_cls else others


def _random_evit_case(g: torch.Generator):
    B, T = distinct(g, 2, 7)  # T = 1 + N tokens, never equal to B
    D, H, k = between(g, 1, 4), between(g, 2, 3), between(g, 1, T - 1)
    return floats(g, B, T, D), probs(g, B, H, T, T), k


def _evit_case(B: int, N: int, D: int, H: int, k: int, seed: int):
    return coded(B, 1 + N, D, dtype=F32), probs(rng(seed), B, H, 1 + N, 1 + N), k


def _cls_plus_one(x, attn, k):
    idx = attn[:, :, 0, 1:].mean(dim=1).topk(k, dim=1).indices + 1
    return x.gather(1, expanded(torch.cat([idx.new_zeros(x.shape[0], 1), idx], dim=1), x))


@exercise(
    edge_cases=[
        _evit_case(2, 4, 3, 2, 2, seed=1),
        _evit_case(1, 5, 2, 3, 3, seed=2),    # B == 1
        _evit_case(3, 4, 2, 2, 1, seed=3),    # k == 1
        _evit_case(2, 3, 1, 2, 3, seed=4),    # D == 1, k == N
    ],
    random_case=_random_evit_case, seed=405, atol=1e-6, grad="same", grad_args=("x",),
    wrong=_cut_graph("keep_by_cls_attention"),
    right=[
        _cls_plus_one,
        lambda x, a, k: torch.cat([x[:, :1], x[:, 1:][row_ids(x), a[:, :, 0, 1:].sum(dim=1).topk(k, dim=1).indices]], dim=1),
        lambda x, a, k: torch.cat([x[:, :1], torch.take_along_dim(x[:, 1:], a.mean(dim=1)[:, 0, 1:].topk(k).indices[..., None], dim=1)], dim=1),
    ],
    mistakes=[
        Mistake("index_includes_cls", lambda *a: _evit(*a, skip_cls=False)),
        Mistake("attention_to_cls", lambda *a: _evit(*a, cls_attn=lambda a: a[:, :, 1:, 0].mean(dim=1))),
        Mistake("first_head_only", lambda *a: _evit(*a, cls_attn=lambda a: a[:, 0, 0, 1:])),
        Mistake("dropped_cls", lambda *a: _evit(*a, keep_cls=False)),
        Mistake("max_over_heads", lambda *a: _evit(*a, cls_attn=lambda a: a[:, :, 0, 1:].amax(dim=1))),
        Mistake("cls_among_candidates", lambda x, a, k: torch.cat([x[:, :1], x.gather(
            1, expanded(a[:, :, 0].mean(dim=1).topk(k, dim=1).indices, x))], dim=1)),
    ],
)
def keep_by_cls_attention(x: torch.Tensor, attn: torch.Tensor, k: int) -> torch.Tensor:
    """Returns the class token, then the k patch tokens it attends to most (mean over the heads),
    by decreasing attention: (B, 1 + k, D). x: (B, 1 + N, D); attn: (B, H, 1 + N, 1 + N)."""
    return _evit(x, attn, k)


# 5. EViT: fuse the dropped tokens into one
def _fused(x, cls_attn, k, weights=lambda w, dropped: torch.where(dropped, w, 0.0)):
    dropped = torch.ones_like(cls_attn, dtype=torch.bool).scatter(1, _top(cls_attn, k), False)
    return (x * weights(cls_attn, dropped).unsqueeze(-1)).sum(dim=1, keepdim=True)


def _renormalised_dropped(x, cls_attn, k):
    """The dropped tokens taken by slicing past the top k, their weights divided by their sum
    (k == N: nothing to divide, zeros)."""
    dropped = cls_attn.argsort(dim=1, descending=True)[:, k:]
    w = cls_attn.gather(1, dropped)
    return (x.gather(1, expanded(dropped, x)) * (w / w.sum(dim=1, keepdim=True))[..., None]).sum(dim=1, keepdim=True)


def _attn_weights(g: torch.Generator, B: int, N: int) -> torch.Tensor:
    """(B, N) positive weights, all different within a row, each row summing to less than 1 (as
    EViT's ``attn[:, :, 0, 1:].mean(1)``: the class token's attention to itself is left out)."""
    w = torch.stack([torch.randperm(N, generator=g) + 1 for _ in range(B)]).float()
    return w / (w.sum(dim=1, keepdim=True) + N)


def _fuse_case(B: int, N: int, D: int, k: int, seed: int):
    return coded(B, N, D, dtype=F32), _attn_weights(rng(seed), B, N), k


@exercise(
    edge_cases=[
        _fuse_case(2, 5, 3, 2, seed=1),
        _fuse_case(1, 4, 2, 1, seed=2),    # B == 1, k == 1
        _fuse_case(3, 4, 1, 3, seed=3),    # D == 1, one token dropped
        _fuse_case(2, 3, 2, 3, seed=4),    # k == N: nothing dropped, zeros
    ],
    random_case=from_sizes((1, 7), inputs=lambda g, B, N: (
        floats(g, B, N, between(g, 1, 5)), _attn_weights(g, B, N), between(g, 1, N))),
    seed=406, atol=1e-5, grad="same", grad_args=("x",),
    wrong=[*_cut_graph("fuse_dropped"),
           Wrong(lambda *a: _fused(*a, weights=lambda w, d: torch.where(d, w, 0.0) / w.sum(dim=1, keepdim=True)),
                 why="divided by the row total: right only when the weights of a row sum to 1")],
    right=[
        lambda x, a, k: (a * (a.argsort(1, descending=True).argsort(1) >= k)).unsqueeze(1) @ x,
        lambda x, a, k: (a[..., None] * x).sum(1, keepdim=True) - (a.topk(k, dim=1).values[..., None] * x[row_ids(x), a.topk(k, dim=1).indices]).sum(1, keepdim=True),
        lambda x, a, k: (x[row_ids(x), a.topk(x.shape[1] - k, 1, largest=False).indices] * a.topk(x.shape[1] - k, 1, largest=False).values[..., None]).sum(1, keepdim=True),
    ],
    mistakes=[
        Mistake("fused_all", lambda *a: _fused(*a, weights=lambda w, dropped: w)),
        Mistake("fused_kept", lambda *a: _fused(*a, weights=lambda w, dropped: torch.where(dropped, 0.0, w))),
        Mistake("plain_mean", lambda *a: _fused(*a, weights=lambda w, d: d.float() / d.float().sum(dim=1, keepdim=True))),
        Mistake("renormalised", lambda *a: _fused(*a, weights=lambda w, d: torch.where(d, w, 0.0)
                                                  / torch.where(d, w, 0.0).sum(dim=1, keepdim=True))),
        Mistake("renormalised_dropped", _renormalised_dropped),
        Mistake("unweighted_sum", lambda *a: _fused(*a, weights=lambda w, d: d.to(w.dtype))),
    ],
)
def fuse_dropped(x: torch.Tensor, cls_attn: torch.Tensor, k: int) -> torch.Tensor:
    """Returns EViT's fused token, (B, 1, D): the tokens outside the top k of ``cls_attn`` summed with
    their attention as weights (not renormalised; k == N gives zeros). x: (B, N, D); cls_attn: (B, N)."""
    return _fused(x, cls_attn, k)


# 6. a different k per image, as a mask
def _one_k(pick):
    """The top-k mask with one k, ``pick(k)``, for the whole batch (for the mistakes)."""
    return lambda s, k: torch.zeros_like(s, dtype=torch.bool).scatter(1, _top(s, pick(k)), True)


@exercise(
    edge_cases=[
        (f([[0.3, 0.9, -0.2, 0.5, 0.1], [0.7, -0.4, 0.2, 0.0, 0.8]]), t([2, 4])),
        (f([[0.5, 0.1, 0.2, 0.9], [0.0, 0.6, 0.3, 0.1], [0.2, 0.8, 0.4, 0.7]]), t([1, 3, 2])),
        (f([[0.1, 0.4, 0.3]]), t([2])),                                 # B == 1
        (f([[0.2, 0.1, 0.3], [0.1, 0.3, 0.2]]), t([3, 1])),             # k == N
    ],
    random_case=from_sizes((2, 7), inputs=lambda g, B, N: (
        distinct_rows(g, B, N), torch.randint(1, N + 1, (B,), generator=g))),
    seed=404,
    right=[
        lambda s, k: (s[:, None, :] > s[:, :, None]).sum(dim=2) < k[:, None],
        lambda s, k: torch.stack([torch.zeros(s.shape[1], dtype=torch.bool).index_fill(0, s[b].topk(int(k[b])).indices, True) for b in range(len(s))]),
        lambda s, k: torch.zeros_like(s, dtype=torch.bool).scatter(1, s.topk(int(k.max()), dim=1).indices, torch.arange(int(k.max()))[None, :] < k[:, None]),
    ],
    mistakes=[
        Mistake("argsort_once", lambda s, k: s.argsort(1, descending=True) < k[:, None]),
        Mistake("one_global_k_max", _one_k(lambda k: int(k.max()))),
        Mistake("one_global_k_first", _one_k(lambda k: int(k[0]))),
        Mistake("ranks_ascending", lambda s, k: keep_mask_per_image(-s, k)),
    ],
)
def keep_mask_per_image(scores: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Returns (B, N) bool: True where patch n is among the ``k[b]`` highest scores of image b."""
    ranks = scores.argsort(dim=1, descending=True).argsort(dim=1)  # 0 for the best patch
    return ranks < k.unsqueeze(1)
