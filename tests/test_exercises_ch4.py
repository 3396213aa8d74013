"""Chapter 4 exercises (top-k patches): the planted wrong answers of issue 12 fail and are named in
both languages, right answers written other ways pass, and the cases hold what makes each mistake
visible. The checks common to every exercise (stub, shapes, languages ...) are in test_exercises.py.
"""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

from gatherbook.exercises import get, names, run_check  # noqa: E402
from gatherbook.exercises.ch4 import MESSAGES  # noqa: E402

CH4 = [n for n in names() if n.startswith("ch4.")]


def test_chapter_4_has_the_five_exercises_of_the_issue_and_the_fused_token():
    assert CH4 == ["ch4.top_k_patches", "ch4.top_k_in_image_order", "ch4.mask_and_restore",
                   "ch4.keep_mask_per_image", "ch4.keep_by_cls_attention", "ch4.fuse_dropped"]


# The wrong answers issue 12 asks to plant, and the others each exercise names.
PLANTED = [
    ("ch4.top_k_patches", "forgot_expand"),              # only feature 0 gathered
    ("ch4.top_k_in_image_order", "forgot_expand"),
    ("ch4.top_k_patches", "gather_dim2"),                # the wrong dim
    ("ch4.top_k_patches", "topk_dim0"),
    ("ch4.top_k_patches", "image_order"),  # found by the new-reader review
    ("ch4.top_k_in_image_order", "sort_dim0"),
    ("ch4.mask_and_restore", "restore_argsort_dim0"),
    ("ch4.mask_and_restore", "restore_with_perm"),       # the permutation instead of its inverse
    ("ch4.top_k_in_image_order", "score_order"),         # score order where image order was asked
    ("ch4.keep_mask_per_image", "one_global_k_max"),     # a per-image k done with one global k
    ("ch4.keep_mask_per_image", "one_global_k_first"),
    ("ch4.top_k_patches", "smallest"),
    ("ch4.top_k_in_image_order", "sorted_descending"),
    ("ch4.mask_and_restore", "no_restore"),
    ("ch4.mask_and_restore", "kept_largest_noise"),
    ("ch4.keep_mask_per_image", "ranks_ascending"),
    ("ch4.keep_by_cls_attention", "index_includes_cls"),
    ("ch4.keep_by_cls_attention", "attention_to_cls"),
    ("ch4.keep_by_cls_attention", "first_head_only"),
    ("ch4.keep_by_cls_attention", "dropped_cls"),
    ("ch4.fuse_dropped", "fused_all"),
    ("ch4.fuse_dropped", "fused_kept"),
    ("ch4.fuse_dropped", "plain_mean"),
    ("ch4.fuse_dropped", "renormalised"),
]


def _mistake(name, key):
    return next(m for m in get(name).mistakes if m.key == key)


def test_every_declared_mistake_is_listed_here():
    declared = {(n, m.key) for n in CH4 for m in get(n).mistakes}
    assert declared == set(PLANTED)


@pytest.mark.parametrize("name,key", PLANTED)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_planted_wrong_answers_are_rejected_with_their_hint(name, key, lang):
    m = _mistake(name, key)
    r = run_check(name, m.fn, lang=lang)
    assert not r.passed and r.attempted and r.hint_key == key, r.message
    assert MESSAGES[lang][name.split(".")[1]][key] in r.message


# --- the planted mistakes, written as a reader would write them -------------------------------

def _readers_forgot_expand(x, scores, k):
    idx = scores.topk(k, dim=1).indices
    return torch.gather(x, 1, idx[:, :, None])


def _readers_wrong_dim(x, scores, k):
    idx = scores.topk(k, dim=1).indices
    return torch.gather(x, 2, idx[:, :, None].expand(-1, -1, x.shape[-1]))


def _readers_score_order(x, scores, k):
    _, idx = torch.topk(scores, k)
    return x[torch.arange(x.shape[0])[:, None], idx]


