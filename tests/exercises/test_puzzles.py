"""The Practice ladder (gatherbook/exercises/puzzles/page*.py): complete declarations (their right
and planted wrong answers run in tests/exercises/test_declared_answers.py), cases and a search that
find the edge cases that bite, shapes compared without broadcasting, the board.

The tests read the declarations instead of keeping tables of their own.
"""
from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import torch

from gatherbook.exercises import board, check, figure, get, pages, reset_board, run_check, show
from gatherbook.exercises.checker import _compare
from gatherbook.exercises.strategies import search
from gatherbook.exercises.words import of

ROOT = Path(__file__).resolve().parents[2]
LEVEL = {name: level for _, _, level, names in pages() for name in names}
ALL = [get(name) for name in LEVEL]
IDS = [p.name for p in ALL]


def test_the_ladder_has_at_least_24_puzzles_in_four_levels():
    assert len(ALL) >= 24
    assert set(LEVEL.values()) == {1, 2, 3, 4}
    assert len(set(IDS)) == len(IDS)
    assert all(sum(level == k for level in LEVEL.values()) >= 5 for k in (1, 2, 3, 4))


#: the topics issues #22 and #35 name, level by level, and the puzzle that is each
NAMED = {
    1: {"pick per row": "pick_per_row", "reverse": "reverse", "rotate": "rotate",
        "gather a diagonal": "diagonal", "argmax-then-gather": "value_at_argmax",
        "one log-prob per token (#11, near the start)": "pick_per_token",
        "a layer per pixel (#14, to level 1)": "pick_layer"},
    2: {"the <= rule": "leading_rows", "rows of a batch": "rows_of_batch",
        "whole feature vectors": "feature_vector", "the (B, K) -> (B, K, D) index": "rows_of_batch",
        "coordinates of a flat index": "unravel", "a (B, C, H, W) map at per-channel points": "read_points",
        "sliding windows": "sliding_windows"},
    3: {"per-token log-probs with shift and padding": "token_logprobs",
        "label smoothing with scatter_": "smooth_labels",
        "positions of packed sequences": "packed_positions", "their block-diagonal mask": "packed_mask",
        "a repetition penalty (frequency and presence)": "frequency_penalty"},
    4: {"inverse permutation": "inverse_perm", "rank without argsort twice": "rank",
        "segment sum": "segment_sum", "segment mean": "segment_mean",
        "index_put_ over a tuple of index tensors": "splat_points",
        "segment argmax": "segment_argmax", "segment softmax": "segment_softmax",
        "ragged -> padded (right)": "ragged_to_padded", "padded right -> left": "right_to_left",
        "padded (left) -> ragged": "left_to_ragged", "expert slots under a capacity, by priority": "priority_slots",
        "MoE dispatch": "capacity_dispatch", "MoE combine": "capacity_combine"},
}


def test_the_ladder_has_the_puzzles_the_issue_names():
    for level, named in NAMED.items():
        for what, name in named.items():
            assert LEVEL["puzzles." + name] == level, what


@pytest.mark.parametrize("p", ALL, ids=IDS)
def test_declaration_is_complete(p):
    assert len(p.mistakes) >= 3, "at least 3 planted wrong answers"
    assert len(p.right) >= 3, "at least 3 right answers written other ways (the checker asks for 3)"
    assert p.edge_cases, "hand-written edge cases, the first being the worked example"
    assert p.strategy is not None and p.allowed and p.signature
    assert (ROOT / "notebooks" / "en" / f"{p.taught_in}.ipynb").is_file()
    for lang in ("en", "zh"):
        assert {"title", "task", "why"} <= set(of(p.name, lang)), lang
    # the definition is written with loops; the answers without
    assert "for " in inspect.getsource(p.spec)


