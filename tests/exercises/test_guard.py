"""The operations guard (gatherbook/exercises/guard.py), through the check of a puzzle that allows
a few operations: forbidden calls, tensor indices, values taken into Python, Python loops and call
limits are named with the allowed list, in both languages."""
from __future__ import annotations

import pytest
import torch

from gatherbook.exercises import get, run_check
from gatherbook.exercises.words import table


@pytest.mark.parametrize("answer, op", [
    (lambda x, idx: torch.take_along_dim(x, idx.unsqueeze(1), 1).squeeze(1), "take_along_dim"),
    (lambda x, idx: x[torch.arange(x.shape[0]), idx], "x[tensor]"),
    (lambda x, idx: x.gather(1, idx.unsqueeze(1)).flip(0).flip(0).squeeze(1), "flip"),
    (lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(1) + idx.sum() * 0, "sum"),
    (lambda x, idx: x.gather(1, idx.unsqueeze(1)).squeeze(1) + int(idx.sum().item()) * 0, "sum"),
])
def test_guard_rejects_forbidden_calls(answer, op):
    r = run_check("puzzles.pick_per_row", answer, lang="en")
    assert r.status == "failed" and r.kind == "rule", r
    assert r.facts["op"] == op
    assert f"`{op}`" in r.message and "allowed: gather; arithmetic " in r.message


def test_guard_rejects_values_taken_into_python():
    r = run_check("puzzles.reverse", lambda x: torch.tensor(x.tolist()[::-1], dtype=x.dtype), lang="en")
    assert r.kind == "rule" and r.facts["op"] == "tolist"


def test_guard_names_the_call_and_the_allowed_list_in_both_languages():
    answer = lambda x: x.flip(0)  # noqa: E731
    en = run_check("puzzles.reverse", answer, lang="en").message
    zh = run_check("puzzles.reverse", answer, lang="zh").message
    assert "`flip`" in en and "allowed: gather; arithmetic " in en
    assert "`flip`" in zh and "允许使用：gather；算术 " in zh


def test_guard_rejects_a_python_loop():
    def pick_per_row(x, idx):
        out = torch.zeros(x.shape[0], dtype=x.dtype)
        for i in range(x.shape[0]):
            out[i] = x[i].gather(0, idx[i:i + 1])[0]
        return out
    r = run_check("puzzles.pick_per_row", pick_per_row, lang="en")
    assert r.kind == "rule" and r.facts["op"] == "for" and "Python loop" in r.message


def test_a_loop_is_named_even_when_its_first_pass_breaks_another_rule():
    """`x[i, idx[i]]` (a tensor index) and `int(n)` would stop the first pass; the loop is named."""
    def pick_per_row(x, idx):
        out = torch.zeros(x.shape[0], dtype=x.dtype)
        for i in range(x.shape[0]):
            out[i] = x[i, idx[i]]
        return out
    for fn in (pick_per_row, get("puzzles.pick_per_row").spec, get("puzzles.right_to_left").spec,
               lambda x, idx: torch.cat([x[i].gather(0, idx[i:i + 1]) for i in range(x.shape[0])]
                                         + [x.new_zeros(0)])):
        name = "puzzles.right_to_left" if fn is get("puzzles.right_to_left").spec else "puzzles.pick_per_row"
        r = run_check(name, fn, lang="en")
        assert r.kind == "rule" and r.facts["op"] == "for" and "Python loop" in r.message, r.message


def test_an_expression_over_several_lines_is_not_a_loop():
    def pick_per_row(x, idx):
        return x.gather(
            1,
            idx.unsqueeze(1),
        ).squeeze(
            1)
    assert run_check("puzzles.pick_per_row", pick_per_row, lang="en").passed


def test_call_limit():
    r = run_check("puzzles.rank", lambda x: x.argsort(1).argsort(1), lang="en")
    assert r.kind == "rule" and r.facts["op"] == "argsort" and "1 call" in r.message


# --- every way round the rule that held-out answers found (issue 35) ----------------------------

def _rows_with_a_loop(x, idx):  # a helper "from another cell": a function of the reader's the answer calls
    out = x.new_zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i].gather(0, idx[i:i + 1])[0]
    return out


