"""gatherbook.vocab_parallel: per-token log-probs with the vocabulary split over gloo processes."""
import pytest
import torch

from gatherbook.logprobs import token_logprobs
from gatherbook.vocab_parallel import free_port, run_vocab_parallel, vocab_parallel_token_logprobs


def test_two_processes_match_one_values_and_gradient():
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(3, 5, 12, generator=g) * 4
    ids = torch.randint(0, 12, (3, 5), generator=g)
    ids[0, :] = torch.tensor([0, 5, 6, 11, 6])  # ids at both edges of both halves
    weights = torch.rand(3, 5, generator=g)
    result = run_vocab_parallel(logits, ids, weights, world_size=2)
    x = logits.clone().requires_grad_()
    expected = token_logprobs(x, ids)
    (expected * weights).sum().backward()
    assert len(result["out"]) == 2
    for out in result["out"]:
        torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(result["grad"], x.grad, atol=1e-6, rtol=1e-6)
    assert sum(result["owned"]) == ids.numel()
    assert result["owned"] == [int((ids < 6).sum()), int((ids >= 6).sum())]


def test_one_process_is_the_plain_computation():
    logits = torch.randn(4, 6, generator=torch.Generator().manual_seed(0))
    ids = torch.tensor([0, 5, 2, 3])
    result = run_vocab_parallel(logits, ids, world_size=1)
    torch.testing.assert_close(result["out"][0], token_logprobs(logits, ids), atol=1e-6, rtol=1e-6)


def test_free_port_is_a_port():
    assert 0 < free_port() < 65536


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(logits=torch.ones(2, 3, dtype=torch.long)), TypeError, "floating-point"),
    (dict(ids=torch.zeros(2)), TypeError, "integer"),
    (dict(ids=torch.zeros(3, dtype=torch.long)), ValueError, "ids must have shape"),
    (dict(world_size=0), ValueError, "world_size must be an int >= 1"),
    (dict(world_size=4), ValueError, "divisible by world_size = 4"),
    (dict(ids=torch.tensor([0, 6])), ValueError, "[0, 6)"),
    (dict(weights=torch.ones(3)), ValueError, "weights must be a tensor of shape (2,)"),
])
def test_bad_input_is_named(kwargs, error, words):
    args = dict(logits=torch.randn(2, 6), ids=torch.tensor([0, 5]))
    args.update(kwargs)
    with pytest.raises(error) as info:
        run_vocab_parallel(**args)
    assert words in str(info.value)


def test_the_rank_function_checks_its_input_and_needs_a_process_group():
    with pytest.raises(TypeError, match="local_logits"):
        vocab_parallel_token_logprobs(torch.ones(2, 3, dtype=torch.long), torch.zeros(2, dtype=torch.long), 0)
    with pytest.raises(ValueError, match="vocab_start must be >= 0"):
        vocab_parallel_token_logprobs(torch.ones(2, 3), torch.zeros(2, dtype=torch.long), -1)
    with pytest.raises(RuntimeError, match="init_process_group"):
        vocab_parallel_token_logprobs(torch.ones(2, 3), torch.zeros(2, dtype=torch.long), 0)
