"""The book's benchmark, for maintainers: ``python tools/bench.py [--quick] [--json PATH]``.

``python tools/bench.py --logprob-ways RUNS --json PATH`` measures only chapter 3's ways to a
policy's log-probs (:func:`gatherbook.bench.logprob_way_ratios`) RUNS times and writes the run
that ``gatherbook/bench_results/logprob_ways_cpu.json`` stores (``gb.recorded("logprob_ways_cpu")``).

Measures every figure of :mod:`gatherbook.bench` (speed ratios) plus the peak memory of per-token
log-probs (each method in its own process) and each chapter notebook's execution time, prints a
table and writes the JSON that ``gatherbook/bench_results/`` stores (what readers get from
``gb.recorded()``). Not part of the reader's package.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gatherbook.bench import format_table, logprob_way_ratios, speed_figures  # noqa: E402

LOGPROB_SHAPE = {"B": 4, "L": 512, "V": 32_000, "H": 128}
METHODS = ("naive", "chunked", "fused", "fused_train", "trl")


# ---------------------------------------------------------------------------------------------
# Peak memory of per-token log-probs, one method per process
# ---------------------------------------------------------------------------------------------
def _measure_peak(method: str, device: str, repeats: int, shape: dict[str, int]) -> dict:
    """Runs in a child process: median peak bytes of one method (after one warm-up call)."""
    from gatherbook.fused_logprobs import fused_token_logprobs
    from gatherbook.logprobs import token_logprobs
    from gatherbook.memory import peak_memory

    torch.manual_seed(0)
    B, L, V, H = shape["B"], shape["L"], shape["V"], shape["H"]
    dev = torch.device(device)
    ids = torch.randint(0, V, (B, L)).to(dev)
    logits_bytes = B * L * V * 4
    if method in ("naive", "chunked", "trl"):
        logits = torch.randn(B, L, V).to(dev)
        if method == "naive":
            def fn():
                return logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
        elif method == "chunked":
            def fn():
                return token_logprobs(logits, ids, chunk_size=128)
        else:
            from trl.trainer.utils import selective_log_softmax

            def fn():
                return selective_log_softmax(logits, ids)
    else:
        hidden = (torch.randn(B, L, H) / math.sqrt(H)).to(dev)
        weight = torch.randn(V, H).to(dev)
        if method == "fused":
            def fn():
                with torch.no_grad():
                    return fused_token_logprobs(hidden, weight, ids)
        else:
            hidden.requires_grad_()
            weight.requires_grad_()

            def fn():
                fused_token_logprobs(hidden, weight, ids).sum().backward()
                hidden.grad = weight.grad = None
    peak_memory(fn, device=dev)  # warm-up
    peaks = [peak_memory(fn, device=dev) for _ in range(repeats)]
    return {"method": method, "peak_bytes": statistics.median(peaks), "logits_bytes": logits_bytes}


def memory_figure(method: str, device: str = "cpu", repeats: int = 3,
                  shape: dict[str, int] | None = None, timeout: float = 600) -> float:
    """Extra peak memory of one log-prob ``method`` over the size of the logits, measured in a
    fresh Python process (so no allocator state or cache of another method is counted).

    ``method``: one of ``naive``, ``chunked``, ``fused``, ``fused_train``, ``trl`` (needs TRL).

    Raises:
        ValueError: an unknown method, a bad ``repeats``; RuntimeError: the child process failed.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}.")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1; got {repeats!r}.")
    shape = dict(LOGPROB_SHAPE if shape is None else shape)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_peak", method, "--device", device,
           "--repeats", str(repeats), "--shape", json.dumps(shape)]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {method} failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["peak_bytes"] / result["logits_bytes"]


# ---------------------------------------------------------------------------------------------
# Notebook execution times
# ---------------------------------------------------------------------------------------------
def _stored_seconds(path: Path) -> float | None:
    from datetime import datetime

    nb = json.loads(path.read_text(encoding="utf8"))  # no validation: fast
    total, seen = 0.0, False
    for cell in nb.get("cells", []):
        ex = cell.get("metadata", {}).get("execution", {})
        start, end = ex.get("iopub.execute_input"), ex.get("shell.execute_reply")
        if start and end:
            parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
            total += (parse(end) - parse(start)).total_seconds()
            seen = True
    return round(total, 2) if seen else None


def _executed_seconds(path: Path) -> float:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return round(time.perf_counter() - start, 2)


def notebook_seconds(execute: bool = False, folder: Path | None = None) -> dict[str, float | None]:
    """Execution seconds of each chapter notebook (``en/NN_x.ipynb`` keys).

    By default: the sum over cells of the time between a cell's start and its reply, as stored
    in the notebook by its last ``make execute`` (None when it holds no timestamps). With
    ``execute=True``: run each notebook now (kernel start-up included) and time it.
    """
    folder = ROOT / "notebooks" if folder is None else Path(folder)
    out = {}
    for path in sorted(folder.glob("*/[0-9][0-9]_*.ipynb")):
        key = f"{path.parent.name}/{path.name}"
        out[key] = _executed_seconds(path) if execute else _stored_seconds(path)
    return out


