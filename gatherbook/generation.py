"""gather and scatter at generation time: sampling filters, beam search, Mixture of Experts.

Introduced in Chapter 7. Every function works on a batch and states its shapes:

- sampling: :func:`greedy`, :func:`repetition_penalty` (gather, ``where``, scatter),
  :func:`top_k_filter`, :func:`top_p_filter` (sort, cumsum, then the mask scattered back to
  vocabulary order, or gathered back with the inverse permutation),
  :func:`sample` (seeded, drawn on the CPU so that a seed gives the same tokens on any device);
- beam search: :func:`flat_topk` (a top-k over beams x vocabulary, beam and token recovered with
  ``//`` and ``%``), :func:`beam_offsets` (per-row beam ids -> rows of the flattened batch),
  :func:`reorder_cache` (``index_select`` along the batch dim), :func:`beam_search`;
- Mixture of Experts: :func:`route` (top-k of the router's softmax, weights renormalised),
  :func:`dispatch` (tokens sorted by expert, with counts), :func:`combine` (``index_add_``),
  :func:`moe_loop` (one masked pass per expert) and :func:`moe_sorted` (sorted dispatch), equal
  to each other and to transformers' ``MixtralSparseMoeBlock``; at scale, :func:`capacity_slots`
  (each pair's place in its expert's queue, for a capacity) and :func:`load_balancing_loss`.
"""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch.nn import functional as F

from gatherbook import args

__all__ = [
    "greedy", "top_k_filter", "top_p_filter", "top_p_filter_gather", "sample", "repetition_penalty",
    "flat_topk", "beam_offsets", "reorder_cache", "beam_search",
    "route", "dispatch", "combine", "swiglu_experts", "moe_loop", "moe_sorted",
    "capacity_slots", "load_balancing_loss",
]

NEG_INF = float("-inf")


def _check_logits(logits: object, fn: str) -> None:
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point() or logits.dim() < 1:
        got = (f"shape {tuple(logits.shape)}, dtype {logits.dtype}" if isinstance(logits, torch.Tensor)
               else type(logits).__name__)
        raise TypeError(f"{fn}: logits must be a floating (..., V) tensor; got {got}.")


# ---------------------------------------------------------------------------------------------
# sampling

def greedy(logits: torch.Tensor) -> torch.Tensor:
    """The most likely token of each row: ``(..., V)`` logits -> ``(...)`` int64 ids.

    Introduced in Chapter 7. Ties go to the lowest id (``argmax``'s rule).
    """
    _check_logits(logits, "greedy")
    return logits.argmax(-1)