def _readers_restore_with_perm(x, noise, keep):
    B, N, D = x.shape
    perm = torch.argsort(noise, dim=1)
    seq = torch.gather(x, 1, perm[..., None].expand(B, N, D)).clone()
    seq[:, keep:] = 0
    return torch.gather(seq, 1, perm[..., None].expand(B, N, D))


def _readers_global_k(scores, k):
    kk = int(k.max())
    mask = torch.zeros_like(scores, dtype=torch.bool)
    mask.scatter_(1, scores.topk(kk, dim=1).indices, True)
    return mask


@pytest.mark.parametrize("name,answer,key", [
    ("ch4.top_k_patches", _readers_forgot_expand, "forgot_expand"),
    ("ch4.top_k_patches", _readers_wrong_dim, "gather_dim2"),
    ("ch4.top_k_in_image_order", _readers_score_order, "score_order"),
    ("ch4.mask_and_restore", _readers_restore_with_perm, "restore_with_perm"),
    ("ch4.keep_mask_per_image", _readers_global_k, "one_global_k_max"),
])
def test_the_same_mistakes_written_differently_are_recognised(name, answer, key):
    r = run_check(name, answer, lang="en")
    assert not r.passed and r.hint_key == key, r.message


def test_forgetting_expand_is_named_on_a_shape_failure():
    r = run_check("ch4.top_k_patches", _readers_forgot_expand, lang="en")
    assert r.kind == "shape" and "(2, 3, 1)" in r.message and "(2, 3, 3)" in r.message


def test_a_per_image_k_with_one_global_k_fails_on_the_first_case():
    r = run_check("ch4.keep_mask_per_image", _readers_global_k, lang="zh")
    assert r.case == 1 and r.kind == "values"


# --- right answers written other ways pass ------------------------------------------------------

def _rows(x, idx):
    return x[torch.arange(x.shape[0])[:, None], idx]


TOP_K = {
    "advanced indexing": lambda x, s, k: _rows(x, s.topk(k, dim=1).indices),
    "take_along_dim": lambda x, s, k: torch.take_along_dim(
        x, s.topk(k, dim=1).indices[:, :, None], dim=1),
    "argsort descending": lambda x, s, k: x.gather(
        1, s.argsort(dim=1, descending=True)[:, :k, None].expand(-1, -1, x.shape[2])),
    "repeat": lambda x, s, k: x.gather(
        1, s.topk(k, dim=1).indices.unsqueeze(-1).repeat(1, 1, x.shape[2])),
    "loop": lambda x, s, k: torch.stack([x[b, s[b].topk(k).indices] for b in range(len(x))]),
    "one-hot": lambda x, s, k: torch.nn.functional.one_hot(
        s.topk(k, dim=1).indices, x.shape[1]).to(x.dtype) @ x,
}

IMAGE_ORDER = {
    "mask then reshape": lambda x, s, k: x[torch.zeros(s.shape, dtype=torch.bool).scatter(
        1, s.topk(k, dim=1).indices, True)].reshape(x.shape[0], k, x.shape[2]),
    "sorted indices, advanced indexing": lambda x, s, k: _rows(
        x, s.topk(k, dim=1).indices.sort(dim=1).values),
    "take_along_dim": lambda x, s, k: torch.take_along_dim(
        x, torch.sort(torch.topk(s, k).indices)[0][..., None], dim=1),
    "loop": lambda x, s, k: torch.stack(
        [x[b, s[b].topk(k).indices.sort().values] for b in range(len(x))]),
}


def _mask_by_multiplying(x, noise, keep):
    ranks = noise.argsort(dim=1).argsort(dim=1)          # 0 for the smallest noise
    return x * (ranks < keep)[:, :, None]


def _mask_scatter(x, noise, keep):
    B, N, D = x.shape
    ids_shuffle = noise.argsort(dim=1)
    kept = torch.take_along_dim(x, ids_shuffle[:, :keep, None], dim=1)
    out = torch.zeros_like(x)
    return out.scatter(1, ids_shuffle[:, :keep, None].expand(-1, -1, D), kept)


