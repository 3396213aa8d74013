"""Each check runs the answer apart from the session and reports what really went wrong."""
from __future__ import annotations

import dataclasses
import sys
import time

import pytest
import torch

from gatherbook import exercises
from gatherbook.exercises import check, get, run_check
from gatherbook.exercises.checker import run


def _pick(x, idx):
    return x.gather(1, idx.unsqueeze(1)).squeeze(1)


def test_an_answer_that_turns_autograd_off_leaves_it_on_for_the_next_check():
    def answer(logits, ids):
        torch.set_grad_enabled(False)
        return logits.log_softmax(-1).gather(-1, ids)

    assert not run_check("ch2.candidate_logprobs", answer, lang="en").passed
    assert torch.is_grad_enabled()
    assert run_check("ch2.candidate_logprobs", get("ch2.candidate_logprobs").reference, lang="en").passed


def test_default_dtype_deterministic_flag_and_rng_are_restored():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)

    def answer(x, idx):
        torch.set_default_dtype(torch.float64)
        torch.use_deterministic_algorithms(True)
        torch.rand(100)
        return _pick(x, idx)

    assert run_check("ch1.pick_per_row", answer, lang="en").passed
    assert torch.get_default_dtype() == torch.float32
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.equal(torch.rand(3), expected)


def test_a_session_without_autograd_still_checks_gradients():
    with torch.no_grad():
        assert run_check("ch2.candidate_logprobs", get("ch2.candidate_logprobs").reference, lang="en").passed
        assert not torch.is_grad_enabled()


def test_prints_are_captured_and_summarised(capsys):
    def chatty(x, idx):
        for i in range(500):
            print("row", i)
        return _pick(x, idx)

    check("ch1.pick_per_row", chatty, lang="en")
    out = capsys.readouterr().out.splitlines()
    assert len(out) < 10, out[:12]
    assert out[0].startswith("your function printed") and "| row 0" in out[1]
    assert out[-1].startswith("✔ ch1.pick_per_row")
    r = run_check("ch1.pick_per_row", chatty, lang="zh")
    assert r.n_printed >= 500 and r.message.startswith("你的函数在检查期间打印了")


def test_a_check_that_runs_too_long_is_stopped_with_a_clear_message():
    def slow(x, idx):
        while True:
            time.sleep(0.01)

    ex = dataclasses.replace(get("ch1.pick_per_row"), time_limit=0.3)
    started = time.monotonic()
    r = run(ex, slow)
    assert time.monotonic() - started < 5
    assert (r.status, r.case) == ("timeout", 1)
    text = exercises.messages.render(r, ex, "en")
    assert "stopped after 0.3 s on case 1" in text and "too long" in text


def test_an_answer_that_swallows_every_exception_is_stopped_too():
    """A bare ``except:`` catches the time-up exception; the reader's next line raises it again."""
    def stubborn(x, idx):
        while True:
            try:
                time.sleep(0.01)
            except:  # noqa: E722 - the point of the test
                pass

    ex = dataclasses.replace(get("ch1.pick_per_row"), time_limit=0.3)
    started = time.monotonic()
    r = run(ex, stubborn)
    assert time.monotonic() - started < 5 and (r.status, r.case) == ("timeout", 1)
    assert sys.gettrace() is None or sys.gettrace() is not None and "stop_readers" not in repr(sys.gettrace())
    assert run_check("ch1.pick_per_row", get("ch1.pick_per_row").reference, lang="en").passed  # the next check runs


def test_not_implemented_from_inside_torch_is_an_error_not_a_stub():
    def sparse(x, idx):
        return x.to_sparse().gather(1, idx.unsqueeze(1)).squeeze(1)

    r = run_check("ch1.pick_per_row", sparse, lang="en")
    assert (r.status, r.kind) == ("raised", "exception"), r.message
    assert "NotImplementedError" in r.message


def test_the_stub_says_to_run_its_cell_first():
    def pick_per_row(x, idx):
        """The stub."""
        raise NotImplementedError  # your code here

    r = run_check("ch1.pick_per_row", pick_per_row, lang="en")
    assert r.status == "not_attempted"
    assert "run the cell that defines it first" in r.message


def test_an_input_changed_in_place_is_named_before_any_backward():
    def in_place(logits, ids):
        logits.sub_(logits.logsumexp(-1, keepdim=True))
        return logits.gather(-1, ids)

    r = run_check("ch2.candidate_logprobs", in_place, lang="en")
    assert (r.status, r.kind, r.facts.get("arg")) == ("failed", "mutated_input", "logits"), r.message
    assert "changed its input `logits` in place" in r.message


def test_a_result_on_the_meta_device_is_named_as_such():
    r = run_check("ch1.pick_per_row", lambda x, idx: _pick(x, idx).to("meta"), lang="en")
    assert (r.status, r.kind, r.facts["got"]) == ("failed", "device", "meta"), r.message
    assert "returned a tensor on meta" in r.message


def test_a_result_that_is_the_callers_tensor_is_named():
    ex = get("ch4.mask_and_restore")
    keep_all = next(c for c in ex.cases() if c[2] == c[0].shape[1])

    def lazy(x, noise, keep):
        return x if keep == x.shape[1] else ex.reference(x, noise, keep)

    assert torch.equal(lazy(*keep_all), ex.reference(*keep_all))
    r = run_check(ex.name, lazy, lang="en")
    assert (r.kind, r.hint_key) == ("aliased", "generic.aliased"), r.message


