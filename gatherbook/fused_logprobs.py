"""Per-token log-probs straight from hidden states: the ``(N, V)`` logits never exist.

A language model's last layer turns hidden states ``(B, L, H)`` into logits ``(B, L, V)`` with
its LM head, a ``(V, H)`` weight. :func:`fused_token_logprobs` computes::

    (hidden @ weight.T).log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)

without ever holding that ``(B, L, V)`` product. It walks over chunks of tokens and, inside each,
over chunks of the vocabulary: each ``(token_chunk, vocab_chunk)`` tile of logits is computed,
used and dropped. Across the vocabulary chunks it keeps, per token, a running maximum ``m`` and
a running sum ``s`` of ``exp(logit - m)`` (an *online* logsumexp: when the maximum grows, the sum
is rescaled by ``exp(m_old - m_new)``), and it picks each token's own logit in the one chunk that
holds its id. The result is ``picked - (m + log s)``.

The backward pass is a custom :class:`torch.autograd.Function` that recomputes the tiles instead
of storing them: with ``g`` the incoming gradient, the gradient of the logits of a tile is
``g * (onehot(id) - softmax)``, and it flows to ``hidden`` (``tile @ weight_chunk``) and to the
weight (``tile.T @ hidden_chunk``) at once, so training memory stays bounded by a tile too (plus
the gradients themselves, which have the shapes of ``hidden`` and ``weight``).
"""
from __future__ import annotations

import torch

from gatherbook import args

__all__ = ["fused_token_logprobs"]


def _check(hidden: object, weight: object, ids: object, token_chunk: object, vocab_chunk: object) -> None:
    args.tensor("hidden", hidden, kind="float")
    args.tensor("weight", weight, ndim=2, kind="float")
    args.tensor("ids", ids, kind="int")
    if hidden.dtype != weight.dtype:
        raise TypeError(f"hidden and weight must have the same dtype; got hidden {hidden.dtype}, "
                        f"weight {weight.dtype}.")
    if hidden.dim() < 1 or hidden.shape[-1] != weight.shape[1]:
        raise ValueError(f"hidden must have shape (..., H) with H = weight.shape[1] = {weight.shape[1]}; "
                         f"got hidden of shape {tuple(hidden.shape)}.")
    if ids.shape != hidden.shape[:-1]:
        raise ValueError(f"ids must have shape hidden.shape[:-1] = {tuple(hidden.shape[:-1])}; "
                         f"got ids of shape {tuple(ids.shape)}.")
    assert hidden.device == weight.device == ids.device, "hidden, weight and ids on one device"
    args.integer("token_chunk", token_chunk, least=1)
    args.integer("vocab_chunk", vocab_chunk, least=1)
    vocab = weight.shape[0]
    if ids.numel() and bool(((ids < 0) | (ids >= vocab)).any()):
        bad = ids[(ids < 0) | (ids >= vocab)][0].item()
        raise ValueError(f"ids must lie in [0, V) = [0, {vocab}); got id {bad}.")


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _forward(h: torch.Tensor, w: torch.Tensor, ids: torch.Tensor, token_chunk: int, vocab_chunk: int):
    """h (N, H), w (V, H), ids (N,) -> (log-probs (N,), logsumexp (N,)), both in the compute dtype."""
    n, vocab = h.shape[0], w.shape[0]
    dtype = _compute_dtype(h.dtype)
    out = torch.empty(n, dtype=dtype, device=h.device)
    lse = torch.empty(n, dtype=dtype, device=h.device)
    for t0 in range(0, n, token_chunk):
        hc = h[t0:t0 + token_chunk].to(dtype)
        idc = ids[t0:t0 + token_chunk]
        m = torch.full((hc.shape[0],), float("-inf"), dtype=dtype, device=h.device)
        s = torch.zeros(hc.shape[0], dtype=dtype, device=h.device)
        picked = torch.zeros(hc.shape[0], dtype=dtype, device=h.device)
        for v0 in range(0, vocab, vocab_chunk):
            tile = hc @ w[v0:v0 + vocab_chunk].to(dtype).T          # (n_t, n_v) logits of the tile
            new_m = torch.maximum(m, tile.max(-1).values)
            s = s * torch.exp(m - new_m) + torch.exp(tile - new_m[:, None]).sum(-1)
            m = new_m
            here = (idc >= v0) & (idc < v0 + tile.shape[1])             # ids this tile holds
            local = (idc - v0).clamp(0, tile.shape[1] - 1)              # read anywhere, keep `here`
            picked = torch.where(here, tile.gather(-1, local[:, None]).squeeze(-1), picked)
            del tile
        lse[t0:t0 + token_chunk] = m + torch.log(s)
        out[t0:t0 + token_chunk] = picked - lse[t0:t0 + token_chunk]
    return out, lse


