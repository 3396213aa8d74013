"""What the checker says, in the cases a reader pass found misreported: zh lines that start with
closing punctuation, lines broken inside a shape, a CPU index fed to gather on the device probe,
torch's own beta warning counted as the reader's print, a forbidden call on the returned value, an
answer that raises."""
from __future__ import annotations

import re

import torch

from gatherbook.exercises import figure, get, names, run_check
from gatherbook.exercises.guard import GROUPS
from gatherbook.exercises.messages import NO_LINE_END, NO_LINE_START, _allowed, columns, fit
from gatherbook.exercises.words import table, text


def test_wrapped_chinese_lines_never_start_with_closing_punctuation_nor_end_with_an_opening_one():
    line = "值不对：有 3 个元素不同（共 12 个）；第一处位于 [0, 1]：应为 1，实际为 2（逐元素精确比较）。" * 3
    broke_before = set()
    for width in range(20, 89):
        lines = fit(line, width).split("\n")
        for prev, nxt in zip(lines, lines[1:]):
            assert nxt.strip()[0] not in NO_LINE_START, (width, nxt)
            assert prev.rstrip()[-1] not in NO_LINE_END, (width, prev)
            broke_before.add(nxt.strip()[0])
        assert all(columns(x) <= width + 4 for x in lines)  # a kept pair may overhang by one character
    assert broke_before, "the line was wrapped"


def test_wrapped_lines_never_break_inside_a_shape_nor_inside_a_word():
    shapes = ("(3, 5)", "(3, 5, 1)", "(B, L - 1)", "[0, 1]")
    lines = [text(lang, "kind.shape", expected="(3, 5)", got="(3, 5, 1)") + " "
             + text(lang, "kind.values", n_diff=3, n=12, where="[0, 1]", expected=1, got=2,
                    how=text(lang, "values.exact")) + " (B, L - 1) NotImplementedError"
             for lang in ("en", "zh")]
    for line in lines:
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", line)
        for width in range(16, 89):
            out = [x.strip() for x in fit(line, width).split("\n")]
            assert len(out) > 1
            for shape in shapes:  # each shape whole on one line
                assert sum(x.count(shape) for x in out) == line.count(shape), (width, shape, out)
            assert re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", " ".join(out)) == words, (width, out)


def test_wrapped_hints_never_break_inside_a_short_code_span():
    """``第 b * K ... b * K + K - 1 行`` broke as ``第 b *`` / ``K ... 行`` (issue 37): a code span up
    to CODE_MAX characters stays on one line, in both editions' words."""
    for lang in ("en", "zh"):
        hint = table(lang)["exercises"]["ch7.reorder_beams"]["hints"]["no_batch_offset"]
        spans = re.findall(r"`[^`]+`", hint)
        assert "`b * K ... b * K + K - 1`" in spans, hint
        for width in range(30, 89):
            out = fit("likely mistake: " + hint, width).split("\n")
            for span in (s for s in spans if len(s) <= 32):
                assert sum(x.count(span) for x in out) == 1, (lang, width, span, out)


def test_a_cpu_index_fed_to_gather_or_index_add_is_caught_by_the_device_probe():
    def reverse(x):  # right on the CPU; on a GPU the index made here stays on the CPU
        return x.gather(0, torch.arange(x.shape[0] - 1, -1, -1))

    r = run_check("puzzles.reverse", reverse, lang="en")
    assert (r.kind, r.facts["how"], r.facts["op"]) == ("device", "mixed", "gather"), r.message
    assert "cpu + meta" in r.message and "device=" in r.message

    def segment_sum(values, seg, S):  # the sums are made on the CPU, the values are on the GPU
        return torch.zeros(S).index_add(0, seg, values)

    r = run_check("puzzles.segment_sum", segment_sum, lang="en")
    assert (r.kind, r.facts["how"]) == ("device", "raised"), r.message


def test_a_device_failure_prints_no_expected_and_yours_of_the_cpu_run():
    """On the CPU the answer is right: the expected result and yours would print the same values
    (a trial learner read them as a contradiction); the kind line says what failed."""
    def reverse(x):
        return x.gather(0, torch.arange(x.shape[0] - 1, -1, -1))

    for lang in ("en", "zh"):
        r = run_check("puzzles.reverse", reverse, lang=lang)
        assert r.kind == "device" and r.expected is None and r.got is None, r.message
        labels = [text(lang, key) + text(lang, "sep") for key in ("expected", "got")]
        assert not [line for line in r.message.splitlines() if line.startswith(tuple(labels))], r.message
        assert text(lang, "input") in r.message and figure(r) is None


