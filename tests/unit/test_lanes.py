"""The test lanes (conftest.py): which per-case tests `make test` and `make test-fast` sample, and
when a test session may reuse the last session's site build, and which Chromium the browser
tests launch (tests/site/site_helpers.py)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gatherbook_root_conftest_lanes", ROOT / "conftest.py")
lanes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lanes)
sys.path.insert(0, str(ROOT / "tests" / "site"))
import site_helpers as sh  # noqa: E402


def _ids(n=400):
    return [f"tests/exercises/test_declared_answers.py::test_x[case{i}]" for i in range(n)]


def test_the_fast_sample_lies_inside_the_sample_of_make_test():
    fast = {i for i in _ids() if lanes.in_sample(i, lanes.FAST_SAMPLE)}
    sample = {i for i in _ids() if lanes.in_sample(i, lanes.CASES_SAMPLE)}
    assert fast and fast <= sample < set(_ids())


@pytest.mark.parametrize("every", [lanes.CASES_SAMPLE, lanes.FAST_SAMPLE])
def test_a_sample_is_about_one_in_every(every):
    kept = sum(lanes.in_sample(i, every) for i in _ids(4000))
    assert 0.7 * 4000 / every < kept < 1.3 * 4000 / every


class _Item:
    def __init__(self, nodeid, edition=None):
        self.nodeid = nodeid
        self.originalname = nodeid.split("::")[-1].split("[")[0]
        if edition:
            self.callspec = type("CallSpec", (), {"params": {"edition": edition}})()


class _Config:
    def __init__(self):
        self.deselected = []
        self.hook = self

    def pytest_deselected(self, items):
        self.deselected += items


@pytest.mark.parametrize("env, kept", [({}, 7), ({"GATHERBOOK_LANE": "all"}, 7),
                                       ({"GATHERBOOK_LANE": "test"}, None),
                                       ({"GATHERBOOK_FAST": "1"}, None)])
def test_only_the_per_case_tests_are_sampled(monkeypatch, env, kept):
    for name in ("GATHERBOOK_LANE", "GATHERBOOK_FAST"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    per_case = [f"tests/exercises/test_exercises.py::test_y[ch1.e{i}]" for i in range(4)]
    other = ["tests/exercises/test_exercises.py::test_z", "tests/unit/test_sphinx_words.py::test_w[en]"]
    ci_only = [lanes.CI_ONLY[0] + "[x]"]
    items = [_Item(i) for i in per_case + other + ci_only]
    config = _Config()
    lanes.pytest_collection_modifyitems(config, items)
    got = [i.nodeid for i in items]
    assert set(other) <= set(got)
    every_test = not env or env.get("GATHERBOOK_LANE") == "all"
    assert (ci_only[0] in got) == every_test, "the whole-program runs are left to make test-all"
    if kept is not None:
        assert len(got) == kept and not config.deselected
    else:
        every = lanes.FAST_SAMPLE if env.get("GATHERBOOK_FAST") else lanes.CASES_SAMPLE
        assert [i for i in got if i in per_case] == [i for i in per_case if lanes.in_sample(i, every)]


@pytest.mark.parametrize("lane, both", [("test", False), ("all", True)])
def test_a_page_of_each_edition_is_opened_in_one_edition_in_make_test(monkeypatch, lane, both):
    """make test runs a browser test of ONE_EDITION_FILES in one edition, the editions taking turns
    by the test's name; make test-all in both. A test outside those files keeps both editions."""
    monkeypatch.delenv("GATHERBOOK_FAST", raising=False)
    monkeypatch.setenv("GATHERBOOK_LANE", lane)
    one = lanes.ONE_EDITION_FILES[0]
    names = [f"{one}test_{word}" for word in ("a", "b", "c", "d", "e", "f")]
    items = [_Item(f"{n}[{e}]", e) for n in names for e in lanes.EDITIONS]
    items += [_Item(f"tests/site/test_pages.py::test_x[{e}]", e) for e in lanes.EDITIONS]
    lanes.pytest_collection_modifyitems(_Config(), items)
    got = [i.nodeid for i in items]
    assert "tests/site/test_pages.py::test_x[en]" in got and "tests/site/test_pages.py::test_x[zh]" in got
    for n in names:
        kept = [e for e in lanes.EDITIONS if f"{n}[{e}]" in got]
        assert kept == (list(lanes.EDITIONS) if both else [lanes.edition_in_turn(n.split("::")[-1])])
    if not both:  # the editions take turns: each is kept for some test
        assert {lanes.edition_in_turn(n.split("::")[-1]) for n in names} == set(lanes.EDITIONS)


