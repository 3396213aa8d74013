"""Chapter 4 exercises, easy to hard. Patches ``x[b][n][d]`` hold ``100*b + 10*n + d`` in the
hand-written cases (a value says where it came from); scores within a row all differ (the top-k
and every order are unique); B != N. Each selection is trained through: an answer cut out of the
graph (``.detach()``, ``.data``) is wrong."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from gatherbook.exercises._checker import Mistake, Wrong, exercise
from gatherbook.exercises.cases import (F32, between, coded, distinct, distinct_rows,
                                        expanded, f, floats, from_sizes, probs, rng,
                                        row_ids, t)

_EXPAND = dict(
    en="an index of shape (B, k, 1) reads feature 0 of each chosen patch and nothing else, with no error; expand it over the features first: `idx.unsqueeze(-1).expand(-1, -1, D)`.",
    zh="形状为 (B, k, 1) 的索引只读到每个选中图像块的第 0 个特征，而且不报错；先把它沿特征维扩展：`idx.unsqueeze(-1).expand(-1, -1, D)`。")
_ONE_K = dict(
    en="every image got the same number of patches; each image b keeps its own k[b]: compare each patch's rank with `k.unsqueeze(1)` (shape (B, 1)), or gather each row's k[b]-th best score as its threshold.",
    zh="每张图像都保留了同样多的图像块；图像 b 应保留它自己的 k[b] 个：把每个图像块的名次与 `k.unsqueeze(1)`（形状 (B, 1)）比较，或用 gather 取出每行第 k[b] 高的得分作为阈值。")


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
@exercise(title={"en": "Select the top-k patches", "zh": "选出得分最高的 k 个图像块"},
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
        Mistake("forgot_expand", lambda x, s, k: x.gather(1, _top(s, k).unsqueeze(-1)), **_EXPAND),
        Mistake("gather_dim2", lambda x, s, k: x.gather(2, expanded(_top(s, k), x)),
                en="with dim=2 the index picks features within each patch: out[b][j][d] = x[b][j][idx]. The indices are patch numbers (the N axis), so gather along dim=1.",
                zh="dim=2 时索引在每个图像块内部选特征：out[b][j][d] = x[b][j][idx]。索引是图像块的编号（N 那一维），应沿 dim=1 做 gather。"),
        Mistake("smallest", lambda x, s, k: top_k_patches(x, -s, k),
                en="you kept the k lowest scores: `topk` keeps the largest by default (`largest=False` and an ascending `argsort` give the smallest).",
                zh="你保留的是得分最低的 k 个：`topk` 默认取最大的（`largest=False` 或升序的 `argsort` 取的是最小的）。"),
        Mistake("topk_dim0",
                lambda x, s, k: x.gather(1, expanded(s.topk(k, dim=0).indices.T, x)),
                en="`topk(k, dim=0)` ranks the images against each other, patch by patch; each image ranks its own patches: `scores.topk(k, dim=1)`.",
                zh="`topk(k, dim=0)` 是在每个图像块位置上比较不同图像；每张图像应给自己的图像块排序：`scores.topk(k, dim=1)`。"),
        Mistake("image_order", lambda x, s, k: top_k_in_image_order(x, s, k),
                en="these are the right patches in image order; this exercise asks for score order, highest first, as `topk` returns them: do not sort the indices.",
                zh="图像块选对了，但按的是图像中的顺序；本题要的是得分顺序，最高的在前，正是 `topk` 返回的顺序：不要给索引排序。"),
    ],
)
def top_k_patches(x: torch.Tensor, scores: torch.Tensor, k: int) -> torch.Tensor:
    """Returns ``out[b][j] = x[b][idx[b][j]]``, idx: row b's k best patches, best first; (B, k, D)."""
    return x.gather(1, expanded(_top(scores, k), x))


