"""gatherbook.logprobs.token_logprobs: the naive and the chunked paths agree, bad input is named."""
import pytest
import torch
import torch.nn.functional as F

from gatherbook.logprobs import token_logprobs
from gatherbook.memory import peak_memory


def naive(logits, ids):
    return logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


def case(shape, dtype=torch.float32, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)
    ids = torch.randint(0, shape[-1], shape[:-1], generator=g)
    return logits, ids


SHAPES = [(11,), (5, 11), (2, 3, 17), (3, 1, 4, 9), (1, 13, 50), (4, 7, 1)]
CHUNKS = [1, 3, 4, 7, 64, 1000]  # 4 divides 12 rows of (3, 1, 4, 9); 3 and 7 leave remainders


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype,atol", [(torch.float32, 2e-6), (torch.float64, 1e-12)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_chunked_equals_naive(shape, dtype, atol, seed):
    logits, ids = case(shape, dtype, seed)
    expected = naive(logits, ids)
    assert torch.equal(token_logprobs(logits, ids), expected)  # chunk_size=None is the one-liner
    for chunk in CHUNKS:
        got = token_logprobs(logits, ids, chunk_size=chunk)
        assert got.shape == ids.shape and got.dtype == dtype
        torch.testing.assert_close(got, expected, atol=atol, rtol=0)


def test_equals_a_loop_over_positions():
    logits, ids = case((2, 5, 7))
    loop = torch.tensor([[logits[b, t].log_softmax(-1)[ids[b, t]] for t in range(5)] for b in range(2)])
    torch.testing.assert_close(token_logprobs(logits, ids, chunk_size=3), loop)


@pytest.mark.parametrize("chunk", [None, 2, 5])
def test_views_that_cannot_be_flattened(chunk):
    logits, ids = case((3, 8, 10))
    sliced, sliced_ids = logits[:, :-1], ids[:, 1:]  # not viewable as (3 * 7, 10)
    torch.testing.assert_close(token_logprobs(sliced, sliced_ids, chunk_size=chunk), naive(sliced, sliced_ids))
    t = logits.transpose(0, 1)  # vocabulary still last, other strides permuted
    torch.testing.assert_close(token_logprobs(t, ids.T, chunk_size=chunk), naive(t, ids.T))
    strided = logits.transpose(-1, -2).contiguous().transpose(-1, -2)  # vocabulary dim not contiguous
    torch.testing.assert_close(token_logprobs(strided, ids, chunk_size=chunk), naive(logits, ids))


def test_int32_ids_accepted():
    logits, ids = case((2, 6, 9))
    torch.testing.assert_close(token_logprobs(logits, ids.int(), chunk_size=4), naive(logits, ids))


@pytest.mark.parametrize("chunk", [None, 3])
def test_ignore_index_matches_cross_entropy(chunk):
    logits, ids = case((3, 6, 8))
    labels = ids.clone()
    labels[0, 4:] = -100
    labels[2, :2] = -100
    got = token_logprobs(logits, labels, chunk_size=chunk, ignore_index=-100)
    ce = F.cross_entropy(logits.transpose(1, 2), labels, ignore_index=-100, reduction="none")
    torch.testing.assert_close(got, -ce)
    assert (got[labels == -100] == 0).all()
    # an ignore_index inside the vocabulary works too
    got0 = token_logprobs(logits, ids, chunk_size=chunk, ignore_index=0)
    assert (got0[ids == 0] == 0).all()
    torch.testing.assert_close(got0[ids != 0], naive(logits, ids)[ids != 0])


def test_empty_input():
    logits, ids = torch.zeros(0, 5), torch.zeros(0, dtype=torch.long)
    assert token_logprobs(logits, ids).shape == (0,)
    assert token_logprobs(logits, ids, chunk_size=2).shape == (0,)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_is_computed_in_float32(dtype):
    g = torch.Generator().manual_seed(0)
    logits = (torch.randn(64, 2000, generator=g) * 2 + 20).to(dtype)
    ids = torch.randint(0, 2000, (64,), generator=g)
    logits[torch.arange(64), ids] += 12  # confident: log-probs near 0, logsumexp near 32
    exact = naive(logits.double(), ids)
    chunked = token_logprobs(logits, ids, chunk_size=16)
    assert chunked.dtype == torch.float32
    assert (chunked.double() - exact).abs().max() < 1e-5
    plain = token_logprobs(logits, ids)
    assert plain.dtype == dtype  # the one-liner keeps the dtype
    lse_in_low_precision = logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1)
    err_lse = (lse_in_low_precision.double() - exact).abs().max()
    err_plain = (plain.double() - exact).abs().max()
    assert err_lse > 2 * err_plain  # why the chunks are upcast rather than subtracted in low precision


@pytest.mark.parametrize("chunk", [1, 4, 7])
def test_gradients_equal_the_naive_ones(chunk):
    logits, ids = case((2, 5, 13), torch.float64)
    w = torch.randn(2, 5, dtype=torch.float64)
    a = logits.clone().requires_grad_()
    (naive(a, ids) * w).sum().backward()
    b = logits.clone().requires_grad_()
    (token_logprobs(b, ids, chunk_size=chunk) * w).sum().backward()
    torch.testing.assert_close(b.grad, a.grad, atol=1e-12, rtol=0)
    c = logits[:, :4].clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda x: token_logprobs(x, ids[:, :4], chunk_size=chunk, ignore_index=3), (c,))


