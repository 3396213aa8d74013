"""conftest.py's notebook timing: slow is reported, only a hang fails."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "gatherbook_root_conftest", Path(__file__).resolve().parents[2] / "conftest.py")
timing = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(timing)


def test_a_busy_machine_is_reported_not_failed():
    got = timing.notebook_verdicts({"a.ipynb": 5.0, "b.ipynb": 10.2, "c.ipynb": 45.0, "d.ipynb": 121.0},
                                   goal=10, limit=120)
    assert got == {"a.ipynb": "", "b.ipynb": "over the goal", "c.ipynb": "over the goal",
                   "d.ipynb": "OVER THE LIMIT"}


def test_the_limit_is_far_above_the_goal():
    assert timing.LIMIT_DEFAULT >= 6 * timing.GOAL_DEFAULT


def test_seconds_from_env(monkeypatch):
    monkeypatch.delenv("X_SECONDS", raising=False)
    assert timing.seconds_from_env("X_SECONDS", 7.0) == 7.0
    monkeypatch.setenv("X_SECONDS", "300")
    assert timing.seconds_from_env("X_SECONDS", 7.0) == 300.0
    for bad, message in (("ten", "is not a number of seconds"), ("-1", "must be positive")):
        monkeypatch.setenv("X_SECONDS", bad)
        with pytest.raises(pytest.UsageError, match=f"X_SECONDS='{bad}'.*{message}"):
            timing.seconds_from_env("X_SECONDS", 7.0)
