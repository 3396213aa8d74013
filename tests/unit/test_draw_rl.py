"""Pictures of the reinforcement-learning chapter: drawn from the tensors given, labels that are
code identifiers, and clear errors for bad input."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from gatherbook.draw_rl import ARROWS, draw_curves, draw_grid_policy, draw_q_picks  # noqa: E402

DESC = np.array([list(b"SFFF"), list(b"FHFH"), list(b"FFFH"), list(b"HFFG")], dtype="uint8").view("S1")


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts] + [t.get_text() for t in fig.texts]


def test_q_picks_writes_every_value_and_the_picked_ones():
    q = torch.tensor([[1.5, -0.25, 0.0], [0.5, 2.0, -1.0]])
    fig = draw_q_picks({"q": (q, torch.tensor([2, 1]))}, title="q_taken")
    texts = _texts(fig)
    assert texts.count("2.00") == 2  # in the table and in the out column
    assert texts.count("0.00") == 2 and "1.50" in texts and "-0.25" in texts
    assert "q" in texts and "q_taken" in texts and "out" in texts
    assert len(fig.axes) == 1


def test_q_picks_stacks_panels_vertically():
    q = torch.randn(3, 4)
    fig = draw_q_picks({"a": (q, q.argmax(1)), "b": (q, q.argmin(1))})
    (a, b) = fig.axes
    assert a.get_position().y0 > b.get_position().y0
    assert fig.get_figwidth() < 5  # phone width


def test_q_picks_accepts_int32_and_grad_tensors():
    q = torch.randn(2, 3, requires_grad=True)
    draw_q_picks({"q": (q, torch.tensor([0, 2], dtype=torch.int32))})


@pytest.mark.parametrize("panels,error,match", [
    ({}, TypeError, "panels must be a mapping"),
    ([1], TypeError, "panels must be a mapping"),
    ({"q": torch.zeros(2, 2)}, TypeError, r"panels\['q'\] must be a pair"),
    ({"q": ([[1.0]], torch.tensor([0]))}, TypeError, r"must be a torch.Tensor; got list"),
    ({"q": (torch.zeros(2, 3, dtype=torch.long), torch.tensor([0, 1]))}, ValueError, "floating-point"),
    ({"q": (torch.zeros(2, 3), torch.tensor([0.0, 1.0]))}, TypeError, "int64 or int32"),
    ({"q": (torch.zeros(2, 3), torch.tensor([0, 1, 2]))}, ValueError, r"shape \(2,\)"),
    ({"q": (torch.zeros(2, 3), torch.tensor([0, 3]))}, ValueError, r"in \[0, 3\)"),
    ({"q": (torch.zeros(9, 3), torch.zeros(9, dtype=torch.long))}, ValueError, "at most"),
    ({1: (torch.zeros(2, 3), torch.tensor([0, 1]))}, TypeError, "ASCII string"),
])
def test_q_picks_bad_input(panels, error, match):
    with pytest.raises(error, match=match):
        draw_q_picks(panels)


def test_grid_policy_draws_an_arrow_per_open_cell():
    q = torch.zeros(16, 4)
    q[:, 2] = torch.linspace(0.1, 1, 16)  # every greedy action: right
    fig = draw_grid_policy(DESC, q, path=[0, 1, 2])
    ax = fig.axes[0]
    arrows = [c for c in ax.texts if c.get_text() == "" and hasattr(c, "arrow_patch")]
    assert len(arrows) == 16 - 4 - 1  # no arrow on holes and on the goal
    for a in arrows:
        (x0, y0), (x1, y1) = a.xyann, a.xy
        assert x1 > x0 and y1 == y0  # right is +x (ARROWS[2])
    texts = _texts(fig)
    assert texts.count("H") == 4 and texts.count("G") == 1 and "S" in texts
    assert ARROWS[2] == (1, 0)


def test_grid_policy_takes_str_maps():
    draw_grid_policy(["SF", "HG"], torch.rand(4, 4))


@pytest.mark.parametrize("desc,q,kw,error,match", [
    (DESC, torch.zeros(15, 4), {}, ValueError, r"shape \(16, 4\)"),
    (DESC, torch.zeros(16, 4, dtype=torch.long), {}, ValueError, "floating-point"),
    (["SF", "H"], torch.zeros(4, 4), {}, ValueError, "rectangle"),
    (5, torch.zeros(4, 4), {}, TypeError, "desc must be rows"),
    (DESC, torch.zeros(16, 4), {"path": [0, 16]}, ValueError, r"path must hold states in \[0, 16\)"),
    (DESC, torch.zeros(16, 4), {"title": 3}, TypeError, "title"),
])
def test_grid_policy_bad_input(desc, q, kw, error, match):
    with pytest.raises(error, match=match):
        draw_grid_policy(desc, q, **kw)


def test_curves_one_panel_per_series_sharing_x():
    fig = draw_curves([0, 100, 200], {"err": [0.5, 0.2, 0.1], "goal": [False, True, True]})
    assert len(fig.axes) == 2
    assert fig.axes[0].get_position().y0 > fig.axes[1].get_position().y0
    assert list(fig.axes[1].lines[0].get_ydata()) == [0.0, 1.0, 1.0]
    assert fig.axes[0].get_ylabel() == "err"


def test_curves_take_tensors():
    draw_curves(torch.arange(3), {"loss": torch.tensor([1.0, 0.5, 0.2])})


@pytest.mark.parametrize("x,curves,error,match", [
    ([], {"a": []}, TypeError, "x must be a non-empty sequence"),
    ([0, 1], {}, TypeError, "curves must be a mapping"),
    ([0, 1], {"a": [1.0]}, ValueError, r"curves\['a'\] has 1 values for 2"),
    ([0, 1], {"a": ["x", "y"]}, TypeError, "real numbers"),
    ([0, 1], {"é": [1, 2]}, TypeError, "ASCII"),
])
def test_curves_bad_input(x, curves, error, match):
    with pytest.raises(error, match=match):
        draw_curves(x, curves)
