"""Chapter 7 exercises: gather and scatter at generation time.

The top-p mask scattered back to vocabulary order, a find-the-bug on a token drawn among the
top k (the draw's position among the candidates gathered back to its token id), one step of beam
search (flat top-k, ``//`` and ``%``), the batched cache reorder (the batch offset), the
Mixture-of-Experts dispatch, combine and routing weights, the repetition penalty (gather, where,
scatter), each pair's place in its expert's queue (capacity) and the load-balancing loss. Logits and scores are distinct in every row (a permutation of
spaced values), so the sort and the top-k have one right answer without ties; sizes are drawn
so that B != K and T * k != T, where the planted mistakes bite.
"""
from __future__ import annotations

import torch

from gatherbook.exercises.declaration import Mistake, Wrong, exercise
from gatherbook.exercises.cases import between as _int

I64 = torch.int64
ATOL = 1e-5


def _t(values) -> torch.Tensor:
    return torch.tensor(values, dtype=I64)


def _distinct_rows(g: torch.Generator, *shape: int, step: float = 0.7) -> torch.Tensor:
    """Float rows whose entries are distinct: a random permutation of evenly spaced values."""
    n = shape[-1]
    rows = [torch.randperm(n, generator=g) for _ in range(int(torch.tensor(shape[:-1]).prod()))]
    vals = (torch.stack(rows).float() - (n - 1) / 2) * step
    return vals.reshape(shape)


# --------------------------------------------------------------------------------------------
# 2. find the bug: a token drawn among the top k (the stub returns the draw's rank, not its id)


def _rank_not_token(logits, k, u):  # the notebook's stub: the same code without the gather
    values, ids = logits.topk(k, dim=-1)
    cdf = values.softmax(-1).cumsum(-1)
    j = (cdf <= u[:, None]).sum(-1, keepdim=True).clamp(max=k - 1)
    return j.squeeze(-1)


def _every_row_index(logits, k, u):
    values, ids = logits.topk(k, dim=-1)
    j = (values.softmax(-1).cumsum(-1) <= u[:, None]).sum(-1).clamp(max=k - 1)
    return ids[:, j]


def _vocabulary_probs(logits, k, u):
    values, ids = logits.softmax(-1).topk(k, dim=-1)  # not renormalised over the k
    j = (values.cumsum(-1) <= u[:, None]).sum(-1, keepdim=True).clamp(max=k - 1)
    return ids.gather(-1, j).squeeze(-1)


def _whole_vocabulary(logits, k, u):
    cdf = logits.softmax(-1).cumsum(-1)  # every token, in vocabulary order
    return (cdf <= u[:, None]).sum(-1).clamp(max=logits.shape[-1] - 1)


def _draws(logits: torch.Tensor, k: int, ranks: torch.Tensor) -> torch.Tensor:
    """u for each row in the middle of the interval of candidate ``ranks[b]``: no draw sits
    on a boundary, so every way of computing the cumulative sum draws the same token."""
    cdf = logits.topk(k, dim=-1).values.double().softmax(-1).cumsum(-1)
    lower = torch.cat([torch.zeros_like(cdf[:, :1]), cdf[:, :-1]], dim=-1)
    r = ranks[:, None]
    return ((lower.gather(-1, r) + cdf.gather(-1, r)) / 2).squeeze(-1).float()


def _sample_case(logits: torch.Tensor, k: int, ranks) -> tuple:
    return logits, k, _draws(logits, k, ranks if isinstance(ranks, torch.Tensor) else _t(ranks))


def _sample_random(g: torch.Generator):
    B = _int(g, 1, 4)
    V = B + _int(g, 2, 6)  # V != B
    k = _int(g, 2, V)
    logits = _distinct_rows(g, B, V, step=0.5)
    return _sample_case(logits, k, torch.randint(0, k, (B,), generator=g))


def _sample_searchsorted(logits, k, u):
    values, ids = logits.topk(k, dim=-1)
    j = torch.searchsorted(values.softmax(-1).cumsum(-1), u[:, None], right=True)
    return ids[torch.arange(ids.shape[0], device=ids.device), j.clamp(max=k - 1).squeeze(-1)]


