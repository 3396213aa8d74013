"""gatherbook.bench (the figures a reader measures and reads) and tools/bench.py (the maintainers'
benchmark that writes them: ``python tools/bench.py``)."""
import json
import subprocess
import sys
import time

import pytest
import torch

import importlib.util
from pathlib import Path

from gatherbook import bench

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("tools_bench", ROOT / "tools" / "bench.py")
tools_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tools_bench)
SPEED_KEYS = {"gather_vs_loop_speedup", "gather_vs_indexing_ratio", "take_along_dim_vs_indexing_ratio",
              "onehot_matmul_vs_indexing_ratio", "gather_bandwidth_fraction_of_copy_expanded",
              "gather_bandwidth_fraction_of_copy_dense", "lastdim_gather_bw_fraction_expanded",
              "lastdim_gather_bw_fraction_dense", "gather_bandwidth_fraction_of_copy"}
MEMORY_KEYS = {"logprob_peak_ratio_naive", "logprob_peak_ratio_chunked", "logprob_peak_ratio_fused",
               "logprob_train_peak_ratio_fused"}


def test_compare_runs_each_function_in_turn_and_reports_medians():
    calls = []
    medians = bench.compare({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
                            repeats=3, warmup=1)
    assert calls == ["a", "b"] * 4
    assert set(medians) == {"a", "b"} and all(v >= 0 for v in medians.values())


def test_compare_sees_a_slower_function():
    medians = bench.compare({"fast": lambda: None, "slow": lambda: time.sleep(0.01)}, repeats=3, warmup=0)
    assert medians["slow"] > 5 * medians["fast"]


@pytest.mark.parametrize("kwargs, words", [
    (dict(fns={}), "non-empty dict"),
    (dict(fns={"a": 1}), "non-empty dict"),
    (dict(fns={"a": print}, repeats=0), "repeats must be an int >= 1"),
    (dict(fns={"a": print}, warmup=-1), "warmup must be an int >= 0"),
])
def test_compare_rejects_bad_input(kwargs, words):
    with pytest.raises(ValueError, match=words):
        bench.compare(**kwargs)


def test_memory_figure_rejects_an_unknown_method():
    with pytest.raises(ValueError, match="method must be one of"):
        tools_bench.memory_figure("cleverest")
    with pytest.raises(ValueError, match="repeats"):
        tools_bench.memory_figure("naive", repeats=0)


@pytest.mark.slow
def test_memory_goals_in_separate_processes():
    """The goals of the chapter at a smaller shape (the bench itself uses B, L, V = 4, 512, 32000)."""
    shape = {"B": 4, "L": 256, "V": 32_000, "H": 64}
    naive = tools_bench.memory_figure("naive", shape=shape, repeats=1)
    chunked = tools_bench.memory_figure("chunked", shape=shape, repeats=1)
    fused = tools_bench.memory_figure("fused", shape=shape, repeats=1)
    assert 0.9 <= naive <= 1.2
    assert chunked <= 0.25
    assert fused <= 0.1


def test_format_table_lines_fit_the_page():
    table = bench.format_table(bench.recorded())
    assert all(len(line) <= 88 for line in table.splitlines())
    assert "gather_vs_indexing_ratio" in table and "notebook_seconds" in table


def test_a_gpu_s_figures_go_under_a_cuda_line_within_the_page():
    figures = {"gather_vs_indexing_ratio": 0.25, "cuda_gather_vs_indexing_ratio": 1.5,
               "cuda_gather_bandwidth_fraction_of_copy_expanded": 0.9, "notebook_seconds": {}}
    lines = bench.format_table(figures).splitlines()
    assert lines[2] == "cuda" and lines[3].startswith("gather_vs_indexing_ratio")
    assert all(len(line) <= 88 for line in lines)


def test_recorded_run_holds_every_figure_and_meets_the_goals():
    rec = bench.recorded()
    assert SPEED_KEYS | MEMORY_KEYS <= set(rec)
    assert rec["quick"] is True
    assert rec["logprob_peak_ratio_naive"] >= 0.9
    assert rec["logprob_peak_ratio_chunked"] <= 0.25
    assert rec["logprob_peak_ratio_fused"] <= 0.1
    assert rec["gather_vs_loop_speedup"] > 10
    assert set(rec["notebook_seconds"]) >= {"en/06_pitfalls_performance.ipynb",
                                             "zh/06_pitfalls_performance.ipynb"}
    with pytest.raises(ValueError, match="no recorded run named 'nope'"):
        bench.recorded("nope")


def test_notebook_seconds_reads_stored_timestamps(tmp_path):
    nb = {"cells": [
        {"cell_type": "code", "metadata": {"execution": {
            "iopub.execute_input": "2026-01-01T00:00:00.000000Z",
            "shell.execute_reply": "2026-01-01T00:00:01.500000Z"}}},
        {"cell_type": "markdown", "metadata": {}},
        {"cell_type": "code", "metadata": {"execution": {
            "iopub.execute_input": "2026-01-01T00:00:02.000000Z",
            "shell.execute_reply": "2026-01-01T00:00:02.250000Z"}}}]}
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "01_x.ipynb").write_text(json.dumps(nb))
    (tmp_path / "en" / "02_y.ipynb").write_text(json.dumps({"cells": []}))
    assert tools_bench.notebook_seconds(folder=tmp_path) == {"en/01_x.ipynb": 1.75, "en/02_y.ipynb": None}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="a CUDA figure needs a GPU")
def test_cuda_speed_figures():
    assert SPEED_KEYS <= set(bench.speed_figures("cuda", quick=True))


@pytest.mark.slow
def test_quick_command_writes_every_figure(tmp_path):
    out = tmp_path / "out.json"
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "bench.py"), "--quick", "--json", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert SPEED_KEYS | MEMORY_KEYS | {"notebook_seconds"} <= set(figures)
    assert "gather_vs_loop_speedup" in done.stdout
    print(f"--quick took {seconds:.1f} s")  # the goal (< 60 s) holds on a quiet 2-core CPU


def test_logprob_way_ratios_times_every_way_against_gather():
    ratios = bench.logprob_way_ratios(repeats=1, number=2)
    assert set(ratios) == {"cross_entropy", "Categorical", "no_validation"}
    assert all(v > 0 for v in ratios.values())


def test_logprob_ways_run_rejects_bad_runs():
    with pytest.raises(ValueError, match="runs must be an int >= 1"):
        tools_bench.logprob_ways_run(0)


def test_recorded_logprob_ways_back_what_chapter_3_says():
    """Chapter 3: Categorical is the slowest of the three ways, in every recorded run, by far;
    validate_args=False takes part of its time away. The record says its machine and load."""
    rec = bench.recorded("logprob_ways_cpu")
    assert rec["runs"] >= 5 and len(rec["per_run"]) == rec["runs"]
    assert {"cpu", "cpu_count", "threads", "torch", "load_average_before", "note"} <= set(rec)
    for run in rec["per_run"]:
        assert run["Categorical"] > 3 * max(1.0, run["cross_entropy"])
        assert 0.3 < run["no_validation"] / run["Categorical"] < 0.7  # "about half"
    for way, median in rec["median"].items():
        assert rec["min"][way] <= median <= rec["max"][way]
