"""Per-token log-probabilities of a language model: ``log p(ids | logits)`` for every position.

The one line that RLHF and preference-tuning code (PPO, GRPO, DPO) runs everywhere::

    logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)

materialises a second tensor as large as ``logits`` (the full log-softmax) only to keep one
number per row. :func:`token_logprobs` computes the same values, optionally chunk by chunk
with ``log p = logits[id] - logsumexp(logits)``, so the extra memory is bounded by
``chunk_size * V`` elements instead of ``B * L * V``.
"""
from __future__ import annotations

import itertools

import torch

from gatherbook import args

__all__ = ["token_logprobs"]

_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _said(key: str, hint: str, **values: object) -> str:
    """The message ``key`` (and its ``hint``) in the notebook's language (gatherbook/words)."""
    from gatherbook.wordbook import table
    from gatherbook.runtime import resolve

    words = table(resolve(None))["logprobs"]
    return words[key].format(**values) + (words[hint].format(**values) if hint else "") + words["end"]


def _check(logits: object, ids: object, chunk_size: object, ignore_index: object) -> None:
    args.tensor("logits", logits, kind="float")
    args.tensor("ids", ids, kind="int")
    if logits.dim() < 1:
        raise ValueError("logits must have at least one dim (the vocabulary, last); got a 0-dim tensor.")
    if logits.shape[:-1] != ids.shape:
        hint = ""
        if ids.dim() == logits.dim() - 1 and any(
            abs(a - b) == 1 for a, b in zip(ids.shape, logits.shape[:-1])
        ):
            hint = "off_by_one"
        elif ids.dim() == logits.dim() and ids.shape[-1] == 1:
            hint = "trailing_one"
        # one clause a line: a message line stays within the page's 88-character code column
        raise ValueError(_said("shape", hint, expected=tuple(logits.shape[:-1]), ids=tuple(ids.shape),
                               logits=tuple(logits.shape)))
    assert ids.device == logits.device, f"ids on {ids.device}, logits on {logits.device}"
    if chunk_size is not None:
        args.integer("chunk_size", chunk_size, least=1)
    if ignore_index is not None:
        args.integer("ignore_index", ignore_index)
    vocab = logits.shape[-1]
    bad = (ids < 0) | (ids >= vocab)
    if ignore_index is not None:
        bad &= ids != ignore_index
    if bool(bad.any()):
        where = tuple(int(i) for i in bad.nonzero()[0])
        value = int(ids[where])
        position = "ids[" + ", ".join(str(i) for i in where) + "]"
        raise ValueError(_said("bad_id", "negative_id" if value < 0 else "", position=position,
                               value=value, vocab=vocab))


def _rows(logits: torch.Tensor, ids: torch.Tensor):
    """Yield (rows, ids) pairs: 2-D views of logits (n, V) without copying, with their ids (n,)."""
    vocab = logits.shape[-1]
    try:
        yield logits.view(-1, vocab), ids.reshape(-1)
        return
    except RuntimeError:  # e.g. logits[:, :-1] of a contiguous (B, L, V): not viewable as (B*(L-1), V)
        pass
    if logits.dim() == 2:
        yield logits, ids
        return
    for outer in itertools.product(*(range(s) for s in logits.shape[:-2])):
        yield logits[outer], ids[outer]


def _chunked(logits: torch.Tensor, ids: torch.Tensor, chunk_size: int) -> torch.Tensor:
    pieces = []
    for rows, row_ids in _rows(logits, ids):
        for start in range(0, rows.shape[0], chunk_size):
            chunk = rows[start : start + chunk_size]
            if chunk.dtype in _LOW_PRECISION:
                chunk = chunk.float()
            picked = chunk.gather(-1, row_ids[start : start + chunk_size].unsqueeze(-1)).squeeze(-1)
            pieces.append(picked - torch.logsumexp(chunk, dim=-1))
    if not pieces:
        dtype = torch.float32 if logits.dtype in _LOW_PRECISION else logits.dtype
        return logits.new_empty(ids.shape, dtype=dtype)
    return torch.cat(pieces).view(ids.shape)


def token_logprobs(
    logits: torch.Tensor,
    ids: torch.Tensor,
    *,
    chunk_size: int | None = None,
    ignore_index: int | None = None,
) -> torch.Tensor:
    """Log-probability of each chosen token: ``log_softmax(logits, -1)[..., ids]``.

    Args:
        logits: ``(..., V)`` floating-point scores; the last dim is the vocabulary.
        ids: ``(...)`` integer token ids, ``ids.shape == logits.shape[:-1]``, each in ``[0, V)``
            (or equal to ``ignore_index``). For next-token scoring pass ``logits[:, :-1]`` and
            ``ids[:, 1:]``: the logits at position t score the token at t + 1.
        chunk_size: ``None`` computes ``logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1))
            .squeeze(-1)``, which allocates a full ``(..., V)`` log-softmax. An int computes
            ``logits[id] - logsumexp(logits)`` over chunks of ``chunk_size`` rows, so the extra
            memory is about ``chunk_size * V`` elements. bfloat16/float16 chunks are computed in
            float32 and the result is float32 (in those dtypes a logsumexp-based difference loses
            up to several hundredths; see the chapter on token log-probs).
        ignore_index: ids equal to it (e.g. ``-100``, the padding label of
            ``torch.nn.functional.cross_entropy``) get log-prob ``0.0``; gather never sees them.

    Returns:
        ``(...)`` tensor, the shape of ``ids``. Same dtype as ``logits``, except float32 for
        bfloat16/float16 logits with a ``chunk_size``. Differentiable with respect to ``logits``
        (under autograd the chunks' inputs are kept for the backward pass, so the memory bound
        holds for inference, e.g. old-policy or reference log-probs under ``torch.no_grad()``).

    Raises:
        TypeError: logits or ids not a tensor of the right kind (floating point; int64 or
            int32); chunk_size or ignore_index not an int.
        ValueError: ``ids.shape != logits.shape[:-1]``; an id outside ``[0, V)`` (the message
            names its position and value); ``chunk_size <= 0``.

    Introduced in Chapter 2.
    """
    _check(logits, ids, chunk_size, ignore_index)
    keep = None
    if ignore_index is not None:
        keep = ids != ignore_index
        ids = ids.masked_fill(~keep, 0)
    ids = ids.long()
    if chunk_size is None:
        out = logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    else:
        out = _chunked(logits, ids, chunk_size)
    if keep is not None:
        out = out.masked_fill(~keep, 0.0)
    return out
