"""Expert parallelism: a Mixture-of-Experts layer whose experts are split across processes.

Each of ``world_size`` ranks holds its own tokens and ``E / world_size`` of the experts (rank
``r`` the experts ``[r E / w, (r + 1) E / w)``). :func:`expert_parallel_moe` runs the layer:

1. route and dispatch locally (Chapter 7's sort by expert): the rows for the experts of rank 0
   come first, then those of rank 1, ...; the dispatch's ``counts``, summed per rank, are the
   numbers of rows sent to each rank;
2. ``all_to_all_single`` with those uneven split sizes (the counts are exchanged first, so each
   rank knows how many rows it receives from each other rank);
3. the received rows, grouped by source rank and within it by expert, are sorted once more by
   expert; each local expert runs once on its group, and the outputs are put back in received
   order (the inverse permutation);
4. the reverse ``all_to_all_single`` (the split sizes swapped) returns every row to the rank
   of its token, in the order it left, and Chapter 7's ``combine`` (``index_add_``) sums them.

The exchange is differentiable: the backward of an all-to-all is the all-to-all with the split
sizes swapped (:class:`_AllToAll`). :func:`run_expert_parallel` starts the ranks on this machine
(gloo, CPU tensors), so that a notebook or a test can compare them with one process
(:func:`gatherbook.vocab_parallel.run_ranks`: forked where that is safe, fresh interpreters
elsewhere).

Introduced in Chapter 7.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist

from gatherbook import args
from gatherbook.generation import combine, dispatch, route, swiglu_experts
from gatherbook.vocab_parallel import run_ranks

__all__ = ["expert_parallel_moe", "run_expert_parallel"]


class _AllToAll(torch.autograd.Function):
    """``all_to_all_single`` along dim 0 with uneven splits; its backward is the reverse exchange."""

    @staticmethod
    def forward(ctx, x, out_splits: list[int], in_splits: list[int], group):
        ctx.splits, ctx.group = (out_splits, in_splits), group
        out = x.new_empty(sum(out_splits), *x.shape[1:])
        dist.all_to_all_single(out, x.contiguous(), out_splits, in_splits, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        out_splits, in_splits = ctx.splits
        back = grad.new_empty(sum(in_splits), *grad.shape[1:])
        dist.all_to_all_single(back, grad.contiguous(), in_splits, out_splits, group=ctx.group)
        return back, None, None, None


def expert_parallel_moe(x: torch.Tensor, router_logits: torch.Tensor, k: int, local_experts: list,
                        num_experts: int, group=None) -> tuple[torch.Tensor, dict]:
    """This rank's tokens through a MoE layer whose experts are split evenly over the ranks.

    Call it on every rank of ``group`` (the default group when ``None``) at the same time.
    ``x`` ``(T, H)`` this rank's tokens, ``router_logits`` ``(T, E)``, ``k`` experts per token,
    ``local_experts`` the ``E / world_size`` functions ``(N, H) -> (N, H)`` of this rank's
    experts, ``num_experts`` = E. Returns ``(out, sizes)``: ``out`` ``(T, H)``, equal to the
    one-process layer for these tokens; ``sizes["sent"]`` and ``sizes["received"]`` the rows
    sent to and received from each rank (the split sizes of the first exchange).
    """
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    assert num_experts % world == 0 and len(local_experts) == num_experts // world, \
        "each rank holds num_experts / world_size experts"
    per_rank = num_experts // world
    weights, experts = route(router_logits, k)                        # (T, k) each
    x_sorted, order, counts = dispatch(x, experts)                    # rows sorted by expert
    counts = torch.nn.functional.pad(counts, (0, num_experts - counts.numel()))  # (E,)
    # how many rows of each of my experts every rank sends me: exchange the counts first
    recv_counts = torch.empty_like(counts)
    dist.all_to_all_single(recv_counts, counts, group=group)          # (E,): [source][local expert]
    sent = counts.view(world, per_rank).sum(1).tolist()               # rows to each rank
    received = recv_counts.view(world, per_rank).sum(1).tolist()      # rows from each rank
    x_in = _AllToAll.apply(x_sorted, received, sent, group)           # (N_in, H)
    # the received rows: source 0's rows of expert 0, 1, ..., then source 1's: group by expert
    local = torch.arange(per_rank, device=x.device).repeat(world)     # expert of each count
    expert_of_row = local.repeat_interleave(recv_counts)              # (N_in,)
    by_expert = expert_of_row.argsort(stable=True)
    groups = x_in.index_select(0, by_expert).split(recv_counts.view(world, per_rank).sum(0).tolist())
    y_grouped = torch.cat([fn(g) for fn, g in zip(local_experts, groups)])
    y_in = torch.empty_like(y_grouped).index_copy(0, by_expert, y_grouped)  # back to received order
    y_sorted = _AllToAll.apply(y_in, sent, received, group)           # (T * k, H), as sent
    out = combine(y_sorted, order, weights, x.shape[0])
    return out, {"sent": sent, "received": received, "rank": rank}


def _worker(rank: int, world_size: int, port: int, folder: str) -> None:
    """One rank: its tokens and experts, the forward and the backward of ``(out * grad_out).sum()``."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size)
    try:
        data = torch.load(Path(folder) / f"in{rank}.pt", map_location="cpu")
        leaves = {name: data[name].requires_grad_() for name in ("x", "router_logits", "w_gate", "w_up", "w_down")}
        fns = swiglu_experts(leaves["w_gate"], leaves["w_up"], leaves["w_down"])
        out, sizes = expert_parallel_moe(leaves["x"], leaves["router_logits"], data["k"], fns,
                                         data["num_experts"])
        (out * data["grad_out"]).sum().backward()
        torch.save({"out": out.detach(), **sizes, **{f"grad_{n}": t.grad for n, t in leaves.items()}},
                   Path(folder) / f"out{rank}.pt")
    finally:
        dist.destroy_process_group()


