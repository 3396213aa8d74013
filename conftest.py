"""Project-wide pytest hooks: how nbval runs a cell, and the time budget of each notebook.

Each notebook must execute in under ``GATHERBOOK_NOTEBOOK_SECONDS`` seconds (default 10) on a
2-core CPU. nbval runs a notebook cell by cell; this plugin adds up the cells' run times per
notebook (kernel start-up excluded), prints them, and fails the session when one is over budget.
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

_LIMIT_ENV = "GATHERBOOK_NOTEBOOK_SECONDS"
_seconds: dict[str, float] = defaultdict(float)


def _limit() -> float:
    raw = os.environ.get(_LIMIT_ENV, "10")
    try:
        value = float(raw)
    except ValueError:
        raise pytest.UsageError(f"{_LIMIT_ENV}={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise pytest.UsageError(f"{_LIMIT_ENV}={raw!r}: the budget must be positive")
    return value


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    if path.endswith(".ipynb") and report.when == "call":
        _seconds[path] += report.duration


def _over_budget() -> dict[str, float]:
    limit = _limit()
    return {nb: s for nb, s in _seconds.items() if s > limit}


def pytest_terminal_summary(terminalreporter):
    if not _seconds:
        return
    limit = _limit()
    terminalreporter.section(f"notebook execution time (budget {limit:g} s each)")
    for nb, s in sorted(_seconds.items()):
        flag = "  OVER BUDGET" if s > limit else ""
        terminalreporter.write_line(f"{s:6.2f} s  {nb}{flag}", red=bool(flag))
    over = _over_budget()
    if over:
        terminalreporter.write_line(
            f"FAILED: {len(over)} notebook(s) over the {limit:g} s budget; make them faster "
            f"(or set {_LIMIT_ENV} on a slower machine).", red=True, bold=True)


def pytest_sessionfinish(session, exitstatus):
    if _seconds and _over_budget() and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