@pytest.mark.parametrize("p", ALL, ids=IDS)
def test_edge_cases_agree_with_the_solution_on_the_guarded_path(p):
    """The loops (the reference) and the solution agree on every edge case, and the edge cases
    include a size-1 or an empty dimension."""
    sizes = {s for case in p.edge_cases for a in case if isinstance(a, torch.Tensor) for s in a.shape}
    assert sizes & {0, 1}, f"{p.name}: no edge case with a size 0 or 1"
    for case in p.edge_cases:
        assert run_check(p.name, lambda *a, case=case: p.reference(*a), lang="en").passed  # guarded path too
        torch.testing.assert_close(p.reference(*case), p.spec(*case), rtol=p.rtol, atol=p.atol)


#: inputs that cannot hold what a check looks for: permutations, indices and probabilities are
#: never negative, a permutation never repeats, ragged_to_padded has at least one value (Shapes)
NO_NEGATIVE = {"inverse_perm", "unravel", "packed_positions", "packed_mask"}
NO_REPEAT = {"inverse_perm"}
NEVER_EMPTY = {"ragged_to_padded"}


def _drawn(p) -> list[tuple]:
    """The cases the check tries: the hand-written ones, then those hypothesis draws."""
    drawn = []
    assert search(p.strategy(), lambda case: drawn.append(case) or False, p.n_examples)[0] is None
    return list(p.edge_cases) + drawn


@pytest.mark.parametrize("p", ALL, ids=IDS)
def test_the_cases_include_the_edge_cases_that_bite(p):
    """Size 1, B = 1, empty where legal, repeated values (an index, ties) and negative values."""
    cases = _drawn(p)
    tensors = [[a for a in case if isinstance(a, torch.Tensor)] for case in cases]
    assert len(cases) >= len(p.edge_cases) + p.n_examples, "hypothesis drew its whole budget"
    assert any(1 in a.shape for ts in tensors for a in ts), "a size-1 dim"
    assert any(ts[0].ndim and ts[0].shape[0] == 1 for ts in tensors), "a batch (first dim) of 1"
    short = p.name.split(".", 1)[1]
    if short not in NEVER_EMPTY:
        assert any(a.numel() == 0 for ts in tensors for a in ts), "an empty tensor"
    if short not in NO_REPEAT:
        assert any(a.numel() > 1 and a.flatten().unique().numel() < a.numel()
                   for ts in tensors for a in ts if a.dtype != torch.bool), "a repeated value"
    if short not in NO_NEGATIVE:
        assert any(a.numel() and a.dtype != torch.bool and bool((a < 0).any())
                   for ts in tensors for a in ts) or any(
            isinstance(a, (int, float)) and not isinstance(a, bool) and a < 0 for c in cases for a in c)


#: planted mistakes only an edge case can show: an unstable sort keeps ties in order below 64
#: elements on the CPU, and the search draws at most 12 tokens (its sizes stay small to be drawn)
EDGE_ONLY = {("puzzles.priority_slots", "unstable_sort")}
PLANTED = [(p, w) for p in ALL for w in p.mistakes if (p.name, w.key) not in EDGE_ONLY]


@pytest.mark.parametrize("p, wrong", PLANTED, ids=[f"{p.name}-{w.key}" for p, w in PLANTED])
def test_the_search_alone_finds_every_planted_mistake(p, wrong):
    """Hypothesis's budget (``Exercise.n_examples`` cases) is enough on its own: without the
    hand-written edge cases it still finds a case on which each planted wrong answer fails, so
    the search is a safety net for the mistakes nobody wrote an edge case for."""
    from hypothesis import Phase, find, settings
    from hypothesis.errors import NoSuchExample

    from gatherbook.exercises.strategies import _settings

    def fails(case):
        expected, got = p.spec(*[a.clone() if isinstance(a, torch.Tensor) else a for a in case]), None
        try:
            got = wrong.fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in case])
        except Exception:
            return True
        return not (isinstance(got, torch.Tensor) and got.shape == expected.shape and got.dtype == expected.dtype
                    and torch.allclose(got.float(), expected.float(), rtol=p.rtol, atol=p.atol, equal_nan=True))

    unshrunk = settings(_settings(p.n_examples), phases=(Phase.explicit, Phase.generate))  # the same cases, faster
    try:
        find(p.strategy(), fails, settings=unshrunk)
    except NoSuchExample:
        pytest.fail(f"{p.name}: hypothesis's {p.n_examples} cases never catch {wrong.key}")


