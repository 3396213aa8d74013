"""tests/nbval_sanitize.cfg: an output printed on CUDA compares equal to the stored CPU output.

The stored outputs are made on the CPU; on a GPU the same cells print ``device='cuda:0'`` first
among the suffixes after the values. torch starts a new line for any suffix that does not fit in the
last line (the suffixes after it share that line if they fit), so the longer CUDA suffix moves the
line breaks of ``dtype=`` and ``grad_fn=`` too. These tests print each tensor twice with torch's own printing code, once
as it is (CPU) and once with the device suffix CUDA adds (torch puts it first among the suffixes).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from nbval.plugin import get_sanitize_patterns

CONFIG = Path(__file__).resolve().parents[1] / "nbval_sanitize.cfg"


def sanitize(text: str) -> str:
    for regex, replace in get_sanitize_patterns(CONFIG.read_text(encoding="utf-8")):
        text = re.sub(regex, replace, text)
    return text


def printed(value: object, monkeypatch: pytest.MonkeyPatch, *, cuda: bool) -> str:
    """``repr(value)`` as the CPU prints it, or as CUDA would (the device suffix added first)."""
    real = torch._tensor_str._add_suffixes
    if cuda:
        monkeypatch.setattr(torch._tensor_str, "_add_suffixes",
                            lambda s, suffixes, indent, force_newline: real(
                                s, ["device='cuda:0'", *suffixes], indent, force_newline))
    try:
        return repr(value)
    finally:
        monkeypatch.setattr(torch._tensor_str, "_add_suffixes", real)


LEAF = torch.tensor([-1.5, -0.25, -2.0, -1.32] * 3, requires_grad=True)
TENSORS = {
    "short": torch.tensor([3, 1, 2]),
    "scalar": torch.tensor(0.5),
    "full last line (device on its own line)": torch.arange(45, 61),          # ch4's patch ids
    "rows of a matrix": torch.arange(48).reshape(3, 16) - 100,               # ch2's labels
    "grad_fn after the device": LEAF.log_softmax(0).unsqueeze(0).squeeze(0),  # ch3's log-probs
    "dtype after the device": torch.arange(20, dtype=torch.int32),
    "dtype and grad_fn after the device": torch.tensor([-6.0, 6.0], dtype=torch.float16,
                                                       requires_grad=True) * 1,
}


@pytest.mark.parametrize("name", TENSORS)
def test_a_cuda_print_compares_equal_to_the_cpu_print(name, monkeypatch):
    cpu = printed(TENSORS[name], monkeypatch, cuda=False)
    cuda = printed(TENSORS[name], monkeypatch, cuda=True)
    assert "device='cuda:0'" in cuda and cuda != cpu
    assert sanitize(cuda) == sanitize(cpu)


def test_different_values_still_differ(monkeypatch):
    cpu = printed(torch.arange(45, 61), monkeypatch, cuda=False)
    cuda = printed(torch.arange(45, 61) + 1, monkeypatch, cuda=True)
    assert sanitize(cuda) != sanitize(cpu)