def _mask_loop(x, noise, keep):
    out = torch.zeros_like(x)
    for b in range(x.shape[0]):
        ids = noise[b].argsort()[:keep]
        out[b, ids] = x[b, ids]
    return out


MASKING = {
    "multiply by a mask": _mask_by_multiplying,
    "scatter": _mask_scatter,
    "loop": _mask_loop,
    "index_select per image": lambda x, n, keep: torch.stack([
        torch.cat([xb.index_select(0, nb.argsort()[:keep]),
                   xb.new_zeros(xb.shape[0] - keep, xb.shape[1])]).index_select(
            0, nb.argsort().argsort()) for xb, nb in zip(x, n)]),
}

PER_IMAGE = {
    "ranks": lambda s, k: s.argsort(dim=1, descending=True).argsort(dim=1) < k[:, None],
    "loop with topk": lambda s, k: torch.stack([
        torch.zeros(s.shape[1], dtype=torch.bool).index_fill(0, s[b].topk(int(k[b])).indices, True)
        for b in range(len(s))]),
    "count greater": lambda s, k: (s[:, None, :] > s[:, :, None]).sum(dim=2) < k[:, None],
    "topk of the largest k, then mask": lambda s, k: torch.zeros_like(s, dtype=torch.bool).scatter(
        1, s.topk(int(k.max()), dim=1).indices,
        torch.arange(int(k.max()))[None, :] < k[:, None]),
}


def _cls_plus_one(x, attn, k):
    idx = attn[:, :, 0, 1:].mean(dim=1).topk(k, dim=1).indices + 1
    keep = torch.cat([idx.new_zeros(x.shape[0], 1), idx], dim=1)  # as EViT's comment has it
    return x.gather(1, keep.unsqueeze(-1).expand(-1, -1, x.shape[2]))


CLS_ATTENTION = {
    "index plus one, class token at index 0": _cls_plus_one,
    "sum instead of mean": lambda x, a, k: torch.cat([x[:, :1], _rows(
        x[:, 1:], a[:, :, 0, 1:].sum(dim=1).topk(k, dim=1).indices)], dim=1),
    "take_along_dim": lambda x, a, k: torch.cat([x[:, :1], torch.take_along_dim(
        x[:, 1:], a.mean(dim=1)[:, 0, 1:].topk(k).indices[..., None], dim=1)], dim=1),
}


def _fuse_loop(x, a, k):
    out = torch.zeros(x.shape[0], 1, x.shape[2])
    for b in range(x.shape[0]):
        kept = set(a[b].topk(k).indices.tolist())
        for n in range(x.shape[1]):
            if n not in kept:
                out[b, 0] += a[b, n] * x[b, n]
    return out


FUSE = {
    "mask and matmul": lambda x, a, k: (a * (a.argsort(1, descending=True).argsort(1) >= k)
                                        ).unsqueeze(1) @ x,
    "loop": _fuse_loop,
    "total minus kept": lambda x, a, k: (a[..., None] * x).sum(1, keepdim=True) - (
        a.topk(k, dim=1).values[..., None]
        * _rows(x, a.topk(k, dim=1).indices)).sum(1, keepdim=True),
    "einsum over a threshold": lambda x, a, k: torch.einsum(
        "bn,bnd->bd", a * (a < a.sort(1, descending=True).values[:, k - 1:k]), x
    ).unsqueeze(1),
}


@pytest.mark.parametrize("name,label,answer", [
    *[("ch4.top_k_patches", k, f) for k, f in TOP_K.items()],
    *[("ch4.top_k_in_image_order", k, f) for k, f in IMAGE_ORDER.items()],
    *[("ch4.mask_and_restore", k, f) for k, f in MASKING.items()],
    *[("ch4.keep_mask_per_image", k, f) for k, f in PER_IMAGE.items()],
    *[("ch4.keep_by_cls_attention", k, f) for k, f in CLS_ATTENTION.items()],
    *[("ch4.fuse_dropped", k, f) for k, f in FUSE.items()],
])
def test_right_answers_written_other_ways_pass(name, label, answer):
    r = run_check(name, answer, lang="en")
    assert r.passed, f"{label}: {r.message}"


