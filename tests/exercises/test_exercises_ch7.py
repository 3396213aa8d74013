"""Chapter 7 exercises (generation time): the cases hold what makes each planted mistake visible.

The declared answers (right, mistakes, wrong) are run by tests/exercises/test_declared_answers.py.
"""
import matplotlib

matplotlib.use("Agg")

import torch  # noqa: E402

from gatherbook.exercises import get, names  # noqa: E402

CH7 = [n for n in names() if n.startswith("ch7.")]


def test_chapter_7_has_six_exercises():
    assert CH7 == ["ch7.top_p_remove", "ch7.beam_step", "ch7.reorder_beams", "ch7.moe_dispatch",
                   "ch7.moe_combine", "ch7.route_weights"]


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
