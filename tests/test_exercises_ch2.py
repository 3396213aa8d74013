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
    assert CH2 == ["ch2.token_logprobs", "ch2.next_token_logprobs", "ch2.sequence_logprob",
                   "ch2.completion_logprob", "ch2.importance_ratio", "ch2.chunked_logprobs"]


@pytest.mark.parametrize("name,key", [
    ("ch2.next_token_logprobs", "no_shift"),             # missing shift
    ("ch2.sequence_logprob", "no_shift"),
    ("ch2.completion_logprob", "no_shift"),
    ("ch2.token_logprobs", "raw_logits"),                # gathering raw logits
    ("ch2.next_token_logprobs", "raw_logits"),
    ("ch2.sequence_logprob", "mask_not_shifted"),        # mask cut like the logits
    ("ch2.completion_logprob", "mask_not_shifted"),
    ("ch2.sequence_logprob", "gather_sees_pad"),         # -100 reaches gather: an error, named
    ("ch2.sequence_logprob", "no_mask"),                 # dummy id without the mask
    ("ch2.chunked_logprobs", "dropped_remainder"),
    ("ch2.importance_ratio", "ratio_of_logprobs"),
])
def test_planted_wrong_answers_are_named(name, key):
    m = next(m for m in get(name).mistakes if m.key == key)
    r = run_check(name, m.fn, lang="en")
    assert not r.passed and r.hint_key == key, r.message


def test_gather_on_padding_is_reported_as_the_error_it_is():
    m = next(m for m in get("ch2.sequence_logprob").mistakes if m.key == "gather_sees_pad")
    r = run_check("ch2.sequence_logprob", m.fn, lang="en")
    assert r.failure == "exception" and r.failed_case == 2  # case 1 has no padding
    assert "index -100 is out of bounds for dimension 2" in r.message


# --- right answers written another way pass -----------------------------------------------------

def test_token_and_next_token_alternatives():
    def by_indexing(logits, ids):
        B, L, _ = logits.shape
        return logits.log_softmax(-1)[torch.arange(B)[:, None], torch.arange(L), ids]

    assert run_check("ch2.token_logprobs", by_indexing, lang="en").passed
    assert run_check("ch2.token_logprobs", token_logprobs, lang="en").passed
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
    def via_labels(logits, ids, prompt_len, length):
        t = torch.arange(ids.shape[1])
        keep = (t >= prompt_len[:, None]) & (t < length[:, None])
        labels = ids.masked_fill(~keep, -100)
        return token_logprobs(logits[:, :-1], labels[:, 1:], ignore_index=-100).sum(-1)

    assert run_check("ch2.completion_logprob", via_labels, lang="en").passed


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
