"""The "Run it yourself" download works as its README says, unzipped where a reader unzips it.

The zip is written as the build writes it, unzipped into a folder named neither ``en`` nor
``zh``, and its commands are run there: ``make help``, ``make lab`` (as a dry run: it would open
JupyterLab), ``make check`` (runs chapter 1). The pip install of ``make lab`` needs the network,
so the commands run with the current environment's Python (``PY=...``).
"""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gatherbook_sphinx import downloads

ROOT = Path(__file__).resolve().parents[2]
SITE_TOOLS = ("jupyter-book", "sphinx", "pytest", "nbval", "playwright", "jieba")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reader-copy")
    downloads.write_zip(ROOT, tmp / downloads.ZIP_NAME)
    with zipfile.ZipFile(tmp / downloads.ZIP_NAME) as zf:
        zf.extractall(tmp / "unzipped")
    return tmp / "unzipped" / downloads.FOLDER


def make(folder: Path, *args: str, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=folder, capture_output=True,
                          text=True, timeout=timeout)


def test_the_download_holds_the_reader_files(folder):
    for name in ("README.md", "README.zh.md", "Makefile", "requirements.txt", "pyproject.toml"):
        assert (folder / name).is_file(), name
    assert sorted(p.name for p in (folder / "notebooks").iterdir()) == ["en", "zh"]
    assert not (folder / "tests").exists() and not (folder / "book").exists()


def test_the_requirements_are_what_the_notebooks_need(folder):
    lines = [l.split("==")[0].strip().lower() for l in (folder / "requirements.txt").read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    assert "torch" in lines and "jupyterlab" in lines and "-e ." in lines
    assert not set(lines) & set(SITE_TOOLS), set(lines) & set(SITE_TOOLS)


@pytest.mark.parametrize("name", ["README.md", "README.zh.md"])
def test_each_readme_gives_the_two_commands_cpu_first(folder, name):
    text = (folder / name).read_text(encoding="utf8")
    assert "make lab" in text and "make check" in text and "cd gather-book" in text
    assert text.index("CPU") < text.index("CUDA"), "the CPU install comes first"
    for gone in ("make test", "make book", ".ci/run", "CONTRIBUTING"):
        assert gone not in text, gone


@pytest.mark.parametrize("name", ["README.md", "README.zh.md"])
def test_each_readme_names_the_torch_releases_the_notebooks_are_tested_on(folder, name):
    """The release requirements.txt pins (what `make lab` installs), and every release the
    repository's README says the notebooks are tested on (issue 36: 2.13.0 and 2.15.0)."""
    import re

    pinned = re.search(r"^torch==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    intro = (ROOT / "README.md").read_text(encoding="utf8").split("\n## ")[0]
    tested = set(re.findall(r"torch (\d+\.\d+\.\d+)", intro))
    assert pinned in tested, f"the repository README does not name the pinned torch {pinned}"
    said = set(re.findall(r"torch (\d+\.\d+\.\d+)", (folder / name).read_text(encoding="utf8")))
    assert said == tested, f"{name} names torch {sorted(said)}; the repository README {sorted(tested)}"


def test_the_readmes_name_the_site_when_the_config_gives_it(monkeypatch):
    monkeypatch.setattr(downloads, "configured_site", lambda root: "https://example.org/gather/")
    files = downloads.reader_files(ROOT)
    for name in ("README.md", "README.zh.md"):
        text = files[name].decode("utf8")
        assert "<https://example.org/gather/>" in text and "{site_sentence}" not in text


def test_without_an_address_the_readmes_say_where_the_site_is(monkeypatch):
    """No invented address: the site is the one the folder came from."""
    from gatherbook_sphinx import words

    monkeypatch.setattr(downloads, "configured_site", lambda root: "")
    files = downloads.reader_files(ROOT)
    for name, code in (("README.md", "en"), ("README.zh.md", "zh")):
        text = files[name].decode("utf8")
        assert words.table(code)["reader_no_site"] in text and "http" not in text.split("\n\n")[1]


def test_make_help_and_lab_work_inside_the_zip(folder):
    done = make(folder, "help")
    assert done.returncode == 0 and "make lab" in done.stdout and "make check" in done.stdout
    dry = make(folder, "-n", "lab")  # what a first `make lab` runs: the CPU build of torch first
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.index("download.pytorch.org/whl/cpu") < dry.stdout.index("-r requirements.txt")
    assert "-m jupyterlab notebooks/" in dry.stdout
    lab = make(folder, "-n", "lab", f"PY={sys.executable}")  # with a Python given: no install
    assert "pip install" not in lab.stdout and "-m jupyterlab notebooks/" in lab.stdout


@pytest.mark.slow
def test_make_check_runs_a_chapter_inside_the_zip(folder):
    done = make(folder, "check", f"PY={sys.executable}", timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "ran from top to bottom without an error" in done.stdout
    assert not list(folder.rglob(".ipynb_checkpoints"))
