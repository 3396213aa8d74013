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
import sys
import tempfile
from collections import defaultdict

import pytest

from gatherbook.editions import CODES as EDITIONS  # the book's editions

# jsonschema 4.26 (nbformat validates notebooks with it) imports rfc3987-syntax when installed
# (jupyter-events asks for it) to check the "iri" format, and rfc3987_syntax compiles its lark
# grammars on import: 2 s in every test process. No test checks an IRI, and nbformat validates
# without format checks, so the tests go without it (jsonschema/_format.py: `with
# suppress(ImportError)`). Processes that load nbval as a plugin have imported it already.
sys.modules.setdefault("rfc3987_syntax", None)

# Hypothesis keeps what it caches (the constants it reads from local modules) in ./.hypothesis;
# the tests and the notebook kernels they start (which inherit the environment) keep it outside
# the source tree instead.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY",
                      os.path.join(tempfile.gettempdir(), "gatherbook-hypothesis"))


def _execute_with_history(self, cell_input, allow_stdin=None):
    """nbval sends cells with ``store_history=False``; IPython then ignores a trailing ``;``
    (it looks for it in the last *stored* cell), so ``draw_gather(...);`` would show an extra
    ``<Figure ...>`` that Jupyter, nbconvert and the book never show. Send cells as Jupyter does."""
    return self.kc.execute(cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False)


def pytest_configure(config):
    # only where nbval runs: `make test` and `make test-fast` leave it out (-p no:nbval), and
    # importing it takes a second in every process
    if config.pluginmanager.has_plugin("nbval"):
        import nbval.kernel

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
# Lanes. `make test-all` (CI) and a plain `pytest` run every test. `make test` (GATHERBOOK_LANE=test)
# runs every test function, but the tests that run once per declared answer, exercise, puzzle or
# searched message (PER_CASE_FILES) for 1 in CASES_SAMPLE of their cases, the browser tests that
# open a page of each edition in one edition (ONE_EDITION_FILES) and on the sample of pages
# (tests/site/site_helpers.py: SAMPLE), and it leaves the whole-program runs of a minute of CPU or
# more (CI_ONLY) to `make test-all`. `make test-fast` (GATHERBOOK_FAST=1) runs 1 in FAST_SAMPLE of the
# cases and leaves out the single tests of seconds (FAST_SKIP, and CI_ONLY), which `make test` runs.
# A sample is chosen by each test's id (crc32), so it is the same on every run and every machine,
# and a new case lands in it or not by its name alone; the fast lane's sample lies inside
# `make test`'s.
# ---------------------------------------------------------------------------------------------
FAST_ENV = "GATHERBOOK_FAST"
LANE_ENV = "GATHERBOOK_LANE"
FAST_SAMPLE = 16
CASES_SAMPLE = 8
PER_CASE_FILES = ("tests/exercises/test_declared_answers.py", "tests/exercises/test_exercises.py",
                  "tests/exercises/test_puzzles.py", "tests/exercises/test_notebook_exercises.py",
                  # (20 pasted messages; the file's other tests have two cases each and run whole)
                  "tests/site/test_search_errors.py::test_a_pasted_error_message_lists_its_section_first",
                  # (40 held-out questions; the file's own 34 queries run whole)
                  "tests/site/test_search_questions.py::test_a_held_out_question")
# browser tests that open their own page in each edition (a second of Chromium or more each):
# `make test` runs each of them in one edition, the editions taking turns by the test's name
ONE_EDITION_FILES = ("tests/site/test_explorer.py::", "tests/site/test_page_contents.py::",
                     "tests/site/test_phone_layout.py::test_cheat_sheet",
                     "tests/site/test_search_errors.py::test_a_pasted_error_s_snippet")

# whole programs run in other processes (the benchmark's commands, a chapter run inside the
# reader's zip, two processes of a vocabulary-parallel step, float64 gradchecks, the downloaded
# exercises run top to bottom, JupyterLab) and a timing measurement that a busy machine flips:
# CI only
CI_ONLY = ("tests/unit/test_bench.py::test_quick_command_writes_every_figure",
           "tests/unit/test_bench.py::test_memory_goals_in_separate_processes",
           "tests/notebooks/test_reader_download.py::test_make_check_runs_a_chapter_inside_the_zip",
           "tests/unit/test_vocab_parallel.py::", "tests/unit/test_fused_logprobs.py::test_gradcheck",
           # two processes of an expert-parallel MoE layer (chapter 7)
           "tests/unit/test_expert_parallel.py::test_two_processes",
           "tests/unit/test_expert_parallel.py::test_one_process",
           "tests/unit/test_sphinx_downloads.py::test_downloaded_exercises_run_top_to_bottom",
           "tests/exercises/test_puzzles.py::test_each_check_takes",
           # the puzzles' case search in two more Python processes (each imports torch)
           "tests/exercises/test_puzzles.py::test_the_search_is_derandomised",
           # JupyterLab started and chapter 1 opened in it: a server and a browser app of half a
           # minute of CPU
           "tests/site/test_lab.py::")

