"""Chapter 6 exercises (the silent mistakes): right answers written other ways pass, the planted
wrong answers fail and are named in both languages, and the cases hold what makes them visible.

The checks common to every exercise (stub, shapes, languages ...) are in test_exercises.py.
"""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gatherbook.exercises import get, names, run_check  # noqa: E402
from gatherbook.exercises.ch6 import MESSAGES  # noqa: E402
from gatherbook.logprobs import token_logprobs  # noqa: E402

CH6 = [n for n in names() if n.startswith("ch6.")]


def test_chapter_6_has_three_exercises():
    assert CH6 == ["ch6.whole_rows", "ch6.label_logp", "ch6.td_error"]


@pytest.mark.parametrize("name,key", [(n, m.key) for n in CH6 for m in get(n).mistakes])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_planted_wrong_answers_are_named_in_both_languages(name, key, lang):
    m = next(m for m in get(name).mistakes if m.key == key)
    r = run_check(name, m.fn, lang=lang)
    assert not r.passed and r.hint_key == key, r.message
    assert MESSAGES[lang][name.split(".")[1]][key] in r.message


def test_the_silent_mistakes_run_without_an_error_on_some_case():
    """Each mistake except gather_sees_pad returns a tensor: the checker, not an exception, stops it."""
    for name in CH6:
        for m in get(name).mistakes:
            if m.key == "gather_sees_pad":
                continue
            outputs = []
            for case in get(name).cases():
                try:
                    outputs.append(m.fn(*case))
                except RuntimeError:
                    pass
            assert outputs, f"{name}: {m.key} raises on every case"


def test_the_cases_hold_the_traps():
    rows = get("ch6.whole_rows").cases()
    assert any(r.shape[0] == 1 for _, r in rows), "K == 1"
    assert any(len(set(r.tolist())) < len(r) for _, r in rows), "a repeated row"
    labels = [lab for _, lab in get("ch6.label_logp").cases()]
    assert all((lab == -100).any() for lab in labels), "padding in every case"
    assert any(((lab == 0)).any() for lab in labels[:1]), "id 0 in the first case"


# --- right answers written another way pass -----------------------------------------------------

@pytest.mark.parametrize("answer", [
    lambda x, rows: x[rows],
    lambda x, rows: x.index_select(0, rows),
    lambda x, rows: torch.take_along_dim(x, rows[:, None], dim=0),
    lambda x, rows: torch.stack([x[int(r)] for r in rows]),
    lambda x, rows: F.one_hot(rows, x.shape[0]).to(x.dtype) @ x,
], ids=["indexing", "index_select", "take_along_dim", "loop", "one_hot"])
def test_whole_rows_other_ways(answer):
    assert run_check("ch6.whole_rows", answer, lang="en").passed


def _masked_loop(logp, labels):
    out = torch.zeros(labels.shape, dtype=logp.dtype)
    rows = []
    for b in range(labels.shape[0]):
        rows.append(torch.stack([logp[b, t, labels[b, t]] if labels[b, t] != -100 else logp.new_zeros(())
                                 for t in range(labels.shape[1])]))
    return torch.stack(rows) if rows else out


@pytest.mark.parametrize("answer", [
    lambda logp, labels: torch.where(labels != -100, torch.take_along_dim(
        logp, labels.clamp(min=0)[..., None], dim=-1)[..., 0], 0.0),
    lambda logp, labels: -F.nll_loss(logp.transpose(1, 2), labels, ignore_index=-100, reduction="none"),
    lambda logp, labels: (logp * F.one_hot(labels.clamp(min=0), logp.shape[-1])).sum(-1) * (labels != -100),
    _masked_loop,
], ids=["take_along_dim_where", "nll_loss", "one_hot", "loop"])
def test_label_logp_other_ways(answer):
    r = run_check("ch6.label_logp", answer, lang="en")
    assert r.passed, r.message


@pytest.mark.parametrize("answer", [
    lambda q, a, t: q[torch.arange(q.shape[0]), a] - t,
    lambda q, a, t: torch.take_along_dim(q, a[:, None], dim=1)[:, 0] - t,
    lambda q, a, t: (q * F.one_hot(a, q.shape[1])).sum(1) - t,
    lambda q, a, t: torch.stack([q[b, a[b]] for b in range(q.shape[0])]) - t,
    lambda q, a, t: q.gather(1, a.view(-1, 1)).view(-1) - t,
], ids=["indexing", "take_along_dim", "one_hot", "loop", "view"])
def test_td_error_other_ways(answer):
    r = run_check("ch6.td_error", answer, lang="en")
    assert r.passed, r.message


def test_token_logprobs_on_log_probs_has_the_values_but_not_the_gradient():
    """token_logprobs takes logits: on log-probs its log_softmax changes no value (a log-softmax of
    log-probs is itself) but it adds its own term to the gradient, which the checker sees."""
    r = run_check("ch6.label_logp",
                  lambda logp, labels: token_logprobs(logp, labels, ignore_index=-100), lang="en")
    assert not r.passed and r.kind == "grad"


def test_td_error_without_gradient_fails():
    r = run_check("ch6.td_error", lambda q, a, t: (q.gather(1, a[:, None])[:, 0] - t).detach(), lang="en")
    assert not r.passed