# 2. find the bug: the top-k patches in image order (the notebook's stub keeps score order)
@exercise(
    bug="score_order",  # the stub is this mistake
    title={"en": "Find the bug: the top-k patches in image order", "zh": "找出错误：按图像顺序的前 k 个图像块"},
    edge_cases=_TOPK_EDGES,
    random_case=_patches_and_scores, seed=402, grad="same", grad_args=("x",),
    wrong=_cut_graph("top_k_in_image_order"),
    right=[
        lambda x, s, k: x[torch.zeros(s.shape, dtype=torch.bool, device=s.device).scatter(1, _top(s, k), True)].reshape(x.shape[0], k, x.shape[2]),
        lambda x, s, k: x[row_ids(x), s.topk(k, dim=1).indices.sort(dim=1).values],
        lambda x, s, k: torch.stack([x[b, s[b].topk(k).indices.sort().values] for b in range(len(x))]),
    ],
    mistakes=[
        Mistake("score_order", top_k_patches,
                en="these are the right patches in score order, as `topk` returns them; sort the indices before the gather: `idx.sort(dim=1).values`.",
                zh="图像块选对了，但顺序是 `topk` 返回的得分顺序；gather 之前先把索引排序：`idx.sort(dim=1).values`。"),
        Mistake("forgot_expand",
                lambda x, s, k: x.gather(1, _top(s, k).sort(dim=1).values.unsqueeze(-1)), **_EXPAND),
        Mistake("sorted_descending", lambda x, s, k: x.gather(1, expanded(
            _top(s, k).sort(dim=1, descending=True).values, x)),
                en="the patches come out last first: image order is ascending patch numbers, `idx.sort(dim=1).values` (the default, not `descending=True`).",
                zh="图像块的顺序是倒过来的：图像顺序是图像块编号升序，即 `idx.sort(dim=1).values`（默认升序，不要 `descending=True`）。"),
        Mistake("sort_dim0", lambda x, s, k: x.gather(1, expanded(
            _top(s, k).sort(dim=0).values, x)),
                en="`sort(dim=0)` sorts each column across images and mixes their indices; sort each image's row: `idx.sort(dim=1)`.",
                zh="`sort(dim=0)` 是跨图像对每一列排序，会把不同图像的索引混在一起；应对每张图像自己的一行排序：`idx.sort(dim=1)`。"),
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


@exercise(title={"en": "Random masking with restore", "zh": "随机掩码与还原"},
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
        Mistake("restore_with_perm", lambda *a: _mae(*a, restore=lambda ids: ids),
                en="you put the sequence back with the shuffle itself, which shuffles it again; the restore needs the inverse permutation, `ids_restore = ids_shuffle.argsort(dim=1)`.",
                zh="你用打乱用的置换本身去还原，结果是又打乱了一次；还原需要逆置换 `ids_restore = ids_shuffle.argsort(dim=1)`。"),
        Mistake("no_restore", lambda *a: _mae(*a, restore=None),
                en="the kept patches are still in shuffled order, first; gather them back with `ids_restore = ids_shuffle.argsort(dim=1)`, expanded over the features.",
                zh="保留的图像块仍然按打乱后的顺序排在最前面；用沿特征维扩展后的 `ids_restore = ids_shuffle.argsort(dim=1)` 把它们 gather 回原位。"),
        Mistake("restore_argsort_dim0", lambda *a: _mae(*a, restore=lambda ids: ids.argsort(dim=0)),
                en="`argsort(dim=0)` inverts across images and mixes their permutations; each image has its own: `ids_shuffle.argsort(dim=1)`.",
                zh="`argsort(dim=0)` 是跨图像求逆，把不同图像的置换混在了一起；每张图像有自己的置换：`ids_shuffle.argsort(dim=1)`。"),
        Mistake("kept_largest_noise", lambda x, noise, keep: _mae(x, -noise, keep),
                en="MAE keeps the patches with the smallest noise (`argsort` is ascending: 'small is keep, large is remove'); you kept the largest.",
                zh="MAE 保留噪声最小的图像块（`argsort` 是升序：噪声小的保留，大的去掉）；你保留的是噪声最大的。"),
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


@exercise(title={"en": "Pick by class-token attention", "zh": "按类别词元的注意力挑选"},
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
        Mistake("index_includes_cls", lambda *a: _evit(*a, skip_cls=False),
                en="the indices count the patch tokens from 0 but you gathered from the whole sequence, where token 0 is the class token: every pick is one token too early. Gather from `x[:, 1:]` (or add 1 to the indices).",
                zh="索引从 0 开始数的是图像块词元，你却在整个序列上 gather，而序列的第 0 个词元是类别词元：选中的每个词元都错开了一个位置。应在 `x[:, 1:]` 上 gather（或者把索引加 1）。"),
        Mistake("attention_to_cls", lambda *a: _evit(*a, cls_attn=lambda a: a[:, :, 1:, 0].mean(dim=1)),
                en="`attn[:, :, 1:, 0]` is how much each patch attends to the class token (a column); EViT uses what the class token attends to, its row: `attn[:, :, 0, 1:]`.",
                zh="`attn[:, :, 1:, 0]` 是每个图像块对类别词元的注意力（一列）；EViT 用的是类别词元对各图像块的注意力，即它的那一行：`attn[:, :, 0, 1:]`。"),
        Mistake("first_head_only", lambda *a: _evit(*a, cls_attn=lambda a: a[:, 0, 0, 1:]),
                en="you used head 0 only; EViT averages the class token's attention over the heads: `attn[:, :, 0, 1:].mean(dim=1)`.",
                zh="你只用了第 0 个注意力头；EViT 对所有头的类别词元注意力取平均：`attn[:, :, 0, 1:].mean(dim=1)`。"),
        Mistake("dropped_cls", lambda *a: _evit(*a, keep_cls=False),
                en="the class token is missing: put it first, `torch.cat([x[:, :1], kept], dim=1)`.",
                zh="结果里缺了类别词元：把它放在最前面，`torch.cat([x[:, :1], kept], dim=1)`。"),
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


def _attn_weights(g: torch.Generator, B: int, N: int) -> torch.Tensor:
    """(B, N) positive weights, all different within a row, each row summing to less than 1 (as
    EViT's ``attn[:, :, 0, 1:].mean(1)``: the class token's attention to itself is left out)."""
    w = torch.stack([torch.randperm(N, generator=g) + 1 for _ in range(B)]).float()
    return w / (w.sum(dim=1, keepdim=True) + N)


def _fuse_case(B: int, N: int, D: int, k: int, seed: int):
    return coded(B, N, D, dtype=F32), _attn_weights(rng(seed), B, N), k


@exercise(title={"en": "Fuse the dropped tokens", "zh": "融合被剪掉的词元"},
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
        Mistake("fused_all", lambda *a: _fused(*a, weights=lambda w, dropped: w),
                en="you summed every token; the fused token holds only the dropped ones (not among the k with the highest attention): zero the kept tokens' weights, or gather the dropped tokens and their weights.",
                zh="你把所有词元都加了进去；融合词元只包含被剪掉的词元（不在注意力最高的 k 个之中）：把保留词元的权重置零，或者用 gather 取出被剪掉的词元及其权重。"),
        Mistake("fused_kept", lambda *a: _fused(*a, weights=lambda w, dropped: torch.where(dropped, 0.0, w)),
                en="you fused the kept tokens; the fused token stands for the dropped ones, those outside `cls_attn.topk(k, dim=1).indices`.",
                zh="你融合的是保留下来的词元；融合词元代表的是被剪掉的那些，即不在 `cls_attn.topk(k, dim=1).indices` 中的词元。"),
        Mistake("plain_mean", lambda *a: _fused(*a, weights=lambda w, d: d.float() / d.float().sum(dim=1, keepdim=True)),
                en="a plain mean gives every dropped token the same weight; EViT weighs each by the class token's attention to it.",
                zh="简单平均给每个被剪掉的词元相同的权重；EViT 按类别词元对它的注意力加权。"),
        Mistake("renormalised", lambda *a: _fused(*a, weights=lambda w, d: torch.where(d, w, 0.0)
                                                  / torch.where(d, w, 0.0).sum(dim=1, keepdim=True)),
                en="EViT does not divide by the sum of the dropped tokens' weights: the fused token is their attention-weighted sum, not their average.",
                zh="EViT 不除以被剪掉词元的权重之和：融合词元是按注意力加权的和，而不是加权平均。"),
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


@exercise(title={"en": "A different k per image", "zh": "每张图像各自的 k"},
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
    wrong=[Wrong(lambda s, k: s.argsort(1, descending=True) < k[:, None], kind="values",
                 why="argsort once gives the patches in order of score, not each patch's rank")],
    mistakes=[
        Mistake("one_global_k_max", _one_k(lambda k: int(k.max())), **_ONE_K),
        Mistake("one_global_k_first", _one_k(lambda k: int(k[0])), **_ONE_K),
        Mistake("ranks_ascending", lambda s, k: keep_mask_per_image(-s, k),
                en="you kept the k[b] lowest scores: rank by decreasing score, `scores.argsort(dim=1, descending=True).argsort(dim=1)`.",
                zh="你保留的是得分最低的 k[b] 个：应按得分从高到低排名，即 `scores.argsort(dim=1, descending=True).argsort(dim=1)`。"),
    ],
)
def keep_mask_per_image(scores: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Returns (B, N) bool: True where patch n is among the ``k[b]`` highest scores of image b."""
    ranks = scores.argsort(dim=1, descending=True).argsort(dim=1)  # 0 for the best patch
    return ranks < k.unsqueeze(1)
