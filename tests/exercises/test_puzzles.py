"""The practice puzzles: complete declarations (their right and planted wrong answers run in
tests/exercises/test_declared_answers.py), the guard rejects forbidden calls and loops, and shapes
are compared without broadcasting.

The tests read the declarations (gatherbook/puzzles/level*.py) instead of keeping tables of their own.
"""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
import torch

from gatherbook import puzzles as pz
from gatherbook.puzzles import _core
from gatherbook.exercises import get as get_exercise
from gatherbook.exercises._checker import _compare
from gatherbook.puzzles._texts import LEVELS, PUZZLES as WORDS, UI

ROOT = Path(__file__).resolve().parents[2]
ALL = pz.PUZZLES
IDS = [p.name for p in ALL]


def test_the_ladder_has_at_least_24_puzzles_in_four_levels():
    assert len(ALL) >= 24
    assert {p.level for p in ALL} == {1, 2, 3, 4}
    assert len(set(IDS)) == len(IDS)
    assert all(sum(p.level == k for p in ALL) >= 5 for k in (1, 2, 3, 4))


#: the puzzles issue #22 names, level by level, and the puzzle that is each
NAMED = {
    1: {"pick per row": "pick_per_row", "pick per column": "pick_per_column", "reverse": "reverse",
        "rotate": "rotate", "gather a diagonal": "diagonal", "argmax-then-gather": "value_at_argmax",
        "the <= rule": "leading_rows"},
    2: {"rows of a batch": "rows_of_batch", "whole feature vectors": "feature_vector",
        "the (B, K) -> (B, K, D) index": "rows_of_batch", "sliding windows": "sliding_windows"},
    3: {"per-token log-probs with shift and padding": "token_logprobs",
        "Q(s, a) with an action mask": "double_q", "top-k patches in image order": "topk_in_order",
        "restore a shuffled order": "unshuffle", "beam-search reorder": "beam_step",
        "top-p mask scattered back": "top_p_mask"},
    4: {"inverse permutation": "inverse_perm", "rank without argsort twice": "rank",
        "one-hot": "one_hot", "per-row histogram": "histogram", "segment sum": "segment_sum",
        "segment max": "segment_max", "segment mean": "segment_mean",
        "ragged -> padded (right)": "ragged_to_padded", "padded right -> left": "right_to_left",
        "padded (left) -> ragged": "left_to_ragged", "MoE dispatch": "moe_dispatch",
        "MoE combine": "moe_combine"},
}


def test_the_ladder_has_the_puzzles_the_issue_names():
    for level, named in NAMED.items():
        for what, name in named.items():
            assert pz.get(name).level == level, what


@pytest.mark.parametrize("p", ALL, ids=IDS)
def test_declaration_is_complete(p):
    assert len(p.wrongs) >= 3, "at least 3 planted wrong answers"
    assert len(p.rights) >= 3, "at least 3 right answers written other ways (the checker asks for 3)"
    assert len({w.key for w in p.wrongs}) == len(p.wrongs)
    assert p.edges, "hand-written edge cases, the first being the worked example"
    assert (ROOT / "notebooks" / "en" / f"{p.chapter}.ipynb").is_file()
    for lang in WORDS:
        words = WORDS[lang][p.name]
        assert set(words) == {"title", "task", "why"} | {w.key for w in p.wrongs}, lang
    # the definition is written with loops; the answers without
    assert "for " in inspect.getsource(p.spec)


@pytest.mark.parametrize("p", ALL, ids=IDS)
def test_edge_cases_agree_with_the_solution_on_the_guarded_path(p):
    """The loops (the reference) and the solution agree on every edge case, and the edge cases
    include a size-1 or an empty dimension."""
    sizes = {s for case in p.edges for a in case if isinstance(a, torch.Tensor) for s in a.shape}
    assert sizes & {0, 1}, f"{p.name}: no edge case with a size 0 or 1"
    for case in p.edges:
        assert not _core.fails(p, p.solution, case)


