"""gatherbook.generation (Chapter 7): the sampling filters, beam search and Mixture of Experts,
against loops, against each other, and against the installed transformers (no download)."""
import matplotlib

matplotlib.use("Agg")

import re  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

from gatherbook.figures.generation import draw_beam_step, draw_capacity, draw_routing, draw_top_p  # noqa: E402
from gatherbook.generation import (beam_offsets, beam_search, capacity_slots, combine, dispatch,  # noqa: E402
                                   flat_topk, greedy, load_balancing_loss, moe_loop, moe_sorted,
                                   reorder_cache, repetition_penalty, route, sample, swiglu_experts,
                                   top_k_filter, top_p_filter, top_p_filter_gather)

INF = float("-inf")


def _rows(seed=0, B=200, V=30, scale=2.0):
    return torch.randn(B, V, generator=torch.Generator().manual_seed(seed)) * scale


# --- sampling ------------------------------------------------------------------------------------

def test_greedy_is_argmax_and_ties_go_to_the_lowest_id():
    assert greedy(torch.tensor([[1.0, 3.0, 3.0], [0.0, -1.0, 0.5]])).tolist() == [1, 2]


def test_top_k_keeps_the_k_largest_and_every_tie_at_the_cut():
    x = _rows(1)
    out = top_k_filter(x, 5)
    for row, o in zip(x, out):
        kept = set(torch.isfinite(o).nonzero().flatten().tolist())
        assert kept == set(row.topk(5).indices.tolist())
    tied = torch.tensor([[2.0, 1.0, 1.0, 0.0]])
    assert torch.isfinite(top_k_filter(tied, 2)).sum() == 3
    assert torch.isfinite(top_k_filter(tied, 1, min_tokens_to_keep=2)).sum() == 3
    assert torch.equal(top_k_filter(tied, 10), tied)


def _top_p_loop(row, p, keep):
    probs = row.softmax(-1)
    remove = torch.zeros_like(row, dtype=torch.bool)
    mass = 0.0
    for rank, v in enumerate(row.argsort(descending=True, stable=True).tolist()):
        remove[v] = rank >= keep and mass >= p
        mass += probs[v].item()
    return remove


@pytest.mark.parametrize("p", [0.0, 0.3, 0.9])
@pytest.mark.parametrize("keep", [1, 4])
def test_top_p_equals_a_loop_and_the_gather_form(p, keep):
    x = _rows(2, B=50, V=12)
    out = top_p_filter(x, p, keep)
    assert torch.equal(out, top_p_filter_gather(x, p, keep))
    for row, o in zip(x, out):
        assert torch.equal(torch.isinf(o), _top_p_loop(row, p, keep))
    assert torch.equal(out[torch.isfinite(out)], x[torch.isfinite(out)])  # kept logits unchanged


def test_top_p_keeps_the_crossing_token_and_works_on_any_leading_shape():
    x = torch.tensor([[1.0, 3.0, -1.0, 2.5, 0.0, 2.0]])
    assert torch.isfinite(top_p_filter(x, 0.8)).nonzero()[:, 1].tolist() == [1, 3, 5]
    x3 = _rows(3, B=6, V=7).reshape(2, 3, 7)
    assert torch.equal(top_p_filter(x3, 0.6), top_p_filter(x3.reshape(6, 7), 0.6).reshape(2, 3, 7))


def test_top_p_rejects_a_bad_p():
    with pytest.raises(ValueError, match="p must lie in"):
        top_p_filter(_rows(), 1.5)


def test_sample_is_seeded_never_draws_inf_and_follows_the_softmax():
    logits = torch.tensor([[0.0, 1.0, -1.0, INF]]).expand(20000, 4).contiguous()
    a = sample(logits, torch.Generator().manual_seed(0))
    b = sample(logits, torch.Generator().manual_seed(0))
    assert torch.equal(a, b) and a.dtype == torch.int64 and a.shape == (20000,)
    assert (a != 3).all()
    freq = torch.bincount(a, minlength=4).float() / len(a)
    assert torch.allclose(freq[:3], logits[0, :3].softmax(-1), atol=0.015)
    hot = sample(logits[:2000], torch.Generator().manual_seed(1), temperature=0.1)
    assert (hot == 1).float().mean() > 0.99