# --- what the cases hold ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ch4.top_k_patches", "ch4.top_k_in_image_order",
                                  "ch4.mask_and_restore", "ch4.keep_by_cls_attention",
                                  "ch4.fuse_dropped"])
def test_k_is_an_int_with_k_1_and_k_n_cases(name):
    cases = get(name).cases()
    ks = [c[2] for c in cases]
    assert all(type(k) is int for k in ks)
    n = [c[0].shape[1] - (1 if name == "ch4.keep_by_cls_attention" else 0) for c in cases]
    assert any(k == 1 for k in ks) and any(k == m for k, m in zip(ks, n))


@pytest.mark.parametrize("name", ["ch4.top_k_patches", "ch4.top_k_in_image_order",
                                  "ch4.mask_and_restore"])
def test_scores_are_all_different_within_a_row(name):
    for case in get(name).cases():
        s = case[1]
        assert all(len(set(row.tolist())) == len(row) for row in s)


def test_class_token_attention_has_no_ties_within_a_row():
    for x, attn, _ in get("ch4.keep_by_cls_attention").cases():
        mean = attn[:, :, 0, 1:].mean(dim=1)
        gaps = mean.sort(dim=1).values.diff(dim=1)
        assert gaps.numel() == 0 or float(gaps.min()) > 1e-5
        assert torch.allclose(attn.sum(dim=-1), torch.ones(attn.shape[:-1]))


def test_per_image_k_cases_have_different_ks_in_one_batch():
    cases = get("ch4.keep_mask_per_image").cases()
    assert all(((k >= 1) & (k <= s.shape[1])).all() for s, k in cases)
    assert sum(len(set(k.tolist())) > 1 for s, k in cases) >= len(cases) - 2


def test_an_answer_that_builds_a_tensor_on_the_cpu_is_caught_by_the_device_probe():
    def cpu_zeros(x, attn, k):
        idx = attn[:, :, 0, 1:].mean(dim=1).topk(k, dim=1).indices + 1
        keep = torch.cat([torch.zeros(x.shape[0], 1, dtype=idx.dtype), idx], dim=1)
        return x.gather(1, keep.unsqueeze(-1).expand(-1, -1, x.shape[2]))

    r = run_check("ch4.keep_by_cls_attention", cpu_zeros, lang="en")
    assert not r.passed and r.kind == "device", r.message


# --- more wrong answers a reader might write (none is a planted mistake: no hint is promised) ---

def _e(idx, D):
    return idx.unsqueeze(-1).expand(-1, -1, D)


def _below_kth(a, k):
    """True for the entries of each row below its k-th largest (the dropped ones)."""
    return a < a.sort(1, descending=True).values[:, k - 1:k]


