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


def test_a_checks_picture_drawn_inside_the_block_goes_inside_the_fold(shown, monkeypatch):
    """Under a find-the-bug exercise that asks the reader to predict first, the check's verdict
    and its picture are the answer: drawn inside ``gb.folded()``, the picture is a PNG inside the
    closed <details>, with alt text, and nothing is displayed outside it (issue 37)."""
    import types

    shell = InteractiveShell.instance()
    monkeypatch.setattr(shell, "kernel", types.SimpleNamespace(), raising=False)  # as in a notebook

    def stub(logits, k, u):  # the chapter's Exercise 7.1 stub: the rank, not the token id
        values, ids = logits.topk(k, dim=-1)
        cdf = values.softmax(-1).cumsum(-1)
        return (cdf <= u[:, None]).sum(-1, keepdim=True).clamp(max=k - 1).squeeze(-1)

    with gb.folded(lang="en"):
        gb.check("ch7.sample_top_k", stub, lang="en")
    (out,) = shown  # one output: the fold (the figure was not displayed on its own)
    assert "expected 3, got 1" in out["text/plain"] and "<img" not in out["text/plain"]
    page = out["text/html"]
    assert page.startswith('<details class="predict-output"><summary>') and page.endswith("</details>")
    assert page.count('<img src="data:image/png;base64,') == 1
    alt = table("en")["notebook"]["check_picture_alt"]  # an apostrophe stays one (no &#x27;: a number)
    assert f'alt="{alt}"' in page and "'" in alt
    assert page.index("<pre>") < page.index("<img")


def test_outside_a_fold_the_checks_picture_is_displayed_as_before(shown, monkeypatch):
    import types

    shell = InteractiveShell.instance()
    monkeypatch.setattr(shell, "kernel", types.SimpleNamespace(), raising=False)
    gb.check("ch7.sample_top_k", lambda logits, k, u: logits.argmax(-1), lang="en")
    assert shown and all("text/html" not in getattr(o, "keys", lambda: ())() for o in shown)


def test_a_check_that_passes_inside_the_block_is_shown_open(shown, capsys, monkeypatch):
    """Once the reader's fix is right, the find-the-bug check's ✔ verdict gives nothing away: it
    prints as a plain output, with no fold to open (issue 37's new reader); a failing check in
    the same cell stays folded (the test above)."""
    import types

    shell = InteractiveShell.instance()
    monkeypatch.setattr(shell, "kernel", types.SimpleNamespace(), raising=False)

    def fixed(logits, k, u):
        values, ids = logits.topk(k, dim=-1)
        cdf = values.softmax(-1).cumsum(-1)
        j = (cdf <= u[:, None]).sum(-1, keepdim=True).clamp(max=k - 1)
        return ids.gather(-1, j).squeeze(-1)

    with gb.folded(lang="en"):
        gb.check("ch7.sample_top_k", fixed, lang="en")
    assert not shown  # no fold displayed
    assert capsys.readouterr().out.startswith("✔ ch7.sample_top_k")


def test_unfold_outside_a_fold_does_nothing(capsys):
    from gatherbook.folds import unfold

    assert unfold() is False
    with gb.folded(lang="en"):
        print("plain")
        assert unfold() is True
    assert capsys.readouterr().out == "plain\n"