def top_k_filter(logits: torch.Tensor, k: int, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep the ``k`` largest logits of each row, ``-inf`` elsewhere: ``(..., V)`` -> ``(..., V)``.

    Introduced in Chapter 7. A logit equal to the k-th largest is kept, so ties at the cut
    keep more than ``k`` tokens (transformers' ``TopKLogitsWarper`` does the same).
    ``k`` is raised to ``min_tokens_to_keep`` and capped at ``V``.
    """
    _check_logits(logits, "top_k_filter")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"top_k_filter: k must be a positive int; got {k!r}.")
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    kth = logits.topk(k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest of each row
    return logits.masked_fill(logits < kth, NEG_INF)


def _top_p_sorted(logits: torch.Tensor, p: float, min_tokens_to_keep: int):
    """``(remove_sorted, order)``: the mask in sorted (descending) order and the sort's ids."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"top_p_filter: p must lie in [0, 1]; got {p!r}.")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError(f"top_p_filter: min_tokens_to_keep must be a positive int; got {min_tokens_to_keep!r}.")
    sorted_logits, order = logits.sort(dim=-1, descending=True, stable=True)  # (..., V) each
    probs = sorted_logits.softmax(-1)
    before = probs.cumsum(-1) - probs  # probability mass of the tokens ranked above each one
    remove_sorted = before >= p  # keep until the kept mass reaches p (the crossing token stays)
    remove_sorted[..., :min_tokens_to_keep] = False
    return remove_sorted, order


def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Nucleus (top-p) filter: keep the smallest set of most likely tokens whose mass reaches ``p``.

    Introduced in Chapter 7. ``(..., V)`` logits -> ``(..., V)`` logits with ``-inf`` at the
    removed tokens. Sort each row (descending, stable: tied logits keep the lower id first),
    take the cumulative softmax, mark the tokens whose preceding mass is already ``>= p``
    (never the first ``min_tokens_to_keep``), then scatter that mask back to vocabulary order:
    ``remove[..., order[..., j]] = remove_sorted[..., j]``.
    """
    _check_logits(logits, "top_p_filter")
    remove_sorted, order = _top_p_sorted(logits, p, min_tokens_to_keep)
    remove = torch.zeros_like(remove_sorted).scatter(-1, order, remove_sorted)  # back to vocab order
    return logits.masked_fill(remove, NEG_INF)


def top_p_filter_gather(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """:func:`top_p_filter` with ``gather`` instead of ``scatter``: the same ``(..., V)`` result.

    Introduced in Chapter 7. ``rank = order.argsort(-1)`` is the inverse permutation (the
    position of each vocabulary id in the sorted row), and
    ``remove[..., v] = remove_sorted[..., rank[..., v]]``.
    """
    _check_logits(logits, "top_p_filter_gather")
    remove_sorted, order = _top_p_sorted(logits, p, min_tokens_to_keep)
    rank = order.argsort(-1)  # (..., V): where each id landed in the sort
    return logits.masked_fill(remove_sorted.gather(-1, rank), NEG_INF)


def sample(logits: torch.Tensor, generator: torch.Generator, temperature: float = 1.0) -> torch.Tensor:
    """Draw one token per row from ``softmax(logits / temperature)``: ``(B, V)`` -> ``(B,)`` int64.

    Introduced in Chapter 7. The Gumbel-max trick with uniform noise drawn on the CPU from
    ``generator``: ``argmax(logits / T - log(-log(u)))`` is distributed as the softmax, and a
    seed gives the same noise on any device. ``-inf`` logits are never drawn; a row with no
    finite logit raises.
    """
    _check_logits(logits, "sample")
    if logits.dim() != 2:
        raise ValueError(f"sample: logits must be (B, V); got shape {tuple(logits.shape)}.")
    if not temperature > 0:
        raise ValueError(f"sample: temperature must be > 0 (use greedy for the limit 0); got {temperature!r}.")
    if not torch.isfinite(logits).any(-1).all():
        raise ValueError("sample: a row of logits has no finite value: nothing can be drawn.")
    u = torch.rand(logits.shape, generator=generator, dtype=torch.float64)
    gumbel = -torch.log(-torch.log(u.clamp_min(1e-300)))
    scores = logits.double() / temperature + gumbel.to(logits.device)
    return scores.argmax(-1)


def repetition_penalty(logits: torch.Tensor, ids: torch.Tensor, penalty: float) -> torch.Tensor:
    """The logits of the tokens already in ``ids`` made less likely: ``(B, V)`` -> ``(B, V)``.

    Introduced in Chapter 7. ``ids`` ``(B, L)`` int64, the tokens so far (repeats allowed).
    Each seen token's logit is read with ``gather``, divided by ``penalty`` where positive and
    multiplied where negative (``where``), and written back with ``scatter``: an id seen twice is
    written twice with the same value. transformers' ``RepetitionPenaltyLogitsProcessor``.
    """
    _check_logits(logits, "repetition_penalty")
    if not isinstance(ids, torch.Tensor) or ids.is_floating_point() or ids.dim() != 2 or ids.shape[0] != logits.shape[0]:
        got = f"shape {tuple(ids.shape)}, dtype {ids.dtype}" if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise TypeError(f"repetition_penalty: ids must be a (B, L) int64 tensor with B = {logits.shape[0]}; got {got}.")
    if not penalty > 0:
        raise ValueError(f"repetition_penalty: penalty must be > 0; got {penalty!r}.")
    seen = logits.gather(-1, ids)                                      # (B, L)
    seen = torch.where(seen < 0, seen * penalty, seen / penalty)
    return logits.scatter(-1, ids, seen)                               # repeats write equal values


def _said(key: str, **values) -> str:
    """The words file's ``generation.<key>`` message, in the notebook's language."""
    from gatherbook.runtime import resolve
    from gatherbook.wordbook import table

    return table(resolve(None))["generation"][key].format(**values)


# ---------------------------------------------------------------------------------------------
# beam search

def flat_topk(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top-``k`` over all (beam, token) pairs of each row: ``(B, K, V)`` -> three ``(B, k)`` tensors.

    Introduced in Chapter 7. Flatten to ``(B, K * V)``; flat index ``f = beam * V + token``,
    so ``beam = f // V`` and ``token = f % V``. Returns ``(values, beam, token)``.
    """
    if not isinstance(scores, torch.Tensor) or scores.dim() != 3:
        raise ValueError(f"flat_topk: scores must be (B, K, V); got "
                         f"{tuple(scores.shape) if isinstance(scores, torch.Tensor) else type(scores).__name__}.")
    B, K, V = scores.shape
    if args.integer("k", k, least=1) > K * V:
        raise ValueError(_said("flat_topk_k", k=k, K=K, V=V, n=K * V, shape=tuple(scores.shape)))
    values, flat = scores.reshape(B, K * V).topk(k, dim=-1)  # (B, k) each
    return values, flat // V, flat % V


def beam_offsets(beam: torch.Tensor) -> torch.Tensor:
    """Beam ids per row ``(B, K)`` in ``[0, K)`` -> rows of the flattened ``(B * K, ...)`` batch.

    Introduced in Chapter 7. Row ``b``'s beams live at rows ``b * K ... b * K + K - 1`` of the
    cache, so ``out = (beam + K * arange(B)[:, None]).reshape(-1)``, shape ``(B * K,)``.
    """
    if beam.dim() != 2:
        raise ValueError(f"beam_offsets: beam must be (B, K); got shape {tuple(beam.shape)}.")
    B, K = beam.shape
    return (beam + K * torch.arange(B, device=beam.device)[:, None]).reshape(-1)


def reorder_cache(cache: list[torch.Tensor], beam_idx: torch.Tensor) -> list[torch.Tensor]:
    """Every cached tensor ``(B * K, ...)`` reordered along dim 0 by ``beam_idx`` ``(B * K,)``.

    Introduced in Chapter 7. ``out[i] = cache[beam_idx[i]]``: ``index_select(0, beam_idx)``, as
    transformers' cache layers do. A beam chosen twice is copied, one not chosen is dropped.
    """
    return [t.index_select(0, beam_idx.to(t.device)) for t in cache]


def beam_search(step: Callable[[torch.Tensor], torch.Tensor], prompt: torch.Tensor, num_beams: int,
                steps: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Beam search without length penalty or end token: ``(B, L)`` prompt -> ``(B, L + steps)``.

    Introduced in Chapter 7. ``step(seqs)`` maps ``(N, L')`` ids to ``(N, V)`` next-token
    log-probs. The beams of row ``b`` are rows ``b * K ... b * K + K - 1`` of ``seqs``; each step
    scores every (beam, token) pair, keeps the top ``K`` of each row (:func:`flat_topk`), and
    reorders the sequences (the "cache") with :func:`beam_offsets`. Returns the best sequence of
    each row and its total log-prob, ``(B,)``.
    """
    B, L = prompt.shape
    K = num_beams
    seqs = prompt.repeat_interleave(K, dim=0)  # (B * K, L)
    total = torch.full((B, K), NEG_INF, device=prompt.device)
    total[:, 0] = 0.0  # at the start all beams are the same: only one may expand
    for _ in range(steps):
        logp = step(seqs)  # (B * K, V)
        V = logp.shape[-1]
        scores = total[..., None] + logp.reshape(B, K, V)  # (B, K, V)
        total, beam, token = flat_topk(scores, K)  # (B, K) each
        rows = beam_offsets(beam)  # (B * K,)
        seqs = torch.cat([seqs.index_select(0, rows), token.reshape(-1, 1)], dim=1)
    best = total.argmax(-1)  # (B,)
    return seqs.reshape(B, K, -1)[torch.arange(B), best], total.gather(1, best[:, None])[:, 0]


# ---------------------------------------------------------------------------------------------
# Mixture of Experts

def route(router_logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-``k`` routing: ``(T, E)`` router logits -> ``(weights, experts)``, each ``(T, k)``.

    Introduced in Chapter 7. Softmax over the ``E`` experts, keep the ``k`` largest, and
    renormalise them to sum to 1 (Mixtral's rule). ``weights`` keeps the logits' dtype.
    """
    args.tensor("router_logits", router_logits, kind="float")
    if args.integer("k", k, least=1) > router_logits.shape[-1]:
        raise ValueError(_said("route_k", k=k, E=router_logits.shape[-1], shape=tuple(router_logits.shape)))
    probs = router_logits.softmax(-1)  # (T, E)
    weights, experts = probs.topk(k, dim=-1)  # (T, k) each
    return weights / weights.sum(-1, keepdim=True), experts


def dispatch(x: torch.Tensor, experts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sort the (token, slot) pairs by expert: ``x`` ``(T, H)``, ``experts`` ``(T, k)``.

    Introduced in Chapter 7. Returns ``(x_sorted, order, counts)``: ``order`` ``(T * k,)`` holds
    the flat (token, slot) positions ``t * k + j`` sorted by expert (stable, so tokens stay in
    order within an expert); ``x_sorted = x.index_select(0, order // k)`` ``(T * k, H)``, the
    tokens of expert 0 first; ``counts`` ``(E,)`` with ``E = experts.max() + 1`` at least, how
    many rows each expert gets (experts after the last one used get no entry: :func:`moe_sorted`
    pads ``counts`` with zeros to ``len(expert_fns)`` experts).
    """
    k = experts.shape[-1]
    order = experts.reshape(-1).argsort(stable=True)  # (T * k,)
    x_sorted = x.index_select(0, order // k)  # (T * k, H): row i is token order[i] // k
    counts = torch.bincount(experts.reshape(-1))
    return x_sorted, order, counts


def combine(y_sorted: torch.Tensor, order: torch.Tensor, weights: torch.Tensor, num_tokens: int) -> torch.Tensor:
    """Weighted sum of each token's expert outputs: ``y_sorted`` ``(T * k, H)`` -> ``(T, H)``.

    Introduced in Chapter 7. Row ``i`` of ``y_sorted`` belongs to token ``order[i] // k`` with
    weight ``weights.reshape(-1)[order[i]]``; ``index_add_`` along dim 0 sums a token's ``k``
    rows (the same as ``scatter_add_`` with the token ids expanded to ``(T * k, H)``).
    """
    k = weights.shape[-1]
    w = weights.reshape(-1)[order]  # (T * k,): each sorted row's routing weight
    out = torch.zeros(num_tokens, y_sorted.shape[-1], dtype=y_sorted.dtype, device=y_sorted.device)
    return out.index_add_(0, order // k, y_sorted * w[:, None].to(y_sorted.dtype))


def swiglu_experts(w_gate: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor
                   ) -> list[Callable[[torch.Tensor], torch.Tensor]]:
    """Mixtral-style experts ``y = (silu(x @ w_gate[e].T) * (x @ w_up[e].T)) @ w_down[e].T``.

    Introduced in Chapter 7. ``w_gate``, ``w_up``: ``(E, F, H)``; ``w_down``: ``(E, H, F)``.
    Returns ``E`` functions ``(N, H) -> (N, H)``.
    """
    def expert(e: int) -> Callable[[torch.Tensor], torch.Tensor]:
        return lambda h: (F.silu(h @ w_gate[e].T) * (h @ w_up[e].T)) @ w_down[e].T
    return [expert(e) for e in range(w_gate.shape[0])]


def moe_loop(x: torch.Tensor, weights: torch.Tensor, experts: torch.Tensor,
             expert_fns: list[Callable[[torch.Tensor], torch.Tensor]]) -> torch.Tensor:
    """Mixture of Experts, one masked pass per expert: ``x`` ``(T, H)`` -> ``(T, H)``.

    Introduced in Chapter 7. For each expert ``e``, ``torch.where(experts == e)`` finds its
    tokens and slots, the expert runs on ``x[tokens]``, and ``index_add_`` adds the weighted
    outputs to those tokens' rows. ``weights``, ``experts``: ``(T, k)`` from :func:`route`.
    """
    out = torch.zeros_like(x)
    for e, fn in enumerate(expert_fns):
        tokens, slot = torch.where(experts == e)  # (n_e,) each
        if tokens.numel() == 0:
            continue
        y = fn(x[tokens]) * weights[tokens, slot, None]  # (n_e, H)
        out.index_add_(0, tokens, y.to(x.dtype))
    return out


def moe_sorted(x: torch.Tensor, weights: torch.Tensor, experts: torch.Tensor,
               expert_fns: list[Callable[[torch.Tensor], torch.Tensor]]) -> torch.Tensor:
    """Mixture of Experts with a sorted dispatch: ``x`` ``(T, H)`` -> ``(T, H)``.

    Introduced in Chapter 7. :func:`dispatch` gathers the tokens into one contiguous group per
    expert, each expert runs on its slice (``split`` by the counts), and :func:`combine` adds
    the weighted outputs back with ``index_add_``. Equal to :func:`moe_loop` up to float
    rounding.
    """
    x_sorted, order, counts = dispatch(x, experts)
    counts = F.pad(counts, (0, len(expert_fns) - counts.numel()))  # experts after the last used
    groups = x_sorted.split(counts.tolist())  # one (n_e, H) view per expert
    y_sorted = torch.cat([fn(g) for fn, g in zip(expert_fns, groups)])  # (T * k, H)
    return combine(y_sorted, order, weights, x.shape[0])


def capacity_slots(experts: torch.Tensor, num_experts: int) -> torch.Tensor:
    """Each (token, slot) pair's place in its expert's queue: ``(T, k)`` -> ``(T, k)`` int64.

    Introduced in Chapter 7. The pairs queue in flat order ``t * k + j`` (earlier tokens
    first); pair ``(t, j)`` is number ``slots[t, j]`` (from 0) of expert ``experts[t, j]``: a
    running count per expert (``one_hot(...).cumsum(0)``), read at the pair's own expert with
    ``gather``. With a capacity ``C``, the pairs with ``slots >= C`` are dropped.
    """
    if not isinstance(experts, torch.Tensor) or experts.is_floating_point() or experts.dim() != 2:
        got = (f"shape {tuple(experts.shape)}, dtype {experts.dtype}" if isinstance(experts, torch.Tensor)
               else type(experts).__name__)
        raise TypeError(f"capacity_slots: experts must be a (T, k) int64 tensor; got {got}.")
    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or experts.numel() and not (
            0 <= int(experts.min()) and int(experts.max()) < num_experts):
        raise ValueError(f"capacity_slots: the expert ids must lie in [0, num_experts); got num_experts = "
                         f"{num_experts!r} and ids in [{int(experts.min())}, {int(experts.max())}].")
    flat = experts.reshape(-1, 1)                                      # (T * k, 1)
    running = F.one_hot(flat[:, 0], num_experts).cumsum(0)             # (T * k, E)
    return (running.gather(1, flat) - 1).view(experts.shape)


def load_balancing_loss(router_logits: torch.Tensor, k: int) -> torch.Tensor:
    """The Switch / Mixtral auxiliary loss from the dispatch's counts: ``(T, E)`` -> ``()``.

    Introduced in Chapter 7. ``E * sum_e f_e * P_e`` with ``f_e = counts[e] / T`` (the rows
    that expert ``e`` receives per token, ``bincount`` of the top-``k`` experts) and ``P_e`` the
    router's mean probability of ``e``; it is ``k`` when both are uniform.
    Equal to transformers' ``load_balancing_loss_func`` for one layer without a mask.
    """
    _check_logits(router_logits, "load_balancing_loss")
    if router_logits.dim() != 2:
        raise ValueError(f"load_balancing_loss: router_logits must be (T, E); got shape {tuple(router_logits.shape)}.")
    T, E = router_logits.shape
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= E:
        raise ValueError(f"load_balancing_loss: k must be an int in [1, E] = [1, {E}]; got {k!r}.")
    probs = router_logits.softmax(-1)                                  # (T, E)
    experts = probs.topk(k, dim=-1).indices                            # (T, k)
    counts = torch.bincount(experts.reshape(-1), minlength=E)          # (E,)
    return E * (counts / T * probs.mean(0)).sum()
