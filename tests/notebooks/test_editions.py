"""Every edition holds together with the first (English): same notebooks, same code, same outputs.

Only prose may differ: markdown cells, code comments, cell metadata such as figure captions, and
outputs that are deliberately written in the reader's language (exercise feedback). Those must
still agree on everything that is not prose: every number, shape and verdict symbol. (The
exercise checker's own parity is tested on its records, in test_exercises.py.)
"""
from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

from gatherbook.editions import CODES

ROOT = Path(__file__).resolve().parents[2]
EN = ROOT / "notebooks" / CODES[0]
OTHERS = [ROOT / "notebooks" / code for code in CODES[1:]]  # each compared with the first edition
NAMES = sorted(p.name for p in EN.glob("*.ipynb"))
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# numbers (with optional sign/decimals/exponent), and the verdict symbols of the exercise checker
FACTS = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[✔✘…]")


def code_cells(path: Path) -> list:
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def strip_comments(source: str) -> str:
    """The code without comments or blank lines (token-exact, so '#' inside strings survives)."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type != tokenize.COMMENT]
    lines = tokenize.untokenize(tokens).splitlines()
    return "\n".join(line.rstrip() for line in lines if line.strip())


def strip_comments_and_docstrings(source: str) -> str:
    """The code as Python sees it, without comments and without docstrings (of the cell, its
    functions and classes), so each edition may write both in its own language. A cell that
    is not plain Python (an IPython magic) falls back to dropping the comments only."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return strip_comments(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def coalesced(outputs: list) -> list:
    """Consecutive stream outputs of one stream merged: how a cell's printing is split into
    messages varies from run to run (nbval merges them the same way before it compares)."""
    merged = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1] = {**merged[-1], "text": merged[-1].get("text", "") + out.get("text", "")}
        else:
            merged.append(dict(out))
    return merged


def output_facts(output) -> list:
    """A comparable summary of one output: its kind, and its text or a hash of its image."""
    kind = output.get("output_type")
    if kind == "stream":
        return [kind, output.get("name"), output.get("text", "")]
    if kind == "error":
        return [kind, output.get("ename"), output.get("evalue")]
    data = output.get("data", {})
    facts = [kind]
    for mime in sorted(data):
        value = data[mime]
        if isinstance(value, list):
            value = "".join(value)
        if mime.startswith("image/"):
            value = hashlib.sha256(value.encode()).hexdigest()
        facts.append((mime, value))
    return facts


@pytest.mark.parametrize("other", OTHERS, ids=[p.name for p in OTHERS])
def test_same_notebooks_in_both_editions(other):
    en = {p.name for p in EN.glob("*.ipynb")}
    zh = {p.name for p in other.glob("*.ipynb")}
    assert en, "no notebooks in notebooks/en"
    assert en == zh, f"only in en: {sorted(en - zh)}; only in {other.name}: {sorted(zh - en)}"


# The one place where the two editions' code differs: the setup cell names its own language.
SETUP_LANG = re.compile(r'gb\.setup\(lang="([a-z]+)"\)')


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("lang", CODES)
def test_setup_cell_states_the_notebooks_language(name, lang):
    folder = ROOT / "notebooks" / lang
    setup = code_cells(folder / name)[0].source
    assert SETUP_LANG.findall(setup) == [lang], (
        f"{folder.name}/{name}: the first code cell must call gb.setup(lang=\"{lang}\") once")


def same_code(source: str) -> str:
    """The code without comments and docstrings, with the setup cell's language literal made
    neutral."""
    return strip_comments_and_docstrings(SETUP_LANG.sub('gb.setup(lang=LANG)', source))


@pytest.mark.parametrize("other", OTHERS, ids=[p.name for p in OTHERS])
@pytest.mark.parametrize("name", NAMES)
def test_same_code_cells(name, other):
    en, zh = code_cells(EN / name), code_cells(other / name)
    assert len(en) == len(zh), f"{name}: {len(en)} code cells in en, {len(zh)} in zh"
    for i, (a, b) in enumerate(zip(en, zh)):
        assert same_code(a.source) == same_code(b.source), (
            f"{name}: code cell {i} differs between en and zh (comments and docstrings aside):\n"
            f"--- en\n{a.source}\n--- zh\n{b.source}")


@pytest.mark.parametrize("other", OTHERS, ids=[p.name for p in OTHERS])
@pytest.mark.parametrize("name", NAMES)
def test_same_cell_tags(name, other):
    for i, (a, b) in enumerate(zip(code_cells(EN / name), code_cells(other / name))):
        ta, tb = a.metadata.get("tags", []), b.metadata.get("tags", [])
        assert sorted(ta) == sorted(tb), f"{name}: code cell {i} tags: en {ta}, zh {tb}"


