"""Chapter 5 exercises (scatter): the planted wrong answers of issue 13 fail and are named in
both languages, writing into the caller's tensor is caught, and right answers written other ways
pass. The checks common to every exercise are in test_exercises.py.
"""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gatherbook.exercises import get, names, run_check  # noqa: E402
from gatherbook.exercises.ch5 import MESSAGES  # noqa: E402

CH5 = [n for n in names() if n.startswith("ch5.")]


def test_chapter_5_has_six_exercises():
    assert CH5 == ["ch5.one_hot", "ch5.histogram", "ch5.recenter", "ch5.unshuffle", "ch5.unprune",
                   "ch5.gather_bwd"]


# The planted wrong answers the issue asks for, each named by its own hint in both languages.
PLANTED = [
    ("ch5.histogram", "scatter_not_add"),   # scatter_ where a sum was needed
    ("ch5.gather_bwd", "scatter_not_add"),  # a result right only without duplicates
    ("ch5.recenter", "include_self"),       # the default include_self for a mean
    ("ch5.histogram", "float_index"),       # a float index
    ("ch5.one_hot", "wrong_dim"),           # the wrong dim
    ("ch5.unshuffle", "wrong_dim"),
    ("ch5.unprune", "wrong_dim"),
    ("ch5.gather_bwd", "wrong_dim"),
    ("ch5.gather_bwd", "added_to_x"),      # found in review: a copy of x instead of zeros
    ("ch5.histogram", "float_counts"),     # found in review: float counts, int64 expected
]


@pytest.mark.parametrize("name,key", PLANTED)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_planted_wrong_answers_are_rejected_with_their_hint(name, key, lang):
    m = next(m for m in get(name).mistakes if m.key == key)
    r = run_check(name, m.fn, lang=lang)
    assert not r.passed and r.hint_key == key, r.message
    assert MESSAGES[lang][name.split(".")[1]][key] in r.message


def test_a_float_index_is_reported_as_the_error_torch_raises():
    m = next(m for m in get("ch5.histogram").mistakes if m.key == "float_index")
    r = run_check("ch5.histogram", m.fn, lang="en")
    assert r.kind == "exception" and r.case == 1
    assert "scatter(): Expected dtype int32/int64 for index" in r.message


def test_the_right_only_without_duplicates_answer_passes_a_case_without_them():
    """gather_bwd's case 4 has no repeated index: scatter_ is right there, and wrong on case 1."""
    ex = get("ch5.gather_bwd")
    case4 = ex.cases()[3]
    assert all(len(set(row.tolist())) == len(row) for row in case4[1])
    m = next(m for m in ex.mistakes if m.key == "scatter_not_add")
    assert torch.equal(m.fn(*case4), ex.reference(*case4))
    assert run_check(ex.name, m.fn, lang="en").case == 1


def _histogram_by_indexing(x, edges):
    b = (x * (edges.numel() - 1)).long()
    counts = torch.zeros(x.shape[0], edges.numel() - 1, dtype=torch.long)
    counts[torch.arange(x.shape[0])[:, None], b] += 1
    return counts


def _gather_bwd_by_indexing(x, index, grad_out):
    g = torch.zeros_like(x)
    g[torch.arange(x.shape[0])[:, None].expand_as(index), index] += grad_out
    return g


@pytest.mark.parametrize("name,fn", [("ch5.histogram", _histogram_by_indexing),
                                     ("ch5.gather_bwd", _gather_bwd_by_indexing)])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_plus_equals_by_indexing_is_named_like_scatter(name, fn, lang):
    """`t[i] += v` with a repeated index adds once, like scatter_: the same hint, which says so."""
    r = run_check(name, fn, lang=lang)
    assert not r.passed and r.case == 1 and r.hint_key == "scatter_not_add", r.message
    assert "+= " in r.message
    if name == "ch5.gather_bwd":  # the hint names the chapter's `t[i] += v` warning
        assert "t[i] += v" in r.message


def _histogram_float_counts(x, edges):
    b = (x * (edges.numel() - 1)).long()
    counts = torch.zeros(x.shape[0], edges.numel() - 1, device=x.device)
    return counts.scatter_add_(1, b, torch.ones(b.shape, device=x.device))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_float_counts_get_the_float_counts_hint_not_the_generic_dtype_one(lang):
    r = run_check("ch5.histogram", _histogram_float_counts, lang=lang)
    assert not r.passed and r.hint_key == "float_counts", r.message
    assert "torch.long" in r.message and "`.long()`" not in r.message


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_writing_into_the_callers_tensor_is_caught(lang):
    """Right values, but the caller's tensor is overwritten: scatter_ / scatter_reduce_ in place."""
    def unprune_in_place(patches, kept, keep):
        idx = keep.unsqueeze(-1).expand(-1, -1, patches.shape[-1])
        return patches.scatter_(1, idx, kept)

    def recenter_in_place(x, assign, centroids):
        idx = assign.unsqueeze(1).expand(-1, x.shape[1])
        return centroids.scatter_reduce_(0, idx, x, "mean", include_self=False)

    for name, fn, arg in (("ch5.unprune", unprune_in_place, "patches"),
                          ("ch5.recenter", recenter_in_place, "centroids")):
        r = run_check(name, fn, lang=lang)
        assert (r.kind, r.facts, r.hint_key) == ("mutated_input", {"arg": arg}, "generic.mutated_input")
        assert f"`{arg}`" in r.message and "scatter_" in r.message