def test_sample_refuses_a_row_without_a_finite_logit():
    with pytest.raises(ValueError, match="no finite value"):
        sample(torch.tensor([[0.0, 1.0], [INF, INF]]), torch.Generator())
    with pytest.raises(ValueError, match="temperature"):
        sample(torch.zeros(1, 3), torch.Generator(), temperature=0.0)


# --- beam search --------------------------------------------------------------------------------

def test_flat_topk_recovers_beam_and_token_with_div_and_mod():
    s = _rows(4, B=3 * 4, V=7).reshape(3, 4, 7)
    values, beam, token = flat_topk(s, 4)
    assert torch.equal(values, s[torch.arange(3)[:, None], beam, token])
    for b in range(3):
        ranked = sorted(((s[b, i, v].item(), i, v) for i in range(4) for v in range(7)), reverse=True)[:4]
        assert [(i, v) for _, i, v in ranked] == list(zip(beam[b].tolist(), token[b].tolist()))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_flat_topk_and_route_say_what_k_may_be(lang):
    """A k larger than the pairs (or experts) to choose from names k, the count and the range
    (torch said only "selected index k out of range": issue 37), in the notebook's language."""
    from gatherbook.wordbook import table

    words = table(lang)["generation"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("gatherbook.runtime.language", lambda: lang)  # the notebook's language
        with pytest.raises(ValueError) as flat:
            flat_topk(torch.zeros(2, 2, 3), 7)
        with pytest.raises(ValueError) as routed:
            route(torch.zeros(4, 3), 4)
    assert str(flat.value) == words["flat_topk_k"].format(k=7, K=2, V=3, n=6, shape=(2, 2, 3))
    assert "[1, 6]" in str(flat.value) and "k = 7" in str(flat.value)
    assert str(routed.value) == words["route_k"].format(k=4, E=3, shape=(4, 3))
    assert "[1, 3]" in str(routed.value) and "k = 4" in str(routed.value)
    with pytest.raises(ValueError, match="k must be an int >= 1, got 0"):
        route(torch.zeros(4, 3), 0)
    with pytest.raises(TypeError, match="k must be an int"):
        flat_topk(torch.zeros(2, 2, 3), 2.0)
    assert flat_topk(torch.zeros(2, 2, 3), 6)[0].shape == (2, 6)  # every pair: allowed
    assert route(torch.zeros(4, 3), 3)[0].shape == (4, 3)


def test_beam_offsets_add_b_times_k():
    assert beam_offsets(torch.tensor([[1, 0, 0], [2, 2, 1]])).tolist() == [1, 0, 0, 5, 5, 4]
    assert beam_offsets(torch.tensor([[1, 1]])).tolist() == [1, 1]


def test_reorder_cache_is_index_select_along_dim_0():
    cache = [torch.arange(24.0).reshape(6, 2, 2), torch.arange(6)]
    idx = torch.tensor([2, 2, 0, 4, 3, 3])
    out = reorder_cache(cache, idx)
    assert torch.equal(out[0], cache[0][idx]) and out[1].tolist() == [2, 2, 0, 4, 3, 3]


def _toy_step(V=6, seed=0):
    table = torch.randn(V, V, generator=torch.Generator().manual_seed(seed)).log_softmax(-1)
    return lambda seqs: table[seqs[:, -1]]  # a bigram model: (N, L) -> (N, V)


def test_beam_search_of_a_batch_equals_each_row_alone():
    step = _toy_step()
    prompts = torch.tensor([[0, 3], [5, 1], [2, 2]])
    best, logp = beam_search(step, prompts, 3, 5)
    for b in range(3):
        one, one_logp = beam_search(step, prompts[b:b + 1], 3, 5)
        assert torch.equal(best[b], one[0]) and torch.allclose(logp[b], one_logp[0])
    assert best.shape == (3, 7) and torch.equal(best[:, :2], prompts)


def test_beam_search_with_one_beam_is_greedy():
    step = _toy_step(seed=1)
    seqs = torch.tensor([[4]])
    for _ in range(5):
        seqs = torch.cat([seqs, greedy(step(seqs))[:, None]], 1)
    assert torch.equal(beam_search(step, torch.tensor([[4]]), 1, 5)[0], seqs)


# --- Mixture of Experts --------------------------------------------------------------------------

def _moe(seed=0, T=9, H=5, Fh=7, E=4, k=2):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(T, H, generator=g)
    router = torch.randn(T, E, generator=g)
    w = [torch.randn(E, Fh, H, generator=g), torch.randn(E, Fh, H, generator=g), torch.randn(E, H, Fh, generator=g)]
    return x, router, w, k


def test_route_renormalises_the_top_k_of_the_softmax():
    _, router, _, k = _moe()
    weights, experts = route(router, k)
    assert torch.allclose(weights.sum(-1), torch.ones(len(router)))
    assert torch.equal(experts, router.topk(k).indices)
    assert torch.allclose(weights, router.topk(k).values.softmax(-1), atol=1e-6)


def test_dispatch_groups_tokens_by_expert_in_token_order():
    x = torch.arange(4.0)[:, None].expand(4, 2)
    experts = torch.tensor([[1, 0], [0, 2], [2, 1], [0, 3]])
    x_sorted, order, counts = dispatch(x, experts)
    assert x_sorted[:, 0].tolist() == [0, 1, 3, 0, 2, 1, 2, 3]
    assert counts.tolist() == [3, 2, 2, 1] and order.tolist() == [1, 2, 6, 0, 5, 3, 4, 7]


def test_combine_equals_scatter_add_and_a_loop():
    x, router, w, k = _moe(1)
    weights, experts = route(router, k)
    x_sorted, order, _ = dispatch(x, experts)
    out = combine(x_sorted, order, weights, len(x))
    assert torch.allclose(out, x * 1.0, atol=1e-6)  # the weights of a token sum to 1


@pytest.mark.parametrize("k", [1, 2, 3])
def test_sorted_dispatch_equals_the_loop_in_values_and_gradients(k):
    x, router, w, _ = _moe(2, k=k)
    leaves = [t.clone().requires_grad_() for t in (x, router, *w)]
    outs = []
    for fn in (moe_loop, moe_sorted):
        xx, rr, *ww = leaves
        weights, experts = route(rr, k)
        outs.append(fn(xx, weights, experts, swiglu_experts(*ww)))
    assert torch.allclose(outs[0], outs[1], atol=1e-5)
    ga = torch.autograd.grad(outs[0].square().sum(), leaves)
    gb = torch.autograd.grad(outs[1].square().sum(), leaves)
    scale = max(a.abs().max().item() for a in ga)  # float32 rounding grows with the values
    assert all((a - b).abs().max() <= 1e-5 * scale for a, b in zip(ga, gb))


def test_an_expert_nobody_chose_is_skipped():
    x, router, w, k = _moe(3, E=5)
    router[:, 4] = -1e4  # expert 4 is never in anyone's top k
    weights, experts = route(router, k)
    fns = swiglu_experts(*w)
    assert torch.allclose(moe_sorted(x, weights, experts, fns), moe_loop(x, weights, experts, fns), atol=1e-5)


# --- against the installed transformers ---------------------------------------------------------

def test_filters_equal_transformers_warpers():
    lp = pytest.importorskip("transformers.generation.logits_process")
    x = _rows(5, B=500, V=40)
    for k in (1, 3, 39):
        for m in (1, 5):
            assert torch.equal(top_k_filter(x, k, m), lp.TopKLogitsWarper(k, min_tokens_to_keep=m)(None, x))
    for p in (0.05, 0.5, 0.95):
        for m in (1, 3):
            assert torch.equal(top_p_filter(x, p, m), lp.TopPLogitsWarper(p, min_tokens_to_keep=m)(None, x))


def test_reorder_cache_equals_dynamic_cache():
    transformers = pytest.importorskip("transformers")
    config = transformers.MixtralConfig(hidden_size=8, num_hidden_layers=3, num_attention_heads=2,
                                        num_key_value_heads=2, num_local_experts=2, intermediate_size=8)
    kv = [torch.randn(6, 2, 3, 4) for _ in range(6)]
    cache = transformers.DynamicCache(config=config)
    for layer in range(3):
        cache.update(kv[2 * layer], kv[2 * layer + 1], layer)
    idx = beam_offsets(torch.tensor([[2, 0, 0], [1, 1, 2]]))
    cache.reorder_cache(idx)
    theirs = [t for layer in cache.layers for t in (layer.keys, layer.values)]
    assert all(torch.equal(a, b) for a, b in zip(reorder_cache(kv, idx), theirs))


def test_moe_equals_mixtral_sparse_moe_block_in_values_and_gradients():
    transformers = pytest.importorskip("transformers")
    from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock

    transformers.logging.set_verbosity_error()
    config = transformers.MixtralConfig(hidden_size=12, intermediate_size=20, num_local_experts=5,
                                        num_experts_per_tok=2)
    torch.manual_seed(0)
    block = MixtralSparseMoeBlock(config)
    for p in block.parameters():
        torch.nn.init.normal_(p, std=0.3)
    h = torch.randn(3, 4, 12)
    h1, h2 = h.clone().requires_grad_(), h.clone().requires_grad_()
    params = [block.gate.weight, block.experts.gate_up_proj, block.experts.down_proj]
    mine = [p.detach().clone().requires_grad_() for p in params]
    weights, experts = route(h2.reshape(-1, 12) @ mine[0].T, 2)
    fns = swiglu_experts(*mine[1].chunk(2, dim=1), mine[2])
    ours = moe_sorted(h2.reshape(-1, 12), weights, experts, fns).reshape(h.shape)
    theirs = block(h1)
    assert torch.allclose(ours, theirs, atol=1e-5, rtol=1e-5)
    ga = torch.autograd.grad(theirs.square().sum(), [h1, *params])
    gb = torch.autograd.grad(ours.square().sum(), [h2, *mine])
    assert all(torch.allclose(a, b, atol=1e-4, rtol=1e-4) for a, b in zip(ga, gb))


# --- the picture --------------------------------------------------------------------------------

def test_routing_picture_fits_a_phone_and_checks_its_input():
    fig = draw_routing(torch.tensor([[0, 2], [2, 1], [1, 3]]), 4)
    assert fig.get_size_inches()[0] <= 3.5
    with pytest.raises(TypeError, match="integer"):
        draw_routing(torch.zeros(3, 2))
    with pytest.raises(ValueError, match="1..8 tokens"):
        draw_routing(torch.zeros(9, 2, dtype=torch.long))
    matplotlib.pyplot.close("all")


def test_the_new_pictures_fit_a_phone_and_check_their_input():
    scores = torch.tensor([[-1.0, -2.6, -0.9, -4.0, -3.1], [-0.7, -3.3, -2.2, -1.5, -5.0]])
    experts = torch.tensor([[0, 2], [2, 1], [1, 3], [1, 0], [0, 2], [2, 3]])
    figs = [draw_beam_step(scores, 2), draw_beam_step(scores[None], 2),
            draw_top_p(torch.tensor([[1.0, 0.8, 0.6, 0.4], [4.0, 0.0, -1.0, -2.0]]), 0.8),
            draw_capacity(experts, capacity_slots(experts, 4), 2)]
    for fig in figs:
        assert fig.get_size_inches()[0] <= 3.9  # 390 CSS px at 100 px per inch
    with pytest.raises(ValueError, match="num_beams"):
        draw_beam_step(scores, 3)
    with pytest.raises(ValueError, match="p must lie in"):
        draw_top_p(scores, 1.5)
    with pytest.raises(ValueError, match="slots of the same shape"):
        draw_capacity(experts, capacity_slots(experts, 4)[:3], 2)
    with pytest.raises(ValueError, match=r"ids in \[0, 8\)"):
        draw_capacity(experts + 6, capacity_slots(experts + 6, 10), 2)
    matplotlib.pyplot.close("all")



def test_the_pictures_speak_code_not_english():
    """One figure serves both editions: every word a Chapter 7 picture draws (a title, an axis,
    a key, a cell) is a name from the chapter's code, so the Chinese edition shows no English
    (issue 37: 'row 0: keeps 5', 'token id, most likely first', 'old cache' were drawn there)."""
    import io
    import json
    import re
    import tokenize
    from pathlib import Path

    from matplotlib.text import Text

    nb = json.loads((Path(__file__).resolve().parents[2] / "notebooks/en/07_generation.ipynb").read_text("utf8"))
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    names = {t.string for t in tokenize.generate_tokens(io.StringIO(code).readline)
             if t.type == tokenize.NAME}  # identifiers, not comments or strings
    scores = torch.tensor([[-1.0, -2.6, -0.9, -4.0, -3.1], [-0.7, -3.3, -2.2, -1.5, -5.0]])
    experts = torch.tensor([[0, 2], [2, 1], [1, 3], [1, 0], [0, 2], [2, 3]])
    flat_sharp = torch.tensor([[0.6, 1.0, 0.2, 0.8, 0.0, 0.4], [0.0, -1.0, 4.0, 0.5, 1.0, -0.5]])
    for fig in (draw_top_p(flat_sharp, 0.8), draw_beam_step(scores, 2),
                draw_capacity(experts, capacity_slots(experts, 4), 2), draw_routing(experts, 4)):
        fig.draw_without_rendering()  # tick labels get their texts
        drawn = " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())
        words = set(re.findall(r"[A-Za-z_]{2,}\w*", drawn))  # e0, x[4], n=3: ids and numbers pass
        assert words and words <= names, sorted(words - names)
    matplotlib.pyplot.close("all")


def test_the_pictures_say_what_their_numbers_are():
    """Issue 37's reader pass: the top-p chart's numbers sit in a row named ``before`` (a "0.00"
    over the tallest bar read as its value) and the dashed cut is labelled ``p = 0.8``; the beam
    grid names its axes ``scores[beam, token]`` and gives the outlined cells' flat positions ``f``;
    each routing group's ``n=`` starts under its ``e0`` (it sat one character right); a dropped
    capacity cell is white, as both editions' captions say."""
    import json
    from pathlib import Path

    from matplotlib.text import Text

    from gatherbook.figures import style

    def drawn(fig):
        fig.draw_without_rendering()
        return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]

    flat_sharp = torch.tensor([[0.6, 1.0, 0.2, 0.8, 0.0, 0.4], [0.0, -1.0, 4.0, 0.5, 1.0, -0.5]])
    texts = drawn(draw_top_p(flat_sharp, 0.8))
    assert texts.count("before") == 2 and texts.count("p = 0.8") == 2, texts
    scores = torch.tensor([[-1.0, -2.6, -0.9, -4.0, -3.1], [-0.7, -3.3, -2.2, -1.5, -5.0]])
    title = next(t for t in drawn(draw_beam_step(scores, 2)) if t.startswith("scores"))
    assert title == "scores[beam, token] (2, 5)\nreshape(-1).topk(2): f = [5, 2]", title
    groups = [t for t in drawn(draw_routing(torch.tensor([[0, 2], [2, 1], [1, 3]]), 4)) if t.startswith("e")]
    assert groups and all(re.fullmatch(r"e\d\nn=\d+", t) for t in groups), groups
    assert style.FAINT_FACE.lower() in ("#ffffff", "#fafafa", "#f4f4f4"), "a dropped cell is near white"
    root = Path(__file__).resolve().parents[2]
    for ed, word, pale in (("en", "white", "pale"), ("zh", "白底", "浅色")):
        nb = json.loads((root / f"notebooks/{ed}/07_generation.ipynb").read_text("utf8"))
        (cap,) = [c["metadata"]["mystnb"] for c in nb["cells"] if c.get("id") == "ch7-cap-fig"]
        for text in (cap["figure"]["caption"], cap["image"]["alt"]):
            assert word in text and pale not in text, (ed, text)
    matplotlib.pyplot.close("all")


