"""Peak memory of one function call, on the CPU or on a CUDA device.

CUDA keeps allocator statistics (``torch.cuda.max_memory_allocated``); the CPU has no such
counter. On the CPU, :func:`peak_memory` runs the call under the PyTorch profiler with
``profile_memory=True``, which records every allocation and every free that goes through
PyTorch's CPU allocator, including the buffers an operator allocates internally. The running
sum of those events, in time order, is the memory held by tensors created during the call;
its maximum is the peak.
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable

import torch

__all__ = ["peak_memory"]

# Kineto logs "profiler_start"/"profiler_stop" lines to stderr, which would land in notebook
# outputs. Level 6 silences them; it must be set before the profiler is first used.
os.environ.setdefault("KINETO_LOG_LEVEL", "6")


@contextlib.contextmanager
def _quiet_fd2():
    """Send the C-level stderr (fd 2) to /dev/null for the duration of the block."""
    try:
        saved = os.dup(2)
    except OSError:  # no fd 2 at all: nothing to silence
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _device_of(args: tuple, kwargs: dict, device: torch.device | str | None) -> torch.device:
    if device is not None:
        return torch.device(device)
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device
    return torch.device("cpu")


def _cpu_peak(fn: Callable[..., Any], args: tuple, kwargs: dict) -> int:
    from torch.autograd import DeviceType, profiler

    # torch.autograd.profiler.profile rather than torch.profiler.profile: the latter imports
    # torch._inductor on first use, which costs seconds.
    with _quiet_fd2():
        prof = profiler.profile(profile_memory=True, use_cpu=True)
        prof.__enter__()
    try:
        result = fn(*args, **kwargs)
        del result
    finally:
        with _quiet_fd2():
            prof.__exit__(None, None, None)
    events = sorted(
        (event.start_ns(), event.nbytes())
        for event in prof.kineto_results.events()
        if event.name() == "[memory]" and event.device_type() == DeviceType.CPU
    )
    current = peak = 0
    for _, nbytes in events:
        current += nbytes
        peak = max(peak, current)
    return peak


def _cuda_peak(fn: Callable[..., Any], args: tuple, kwargs: dict, device: torch.device) -> int:
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    result = fn(*args, **kwargs)
    torch.cuda.synchronize(device)
    del result
    return max(0, torch.cuda.max_memory_allocated(device) - before)


def peak_memory(
    fn: Callable[..., Any], *args: Any, device: torch.device | str | None = None, **kwargs: Any
) -> int:
    """Bytes of tensor memory that ``fn(*args, **kwargs)`` needs at its peak.

    Counts only memory allocated *during* the call (inputs that already exist are not counted;
    the result is, since it is allocated by the call, and it is released afterwards).
    ``device`` defaults to the device of the first tensor among the arguments (CPU if none).

    - CUDA: ``torch.cuda.max_memory_allocated`` minus what was allocated before the call.
    - CPU: the maximum of the running sum of the profiler's memory events (allocations
      positive, frees negative) in time order. This sees the temporary buffers an operator
      allocates internally as well as the tensors it returns.

    ``fn`` must be callable and ``device`` a CPU or CUDA device (asserted).

    Introduced in Chapter 2.
    """
    assert callable(fn), f"fn must be a function to measure, got {type(fn).__name__}"
    dev = _device_of(args, kwargs, device)
    assert dev.type in ("cpu", "cuda"), f"device must be a CPU or CUDA device, got {dev}"
    return _cuda_peak(fn, args, kwargs, dev) if dev.type == "cuda" else _cpu_peak(fn, args, kwargs)
