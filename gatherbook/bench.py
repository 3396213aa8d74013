"""How fast is gather: the figures Chapter 6 shows, and the recorded run they come from.

:func:`speed_figures` measures gather against its alternatives on this machine (a minute on a
laptop); :func:`recorded` returns the figures of the book's recorded run (stored with the
package) and :func:`format_table` writes them as a table. Every figure is a *ratio measured in
one run*: the two things compared run alternately, each several times after a warm-up, and the
ratio of their median times is reported, so the speed of the machine cancels out as far as it
can. The whole benchmark (peak memory in child processes, notebook timing, the CLI that writes
``bench_results/``) is maintainer tooling: ``python tools/bench.py --help``.

Figures (keys of the JSON; ``cuda_`` in front for the same figure on a GPU):

- ``gather_vs_loop_speedup``: a Python loop doing the same picks, time / gather time.
- ``gather_vs_indexing_ratio``, ``take_along_dim_vs_indexing_ratio``,
  ``onehot_matmul_vs_indexing_ratio``: time of each / time of advanced indexing
  ``x[arange(N), ids]`` on the same picks (one per row of an ``(N, V)`` tensor).
- ``gather_bandwidth_fraction_of_copy_expanded`` / ``..._dense``: bytes per second of
  ``x.gather(0, index)`` that copies whole rows of a tensor of tens of MB (input read + output
  written) over those of ``x.clone()``, for an index expanded along the last dim (stride 0, as
  ``idx[:, None].expand(-1, D)`` makes it: the pattern of CUDA's fast path) and for the same
  index made contiguous. ``lastdim_gather_bw_fraction_expanded`` / ``_dense``:
  the same along the last dim, for one column permutation expanded over the rows and for a full
  random index. ``gather_bandwidth_fraction_of_copy`` holds all four in one dict.
- ``logprob_peak_ratio_naive`` / ``_chunked`` / ``_fused``: extra peak memory of per-token
  log-probs over the size of the logits, at ``B, L, V = 4, 512, 32000`` float32, each measured in
  its own process with :func:`gatherbook.memory.peak_memory`. Naive: ``log_softmax`` + gather on
  given logits; chunked: :func:`gatherbook.logprobs.token_logprobs` with a ``chunk_size``; fused:
  :func:`gatherbook.fused_logprobs.fused_token_logprobs` from hidden states and the LM head (the
  logits are never made, so their own size is not counted for the other two either).
  ``logprob_train_peak_ratio_fused``: the same for forward *and* backward of the fused version.
- ``logprob_ways_cpu.json`` (a run of its own, ``python tools/bench.py --logprob-ways 9``):
  chapter 3's ways to ``log π(a|s)`` of the taken actions on a batch of 64 states and 4 actions,
  each as its time over that of ``log_softmax`` + ``gather`` (:func:`logprob_way_ratios`), the
  median, lowest and highest over several runs, with the machine and its load average.
- ``notebook_seconds``: each chapter notebook's execution time, summed over its cells, from
  the timestamps that ``make execute`` stored in it (``--execute-notebooks`` runs them afresh).
"""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Callable

import torch

__all__ = ["compare", "speed_figures", "logprob_way_ratios", "format_table", "recorded"]

