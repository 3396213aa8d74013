"""What the exercises' cases hold (the traps that make each planted mistake visible); the answers
themselves are declared with each exercise and run by test_declared_answers.py."""
import pytest
import torch

from gatherbook.exercises import get, names

CH3 = [n for n in names() if n.startswith("ch3.")]


def test_ch2_sequence_cases_have_padding_and_an_empty_row():
    labels = [c[1] for c in get("ch2.sequence_logprob").cases()]
    assert any(((row == -100).sum() >= 2) for lab in labels for row in lab)
    assert any((row[1:] == -100).all() for lab in labels for row in lab)
    assert any(not (lab == -100).any() for lab in labels)
    for lab in labels:  # padding only at the end of a row
        for row in lab:
            pad = (row == -100).int()
            assert torch.equal(pad, pad.sort().values)


def test_ch2_completion_cases_are_consistent():
    for logits, ids, p, n in get("ch2.completion_logprob").cases():
        L = ids.shape[1]
        assert ((1 <= p) & (p < n) & (n <= L)).all()
        assert (ids[torch.arange(L) >= n[:, None]] == 0).all()
    assert any((n < c[1].shape[1]).any() for c in get("ch2.completion_logprob").cases() for n in [c[3]])
    assert any(((n - p) == 1).any() for _, _, p, n in get("ch2.completion_logprob").cases())


def test_ch2_chunked_cases_include_partial_chunks():
    sizes = [c[0].shape[0] for c in get("ch2.chunked_logprobs").cases()]
    assert any(n % 4 for n in sizes) and any(n % 4 == 0 for n in sizes) and any(n > 8 for n in sizes)


def test_ch2_ratio_cases_avoid_zero_log_probs():
    for new, old in get("ch2.importance_ratio").cases():
        assert (new < 0).all() and (old < 0).all()


@pytest.mark.parametrize("name", ["ch2.sequence_logprob", "ch2.completion_logprob", "ch2.chunked_logprobs"])
def test_ch2_exercises_that_return_one_number_per_row_start_with_several_rows(name):
    cases = get(name).cases()
    assert cases[0][0].shape[0] > 1, "a sum over the whole batch must fail on case 1 with a clear shape"
    assert any(c[0].shape[0] == 1 for c in get(name).edge_cases), "and a batch of one is still checked"


def test_ch3_batches_differ_from_the_number_of_actions_and_include_a_batch_of_one():
    for name in CH3:
        cases = get(name).cases()
        assert cases[0][0].shape[0] > 1
        assert any(c[0].shape[0] == 1 for c in cases[:4]), name
        assert sum(c[0].shape[0] == c[0].shape[1] for c in cases) <= 1, name


def test_ch3_dqn_cases_have_truncated_only_and_both_flags():
    cases = get("ch3.dqn_target").cases()
    terminated = torch.cat([c[2] for c in cases])  # (next_q_target, reward, terminated, truncated, gamma)
    truncated = torch.cat([c[3] for c in cases])
    assert (truncated & ~terminated).any() and (truncated & terminated).any()


def test_ch3_double_dqn_cases_have_rows_where_the_networks_disagree():
    for online, target, reward, terminated, gamma in get("ch3.double_dqn_target").cases():
        assert (online.argmax(1) != target.argmax(1)).any()
        assert online.shape[0] == 1 or not (online.sort(1).values.diff(1) == 0).any()


def test_ch3_n_step_cases_terminate_early_and_late():
    cases = get("ch3.n_step_target").cases()
    rewards, terminated = cases[0][0], cases[0][1]
    steps = terminated.float().argmax(1)[terminated.any(1)]
    assert (steps == 0).any() and (steps == rewards.shape[1] - 1).any()
    for rewards, terminated, _, _ in cases:  # nothing is rewarded after a termination
        after = terminated.float().cumsum(1) - terminated.float() > 0
        assert (rewards[after] == 0).all()


def test_ch3_policy_cases_underflow_in_float32():
    logits = get("ch3.policy_logprobs").cases()[2][0]
    assert (logits.softmax(-1) == 0).any()


@pytest.mark.parametrize("name", ["ch4.top_k_patches", "ch4.top_k_in_image_order",
                                  "ch4.mask_and_restore", "ch4.keep_by_cls_attention",
                                  "ch4.fuse_dropped"])
def test_ch4_k_is_an_int_with_k_1_and_k_n_cases(name):
    cases = get(name).cases()
    ks = [c[2] for c in cases]
    assert all(type(k) is int for k in ks)
    n = [c[0].shape[1] - (1 if name == "ch4.keep_by_cls_attention" else 0) for c in cases]
    assert any(k == 1 for k in ks) and any(k == m for k, m in zip(ks, n))


@pytest.mark.parametrize("name", ["ch4.top_k_patches", "ch4.top_k_in_image_order",
                                  "ch4.mask_and_restore"])
def test_ch4_scores_are_all_different_within_a_row(name):
    for case in get(name).cases():
        s = case[1]
        assert all(len(set(row.tolist())) == len(row) for row in s)


def test_ch4_class_token_attention_has_no_ties_within_a_row():
    for x, attn, _ in get("ch4.keep_by_cls_attention").cases():
        mean = attn[:, :, 0, 1:].mean(dim=1)
        gaps = mean.sort(dim=1).values.diff(dim=1)
        assert gaps.numel() == 0 or float(gaps.min()) > 1e-5
        assert torch.allclose(attn.sum(dim=-1), torch.ones(attn.shape[:-1]))


def test_ch4_per_image_k_cases_have_different_ks_in_one_batch():
    cases = get("ch4.keep_mask_per_image").cases()
    assert all(((k >= 1) & (k <= s.shape[1])).all() for s, k in cases)
    assert sum(len(set(k.tolist())) > 1 for s, k in cases) >= len(cases) - 2


def test_ch6_the_cases_hold_the_traps():
    rows = get("ch6.whole_rows").cases()
    assert any(r.shape[0] == 1 for _, r in rows), "K == 1"
    assert any(len(set(r.tolist())) < len(r) for _, r in rows), "a repeated row"
    labels = [lab for _, lab in get("ch6.label_logp").cases()]
    assert all((lab == -100).any() for lab in labels), "padding in every case"
    assert any(((lab == 0)).any() for lab in labels[:1]), "id 0 in the first case"