def test_chunked_bounds_the_extra_memory():
    logits, ids = case((4, 64, 4000))  # 4 MB of float32 logits
    full = peak_memory(token_logprobs, logits, ids)
    chunked = peak_memory(token_logprobs, logits, ids, chunk_size=16)
    row = 4000 * 4
    assert full >= logits.numel() * 4
    assert chunked <= 3 * 16 * row + 64 * 1024
    sliced = peak_memory(token_logprobs, logits[:, :-1], ids[:, 1:], chunk_size=16)
    assert sliced <= 3 * 16 * row + 64 * 1024  # no contiguous copy of the slice


# --- bad input: the message names the argument, what it got and what it needs -------------------

def test_ids_must_be_integers():
    logits, ids = case((2, 3, 5))
    with pytest.raises(TypeError, match=r"ids must be an integer tensor.*got dtype torch\.float32"):
        token_logprobs(logits, ids.float())
    with pytest.raises(TypeError, match=r"ids must be an integer tensor.*got dtype torch\.bool"):
        token_logprobs(logits, ids > 2)
    with pytest.raises(TypeError, match=r"ids must be a torch\.Tensor.*got list"):
        token_logprobs(logits, ids.tolist())


def test_logits_must_be_floating_point():
    logits, ids = case((2, 3, 5))
    with pytest.raises(TypeError, match=r"logits must be a floating-point tensor.*got dtype torch\.int64"):
        token_logprobs(logits.long(), ids)
    with pytest.raises(TypeError, match=r"logits must be a torch\.Tensor of shape \(\.\.\., V\); got ndarray"):
        token_logprobs(logits.numpy(), ids)
    with pytest.raises(ValueError, match="0-dim"):
        token_logprobs(torch.tensor(1.0), torch.tensor(0))


def test_shapes_must_match():
    logits, ids = case((2, 4, 5))
    with pytest.raises(ValueError) as err:
        token_logprobs(logits, ids[:, 1:])
    text = str(err.value)
    assert "ids must have shape logits.shape[:-1] = (2, 4)" in text
    assert "got ids of shape (2, 3) for logits of shape (2, 4, 5)" in text
    assert "off by one" in text and "logits[:, :-1]" in text and "ids[:, 1:]" in text
    with pytest.raises(ValueError, match=r"trailing dim of size 1.*without the unsqueeze\(-1\)"):
        token_logprobs(logits, ids.unsqueeze(-1))
    with pytest.raises(ValueError, match=r"got ids of shape \(4, 2\)"):
        token_logprobs(logits, ids.T)  # no broadcasting, no transposing


def test_out_of_range_ids_name_position_and_value():
    logits, ids = case((2, 4, 5))
    bad = ids.clone()
    bad[1, 2] = 5
    with pytest.raises(ValueError, match=r"ids\[1, 2\] = 5 is not a valid token id:\s+ids must lie in \[0, V\) = \[0, 5\)"):
        token_logprobs(logits, bad, chunk_size=2)
    bad[1, 2] = -100
    with pytest.raises(ValueError) as err:
        token_logprobs(logits, bad)
    text = str(err.value)
    assert "ids[1, 2] = -100" in text and "padding label" in text
    assert "ignore_index=-100" in text and "masked_fill(~mask, 0)" in text
    # ignore_index only excuses its own value
    bad[0, 0] = -1
    with pytest.raises(ValueError, match=r"ids\[0, 0\] = -1 "):
        token_logprobs(logits, bad, ignore_index=-100)


@pytest.mark.parametrize("chunk", [0, -3])
def test_chunk_size_must_be_positive(chunk):
    logits, ids = case((2, 5))
    with pytest.raises(ValueError, match=rf"chunk_size must be a positive int \(rows per chunk\) or None; got {chunk}"):
        token_logprobs(logits, ids, chunk_size=chunk)


@pytest.mark.parametrize("chunk", [2.0, True, "4"])
def test_chunk_size_must_be_an_int(chunk):
    logits, ids = case((2, 5))
    with pytest.raises(TypeError, match="chunk_size must be a positive int"):
        token_logprobs(logits, ids, chunk_size=chunk)


def test_ignore_index_must_be_an_int():
    logits, ids = case((2, 5))
    with pytest.raises(TypeError, match=r"ignore_index must be an int \(e\.g\. -100\) or None; got -100\.0"):
        token_logprobs(logits, ids, ignore_index=-100.0)


def test_devices_must_match():
    logits, ids = case((2, 5))
    with pytest.raises(ValueError, match="same device; got ids on meta, logits on cpu"):
        token_logprobs(logits, torch.zeros(2, dtype=torch.long, device="meta"))


def test_error_messages_fit_the_page_column():
    """Each line of a message, after 'ValueError: ', fits the book's 88-character code column."""
    logits = torch.randn(32, 512, 151_936 // 64)
    bad_calls = [
        lambda: token_logprobs(logits, torch.zeros(32, 511, dtype=torch.long)),
        lambda: token_logprobs(logits, torch.zeros(32, 512, 1, dtype=torch.long)),
        lambda: token_logprobs(logits, torch.full((32, 512), -100)),
        lambda: token_logprobs(logits, torch.full((32, 512), 10_000)),
    ]
    for call in bad_calls:
        with pytest.raises(ValueError) as info:
            call()
        for line in f"ValueError: {info.value}".splitlines():
            assert len(line) <= 88, line