def test_the_search_is_derandomised():
    """The same cases in every process, whatever its hash seed: stored outputs stay stable."""
    import os
    import subprocess
    import sys
    code = ("import hashlib; from gatherbook.exercises import get; "
            "from gatherbook.exercises.strategies import search; seen = []; p = get('puzzles.segment_argmax'); "
            "search(p.strategy(), lambda c: seen.append(repr(c)) or False, p.n_examples); "
            "print(len(seen), hashlib.sha256(''.join(seen).encode()).hexdigest())")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2")}
    assert len(runs) == 1, runs


def test_stub_is_not_attempted():
    def pick_per_row(x, idx):
        raise NotImplementedError  # your code here
    assert run_check("puzzles.pick_per_row", pick_per_row, lang="en").status == "not_attempted"


def test_a_shape_1_answer_fails_for_a_scalar_and_back():
    """No comparison after broadcasting: (1,) is not (), () is not (1,)."""
    ex = get("puzzles.pick_per_row")
    kind, facts, _ = _compare(ex, torch.tensor([5]), torch.tensor(5))
    assert kind == "shape" and facts == {"expected": "(1,)", "got": "()"}
    assert _compare(ex, torch.tensor(5), torch.tensor([5]))[0] == "shape"
    assert _compare(ex, torch.tensor([[1, 2]]), torch.tensor([1, 2]))[0] == "shape"
    # and through the book's checker: a bare squeeze() gives () for a batch of one row
    r = run_check("puzzles.pick_per_row", lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(), lang="en")
    assert (r.kind, r.facts["expected"], r.facts["got"]) == ("shape", "(1,)", "()")
    r = run_check("puzzles.pick_per_row", lambda x, idx: x.gather(1, idx.unsqueeze(1)), lang="en")
    assert r.kind == "shape"


def test_mutating_an_input_fails():
    def pick_per_row(x, idx):
        idx.unsqueeze_(1)
        return x.gather(1, idx).squeeze(1)
    assert run_check("puzzles.pick_per_row", pick_per_row, lang="en").status == "failed"


def test_search_shrinks_to_the_smallest_failing_case_and_is_stable():
    def reverse(x):
        return x.gather(0, torch.arange(x.shape[0] - 1, -1, -1) % 5)
    a = run_check("puzzles.reverse", reverse, lang="en")
    b = run_check("puzzles.reverse", reverse, lang="en")
    assert a.case == len(get("puzzles.reverse").edge_cases) + 1, "the hand-written cases pass; the search finds it"
    assert a.inputs[0].tolist() == [0, 0, 0, 0, 0, 1]
    assert a.message.startswith("✘ puzzles.reverse: a case hypothesis drew failed (shrunk to the smallest "
                                "failing case it found)\n"), a.message  # not "case 5 of 5" beside "4 edge cases"
    assert a.message == b.message  # derandomised: stored outputs stay the same
    fig = figure(a)
    assert fig is not None


def test_messages_have_the_same_numbers_in_both_languages():
    import re
    facts = re.compile(r"[-+]?\d+(?:\.\d+)?|[✔✘…]")
    for fn in (lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(), lambda x, idx: x.gather(1, idx),
               get("puzzles.pick_per_row").reference):
        en = run_check("puzzles.pick_per_row", fn, lang="en").message
        zh = run_check("puzzles.pick_per_row", fn, lang="zh").message
        # the hint's words differ; the facts above it do not
        assert facts.findall(en.split("likely")[0]) == facts.findall(zh.split("可能")[0])


