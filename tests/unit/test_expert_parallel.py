"""gatherbook.expert_parallel: a MoE layer with its experts split over two gloo processes."""
import pytest
import torch

from gatherbook.expert_parallel import run_expert_parallel
from gatherbook.vocab_parallel import fork_is_safe
from gatherbook.generation import moe_sorted, route, swiglu_experts


def _layer(seed: int, T: int = 8, H: int = 4, E: int = 4, Fh: int = 6):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(T, H, generator=g), torch.randn(T, E, generator=g), torch.randn(E, Fh, H, generator=g),
            torch.randn(E, Fh, H, generator=g), torch.randn(E, H, Fh, generator=g), torch.randn(T, H, generator=g))


# both ways of starting the ranks: forked from this process (the default where it is safe, as in
# the notebook) and fresh interpreters (everywhere else)
STARTS = [pytest.param(True, id="forked", marks=pytest.mark.skipif(
              not fork_is_safe(), reason="forking the ranks is not safe here")),
          pytest.param(False, id="fresh-interpreters")]


@pytest.mark.parametrize("fork", STARTS)
def test_two_processes_match_one_values_and_gradients(fork):
    x, router_logits, w_gate, w_up, w_down, grad_out = _layer(0)
    k = 2
    result = run_expert_parallel(x, router_logits, k, w_gate, w_up, w_down, grad_out, world_size=2,
                                 fork=fork)
    leaves = [t.clone().requires_grad_() for t in (x, router_logits, w_gate, w_up, w_down)]
    weights, experts = route(leaves[1], k)
    out = moe_sorted(leaves[0], weights, experts, swiglu_experts(*leaves[2:]))
    (out * grad_out).sum().backward()
    torch.testing.assert_close(result["out"], out.detach(), atol=1e-5, rtol=1e-5)
    for name, leaf in zip(("x", "router_logits", "w_gate", "w_up", "w_down"), leaves):
        torch.testing.assert_close(result[f"grad_{name}"], leaf.grad, atol=1e-5, rtol=1e-5)
    # the split sizes are the dispatch's counts: rank r sends its rows for experts 2q, 2q + 1 to rank q
    for r in range(2):
        counts = torch.bincount(experts[4 * r:4 * r + 4].reshape(-1), minlength=4)
        assert result["sent"][r] == counts.view(2, 2).sum(1).tolist()
    assert [result["received"][q][r] for q in range(2) for r in range(2)] == \
        [result["sent"][r][q] for q in range(2) for r in range(2)]
    assert len(set(map(tuple, result["sent"]))) > 1 or result["sent"][0][0] != result["sent"][0][1], \
        "the case should send uneven splits"


@pytest.mark.parametrize("fork", STARTS)
def test_a_failing_rank_is_reported_with_its_error(fork, monkeypatch):
    x, router_logits, w_gate, w_up, w_down, _ = _layer(3)
    # a rank whose expert weights cannot be read: both ranks must stop and say why
    monkeypatch.setattr(torch, "save", _save_broken_weights_of_rank_1)
    with pytest.raises(RuntimeError, match="rank 1 exited with"):
        run_expert_parallel(x, router_logits, 2, w_gate, w_up, w_down, world_size=2, fork=fork,
                            timeout=60)


_real_save = torch.save


def _save_broken_weights_of_rank_1(obj, path, *args, **kwargs):
    if str(path).endswith("in1.pt"):
        obj = {**obj, "w_gate": None}
    return _real_save(obj, path, *args, **kwargs)


def test_one_process_is_the_plain_layer():
    x, router_logits, w_gate, w_up, w_down, _ = _layer(1, T=4)
    result = run_expert_parallel(x, router_logits, 2, w_gate, w_up, w_down, world_size=1)
    weights, experts = route(router_logits, 2)
    torch.testing.assert_close(result["out"], moe_sorted(x, weights, experts, swiglu_experts(w_gate, w_up, w_down)),
                               atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("change, error, words", [
    (dict(x=torch.randn(7, 4)), ValueError, "same T"),
    (dict(router_logits=torch.randn(8, 3), w_gate=torch.randn(3, 6, 4), w_up=torch.randn(3, 6, 4),
          w_down=torch.randn(3, 4, 6)), ValueError, "divisible by world_size = 2"),
    (dict(k=5), ValueError, "only E = 4"),
    (dict(w_down=torch.randn(2, 4, 6)), ValueError, "w_down must be (E, ., .) with E = 4"),
    (dict(x=torch.zeros(8, 4, dtype=torch.long)), TypeError, "x must"),
])
def test_bad_input_is_named(change, error, words):
    x, router_logits, w_gate, w_up, w_down, _ = _layer(2)
    kwargs = dict(x=x, router_logits=router_logits, k=2, w_gate=w_gate, w_up=w_up, w_down=w_down)
    kwargs.update(change)
    with pytest.raises(error) as info:
        run_expert_parallel(**kwargs)
    assert words in str(info.value)
