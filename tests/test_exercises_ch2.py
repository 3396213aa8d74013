"""Chapter 2 exercises (token log-probs): right answers written other ways pass, the planted wrong
answers fail and are named, and the cases contain what makes the mistakes visible.

The checks common to every exercise (stub, shapes, languages ...) are in test_exercises.py.
"""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gatherbook.exercises import get, names, run_check  # noqa: E402
from gatherbook.logprobs import token_logprobs  # noqa: E402

CH2 = [n for n in names() if n.startswith("ch2.")]


def test_chapter_2_has_six_exercises():
    assert CH2 == ["ch2.pick_logprobs", "ch2.next_token_logprobs", "ch2.sequence_logprob",
                   "ch2.completion_logprob", "ch2.importance_ratio", "ch2.chunked_logprobs"]


@pytest.mark.parametrize("name,key", [
    ("ch2.next_token_logprobs", "no_shift"),             # missing shift
    ("ch2.sequence_logprob", "no_shift"),
    ("ch2.completion_logprob", "no_shift"),
    ("ch2.pick_logprobs", "raw_logits"),                # gathering raw logits
    ("ch2.next_token_logprobs", "raw_logits"),
    ("ch2.sequence_logprob", "mask_not_shifted"),        # mask cut like the logits
    ("ch2.completion_logprob", "mask_not_shifted"),
    ("ch2.sequence_logprob", "gather_sees_pad"),         # -100 reaches gather: an error, named
    ("ch2.sequence_logprob", "no_mask"),                 # dummy id without the mask
    ("ch2.chunked_logprobs", "dropped_remainder"),
    ("ch2.importance_ratio", "ratio_of_logprobs"),
    ("ch2.pick_logprobs", "no_unsqueeze"),              # gather raises: named by the same error
    ("ch2.pick_logprobs", "gather_dim1"),
    ("ch2.pick_logprobs", "softmax_then_log"),          # -inf where the probability underflows
    ("ch2.next_token_logprobs", "both_cut_at_start"),
    ("ch2.completion_logprob", "no_column"),             # prompt_len without [:, None]
    ("ch2.completion_logprob", "prompt_off_by_one"),     # t > prompt_len
    ("ch2.sequence_logprob", "summed_whole_batch"),
    ("ch2.completion_logprob", "summed_whole_batch"),
    ("ch2.chunked_logprobs", "normaliser_over_chunk"),
])
def test_planted_wrong_answers_are_named(name, key):
    m = next(m for m in get(name).mistakes if m.key == key)
    r = run_check(name, m.fn, lang="en")
    assert not r.passed and r.hint_key == key, r.message


def test_gather_on_padding_is_reported_as_the_error_it_is():
    m = next(m for m in get("ch2.sequence_logprob").mistakes if m.key == "gather_sees_pad")
    r = run_check("ch2.sequence_logprob", m.fn, lang="en")
    assert r.kind == "exception" and r.case == 1  # case 1 has padding
    assert "index -100 is out of bounds for dimension 2" in r.message


# --- right answers written another way pass -----------------------------------------------------

def test_token_and_next_token_alternatives():
    def by_indexing(logits, ids):
        B, L, _ = logits.shape
        return logits.log_softmax(-1)[torch.arange(B)[:, None], torch.arange(L), ids]

    assert run_check("ch2.pick_logprobs", by_indexing, lang="en").passed
    assert run_check("ch2.pick_logprobs", token_logprobs, lang="en").passed
    assert run_check("ch2.next_token_logprobs",
                     lambda x, ids: token_logprobs(x[:, :-1], ids[:, 1:], chunk_size=2), lang="en").passed
    # a smaller index reads a leading slice: gathering the uncut log-probs with ids[:, 1:] is right too
    assert run_check("ch2.next_token_logprobs",
                     lambda x, ids: x.log_softmax(-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1),
                     lang="en").passed


