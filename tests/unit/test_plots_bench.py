"""gatherbook.plots_bench.draw_ratios."""
import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from gatherbook.plots_bench import draw_ratios  # noqa: E402


def test_draws_one_bar_per_ratio_on_a_log_axis():
    fig = draw_ratios({"loop": 40.0, "gather": 0.3, "x[rows, ids]": 1.0}, xlabel="t / t(x[rows, ids])")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["loop", "gather", "x[rows, ids]"]
    assert len(ax.patches) == 3
    texts = {t.get_text() for t in ax.texts}
    assert {"40x", "0.3x", "1x"} <= texts
    bars = [p.get_x() + p.get_width() for p in ax.patches]
    assert bars == pytest.approx([40.0, 0.3, 1.0])  # each bar ends at its value
    plt.close(fig)


@pytest.mark.parametrize("ratios, kwargs, error, words", [
    ([1.0], {}, TypeError, "ratios must be a mapping"),
    ({}, {}, ValueError, "must not be empty"),
    ({"a": 1.0}, {"xlabel": 3}, TypeError, "xlabel must be a str"),
    ({1: 1.0}, {}, TypeError, "every label must be a str"),
    ({"a" * 41: 1.0}, {}, ValueError, "longer than 40"),
    ({"a": "1"}, {}, TypeError, "must be a number"),
    ({"a": 0.0}, {}, ValueError, "positive and finite"),
    ({"a": float("inf")}, {}, ValueError, "positive and finite"),
    ({"a": 1.0}, {"reference": -1.0}, ValueError, "ratios['reference']"),
])
def test_bad_input_is_named(ratios, kwargs, error, words):
    kwargs = {"xlabel": "t", **kwargs}
    with pytest.raises(error) as info:
        draw_ratios(ratios, **kwargs)
    assert words in str(info.value)
