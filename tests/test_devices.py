"""Unit tests of gatherbook.devices.device(): the default choice and the GATHERBOOK_DEVICE override."""
import pytest
import torch

from gatherbook import devices
from gatherbook.devices import device


@pytest.fixture
def cuda(monkeypatch):
    """Pretend CUDA is (or is not) available: cuda(True) / cuda(False)."""
    def set_available(available: bool) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    return set_available


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv(devices.ENV_VAR, raising=False)


@pytest.mark.parametrize("available, expected", [(True, "cuda"), (False, "cpu")])
def test_default_is_cuda_when_available(cuda, available, expected):
    cuda(available)
    assert device() == torch.device(expected)


@pytest.mark.parametrize("available", [True, False])
def test_empty_variable_means_the_default(monkeypatch, cuda, available):
    cuda(available)
    monkeypatch.setenv("GATHERBOOK_DEVICE", "  ")
    assert device() == torch.device("cuda" if available else "cpu")


@pytest.mark.parametrize("value", ["cpu", "CPU", " cpu\n"])
def test_cpu_override_wins_even_with_a_gpu(monkeypatch, cuda, value):
    cuda(True)
    monkeypatch.setenv("GATHERBOOK_DEVICE", value)
    assert device() == torch.device("cpu")


def test_cuda_override_with_a_gpu(monkeypatch, cuda):
    cuda(True)
    monkeypatch.setenv("GATHERBOOK_DEVICE", "cuda")
    assert device() == torch.device("cuda")


def test_cuda_override_without_a_gpu_is_an_error_not_a_fallback(monkeypatch, cuda):
    cuda(False)
    monkeypatch.setenv("GATHERBOOK_DEVICE", "cuda")
    with pytest.raises(ValueError, match=r"GATHERBOOK_DEVICE=cuda, but torch\.cuda\.is_available\(\) is False") as err:
        device()
    assert "unset GATHERBOOK_DEVICE or set it to 'cpu'" in str(err.value)
    assert torch.__version__ in str(err.value)


@pytest.mark.parametrize("value", ["gpu", "tpu", "cuda:1", "mps", "0"])
def test_unknown_value_is_an_error_that_lists_the_choices(monkeypatch, cuda, value):
    cuda(True)
    monkeypatch.setenv("GATHERBOOK_DEVICE", value)
    with pytest.raises(ValueError, match=rf"GATHERBOOK_DEVICE={value!r} is not a device this book knows; "
                                         r"expected one of cpu, cuda"):
        device()


def test_real_machine_default_matches_torch():
    assert device().type == ("cuda" if torch.cuda.is_available() else "cpu")