def _sample_filtered(logits, k, u):  # top-k filter in vocabulary order, then sort: take_along_dim
    kth = logits.topk(k, dim=-1).values[..., -1:]
    probs = logits.masked_fill(logits < kth, float("-inf")).softmax(-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    j = (sorted_probs.cumsum(-1) <= u[:, None]).sum(-1, keepdim=True).clamp(max=k - 1)
    return torch.take_along_dim(order, j, dim=-1)[:, 0]


def _sample_loop(logits, k, u):
    out = []
    for row, draw in zip(logits, u.tolist()):
        values, ids = row.topk(k)
        mass, pick = 0.0, ids[-1]
        for p, token in zip(values.softmax(-1).tolist(), ids):
            mass += p
            if mass > draw:
                pick = token
                break
        out.append(pick)
    return torch.stack(out)


def _sample_one_hot(logits, k, u):
    values, ids = logits.topk(k, dim=-1)
    j = (values.softmax(-1).cumsum(-1) <= u[:, None]).sum(-1).clamp(max=k - 1)
    return (torch.nn.functional.one_hot(j, k) * ids).sum(-1)


_ROW = torch.tensor([[1.0, 3.0, -1.0, 2.5, 0.0, 2.0]])  # the chapter's row: top 3 are ids 1, 3, 5

@exercise(
    bug="rank_not_token",
    args=("logits", "k", "u"),
    edge_cases=[
        _sample_case(_ROW, 3, [1]),                                          # id 3, rank 1
        _sample_case(torch.tensor([[0.5, -0.3, 2.0], [-1.0, 1.5, 0.2]]), 2, [0, 1]),  # B = 2
        _sample_case(torch.tensor([[2.0, 1.0, 0.0, -1.0]]), 3, [2]),       # sorted: rank == id
        _sample_case(torch.tensor([[0.0, 0.2, -0.3, 0.1, -0.1, -0.2]]), 3, [1]),  # flat: k of V
        _sample_case(torch.cat([_ROW, -_ROW]), 3, [2, 0]),                 # k-th candidate
        _sample_case(torch.tensor([[0.0, -200.0, 1.0, 0.5]]), 4, [2]),     # underflowing logit
        _sample_case(torch.tensor([[0.3, -0.4, 0.9, 0.1, -1.2]]), 1, [0]),  # k = 1: the argmax
    ],
    random_case=_sample_random,
    seed=707,
    mistakes=[
        Mistake("rank_not_token", _rank_not_token),
        Mistake("every_row_index", _every_row_index),
        Mistake("vocabulary_probs", _vocabulary_probs),
        Mistake("whole_vocabulary", _whole_vocabulary),
    ],
    right=[_sample_searchsorted, _sample_filtered, _sample_loop, _sample_one_hot],
    wrong=[Wrong(lambda logits, k, u: sample_top_k(logits, k, u)[:, None], hint="generic.size_one",
                 kind="shape"),
           Wrong(lambda logits, k, u: sample_top_k(logits, k, u).int(), hint="generic.dtype",
                 kind="dtype")],
)
def sample_top_k(logits: torch.Tensor, k: int, u: torch.Tensor) -> torch.Tensor:
    """One token per row drawn among the ``k`` most likely, with the uniform numbers ``u`` given.

    The candidates are the ``k`` largest logits of the row, most likely first, with the softmax
    of their logits as probabilities; the token drawn is the first candidate whose cumulative
    probability exceeds ``u[b]`` (inverse-CDF sampling, the draw ``torch.multinomial`` makes
    with its own random numbers). logits: (B, V) float, distinct in each row; k: int in
    [1, V]; u: (B,) float in [0, 1).
    Returns (B,) int64 token ids.
    """
    values, ids = logits.topk(k, dim=-1)                      # (B, k): most likely first
    cdf = values.softmax(-1).cumsum(-1)                       # (B, k)
    j = (cdf <= u[:, None]).sum(-1, keepdim=True).clamp(max=k - 1)  # (B, 1): the draw's rank
    return ids.gather(-1, j).squeeze(-1)                      # its token id


# --------------------------------------------------------------------------------------------
# 1. the top-p mask

def _top_p_parts(logits, p):
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    remove_sorted = probs.cumsum(-1) - probs >= p
    remove_sorted[:, 0] = False
    return remove_sorted, order


def _unscattered(logits, p):
    return _top_p_parts(logits, p)[0]


def _scatter_with_rank(logits, p):
    remove_sorted, order = _top_p_parts(logits, p)
    return torch.zeros_like(remove_sorted).scatter(-1, order.argsort(-1), remove_sorted)


def _crossing_removed(logits, p):
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    remove_sorted = sorted_logits.softmax(-1).cumsum(-1) > p
    remove_sorted[:, 0] = False
    return torch.zeros_like(remove_sorted).scatter(-1, order, remove_sorted)


def _keep_mask(logits, p):
    return ~top_p_remove(logits, p)


def _top_removed_too(logits, p):  # without "the most likely token is always kept"
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    return torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, probs.cumsum(-1) - probs >= p)


def _top_p_random(g: torch.Generator):
    B = _int(g, 1, 4)
    V = B + _int(g, 1, 6)  # V != B
    p = (0.2, 0.5, 0.75, 0.9)[_int(g, 0, 3)]
    return _distinct_rows(g, B, V), p


def _top_p_ascending(logits, p):  # transformers' way: sort ascending, cut at 1 - p
    s, order = logits.sort(-1)
    remove = s.softmax(-1).cumsum(-1) <= 1 - p
    remove[:, -1] = False
    return remove.scatter(1, order, remove)


def _top_p_gather(logits, p):  # the inverse permutation, read with gather
    s, order = logits.sort(-1, descending=True)
    probs = s.softmax(-1)
    remove = (probs.cumsum(-1) - probs) >= p
    remove[:, 0] = False
    return remove.gather(-1, order.argsort(-1))


def _top_p_loop(logits, p):
    out = torch.zeros_like(logits, dtype=torch.bool)
    for b in range(logits.shape[0]):
        probs = logits[b].softmax(-1)
        mass = 0.0
        for v in logits[b].argsort(descending=True).tolist():
            out[b, v] = mass >= p and mass > 0
            mass += probs[v].item()
    return out


