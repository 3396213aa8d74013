"""The maintainers' notebook writer, tools/notebooks.py: one command, its JSON read and written one
way; ``tidy`` takes the executing machine's paths out of stored outputs and joins split prints
(the stored notebooks' own tests: tests/notebooks/test_outputs.py, test_lab_labels.py, test_figures.py)."""
from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "notebooks.py"
_spec = importlib.util.spec_from_file_location("notebooks_tool", TOOL)
notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(notebooks)


def test_an_unknown_command_prints_the_usage(capsys):
    assert notebooks.main(["caption"]) == 2
    assert "usage: python tools/notebooks.py {practice|captions|labels|tidy|all}" in capsys.readouterr().err


def test_a_notebook_is_written_as_it_is_read(tmp_path):
    path = tmp_path / "n.ipynb"
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "练习"}], "metadata": {},
          "nbformat": 4, "nbformat_minor": 5}
    notebooks.write(path, nb)
    assert path.read_text(encoding="utf8").endswith("}\n") and "练习" in path.read_text(encoding="utf8")
    assert notebooks.read(path) == nb


def test_tidy_keeps_the_package_path_and_the_message(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("f()")])
    nb.cells[0].outputs = [nbformat.v4.new_output(
        "error", ename="ValueError", evalue="bad",
        traceback=["\x1b[36mFile \x1b[39m\x1b[32m/home/me/repo/gatherbook/logprobs.py:12\x1b[39m, in f()",
                   "\x1b[32m/home/me/.venv/lib/python3.11/site-packages/torch/_tensor.py\x1b[39m",
                   "ValueError: bad"]),
        nbformat.v4.new_output("stream", name="stderr", text="/root/x/site-packages/torch/a.py:3: Warn\n")]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    assert notebooks.main(["tidy", str(path)]) == 0
    out = nbformat.read(path, as_version=4).cells[0].outputs
    assert out[0]["traceback"][0].endswith("gatherbook/logprobs.py:12\x1b[39m, in f()")
    assert "torch/_tensor.py" in out[0]["traceback"][1] and "/home/" not in out[0]["traceback"][1]
    assert out[0]["traceback"][2] == "ValueError: bad"
    assert out[1]["text"] == "torch/a.py:3: Warn\n"


def test_tidy_joins_a_print_split_into_chunks(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1); print(2)")])
    new = nbformat.v4.new_output
    nb.cells[0].outputs = [new("stream", name="stdout", text="1\n"), new("stream", name="stdout", text="2\n"),
                           new("stream", name="stderr", text="w\n"), new("stream", name="stdout", text="3\n")]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    assert notebooks.main(["tidy", str(path)]) == 0
    out = nbformat.read(path, as_version=4).cells[0].outputs
    assert [(o["name"], o["text"]) for o in out] == [("stdout", "1\n2\n"), ("stderr", "w\n"), ("stdout", "3\n")]


def test_tidy_names_a_bad_argument(capsys, monkeypatch):
    # `python tools/notebooks.py tidy README.md`, run in this process (a new Python would spend 2 s
    # importing nbformat's jsonschema first)
    monkeypatch.setattr(sys, "argv", [str(TOOL), "tidy", "README.md"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(TOOL), run_name="__main__")
    assert stop.value.code == 2
    assert "'README.md' is not a notebook file (.ipynb)" in capsys.readouterr().err
