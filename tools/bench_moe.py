"""Benchmark: Mixture of Experts with one masked pass per expert against the sorted dispatch.

Chapter 7 quotes the numbers of a recorded run (``tools/bench_results/moe_cpu.json``), never a
timing from the notebook. Run it again with::

    .venv/bin/python tools/bench_moe.py --out tools/bench_results/moe_cpu.json

Both forms compute the same output (checked before timing); the times are medians of
``repeats`` runs of a forward pass after one warm-up, in milliseconds.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import torch

from gatherbook.generation import moe_loop, moe_sorted, route, swiglu_experts

#: (tokens T, hidden H, expert hidden F, experts E, experts per token k)
SHAPES = [(1024, 128, 256, 8, 2), (1024, 128, 256, 64, 8), (4096, 128, 256, 8, 2)]


def bench_moe(T: int, H: int, F: int, E: int, k: int, repeats: int = 7,
              device: str = "cpu", seed: int = 0) -> dict:
    """Median forward times (ms) of :func:`moe_loop` and :func:`moe_sorted` on random data.

    x: (T, H); router (E, H); experts w_gate, w_up (E, F, H), w_down (E, H, F).
    """
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(T, H, generator=g).to(device)
    router = torch.randn(E, H, generator=g).to(device) / H ** 0.5
    w_gate, w_up = (torch.randn(E, F, H, generator=g).to(device) / H ** 0.5 for _ in range(2))
    w_down = torch.randn(E, H, F, generator=g).to(device) / F ** 0.5
    fns = swiglu_experts(w_gate, w_up, w_down)
    weights, experts = route(x @ router.T, k)

    def timed(fn) -> float:
        fn(x, weights, experts, fns)  # warm-up
        times = []
        for _ in range(repeats):
            if device != "cpu":
                torch.cuda.synchronize()
            start = time.perf_counter()
            fn(x, weights, experts, fns)
            if device != "cpu":
                torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)

    same = torch.allclose(moe_loop(x, weights, experts, fns), moe_sorted(x, weights, experts, fns),
                          atol=1e-4, rtol=1e-4)
    loop_ms, sorted_ms = timed(moe_loop), timed(moe_sorted)
    return {"T": T, "H": H, "F": F, "E": E, "k": k, "same_output": bool(same),
            "loop_ms": round(loop_ms, 3), "sorted_ms": round(sorted_ms, 3),
            "loop_over_sorted": round(loop_ms / sorted_ms, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the run as JSON here")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    load = os.getloadavg()
    rows = [bench_moe(*shape, repeats=args.repeats, device=args.device) for shape in SHAPES]
    run = {"torch": torch.__version__, "device": args.device, "threads": torch.get_num_threads(),
           "machine": platform.machine(), "load_average_before": [round(x, 2) for x in load],
           "python": platform.python_version(), "results": rows}
    text = json.dumps(run, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