# ---------------------------------------------------------------------------------------------
# The whole run
# ---------------------------------------------------------------------------------------------
def _have_trl() -> bool:
    import importlib.util

    return importlib.util.find_spec("trl") is not None


def run(quick: bool = False, devices: list[str] | None = None, execute_notebooks: bool = False,
        log: Callable[[str], None] | None = None) -> dict:
    """Every figure of the benchmark as a dict (what ``--json`` writes)."""
    log = log or (lambda s: None)
    if devices is None:
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    figures: dict = {"quick": quick, "torch": torch.__version__, "threads": torch.get_num_threads(),
                     "cpu_count": os.cpu_count(), "logprob_shape": LOGPROB_SHAPE}
    t0 = time.perf_counter()
    for device in devices:
        prefix = "" if device == "cpu" else f"{device}_"
        log(f"speed on {device} ...")
        figures.update({prefix + k: v for k, v in speed_figures(device, quick=quick).items()})
        methods = ["naive", "chunked", "fused", "fused_train"] + (["trl"] if _have_trl() else [])
        for method in methods:
            log(f"peak memory of {method} on {device} (own process) ...")
            key = "logprob_train_peak_ratio_fused" if method == "fused_train" else f"logprob_peak_ratio_{method}"
            figures[prefix + key] = memory_figure(method, device, repeats=1 if quick else 3)
    figures["notebook_seconds"] = notebook_seconds(execute=execute_notebooks)
    figures["bench_seconds"] = round(time.perf_counter() - t0, 1)
    return figures


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def logprob_ways_run(runs: int = 9, device: str = "cpu", note: str = "", threads: int = 1,
                     log: Callable[[str], None] | None = None) -> dict:
    """Chapter 3's ways to a policy's log-probs, ``runs`` separate runs of
    :func:`gatherbook.bench.logprob_way_ratios`: each run's ratios, and their median, lowest and
    highest, with the machine, its load average before and after, and ``note`` (what else ran).

    ``threads``: torch's CPU threads while measuring (1 by default, as the recorded quick run:
    on a busy machine a second thread makes a kernel on a (64, 4) tensor wait for a core, which
    then times the load, not the code).
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an int >= 1; got {runs!r}.")
    log = log or (lambda s: None)
    torch.set_num_threads(threads)
    load_before = [round(v, 2) for v in os.getloadavg()]
    per_run = []
    for i in range(runs):
        log(f"log-prob ways on {device}, run {i + 1} of {runs} ...")
        per_run.append({k: round(v, 3) for k, v in logprob_way_ratios(device).items()})
    load_after = [round(v, 2) for v in os.getloadavg()]
    ways = list(per_run[0])
    return {
        "what": "time of each way / time of log_softmax + gather, logits (64, 4), 200 calls per "
                "timing, medians of 15 alternating timings per run",
        "torch": torch.__version__, "python": platform.python_version(), "device": device,
        "threads": torch.get_num_threads(), "cpu_count": os.cpu_count(), "cpu": _cpu_model(),
        "note": note, "load_average_before": load_before, "load_average_after": load_after,
        "runs": runs,
        "median": {w: round(statistics.median(r[w] for r in per_run), 2) for w in ways},
        "min": {w: min(r[w] for r in per_run) for w in ways},
        "max": {w: max(r[w] for r in per_run) for w in ways},
        "per_run": per_run,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/bench.py", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes, fewer repeats (< 1 min)")
    parser.add_argument("--json", metavar="PATH", help="write the figures to PATH as JSON")
    parser.add_argument("--device", action="append", choices=["cpu", "cuda"],
                        help="device(s) to measure (default: cpu, and cuda when available)")
    parser.add_argument("--execute-notebooks", action="store_true",
                        help="run every notebook now to time it (default: stored timestamps)")
    parser.add_argument("--logprob-ways", type=int, metavar="RUNS",
                        help="only chapter 3's log-prob ways (Categorical against gather), RUNS runs")
    parser.add_argument("--note", default="", help="with --logprob-ways: what else the machine ran")
    parser.add_argument("--_peak", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=3, help=argparse.SUPPRESS)
    parser.add_argument("--shape", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._peak:
        shape = json.loads(args.shape) if args.shape else LOGPROB_SHAPE
        device = (args.device or ["cpu"])[0]
        print(json.dumps(_measure_peak(args._peak, device, args.repeats, shape)))
        return 0
    if args.device and "cuda" in args.device and not torch.cuda.is_available():
        parser.error("--device cuda: torch.cuda.is_available() is False on this machine")
    if args.logprob_ways is not None:
        figures = logprob_ways_run(args.logprob_ways, (args.device or ["cpu"])[0], args.note,
                                   log=lambda s: print(s, file=sys.stderr, flush=True))
        text = json.dumps(figures, indent=2, ensure_ascii=False)
        print(text)
        if args.json:
            Path(args.json).write_text(text + "\n", encoding="utf8")
        return 0
    figures = run(quick=args.quick, devices=args.device, execute_notebooks=args.execute_notebooks,
                  log=lambda s: print(s, file=sys.stderr, flush=True))
    print(format_table(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
