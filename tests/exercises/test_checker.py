"""What the checker notices beyond wrong values, each with the wrong answers readers write.

Inputs changed in place, results cut out of the autograd graph (or kept in it where they must
not be), tensors created without ``device=``, answers that are not chunked, a
``NotImplementedError`` that is not the stub's, hints that follow the evidence, and the cases
that make the classic slips visible (float inputs with negative values, a softmax that
underflows, size-1 dims that a bare ``squeeze()`` removes). Right answers written other ways
still pass.
"""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gatherbook.exercises import get, names, run_check  # noqa: E402
from gatherbook.runtime import LANGUAGES  # noqa: E402

LOGPROB_EXERCISES = ["ch2.candidate_logprobs", "ch2.tempered_logprobs", "ch2.sequence_logprob",
                     "ch2.completion_logprob", "ch2.chunked_logprobs"]


def _lp(logits, ids):
    return logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


def _record(name, fn):
    """The record of ``fn``, the same in every language (checked here on the way)."""
    results = [run_check(name, fn, lang=lang) for lang in LANGUAGES]
    assert all(r.record() == results[0].record() for r in results)
    return results[0]


# --- inputs changed in place ------------------------------------------------------------------

def _unsqueeze_in_place(x, idx):
    return x.gather(1, idx.unsqueeze_(1)).squeeze(1)


def _scatter_into_input(x, idx):
    out = x.gather(1, idx.unsqueeze(1)).squeeze(1)
    x.scatter_(1, idx.unsqueeze(1), 0)  # "mark the cells read", in the caller's tensor
    return out


def _labels_overwritten(logits, labels):
    targets = labels[:, 1:]
    mask = targets != -100
    targets[~mask] = 0  # a view of labels: writes into the caller's tensor
    return (_lp(logits[:, :-1], targets) * mask).sum(-1)


@pytest.mark.parametrize("name,fn,arg", [
    ("ch1.pick_per_row", _unsqueeze_in_place, "idx"),
    ("ch1.pick_per_row", _scatter_into_input, "x"),
    ("ch2.sequence_logprob", _labels_overwritten, "labels"),
    ("ch2.importance_ratio", lambda new, old: new.sub_(old).exp_(), "new_logp"),
])
def test_an_answer_that_changes_its_inputs_is_told_so(name, fn, arg):
    r = _record(name, fn)
    assert (r.status, r.kind, r.facts, r.hint_key) == ("failed", "mutated_input", {"arg": arg},
                                                        "generic.mutated_input"), r.message
    assert f"changed its input `{arg}` in place" in r.message
    assert f"原地修改了输入 `{arg}`" in run_check(name, fn, lang="zh").message


# --- gradients ----------------------------------------------------------------------------------

def _cand(logits, candidates):  # ch2.candidate_logprobs: K ids per position, (B, L, K)
    return logits.log_softmax(-1).gather(-1, candidates)


def _rebuilt_from_items(logits, candidates):
    return torch.tensor(_cand(logits, candidates).tolist())


def _under_no_grad(logits, candidates):
    with torch.no_grad():
        return _cand(logits, candidates)


def _normaliser_detached(logits, candidates):
    return logits.gather(-1, candidates) - logits.logsumexp(-1, keepdim=True).detach()


@pytest.mark.parametrize("fn", [_under_no_grad, lambda x, c: _cand(x, c).detach(), _rebuilt_from_items])
def test_a_trained_through_result_without_gradient_fails(fn):
    r = _record("ch2.candidate_logprobs", fn)
    assert (r.kind, r.hint_key) == ("no_grad", "generic.no_grad"), r.message
    assert "`.detach()`" in r.message


def test_a_gradient_that_differs_from_the_reference_fails():
    r = _record("ch2.candidate_logprobs", _normaliser_detached)
    assert (r.case, r.kind, r.hint_key) == (1, "grad", "generic.grad"), r.message
    assert r.facts["arg"] == "logits" and "gradient with respect to `logits`" in r.message
    # the ratio: its gradient flows through new_logp (the chapter stores old_logp under no_grad)
    r = _record("ch2.importance_ratio", lambda new, old: torch.exp(new - old).detach() + (new - new.detach()))
    assert (r.kind, r.facts["arg"]) == ("grad", "new_logp"), r.message