MORE_WRONG = [
    ("ch4.top_k_patches", "x[:, idx] without the batch arange",
     lambda x, s, k: x[:, s.topk(k, dim=1).indices]),
    ("ch4.top_k_patches", "the top k of an ascending argsort, lowest of them first",
     lambda x, s, k: x.gather(1, _e(s.argsort(1)[:, -k:], x.shape[2]))),
    ("ch4.top_k_patches", "the top k of abs(scores)",
     lambda x, s, k: x.gather(1, _e(s.abs().topk(k, 1).indices, x.shape[2]))),
    ("ch4.top_k_patches", "one place off: argsort(descending)[:, 1:k + 1]",
     lambda x, s, k: x.gather(1, _e(s.argsort(1, descending=True)[:, 1:k + 1], x.shape[2]))),
    ("ch4.top_k_patches", "expanded over N instead of D",
     lambda x, s, k: x.gather(1, _e(s.topk(k, 1).indices, x.shape[1]))),
    ("ch4.top_k_in_image_order", "sort().indices instead of .values",
     lambda x, s, k: x.gather(1, _e(s.topk(k, 1).indices.sort(1).indices, x.shape[2]))),
    ("ch4.top_k_in_image_order", "the union of the batch's masks",
     lambda x, s, k: x[:, torch.zeros_like(s, dtype=torch.bool).scatter(
         1, s.topk(k, 1).indices, True).any(0)]),
    ("ch4.top_k_in_image_order", "one global set of indices",
     lambda x, s, k: x[:, s.topk(k, 1).indices.flatten().unique()[:k]]),
    ("ch4.top_k_in_image_order", "the top k of the sorted scores",
     lambda x, s, k: x.gather(1, _e(s.sort(1).values.topk(k, 1).indices, x.shape[2]))),
    ("ch4.top_k_in_image_order", "score order flipped",
     lambda x, s, k: x.gather(1, _e(s.topk(k, 1).indices.flip(1), x.shape[2]))),
    ("ch4.mask_and_restore", "noise < its keep-th smallest (one too few)",
     lambda x, n, keep: x * (n < n.kthvalue(keep, 1, keepdim=True).values)[..., None]),
    ("ch4.mask_and_restore", "restored with a descending argsort",
     lambda x, n, keep: torch.cat([x.gather(1, _e(n.argsort(1)[:, :keep], x.shape[2])),
                                   x.new_zeros(x.shape[0], x.shape[1] - keep, x.shape[2])],
                                  1).gather(1, _e(n.argsort(1).argsort(1, descending=True),
                                                  x.shape[2]))),
    ("ch4.mask_and_restore", "no shuffle: the first keep patches",
     lambda x, n, keep: x * (torch.arange(x.shape[1]) < keep)[None, :, None]),
    ("ch4.mask_and_restore", "mask tokens first, then the kept patches",
     lambda x, n, keep: torch.cat([x.new_zeros(x.shape[0], x.shape[1] - keep, x.shape[2]),
                                   x.gather(1, _e(n.argsort(1)[:, :keep], x.shape[2]))],
                                  1).gather(1, _e(n.argsort(1).argsort(1), x.shape[2]))),
    ("ch4.mask_and_restore", "the kept patches only, (B, keep, D)",
     lambda x, n, keep: x.gather(1, _e(n.argsort(1)[:, :keep], x.shape[2]))),
    ("ch4.keep_mask_per_image", "ranks <= k (one too many)",
     lambda s, k: s.argsort(1, descending=True).argsort(1) <= k[:, None]),
    ("ch4.keep_mask_per_image", "one argsort: patch numbers compared with k",
     lambda s, k: s.argsort(1, descending=True) < k[:, None]),
    ("ch4.keep_mask_per_image", "k without unsqueeze",
     lambda s, k: s.argsort(1, descending=True).argsort(1) < k),
    ("ch4.keep_mask_per_image", "a float mask",
     lambda s, k: (s.argsort(1, descending=True).argsort(1) < k[:, None]).float()),
    ("ch4.keep_mask_per_image", "the threshold from an ascending sort",
     lambda s, k: s >= s.sort(1).values.gather(1, (k - 1)[:, None])),
    ("ch4.keep_mask_per_image", "> the threshold instead of >=",
     lambda s, k: s > s.sort(1, descending=True).values.gather(1, (k - 1)[:, None])),
    ("ch4.keep_by_cls_attention", "the class token's own column ranked too",
     lambda x, a, k: torch.cat([x[:, :1], x.gather(
         1, _e(a[:, :, 0, :].mean(1).topk(k, 1).indices, x.shape[2]))], 1)),
    ("ch4.keep_by_cls_attention", "max over the heads",
     lambda x, a, k: torch.cat([x[:, :1], _rows(
         x[:, 1:], a[:, :, 0, 1:].amax(1).topk(k, 1).indices)], 1)),
    ("ch4.keep_by_cls_attention", "attention received from every query",
     lambda x, a, k: torch.cat([x[:, :1], _rows(
         x[:, 1:], a.mean(2)[:, :, 1:].mean(1).topk(k, 1).indices)], 1)),
    ("ch4.keep_by_cls_attention", "image order",
     lambda x, a, k: torch.cat([x[:, :1], _rows(
         x[:, 1:], a[:, :, 0, 1:].mean(1).topk(k, 1).indices.sort(1).values)], 1)),
    ("ch4.keep_by_cls_attention", "the class token last",
     lambda x, a, k: torch.cat([_rows(
         x[:, 1:], a[:, :, 0, 1:].mean(1).topk(k, 1).indices), x[:, :1]], 1)),
    ("ch4.keep_by_cls_attention", "each head renormalised over the patches",
     lambda x, a, k: torch.cat([x[:, :1], _rows(x[:, 1:], (
         a[:, :, 0, 1:] / a[:, :, 0, 1:].sum(-1, keepdim=True)).mean(1).topk(k, 1).indices)], 1)),
    ("ch4.fuse_dropped", "dropped the k lowest",
     lambda x, a, k: (x * (a * torch.ones_like(a).scatter(
         1, a.topk(k, 1, largest=False).indices, 0.0))[..., None]).sum(1, keepdim=True)),
    ("ch4.fuse_dropped", "without keepdim, (B, D)",
     lambda x, a, k: (x * torch.where(_below_kth(a, k), a, 0.0)[..., None]).sum(1)),
    ("ch4.fuse_dropped", "mean instead of sum",
     lambda x, a, k: (x * torch.where(_below_kth(a, k), a, 0.0)[..., None]).mean(1, keepdim=True)),
    ("ch4.fuse_dropped", "<= the k-th largest: the k-th kept token fused too",
     lambda x, a, k: (x * torch.where(
         a <= a.sort(1, descending=True).values[:, k - 1:k], a, 0.0)[..., None]).sum(1, keepdim=True)),
    ("ch4.fuse_dropped", "no weights: a plain sum",
     lambda x, a, k: (x * _below_kth(a, k)[..., None]).sum(1, keepdim=True)),
    ("ch4.fuse_dropped", "softmax of the attention as weights",
     lambda x, a, k: (x * torch.where(_below_kth(a, k), a.softmax(1), 0.0)[..., None]).sum(
         1, keepdim=True)),
]


