"""gb.folded (gatherbook/folds.py): what a Predict's answer cell prints, folded into one output."""
from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

import gatherbook as gb
from gatherbook.exercises.words import table


@pytest.fixture
def shown(monkeypatch):
    """The outputs gb.folded displays, as a notebook kernel would receive them."""
    got = []
    monkeypatch.setattr("IPython.get_ipython", lambda: InteractiveShell.instance())
    monkeypatch.setattr("IPython.display.display", lambda data, raw=False: got.append(data))
    return got


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_what_the_block_prints_is_one_closed_fold_labelled_in_the_notebooks_language(shown, lang):
    with gb.folded(lang=lang):
        print("tensor([1, 2])")
        print("<b>")
    (out,) = shown
    assert out["text/plain"] == "tensor([1, 2])\n<b>"
    label = table(lang)["notebook"]["folded_output"]
    assert out["text/html"] == (f'<details class="predict-output"><summary>{label}</summary>'
                                f'<pre>tensor([1, 2])\n&lt;b&gt;\n</pre></details>')


def test_an_expected_error_is_shown_folded_and_the_cell_goes_on(shown):
    with gb.folded(raises=IndexError, lang="en"):
        print("before")
        [][1]
    assert shown[0]["text/plain"] == "before\nIndexError: list index out of range"


def test_an_error_of_another_type_propagates(shown):
    with pytest.raises(KeyError):
        with gb.folded(raises=IndexError, lang="en"):
            {}["k"]
    assert not shown


def test_an_expected_error_that_never_comes_is_an_error(shown):
    with pytest.raises(AssertionError, match="raised nothing"):
        with gb.folded(raises=IndexError, lang="en"):
            pass


@pytest.mark.parametrize("raises", ["IndexError", 3, (IndexError, "x")])
def test_raises_must_name_exception_classes(raises):
    with pytest.raises(TypeError, match="takes an exception class"):
        with gb.folded(raises=raises, lang="en"):
            pass


def test_without_a_notebook_it_prints_plainly(capsys):
    with gb.folded(lang="en"):
        print("plain")
    assert capsys.readouterr().out == "plain\n"
