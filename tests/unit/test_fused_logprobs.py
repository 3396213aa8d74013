"""gatherbook.fused_logprobs: log-probs from hidden states and the LM head, logits never whole."""
import pytest
import torch

from gatherbook.fused_logprobs import fused_token_logprobs
from gatherbook.logprobs import token_logprobs
from gatherbook.memory import peak_memory


def _inputs(B=2, L=5, H=4, V=11, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(B, L, H, generator=g, dtype=dtype)
    weight = torch.randn(V, H, generator=g, dtype=dtype)
    ids = torch.randint(0, V, (B, L), generator=g)
    return hidden, weight, ids


@pytest.mark.parametrize("token_chunk, vocab_chunk", [(3, 4), (1, 1), (100, 100), (2, 11), (4, 5)])
def test_gradcheck_float64(token_chunk, vocab_chunk):
    hidden, weight, ids = _inputs()
    hidden.requires_grad_()
    weight.requires_grad_()
    fn = lambda h, w: fused_token_logprobs(h, w, ids, token_chunk=token_chunk, vocab_chunk=vocab_chunk)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (hidden, weight))


def test_values_and_gradients_equal_the_naive_line_in_float32():
    hidden, weight, ids = _inputs(B=3, L=7, H=16, V=300, dtype=torch.float32, seed=1)
    hidden.requires_grad_()
    weight.requires_grad_()
    fused = fused_token_logprobs(hidden, weight, ids, token_chunk=5, vocab_chunk=64)
    naive = token_logprobs(hidden @ weight.T, ids)
    assert fused.shape == ids.shape and fused.dtype == torch.float32
    torch.testing.assert_close(fused, naive, atol=1e-5, rtol=1e-5)
    w = torch.rand(ids.shape)
    gf = torch.autograd.grad((fused * w).sum(), (hidden, weight))
    gn = torch.autograd.grad((naive * w).sum(), (hidden, weight))
    for a, b in zip(gf, gn):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_large_logits_do_not_overflow():
    hidden, weight, ids = _inputs(B=1, L=4, H=3, V=20, dtype=torch.float32)
    hidden = hidden * 200  # logits in the thousands: exp overflows without the running max
    out = fused_token_logprobs(hidden, weight, ids, vocab_chunk=3)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, token_logprobs(hidden @ weight.T, ids), atol=1e-3, rtol=1e-4)


def test_flat_and_one_dim_shapes():
    hidden, weight, ids = _inputs()
    flat = fused_token_logprobs(hidden.reshape(-1, 4), weight, ids.reshape(-1))
    assert flat.shape == (10,)
    torch.testing.assert_close(flat.view(2, 5), fused_token_logprobs(hidden, weight, ids))
    one = fused_token_logprobs(hidden[0, 0], weight, ids[0, 0])
    assert one.shape == ()


def test_bfloat16_is_computed_in_float32():
    hidden, weight, ids = _inputs(dtype=torch.float32)
    out = fused_token_logprobs(hidden.bfloat16(), weight.bfloat16(), ids)
    assert out.dtype == torch.float32
    exact = token_logprobs(hidden.bfloat16().float() @ weight.bfloat16().float().T, ids)
    torch.testing.assert_close(out, exact, atol=1e-5, rtol=1e-5)


def test_memory_is_bounded_by_a_tile():
    hidden, weight, ids = _inputs(B=2, L=256, H=32, V=8000, dtype=torch.float32)
    logits_bytes = 2 * 256 * 8000 * 4
    peak = peak_memory(fused_token_logprobs, hidden, weight, ids, token_chunk=32, vocab_chunk=1024)
    assert peak < 0.1 * logits_bytes


def test_backward_memory_is_bounded_too():
    hidden, weight, ids = _inputs(B=2, L=256, H=32, V=8000, dtype=torch.float32)
    hidden.requires_grad_()
    weight.requires_grad_()
    logits_bytes = 2 * 256 * 8000 * 4

    def train():
        fused_token_logprobs(hidden, weight, ids, token_chunk=32, vocab_chunk=1024).sum().backward()

    grads = hidden.numel() * 4 + weight.numel() * 4
    assert peak_memory(train) < 0.1 * logits_bytes + grads


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(hidden=[1.0]), TypeError, "hidden must be a torch.Tensor"),
    (dict(hidden=torch.ones(2, 5, 4, dtype=torch.long)), TypeError, "floating-point"),
    (dict(weight=torch.ones(11, 4, dtype=torch.float32)), TypeError, "same dtype"),
    (dict(ids=torch.zeros(2, 5)), TypeError, "integer tensor"),
    (dict(weight=torch.ones(11, 4, 1, dtype=torch.float64)), ValueError, "(V, H)"),
    (dict(weight=torch.ones(11, 3, dtype=torch.float64)), ValueError, "H = weight.shape[1] = 3"),
    (dict(ids=torch.zeros(2, 4, dtype=torch.long)), ValueError, "ids must have shape"),
    (dict(ids=torch.full((2, 5), 11)), ValueError, "[0, 11)"),
    (dict(ids=torch.full((2, 5), -100)), ValueError, "got id -100"),
    (dict(token_chunk=0), ValueError, "token_chunk must be a positive int"),
    (dict(vocab_chunk=2.5), TypeError, "vocab_chunk must be a positive int"),
])
def test_bad_input_is_named(kwargs, error, words):
    hidden, weight, ids = _inputs()
    args = dict(hidden=hidden, weight=weight, ids=ids)
    chunks = {k: kwargs.pop(k) for k in ("token_chunk", "vocab_chunk") if k in kwargs}
    args.update(kwargs)
    with pytest.raises(error) as info:
        fused_token_logprobs(args["hidden"], args["weight"], args["ids"], **chunks)
    assert words in str(info.value)