@pytest.mark.parametrize("name,label,answer", MORE_WRONG, ids=[m[1] for m in MORE_WRONG])
def test_more_wrong_answers_are_rejected(name, label, answer):
    r = run_check(name, answer, lang="en")
    assert r.attempted and not r.passed, f"{label}: {r.message}"


def test_an_answer_that_changes_its_input_in_place_is_rejected():
    def zero_in_place(x, noise, keep):
        x[noise.argsort(1).argsort(1) >= keep] = 0
        return x

    r = run_check("ch4.mask_and_restore", zero_in_place, lang="en")
    assert not r.passed and r.kind == "mutated_input", r.message


@pytest.mark.parametrize("name,answer", [
    ("ch4.top_k_patches", lambda x, s, k: x.gather(1, _e(s.softmax(1).topk(k, 1).indices,
                                                         x.shape[2]))),
    ("ch4.top_k_in_image_order", lambda x, s, k: x.gather(1, _e(
        s.argsort(1)[:, -k:].sort(1).values, x.shape[2]))),
    ("ch4.mask_and_restore", lambda x, n, keep: x * (
        n <= n.kthvalue(keep, 1, keepdim=True).values)[..., None]),
    ("ch4.fuse_dropped", lambda x, a, k: (
        _rows(x, a.topk(x.shape[1] - k, 1, largest=False).indices)
        * a.topk(x.shape[1] - k, 1, largest=False).values[..., None]).sum(1, keepdim=True)),
])
def test_more_right_answers_pass(name, answer):
    r = run_check(name, answer, lang="en")
    assert r.passed, r.message