#: inputs that cannot hold what a check looks for: permutations, indices and probabilities are
#: never negative, a permutation never repeats, ragged_to_padded has at least one value (Shapes)
NO_NEGATIVE = {"inverse_perm", "one_hot", "histogram", "top_p_mask"}
NO_REPEAT = {"inverse_perm"}
NEVER_EMPTY = {"ragged_to_padded"}


def _drawn(p, monkeypatch) -> list[tuple]:
    """The cases the check tries: the hand-written ones, then those hypothesis draws."""
    drawn = []
    monkeypatch.setattr(_core, "fails", lambda p, fn, case: drawn.append(case) or False)
    assert _core.search(p, p.solution) is None
    return list(p.edges) + drawn


@pytest.mark.parametrize("p", ALL, ids=IDS)
def test_the_cases_include_the_edge_cases_that_bite(p, monkeypatch):
    """Size 1, B = 1, empty where legal, repeated values (an index, ties) and negative values."""
    cases = _drawn(p, monkeypatch)
    tensors = [[a for a in case if isinstance(a, torch.Tensor)] for case in cases]
    assert len(cases) >= len(p.edges) + p.n_examples, "hypothesis drew its whole budget"
    assert any(1 in a.shape for ts in tensors for a in ts), "a size-1 dim"
    assert any(ts[0].ndim and ts[0].shape[0] == 1 for ts in tensors), "a batch (first dim) of 1"
    if p.name not in NEVER_EMPTY:
        assert any(a.numel() == 0 for ts in tensors for a in ts), "an empty tensor"
    if p.name not in NO_REPEAT:
        assert any(a.numel() > 1 and a.flatten().unique().numel() < a.numel()
                   for ts in tensors for a in ts if a.dtype != torch.bool), "a repeated value"
    if p.name not in NO_NEGATIVE:
        assert any(a.numel() and a.dtype != torch.bool and bool((a < 0).any())
                   for ts in tensors for a in ts) or any(
            isinstance(a, (int, float)) and not isinstance(a, bool) and a < 0 for c in cases for a in c)


PLANTED = [(p, w) for p in ALL for w in p.wrongs]


@pytest.mark.parametrize("p, wrong", PLANTED, ids=[f"{p.name}-{w.key}" for p, w in PLANTED])
def test_the_search_alone_finds_every_planted_mistake(p, wrong):
    """Hypothesis's budget (``Puzzle.n_examples`` cases) is enough on its own: without the
    hand-written edge cases it still finds a case on which each planted wrong answer fails, so
    the search is a safety net for the mistakes nobody wrote an edge case for."""
    from hypothesis import Phase, find, settings
    from hypothesis.errors import NoSuchExample

    unshrunk = settings(_core._settings(p), phases=(Phase.explicit, Phase.generate))  # the same cases, faster
    try:
        find(p.cases(), lambda case: _core.fails(p, wrong.fn, case), settings=unshrunk)
    except NoSuchExample:
        pytest.fail(f"{p.name}: hypothesis's {p.n_examples} cases never catch {wrong.key}")


def test_the_search_is_derandomised():
    """The same cases in every process, whatever its hash seed: stored outputs stay stable."""
    import os
    import subprocess
    import sys
    code = ("import hashlib; from gatherbook.puzzles import _core, get; seen = []; "
            "_core.fails = lambda p, fn, c: seen.append(repr(c)) or False; "
            "_core.search(get('segment_max'), None); "
            "print(len(seen), hashlib.sha256(''.join(seen).encode()).hexdigest())")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2")}
    assert len(runs) == 1, runs


def test_stub_is_not_attempted():
    def pick_per_row(x, idx):
        raise NotImplementedError  # your code here
    assert pz.run_check("pick_per_row", pick_per_row, lang="en").status == "not_attempted"