def test_the_default_include_self_counts_the_old_centroid():
    x, assign, centroids = get("ch5.recenter").cases()[0]
    m = next(m for m in get("ch5.recenter").mistakes if m.key == "include_self")
    got, want = m.fn(x, assign, centroids), get("ch5.recenter").reference(x, assign, centroids)
    # cluster 0 holds points 0 and 2: (1 + 5) / 2 = 3 without the old 0.5, (0.5 + 1 + 5) / 3 with it
    assert want[0, 0].item() == 3.0 and got[0, 0].item() == pytest.approx(6.5 / 3)


# --- right answers written other ways pass ---------------------------------------------------------

@pytest.fixture(autouse=True)
def _quiet_beta_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="index_reduce")
        yield


def _loop_one_hot(logits, labels):
    out = torch.zeros_like(logits)
    for i, c in enumerate(labels.tolist()):
        out[i, c] = 1
    return out


RIGHT = {
    "ch5.one_hot": [
        lambda logits, y: F.one_hot(y, logits.shape[1]).to(logits.dtype),
        lambda logits, y: (y[:, None] == torch.arange(logits.shape[1], device=y.device)).to(logits.dtype),
        lambda logits, y: torch.eye(logits.shape[1], dtype=logits.dtype, device=logits.device)[y],
        lambda logits, y: torch.zeros_like(logits).index_put_(
            (torch.arange(len(y), device=y.device), y), logits.new_ones(())),
        lambda logits, y: torch.zeros_like(logits).scatter(1, y[:, None], 1.0),
        _loop_one_hot,
    ],
    "ch5.histogram": [
        lambda x, e: torch.stack([torch.bincount((r * (e.numel() - 1)).long(), minlength=e.numel() - 1)
                                  for r in x]),
        lambda x, e: F.one_hot((x * (e.numel() - 1)).long(), e.numel() - 1).sum(1),
        lambda x, e: x.new_zeros(x.shape[0], e.numel() - 1, dtype=torch.long).scatter_reduce(
            1, (x * (e.numel() - 1)).long(), torch.ones_like(x, dtype=torch.long), "sum"),
        lambda x, e: torch.stack([torch.histc(r, bins=e.numel() - 1, min=0, max=1).long() for r in x]),
    ],
    "ch5.recenter": [
        # PyG's way: sums and counts by scatter_add_, a count clamped to 1, old centroids kept
        lambda x, a, c: torch.where(
            (torch.bincount(a, minlength=c.shape[0]) > 0)[:, None],
            torch.zeros_like(c).index_add_(0, a, x)
            / torch.bincount(a, minlength=c.shape[0]).clamp(min=1)[:, None].to(x.dtype),
            c),
        lambda x, a, c: torch.stack([x[a == g].mean(0) if (a == g).any() else c[g]
                                     for g in range(c.shape[0])]),
        lambda x, a, c: c.index_reduce(0, a, x, "mean", include_self=False),
    ],
    "ch5.unshuffle": [
        lambda s, ids: s.gather(1, ids.argsort(1)[..., None].expand(-1, -1, s.shape[-1])),
        lambda s, ids: torch.take_along_dim(s, ids.argsort(1)[..., None], dim=1),
        lambda s, ids: s[torch.arange(s.shape[0])[:, None], ids.argsort(1)],
        lambda s, ids: torch.zeros_like(s).index_put_((torch.arange(s.shape[0])[:, None], ids), s),
    ],
    "ch5.unprune": [
        lambda p, k, keep: p.clone().scatter_(1, keep[..., None].expand(-1, -1, p.shape[-1]), k),
        lambda p, k, keep: p.index_put((torch.arange(p.shape[0])[:, None], keep), k),
        lambda p, k, keep: torch.stack([p[b].index_copy(0, keep[b], k[b]) for b in range(p.shape[0])]),
    ],
    "ch5.gather_bwd": [
        "autograd",  # replaced below by _autograd_bwd
        lambda x, i, go: torch.einsum("bk,bkn->bn", go, F.one_hot(i, x.shape[1]).to(go.dtype)),
        lambda x, i, go: torch.zeros_like(x).index_put_((torch.arange(x.shape[0])[:, None].expand_as(i), i),
                                                        go, accumulate=True),
        lambda x, i, go: torch.zeros_like(x).scatter_reduce(1, i, go, "sum"),
    ],
}


def _autograd_bwd(x, index, grad_out):
    leaf = x.detach().requires_grad_()
    (g,) = torch.autograd.grad((leaf.gather(1, index) * grad_out).sum(), leaf)
    return g


RIGHT["ch5.gather_bwd"][0] = _autograd_bwd  # the gradient autograd computes is the answer


@pytest.mark.parametrize("name,k", [(n, k) for n, fns in RIGHT.items() for k in range(len(fns))])
def test_right_answers_written_other_ways_pass(name, k):
    r = run_check(name, RIGHT[name][k], lang="en")
    assert r.passed, r.message