class _FusedTokenLogprobs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, w, ids, token_chunk, vocab_chunk):
        out, lse = _forward(h, w, ids, token_chunk, vocab_chunk)
        ctx.save_for_backward(h, w, ids, lse)
        ctx.chunks = (token_chunk, vocab_chunk)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        h, w, ids, lse = ctx.saved_tensors
        token_chunk, vocab_chunk = ctx.chunks
        dtype = lse.dtype
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        grad_h = torch.zeros(h.shape, dtype=dtype, device=h.device) if need_h else None
        grad_w = torch.zeros(w.shape, dtype=dtype, device=w.device) if need_w else None
        vocab = w.shape[0]
        for t0 in range(0, h.shape[0], token_chunk):
            hc = h[t0:t0 + token_chunk].to(dtype)
            idc = ids[t0:t0 + token_chunk]
            g = grad_out[t0:t0 + token_chunk].to(dtype)
            lse_c = lse[t0:t0 + token_chunk]
            for v0 in range(0, vocab, vocab_chunk):
                wc = w[v0:v0 + vocab_chunk].to(dtype)
                tile = hc @ wc.T                                     # recomputed, not stored
                # d logp / d logit_j = [j == id] - softmax_j, times the incoming gradient
                grad_tile = torch.exp(tile - lse_c[:, None]).mul_(-g[:, None])
                del tile
                here = (idc >= v0) & (idc < v0 + wc.shape[0])
                rows = here.nonzero().squeeze(-1)
                grad_tile[rows, idc[rows] - v0] += g[rows]
                if need_h:
                    grad_h[t0:t0 + token_chunk] += grad_tile @ wc
                if need_w:
                    grad_w[v0:v0 + vocab_chunk] += grad_tile.T @ hc
                del grad_tile
        grad_h = grad_h.to(h.dtype) if need_h else None
        grad_w = grad_w.to(w.dtype) if need_w else None
        return grad_h, grad_w, None, None, None


def fused_token_logprobs(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    ids: torch.Tensor,
    *,
    token_chunk: int = 256,
    vocab_chunk: int = 4096,
) -> torch.Tensor:
    """Log-probability of each token under the logits ``hidden @ weight.T``, never built whole.

    Equal (to float rounding) to
    ``token_logprobs(hidden @ weight.T, ids)`` of :mod:`gatherbook.logprobs`, values and
    gradients with respect to ``hidden`` and ``weight``.

    Args:
        hidden: ``(..., H)`` hidden states (e.g. ``(B, L, H)``), floating point.
        weight: ``(V, H)`` the LM head's weight (no bias), same dtype as ``hidden``.
        ids: ``(...)`` integer ids in ``[0, V)``, ``ids.shape == hidden.shape[:-1]``.
        token_chunk: tokens per tile.
        vocab_chunk: vocabulary entries per tile. The largest temporary is a
            ``(token_chunk, vocab_chunk)`` tile (a few of them at once), whatever B, L and V.

    Returns:
        ``(...)`` log-probs, the shape of ``ids``; float32 for bfloat16/float16 inputs (tiles are
        computed in float32), else the inputs' dtype.

    Raises:
        TypeError: a non-tensor argument, non-float hidden/weight or different dtypes, integer
            ids expected, non-int chunk sizes.
        ValueError: shapes that do not fit, an id outside ``[0, V)``, a chunk size <= 0.

    Introduced in Chapter 6.
    """
    _check(hidden, weight, ids, token_chunk, vocab_chunk)
    flat_h = hidden.reshape(-1, hidden.shape[-1])
    flat_ids = ids.reshape(-1).long()
    out = _FusedTokenLogprobs.apply(flat_h, weight, flat_ids, token_chunk, vocab_chunk)
    return out.view(ids.shape)
