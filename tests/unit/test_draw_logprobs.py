"""gatherbook.draw_logprobs: bad arguments are named in a TypeError/ValueError, not a matplotlib traceback."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from gatherbook import draw_logprobs, style  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


STATE = torch.tensor([[1, 2, 0]])


@pytest.mark.parametrize("call, error, pattern", [
    (lambda: draw_logprobs.draw_shift("ab", title=3), TypeError, r"draw_shift: title must be a non-empty str; got 3"),
    (lambda: draw_logprobs.draw_shift("ab", title="日本"), ValueError, r"draw_shift: title must be one line of ASCII"),
    (lambda: draw_logprobs.draw_char_logprobs({"a": ("abc", torch.zeros(2))}, vmin="x"), ValueError,
     r"draw_char_logprobs: vmin must be a negative number.*got 'x'"),
    (lambda: draw_logprobs.draw_char_logprobs({"a": ("abc", torch.zeros(2))}, vmin=1.0), ValueError,
     r"vmin must be a negative number.*got 1\.0"),
    (lambda: draw_logprobs.draw_token_mask("abc", STATE, ["a", "b", "c"]), TypeError,
     r"draw_token_mask: tokens must be a list of str \(one string per row of state\); got str 'abc'"),
    (lambda: draw_logprobs.draw_token_mask([123], STATE, ["a", "b", "c"]), TypeError,
     r"draw_token_mask: tokens\[0\] must be a str.*got int 123"),
    (lambda: draw_logprobs.draw_token_mask(["abc"], STATE, "abc"), TypeError,
     r"draw_token_mask: legend must be a list of str \(one name per state\); got str 'abc'"),
    (lambda: draw_logprobs.draw_token_mask([], torch.zeros(0, 3, dtype=torch.long), ["a"]), ValueError,
     r"draw_token_mask: state has shape \(0, 3\); it needs at least one row and one column"),
    (lambda: draw_logprobs.draw_token_mask(["abc"], STATE, ["a", "b", "c"], row_label=""), TypeError,
     r"draw_token_mask: row_label must be a non-empty str"),
    (lambda: draw_logprobs.draw_peaks({"a": "1 MB"}), TypeError,
     r"draw_peaks: peaks\['a'\] must be a number of bytes.*got str '1 MB'"),
    (lambda: draw_logprobs.draw_peaks({"a": -5}), ValueError, r"draw_peaks: peaks\['a'\] must be a number of bytes >= 0; got -5"),
    (lambda: draw_logprobs.draw_peaks({"a": 5}, reference="x"), TypeError, r"draw_peaks: reference must be a number of bytes"),
    (lambda: draw_logprobs.draw_errors(3, {"e": [1.0]}, xlabel="c"), TypeError,
     r"draw_errors: x must be a sequence of numbers.*got int 3"),
    (lambda: draw_logprobs.draw_errors([0], {"e": 1.0}, xlabel="c"), TypeError,
     r"draw_errors: errors\['e'\] must be a sequence of numbers.*got float 1\.0"),
    (lambda: draw_logprobs.draw_errors([0, 1], {"e": [1e-3, "big"]}, xlabel="c"), TypeError,
     r"draw_errors: errors\['e'\]\[1\] must be a number; got str 'big'"),
    (lambda: draw_logprobs.draw_errors(torch.zeros(2, 2), {"e": [1.0, 2.0]}, xlabel="c"), TypeError,
     r"draw_errors: x must be a 1-d sequence of numbers; got a 2-d Tensor"),
])
def test_bad_arguments_are_named(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_sequences_of_numbers_may_be_lists_tensors_or_arrays():
    x = [0, 8, 16]
    for values in ([1e-3, 0.0, 2e-2], torch.tensor([1e-3, 0.0, 2e-2]), np.array([1e-3, 0.0, 2e-2])):
        fig = draw_logprobs.draw_errors(x, {"e": values}, xlabel="c")
        (line,) = fig.axes[0].get_lines()
        assert list(line.get_xdata()) == x
        assert list(line.get_ydata()) == pytest.approx([1e-3, 1e-9, 2e-2])  # zeros are drawn at the floor of the log scale
    fig = draw_logprobs.draw_peaks({"a": 2_000_000, "b": 1.5e6}, reference=3_000_000)
    assert [round(p.get_width(), 6) for p in fig.axes[0].patches] == [2.0, 1.5]


def test_the_pictures_take_the_book_style_from_gatherbook_style():
    """No private names of another module: the font and inks come from gatherbook.style."""
    import inspect
    source = inspect.getsource(draw_logprobs)
    assert "from gatherbook.draw import" not in source
    assert (draw_logprobs._FONT, draw_logprobs._INK, draw_logprobs._MUTED, draw_logprobs._EDGE,
            draw_logprobs._RED, draw_logprobs.CHAR_CMAP) == (
        style.FONT, style.INK, style.MUTED, style.EDGE, style.MARK, style.SEQUENTIAL)
    fig = draw_logprobs.draw_peaks({"naive": 3_000_000}, reference=4_000_000)
    fonts = {t.get_fontname() for t in fig.findobj(matplotlib.text.Text) if t.get_text()}
    assert fonts == {style.FONT}


def _cells_and_letters(ax):
    """(face colour, text colour) of every lettered cell of a char-logprob axes."""
    pairs = []
    for text in ax.texts:
        x, y = text.get_position()
        for patch in ax.patches:
            px, py = patch.get_xy()
            if px < x < px + patch.get_width() and py < y < py + patch.get_height():
                pairs.append((patch.get_facecolor(), text.get_color()))
    return pairs


def test_char_logprobs_scale_is_colour_blind_safe_and_every_letter_reads():
    # one character per step of the scale, from below vmin to 0
    text = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
    logp = torch.linspace(-12.0, 0.0, len(text) - 1)
    fig = draw_logprobs.draw_char_logprobs({"a": (text, logp)})
    ax = fig.axes[0]
    assert fig.axes[1].collections[0].cmap.name in {"cividis", "viridis"}  # no red-green scale
    pairs = _cells_and_letters(ax)
    assert len(pairs) == len(text)
    worst = min(style.contrast_ratio(face, ink) for face, ink in pairs)
    assert worst >= 4.5, worst  # WCAG AA for text
    # and on every colour of the scale, not just the ones this text hit
    cmap = plt.get_cmap(draw_logprobs.CHAR_CMAP)
    for v in np.linspace(0, 1, 101):
        face = cmap(v)
        assert style.contrast_ratio(face, draw_logprobs._ink_on(face)) >= 4.5



def test_figures_carry_no_sentences():
    """Code identifiers and numbers only: no text with two or more plain words in a row."""
    import re
    figs = [
        draw_logprobs.draw_shift("Alice was"),
        draw_logprobs.draw_peaks({"naive": 3_000_000}, reference=4_000_000),
        draw_logprobs.draw_errors([0, 1], {"e": [1e-3, 1e-2]}, xlabel="c"),
    ]
    for fig in figs:
        for t in fig.findobj(matplotlib.text.Text):
            words = re.findall(r"(?<![\w.\[(])[a-z]{3,}(?= [a-z]{3,}\b)", t.get_text())
            assert not words, t.get_text()


def test_every_figure_of_a_notebook_is_shown():
    """In a Jupyter kernel, after a drawing under gatherbook.style.styled, later figures still
    show (gatherbook.style loads the inline backend outside its rc_context)."""
    import nbformat
    from nbclient import NotebookClient

    cells = [
        "import torch\nfrom gatherbook.draw import draw_gather",
        "draw_gather(torch.zeros(2, 2), 1, torch.zeros(2, 1, dtype=torch.long));",
        "from gatherbook import draw_logprobs",
        'draw_logprobs.draw_shift("Alice");',
        'draw_logprobs.draw_peaks({"naive": 3_000_000});',
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    shown = [any("image/png" in o.get("data", {}) for o in c.outputs) for c in nb.cells[1:]]
    assert shown == [True, False, True, True]
