"""A `|` inside code or math in a Markdown table row must be escaped as `\\|` (issue 21).

A table row is split at every unescaped `|`, also inside backticks: chapter 3's summary row
`log π(a|s)` came out as two cells, on the site and in JupyterLab, and lost its last column.
Both myst (markdown-it) and JupyterLab (marked) render `\\|` as `|` in a table cell.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
PAGES = sorted(p for p in (ROOT / "book").rglob("*.md") if "_build" not in p.parts)
SPAN = re.compile(r"(`+)(.+?)\1|\$([^$]+)\$")  # a code span or inline math


def bare_pipes(markdown: str) -> list[str]:
    """Code or math spans with an unescaped `|`, in the table rows of a Markdown text."""
    found, fence = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if fence or not line.lstrip().startswith("|"):
            continue
        for m in SPAN.finditer(line):
            inner = m.group(2) if m.group(2) is not None else m.group(3)
            if re.search(r"(?<!\\)\|", inner):
                found.append(m.group(0))
    return found


def markdown_of(path: Path) -> list[tuple[str, str]]:
    if path.suffix == ".md":
        return [("page", path.read_text(encoding="utf-8"))]
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(f"cell {i}", "".join(c["source"])) for i, c in enumerate(nb["cells"])
            if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("path", NOTEBOOKS + PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_table_cells_escape_pipes_in_code(path):
    bad = [f"{where}: {span}" for where, text in markdown_of(path) for span in bare_pipes(text)]
    assert not bad, f"{path.relative_to(ROOT)}: write \\| inside these spans:\n" + "\n".join(bad)


def test_the_check_finds_what_it_looks_for():
    text = ("| a | b |\n| --- | --- |\n| `log π(a|s)` | x |\n| `log π(a\\|s)` | y |\n"
            "| $|x|$ | z |\n`a|b` outside a table\n```\n| `a|b` | in a fence |\n```\n")
    assert bare_pipes(text) == ["`log π(a|s)`", "$|x|$"]
