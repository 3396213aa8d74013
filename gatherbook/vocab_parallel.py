"""Vocabulary-parallel per-token log-probs, as in Megatron-style tensor parallelism.

When the LM head is split by rows across ``world_size`` processes, rank ``r`` holds the logits of
the vocabulary entries ``[r * V / world_size, (r + 1) * V / world_size)`` only: no process has a
whole row. :func:`vocab_parallel_token_logprobs` computes ``log_softmax(logits)[id]`` anyway:

1. the global maximum of each row: local ``max``, then ``all_reduce(MAX)``;
2. the global sum of ``exp(logit - max)``: local sum, then ``all_reduce(SUM)``;
3. the chosen logit: each rank gathers only the ids it owns (the others read a dummy column and
   are masked to 0), then ``all_reduce(SUM)`` puts each row's one non-zero value everywhere.

The result, ``picked - (max + log sum)``, is the same on every rank. Its backward needs no
communication: the gradient of rank ``r``'s logits is ``g * (onehot(id) - softmax)`` restricted to
its own columns, and ``softmax`` is known locally once the global logsumexp is.

:func:`run_vocab_parallel` starts ``world_size`` processes on this machine (the gloo backend,
CPU tensors), splits given logits between them, and returns what they computed, so a notebook
or a test can compare it with the single-process result.
"""
from __future__ import annotations

import importlib
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
import torch.distributed as dist

from gatherbook import args

__all__ = ["vocab_parallel_token_logprobs", "run_vocab_parallel", "free_port", "run_ranks", "fork_is_safe"]


class _VocabParallelLogprobs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, local_logits, ids, vocab_start, group):
        x = local_logits.float() if local_logits.dtype in (torch.float16, torch.bfloat16) else local_logits
        width = x.shape[-1]
        row_max = x.max(-1).values
        dist.all_reduce(row_max, op=dist.ReduceOp.MAX, group=group)        # global max per row
        sum_exp = torch.exp(x - row_max[:, None]).sum(-1)
        dist.all_reduce(sum_exp, op=dist.ReduceOp.SUM, group=group)        # global sum of exps
        lse = row_max + torch.log(sum_exp)
        owned = (ids >= vocab_start) & (ids < vocab_start + width)         # ids in my columns
        local_ids = torch.where(owned, ids - vocab_start, torch.zeros_like(ids))
        picked = x.gather(-1, local_ids[:, None]).squeeze(-1) * owned      # 0 where not mine
        dist.all_reduce(picked, op=dist.ReduceOp.SUM, group=group)         # one owner per row
        ctx.save_for_backward(x, lse, owned, local_ids)
        ctx.in_dtype = local_logits.dtype
        return picked - lse

    @staticmethod
    def backward(ctx, grad_out):
        x, lse, owned, local_ids = ctx.saved_tensors
        grad = torch.exp(x - lse[:, None]).mul_(-grad_out[:, None])       # - g * softmax
        rows = owned.nonzero().squeeze(-1)
        grad[rows, local_ids[rows]] += grad_out[rows]                      # + g at my own ids
        return grad.to(ctx.in_dtype), None, None, None