def _rows_by_recursion(x, idx, i=0):
    if i == x.shape[0]:
        return x.new_zeros(0)
    return torch.cat([x[i].gather(0, idx[i:i + 1]), _rows_by_recursion(x, idx, i + 1)])


def _flip_without_the_guard(x):
    with torch._C.DisableTorchFunction():
        return x.flip(0)


def _flip_without_subclasses(x):
    with torch._C.DisableTorchFunctionSubclass():
        return x.flip(0)


def _flip_with_the_guard_spelled_apart(x):
    with getattr(torch._C, "Disable" + "TorchFunction")():
        return x.flip(0)


def _flip_with_the_mode_stack_popped(x):
    c = torch._C
    mode = getattr(c, "_pop_" + "torch_function_stack")() if c._len_torch_function_stack() else None
    out = x.flip(0)
    if mode is not None:
        getattr(c, "_push_on_" + "torch_function_stack")(mode)
    return out


def _flip_caught(x):
    try:
        return x.flip(0)
    except Exception:  # the guard's exception, caught: the answer goes on
        return x.gather(0, (x.shape[0] - 1 - torch.arange(x.shape[0], device=x.device)))


def _numpy(how):
    import numpy as np
    take = {"from_dlpack": np.from_dlpack, "asarray": np.asarray, "numpy": lambda t: t.numpy()}[how]
    return lambda x: torch.from_numpy(take(x)[::-1].copy())


@pytest.mark.parametrize("name, answer, how, op", [
    ("puzzles.diagonal", lambda x: x[range(x.shape[0]), range(x.shape[0])], "index_list", "x[list]"),
    ("puzzles.reverse", lambda x: x[list(range(x.shape[0] - 1, -1, -1))], "index_list", "x[list]"),
    ("puzzles.pick_per_row", lambda x, idx: torch.cat(
        [x.new_zeros(0)] + list(map(lambda i: x[i].gather(0, idx[i:i + 1]), range(x.shape[0])))),
     "call_loop", "<lambda>"),
    ("puzzles.pick_per_row", _rows_by_recursion, "recursion", "_rows_by_recursion"),
    ("puzzles.pick_per_row", lambda x, idx: _rows_with_a_loop(x, idx), "loop_in", "for"),
    ("puzzles.reverse", _numpy("from_dlpack"), "python", "__dlpack__"),
    ("puzzles.reverse", _numpy("asarray"), "python", "__array__"),
    ("puzzles.reverse", _numpy("numpy"), "python", "numpy"),
    ("puzzles.pick_per_row", lambda x, idx: x.gather(1, eval("torch." + repr(idx), {"torch": torch}).unsqueeze(1))
     .squeeze(1), "python", "eval"),
    ("puzzles.reverse", _flip_without_the_guard, "tamper", "DisableTorchFunction"),
    ("puzzles.reverse", _flip_without_subclasses, "tamper", "DisableTorchFunctionSubclass"),
    ("puzzles.reverse", _flip_with_the_guard_spelled_apart, "tamper", "DisableTorchFunction"),
    ("puzzles.reverse", _flip_with_the_mode_stack_popped, "tamper", "_pop_torch_function_stack"),
    ("puzzles.reverse", _flip_caught, "op", "flip"),
], ids=["range_index", "list_index", "map_lambda", "recursion", "helper_loop", "from_dlpack", "asarray",
        "numpy", "eval_str", "disable_torch_function", "disable_subclass", "disable_by_getattr",
        "popped_mode", "caught"])
def test_every_way_round_the_rule_is_named(name, answer, how, op):
    """Each of these answers has the right values (they passed before); the rule names its fault,
    in both languages, with a sentence of its own (no generic 'not allowed' for a loop)."""
    r = run_check(name, answer, lang="en")
    assert (r.status, r.kind) == ("failed", "rule"), r.message
    assert (r.facts["how"], r.facts["op"]) == (how, op), r.facts
    if how == "loop_in":
        assert r.facts["where"] == "_rows_with_a_loop" and "`_rows_with_a_loop`" in r.message
    zh = run_check(name, answer, lang="zh")
    assert zh.record() == r.record() and "允许使用：" in zh.message


