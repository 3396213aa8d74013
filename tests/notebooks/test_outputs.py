"""The stored notebooks carry no trace of the machine that executed them (``tools/notebooks.py
tidy``, which `make execute` runs after executing); the tidying itself: tests/tools/test_notebooks.py."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
MACHINE = re.compile(r"/(?:work|root|home|Users|tmp)/|site-packages|dist-packages|/\.venv/")


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
    assert not bad, f"{path.name}: cells {bad} store a path of the executing machine (run python tools/notebooks.py tidy)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_print_stored_in_chunks(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    bad = [i for i, c in enumerate(cells) for a, b in zip(c.get("outputs", []), c.get("outputs", [])[1:])
           if a["output_type"] == b["output_type"] == "stream" and a["name"] == b["name"]]
    assert not bad, f"{path.name}: cells {bad} store one print in chunks (run python tools/notebooks.py tidy)"

