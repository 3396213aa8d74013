"""Chapter 7 exercises (generation time): right answers written other ways pass, the planted
wrong answers fail and are named in both languages, and the cases hold what makes them visible.
"""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gatherbook.exercises import get, names, run_check  # noqa: E402
from gatherbook.exercises.ch7 import MESSAGES  # noqa: E402

CH7 = [n for n in names() if n.startswith("ch7.")]


def test_chapter_7_has_six_exercises():
    assert CH7 == ["ch7.top_p_remove", "ch7.beam_step", "ch7.reorder_beams", "ch7.moe_dispatch",
                   "ch7.moe_combine", "ch7.route_weights"]


@pytest.mark.parametrize("name,key", [(n, m.key) for n in CH7 for m in get(n).mistakes])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_planted_wrong_answers_are_named_in_both_languages(name, key, lang):
    m = next(m for m in get(name).mistakes if m.key == key)
    r = run_check(name, m.fn, lang=lang)
    assert not r.passed and r.hint_key == key, r.message
    assert MESSAGES[lang][name.split(".")[1]][key] in r.message


@pytest.mark.parametrize("name", CH7)
def test_the_reference_passes(name):
    assert run_check(name, get(name).reference, lang="en").passed


def test_the_cases_hold_the_traps():
    beams = get("ch7.reorder_beams").cases()
    assert any(b.shape[0] == 1 for _, b in beams) and any(b.shape[0] > 1 for _, b in beams)
    assert any(b.shape[0] not in (1, b.shape[1]) for _, b in beams), "B != K, B > 1"
    for name in ("ch7.top_p_remove", "ch7.route_weights"):
        for x, _ in get(name).cases():
            assert all(len(set(row.tolist())) == len(row) for row in x), f"{name}: ties"
    for _, scores in get("ch7.beam_step").cases():
        flat = scores.reshape(scores.shape[0], -1)
        assert all(len(set(r.tolist())) == len(r) for r in flat), "ties in the beam scores"
    assert any(e.shape[1] > 1 for _, e in get("ch7.moe_dispatch").cases()), "k > 1"


# --- right answers written another way pass -----------------------------------------------------

def top_p_ascending(logits, p):  # transformers' way: sort ascending, cut at 1 - p
    s, order = logits.sort(-1)
    remove = s.softmax(-1).cumsum(-1) <= 1 - p
    remove[:, -1] = False
    return remove.scatter(1, order, remove)


def top_p_gather(logits, p):
    s, order = logits.sort(-1, descending=True)
    probs = s.softmax(-1)
    remove = (probs.cumsum(-1) - probs) >= p
    remove[:, 0] = False
    return remove.gather(-1, order.argsort(-1))


def top_p_loop(logits, p):
    out = torch.zeros_like(logits, dtype=torch.bool)
    for b in range(logits.shape[0]):
        probs = logits[b].softmax(-1)
        mass = 0.0
        for v in logits[b].argsort(descending=True).tolist():
            out[b, v] = mass >= p and mass > 0
            mass += probs[v].item()
    return out


def beam_step_loop(seqs, scores):
    B, K, V = scores.shape
    rows = []
    for b in range(B):
        pairs = sorted(((scores[b, i, v].item(), i, v) for i in range(K) for v in range(V)), reverse=True)[:K]
        rows.append(torch.stack([torch.cat([seqs[b, i], torch.tensor([v])]) for _, i, v in pairs]))
    return torch.stack(rows)


def beam_step_take(seqs, scores):
    B, K, V = scores.shape
    f = scores.flatten(1).topk(K).indices
    beam, token = torch.div(f, V, rounding_mode="floor"), torch.remainder(f, V)
    return torch.cat([torch.take_along_dim(seqs, beam[..., None], dim=1), token[..., None]], -1)


def reorder_loop(cache, beam):
    B, K = beam.shape
    return torch.stack([cache[b * K + beam[b, j]] for b in range(B) for j in range(K)])


def reorder_view(cache, beam):
    B, K = beam.shape
    c = cache.reshape(B, K, -1)
    return c.gather(1, beam[..., None].expand(-1, -1, c.shape[-1])).reshape(cache.shape)


def dispatch_loop(x, experts):
    rows = [x[t] for e in range(int(experts.max()) + 1) for t in range(x.shape[0]) if (experts[t] == e).any()]
    return torch.stack(rows)


def dispatch_where(x, experts):
    return torch.cat([x[torch.where(experts == e)[0]] for e in range(int(experts.max()) + 1)])


def combine_scatter_add(y, order, weights):
    T, k = weights.shape
    tok = (order // k)[:, None].expand(-1, y.shape[1])
    w = weights.flatten().gather(0, order)
    return y.new_zeros(T, y.shape[1]).scatter_add(0, tok, y * w[:, None])


def combine_unsort(y, order, weights):  # transformers' grouped_mm way: inverse permutation, then sum
    T, k = weights.shape
    inv = torch.empty_like(order)
    inv[order] = torch.arange(order.numel())
    return (y[inv].reshape(T, k, -1) * weights[..., None]).sum(1)


def route_softmax_of_topk(router_logits, k):  # softmax over the kept logits == renormalised
    v, e = router_logits.topk(k, -1)
    return torch.zeros_like(router_logits).scatter(1, e, v.softmax(-1))


def route_masked(router_logits, k):
    kth = router_logits.topk(k, -1).values[:, -1:]
    return router_logits.masked_fill(router_logits < kth, float("-inf")).softmax(-1)


@pytest.mark.parametrize("name,answer", [
    ("ch7.top_p_remove", top_p_ascending), ("ch7.top_p_remove", top_p_gather),
    ("ch7.top_p_remove", top_p_loop),
    ("ch7.beam_step", beam_step_loop), ("ch7.beam_step", beam_step_take),
    ("ch7.reorder_beams", reorder_loop), ("ch7.reorder_beams", reorder_view),
    ("ch7.moe_dispatch", dispatch_loop), ("ch7.moe_dispatch", dispatch_where),
    ("ch7.moe_combine", combine_scatter_add), ("ch7.moe_combine", combine_unsort),
    ("ch7.route_weights", route_softmax_of_topk), ("ch7.route_weights", route_masked),
])
def test_right_answers_written_other_ways_pass(name, answer):
    r = run_check(name, answer, lang="en")
    assert r.passed, r.message