def vocab_parallel_token_logprobs(
    local_logits: torch.Tensor, ids: torch.Tensor, vocab_start: int, group=None
) -> torch.Tensor:
    """This rank's share of ``log_softmax(logits, -1).gather(-1, ids[..., None])[..., 0]``.

    Call it on every rank of ``group`` (an initialised ``torch.distributed`` process group; the
    default group when ``None``) at the same time.

    Args:
        local_logits: ``(..., V_local)``: the columns ``[vocab_start, vocab_start + V_local)`` of
            the full ``(..., V)`` logits.
        ids: ``(...)`` global token ids in ``[0, V)``, the same on every rank.
        vocab_start: the first vocabulary id of this rank's columns.

    Returns:
        ``(...)`` log-probs, equal on every rank; differentiable with respect to ``local_logits``.

    Raises:
        TypeError: non-tensor arguments, non-float logits, non-integer ids, non-int vocab_start.
        ValueError: ``ids.shape != local_logits.shape[:-1]``; a negative ``vocab_start``.
        RuntimeError: ``torch.distributed`` is not initialised.
    """
    args.tensor("local_logits", local_logits, kind="float")
    args.tensor("ids", ids, kind="int")
    if ids.shape != local_logits.shape[:-1]:
        raise ValueError(f"ids must have shape local_logits.shape[:-1] = {tuple(local_logits.shape[:-1])}; "
                         f"got {tuple(ids.shape)}.")
    args.integer("vocab_start", vocab_start, least=0)
    if not dist.is_initialized():
        raise RuntimeError("torch.distributed is not initialised: call dist.init_process_group first "
                           "(run_vocab_parallel does it for you).")
    vocab = local_logits.shape[-1]
    out = _VocabParallelLogprobs.apply(local_logits.reshape(-1, vocab), ids.reshape(-1).long(),
                                       vocab_start, group)
    return out.view(ids.shape)


def free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fork_is_safe() -> bool:
    """Whether the ranks may be forked from this process. A fork copies the caller's torch, so
    it needs no import, but only some states survive it: on Linux (macOS's system libraries and
    Windows do not fork safely), with no accelerator (once a GPU's autograd threads have started,
    a forked child's backward raises: pytorch's wiki, Autograd-and-Fork) and no process group
    already set up here (the child would inherit it)."""
    return (sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
            and not torch.accelerator.is_available() and not dist.is_initialized())


def _forked_rank(module: str, rank: int, world_size: int, port: int, folder: str) -> None:
    """One forked rank: ``module``'s ``_worker``, its error written to ``folder`` for the parent."""
    try:
        importlib.import_module(module)._worker(rank, world_size, port, folder)
    except BaseException:
        (Path(folder) / f"error{rank}.txt").write_text(traceback.format_exc())
        raise SystemExit(1) from None


def _fork_ranks(module: str, world_size: int, folder: str, timeout: float) -> int:
    """Fork ``world_size`` ranks of ``module``'s ``_worker`` and wait for all; return the port.
    RuntimeError with a failed rank's traceback, or on timeout (the ranks are then killed)."""
    port, ctx = free_port(), multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_forked_rank, args=(module, r, world_size, port, folder), daemon=True)
             for r in range(world_size)]
    for proc in procs:
        proc.start()
    deadline = time.monotonic() + timeout
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
    if any(proc.is_alive() for proc in procs):
        for proc in procs:
            proc.kill()
            proc.join()
        raise RuntimeError(f"the {world_size} ranks did not finish within {timeout} s")
    errors = []
    for r, proc in enumerate(procs):
        if proc.exitcode != 0:
            log = Path(folder) / f"error{r}.txt"
            why = log.read_text()[-2000:] if log.exists() else "(no traceback: the process was killed)"
            errors.append(f"rank {r} exited with {proc.exitcode}:\n{why}")
    if errors:
        raise RuntimeError("\n".join(errors))
    return port


def run_ranks(module: str, world_size: int, folder: str, timeout: float, fork: bool | None = None) -> int:
    """Run ``module``'s ``_worker(rank, world_size, port, folder)`` for every rank on a free port of
    127.0.0.1 and wait for all; return the port. Each rank reads its inputs from and writes its
    results to ``folder``. Raises RuntimeError with a failed rank's error output, or on timeout.

    ``fork``: fork the ranks from this process (``True``), or start ``python -m module rank
    world_size port folder`` per rank (``False``); ``None`` forks where :func:`fork_is_safe`. A fork
    starts in milliseconds; a fresh interpreter, unlike multiprocessing's spawn, does not re-import
    the caller's main module (a notebook's kernel), but spends a second or more importing torch.
    """
    if fork_is_safe() if fork is None else fork:
        return _fork_ranks(module, world_size, folder, timeout)
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", module, str(r), str(world_size), str(port), folder],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
             for r in range(world_size)]
    errors = []
    for r, proc in enumerate(procs):
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise RuntimeError(f"rank {r} did not finish within {timeout} s") from None
        if proc.returncode != 0:
            errors.append(f"rank {r} exited with {proc.returncode}:\n{err.decode()[-2000:]}")
    if errors:
        raise RuntimeError("\n".join(errors))
    return port