def test_board_shows_what_is_solved():
    import contextlib
    import io
    reset_board()

    def pick_per_row(x, idx):
        return x.gather(1, idx.unsqueeze(1)).squeeze(1)

    def diagonal_solution(x):  # the book's solutions do not count
        return get("puzzles.diagonal").reference(x)

    with contextlib.redirect_stdout(io.StringIO()):
        check("puzzles.pick_per_row", pick_per_row, lang="en")
        check("puzzles.reverse", lambda x: x, lang="en")
        check("puzzles.diagonal", diagonal_solution, lang="en")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        board(lang="en")
    text = out.getvalue()
    assert "1 of {} solved, 1 tried".format(len(ALL)) in text
    # each puzzle under its number (Puzzle 1 to 33, as the pages and Lab number them)
    assert "✔\u00a01\u00a0pick_per_row" in text and "✘\u00a06\u00a0reverse" in text and "·\u00a07\u00a0diagonal" in text
    assert "·\u00a0{}\u00a0capacity_combine".format(len(ALL)) in text
    assert "Level 2: Puzzles 9 to 15" in text  # the numbers say what they are
    # no line of the ladder wraps on a phone (a wrapped line continues further in: it reads as
    # nesting), and every puzzle line starts at the same indent
    from gatherbook.exercises import BOARD_WIDTH
    from gatherbook.exercises.messages import columns
    ladder = text.splitlines()[1:]
    assert all(columns(line) <= BOARD_WIDTH for line in ladder), ladder
    assert {line[:3] for line in ladder if "\u00a0" in line} <= {"  ·", "  ✔", "  ✘"}
    reset_board()


def test_board_marks_the_moment_a_level_is_complete(monkeypatch):
    """Solving every puzzle of a level prints its closing line in both editions; the whole ladder
    its own (issue 35). The board is filled directly: the checks themselves are tested above."""
    import contextlib
    import io
    from gatherbook import exercises as E

    def shown(lang):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            board(lang=lang)
        return out.getvalue()

    reset_board()
    assert "★" not in shown("en")
    for name, level in LEVEL.items():
        if level == 1:
            E._BOARD[name] = "solved"
    assert "★ Level 1 complete" in shown("en") and "★ 第 1 级全部完成" in shown("zh")
    for name in LEVEL:
        E._BOARD[name] = "solved"
    assert f"all {len(ALL)} puzzles" in shown("en") and f"全部 {len(ALL)} 道题" in shown("zh")
    reset_board()


def test_each_page_of_a_level_closes_on_its_own_and_the_level_once_both_are_done():
    """A trial learner who solved level 4a (a page of level 4) got no closing line: each page
    gets its own, level 4 its line once 4a and 4b are both done; what follows is said to build on
    it only while puzzles after it are still open."""
    import contextlib
    import io
    from gatherbook import exercises as E
    from gatherbook.exercises.words import text as said

    def shown(lang):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            board(lang=lang)
        return " ".join(out.getvalue().split())  # (fit may wrap the closing line)

    page = {number: names for number, _, _, names in E.pages()}
    reset_board()
    for name in page["4a"]:
        E._BOARD[name] = "solved"
    assert "★ Level 4a complete" in shown("en") and "★ 第 4 级（上）全部完成" in shown("zh")
    assert said("zh", "board.next").strip() in shown("zh")  # 4b is still open
    for name in page["4b"]:
        E._BOARD[name] = "solved"
    assert "★ Level 4 complete" in shown("en") and "★ 第 4 级全部完成" in shown("zh")
    assert "4a" not in shown("en").split("★")[1] and said("en", "board.next").strip() not in shown("en")
    for name in page["3"]:
        E._BOARD[name] = "solved"
    assert "★ Level 3, Level 4 complete" in shown("en") and "★ 第 3 级、第 4 级全部完成" in shown("zh")
    reset_board()


def test_a_name_without_its_part_suggests_every_exercise_of_that_name():
    with pytest.raises(ValueError, match=r"Did you mean 'ch1.pick_per_row' / 'puzzles.pick_per_row'\?"):
        get("pick_per_row", lang="en")


def test_unknown_name_suggests_the_closest():
    with pytest.raises(ValueError, match="Did you mean 'puzzles.pick_per_row'"):
        get("puzzles.pick_per_rows", lang="en")