def test_a_shape_1_answer_fails_for_a_scalar_and_back():
    """No comparison after broadcasting: (1,) is not (), () is not (1,)."""
    ex = get_exercise("puzzles.pick_per_row")
    kind, facts, _ = _compare(ex, torch.tensor([5]), torch.tensor(5))
    assert kind == "shape" and facts == {"expected": "(1,)", "got": "()"}
    assert _compare(ex, torch.tensor(5), torch.tensor([5]))[0] == "shape"
    assert _compare(ex, torch.tensor([[1, 2]]), torch.tensor([1, 2]))[0] == "shape"
    # and through the book's checker: a bare squeeze() gives () for a batch of one row
    r = pz.run_check("pick_per_row", lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(), lang="en")
    assert (r.kind, r.facts["expected"], r.facts["got"]) == ("shape", "(1,)", "()")
    r = pz.run_check("pick_per_row", lambda x, idx: x.gather(1, idx.unsqueeze(1)), lang="en")
    assert r.kind == "shape"


@pytest.mark.parametrize("answer, op", [
    (lambda x, idx: torch.take_along_dim(x, idx.unsqueeze(1), 1).squeeze(1), "take_along_dim"),
    (lambda x, idx: x[torch.arange(x.shape[0]), idx], "x[tensor]"),
    (lambda x, idx: x.gather(1, idx.unsqueeze(1)).flip(0).flip(0).squeeze(1), "flip"),
    (lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(1) + idx.sum() * 0, "sum"),
    (lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(1) + int(idx.sum().item()) * 0, "sum"),
])
def test_guard_rejects_forbidden_calls(answer, op):
    r = pz.run_check("pick_per_row", answer, lang="en")
    assert r.status == "failed" and r.kind == "rule", r
    assert r.facts["op"] == op
    assert f"`{op}`" in r.message and "allowed: gather;" in r.message


def test_guard_rejects_values_taken_into_python():
    r = pz.run_check("reverse", lambda x: torch.tensor(x.tolist()[::-1], dtype=x.dtype), lang="en")
    assert r.kind == "rule" and r.facts["op"] == "tolist"


def test_guard_names_the_call_and_the_allowed_list_in_both_languages():
    answer = lambda x: x.flip(0)  # noqa: E731
    en = pz.run_check("reverse", answer, lang="en").message
    zh = pz.run_check("reverse", answer, lang="zh").message
    assert "`flip`" in en and "allowed: gather;" in en
    assert "`flip`" in zh and "允许使用：gather;" in zh


def test_guard_rejects_a_python_loop():
    def pick_per_row(x, idx):
        out = torch.zeros(x.shape[0], dtype=x.dtype)
        for i in range(x.shape[0]):
            out[i] = x[i].gather(0, idx[i:i + 1])[0]
        return out
    r = pz.run_check("pick_per_row", pick_per_row, lang="en")
    assert r.kind == "rule" and r.facts["op"] == "for" and "Python loop" in r.message


def test_a_loop_is_named_even_when_its_first_pass_breaks_another_rule():
    """`x[i, idx[i]]` (a tensor index) and `int(n)` would stop the first pass; the loop is named."""
    def pick_per_row(x, idx):
        out = torch.zeros(x.shape[0], dtype=x.dtype)
        for i in range(x.shape[0]):
            out[i] = x[i, idx[i]]
        return out
    for fn in (pick_per_row, pz.get("pick_per_row").spec, pz.get("right_to_left").spec,
               lambda x, idx: torch.cat([x[i].gather(0, idx[i:i + 1]) for i in range(x.shape[0])]
                                         + [x.new_zeros(0)])):
        name = "right_to_left" if fn is pz.get("right_to_left").spec else "pick_per_row"
        r = pz.run_check(name, fn, lang="en")
        assert r.kind == "rule" and r.facts["op"] == "for" and "Python loop" in r.message, r.message


def test_an_expression_over_several_lines_is_not_a_loop():
    def pick_per_row(x, idx):
        return x.gather(
            1,
            idx.unsqueeze(1),
        ).squeeze(
            1)
    assert pz.run_check("pick_per_row", pick_per_row, lang="en").passed


def test_call_limit():
    r = pz.run_check("rank", lambda x: x.argsort(1).argsort(1), lang="en")
    assert r.kind == "rule" and r.facts["op"] == "argsort" and "1 call" in r.message