def _same_or_same_facts(text_en: str, text_zh: str) -> bool:
    if text_en == text_zh:
        return True
    # a deliberately translated output: it must be in Chinese, and agree on every number and verdict
    return bool(CJK.search(text_zh)) and FACTS.findall(text_en) == FACTS.findall(text_zh)


@pytest.mark.parametrize("other", OTHERS, ids=[p.name for p in OTHERS])
@pytest.mark.parametrize("name", NAMES)
def test_same_outputs(name, other):
    for i, (a, b) in enumerate(zip(code_cells(EN / name), code_cells(other / name))):
        if "nbval-ignore-output" in a.get("metadata", {}).get("tags", []):
            continue  # timings and the like: each edition's run prints its own (nbval compares neither)
        oa, ob = coalesced(a.get("outputs", [])), coalesced(b.get("outputs", []))
        assert len(oa) == len(ob), f"{name}: code cell {i} has {len(oa)} outputs in en, {len(ob)} in zh"
        for j, (x, y) in enumerate(zip(oa, ob)):
            fx, fy = output_facts(x), output_facts(y)
            if fx == fy:
                continue
            where = f"{name}: code cell {i}, output {j}"
            assert fx[0] == fy[0] and len(fx) == len(fy), f"{where}: different kinds of output\n{fx}\n{fy}"
            for u, v in zip(fx[1:], fy[1:]):
                if isinstance(u, tuple):  # (mime, value): images must be identical
                    assert u[0] == v[0] and (u[0].startswith("text/") and _same_or_same_facts(u[1], v[1])
                                             or u == v), f"{where}: {u[0]} differs"
                else:
                    assert u == v or _same_or_same_facts(str(u), str(v)), (
                        f"{where}: outputs differ in more than prose:\n--- en\n{u}\n--- zh\n{v}")


def test_split_streams_compare_as_one():
    split = [{"output_type": "stream", "name": "stdout", "text": "a\n"},
             {"output_type": "stream", "name": "stdout", "text": "b\n"}]
    assert coalesced(split) == [{"output_type": "stream", "name": "stdout", "text": "a\nb\n"}]
    assert len(coalesced(split[:1] + [{"output_type": "stream", "name": "stderr", "text": "c"}])) == 2


def test_strip_comments_keeps_hashes_in_strings():
    assert strip_comments('x = "#not a comment"  # a comment\n') == 'x = "#not a comment"'


def test_parity_ignores_comments_and_docstrings_but_not_code():
    en = 'def f(x):\n    """One per row."""\n    return x + 1  # add one\n'
    zh = 'def f(x):\n    """每行一个。"""\n    return x + 1  # 加一\n'
    assert same_code(en) == same_code(zh)
    assert same_code(en) != same_code(en.replace("x + 1", "x + 2"))
    assert same_code(en) != same_code(en.replace('"""One per row."""', 'y = "One per row."'))
    assert same_code('s = "# kept"  # dropped\n') == "s = '# kept'"
    assert same_code("%timeit f(1)  # magic\n") == "%timeit f(1)"  # not Python: comments only
    assert same_code('dev = gb.setup(lang="zh")') == same_code('dev = gb.setup(lang="en")')


def test_facts_catch_a_changed_number():
    assert not _same_or_same_facts("✔ 12 cases passed", "✔ 11 个用例全部通过")
    assert _same_or_same_facts("✔ ch1.a: all 12 cases passed", "✔ ch1.a：12 个用例全部通过")
    assert not _same_or_same_facts("shape (4,)", "shape (4,)!")  # not Chinese: must be identical


def heading_levels(path: Path) -> list[list[int]]:
    """Per markdown cell, the levels of its Markdown headings (outside code fences)."""
    levels = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        fenced, mine = False, []
        for line in cell.source.splitlines():
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced and (m := re.match(r"(#{1,6}) \S", line)):
                mine.append(len(m.group(1)))
        levels.append(mine)
    return levels


@pytest.mark.parametrize("other", OTHERS, ids=lambda p: p.name)
@pytest.mark.parametrize("name", NAMES)
def test_same_headings(name, other):
    """Every edition has the same sections: the site's language switch and section ids rely on it."""
    en, them = heading_levels(EN / name), heading_levels(other / name)
    assert len(en) == len(them), f"{name}: {len(en)} markdown cells in {EN.name}, {len(them)} in {other.name}"
    diff = [i for i, (a, b) in enumerate(zip(en, them)) if a != b]
    assert not diff, (f"{name}: heading levels differ in markdown cells {diff}: "
                      + "; ".join(f"cell {i}: {EN.name} {en[i]} {other.name} {them[i]}" for i in diff[:5]))
