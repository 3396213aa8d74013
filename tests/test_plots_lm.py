"""gatherbook.plots_lm: bad arguments are named in a TypeError/ValueError, not a matplotlib traceback."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from gatherbook import draw, plots_lm  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


STATE = torch.tensor([[1, 2, 0]])


@pytest.mark.parametrize("call, error, pattern", [
    (lambda: plots_lm.draw_shift("ab", title=3), TypeError, r"draw_shift: title must be a non-empty str; got 3"),
    (lambda: plots_lm.draw_shift("ab", title="日本"), ValueError, r"draw_shift: title must be one line of ASCII"),
    (lambda: plots_lm.draw_char_logprobs({"a": ("abc", torch.zeros(2))}, vmin="x"), ValueError,
     r"draw_char_logprobs: vmin must be a negative number.*got 'x'"),
    (lambda: plots_lm.draw_char_logprobs({"a": ("abc", torch.zeros(2))}, vmin=1.0), ValueError,
     r"vmin must be a negative number.*got 1\.0"),
    (lambda: plots_lm.draw_token_mask("abc", STATE, ["a", "b", "c"]), TypeError,
     r"draw_token_mask: tokens must be a list of str \(one string per row of state\); got str 'abc'"),
    (lambda: plots_lm.draw_token_mask([123], STATE, ["a", "b", "c"]), TypeError,
     r"draw_token_mask: tokens\[0\] must be a str.*got int 123"),
    (lambda: plots_lm.draw_token_mask(["abc"], STATE, "abc"), TypeError,
     r"draw_token_mask: legend must be a list of str \(one name per state\); got str 'abc'"),
    (lambda: plots_lm.draw_token_mask([], torch.zeros(0, 3, dtype=torch.long), ["a"]), ValueError,
     r"draw_token_mask: state has shape \(0, 3\); it needs at least one row and one column"),
    (lambda: plots_lm.draw_token_mask(["abc"], STATE, ["a", "b", "c"], row_label=""), TypeError,
     r"draw_token_mask: row_label must be a non-empty str"),
    (lambda: plots_lm.draw_peaks({"a": "1 MB"}), TypeError,
     r"draw_peaks: peaks\['a'\] must be a number of bytes.*got str '1 MB'"),
    (lambda: plots_lm.draw_peaks({"a": -5}), ValueError, r"draw_peaks: peaks\['a'\] must be a number of bytes >= 0; got -5"),
    (lambda: plots_lm.draw_peaks({"a": 5}, reference="x"), TypeError, r"draw_peaks: reference must be a number of bytes"),
    (lambda: plots_lm.draw_errors(3, {"e": [1.0]}, xlabel="c"), TypeError,
     r"draw_errors: x must be a sequence of numbers.*got int 3"),
    (lambda: plots_lm.draw_errors([0], {"e": 1.0}, xlabel="c"), TypeError,
     r"draw_errors: errors\['e'\] must be a sequence of numbers.*got float 1\.0"),
    (lambda: plots_lm.draw_errors([0, 1], {"e": [1e-3, "big"]}, xlabel="c"), TypeError,
     r"draw_errors: errors\['e'\]\[1\] must be a number; got str 'big'"),
    (lambda: plots_lm.draw_errors(torch.zeros(2, 2), {"e": [1.0, 2.0]}, xlabel="c"), TypeError,
     r"draw_errors: x must be a 1-d sequence of numbers; got a 2-d Tensor"),
])
def test_bad_arguments_are_named(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_sequences_of_numbers_may_be_lists_tensors_or_arrays():
    x = [0, 8, 16]
    for values in ([1e-3, 0.0, 2e-2], torch.tensor([1e-3, 0.0, 2e-2]), np.array([1e-3, 0.0, 2e-2])):
        fig = plots_lm.draw_errors(x, {"e": values}, xlabel="c")
        (line,) = fig.axes[0].get_lines()
        assert list(line.get_xdata()) == x
        assert list(line.get_ydata()) == pytest.approx([1e-3, 1e-9, 2e-2])  # zeros are drawn at the floor of the log scale
    fig = plots_lm.draw_peaks({"a": 2_000_000, "b": 1.5e6}, reference=3_000_000)
    assert [round(p.get_width(), 6) for p in fig.axes[0].patches] == [2.0, 1.5]


def test_the_pictures_share_the_look_of_draw():
    assert (plots_lm._FONT, plots_lm._INK, plots_lm._MUTED, plots_lm._EDGE, plots_lm._RED) == (
        draw._FONT, draw._INK, draw._MUTED, draw._EDGE, draw._MARK)