def test_mutating_an_input_fails():
    def pick_per_row(x, idx):
        idx.unsqueeze_(1)
        return x.gather(1, idx).squeeze(1)
    assert pz.run_check("pick_per_row", pick_per_row, lang="en").status == "failed"


def test_search_shrinks_to_the_smallest_failing_case_and_is_stable():
    def reverse(x):
        return x.gather(0, torch.arange(x.shape[0] - 1, -1, -1) % 5)
    a = pz.run_check("reverse", reverse, lang="en")
    b = pz.run_check("reverse", reverse, lang="en")
    assert a.case == len(pz.get("reverse").edges) + 1, "the hand-written cases pass; the search finds it"
    assert a.inputs[0].tolist() == [0, 0, 0, 0, 0, 1]
    assert "smallest failing one hypothesis found" in a.message
    assert a.message == b.message  # derandomised: stored outputs stay the same
    fig = pz.figure(a)
    assert fig is not None


def test_messages_have_the_same_numbers_in_both_languages():
    import re
    facts = re.compile(r"[-+]?\d+(?:\.\d+)?|[✔✘…]")
    for fn in (lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(), lambda x, idx: x.gather(1, idx),
               pz.get("pick_per_row").solution):
        en = pz.run_check("pick_per_row", fn, lang="en").message
        zh = pz.run_check("pick_per_row", fn, lang="zh").message
        # the hint's words differ; the facts above it do not
        assert facts.findall(en.split("likely")[0]) == facts.findall(zh.split("可能")[0])


def test_board_shows_what_is_solved():
    import contextlib
    import io
    pz.reset_board()

    def pick_per_row(x, idx):
        return x.gather(1, idx.unsqueeze(1)).squeeze(1)

    def diagonal_solution(x):  # the book's solutions do not count
        return pz.get("diagonal").solution(x)

    with contextlib.redirect_stdout(io.StringIO()):
        pz.check("pick_per_row", pick_per_row, lang="en")
        pz.check("reverse", lambda x: x, lang="en")
        pz.check("diagonal", diagonal_solution, lang="en")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        pz.board(lang="en")
    text = out.getvalue()
    assert "1 of {} solved, 1 tried".format(len(ALL)) in text
    assert "✔\u00a0pick_per_row" in text and "✘\u00a0reverse" in text and "·\u00a0diagonal" in text
    pz.reset_board()


def test_every_puzzle_is_declared_to_the_books_checker():
    """gatherbook/exercises/puzzles.py declares each puzzle as ``puzzles.<name>`` (the generic
    test tests/exercises/test_declared_answers.py then runs its right and wrong answers)."""
    for p in ALL:
        ex = get_exercise(f"puzzles.{p.name}")
        assert ex.reference is p.solution and ex.search is not None and ex.rules
        assert ex.title == {"en": WORDS["en"][p.name]["title"], "zh": WORDS["zh"][p.name]["title"]}


def test_texts_have_the_same_keys_in_every_language():
    assert set(UI["en"]) == set(UI["zh"])
    assert set(LEVELS["en"]) == set(LEVELS["zh"])
    assert set(WORDS["en"]) == set(WORDS["zh"]) == set(IDS)


def test_unknown_name_suggests_the_closest():
    with pytest.raises(ValueError, match="pick_per_row"):
        pz.get("pick_per_rows", lang="en")


def test_worked_example_picture_fits_a_phone():
    import matplotlib.pyplot as plt
    for p in ALL:
        fig = pz.show(p.name)
        w, h = fig.get_size_inches() * fig.dpi
        plt.close(fig)
        assert w <= 360, f"{p.name}: the worked example is {w:.0f} px wide"


def test_notebooks_carry_the_declarations():
    """The Practice notebooks' loop and solution cells are the package's (regenerate with
    `python -m gatherbook.puzzles._notebooks` after changing a declaration)."""
    sources = set()
    for path in sorted((ROOT / "notebooks").glob("*/08_practice_*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf8"))
        sources |= {"".join(c["source"]).rstrip("\n") for c in nb["cells"] if c["cell_type"] == "code"}
    for p in ALL:
        assert pz.source(p.spec, f"{p.name}_spec").rstrip("\n") in sources, p.name
        assert pz.source(p.solution, f"{p.name}_solution").rstrip("\n") in sources, p.name


