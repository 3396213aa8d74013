"""Project-wide pytest hooks: how nbval runs a cell, and how long each notebook took.

nbval runs a notebook cell by cell; this plugin adds up the cells' run times per notebook
(kernel start-up excluded) and prints them after the run.

- The speed goal (``GATHERBOOK_NOTEBOOK_GOAL_SECONDS``, default 10 s on a quiet 2-core CPU) is
  reported, never failed: a machine busy with other work makes any notebook slower, and a test
  must not fail because of that. The benchmark measures speed on a quiet machine.
- A notebook that takes longer than ``GATHERBOOK_NOTEBOOK_SECONDS`` (default 120 s, twelve times
  the goal) fails the session: no busy machine explains that; a cell hangs or something is badly
  wrong. (nbval's ``--nbval-cell-timeout`` stops a single cell that hangs.)
"""
from __future__ import annotations

import os
from collections import defaultdict

import nbval.kernel
import pytest


def _execute_with_history(self, cell_input, allow_stdin=None):
    """nbval sends cells with ``store_history=False``; IPython then ignores a trailing ``;``
    (it looks for it in the last *stored* cell), so ``draw_gather(...);`` would show an extra
    ``<Figure ...>`` that Jupyter, nbconvert and the book never show. Send cells as Jupyter does."""
    return self.kc.execute(cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False)


nbval.kernel.RunningKernel.execute_cell_input = _execute_with_history

LIMIT_ENV, LIMIT_DEFAULT = "GATHERBOOK_NOTEBOOK_SECONDS", 120.0
GOAL_ENV, GOAL_DEFAULT = "GATHERBOOK_NOTEBOOK_GOAL_SECONDS", 10.0
_seconds: dict[str, float] = defaultdict(float)


def seconds_from_env(name: str, default: float) -> float:
    """A positive number of seconds from the environment variable ``name`` (``default`` when unset).

    Raises:
        pytest.UsageError: the variable is set to something that is not a positive number.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise pytest.UsageError(f"{name}={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise pytest.UsageError(f"{name}={raw!r}: the number of seconds must be positive")
    return value


def notebook_verdicts(seconds: dict[str, float], goal: float, limit: float) -> dict[str, str]:
    """``{notebook: "" | "over the goal" | "OVER THE LIMIT"}`` for the notebooks timed."""
    return {nb: "OVER THE LIMIT" if s > limit else "over the goal" if s > goal else ""
            for nb, s in seconds.items()}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    if path.endswith(".ipynb") and report.when == "call":
        _seconds[path] += report.duration


def pytest_terminal_summary(terminalreporter):
    if not _seconds:
        return
    goal, limit = seconds_from_env(GOAL_ENV, GOAL_DEFAULT), seconds_from_env(LIMIT_ENV, LIMIT_DEFAULT)
    verdicts = notebook_verdicts(_seconds, goal, limit)
    terminalreporter.section(f"notebook execution time (goal {goal:g} s on a quiet machine; "
                             f"fails over {limit:g} s)")
    for nb, s in sorted(_seconds.items()):
        flag = f"  {verdicts[nb]}" if verdicts[nb] else ""
        terminalreporter.write_line(f"{s:6.2f} s  {nb}{flag}", red="LIMIT" in flag, yellow=flag == "  over the goal")
    if any(v == "over the goal" for v in verdicts.values()):
        terminalreporter.write_line(
            f"note: over the {goal:g} s goal is not a failure (a busy machine is slower); "
            "measure on a quiet machine with `python tools/bench.py`.")
    over = [nb for nb, v in verdicts.items() if v == "OVER THE LIMIT"]
    if over:
        terminalreporter.write_line(
            f"FAILED: {len(over)} notebook(s) took over {limit:g} s, more than any busy machine "
            f"explains: look for a cell that hangs (or set {LIMIT_ENV} on a very slow machine).",
            red=True, bold=True)


def pytest_sessionfinish(session, exitstatus):
    if not _seconds or exitstatus != 0:
        return
    limit = seconds_from_env(LIMIT_ENV, LIMIT_DEFAULT)
    if any(s > limit for s in _seconds.values()):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# ---------------------------------------------------------------------------------------------
# The fast lane (`make test-fast` sets GATHERBOOK_FAST=1): the tests that run once per declared
# answer, exercise or puzzle run for a fixed sample of 1 in FAST_SAMPLE of their cases, and the
# single tests of many seconds (FAST_SKIP) not at all; `make test` runs them all. The sample is chosen by each test's id (crc32), so it is the
# same on every run and every machine, and a new case lands in it or not by its name alone.
# ---------------------------------------------------------------------------------------------
FAST_ENV = "GATHERBOOK_FAST"
FAST_SAMPLE = 8
PER_CASE_FILES = ("tests/exercises/test_declared_answers.py", "tests/exercises/test_exercises.py",
                  "tests/exercises/test_puzzles.py", "tests/exercises/test_notebook_exercises.py")


# single tests of many seconds (gradchecks, spawned processes, comparisons with transformers, the
# zip built twice, per-notebook runs, a timing measurement): `make test` only
FAST_SKIP = ("tests/unit/test_fused_logprobs.py::test_gradcheck", "tests/unit/test_vocab_parallel.py::",
             "tests/unit/test_generation.py::test_moe_equals", "tests/unit/test_generation.py::test_filters_equal",
             "tests/unit/test_generation.py::test_reorder_cache", "tests/unit/test_sphinx_ext.py::test_zip_is_the_same",
             "tests/exercises/test_puzzles.py::test_each_check_takes", "tests/exercises/test_notebook_exercises.py::",
             "tests/exercises/test_puzzles.py::test_worked_example_picture",
             "tests/unit/test_figure_kit.py::test_every_figure_fits_a_phone")


def in_fast_sample(nodeid: str) -> bool:
    import zlib

    return zlib.crc32(nodeid.encode("utf8")) % FAST_SAMPLE == 0


def pytest_collection_modifyitems(config, items):
    if os.environ.get(FAST_ENV, "").strip() not in ("1", "true", "yes"):
        return
    kept, dropped = [], []
    for item in items:
        per_case = item.nodeid.startswith(PER_CASE_FILES) and "[" in item.nodeid
        slow = item.nodeid.startswith(FAST_SKIP) or (per_case and not in_fast_sample(item.nodeid))
        (dropped if slow else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