# --- at scale: the repetition penalty, capacity, the load-balancing loss ---------------------------

def test_repetition_penalty_is_transformers_processor_and_repeats_write_once():
    from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

    g = torch.Generator().manual_seed(4)
    logits = torch.randn(5, 12, generator=g) * 3
    ids = torch.randint(0, 12, (5, 9), generator=g)
    for penalty in (0.7, 1.3, 2.0):
        theirs = RepetitionPenaltyLogitsProcessor(penalty)(ids, logits.clone())
        assert torch.equal(repetition_penalty(logits, ids, penalty), theirs)
    row = torch.tensor([[2.0, -1.0, 0.5]])
    assert repetition_penalty(row, torch.tensor([[0, 0, 1]]), 2.0).tolist() == [[1.0, -2.0, 0.5]]
    with pytest.raises(TypeError, match="ids must be a \\(B, L\\) int64"):
        repetition_penalty(row, torch.tensor([0, 1]), 2.0)
    with pytest.raises(ValueError, match="penalty must be > 0"):
        repetition_penalty(row, torch.tensor([[0]]), 0.0)


def test_capacity_slots_count_each_experts_earlier_pairs():
    experts = torch.tensor([[0, 2], [2, 1], [1, 3], [1, 0], [0, 2], [2, 3]])
    assert capacity_slots(experts, 4).tolist() == [[0, 0], [1, 0], [1, 0], [2, 1], [2, 2], [3, 1]]
    g = torch.Generator().manual_seed(1)
    experts = torch.stack([torch.randperm(6, generator=g)[:2] for _ in range(20)])
    slots, flat = capacity_slots(experts, 6).reshape(-1), experts.reshape(-1)
    for i in range(flat.numel()):
        assert slots[i] == int((flat[:i] == flat[i]).sum())