def test_gradients_of_right_answers_written_other_ways_agree():
    assert _record("ch2.candidate_logprobs", lambda x, c: (x - x.logsumexp(-1, keepdim=True)).gather(-1, c)).passed
    assert _record("ch2.importance_ratio", lambda new, old: new.exp() * (-old).exp()).status == "failed"
    assert _record("ch2.importance_ratio", lambda new, old: (new - old).exp()).passed


# --- devices --------------------------------------------------------------------------------------

def _completion(logits, ids, prompt_len, length, device):
    t = torch.arange(1, ids.shape[1], device=device)
    mask = (t >= prompt_len[:, None]) & (t < length[:, None])
    return (_lp(logits[:, :-1], ids[:, 1:]) * mask).sum(-1)


def test_tensors_created_without_device_are_caught_on_the_cpu():
    name = "ch2.completion_logprob"
    assert _record(name, lambda x, ids, p, n: _completion(x, ids, p, n, ids.device)).passed
    r = _record(name, lambda x, ids, p, n: _completion(x, ids, p, n, None))
    assert (r.case, r.kind, r.hint_key, r.facts["how"]) == (1, "device", "generic.device", "raised"), r.message
    assert "meta" in r.message and "device=x.device" in r.message
    r = _record("ch1.pick_per_row", lambda x, idx: x.gather(1, idx[:, None])[:, 0]
                + torch.zeros(len(idx), dtype=x.dtype))
    assert r.kind == "device", r.message


def _rank_row_by_row(x):  # right for B >= 1; torch.stack([]) raises on an empty batch
    return torch.stack([(x[b].unsqueeze(1) > x[b].unsqueeze(0)).sum(1) for b in range(x.shape[0])])


def _penalty_one_hot(logits, history, alpha, beta):  # one_hot is not allowed, and -1 makes it raise
    count = F.one_hot(history, logits.shape[1]).sum(1)
    return logits - alpha * count - beta * (count > 0)


@pytest.mark.parametrize("name,fn,how,op", [
    ("puzzles.rank", _rank_row_by_row, "loop", "for"),
    ("puzzles.frequency_penalty", _penalty_one_hot, "op", "F.one_hot"),
])
def test_an_answer_the_rule_refuses_is_told_so_before_the_error_it_raises(name, fn, how, op):
    """A trial learner's loop over B crashed on an empty batch and was told only torch's error;
    the loop rule fired once they fixed that. Both are wrong: the rule is named first."""
    r = _record(name, fn)
    assert (r.kind, r.facts["rule"], r.facts["how"], r.facts["op"]) == ("rule", "allowed_ops", how, op), r.message
    assert "stack expects" not in r.message and "non-negative" not in r.message


def test_answers_the_meta_device_cannot_run_are_not_blamed():
    def loop(x, idx):  # .item() has no value on meta: not a device error
        out = x.new_zeros(len(idx))
        for i in range(len(idx)):
            out[i] = x[i, int(idx[i])]
        return out

    assert _record("ch1.pick_per_row", loop).passed
    cat = _record("ch2.candidate_logprobs", lambda x, c: torch.distributions.Categorical(logits=x[..., None, :]).log_prob(c))
    assert cat.passed, cat.message


def test_every_reference_runs_on_the_meta_device():
    from gatherbook.exercises.checker import _on_meta

    for name in names():
        ex = get(name)
        assert _on_meta(ex.reference, ex.cases()[0]) is None, name


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_the_meta_probe_agrees_with_a_gpu():
    case = [a.cuda() for a in get("ch2.completion_logprob").cases()[0]]
    with pytest.raises(RuntimeError, match="same device"):
        _completion(*case, None)
    assert _completion(*case, case[0].device).device.type == "cuda"


# --- chunks ---------------------------------------------------------------------------------------