def test_torchs_beta_warning_is_not_counted_as_the_readers_print():
    def answer(x, idx):
        torch.zeros(2).index_reduce(0, torch.tensor([0]), torch.ones(1), "amax")  # warns: beta
        return x.gather(1, idx.unsqueeze(1)).squeeze(1)

    r = run_check("ch1.pick_per_row", answer, lang="en")
    assert r.passed and r.n_printed == 0, r.message
    r = run_check("ch1.pick_per_row", lambda x, idx: print("hi") or x.gather(1, idx.unsqueeze(1)).squeeze(1))
    assert r.n_printed > 0  # the reader's own print still counts


def test_a_forbidden_call_on_the_returned_value_is_named_as_such():
    r = run_check("puzzles.pick_per_row", lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(1).numpy(), lang="en")
    assert (r.kind, r.facts["op"]) == ("rule", "numpy"), r.message
    assert "`numpy`" in r.message and "type: expected" not in r.message


def test_an_answer_that_raises_gets_a_picture_of_inputs_and_expected_with_the_error_named():
    r = run_check("puzzles.pick_per_row", lambda x, idx: x.gather(1, idx), lang="zh")
    assert r.status == "raised"
    fig = figure(r)
    titles = [t.get_text() for t in fig.texts]  # a panel's title; its cells are the axes' texts
    assert titles[-1] == "yours" and [t.get_text() for t in fig.axes[-1].texts] == ["RuntimeError"]
    assert any(t.startswith("expected") for t in titles)


def test_the_allowed_list_names_each_operation_once():
    """rank and inverse_perm add "scatter" to a page base that holds it: the list printed it twice."""
    for lang in ("en", "zh"):
        group, sep = (table(lang)["checker"][k] for k in ("guard.group", "guard.sep"))
        for name in names():
            ex = get(name)
            if not ex.allowed:
                continue
            parts = _allowed(ex.allowed, lang).split(sep)
            assert len(parts) == len(set(parts)), (lang, name, parts)
            for key, ops in GROUPS.items():  # a group's members are not listed again on their own
                if key in ex.allowed:
                    assert not set(ops) & set(parts), (lang, name, key)
        rank = _allowed(get("puzzles.rank").allowed, lang)
        scatter = group.format(name=table(lang)["practice"]["groups"]["scatter"], ops=" ".join(GROUPS["scatter"]))
        assert rank.count(scatter) == 1 and rank.count("scatter_add") == 1, rank


def test_a_puzzles_failure_is_numbered_as_its_pass_counts():
    """A passing puzzle says "right on 4 edge cases and 20 cases hypothesis drew"; a failure said
    "case 5 of 5 failed" for the drawn one (issue 35): an edge case is an edge case of the 4, the
    drawn one says so. A chapter exercise's cases are numbered as before."""
    r = run_check("puzzles.pick_per_row", lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(), lang="en")
    n = len(get("puzzles.pick_per_row").edge_cases)
    assert r.message.startswith(f"✘ puzzles.pick_per_row: edge case {r.case} of {n} failed\n"), r.message
    zh = run_check("puzzles.pick_per_row", lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(), lang="zh")
    assert zh.message.startswith(f"✘ puzzles.pick_per_row：第 {r.case} 个边界用例（共 {n} 个）未通过\n"), zh.message
    r = run_check("ch1.pick_per_row", lambda x, idx: x.gather(1, idx.unsqueeze(1)), lang="en")
    assert r.message.startswith(f"✘ ch1.pick_per_row: case 1 of {r.n_cases} failed\n"), r.message


def test_a_negative_zero_is_printed_and_drawn_as_zero():
    """pick_per_token's worked example holds -0.0 (`-coded(...) / 100`): its printout and its
    pictures showed "-0.0" (issue 35). The values compared keep their sign; only the text drops it."""
    from gatherbook.exercises import show
    from gatherbook.exercises.messages import scalar

    assert [scalar(v) for v in (-0.0, 0.0, -0.00001, -0.5, 1.25)] == ["0.0", "0.0", "0.0", "-0.5", "1.25"]
    lp = get("puzzles.pick_per_token").edge_cases[0][0]
    assert str(lp[0, 0, 0].item()) == "-0.0", "the case still holds a negative zero"
    r = run_check("puzzles.pick_per_token", lambda lp, ids: lp.gather(2, ids.unsqueeze(2)), lang="en")
    assert r.case == 1 and "-0.0," not in r.message and "-0.0 " not in r.message, r.message
    assert "[[  0.0, -0.01" in r.message.replace("[[[", "[["), r.message
    for fig in (show("puzzles.pick_per_token"), figure(r)):
        cells = [t.get_text() for ax in fig.axes for t in ax.texts] + [t.get_text() for t in fig.texts]
        assert "0.0" in cells and "-0.0" not in cells, cells