def test_an_answer_that_keeps_state_between_calls_is_named():
    seen = []

    def counting(x, idx):
        seen.append(1)
        return _pick(x, idx) * (2 if len(seen) > 14 and len(seen) % 2 == 0 else 1)  # changes when called again

    r = run_check("ch1.pick_per_row", counting, lang="en")
    assert (r.kind, r.hint_key) == ("second_call", "generic.second_call"), r.message


def test_a_hint_needs_the_mistake_on_every_case():
    ex = get("ch1.pick_per_row")
    wrong_dim = ex.mistake("wrong_dim").fn

    def once(x, idx):  # the wrong-dim answer on the first case only, another slip after
        return wrong_dim(x, idx) if x.shape == (3, 5) else _pick(x, idx) + 1

    r = run_check(ex.name, once, lang="en")
    assert not r.passed and r.hint_key != "wrong_dim", r.message
    assert run_check(ex.name, wrong_dim, lang="en").hint_key == "wrong_dim"


def test_a_replaced_comparison_is_noticed_by_the_next_check(monkeypatch):
    from gatherbook.exercises import checker

    monkeypatch.setattr(checker, "_compare", lambda ex, expected, got: (None, {}, None))  # "everything is right"
    with pytest.raises(RuntimeError, match=r"checker\._compare is not the book's\): restart the kernel"):
        run_check("ch1.pick_per_row", lambda x, idx: x, lang="en")
    with pytest.raises(RuntimeError, match="重启内核"):
        run_check("ch1.pick_per_row", lambda x, idx: x, lang="zh")


def test_an_answer_cannot_read_its_reference_through_the_book():
    def peeking(x, idx):
        return get("ch1.pick_per_row").reference(x, idx)

    r = run_check("ch1.pick_per_row", peeking, lang="en")
    assert (r.status, r.kind) == ("raised", "exception") and "from inside the answer" in r.message, r.message


# --- the answer runs apart from the check (issue 39) ------------------------------------------

def _expected_from(objects):
    """What an answer that pries would use: a check's run (it holds the reference and the cases)."""
    for v in objects:
        if hasattr(v, "ex") and hasattr(v, "cases") and hasattr(v, "k"):
            return v
    return None


def _through_frames(x, idx):
    frame, seen = sys._getframe(), []
    while frame is not None:
        seen += list(frame.f_locals.values())
        frame = frame.f_back
    run_ = _expected_from(seen)
    return run_.ex.reference(x, idx) if run_ else x[:, 0]


def _through_inspect(x, idx):
    import inspect
    run_ = _expected_from([v for info in inspect.stack() for v in info.frame.f_locals.values()])
    return run_.ex.reference(x, idx) if run_ else x[:, 0]


def _through_gc(x, idx):
    import gc
    run_ = _expected_from(o for o in gc.get_objects() if type(o).__name__ == "_Run")
    return run_.ex.reference(x, idx) if run_ else x[:, 0]


def _through_referrers(x, idx):
    import gc
    run_ = _expected_from(r for o in gc.get_referrers(x) for r in (o, *gc.get_referrers(o)))
    return run_.ex.reference(x, idx) if run_ else x[:, 0]


def _through_other_threads(x, idx):
    frames = list(sys._current_frames().values())
    seen = []
    for frame in frames:
        while frame is not None:
            seen += list(frame.f_locals.values())
            frame = frame.f_back
    run_ = _expected_from(seen)
    return run_.ex.reference(x, idx) if run_ else x[:, 0]


@pytest.mark.parametrize("answer", [_through_frames, _through_inspect, _through_gc, _through_referrers,
                                    _through_other_threads])
def test_the_check_is_not_reachable_from_the_answer(answer):
    """The answer runs on a thread of its own: its frames lead back to the thread's start, not to
    the check holding the cases and the reference; gc and the other threads' frames refuse."""
    r = run_check("ch1.pick_per_row", answer, lang="en")
    assert not r.passed, r.message
    if answer in (_through_gc, _through_referrers, _through_other_threads):
        assert (r.status, r.kind) == ("raised", "exception") and "looked into the check" in r.message, r.message
        assert "窥探" in run_check("ch1.pick_per_row", answer, lang="zh").message


def test_the_answer_runs_with_the_sessions_grad_mode_and_its_own_thread():
    import threading
    seen = []

    def answer(x, idx):
        seen.append((threading.current_thread() is threading.main_thread(), torch.is_grad_enabled()))
        return _pick(x, idx)

    assert run_check("ch1.pick_per_row", answer, lang="en").passed
    assert seen and all(not main and grad for main, grad in seen)


@pytest.mark.parametrize("name, value", [
    ("is_readers", lambda filename: False),          # nothing traced: loops in helpers unseen
    ("TAMPER", frozenset()),                          # DisableTorchFunction no longer named
    ("GROUPS", {}),                                   # a table replaced
])
def test_a_replaced_part_of_the_guard_is_noticed_by_the_next_check(monkeypatch, name, value):
    from gatherbook.exercises import guard

    monkeypatch.setattr(guard, name, value)
    with pytest.raises(RuntimeError, match=rf"guard\.{name} is not the book's"):
        run_check("puzzles.reverse", lambda x: x.flip(0), lang="en")


def test_a_guard_table_changed_in_place_is_noticed(monkeypatch):
    from gatherbook.exercises import guard

    monkeypatch.setitem(guard.ALIASES, "flip", "gather")  # "flip is gather"
    with pytest.raises(RuntimeError, match=r"guard\.ALIASES is not the book's"):
        run_check("puzzles.reverse", lambda x: x.flip(0), lang="en")