def run_expert_parallel(x: torch.Tensor, router_logits: torch.Tensor, k: int, w_gate: torch.Tensor,
                        w_up: torch.Tensor, w_down: torch.Tensor, grad_out: torch.Tensor | None = None,
                        world_size: int = 2, timeout: float = 120, fork: bool | None = None) -> dict:
    """Run a SwiGLU MoE layer over ``world_size`` local processes (gloo), tokens and experts split.

    ``x`` ``(T, H)`` and ``router_logits`` ``(T, E)`` are cut into ``world_size`` equal blocks
    of tokens, ``w_gate``, ``w_up`` ``(E, F, H)`` and ``w_down`` ``(E, H, F)`` into equal blocks
    of experts; each rank backpropagates ``(out * grad_out).sum()`` (``grad_out`` ``(T, H)``,
    ones when ``None``). Returns ``{"out": (T, H), "grad_x", "grad_router_logits",
    "grad_w_gate", "grad_w_up", "grad_w_down": the ranks' blocks put back together, "sent",
    "received": per rank, the rows sent to / received from each rank}``. ``fork``: start the
    ranks by forking this process (``True``) or as fresh interpreters (``False``); ``None`` forks
    where :func:`gatherbook.vocab_parallel.fork_is_safe`.

    Introduced in Chapter 7.
    """
    args.tensor("x", x, kind="float")
    args.tensor("router_logits", router_logits, kind="float")
    args.integer("world_size", world_size, least=1)
    T, E = router_logits.shape if router_logits.dim() == 2 else (None, None)
    if x.dim() != 2 or router_logits.dim() != 2 or x.shape[0] != T:
        raise ValueError(f"x must be (T, H) and router_logits (T, E) with the same T; got "
                         f"{tuple(x.shape)} and {tuple(router_logits.shape)}.")
    if T % world_size or E % world_size:
        raise ValueError(f"the tokens T = {T} and the experts E = {E} must be divisible by "
                         f"world_size = {world_size}.")
    args.integer("k", k, least=1)
    if k > E:
        raise ValueError(f"k = {k} experts per token, but there are only E = {E}.")
    for name, w in (("w_gate", w_gate), ("w_up", w_up), ("w_down", w_down)):
        if args.tensor(name, w, kind="float").dim() != 3 or w.shape[0] != E:
            raise ValueError(f"{name} must be (E, ., .) with E = {E}; got {tuple(w.shape)}.")
    grad_out = torch.ones_like(x) if grad_out is None else grad_out
    assert grad_out.shape == x.shape, "grad_out: the shape of x"
    t, e = T // world_size, E // world_size
    with tempfile.TemporaryDirectory(prefix="expert_parallel_") as folder:
        for r in range(world_size):
            tok, exp = slice(r * t, (r + 1) * t), slice(r * e, (r + 1) * e)
            torch.save({"x": x[tok].detach().cpu().clone(), "router_logits": router_logits[tok].detach().cpu().clone(),
                        "w_gate": w_gate[exp].detach().cpu().clone(), "w_up": w_up[exp].detach().cpu().clone(),
                        "w_down": w_down[exp].detach().cpu().clone(), "grad_out": grad_out[tok].detach().cpu(),
                        "k": k, "num_experts": E}, Path(folder) / f"in{r}.pt")
        run_ranks("gatherbook.expert_parallel", world_size, folder, timeout, fork=fork)
        results = [torch.load(Path(folder) / f"out{r}.pt") for r in range(world_size)]
    cat = {name: torch.cat([res[name] for res in results]) for name in
           ("out", "grad_x", "grad_router_logits", "grad_w_gate", "grad_w_up", "grad_w_down")}
    return {**cat, "sent": [res["sent"] for res in results], "received": [res["received"] for res in results]}


if __name__ == "__main__":  # one rank, started by run_expert_parallel
    _rank, _world, _port, _folder = sys.argv[1:5]
    _worker(int(_rank), int(_world), int(_port), _folder)