def test_load_balancing_loss_is_transformers_and_k_when_uniform():
    from transformers.models.mixtral.modeling_mixtral import load_balancing_loss_func

    g = torch.Generator().manual_seed(2)
    for T, E, k in ((10, 4, 2), (7, 8, 1), (16, 6, 3)):
        router_logits = torch.randn(T, E, generator=g)
        torch.testing.assert_close(load_balancing_loss(router_logits, k),
                                   load_balancing_loss_func((router_logits,), E, k), rtol=1e-6, atol=1e-6)
    # each of 4 tokens prefers another expert, probabilities uniform across tokens: loss = k
    router_logits = torch.eye(4) * 1e-3
    torch.testing.assert_close(load_balancing_loss(router_logits, 1), torch.tensor(1.0), rtol=1e-3, atol=1e-3)


def test_capacity_and_balance_name_bad_input():
    with pytest.raises(TypeError, match="experts must be a \\(T, k\\) int64"):
        capacity_slots(torch.zeros(3, 2), 4)
    with pytest.raises(ValueError, match="lie in \\[0, num_experts\\)"):
        capacity_slots(torch.tensor([[0, 4]]), 4)
    with pytest.raises(ValueError, match="k must be an int in \\[1, E\\] = \\[1, 3\\]"):
        load_balancing_loss(torch.zeros(2, 3), 4)
    with pytest.raises(ValueError, match="must be \\(T, E\\)"):
        load_balancing_loss(torch.zeros(2, 3, 4), 1)
