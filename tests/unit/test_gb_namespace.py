"""``import gatherbook as gb`` is the book's vocabulary, and the notebooks use nothing else."""
from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

import pytest

import gatherbook as gb

ROOT = Path(__file__).resolve().parents[2]
INTRODUCED = re.compile(r"Introduced in (?:Chapter (\d+)|the (Practice) part)")


def _source_doc(module: str, name: str) -> str | None:
    """The docstring of ``name`` as written in ``module``'s source (a module's own docstring when
    ``name`` is the module, a constant's ``#:`` comment lines), following ``from ... import name``."""
    path = Path(importlib.util.find_spec(module).origin)
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    if module == f"gatherbook.{name}":
        return ast.get_docstring(tree)
    lines = source.splitlines()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return ast.get_docstring(node)
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and any(getattr(t, "id", None) == name for t in targets):
            comments, k = [], node.lineno - 2
            while k >= 0 and lines[k].startswith("#:"):
                comments.insert(0, lines[k][2:].strip())
                k -= 1
            return " ".join(comments)
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), module.rsplit(".", 1)[0]
                                               if path.name != "__init__.py" else module)
            original = next(a.name for a in node.names if (a.asname or a.name) == name)
            return _source_doc(base, original)
    return None


def test_every_name_of_the_table_of_contents_says_its_chapter_in_its_source():
    assert len(gb.__all__) == len(set(gb.__all__))
    wrong = {}
    for name in gb.__all__:
        doc = _source_doc(gb._EXPORTS[name][0], name) or ""
        found = INTRODUCED.search(doc)
        chapter = None if found is None else 8 if found.group(2) else int(found.group(1))
        if chapter != gb.chapter_of(name):
            wrong[name] = (found.group(0) if found else "no 'Introduced in ...'", gb.chapter_of(name))
    assert wrong == {}, "name: (what its docstring says, the chapter gatherbook._EXPORTS names)"


def test_every_name_of_the_table_of_contents_loads():
    for name in gb.__all__:
        assert getattr(gb, name) is not None
    assert set(gb.__all__) <= set(dir(gb))


def test_an_unknown_name_points_at_the_table_of_contents():
    try:
        gb.no_such_helper
    except AttributeError as e:
        assert "gatherbook.__all__" in str(e)
    else:
        raise AssertionError("no error")


def test_the_old_puzzles_namespace_says_what_replaced_it():
    with pytest.raises(AttributeError, match=re.escape('gb.check("puzzles.<name>", fn)')):
        gb.puzzles  # noqa: B018


def test_notebooks_import_the_package_only_through_gb():
    for path in sorted((ROOT / "notebooks").glob("*/0*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert re.findall(r"^\s*(?:from gatherbook|import gatherbook(?! as gb\b))[^\n]*", code, re.M) == [], path
        assert "import gatherbook as gb" in code, path
        used = set(re.findall(r"\bgb\.(\w+)", code))
        assert used <= set(gb.__all__), (path, used - set(gb.__all__))