def test_a_forbidden_view_is_named_as_forbidden_not_as_shared_memory():
    r = run_check("puzzles.diagonal", lambda x: x.diagonal(), lang="en")
    assert (r.kind, r.facts.get("op")) == ("rule", "diagonal"), r.message
    assert "`diagonal`" in r.message and "shares memory" not in r.message


def test_aten_ops_count_as_the_operation_they_are():
    r = run_check("puzzles.pick_per_row",
                  lambda x, idx: torch.ops.aten.gather(x, 1, idx.unsqueeze(1)).squeeze(1), lang="en")
    assert r.passed, r.message
    r = run_check("puzzles.pick_per_row",
                  lambda x, idx: torch.ops.aten.gather.default(x, 1, idx.unsqueeze(1)).squeeze(1), lang="en")
    assert r.passed, r.message


def _pick_per_row_accepted(x, idx):  # the reader's accepted answer to an earlier puzzle
    return x.gather(1, idx.unsqueeze(1)).squeeze(1)


def test_an_answer_may_call_the_readers_own_functions_under_the_same_rule():
    """Composition: a function of the reader's (an accepted answer to an earlier puzzle, a helper
    from another cell) may be called, more than once; the rule holds inside it."""
    assert run_check("puzzles.pick_per_row", _pick_per_row_accepted, lang="en").passed
    twice = lambda x, idx: _pick_per_row_accepted(x, idx) * 2 - _pick_per_row_accepted(x, idx)  # noqa: E731
    assert run_check("puzzles.pick_per_row", twice, lang="en").passed
    flipped = lambda x: _pick_per_row_accepted(x.flip(0), torch.zeros(x.shape[0], dtype=torch.int64, device=x.device))  # noqa: E731
    r = run_check("puzzles.reverse", lambda x: flipped(x.unsqueeze(1)), lang="en")
    assert (r.kind, r.facts["op"]) == ("rule", "flip"), r.message


def test_an_answer_without_any_trick_is_not_slowed_by_the_tracer():
    """Called functions, several lines, a lambda called once: no loop is seen where none is."""
    def answer(x, idx):
        col = (lambda i: i.unsqueeze(1))(idx)
        picked = _pick_per_row_accepted(x, idx)
        return x.gather(1, col).squeeze(1) * 0 + picked
    assert run_check("puzzles.pick_per_row", answer, lang="en").passed


def test_values_read_back_from_text_are_not_there_under_the_guard():
    """Printing is allowed, but under the guard a tensor's text shows no values: an answer that
    parses them back (`ast.literal_eval`, `json`, `int(...)`, no `eval` needed) is named."""
    import ast

    def parse(t):  # (torch.LongTensor(list) is not seen by a TorchFunctionMode)
        return torch.LongTensor(ast.literal_eval(repr(t)[len("tensor("):-1]) if t.numel() else [])

    answer = lambda x, idx: x.gather(1, parse(idx).unsqueeze(1)).squeeze(1)  # noqa: E731
    r = run_check("puzzles.pick_per_row", answer, lang="en")
    assert (r.kind, r.facts["how"]) == ("rule", "raised"), r.message
    assert "turned into text shows no values" in r.message
    printing = lambda x, idx: (print(idx), x.gather(1, idx.unsqueeze(1)).squeeze(1))[1]  # noqa: E731
    r = run_check("puzzles.pick_per_row", printing, lang="en")
    assert r.passed and r.printed[0].startswith("tensor([") and r.n_printed >= 4, r.printed


def test_an_operation_and_its_in_place_twin_are_one_name():
    """``index_put`` and ``index_put_`` (as a method, a torch function, an aten op), ``+`` and
    ``+=`` / ``add_``: the guard names each pair as one operation, so a puzzle lists one name."""
    from gatherbook.exercises.guard import op_name

    spellings = [torch.Tensor.index_put, torch.Tensor.index_put_, torch.index_put, torch.index_put_,
                 torch.ops.aten.index_put.default, torch.ops.aten.index_put_.default]
    assert {op_name(f) for f in spellings} == {"index_put"}
    assert {op_name(f) for f in (torch.Tensor.add, torch.Tensor.add_, torch.Tensor.__iadd__)} == {"+"}
    assert op_name(torch.Tensor.__ior__) == op_name(torch.Tensor.__or__) == "|"