RESULTS = Path(__file__).resolve().parent / "bench_results"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def compare(fns: dict[str, Callable[[], object]], repeats: int = 7, warmup: int = 2,
            device: torch.device | str = "cpu") -> dict[str, float]:
    """Median seconds of each function, run alternately: ``warmup`` rounds, then ``repeats``.

    Running the functions in turn (a, b, c, a, b, c, ...) rather than one after the other puts
    each of them under the same load, so ratios of the medians are stable on a busy machine.

    Raises:
        ValueError: ``fns`` empty or not callables; ``repeats`` or ``warmup`` not a positive int
            (``warmup`` may be 0).
    """
    if not isinstance(fns, dict) or not fns or not all(callable(f) for f in fns.values()):
        raise ValueError(f"fns must be a non-empty dict of name -> callable; got {fns!r}.")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1; got {repeats!r}.")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0; got {warmup!r}.")
    device = torch.device(device)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for round_ in range(warmup + repeats):
        for name, fn in fns.items():
            _sync(device)
            start = time.perf_counter()
            fn()
            _sync(device)
            if round_ >= warmup:
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def speed_figures(device: torch.device | str = "cpu", quick: bool = False) -> dict[str, float]:
    """The speed ratios (see the module's docstring) on one device.

    Introduced in Chapter 6.
    """
    device = torch.device(device)
    gen = torch.Generator().manual_seed(0)
    repeats = 5 if quick else 15
    n, vocab = (2048, 4096) if quick else (8192, 8192)
    x = torch.randn(n, vocab, generator=gen).to(device)
    ids = torch.randint(0, vocab, (n,), generator=gen).to(device)
    rows = torch.arange(n, device=device)
    col = ids[:, None]

    def loop():
        return torch.stack([x[i, ids[i]] for i in range(n)])

    def onehot():
        hot = torch.nn.functional.one_hot(ids, vocab).to(x.dtype)
        return torch.bmm(hot[:, None, :], x[:, :, None]).view(n)

    fns = {
        "indexing": lambda: x[rows, ids],
        "gather": lambda: x.gather(1, col).squeeze(1),
        "take_along_dim": lambda: torch.take_along_dim(x, col, dim=1).squeeze(1),
        "onehot": onehot,
    }
    expected = fns["indexing"]()
    for name, fn in fns.items():  # every method computes the same picks
        assert torch.equal(fn(), expected), name
    t = compare(fns, repeats=repeats, device=device)
    loop_t = compare({"gather": fns["gather"], "loop": loop}, repeats=max(3, repeats // 3), device=device)
    figures = {
        "gather_vs_loop_speedup": loop_t["loop"] / loop_t["gather"],
        "gather_vs_indexing_ratio": t["gather"] / t["indexing"],
        "take_along_dim_vs_indexing_ratio": t["take_along_dim"] / t["indexing"],
        "onehot_matmul_vs_indexing_ratio": t["onehot"] / t["indexing"],
    }
    # Bandwidth: copy whole rows of a float32 table, 4096 x 2048 (32 MB) in quick mode,
    # 8192 x 4096 (128 MB) otherwise.
    rows_, width = (4096, 2048) if quick else (8192, 4096)
    big = torch.randn(rows_, width, generator=gen).to(device)
    perm = torch.randperm(rows_, generator=gen).to(device)
    expanded = perm[:, None].expand(rows_, width)  # stride 0 along the last dim
    dense = expanded.contiguous()
    assert torch.equal(big.gather(0, expanded), big[perm])
    bw = compare({"clone": big.clone, "expanded": lambda: big.gather(0, expanded),
                  "dense": lambda: big.gather(0, dense)}, repeats=repeats, device=device)
    # the same bytes of data moved (input read + output written) for all three, but the dense
    # index is also read, 8 B per element (chapter 6's deep dive on bandwidth), so its time
    # ratio is not purely a ratio of bandwidths; the expanded index has one number per row
    figures["gather_bandwidth_fraction_of_copy_expanded"] = bw["clone"] / bw["expanded"]
    figures["gather_bandwidth_fraction_of_copy_dense"] = bw["clone"] / bw["dense"]
    # Along the last dim: every row reordered by one permutation of the columns, as an index
    # expanded over the rows (stride 0 along dim 0) and as a full random index.
    cols = torch.randperm(width, generator=gen).to(device)
    last_expanded = cols[None, :].expand(rows_, width)
    last_dense = torch.randint(0, width, (rows_, width), generator=gen).to(device)
    bw_last = compare({"clone": big.clone, "expanded": lambda: big.gather(1, last_expanded),
                       "dense": lambda: big.gather(1, last_dense)}, repeats=repeats, device=device)
    figures["lastdim_gather_bw_fraction_expanded"] = bw_last["clone"] / bw_last["expanded"]
    figures["lastdim_gather_bw_fraction_dense"] = bw_last["clone"] / bw_last["dense"]
    figures["gather_bandwidth_fraction_of_copy"] = {
        "rows_expanded": figures["gather_bandwidth_fraction_of_copy_expanded"],
        "rows_dense": figures["gather_bandwidth_fraction_of_copy_dense"],
        "lastdim_expanded": figures["lastdim_gather_bw_fraction_expanded"],
        "lastdim_dense": figures["lastdim_gather_bw_fraction_dense"],
    }
    figures["bandwidth_tensor_mb"] = big.numel() * big.element_size() / 1e6
    return figures


def logprob_way_ratios(device: torch.device | str = "cpu", batch: int = 64, actions: int = 4,
                       repeats: int = 15, number: int = 200) -> dict[str, float]:
    """Chapter 3's ways to the log-probs of the taken actions, timed against ``gather``.

    On logits ``(batch, actions)`` and actions ``(batch,)``: ``cross_entropy``
    (``-F.cross_entropy(x, y, reduction="none")``), ``Categorical``
    (``Categorical(logits=x).log_prob(y)``) and ``no_validation`` (the same with
    ``validate_args=False``), each as its time over that of
    ``x.log_softmax(-1).gather(1, y.unsqueeze(1)).squeeze(1)``. One timing is ``number`` calls in
    a row; the four ways run in turn, ``repeats`` times after a warm-up (:func:`compare`), and the
    ratio of the medians is returned.

    Introduced in Chapter 3.
    """
    from torch.distributions import Categorical
    import torch.nn.functional as F

    device = torch.device(device)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, actions, generator=gen).to(device)
    y = torch.randint(0, actions, (batch,), generator=gen).to(device)
    ways = {
        "gather": lambda: x.log_softmax(-1).gather(1, y.unsqueeze(1)).squeeze(1),
        "cross_entropy": lambda: -F.cross_entropy(x, y, reduction="none"),
        "Categorical": lambda: Categorical(logits=x).log_prob(y),
        "no_validation": lambda: Categorical(logits=x, validate_args=False).log_prob(y),
    }
    expected = ways["gather"]()
    for name, fn in ways.items():  # every way computes the same log-probs
        assert torch.allclose(fn(), expected, atol=1e-6), name

    def calls(fn: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(number):
                fn()
        return run

    t = compare({name: calls(fn) for name, fn in ways.items()}, repeats=repeats, device=device)
    return {name: t[name] / t["gather"] for name in ways if name != "gather"}


_DESCRIPTIONS = {
    "gather_vs_loop_speedup": "loop time / gather time",
    "gather_vs_indexing_ratio": "gather / x[arange, ids] time",
    "take_along_dim_vs_indexing_ratio": "take_along_dim / indexing time",
    "onehot_matmul_vs_indexing_ratio": "one-hot bmm / indexing time",
    "gather_bandwidth_fraction_of_copy_expanded": "GB/s over clone(), expanded index",
    "gather_bandwidth_fraction_of_copy_dense": "GB/s over clone(), dense index",
    "lastdim_gather_bw_fraction_expanded": "dim=-1, expanded: GB/s over clone",
    "lastdim_gather_bw_fraction_dense": "dim=-1, dense: GB/s over clone",
    "logprob_peak_ratio_naive": "peak / logits, log_softmax+gather",
    "logprob_peak_ratio_chunked": "peak / logits, token_logprobs",
    "logprob_peak_ratio_fused": "peak / logits, fused",
    "logprob_train_peak_ratio_fused": "fwd+bwd peak / logits, fused",
    "logprob_peak_ratio_trl": "peak / logits, TRL",
}


def format_table(figures: dict) -> str:
    """The figures as a plain-text table (one line each, then each notebook's seconds).

    Introduced in Chapter 6.
    """
    rows: dict[str, list] = {"cpu": [], "cuda": []}  # a GPU's figures under a "cuda" line
    for key, value in figures.items():
        device, base = ("cuda", key[len("cuda_"):]) if key.startswith("cuda_") else ("cpu", key)
        if base in _DESCRIPTIONS:
            rows[device].append((base, f"{value:.3f}", _DESCRIPTIONS[base]))
    width = max([len(k) for r in rows.values() for k, _, _ in r] + [len("figure")])
    lines = [f"{'figure':{width}s} {'value':>9s}  meaning"]
    lines += [f"{k:{width}s} {v:>9s}  {d}" for k, v, d in rows["cpu"]]
    if rows["cuda"]:
        lines.append("cuda")
        lines += [f"{k:{width}s} {v:>9s}  {d}" for k, v, d in rows["cuda"]]
    seconds = figures.get("notebook_seconds", {})
    if seconds:
        lines.append("notebook_seconds")
        for name, value in seconds.items():
            lines.append(f"  {name:40s} {'-' if value is None else f'{value:.2f}':>9s}")
    return "\n".join(lines)


def recorded(name: str = "quick_cpu") -> dict:
    """The figures of a recorded run stored with the package, ``bench_results/<name>.json``
    (``quick_cpu``: ``python tools/bench.py --quick --json ...`` on the book's 2-core CPU;
    ``logprob_ways_cpu``: ``python tools/bench.py --logprob-ways 9 --json ...``, the runs
    chapter 3 quotes).

    Raises:
        ValueError: no recorded run of that name (the message lists those there are).

    Introduced in Chapter 3.
    """
    path = RESULTS / f"{name}.json"
    if not isinstance(name, str) or not path.is_file():
        there = sorted(p.stem for p in RESULTS.glob("*.json"))
        raise ValueError(f"recorded: no recorded run named {name!r}; there are {there}.")
    return json.loads(path.read_text(encoding="utf8"))