def _worker(rank: int, world_size: int, port: int, folder: str) -> None:
    """One rank: read its shard, compute, backpropagate ``(out * weights).sum()``, save results."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size)
    try:
        data = torch.load(Path(folder) / f"in{rank}.pt")
        local = data["local_logits"].requires_grad_()
        out = vocab_parallel_token_logprobs(local, data["ids"], data["vocab_start"])
        (out * data["weights"]).sum().backward()
        owned = ((data["ids"] >= data["vocab_start"])
                 & (data["ids"] < data["vocab_start"] + local.shape[-1]))
        torch.save({"out": out.detach(), "grad": local.grad, "owned": int(owned.sum())},
                   Path(folder) / f"out{rank}.pt")
    finally:
        dist.destroy_process_group()


def run_vocab_parallel(
    logits: torch.Tensor, ids: torch.Tensor, weights: torch.Tensor | None = None, world_size: int = 2,
    timeout: float = 120,
) -> dict:
    """Split ``logits`` by vocabulary over ``world_size`` local processes (gloo) and run
    :func:`vocab_parallel_token_logprobs` in each; backpropagate ``(out * weights).sum()``.

    Args:
        logits: ``(..., V)`` CPU floats, ``V`` divisible by ``world_size``.
        ids: ``(...)`` integer ids in ``[0, V)``.
        weights: ``(...)`` weights of the loss whose gradient is taken (ones when ``None``).
        world_size: number of processes (ranks), >= 1.
        timeout: seconds to wait for the processes.

    Returns:
        ``{"out": [...per rank], "grad": (..., V) the ranks' gradients side by side,
        "owned": [ids each rank owned], "port": int}``.

    Raises:
        TypeError / ValueError: bad arguments (named in the message).
        RuntimeError: a rank failed or timed out (its error output is in the message).

    Introduced in Chapter 6.
    """
    args.tensor("logits", logits, kind="float")
    args.tensor("ids", ids, kind="int")
    if ids.shape != logits.shape[:-1]:
        raise ValueError(f"ids must have shape logits.shape[:-1] = {tuple(logits.shape[:-1])}; "
                         f"got {tuple(ids.shape)}.")
    args.integer("world_size", world_size, least=1)
    vocab = logits.shape[-1]
    if vocab % world_size:
        raise ValueError(f"the vocabulary V = {vocab} must be divisible by world_size = {world_size}.")
    if bool(((ids < 0) | (ids >= vocab)).any()):
        raise ValueError(f"ids must lie in [0, V) = [0, {vocab}).")
    weights = torch.ones(ids.shape, dtype=logits.dtype) if weights is None else weights
    assert isinstance(weights, torch.Tensor) and weights.shape == ids.shape, "weights: the shape of ids"
    width = vocab // world_size
    with tempfile.TemporaryDirectory(prefix="vocab_parallel_") as folder:
        for r in range(world_size):
            torch.save({"local_logits": logits[..., r * width:(r + 1) * width].detach().cpu().clone(),
                        "ids": ids.cpu(), "vocab_start": r * width,
                        "weights": weights.detach().cpu()}, Path(folder) / f"in{r}.pt")
        port = run_ranks("gatherbook.vocab_parallel", world_size, folder, timeout)
        results = [torch.load(Path(folder) / f"out{r}.pt") for r in range(world_size)]
    return {"out": [r["out"] for r in results],
            "grad": torch.cat([r["grad"] for r in results], dim=-1),
            "owned": [r["owned"] for r in results], "port": port}


if __name__ == "__main__":  # one rank, started by run_vocab_parallel
    _rank, _world, _port, _folder = sys.argv[1:5]
    _worker(int(_rank), int(_world), int(_port), _folder)