def _by_chunks(logits, ids, pieces):
    return torch.cat([x.gather(-1, y.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(x, -1)
                      for x, y in zip(*pieces(logits, ids))])


def test_the_chunked_exercise_checks_the_chunks():
    name = "ch2.chunked_logprobs"
    one_liner = _record(name, _lp)
    assert (one_liner.kind, one_liner.facts["rows"], one_liner.facts["limit"]) == ("not_chunked", 6, 4)
    four_chunks = _record(name, lambda x, y: _by_chunks(x, y, lambda a, b: (torch.chunk(a, 4), torch.chunk(b, 4))))
    assert (four_chunks.kind, four_chunks.facts["rows"]) == ("not_chunked", 6), four_chunks.message
    assert four_chunks.inputs[0].shape[0] == 21 and "`torch.chunk(x, n)` makes n chunks" in four_chunks.message
    assert _record(name, lambda x, y: _by_chunks(x, y, lambda a, b: (a.split(4), b.split(4)))).passed
    assert _record(name, lambda x, y: _by_chunks(x, y, lambda a, b: (a.split(2), b.split(2)))).passed
    r = _record(name, lambda x, y: _by_chunks(x, y, lambda a, b: (a.split(5), b.split(5))))
    assert r.kind == "not_chunked" and r.facts["rows"] == 5


def test_the_chunked_exercise_rejects_an_overflowing_logsumexp():
    r = _record("ch2.chunked_logprobs", get("ch2.chunked_logprobs").mistakes[1].fn)
    assert (r.kind, r.hint_key) == ("values", "naive_logsumexp") and "inf" in r.message
    assert r.inputs[0].abs().max() > 88


# --- not attempted means the stub --------------------------------------------------------------

def test_not_implemented_from_torch_or_another_function_is_an_error():
    def unfinished_helper(x):
        raise NotImplementedError

    r = _record("ch1.pick_per_row", lambda x, idx: unfinished_helper(x))
    assert (r.status, r.kind, r.attempted) == ("raised", "exception", True), r.message
    r = _record("ch1.pick_per_row", lambda x, idx: torch.nn.Module()(x))
    assert (r.status, r.kind) == ("raised", "exception") and "forward" in r.message

    def stub(x, idx):
        raise NotImplementedError  # your code here

    assert _record("ch1.pick_per_row", stub).status == "not_attempted"


# --- hints follow the evidence --------------------------------------------------------------------

def test_a_transposed_result_is_not_told_about_size_one_dims():
    r = _record("ch1.pick_k_per_row", lambda x, idx: x.gather(1, idx).T)
    assert r.kind == "shape" and r.hint_key in ("transposed", "generic.transposed"), r.message
    assert "unsqueeze" not in r.message.split("likely mistake:")[1]
    r = _record("ch1.unshuffle", lambda s, p: s.gather(1, p.argsort(1)).T)
    assert (r.kind, r.hint_key) == ("shape", "generic.transposed"), r.message


def test_the_dtype_hint_does_not_name_gather_where_there_is_none():
    r = _record("ch2.importance_ratio", lambda new, old: torch.exp(new - old).double())
    assert (r.kind, r.hint_key) == ("dtype", "generic.dtype") and "gather" not in r.message


def test_a_returned_tuple_is_not_told_about_tolist():
    r = _record("ch1.unshuffle", lambda s, p: s.gather(1, p.argsort(1)).sort(1))
    assert (r.kind, r.hint_key) == ("type", "generic.tuple") and "tolist" not in r.message


# --- the cases make the slips visible ---------------------------------------------------------------

def _loop_into_zeros_like_idx(x, idx):
    out = torch.zeros_like(idx)
    for i in range(len(idx)):
        out[i] = x[i, idx[i]]
    return out


def test_integer_exercises_are_tried_on_negative_floats():
    r = _record("ch1.pick_per_row", _loop_into_zeros_like_idx)
    assert (r.kind, r.hint_key) == ("dtype", "generic.dtype") and "zeros_like(idx)" in r.message
    r = _record("ch1.pick_per_row", lambda x, idx: (x * F.one_hot(idx, x.shape[1])).max(1).values)
    assert r.kind == "values" and r.inputs[0].dtype == torch.float32 and (r.inputs[0] < 0).all()
    for name in ("ch1.pick_per_row", "ch1.pick_per_column", "ch1.pick_k_per_row", "ch1.pick_step_per_feature"):
        assert any(c[0].is_floating_point() and (c[0] < 0).any() for c in get(name).edge_cases), name


@pytest.mark.parametrize("name", LOGPROB_EXERCISES)
def test_softmax_then_log_fails_in_every_log_prob_exercise(name):
    reference = get(name).reference  # read before the check (an answer may not read it)

    def log_of_softmax(*args):
        original = torch.Tensor.log_softmax
        try:  # the reference, with log_softmax(x) replaced by softmax(x).log()
            torch.Tensor.log_softmax = lambda t, dim: t.softmax(dim).log()
            return reference(*args)
        finally:
            torch.Tensor.log_softmax = original

    if name == "ch2.chunked_logprobs":  # no log_softmax there: its naive normaliser overflows
        log_of_softmax = get(name).mistakes[1].fn
    r = run_check(name, log_of_softmax, lang="en")
    assert not r.passed and r.kind == "values", r.message


def test_ratios_of_probabilities_underflow():
    r = _record("ch2.importance_ratio", lambda new, old: new.exp() / old.exp())
    assert (r.kind, r.hint_key) == ("values", "divided_probabilities") and "nan" in r.message


@pytest.mark.parametrize("name", ["ch2.sequence_logprob", "ch2.completion_logprob"])
def test_a_bare_squeeze_before_the_sum_fails(name):
    r = _record(name, next(m.fn for m in get(name).mistakes if m.key == "bare_squeeze"))
    assert r.hint_key == "bare_squeeze" and r.inputs[0].shape[0] > 1 and r.inputs[0].shape[1] == 2


def test_a_bare_squeeze_of_token_log_probs_fails_with_b_gt_1_and_l_1():
    r = _record("ch2.candidate_logprobs", lambda x, c: x.log_softmax(-1).gather(-1, c).squeeze())
    assert r.kind == "shape" and r.hint_key == "generic.size_one"
    assert any(c[0].shape[0] > 1 and c[0].shape[1] == 1 for c in get("ch2.candidate_logprobs").edge_cases)


@pytest.mark.parametrize("name", ["ch1.pick_per_row", "ch2.candidate_logprobs", "ch2.tempered_logprobs"])
def test_one_hot_without_num_classes_fails_on_a_fixed_case(name):
    def one_hot(x, ids, *temperature):
        if name == "ch2.tempered_logprobs":
            return ((x[:, :-1] / temperature[0]).log_softmax(-1) * F.one_hot(ids[:, 1:])).sum(-1)
        if name == "ch2.candidate_logprobs":
            return (x.log_softmax(-1)[..., None, :] * F.one_hot(ids)).sum(-1)
        return (x * F.one_hot(ids)).sum(-1)

    r = run_check(name, one_hot, lang="en")
    assert not r.passed and r.case <= len(get(name).edge_cases), r.message


# --- right answers written other ways -----------------------------------------------------------

def test_correct_alternatives_still_pass():
    answers = {
        "ch1.pick_per_row": [
            lambda x, idx: x[torch.arange(len(idx)), idx],
            lambda x, idx: torch.take_along_dim(x, idx[:, None], 1)[:, 0],
            lambda x, idx: (x * F.one_hot(idx, x.shape[1])).sum(1),
            lambda x, idx: torch.stack([x[i, idx[i]] for i in range(len(idx))]),
        ],
        "ch1.pick_step_per_feature": [lambda x, s: x[torch.arange(len(s))[:, None], s, torch.arange(x.shape[2])]],
        "ch2.candidate_logprobs": [
            lambda x, c: torch.stack([-F.cross_entropy(x.transpose(1, 2), c[..., k], reduction="none")
                                      for k in range(c.shape[-1])], dim=-1),
            lambda x, c: torch.distributions.Categorical(logits=x[..., None, :]).log_prob(c),
            lambda x, c: torch.take_along_dim(x.log_softmax(-1), c, -1),
        ],
        "ch2.chunked_logprobs": [
            lambda x, y: torch.stack([row[i] - torch.logsumexp(row, 0) for row, i in zip(x, y)]),
        ],
    }
    for name, fns in answers.items():
        for fn in fns:
            r = run_check(name, fn, lang="en")
            assert r.passed, r.message