# single tests of seconds (comparisons with transformers, the zips built, per-notebook runs, scans
# of every source file, the API's worked example): `make test` only
FAST_SKIP = CI_ONLY + (
             "tests/exercises/test_declaration.py::", "tests/unit/test_sphinx_downloads.py::",
             "tests/unit/test_fused_logprobs.py::test_values_and_gradients_equal_the_naive_line",
             "tests/unit/test_figure_kit.py::test_style_is_the_only_module",
             "tests/unit/test_gb_namespace.py::test_every_name_of_the_table_of_contents",
             "tests/unit/test_logprobs.py::test_error_messages_fit_the_page_column",
             "tests/unit/test_generation.py::test_moe_equals", "tests/unit/test_generation.py::test_filters_equal",
             "tests/unit/test_generation.py::test_reorder_cache", "tests/unit/test_sphinx_ext.py::test_zip_is_the_same",
             "tests/unit/test_generation.py::test_repetition_penalty_is_transformers",
             "tests/unit/test_generation.py::test_load_balancing_loss_is_transformers",
             "tests/exercises/test_notebook_exercises.py::",
             "tests/exercises/test_puzzles.py::test_worked_example_picture",
             "tests/unit/test_figure_kit.py::test_every_figure_fits_a_phone")


def in_sample(nodeid: str, every: int = FAST_SAMPLE) -> bool:
    """Whether the test ``nodeid`` is in the sample of 1 in ``every`` (FAST_SAMPLE is a multiple of
    CASES_SAMPLE, so the fast lane's sample lies inside `make test`'s)."""
    import zlib

    return zlib.crc32(nodeid.encode("utf8")) % every == 0


def edition_in_turn(name: str) -> str:
    """The edition that `make test` runs the test function ``name`` in (ONE_EDITION_FILES)."""
    import zlib

    return EDITIONS[zlib.crc32(name.encode("utf8")) % len(EDITIONS)]


def pytest_collection_modifyitems(config, items):
    fast = os.environ.get(FAST_ENV, "").strip().lower() in ("1", "true", "yes")
    lane = os.environ.get(LANE_ENV, "").strip().lower()
    if lane not in ("", "all", "test"):
        raise pytest.UsageError(f"{LANE_ENV}={lane!r}: 'all' (every test: make test-all) or 'test' (make test)")
    if not fast and lane != "test":
        return
    every, skip = (FAST_SAMPLE, FAST_SKIP) if fast else (CASES_SAMPLE, CI_ONLY)
    kept, dropped = [], []
    for item in items:
        per_case = item.nodeid.startswith(PER_CASE_FILES) and "[" in item.nodeid
        edition = getattr(getattr(item, "callspec", None), "params", {}).get("edition")
        other_edition = (edition is not None and item.nodeid.startswith(ONE_EDITION_FILES)
                         and edition != edition_in_turn(item.originalname))
        left_out = (item.nodeid.startswith(skip) or (per_case and not in_sample(item.nodeid, every))
                    or other_edition)
        (dropped if left_out else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept

# ---------------------------------------------------------------------------------------------
# The site's build starts with the session: a session that will run the site tests (its paths
# include tests/site) builds the site in a thread of the main process (with pytest-xdist, the
# controller, which otherwise waits) while the workers run the tests that need no site; the site
# tests' fixture (tests/site/conftest.py) then finds it built, or waits for it. One build either
# way (a lock; tests/site/site_helpers.py:build_site_once). GATHERBOOK_SITE_EARLY=0 turns it off.
# ---------------------------------------------------------------------------------------------
EARLY_ENV = "GATHERBOOK_SITE_EARLY"
_early_build = None


def _runs_the_site_tests(config) -> bool:
    from pathlib import Path

    site_tests = Path(config.rootpath, "tests", "site").resolve()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0]).resolve()
        if path == site_tests or path in site_tests.parents:
            return True
    return False


def pytest_sessionstart(session):
    global _early_build
    config = session.config
    if (hasattr(config, "workerinput") or config.option.collectonly
            or os.environ.get(EARLY_ENV, "").strip() in ("0", "no", "false") or not _runs_the_site_tests(config)):
        return
    import sys
    import threading

    sys.path.insert(0, str(config.rootpath / "tests" / "site"))
    import site_helpers

    # the folder of tests/site/conftest.py's fixture (a pytest-xdist worker's basetemp lies in this one)
    folder = config._tmp_path_factory.getbasetemp() / "gatherbook-site"
    _early_build = threading.Thread(target=site_helpers.build_site_once, args=(folder,),
                                    name="site-build", daemon=True)
    _early_build.start()


def pytest_unconfigure(config):
    if _early_build is not None:
        _early_build.join()


# ---------------------------------------------------------------------------------------------
# The two-notebook book of the reading-path conventions (tests/site/reading_fixture), built once
# per session for the tests that read its HTML (tests/unit/test_sphinx_reading.py) and those that
# open it in the browser (tests/site/test_reading_paths.py), pytest-xdist workers included.
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def reading_fixture_html(tmp_path_factory):
    """The folder of the reading fixture's HTML (built with -W: site_helpers.build_reading_fixture)."""
    import fcntl
    import sys
    from pathlib import Path

    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "reading-fixture"
    shared.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path(__file__).resolve().parent / "tests" / "site"))
    import site_helpers

    with open(shared / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (shared / "built").is_file():
                site_helpers.build_reading_fixture(shared / "html")
                (shared / "built").write_text("", encoding="utf8")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return shared / "html"