def test_worked_example_picture_fits_a_phone():
    """One example within 360 px; two within the widest figure; either at most one phone screen
    tall on a 390 px phone (shown shrunk to its column when wider)."""
    import matplotlib.pyplot as plt

    from gatherbook.figures import style
    for p in ALL:
        fig = show(p.name)
        w, h = fig.get_size_inches()
        plt.close(fig)
        limit = style.MAX_WIDTH if p.second_example is not None else 3.6
        assert w <= limit + 1e-9, f"{p.name}: the worked example is {w * 100:.0f} px wide"
        assert style.phone_height(w, h) <= style.PHONE_SCREEN, \
            f"{p.name}: the worked example is {style.phone_height(w, h):.0f} px tall on a phone, more than its screen"


#: the puzzles whose one example does not show the pattern: their second example and the pattern
SECOND = {"rotate": "k > N", "leading_rows": "a repeated column", "unravel": "size-1 dims",
          "packed_positions": "an empty sequence", "frequency_penalty": "alpha alone",
          "segment_softmax": "exp overflows", "priority_slots": "exactly C tokens"}


def test_at_least_six_puzzles_draw_a_second_example():
    assert {p.name.split(".", 1)[1] for p in ALL if p.second_example is not None} == set(SECOND)


@pytest.mark.parametrize("p", [p for p in ALL if p.second_example is not None], ids=lambda p: p.name)
def test_a_second_example_is_a_valid_case_with_its_words(p):
    """It is one of the puzzle's edge cases (not the first), or a case of its own on which the
    reference and the loops run and agree; both editions have its caption line and the first's."""
    second = p.second_example
    if isinstance(second, int):
        assert 0 < second < len(p.edge_cases), \
            f"{p.name}: second_example={second} names no edge case after the first (1 to {len(p.edge_cases) - 1})"
        case = p.edge_cases[second]
    else:
        case = second
        assert isinstance(case, tuple) and len(case) == len(p.args), f"{p.name}: a case is a tuple of {p.args}"
    copy = [a.clone() if isinstance(a, torch.Tensor) else a for a in case]
    want, loops = p.reference(*copy), p.spec(*[a.clone() if isinstance(a, torch.Tensor) else a for a in case])
    assert want.shape == loops.shape and want.dtype == loops.dtype
    assert torch.allclose(want.double(), loops.double(), rtol=p.rtol, atol=p.atol, equal_nan=True), p.name
    assert p.examples() == [p.edge_cases[0], case]
    for lang in ("en", "zh"):
        lines = of(p.name, lang)["examples"]
        assert set(lines) == {"a", "b"} and all(lines.values()), (p.name, lang)


def test_only_a_puzzle_with_a_second_example_has_example_lines():
    for lang in ("en", "zh"):
        assert {p.name for p in ALL if "examples" in of(p.name, lang)} == \
            {p.name for p in ALL if p.second_example is not None}, lang


@pytest.mark.parametrize("short, side_by_side", [("rotate", True), ("packed_positions", False)])
def test_two_examples_stand_side_by_side_where_they_fit_else_one_under_the_other(short, side_by_side):
    """Headed (a) and (b): (b) right of (a) at its height, or below it at its left edge; the
    drawn width decides (packed_positions' 8 positions beside 5 are too wide)."""
    import matplotlib.pyplot as plt

    fig = show("puzzles." + short)
    fig.draw_without_rendering()
    heads = {t.get_text(): t.get_window_extent() for t in fig.texts if t.get_text() in ("(a)", "(b)")}
    plt.close(fig)
    a, b = heads["(a)"], heads["(b)"]
    if side_by_side:
        assert b.x0 > a.x1 and abs(b.y0 - a.y0) < 1
    else:
        assert abs(b.x0 - a.x0) < 1 and b.y1 < a.y0


