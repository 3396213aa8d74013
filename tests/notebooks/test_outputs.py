"""The stored notebooks carry no trace of the machine that executed them (book/tidy_outputs.py,
which `make execute` runs after executing)."""
import importlib.util
import json
import re
import runpy
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
MACHINE = re.compile(r"/(?:work|root|home|Users|tmp)/|site-packages|dist-packages|/\.venv/")
TIDY = ROOT / "book" / "tidy_outputs.py"

_spec = importlib.util.spec_from_file_location("tidy_outputs", TIDY)
tidy_outputs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tidy_outputs)


def _joined(value) -> str:
    return value if isinstance(value, str) else "".join(value)  # stored JSON splits lines


def _texts(cell) -> list[str]:
    found = []
    for out in cell.get("outputs", []):
        found += out.get("traceback", [])
        found.append(_joined(out.get("text", "")))
        found += [_joined(v) for k, v in out.get("data", {}).items() if k.startswith("text/")]
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_machine_path_in_stored_outputs(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    bad = [i for i, c in enumerate(cells) if any(MACHINE.search(t) for t in _texts(c))]
    assert not bad, f"{path.name}: cells {bad} store a path of the executing machine (run book/tidy_outputs.py)"


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
    assert tidy_outputs.main([str(path)]) == 0
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
    assert tidy_outputs.main([str(path)]) == 0
    out = nbformat.read(path, as_version=4).cells[0].outputs
    assert [(o["name"], o["text"]) for o in out] == [("stdout", "1\n2\n"), ("stderr", "w\n"), ("stdout", "3\n")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_print_stored_in_chunks(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    bad = [i for i, c in enumerate(cells) for a, b in zip(c.get("outputs", []), c.get("outputs", [])[1:])
           if a["output_type"] == b["output_type"] == "stream" and a["name"] == b["name"]]
    assert not bad, f"{path.name}: cells {bad} store one print in chunks (run book/tidy_outputs.py)"


def test_tidy_names_a_bad_argument(capsys, monkeypatch):
    # `python book/tidy_outputs.py README.md`, run in this process (a new Python would spend 2 s
    # importing nbformat's jsonschema first)
    monkeypatch.setattr(sys, "argv", [str(TIDY), "README.md"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(TIDY), run_name="__main__")
    assert stop.value.code == 2
    assert "'README.md' is not a notebook file (.ipynb)" in capsys.readouterr().err