def test_sequence_logprob_alternatives():
    def with_cross_entropy(logits, labels):
        ce = F.cross_entropy(logits[:, :-1].transpose(1, 2), labels[:, 1:], ignore_index=-100, reduction="none")
        return -ce.sum(-1)

    assert run_check("ch2.sequence_logprob", with_cross_entropy, lang="en").passed
    assert run_check("ch2.sequence_logprob",
                     lambda x, y: token_logprobs(x[:, :-1], y[:, 1:], ignore_index=-100).sum(-1), lang="en").passed

    def clamp_then_where(logits, labels):
        t = labels[:, 1:]
        lp = logits[:, :-1].log_softmax(-1).gather(-1, t.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        return torch.where(t == -100, 0.0, lp).sum(-1)

    assert run_check("ch2.sequence_logprob", clamp_then_where, lang="en").passed


def test_completion_via_labels_with_minus_100():
    def via_labels(logits, ids, prompt_len, length, device=True):
        t = torch.arange(ids.shape[1], device=ids.device if device else None)
        keep = (t >= prompt_len[:, None]) & (t < length[:, None])
        labels = ids.masked_fill(~keep, -100)
        return token_logprobs(logits[:, :-1], labels[:, 1:], ignore_index=-100).sum(-1)

    assert run_check("ch2.completion_logprob", via_labels, lang="en").passed
    # the same without device=: right on the CPU, an error on a GPU
    r = run_check("ch2.completion_logprob", lambda *a: via_labels(*a, device=False), lang="en")
    assert (r.kind, r.hint_key, r.facts["how"]) == ("device", "generic.device", "raised"), r.message


def test_ratio_and_chunked_alternatives():
    assert run_check("ch2.importance_ratio", lambda new, old: new.exp() / old.exp(), lang="en").passed
    assert run_check("ch2.chunked_logprobs",
                     lambda x, y: token_logprobs(x, y, chunk_size=4), lang="en").passed

    def rows_one_by_one(logits, ids):
        return torch.stack([row[i] - torch.logsumexp(row, 0) for row, i in zip(logits, ids)])

    assert run_check("ch2.chunked_logprobs", rows_one_by_one, lang="en").passed


# --- the cases hold what the mistakes need ---------------------------------------------------------

def test_sequence_cases_have_padding_and_an_empty_row():
    labels = [c[1] for c in get("ch2.sequence_logprob").cases()]
    assert any(((row == -100).sum() >= 2) for lab in labels for row in lab)
    assert any((row[1:] == -100).all() for lab in labels for row in lab)
    assert any(not (lab == -100).any() for lab in labels)
    for lab in labels:  # padding only at the end of a row
        for row in lab:
            pad = (row == -100).int()
            assert torch.equal(pad, pad.sort().values)


def test_completion_cases_are_consistent():
    for logits, ids, p, n in get("ch2.completion_logprob").cases():
        L = ids.shape[1]
        assert ((1 <= p) & (p < n) & (n <= L)).all()
        assert (ids[torch.arange(L) >= n[:, None]] == 0).all()
    assert any((n < c[1].shape[1]).any() for c in get("ch2.completion_logprob").cases() for n in [c[3]])
    assert any(((n - p) == 1).any() for _, _, p, n in get("ch2.completion_logprob").cases())


def test_chunked_cases_include_partial_chunks():
    sizes = [c[0].shape[0] for c in get("ch2.chunked_logprobs").cases()]
    assert any(n % 4 for n in sizes) and any(n % 4 == 0 for n in sizes) and any(n > 8 for n in sizes)


def test_ratio_cases_avoid_zero_log_probs():
    for new, old in get("ch2.importance_ratio").cases():
        assert (new < 0).all() and (old < 0).all()


# --- slips written the way a reader writes them get the specific hint ------------------------------

def _lp(logits, ids):
    return logits.log_softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


@pytest.mark.parametrize("name", ["ch2.sequence_logprob", "ch2.completion_logprob", "ch2.chunked_logprobs"])
def test_exercises_that_return_one_number_per_row_start_with_several_rows(name):
    cases = get(name).cases()
    assert cases[0][0].shape[0] > 1, "a sum over the whole batch must fail on case 1 with a clear shape"
    assert any(c[0].shape[0] == 1 for c in get(name).edge_cases), "and a batch of one is still checked"


def test_summing_the_whole_batch_is_named_not_sent_to_squeeze():
    def sum_all(logits, labels):
        t = labels[:, 1:]
        lp = _lp(logits[:, :-1], t.clamp(min=0))
        return (lp * (t != -100)).sum()

    def masked_select_sum(logits, labels):
        t = labels[:, 1:]
        return _lp(logits[:, :-1], t.clamp(min=0))[t != -100].sum()

    for answer in (sum_all, masked_select_sum):
        r = run_check("ch2.sequence_logprob", answer, lang="en")
        assert (r.case, r.kind, r.hint_key) == (1, "shape", "summed_whole_batch"), r.message
        assert "shape: expected (2,), got ()" in r.message and "`(logp * mask).sum(-1)`" in r.message

    def completion_sum_all(logits, ids, p, n):
        t = torch.arange(1, ids.shape[1])
        return (_lp(logits[:, :-1], ids[:, 1:]) * ((t >= p[:, None]) & (t < n[:, None]))).sum()

    r = run_check("ch2.completion_logprob", completion_sum_all, lang="en")
    assert (r.case, r.hint_key) == (1, "summed_whole_batch"), r.message


def test_squeezing_a_batch_of_one_is_named_as_such():
    def answer(logits, labels):
        t = labels[:, 1:]
        lp = _lp(logits[:, :-1], t.clamp(min=0))
        return (lp * (t != -100)).sum(-1, keepdim=True).squeeze()

    r = run_check("ch2.sequence_logprob", answer, lang="en")
    assert (r.case, r.kind, r.hint_key) == (2, "shape", "squeezed_batch"), r.message
    assert "shape: expected (1,), got ()" in r.message


def test_token_slips_with_gather_are_named():
    r = run_check("ch2.pick_logprobs", lambda x, ids: x.log_softmax(-1).gather(-1, ids).squeeze(-1), lang="en")
    assert r.kind == "exception" and r.hint_key == "no_unsqueeze", r.message
    assert "Index tensor must have the same number of dimensions" in r.message
    r = run_check("ch2.pick_logprobs", lambda x, ids: x.log_softmax(2).gather(1, ids[..., None])[..., 0], lang="en")
    assert r.hint_key == "gather_dim1", r.message


def test_softmax_then_log_fails_where_the_probability_underflows():
    cases = get("ch2.pick_logprobs").cases()
    under = [k for k, (x, ids) in enumerate(cases) if torch.isinf(x.softmax(-1).log().gather(-1, ids[..., None])).any()]
    assert under, "a case where softmax(-1).log() reads -inf"
    x, ids = cases[under[0]]
    assert torch.isfinite(get("ch2.pick_logprobs").reference(x, ids)).all()
    r = run_check("ch2.pick_logprobs", lambda x, ids: torch.log(torch.softmax(x, -1)).gather(-1, ids[..., None])[..., 0],
                  lang="zh")
    assert r.case == under[0] + 1 and r.hint_key == "softmax_then_log", r.message
    # writing it another exact way still passes
    assert run_check("ch2.pick_logprobs",
                     lambda x, ids: (x - x.logsumexp(-1, keepdim=True)).gather(-1, ids[..., None])[..., 0],
                     lang="en").passed


def test_completion_without_a_column_passes_a_batch_of_one_and_is_named_after():
    ex = get("ch2.completion_logprob")

    def answer(logits, ids, p, n):
        t = torch.arange(1, ids.shape[1])
        return (_lp(logits[:, :-1], ids[:, 1:]) * ((t >= p) & (t < n))).sum(-1)

    one = next(c for c in ex.edge_cases if c[0].shape[0] == 1)
    assert torch.allclose(answer(*one), ex.reference(*one))  # why it needs a case with B > 1
    r = run_check(ex.name, answer, lang="en")
    assert (r.case, r.kind, r.hint_key) == (1, "exception", "no_column"), r.message
    assert "must match the size of tensor b" in r.message

    def off_by_one(logits, ids, p, n):
        t = torch.arange(1, ids.shape[1])
        return (_lp(logits[:, :-1], ids[:, 1:]) * ((t > p[:, None]) & (t < n[:, None]))).sum(-1)

    assert run_check(ex.name, off_by_one, lang="en").hint_key == "prompt_off_by_one"


def test_next_token_with_both_cut_at_the_start_is_named():
    r = run_check("ch2.next_token_logprobs", lambda x, ids: _lp(x[:, 1:], ids[:, 1:]), lang="en")
    assert r.hint_key == "both_cut_at_start", r.message