def test_each_check_takes_about_a_second():
    import time
    slow = []
    for p in ALL:
        t = time.perf_counter()
        assert pz.run_check(p.name, p.solution, lang="en").passed
        if time.perf_counter() - t > 3.0:  # ~0.3 s on a quiet 2-core CPU; generous for a busy one
            slow.append(p.name)
    assert not slow, slow


def test_each_puzzle_is_a_heading_of_its_page_in_both_editions():
    """The page's contents ("On this page") list every puzzle: one ``## L.K `name``` heading each."""
    import re

    for lang in ("en", "zh"):
        headings = []
        for path in sorted((ROOT / "notebooks" / lang).glob("08_practice_*.ipynb")):
            nb = json.loads(path.read_text(encoding="utf8"))
            headings += [m.groups() for c in nb["cells"] if c["cell_type"] == "markdown"
                         for m in re.finditer(r"^## (\d)\.(\d+) `(\w+)`$", "".join(c["source"]), re.M)]
        assert [name for _, _, name in headings] == IDS, lang
        assert [int(level) for level, _, _ in headings] == [p.level for p in ALL], lang


def test_the_pages_hold_every_puzzle_once_in_ladder_order():
    """Level 4 takes two pages (4a, 4b); no page is longer than level 1's eight puzzles."""
    from gatherbook.puzzles._notebooks import PAGES, page_names
    pages = [page_names(number) for number, *_ in PAGES]
    assert [name for names in pages for name in names] == IDS
    assert max(len(names) for names in pages) <= 8
    for (number, stem, level, first), names in zip(PAGES, pages):
        assert names[0] == first and {pz.get(n).level for n in names} == {level}
        assert (ROOT / "notebooks" / "en" / f"{stem}.ipynb").is_file(), stem


def _comments(source: str) -> list[str]:
    import io
    import tokenize
    return [t.string.lstrip("#").strip() for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type == tokenize.COMMENT]


def test_chinese_notebooks_comment_their_code_in_chinese():
    """The zh practice notebooks' code cells comment in Chinese (code notation such as
    ``(B, K) -> (B, K, D)`` stays as it is); every comment's words are used."""
    import re

    from gatherbook.puzzles._notebooks import WORDS_IN_COMMENT
    from gatherbook.puzzles._texts import COMMENTS
    cjk = re.compile(r"[\u4e00-\u9fff]")
    english = []
    for path in sorted((ROOT / "notebooks" / "zh").glob("08_practice*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf8"))
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                english += [(path.name, c) for c in _comments("".join(cell["source"]))
                            if WORDS_IN_COMMENT.search(c) and not cjk.search(c)]
    assert not english
    from gatherbook.puzzles._notebooks import SETUP
    used = {c for p in ALL for fn in (p.spec, p.solution) for c in _comments(pz.source(fn))}
    used |= set(_comments(SETUP))
    assert set(COMMENTS["zh"]) <= used, set(COMMENTS["zh"]) - used


def test_a_translated_comment_past_88_columns_goes_above_its_line(monkeypatch):
    from gatherbook.puzzles import _notebooks
    from gatherbook.puzzles._texts import COMMENTS
    monkeypatch.setitem(COMMENTS, "zh", {"short": "短", "long words": "很长的注释" * 8})
    source = "def f(x):\n    y = x + 1  # short\n    return y * 2  # long words\n"
    assert _notebooks.localized(source, "zh") == (
        "def f(x):\n    y = x + 1  # 短\n    # " + "很长的注释" * 8 + "\n    return y * 2\n")
    assert _notebooks.localized(source, "en") == source
    with pytest.raises(KeyError, match="no zh words"):
        _notebooks.localized("x = 1  # not translated yet\n", "zh")
