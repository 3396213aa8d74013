"""A hint names a mistake only when the evidence identifies it (the slips of the issue)."""
from __future__ import annotations

import torch

from gatherbook.exercises import get, run_check
from gatherbook.exercises.cases import logp, pick


def test_double_dqn_with_the_smaller_of_the_two_networks_is_not_told_the_roles_are_swapped():
    def smaller(on, ta, r, te, g):
        with torch.no_grad():
            return r + g * (~te).float() * torch.minimum(on.max(1).values, ta.max(1).values)

    r = run_check("ch3.double_dqn_target", smaller, lang="en")
    assert not r.passed and r.hint_key != "swapped", r.message


def test_scatter_add_into_zeros_of_grad_outs_shape_is_not_told_about_gathering():
    r = run_check("ch5.gather_bwd", lambda x, i, go: torch.zeros_like(go).scatter_add_(1, i, go), lang="en")
    assert not r.passed and r.hint_key != "gather_back", r.message


def test_a_completion_mask_off_by_one_at_the_end_is_not_told_it_is_cut_like_the_logits():
    def off(logits, ids, p, n):
        t = torch.arange(1, ids.shape[1])
        return (pick(logp(logits[:, :-1]), ids[:, 1:]) * ((t >= p[:, None]) & (t <= n[:, None]))).sum(-1)

    r = run_check("ch2.completion_logprob", off, lang="en")
    assert not r.passed and r.hint_key != "mask_not_shifted", r.message


def test_squeezing_dim_0_is_not_told_it_was_a_bare_squeeze():
    ref = get("ch3.q_taken").reference
    r = run_check("ch3.q_taken", lambda q, a: ref(q, a).squeeze(0), lang="en")
    assert not r.passed and "`.squeeze(0)`" in r.message, r.message
    ref = get("ch1.pick_k_per_row").reference
    r = run_check("ch1.pick_k_per_row", lambda x, idx: ref(x, idx).squeeze(0), lang="en")
    assert r.hint_key == "generic.size_one" and "a bare" not in r.message, r.message


def test_a_trial_learners_slips_on_level_3_are_named():
    """Written as a trial learner wrote them: the logits cut but the tokens not shifted (the
    declared no_shift shifts neither, so this one went unnamed), and the -1 padding scattered as
    an index (torch's "index -1 is out of bounds" was all they got)."""
    def not_shifted(logits, ids, pad):
        logp = logits[:, :-1].log_softmax(-1)
        return logp.gather(2, ids[:, :-1].unsqueeze(2)).squeeze(2).masked_fill(ids[:, :-1] == pad, 0.0)

    def pad_as_index(logits, history, alpha, beta):
        count = torch.zeros(logits.shape[0], logits.shape[1], device=logits.device)
        count = count.scatter_add(1, history, torch.ones_like(history, dtype=logits.dtype))
        return logits - alpha * count - beta * (count > 0)

    for lang in ("en", "zh"):
        r = run_check("puzzles.token_logprobs", not_shifted, lang=lang)
        assert (r.kind, r.hint_key) == ("values", "ids_not_shifted"), r.message
        r = run_check("puzzles.frequency_penalty", pad_as_index, lang=lang)
        assert (r.status, r.hint_key) == ("raised", "pad_as_index"), r.message
        assert "index -1 is out of bounds" in r.message and "`scatter_add`" in r.message


def test_a_trial_learners_slips_on_levels_1_and_2_are_named_for_what_they_are():
    """Issue 35, written as the learner wrote them. The off-by-one kept in range with `clamp` equals
    `x[:, -1]` on every edge case of last_token (their padding is 0, like the last column), and
    `argmin` of the scores equals `argmax` of the values on every edge case of value_at_argmax
    (values rise along each row): a mistake is named only when it agrees on the drawn cases too.
    True division in unravel, and x and y swapped or a row taken as H long in read_points, are named."""
    def clamped(x, lengths):
        L = x.shape[1]
        return x.gather(1, lengths.clamp(max=L - 1).unsqueeze(1)).squeeze(1)

    def smallest(scores, values):
        return values.gather(1, scores.argmin(1, keepdim=True)).squeeze(1)

    def divided(flat, A, B, C):
        return torch.stack([flat / (B * C), flat / C % B, flat % C], 1)

    def swapped(fmap, pts):
        B, C, H, W = fmap.shape
        return fmap.flatten(2).gather(2, (pts[..., 0] * W + pts[..., 1]).unsqueeze(2)).squeeze(2)

    def stride_h(fmap, pts):
        B, C, H, W = fmap.shape
        return fmap.flatten(2).gather(2, (pts[..., 1] * H + pts[..., 0]).unsqueeze(2)).squeeze(2)

    for name, fn, key in [("puzzles.last_token", clamped, "clamped"), ("puzzles.value_at_argmax", smallest, "argmin"),
                          ("puzzles.unravel", divided, "true_division"),
                          ("puzzles.read_points", swapped, "x_and_y_swapped"),
                          ("puzzles.read_points", stride_h, "stride_h")]:
        for lang in ("en", "zh"):
            r = run_check(name, fn, lang=lang)
            assert not r.passed and r.hint_key == key, r.message


def test_fractions_in_an_integer_result_are_told_about_true_division():
    def divided(flat, A, B, C):  # one `/` among the `//`
        return torch.stack([flat / (B * C), flat // C % B, flat % C], 1)

    r = run_check("puzzles.unravel", divided, lang="en")
    assert (r.kind, r.hint_key) == ("dtype", "generic.true_division") and "`//`" in r.message, r.message
    ref = get("ch1.pick_per_row").reference  # whole numbers made float: a conversion, not `/`
    r = run_check("ch1.pick_per_row", lambda x, idx: ref(x, idx).float(), lang="en")
    assert r.hint_key == "generic.dtype", r.message