def test_every_puzzles_failure_picture_is_at_most_a_phone_screen_tall():
    """Its first case, answered with the values moved (yours beside the expected, or stacked)
    and with the wrong shape: no wider than a figure, no taller than a phone's screen at 390 px."""
    from types import SimpleNamespace

    import matplotlib.pyplot as plt

    from gatherbook.exercises.messages import scalar
    from gatherbook.figures import style
    from gatherbook.figures.checks import draw_failed_case

    tall = []
    for p in ALL:
        name, case = p.name, p.edge_cases[0]
        want = p.spec(*[a.clone() if isinstance(a, torch.Tensor) else a for a in case])
        moved = ~want if want.dtype == torch.bool else want.flip(-1) + 1
        for got in (moved, want.unsqueeze(0)):
            differs = want != got if want.shape == got.shape else None
            fig = draw_failed_case(SimpleNamespace(status="failed", kind="values" if differs is not None else "shape",
                                                   inputs=case, expected=want, got=got, differs=differs), p.args, scalar)
            if fig is None:  # what draw_failed_case gives for a picture taller than a phone's screen
                tall.append(f"{name} {tuple(got.shape)}: no picture")
                continue
            w, h = fig.get_size_inches()
            plt.close(fig)
            if w > style.MAX_WIDTH + 1e-9 or style.phone_height(w, h) > style.PHONE_SCREEN:
                tall.append(f"{name} {tuple(got.shape)}: {w * 100:.0f} x {h * 100:.0f} px")
    assert not tall, tall


#: the puzzles whose target copies values of an input (a gather, a move): their picture links them
COPIES = {"pick_per_row": "x", "value_at_argmax": "values", "reverse": "x", "read_points": "fmap",
          "ragged_to_padded": "values", "capacity_dispatch": "x", "capacity_combine": "buf"}


@pytest.mark.parametrize("short, source", COPIES.items())
def test_the_worked_example_colours_where_each_value_came_from(short, source):
    """A target cell shares its colour with the input cell it copies (the chapters' gather
    pictures do the same); an input cell nobody reads stays grey (a dropped token shows)."""
    from gatherbook.figures.checks import copy_links
    from gatherbook.figures.grid import PLAIN, QUIET
    p = get("puzzles." + short)
    case = p.edge_cases[0]
    target = p.spec(*case)
    arg, src, tgt = copy_links(p.spec, case, target)
    assert p.args[arg] == source
    x, flat = case[arg].reshape(-1), target.reshape(-1)
    ids = src.reshape(-1)
    for k, colour in enumerate(tgt.reshape(-1)):
        if colour != PLAIN:  # linked: the same value as the input cell of that colour
            assert bool(flat[k] == x[list(ids).index(colour)])
    if short == "capacity_dispatch":  # the dropped token's row is read by no slot
        assert (src[3] == QUIET).all()


def test_each_check_takes_about_a_second():
    import time
    slow = []
    for p in ALL:
        t = time.perf_counter()
        assert run_check(p.name, p.reference, lang="en").passed
        if time.perf_counter() - t > 3.0:  # ~0.3 s on a quiet 2-core CPU; generous for a busy one
            slow.append(p.name)
    assert not slow, slow


def test_the_search_writes_nothing_into_the_source_tree():
    """Hypothesis's cache goes where conftest.py points it, outside the checkout."""
    from hypothesis.configuration import storage_directory

    run_check("puzzles.reverse", lambda x: x.flip(0), lang="en")  # a search runs (and may cache)
    assert ROOT not in storage_directory("constants").path.parents


def test_the_worked_examples_target_is_named_as_the_checks_picture_names_it():
    """gb.show's target panel is "expected", as in the picture of a failed check; it was "target",
    which smooth_labels' argument is named too (the two panels shared a title and its colours)."""
    import matplotlib.pyplot as plt

    import gatherbook as gb

    fig = gb.show("puzzles.smooth_labels")
    titles = [t.get_text().split("  ")[0] for t in fig.texts]
    assert titles.count("target") == 1 and titles[-1] == "expected", titles
    plt.close(fig)
