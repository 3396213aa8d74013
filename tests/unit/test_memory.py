"""gatherbook.memory.peak_memory: the peak of the tensor memory a call allocates."""
import pytest
import torch

from gatherbook.memory import peak_memory

MB = 1_000_000


def test_a_known_allocation_is_measured():
    def fn():
        x = torch.ones(10 * MB, dtype=torch.float32)  # 40 MB, written so the pages are real
        return x.sum()

    peak = peak_memory(fn)
    assert 40 * MB <= peak < 40 * MB + 64 * 1024


def test_peak_is_the_maximum_held_at_once_not_the_total():
    def one_after_another():
        a = torch.empty(5 * MB // 4)  # 5 MB
        del a
        b = torch.empty(5 * MB // 4)
        del b

    def both_at_once():
        a = torch.empty(5 * MB // 4)
        b = torch.empty(5 * MB // 4)
        return a, b

    assert 5 * MB <= peak_memory(one_after_another) < 6 * MB
    assert 10 * MB <= peak_memory(both_at_once) < 11 * MB


def test_inputs_allocated_before_the_call_do_not_count():
    x = torch.randn(1000, 1000)  # 4 MB
    assert peak_memory(torch.sum, x) < 64 * 1024
    assert peak_memory(lambda t: t * 2, x) >= 4 * MB  # the result is allocated by the call


def test_temporaries_inside_an_operator_are_seen():
    # torch 2.13's eager logsumexp builds exp(x - max) at full size before reducing it
    x = torch.randn(500, 2000)  # 4 MB
    assert peak_memory(torch.logsumexp, x, -1) >= 4 * MB
    assert peak_memory(torch.logsumexp, x, dim=-1) >= 4 * MB  # keyword arguments are passed on


def test_exceptions_propagate_and_the_profiler_is_released():
    def boom():
        torch.empty(100)
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        peak_memory(boom)
    assert peak_memory(lambda: torch.empty(MB // 4)) >= MB  # a second profiler can start


def test_nothing_is_written_to_stderr(capfd):
    peak_memory(lambda: torch.empty(10))
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_bad_arguments():
    with pytest.raises(TypeError, match="fn must be callable.*got Tensor"):
        peak_memory(torch.zeros(3))
    with pytest.raises(ValueError, match="device must be a CPU or CUDA device; got meta"):
        peak_memory(lambda: None, device="meta")
    with pytest.raises(ValueError, match="got meta"):
        peak_memory(torch.sum, torch.zeros(3, device="meta"))  # the device of the first tensor
    for device in ("gpu", 3.5):
        with pytest.raises(ValueError, match=rf"device must be a CPU or CUDA device .* or None; got {device!r}"):
            peak_memory(lambda: None, device=device)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_cuda_uses_the_allocator_statistics():
    x = torch.randn(1000, 1000, device="cuda")
    assert peak_memory(lambda t: t.exp(), x) >= 4 * MB
    assert peak_memory(lambda: torch.ones(10 * MB, device="cuda"), device="cuda") >= 40 * MB