def test_an_unknown_cases_setting_is_an_error(monkeypatch):
    monkeypatch.setenv("GATHERBOOK_LANE", "half")
    with pytest.raises(pytest.UsageError):
        lanes.pytest_collection_modifyitems(_Config(), [])


def test_the_build_fingerprint_follows_every_source_byte(tmp_path, monkeypatch):
    monkeypatch.setattr(sh, "ROOT", tmp_path)
    (tmp_path / "a.md").write_text("one", encoding="utf8")
    (tmp_path / "b.md").write_text("two", encoding="utf8")
    first = sh.fingerprint(["a.md", "b.md"])
    assert sh.fingerprint(["a.md", "b.md"]) == first
    (tmp_path / "b.md").write_text("two!", encoding="utf8")
    assert sh.fingerprint(["a.md", "b.md"]) != first
    assert sh.fingerprint(["a.md"]) != sh.fingerprint(["a.md", "b.md"])


def test_the_installed_environment_is_read_from_site_packages_not_sys_path(tmp_path, monkeypatch):
    # the checkout's gatherbook.egg-info is on sys.path only once pytest imports conftest.py
    info = tmp_path / "gatherbook-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gatherbook\nVersion: 0.1.0\n",
                                   encoding="utf8")
    listed = sh._environment.__wrapped__  # (not the cached value)
    before = listed()
    monkeypatch.syspath_prepend(str(tmp_path))
    assert listed() == before


def test_a_kept_build_is_reused_only_for_its_fingerprint(tmp_path, monkeypatch):
    monkeypatch.setattr(sh, "CACHE", tmp_path / "cache")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html></html>", encoding="utf8")
    sh._keep_build("key1", {"returncode": 0, "log": "The book is built."}, site)
    assert sh._cached_build("key1")["log"] == "The book is built."
    assert sh._cached_build("key2") is None
    monkeypatch.setenv(sh.REUSE_ENV, "0")
    assert not sh.reuse_allowed()


@pytest.mark.parametrize("on_path, chosen", [
    (("chromium-headless-shell", "chromium"), "/bin/chromium-headless-shell"),
    (("chromium-headless-shell",), "/bin/chromium-headless-shell"),
    (("chromium",), "/bin/chromium"),
    (("chromium-browser",), "/bin/chromium-browser"),
    ((), sh.CHROMIUM_DEFAULT),
])
def test_the_browser_tests_launch_the_headless_shell_where_there_is_one(monkeypatch, on_path, chosen):
    monkeypatch.delenv(sh.CHROMIUM_ENV, raising=False)
    monkeypatch.setattr(sh.shutil, "which", lambda name: f"/bin/{name}" if name in on_path else None)
    assert sh.chromium_path() == chosen
    monkeypatch.setenv(sh.CHROMIUM_ENV, "/opt/my-chromium")
    assert sh.chromium_path() == "/opt/my-chromium"


@pytest.mark.parametrize("prefix", sorted(set(lanes.FAST_SKIP) | set(lanes.CI_ONLY) | set(lanes.PER_CASE_FILES)
                                           | set(lanes.ONE_EDITION_FILES)))
def test_every_listed_test_exists(prefix):
    """A renamed or moved test would fall out of the lists silently (and into the lane)."""
    path, _, name = prefix.partition("::")
    source = (ROOT / path).read_text(encoding="utf8")
    assert not name or f"def {name}" in source, f"no test {name}... in {path}"


def test_the_build_sees_no_test_file():
    """Editing a test or the lanes (the usual loop) must not make the next session build the site
    again."""
    files = sh.source_files()
    assert "notebooks/en/01_gather_basics.ipynb" in files and "_config.yml" in files
    assert "book/reader/Makefile" in files
    assert not [f for f in files if f.startswith("tests/") or f in ("conftest.py", "Makefile")
                or f.startswith(".ci/")]
