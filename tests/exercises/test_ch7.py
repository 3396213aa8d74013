"""Chapter 7 exercises (generation time): the cases hold what makes each planted mistake visible.

The declared answers (right, mistakes, wrong) are run by tests/exercises/test_declared_answers.py.
"""
import matplotlib

matplotlib.use("Agg")

import torch  # noqa: E402

from gatherbook.exercises import get, names  # noqa: E402

CH7 = [n for n in names() if n.startswith("ch7.")]


def test_chapter_7_has_ten_exercises():
    assert CH7 == ["ch7.sample_top_k", "ch7.top_p_remove", "ch7.beam_step", "ch7.reorder_beams", "ch7.moe_dispatch",
                   "ch7.moe_combine", "ch7.route_weights", "ch7.repetition_penalty", "ch7.capacity_slots",
                   "ch7.load_balancing_loss"]


def test_the_cases_hold_the_traps():
    beams = get("ch7.reorder_beams").cases()
    assert any(b.shape[0] == 1 for _, b in beams) and any(b.shape[0] > 1 for _, b in beams)
    assert any(b.shape[0] not in (1, b.shape[1]) for _, b in beams), "B != K, B > 1"
    for name in ("ch7.top_p_remove", "ch7.route_weights"):
        for x, _ in get(name).cases():
            assert all(len(set(row.tolist())) == len(row) for row in x), f"{name}: ties"
    for _, scores in get("ch7.beam_step").cases():
        flat = scores.reshape(scores.shape[0], -1)
        assert all(len(set(r.tolist())) == len(r) for r in flat), "ties in the beam scores"
    assert any(e.shape[1] > 1 for _, e in get("ch7.moe_dispatch").cases()), "k > 1"


def test_a_dispatch_case_has_ties_enough_that_an_unstable_sort_differs_on_the_cpu():
    """``argsort()`` keeps equal keys in order on a short row, so the hint on a non-stable sort
    needs a case long enough that it does not (issue 37); and writing each token's rows instead of
    adding them differs from the sum on some combine case (every token has k > 1 rows there)."""
    flat = [e.reshape(-1) for _, e in get("ch7.moe_dispatch").cases()]
    assert any(not torch.equal(f.argsort(), f.argsort(stable=True)) for f in flat)
    assert any(w.shape[1] > 1 for _, _, w in get("ch7.moe_combine").cases())


def test_the_mistakes_run_without_an_error_on_some_case():
    """Silent mistakes: each returns a tensor on some case (the checker, not an exception, stops it)."""
    for name in CH7:
        for m in get(name).mistakes:
            outputs = []
            for case in get(name).cases():
                try:
                    outputs.append(m.fn(*case))
                except (RuntimeError, IndexError):
                    pass
            assert outputs or m.key in ("index_add_wrong_dim", "div_mod_swapped", "order_as_token"), f"{name}: {m.key}"


def test_the_draws_sit_inside_their_intervals_and_the_bug_hides_on_sorted_rows():
    """Every u lies strictly inside one candidate's interval of the cumulative probabilities
    (so every way of summing them draws the same token), and the stub's bug (the rank, not the
    token) agrees with the answer on a row sorted highest first, as the exercise says."""
    ex = get("ch7.sample_top_k")
    for logits, k, u in ex.cases():
        cdf = logits.topk(k, dim=-1).values.double().softmax(-1).cumsum(-1)
        gaps = (cdf - u.double()[:, None]).abs()
        assert gaps.min() > 1e-4, "a draw on an interval boundary"
    stub = ex.mistake(ex.bug).fn
    sorted_row = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    for u in (0.1, 0.5, 0.9):
        assert torch.equal(stub(sorted_row, 3, torch.tensor([u])), ex.reference(sorted_row, 3, torch.tensor([u])))
    row = torch.tensor([[1.0, 3.0, -1.0, 2.5, 0.0, 2.0]])  # the chapter's row: the draw on rank 1
    u = next(c[2] for c in ex.cases() if torch.equal(c[0], row))
    assert stub(row, 3, u).tolist() == [1] and ex.reference(row, 3, u).tolist() == [3]