def test_every_allowed_operation_may_be_written_in_place():
    """For every operation a declaration allows, its in-place twin (where torch has one) is the
    same operation to the guard: none of them is a special case of its own."""
    from gatherbook.exercises import names
    from gatherbook.exercises.guard import expand, op_name

    allowed = {op for n in names() for op in expand(get(n).allowed or ())}
    pairs = [(getattr(torch.Tensor, op), getattr(torch.Tensor, op + "_")) for op in sorted(allowed)
             if hasattr(torch.Tensor, op) and hasattr(torch.Tensor, op + "_")]
    assert len(pairs) >= 10
    assert [op_name(b) for _, b in pairs] == [op_name(a) for a, _ in pairs]


@pytest.mark.parametrize("answer", [
    lambda v, y, x, H, W: torch.zeros(H, W, device=v.device).index_put((y, x), v, accumulate=True),
    lambda v, y, x, H, W: torch.zeros(H, W, device=v.device).index_put_((y, x), v, accumulate=True),
    lambda v, y, x, H, W: torch.index_put(torch.zeros(H, W, device=v.device), (y, x), v, True),
    lambda v, y, x, H, W: torch.index_put_(torch.zeros(H, W, device=v.device), (y, x), v, True),
], ids=["index_put", "index_put_", "torch.index_put", "torch.index_put_"])
def test_splat_points_takes_index_put_in_place_or_not(answer):
    assert "index_put_" not in get("puzzles.splat_points").allowed  # one name in the list
    r = run_check("puzzles.splat_points", answer, lang="en")
    assert r.passed, r.message


def test_an_in_place_sum_is_the_sum():
    """``out += ...`` on a tensor of the answer's own is ``+`` (torch reports it as ``add_``)."""
    def pick_per_row(x, idx):
        out = x.gather(1, idx.unsqueeze(1)).squeeze(1)
        out += 0
        out *= 1
        return out
    r = run_check("puzzles.pick_per_row", pick_per_row, lang="en")
    assert r.passed, r.message


def test_a_refusal_is_headed_as_the_rule_and_says_what_was_indexed():
    """Issue 35's trial learner: `cols[None]` in leading_rows (whose Operations line takes slicing and
    None-indexing away) was headed "case 1 of 5 failed" and told "your answer calls `x[...]`"."""
    for lang, heading in (("en", "✘ puzzles.leading_rows: refused by the rule\n"),
                          ("zh", "✘ puzzles.leading_rows：答案不符合规则，未被接受\n")):
        r = run_check("puzzles.leading_rows", lambda x, cols, R: x.gather(1, cols[None].expand(R, -1)), lang=lang)
        assert (r.kind, r.facts["how"], r.facts["what"]) == ("rule", "slicing", "cols[None]"), r.message
        assert r.message.startswith(heading) and "`cols[None]`" in r.message and "x[...]" not in r.message

    def written(x, cols, R):
        out = x.new_zeros(R, cols.shape[0])
        out[:, :] = x.gather(1, cols.unsqueeze(0).expand(R, -1))
        return out

    r = run_check("puzzles.leading_rows", written, lang="en")
    assert (r.facts["how"], r.facts["what"]) == ("slice_write", "tensor[:, :]"), r.message
    r = run_check("puzzles.reverse", lambda x: x.flip(0), lang="en")  # a forbidden call: no case failed
    assert r.message.startswith("✘ puzzles.reverse: refused by the rule\n"), r.message


def test_the_allowed_list_writes_slicing_as_the_pages_do():
    for lang in ("en", "zh"):
        names = table(lang)["practice"]["op_names"]
        m = run_check("puzzles.reverse", lambda x: x.flip(0), lang=lang).message
        allowed = m.split("\n")[-1]
        assert names["x[...]"] in allowed and names["x[...] ="] in allowed and "x[...]" not in allowed, m