@exercise(
    args=("logits", "p"),
    edge_cases=[
        (torch.tensor([[1.0, 3.0, -1.0, 2.5, 0.0, 2.0]]), 0.8),         # the chapter's row
        (torch.tensor([[0.5, -0.3, 2.0], [-1.0, 1.5, 0.2]]), 0.6),      # B = 2
        (torch.tensor([[0.0, 4.0, 1.0, -2.0]]), 0.3),                   # only the top token stays
        (torch.tensor([[0.3, 0.2, 0.1, 0.0, -0.1]]), 0.9),              # sorted already
        (torch.tensor([[1.0, -0.5, 2.0], [0.0, 0.4, -0.2]]), 0.0),      # p == 0: the top token alone stays
        (torch.tensor([[3.0, 0.0, -2.5], [0.5, 0.2, 0.4]]), 1.0),       # p == 1: every token stays (the
    ],                                                                   # last of row 0 holds 0.4%)
    random_case=_top_p_random,
    seed=701,
    mistakes=[
        Mistake("unscattered", _unscattered),
        Mistake("scatter_with_rank", _scatter_with_rank),
        Mistake("crossing_removed", _crossing_removed),
        Mistake("keep_mask", _keep_mask),
        Mistake("top_removed_too", _top_removed_too),
    ],
    right=[_top_p_ascending, _top_p_gather, _top_p_loop],
    wrong=[Wrong(lambda logits, p: top_p_remove(logits, p).float(), hint="generic.dtype", kind="dtype"),
           Wrong(lambda logits, p: top_p_remove(logits, min(p, 0.99)), hint=None, kind="values",
                 why="p clamped below 1: at p = 1 a token holding under 1% is removed")],
)
def top_p_remove(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Which tokens top-p removes: ``(B, V)`` bool, ``True`` where removed.

    A token is removed when the tokens ranked above it (by logit, descending) already hold
    probability ``>= p``; the most likely token is always kept. logits: (B, V) float with
    distinct values in each row; p: float in [0, 1] (p = 1 keeps every token except, in float32,
    one so unlikely that the mass above it rounds to 1: the second of [0, -30]; transformers
    5.23.0's generate() leaves top-p out at p = 1, ``top_p < 1.0`` in generation/utils.py, l.1620).
    Returns (B, V) bool.
    """
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    remove_sorted = probs.cumsum(-1) - probs >= p
    remove_sorted[:, 0] = False
    return torch.zeros_like(remove_sorted).scatter(-1, order, remove_sorted)


# --------------------------------------------------------------------------------------------
# 3. one beam-search step

def _beam_step_with(beam_of, token_of):
    def fn(seqs, scores):
        B, K, V = scores.shape
        flat = scores.reshape(B, K * V).topk(K, dim=-1).indices
        beam, token = beam_of(flat, K, V), token_of(flat, K, V)
        kept = seqs.gather(1, beam[..., None].expand(-1, -1, seqs.shape[-1]))
        return torch.cat([kept, token[..., None]], dim=-1)
    return fn


def _per_beam_best(seqs, scores):
    best, token = scores.max(-1)  # the best token of each beam, no competition between beams
    return torch.cat([seqs, token[..., None]], dim=-1)


def _beam_random(g: torch.Generator):
    B, V, L = _int(g, 1, 3), _int(g, 5, 9), _int(g, 1, 4)
    K = B + _int(g, 1, 2) if B < 3 else 2  # K != B
    seqs = torch.randint(0, V, (B, K, L), generator=g, dtype=I64)
    return seqs, _distinct_rows(g, B, K * V).reshape(B, K, V)


def _beam_fixed(seed: int, B: int, K: int, V: int, L: int):
    g = torch.Generator().manual_seed(seed)
    seqs = torch.arange(B * K * L, dtype=I64).reshape(B, K, L) % V
    return seqs, _distinct_rows(g, B, K * V).reshape(B, K, V)


def _beam_step_loop(seqs, scores):
    B, K, V = scores.shape
    rows = []
    for b in range(B):
        pairs = sorted(((scores[b, i, v].item(), i, v) for i in range(K) for v in range(V)),
                       reverse=True)[:K]
        rows.append(torch.stack([torch.cat([seqs[b, i], seqs.new_tensor([v])]) for _, i, v in pairs]))
    return torch.stack(rows)


def _beam_step_take(seqs, scores):
    B, K, V = scores.shape
    f = scores.flatten(1).topk(K).indices
    beam, token = torch.div(f, V, rounding_mode="floor"), torch.remainder(f, V)
    return torch.cat([torch.take_along_dim(seqs, beam[..., None], dim=1), token[..., None]], -1)


def _beam_step_offsets(seqs, scores):  # the flat cache layout of the chapter: rows b * K + beam
    B, K, V = scores.shape
    f = scores.reshape(B, K * V).topk(K).indices
    rows = (f // V + K * torch.arange(B, device=f.device)[:, None]).reshape(-1)
    kept = seqs.reshape(B * K, -1).index_select(0, rows).reshape(B, K, -1)
    return torch.cat([kept, (f % V)[..., None]], -1)


def _beam_step_no_offset(seqs, scores):
    B, K, V = scores.shape
    f = scores.reshape(B, K * V).topk(K).indices
    kept = seqs.reshape(B * K, -1).index_select(0, (f // V).reshape(-1)).reshape(B, K, -1)
    return torch.cat([kept, (f % V)[..., None]], -1)


@exercise(
    args=("seqs", "scores"),
    edge_cases=[
        (_t([[[3], [4]]]), torch.tensor([[[-1.0, -0.2, -3.0, -0.5, -4.0],
                                          [-2.0, -1.5, -2.5, -3.5, -0.9]]])),  # beam 0 twice
        (_t([[[3], [4]]]), torch.tensor([[[-1.0, -2.6, -0.9, -4.0, -3.1],
                                          [-0.7, -3.3, -2.2, -1.5, -5.0]]])),  # the chapter's
        _beam_fixed(71, 1, 3, 7, 2),   # one row
        _beam_fixed(72, 2, 2, 6, 3),   # B == K
        _beam_fixed(73, 3, 2, 5, 1),   # B > K
    ],
    random_case=_beam_random,
    seed=702,
    mistakes=[
        Mistake("div_mod_swapped", _beam_step_with(lambda f, K, V: f % V, lambda f, K, V: f // V)),
        Mistake("divided_by_beams", _beam_step_with(lambda f, K, V: f // K, lambda f, K, V: f % K)),
        Mistake("no_batch_offset", _beam_step_no_offset),
        Mistake("per_beam_best", _per_beam_best),
    ],
    right=[_beam_step_loop, _beam_step_take, _beam_step_offsets],
    wrong=[Wrong(lambda seqs, scores: beam_step(seqs, scores).int(), hint="generic.dtype", kind="dtype")],
)
def beam_step(seqs: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """The next beams: ``seqs`` (B, K, L) int64, ``scores`` (B, K, V) float -> (B, K, L + 1).

    Take the ``K`` best (beam, token) pairs of each row over all ``K * V`` scores, best first;
    new beam ``j`` of row ``b`` is ``seqs[b, beam_j]`` followed by ``token_j``.
    Returns (B, K, L + 1) int64.
    """
    B, K, V = scores.shape
    flat = scores.reshape(B, K * V).topk(K, dim=-1).indices  # (B, K)
    beam, token = flat // V, flat % V
    kept = seqs.gather(1, beam[..., None].expand(-1, -1, seqs.shape[-1]))  # (B, K, L)
    return torch.cat([kept, token[..., None]], dim=-1)


# --------------------------------------------------------------------------------------------
# 4. the batched cache reorder

def _no_offset(cache, beam):
    return cache.index_select(0, beam.reshape(-1))


def _offset_by_batch(cache, beam):
    B, K = beam.shape
    return cache.index_select(0, (beam + B * torch.arange(B)[:, None]).reshape(-1))


def _offset_per_beam(cache, beam):
    B, K = beam.shape
    return cache.index_select(0, (beam + K * torch.arange(K)[None, :]).reshape(-1))


def _reorder_random(g: torch.Generator):
    B, K, D = _int(g, 2, 4), _int(g, 2, 4), _int(g, 1, 4)
    if B == K:
        K += 1
    return torch.randint(-49, 50, (B * K, D), generator=g).float() / 10, torch.randint(0, K, (B, K), generator=g)


def _reorder_loop(cache, beam):
    B, K = beam.shape
    return torch.stack([cache[b * K + beam[b, j]] for b in range(B) for j in range(K)])


def _reorder_view(cache, beam):
    B, K = beam.shape
    c = cache.reshape(B, K, -1)
    return c.gather(1, beam[..., None].expand(-1, -1, c.shape[-1])).reshape(cache.shape)


def _reorder_index(cache, beam):
    B, K = beam.shape
    return cache.reshape(B, K, -1)[torch.arange(B, device=beam.device)[:, None], beam].reshape(cache.shape)


@exercise(
    args=("cache", "beam"),
    edge_cases=[
        (torch.arange(6.0).reshape(6, 1), _t([[1, 0, 0], [2, 2, 1]])),   # the chapter's beams
        (torch.arange(8.0).reshape(4, 2), _t([[1, 1, 0, 3]])),           # B == 1
        (torch.arange(12.0).reshape(6, 2), _t([[1, 1], [0, 1], [1, 0]])),  # B = 3, K = 2
        (torch.tensor([[0.5, -1.5, 2.0]]), _t([[0]])),                  # B = K = 1
    ],
    random_case=_reorder_random,
    seed=703,
    grad="same",
    mistakes=[
        Mistake("no_batch_offset", _no_offset),
        Mistake("offset_by_batch_size", _offset_by_batch),
        Mistake("offset_per_beam", _offset_per_beam),
    ],
    right=[_reorder_loop, _reorder_view, _reorder_index],
    wrong=[Wrong(lambda cache, beam: reorder_beams(cache, beam).detach(), hint="generic.no_grad", kind="no_grad")],
)
def reorder_beams(cache: torch.Tensor, beam: torch.Tensor) -> torch.Tensor:
    """Cache rows for the new beams: ``cache`` (B * K, D), ``beam`` (B, K) int64 in [0, K).

    Row ``b * K + j`` of the answer is row ``b * K + beam[b, j]`` of ``cache``: the beam ids are
    per row of the batch.
    Returns (B * K, D), the dtype of ``cache``.
    """
    B, K = beam.shape
    rows = (beam + K * torch.arange(B, device=beam.device)[:, None]).reshape(-1)
    return cache.index_select(0, rows)


# --------------------------------------------------------------------------------------------
# 5. MoE dispatch

def _dispatch_order_as_token(x, experts):
    return x.index_select(0, experts.reshape(-1).argsort(stable=True))


def _dispatch_mod(x, experts):
    k = experts.shape[1]
    return x.index_select(0, experts.reshape(-1).argsort(stable=True) % k)


def _dispatch_unsorted(x, experts):
    return x.repeat_interleave(experts.shape[1], dim=0)


def _dispatch_unstable(x, experts):  # argsort() keeps no order among equal experts
    return x.index_select(0, experts.reshape(-1).argsort() // experts.shape[1])


def _experts(g: torch.Generator, T: int, E: int, k: int) -> torch.Tensor:
    return torch.stack([torch.randperm(E, generator=g)[:k] for _ in range(T)])


def _dispatch_random(g: torch.Generator):
    T, E = _int(g, 2, 7), _int(g, 3, 6)
    k, H = _int(g, 2, min(3, E)), _int(g, 1, 4)
    H += H >= T  # H != T
    return torch.randint(-49, 50, (T, H), generator=g).float() / 10, _experts(g, T, E, k)


def _moe_x(seed: int, T: int, H: int) -> torch.Tensor:
    return torch.randint(-49, 50, (T, H), generator=torch.Generator().manual_seed(seed)).float() / 10


def _dispatch_loop(x, experts):
    rows = [x[t] for e in range(int(experts.max()) + 1) for t in range(x.shape[0])
            if (experts[t] == e).any()]
    return torch.stack(rows)


def _dispatch_where(x, experts):
    return torch.cat([x[torch.where(experts == e)[0]] for e in range(int(experts.max()) + 1)])


def _dispatch_gather(x, experts):
    k = experts.shape[1]
    tokens = experts.flatten().sort(stable=True).indices // k
    return x.gather(0, tokens[:, None].expand(-1, x.shape[1]))


@exercise(
    args=("x", "experts"),
    edge_cases=[
        (torch.arange(6.0).reshape(3, 2), _t([[1, 0], [0, 2], [2, 1]])),  # values = positions
        (_moe_x(74, 4, 3), _t([[3, 1], [1, 0], [0, 3], [2, 1]])),
        (_moe_x(75, 1, 2), _t([[2, 0, 1]])),                               # one token, k = 3
        # 24 pairs, 8 per expert: long enough that argsort() without stable=True reorders equal
        # experts on the CPU (it keeps their order on a short row)
        (torch.arange(24.0).reshape(12, 2), torch.stack([torch.arange(12) % 3, (torch.arange(12) + 1) % 3], 1)),
    ],
    random_case=_dispatch_random,
    seed=704,
    grad="same",
    mistakes=[
        Mistake("order_as_token", _dispatch_order_as_token),
        Mistake("mod_instead_of_div", _dispatch_mod),
        Mistake("not_sorted", _dispatch_unsorted),
        Mistake("unstable_sort", _dispatch_unstable),
    ],
    right=[_dispatch_loop, _dispatch_where, _dispatch_gather],
    wrong=[Wrong(lambda x, experts: moe_dispatch(x, experts).detach(), hint="generic.no_grad", kind="no_grad"),
           Wrong(lambda x, experts: x[experts.flatten().sort().indices // experts.shape[1]], hint="unstable_sort",
                 kind="values", why="sort() without stable=True: the same unstable order")],
)
def moe_dispatch(x: torch.Tensor, experts: torch.Tensor) -> torch.Tensor:
    """Token rows grouped by expert: ``x`` (T, H), ``experts`` (T, k) int64 -> (T * k, H).

    One row per (token, slot), sorted by expert (expert 0's rows first); within an expert, in
    token order. A token's k experts are distinct.
    Returns (T * k, H), the dtype of ``x``.
    """
    k = experts.shape[1]
    order = experts.reshape(-1).argsort(stable=True)
    return x.index_select(0, order // k)


# --------------------------------------------------------------------------------------------
# 6. MoE combine

def _combine_weights_unsorted(y, order, weights):
    T, k = weights.shape
    return torch.zeros(T, y.shape[1]).index_add_(0, order // k, y * weights.reshape(-1)[:, None])


def _combine_no_weights(y, order, weights):
    T, k = weights.shape
    return torch.zeros(T, y.shape[1]).index_add_(0, order // k, y)


def _combine_wrong_dim(y, order, weights):
    T, k = weights.shape
    w = weights.reshape(-1)[order]
    return torch.zeros(T, y.shape[1]).index_add_(1, order // k, y * w[:, None])


def _combine_written(y, order, weights):  # each token's rows written, not added: the last one stays
    T, k = weights.shape
    w = weights.reshape(-1)[order]
    return torch.zeros(T, y.shape[1]).index_copy_(0, order // k, y * w[:, None])


def _combine_written_scatter(y, order, weights):
    T, k = weights.shape
    w = weights.reshape(-1)[order]
    return torch.zeros(T, y.shape[1]).scatter(0, (order // k)[:, None].expand(-1, y.shape[1]), y * w[:, None])


def _combine_written_setitem(y, order, weights):
    T, k = weights.shape
    out = torch.zeros(T, y.shape[1])
    out[order // k] = y * weights.reshape(-1)[order][:, None]
    return out


def _combine_case(g: torch.Generator, T: int, k: int, H: int):
    order = torch.randperm(T * k, generator=g)
    y = torch.randint(-49, 50, (T * k, H), generator=g).float() / 10
    w = torch.rand(T, k, generator=g).softmax(-1)
    return y, order, w


def _combine_random(g: torch.Generator):
    T, k, H = _int(g, 2, 6), _int(g, 2, 3), _int(g, 1, 3)  # T * k >= 4 > H
    return _combine_case(g, T, k, H)


def _combine_fixed(seed: int, T: int, k: int, H: int):
    return _combine_case(torch.Generator().manual_seed(seed), T, k, H)


def _combine_scatter_add(y, order, weights):
    T, k = weights.shape
    tok = (order // k)[:, None].expand(-1, y.shape[1])
    w = weights.flatten().gather(0, order)
    return y.new_zeros(T, y.shape[1]).scatter_add(0, tok, y * w[:, None])


def _combine_unsort(y, order, weights):  # transformers' grouped_mm way: inverse permutation, sum
    T, k = weights.shape
    inv = torch.empty_like(order)
    inv[order] = torch.arange(order.numel(), device=order.device)
    return (y[inv].reshape(T, k, -1) * weights[..., None]).sum(1)


def _combine_loop(y, order, weights):
    T, k = weights.shape
    rows = [y.new_zeros(y.shape[1]) for _ in range(T)]
    for i, pos in enumerate(order.tolist()):
        rows[pos // k] = rows[pos // k] + weights[pos // k, pos % k] * y[i]
    return torch.stack(rows)


@exercise(
    args=("y_sorted", "order", "weights"),
    edge_cases=[
        # distinct rows: a permutation applied the wrong way round shows in the values
        (torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 2.0]]), _t([2, 0, 3, 1]),
         torch.tensor([[0.75, 0.25], [0.5, 0.5]])),
        _combine_fixed(76, 3, 2, 3),
        _combine_fixed(77, 1, 3, 2),   # one token
        _combine_fixed(78, 4, 2, 1),   # H == 1
        (torch.tensor([[1.5, -2.0, 0.5]]), _t([0]), torch.tensor([[1.0]])),  # T = k = 1
    ],
    random_case=_combine_random,
    seed=705,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake("weights_unsorted", _combine_weights_unsorted),
        Mistake("no_weights", _combine_no_weights),
        Mistake("index_add_wrong_dim", _combine_wrong_dim),
        Mistake("written_not_added", _combine_written),
    ],
    right=[_combine_scatter_add, _combine_unsort, _combine_loop],
    wrong=[Wrong(lambda y, order, weights: moe_combine(y, order, weights).detach(), hint="generic.no_grad", kind="no_grad"),
           Wrong(_combine_written_scatter, hint="written_not_added", kind="values", why="scatter: the last row written stays"),
           Wrong(_combine_written_setitem, hint="written_not_added", kind="values", why="out[order // k] = ...")],
)
def moe_combine(y_sorted: torch.Tensor, order: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Each token's weighted sum of its expert outputs: -> (T, H).

    ``y_sorted`` (T * k, H): row ``i`` is an expert's output for the (token, slot) pair at flat
    position ``order[i]`` (``= t * k + j``); ``order`` (T * k,) int64, a permutation;
    ``weights`` (T, k) float: ``out[t] = sum_j weights[t, j] * (the row of pair t * k + j)``.
    Returns (T, H) float.
    """
    T, k = weights.shape
    w = weights.reshape(-1)[order]
    out = torch.zeros(T, y_sorted.shape[1], dtype=y_sorted.dtype, device=y_sorted.device)
    return out.index_add_(0, order // k, y_sorted * w[:, None])


# --------------------------------------------------------------------------------------------
# 7. routing weights

def _route_not_renormalised(router_logits, k):
    weights, experts = router_logits.softmax(-1).topk(k, dim=-1)
    return torch.zeros_like(router_logits).scatter(1, experts, weights)


def _route_zero_masked(router_logits, k):
    kth = router_logits.topk(k, dim=-1).values[:, -1:]
    return router_logits.masked_fill(router_logits < kth, 0.0).softmax(-1)


def _route_dim0(router_logits, k):
    weights, experts = router_logits.softmax(-1).topk(k, dim=-1)
    weights = weights / weights.sum(-1, keepdim=True)
    return torch.zeros_like(router_logits).scatter(0, experts, weights)


def _route_no_top_k(router_logits, k):  # the softmax over every expert: no top-k at all
    return router_logits.softmax(-1)


def _route_random(g: torch.Generator):
    T, E = _int(g, 1, 6), _int(g, 3, 8)
    E += E == T  # E != T
    return _distinct_rows(g, T, E, step=0.4), _int(g, 1, min(3, E - 1))


def _route_softmax_of_topk(router_logits, k):  # the softmax of the kept logits: the same weights
    v, e = router_logits.topk(k, -1)
    return torch.zeros_like(router_logits).scatter(1, e, v.softmax(-1))


def _route_masked(router_logits, k):
    kth = router_logits.topk(k, -1).values[:, -1:]
    return router_logits.masked_fill(router_logits < kth, float("-inf")).softmax(-1)


def _route_one_hot(router_logits, k):
    w, e = router_logits.softmax(-1).topk(k, -1)
    hot = torch.nn.functional.one_hot(e, router_logits.shape[1]).to(w.dtype)  # (T, k, E)
    return (hot * (w / w.sum(-1, keepdim=True))[..., None]).sum(1)


@exercise(
    args=("router_logits", "k"),
    edge_cases=[
        (torch.tensor([[0.2, 1.5, -0.3, 0.9], [1.0, -1.0, 0.5, 0.0]]), 2),
        (torch.tensor([[0.1, -0.4, 0.7, 0.3, -1.2, 0.0]]), 1),   # k = 1: a single 1.0
        (torch.tensor([[2.0, 0.0, -1.0], [0.5, 1.0, 0.0], [-0.2, 0.3, 0.9], [0.0, 0.1, 0.2]]), 2),
    ],
    random_case=_route_random,
    seed=706,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake("not_renormalised", _route_not_renormalised),
        Mistake("masked_with_zero", _route_zero_masked),
        Mistake("scatter_dim0", _route_dim0),
        Mistake("no_top_k", _route_no_top_k),
    ],
    right=[_route_softmax_of_topk, _route_masked, _route_one_hot],
    wrong=[Wrong(lambda router_logits, k: route_weights(router_logits, k).detach(), hint="generic.no_grad", kind="no_grad")],
)
def route_weights(router_logits: torch.Tensor, k: int) -> torch.Tensor:
    """Mixtral's routing weights as a dense (T, E) table.

    ``softmax`` over the E experts, keep each token's k largest, renormalise them to sum to 1,
    and put them at their experts' columns; every other entry is 0. router_logits: (T, E)
    float with distinct values in each row; k: int in [1, E].
    Returns (T, E) float.
    """
    weights, experts = router_logits.softmax(-1).topk(k, dim=-1)
    weights = weights / weights.sum(-1, keepdim=True)
    return torch.zeros_like(router_logits).scatter(1, experts, weights)


# --------------------------------------------------------------------------------------------
# 8. the repetition penalty: gather, where, scatter

def _penalty_divide_always(logits, ids, penalty):
    return logits.scatter(-1, ids, logits.gather(-1, ids) / penalty)


def _penalty_sign_swapped(logits, ids, penalty):
    seen = logits.gather(-1, ids)
    return logits.scatter(-1, ids, torch.where(seen < 0, seen / penalty, seen * penalty))


def _penalty_twice(logits, ids, penalty):  # scatter_add of the change: a repeated id changes twice
    seen = logits.gather(-1, ids)
    new = torch.where(seen < 0, seen * penalty, seen / penalty)
    return logits.scatter_add(-1, ids, new - seen)


def _penalty_first_row(logits, ids, penalty):  # row 0's ids for every row
    seen = logits[:, ids[0]]
    return logits.scatter(-1, ids[:1].expand_as(ids), torch.where(seen < 0, seen * penalty, seen / penalty))


def _penalty_in_place(logits, ids, penalty):
    seen = logits.gather(-1, ids)
    return logits.scatter_(-1, ids, torch.where(seen < 0, seen * penalty, seen / penalty))


def _penalty_mask(logits, ids, penalty):  # transformers' newer form: a mask, then where
    seen = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, ids, True)
    return torch.where(seen, torch.where(logits < 0, logits * penalty, logits / penalty), logits)


def _penalty_loop(logits, ids, penalty):
    out = logits.clone()
    for b in range(logits.shape[0]):
        for v in set(ids[b].tolist()):
            x = logits[b, v]
            out[b, v] = x * penalty if x < 0 else x / penalty
    return out


def _penalty_one_hot(logits, ids, penalty):
    seen = torch.nn.functional.one_hot(ids, logits.shape[-1]).sum(1) > 0  # (B, V)
    factor = torch.where(logits < 0, torch.full_like(logits, penalty), torch.full_like(logits, 1 / penalty))
    return torch.where(seen, logits * factor, logits)


def _penalty_random(g: torch.Generator):
    B = _int(g, 1, 3)
    V = B + _int(g, 3, 6)
    L = _int(g, 2, 6)
    logits = _distinct_rows(g, B, V, step=0.9)
    ids = torch.randint(0, V, (B, L), generator=g)
    ids[:, -1] = ids[:, 0]  # a repeated id in every row
    return logits, ids, (1.2, 1.5, 2.0)[_int(g, 0, 2)]


@exercise(
    args=("logits", "ids", "penalty"),
    edge_cases=[
        (torch.tensor([[1.0, 3.0, -1.0, 2.5, 0.0, 2.0]]), _t([[1, 2, 1]]), 2.0),   # id 1 twice, a negative
        (torch.tensor([[2.0, -1.0, 0.5, -3.0], [-2.0, 1.0, 4.0, 0.0]]), _t([[0, 3], [2, 2]]), 1.5),  # B = 2
        (torch.tensor([[0.5, -0.5, 1.5]]), _t([[2]]), 1.2),                        # one id
        (torch.tensor([[-1.0, 2.0, -4.0], [1.0, 0.5, -0.5], [3.0, -2.0, 0.0]]), _t([[0, 2], [1, 1], [0, 1]]), 2.0),
    ],
    random_case=_penalty_random,
    seed=708,
    mistakes=[
        Mistake("divide_always", _penalty_divide_always),
        Mistake("sign_swapped", _penalty_sign_swapped),
        Mistake("penalised_twice", _penalty_twice),
        Mistake("first_row_ids", _penalty_first_row),
    ],
    right=[_penalty_mask, _penalty_loop, _penalty_one_hot],
    wrong=[Wrong(_penalty_in_place, hint="generic.mutated_input", kind="mutated_input")],
)
def repetition_penalty(logits: torch.Tensor, ids: torch.Tensor, penalty: float) -> torch.Tensor:
    """The logits of the tokens already generated made less likely: -> (B, V).

    logits: (B, V) float; ids: (B, L) int64 in [0, V), the tokens so far (an id may repeat);
    penalty: float > 1. A seen token's logit is divided by ``penalty`` where it is positive and
    multiplied by it where it is negative (once, however often the token was seen); the others
    are unchanged, and ``logits`` is left as it was. Returns (B, V), ``logits``' dtype.
    """
    seen = logits.gather(-1, ids)                                         # (B, L)
    seen = torch.where(seen < 0, seen * penalty, seen / penalty)
    return logits.scatter(-1, ids, seen)                                  # repeats write equal values


# --------------------------------------------------------------------------------------------
# 9. capacity: each pair's place in its expert's queue

def _slots_position(experts, num_experts):  # the pair's flat position, whatever its expert
    return torch.arange(experts.numel(), device=experts.device).view(experts.shape)


def _slots_from_one(experts, num_experts):
    running = torch.nn.functional.one_hot(experts.reshape(-1), num_experts).cumsum(0)
    return running.gather(1, experts.reshape(-1, 1)).view(experts.shape)


def _slots_column_major(experts, num_experts):  # every first choice queued before any second
    flat = experts.T.reshape(-1, 1)
    running = torch.nn.functional.one_hot(flat[:, 0], num_experts).cumsum(0)
    return (running.gather(1, flat) - 1).view(experts.T.shape).T


def _slots_total(experts, num_experts):  # the expert's total count, not the running count
    counts = torch.bincount(experts.reshape(-1), minlength=num_experts)
    return counts[experts] - 1


def _slots_sort(experts, num_experts):  # stable sort by expert: rank minus the group's start
    flat = experts.reshape(-1)
    order = flat.argsort(stable=True)
    counts = torch.bincount(flat, minlength=num_experts)
    start = counts.cumsum(0) - counts
    rank = torch.empty_like(order)
    rank[order] = torch.arange(flat.numel(), device=flat.device)
    return (rank - start[flat]).view(experts.shape)


def _slots_loop(experts, num_experts):
    seen = [0] * num_experts
    out = torch.empty_like(experts)
    for t in range(experts.shape[0]):
        for j in range(experts.shape[1]):
            e = int(experts[t, j])
            out[t, j] = seen[e]
            seen[e] += 1
    return out


def _slots_triangle(experts, num_experts):  # pairs before me with my expert: a lower triangle
    flat = experts.reshape(-1)
    same = flat[:, None] == flat[None, :]
    before = torch.ones_like(same).tril(-1)
    return (same & before).sum(1).view(experts.shape)


def _slots_random(g: torch.Generator):
    T, E = _int(g, 2, 8), _int(g, 3, 6)
    k = _int(g, 1, min(3, E - 1))
    T += T == E  # T != E
    return torch.stack([torch.randperm(E, generator=g)[:k] for _ in range(T)]), E


@exercise(
    args=("experts", "num_experts"),
    edge_cases=[
        (_t([[0, 2], [2, 1], [1, 3], [1, 0], [0, 2], [2, 3]]), 4),   # the chapter's routing
        (_t([[1, 0], [0, 1], [1, 0]]), 3),                             # an unused expert
        (_t([[2], [2], [0], [2]]), 3),                                 # k = 1
        (_t([[3, 1, 0]]), 4),                                          # one token
    ],
    random_case=_slots_random,
    seed=709,
    mistakes=[
        Mistake("flat_position", _slots_position),
        Mistake("counted_from_one", _slots_from_one),
        Mistake("column_major", _slots_column_major),
        Mistake("total_count", _slots_total),
    ],
    right=[_slots_sort, _slots_loop, _slots_triangle],
    wrong=[Wrong(lambda experts, num_experts: capacity_slots(experts, num_experts).float(),
                 hint="generic.dtype", kind="dtype")],
)
def capacity_slots(experts: torch.Tensor, num_experts: int) -> torch.Tensor:
    """Each (token, slot) pair's place in its expert's queue: -> (T, k) int64.

    experts: (T, k) int64 in [0, num_experts), distinct in each row. The pairs queue in flat
    order ``t * k + j`` (token 0's pairs first); pair ``(t, j)`` gets how many earlier pairs
    went to the same expert. With a capacity C, the pairs whose place is ``>= C`` are dropped.
    Returns (T, k) int64.
    """
    flat = experts.reshape(-1, 1)                                         # (T * k, 1)
    running = torch.nn.functional.one_hot(flat[:, 0], num_experts).cumsum(0)  # (T * k, E)
    return (running.gather(1, flat) - 1).view(experts.shape)


# --------------------------------------------------------------------------------------------
# 10. the load-balancing loss

def _lb_parts(router_logits, k):
    probs = router_logits.softmax(-1)
    counts = torch.bincount(probs.topk(k, -1).indices.reshape(-1), minlength=router_logits.shape[1])
    return probs, counts


def _lb_no_num_experts(router_logits, k):
    probs, counts = _lb_parts(router_logits, k)
    return (counts / router_logits.shape[0] * probs.mean(0)).sum()


def _lb_rows_fraction(router_logits, k):  # counts / (T * k): the share of rows, not per token
    probs, counts = _lb_parts(router_logits, k)
    T, E = router_logits.shape
    return E * (counts / (T * k) * probs.mean(0)).sum()


def _lb_top1_only(router_logits, k):
    probs = router_logits.softmax(-1)
    T, E = probs.shape
    counts = torch.bincount(probs.argmax(-1), minlength=E)
    return E * (counts / T * probs.mean(0)).sum()


def _lb_topk_probs(router_logits, k):  # P from the renormalised top-k weights, not the softmax
    T, E = router_logits.shape
    w, e = router_logits.softmax(-1).topk(k, -1)
    dense = torch.zeros_like(router_logits).scatter(1, e, w / w.sum(-1, keepdim=True))
    counts = torch.bincount(e.reshape(-1), minlength=E)
    return E * (counts / T * dense.mean(0)).sum()


def _lb_one_hot(router_logits, k):  # transformers' form: a one-hot per (token, slot)
    probs = router_logits.softmax(-1)
    T, E = probs.shape
    mask = torch.nn.functional.one_hot(probs.topk(k, -1).indices, E).float()   # (T, k, E)
    return E * (mask.mean(0) * probs.mean(0)[None]).sum()


def _lb_loop(router_logits, k):
    T, E = router_logits.shape
    probs = router_logits.softmax(-1)
    total = router_logits.new_zeros(())
    for e in range(E):
        picked = sum(int(e in row) for row in probs.topk(k, -1).indices.tolist())
        total = total + picked / T * probs[:, e].mean()
    return E * total


def _lb_scatter_add(router_logits, k):
    probs = router_logits.softmax(-1)
    T, E = probs.shape
    e = probs.topk(k, -1).indices.reshape(-1)
    counts = torch.zeros(E, dtype=probs.dtype, device=probs.device).scatter_add_(0, e, torch.ones_like(e, dtype=probs.dtype))
    return E * (counts / T * probs.mean(0)).sum()


def _lb_no_minlength(router_logits, k):  # bincount without minlength: max(id) + 1 counts, not E
    probs = router_logits.softmax(-1)
    T, E = probs.shape
    counts = torch.bincount(probs.topk(k, -1).indices.reshape(-1))
    return E * (counts / T * probs.mean(0)).sum()


def _lb_scatter_too_short(router_logits, k):  # the same slip with scatter_add: max(id) + 1 zeros
    probs = router_logits.softmax(-1)
    T, E = probs.shape
    e = probs.topk(k, -1).indices.reshape(-1)
    counts = torch.zeros(int(e.max()) + 1, dtype=probs.dtype, device=probs.device)
    counts = counts.scatter_add(0, e, torch.ones_like(e, dtype=probs.dtype))
    return E * (counts / T * probs.mean(0)).sum()


def _lb_random(g: torch.Generator):
    T, E = _int(g, 2, 8), _int(g, 3, 6)
    T += T == E
    return _distinct_rows(g, T, E, step=0.6), _int(g, 1, min(3, E - 1))


@exercise(
    args=("router_logits", "k"),
    edge_cases=[
        (torch.tensor([[2.0, 0.5, -1.0, 0.0], [1.5, 2.5, 0.0, -0.5], [3.0, -1.0, 1.0, 0.5]]), 2),  # expert 0 popular
        (torch.tensor([[0.3, -0.2, 0.1], [-0.4, 0.6, 0.0], [0.2, 0.0, 0.9], [0.5, 0.1, -0.3]]), 1),   # k = 1
        (torch.tensor([[1.0, -1.0, 0.5, 0.0, -0.5]]), 3),                                               # one token
    ],
    random_case=_lb_random,
    seed=710,
    grad="same",
    atol=ATOL,
    mistakes=[
        Mistake("no_num_experts", _lb_no_num_experts),
        Mistake("rows_fraction", _lb_rows_fraction),
        Mistake("top1_only", _lb_top1_only),
        Mistake("topk_probs", _lb_topk_probs),
        Mistake("no_minlength", _lb_no_minlength),
    ],
    right=[_lb_one_hot, _lb_loop, _lb_scatter_add],
    wrong=[Wrong(lambda router_logits, k: load_balancing_loss(router_logits, k).detach(), hint="generic.no_grad",
                 kind="no_grad"),
           Wrong(lambda router_logits, k: load_balancing_loss(router_logits, k)[None], hint="generic.size_one",
                 kind="shape"),
           Wrong(_lb_scatter_too_short, hint="no_minlength", kind="exception",
                 why="counts of length max(id) + 1: case 1 picks no token for expert 3")],
)
def load_balancing_loss(router_logits: torch.Tensor, k: int) -> torch.Tensor:
    """The auxiliary loss that keeps a router's experts evenly used: -> () float.

    router_logits: (T, E) float, distinct in each row; k: experts per token. With ``probs =
    softmax(router_logits)``, ``f[e]`` = (rows expert ``e`` gets from the top-``k``) / T and
    ``P[e]`` = ``probs[:, e].mean()``: ``E * sum_e f[e] * P[e]`` (Switch Transformer; transformers'
    ``load_balancing_loss_func`` for one layer). Its gradient flows through ``P`` only.
    Returns a 0-dim float tensor.
    """
    T, E = router_logits.shape
    probs = router_logits.softmax(-1)                                     # (T, E)
    top = probs.topk(k, dim=-1).indices.reshape(-1)                       # (T * k,)
    ones = torch.ones_like(top, dtype=probs.dtype)
    counts = torch.zeros(E, dtype=probs.dtype, device=probs.device).scatter_add(0, top, ones)  # (E,)
    return E * (counts / T * probs.mean(0)).sum()
