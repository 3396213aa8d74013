"""The exercise checker: a checker that accepts a wrong answer is a bug in the book.

Every exercise: the reference passes; each known mistake (the planted wrong answers) fails and
is named with its hint in every language; an unfilled stub is "not attempted"; errors in the
reader's code are reported, not raised; shapes are compared without broadcasting; every language
renders the same record (status, case, kind, hint key).
"""
import matplotlib

matplotlib.use("Agg")

import importlib  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from gatherbook import exercises  # noqa: E402
from gatherbook.exercises import CheckResult, check, get, names, run_check, title  # noqa: E402
from gatherbook.runtime import LANGUAGES  # noqa: E402

ALL = [n for n in names() if n.startswith("ch")]  # the chapters' (the puzzles: tests/exercises/test_puzzles.py)
CH1 = [n for n in ALL if n.startswith("ch1.")]
MISTAKES = [(n, m.key) for n in ALL for m in get(n).mistakes]


def _mistake(name, key):
    return next(m for m in get(name).mistakes if m.key == key)


def _stub(*args):
    raise NotImplementedError


def _hint(name, key, lang):
    """The hint of mistake ``key`` of exercise ``name`` in ``lang``."""
    from gatherbook.exercises.messages import hint

    return hint(CheckResult(name, "failed", 0, hint_key=key), lang)


@pytest.fixture(autouse=True)
def _no_lang_env(monkeypatch):
    monkeypatch.delenv("GATHERBOOK_LANG", raising=False)
    yield
    plt.close("all")


# --- the registry ----------------------------------------------------------------------------

def test_chapter_1_has_at_least_six_exercises_including_3d_and_inverse_permutation():
    assert len(CH1) >= 6
    assert "ch1.pick_step_per_feature" in CH1 and "ch1.unshuffle" in CH1
    assert [n for n in names() if n.startswith("ch")] == ALL and len(set(names())) == len(names())


def test_a_new_chapter_module_only_declares_its_exercises(chapter, words):
    chapter("ch12", (
        "import torch\n"
        "from gatherbook.exercises import Mistake, exercise\n"
        "@exercise(edge_cases=[(torch.arange(3),)],\n"
        "    random_case=lambda g: (torch.randint(0, 9, (4,), generator=g),), n_random=2,\n"
        "    mistakes=[Mistake('square', lambda x: x * x)])\n"
        "def double(x):\n"
        "    return 2 * x\n"))
    words("ch12.double", en={"title": "Double", "hints": {"square": "squared"}},
          zh={"title": "翻倍", "hints": {"square": "平方了"}})
    assert names() == ["ch12.double"]
    assert title("ch12.double", "zh") == "翻倍"
    assert run_check("ch12.double", lambda x: x + x, lang="en").message == "✔ ch12.double: all 3 cases passed"
    r = run_check("ch12.double", lambda x: x * x, lang="zh")
    assert r.hint_key == "square" and r.message.endswith("可能的错误：平方了")


def test_the_decorator_declares_in_source_order_and_returns_the_reference(chapter):
    chapter("ch15", (
        "import torch\n"
        "from gatherbook.exercises import exercise\n"
        "CASES = dict(edge_cases=[(torch.arange(3),)], n_random=0)\n"
        "@exercise(**CASES)\n"
        "def triple(x):\n"
        "    return 3 * x\n"
        "@exercise(right=[lambda x: triple(x) - x], **CASES)\n"
        "def double(x):\n"
        "    return 2 * x\n"))
    assert names() == ["ch15.triple", "ch15.double"]
    module = sys.modules["gatherbook.exercises.ch15"]
    assert module.double(torch.tensor(4)) == 8 and module.double.exercise is get("ch15.double")
    assert get("ch15.double").args == ("x",) and run_check("ch15.double", get("ch15.double").right[0]).passed


def test_a_target_that_must_not_carry_a_gradient(chapter):
    chapter("ch14", (
        "import torch\n"
        "from gatherbook.exercises import exercise\n"
        "@exercise(grad='none',\n"
        "    edge_cases=[(torch.tensor([1.0, 0.0]), torch.tensor([[0.5, 2.0], [1.0, -1.0]]))],\n"
        "    random_case=lambda g: (torch.randn(3, generator=g), torch.randn(3, 4, generator=g)))\n"
        "def target(r, q):\n"
        "    \"\"\"A TD target. Returns (B,).\"\"\"\n"
        "    with torch.no_grad():\n"
        "        return r + 0.9 * q.amax(-1)\n"))
    r = run_check("ch14.target", lambda r, q: r + 0.9 * q.amax(-1), lang="zh")
    assert (r.case, r.kind, r.hint_key) == (1, "has_grad", "generic.has_grad"), r.message
    assert run_check("ch14.target", lambda r, q: (r + 0.9 * q.max(-1).values).detach(), lang="en").passed


@pytest.mark.parametrize("name", ALL)
def test_exercise_is_well_formed(name):
    ex = get(name)
    assert title(name, "en") and title(name, "zh") and title(name, "en") != title(name, "zh")
    assert len(ex.mistakes) >= 3, "each exercise needs at least three planted wrong answers"
    assert len({m.key for m in ex.mistakes}) == len(ex.mistakes)
    assert ex.reference.__doc__ and "Returns" in ex.reference.__doc__
    cases = ex.cases()
    assert len(cases) >= 10
    assert all(len(c) == len(ex.args) for c in cases)


@pytest.mark.parametrize("name", ALL)
def test_cases_are_deterministic_and_cover_the_edges(name):
    ex = get(name)
    a, b = ex.cases(), ex.cases()
    # arguments are tensors, or plain Python numbers (a size such as k)
    assert all(torch.equal(x, y) if isinstance(x, torch.Tensor) else type(x) is type(y) and x == y
               for ca, cb in zip(a, b) for x, y in zip(ca, cb))
    first = [c[0] for c in a]
    assert all(t.device.type == "cpu" for c in a for t in c if isinstance(t, torch.Tensor))
    assert any(t.shape[0] == 1 for t in first), "a B == 1 case"
    assert sum(t.shape[0] != t.shape[1] for t in first) >= len(first) - 1, "sizes that differ (B != N)"
    random_part = first[len(ex.edge_cases):]
    assert all(t.shape[0] != t.shape[1] for t in random_part)
    assert len({tuple(t.shape) for t in random_part}) >= 4, "random cases of several shapes"


def test_cases_include_k_1_and_repeated_indices():
    for name in ("ch1.pick_k_per_row", "ch1.pick_step_per_feature"):
        idx = [c[1] for c in get(name).cases()]
        assert any(i.shape[1] == 1 for i in idx), f"{name}: a K == 1 case"
        assert any(len(set(row.tolist())) < len(row) for i in idx for row in i), f"{name}: repeats"
    idx = [c[1] for c in get("ch1.pick_per_row").cases()]
    assert any(len(set(i.tolist())) < len(i) for i in idx)


# --- right and wrong answers ------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_reference_passes(name):
    r = run_check(name, get(name).reference, lang="en")
    assert (r.passed, r.attempted, r.case, r.hint_key) == (True, True, None, None)
    assert r.message == f"✔ {name}: all {r.n_cases} cases passed"
    assert run_check(name, get(name).reference, lang="zh").message == f"✔ {name}：{r.n_cases} 个用例全部通过"


@pytest.mark.parametrize("name,key", MISTAKES)
def test_each_known_mistake_is_rejected_and_named(name, key):
    m = _mistake(name, key)
    r = run_check(name, m.fn, lang="en")
    assert not r.passed and r.attempted
    assert r.hint_key == key, r.message
    assert r.message.endswith("likely mistake: " + _hint(name, key, "en"))
    assert r.message.startswith(f"✘ {name}: case {r.case} of {r.n_cases} failed")
    assert "input:" in r.message and "expected:" in r.message
    for lang in LANGUAGES:
        rl = run_check(name, m.fn, lang=lang)
        assert rl.record() == r.record() and rl.facts == r.facts
        assert _hint(name, key, lang) in rl.message


@pytest.mark.parametrize("name", ALL)
def test_extra_dimension_of_size_one_fails_on_shape(name):
    ref = get(name).reference
    r = run_check(name, lambda *a: ref(*a).unsqueeze(-1), lang="en")
    assert not r.passed and r.kind == "shape"
    e = tuple(r.expected.shape)
    assert f"shape: expected {e}, got {e + (1,)}" in r.message


def test_shape_4_1_where_4_was_asked_fails_without_broadcasting():
    def answer(x, idx):  # right values, shape (B, 1)
        return x.gather(1, idx.view(-1, 1))

    r = run_check("ch1.pick_per_row", answer, lang="en")
    assert not r.passed and r.case == 1 and r.kind == "shape"
    assert "shape: expected (3,), got (3, 1)" in r.message
    assert r.hint_key == "forgot_squeeze"


@pytest.mark.parametrize("name", ALL)
def test_leading_size_one_and_squeezed_answers_fail(name):
    ex = get(name)
    ref = ex.reference
    assert run_check(name, lambda *a: ref(*a).unsqueeze(0), lang="en").kind == "shape"
    if all(ref(*case).dim() == 0 for case in ex.cases()):
        return  # a 0-dim result (a loss): squeeze() leaves it as it is, a right answer
    r = run_check(name, lambda *a: ref(*a).squeeze(), lang="en")  # breaks the B == 1 / K == 1 cases
    assert not r.passed and r.kind == "shape"
    # where a sum over the whole batch is a known mistake, it gives the same number on a batch of
    # one: a named "squeezed_batch" mistake, listed before it, says what the generic hint says
    assert r.hint_key in ("generic.size_one", "squeezed_batch"), r.message
    assert "`.squeeze()`" in r.message or "`squeeze()`" in r.message


def test_wrong_only_on_bigger_random_cases_is_caught():
    ex = get("ch1.pick_per_row")

    edges = {(tuple(x.shape), x.dtype) for x, _ in ex.edge_cases}

    def answer(x, idx):  # right on the small hand-written cases only
        out = ex.reference(x, idx)
        return out if (tuple(x.shape), x.dtype) in edges else out.flip(0)

    r = run_check(ex.name, answer, lang="en")
    assert not r.passed and r.case > len(ex.edge_cases) and r.kind == "values"


def test_wrong_dtype_and_wrong_type_fail():
    ref = get("ch1.pick_per_row").reference
    r = run_check("ch1.pick_per_row", lambda x, idx: ref(x, idx).float(), lang="en")
    assert r.kind == "dtype" and "dtype: expected torch.int64, got torch.float32" in r.message
    assert r.hint_key == "generic.dtype"
    r = run_check("ch1.pick_per_row", lambda x, idx: ref(x, idx).tolist(), lang="en")
    assert r.kind == "type" and "type: expected a torch.Tensor, got list" in r.message
    assert r.hint_key == "generic.list" and "got: list [2, 10, 21]" in r.message and "`.tolist()`" in r.message
    unshuffle = get("ch1.unshuffle").reference
    r = run_check("ch1.unshuffle", lambda s, p: unshuffle(s, p).bfloat16(), lang="en")
    assert r.kind == "dtype" and "got torch.bfloat16" in r.message and "[[ 0.0,  1.0,  2.0," in r.message
    r = run_check("ch1.pick_per_row", lambda x, idx: ref(x, idx).numpy(), lang="en")
    assert r.kind == "type" and "got numpy.ndarray" in r.message and r.hint_key == "generic.numpy"
    r = run_check("ch1.pick_per_row", lambda x, idx: x.max(1), lang="en")  # values and indices
    assert r.kind == "type" and r.hint_key == "generic.tuple" and ".tolist()" not in r.message
    r = run_check("ch1.pick_per_row", lambda x, idx: (ref(x, idx),), lang="en")  # a trailing comma
    assert r.hint_key == "generic.tuple" and "tuple of 1" in r.message
    r = run_check("ch1.pick_per_row", lambda x, idx: None, lang="en")
    assert r.kind == "type" and r.hint_key == "generic.none" and "\ngot: None\n" in r.message


def test_float_answers_use_the_stated_tolerance():
    ref = get("ch1.unshuffle").reference
    assert run_check("ch1.unshuffle", lambda s, p: ref(s, p) * (1 + 1e-6), lang="en").passed
    r = run_check("ch1.unshuffle", lambda s, p: ref(s, p) + 1e-3, lang="en")
    assert not r.passed and r.kind == "values"
    assert "torch.allclose, rtol=1e-05, atol=1e-08" in r.message
    exact = run_check("ch1.pick_per_row", get("ch1.pick_per_row").mistakes[1].fn, lang="en")
    assert "compared exactly" in exact.message


def test_values_message_names_the_first_differing_cell():
    r = run_check("ch1.pick_per_row", _mistake("ch1.pick_per_row", "wrong_dim").fn, lang="en")
    assert "values: 3 of 3 elements differ; first at [0]: expected 2, got 20" in r.message
    assert "[20,  0, 10]" in r.message  # got, printed in full


# --- not attempted, errors in the reader's code, bad calls -------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_stub_is_not_attempted(name):
    r = run_check(name, _stub, lang="en")
    assert (r.attempted, r.passed, r.case) == (False, False, None)
    assert r.message.startswith(f"… {name} not attempted yet")
    assert run_check(name, _stub, lang="zh").message.startswith(f"… {name} 还没有作答")


def test_exception_in_readers_code_is_reported_with_its_message_and_input():
    def answer(x, idx):
        return x.gather(1, idx.float().unsqueeze(1)).squeeze(1)

    r = run_check("ch1.pick_per_row", answer, lang="en")
    assert not r.passed and r.attempted and r.kind == "exception" and r.case == 1
    assert re.search(r"your function raised RuntimeError: gather\(\): Expected dtype int(32/int)?64 for index", r.message)
    assert "x: shape (3, 5), int64" in r.message and "idx: shape (3,), int64" in r.message
    assert "Traceback" not in r.message

    def crash(x, idx):
        raise KeyError("no such thing")

    r = run_check("ch1.pick_per_row", crash, lang="en")
    assert r.kind == "exception" and "your function raised KeyError: 'no such thing'" in r.message


def test_exception_of_a_known_mistake_is_named():
    r = run_check("ch1.pick_per_row", lambda x, idx: x.gather(1, idx), lang="en")
    assert r.kind == "exception" and r.hint_key == "index_ndim"
    assert "Index tensor must have the same number of dimensions as input tensor" in r.message


def test_not_implemented_after_the_first_case_is_an_error_not_a_stub():
    ref = get("ch1.pick_per_row").reference

    def partial(x, idx):
        if x.shape[0] == 1:
            raise NotImplementedError("B == 1")
        return ref(x, idx)

    r = run_check("ch1.pick_per_row", partial, lang="en")
    assert r.attempted and not r.passed and r.case == 2 and "NotImplementedError: B == 1" in r.message


def test_unknown_name_lists_the_valid_names_and_the_closest():
    with pytest.raises(ValueError) as err:
        run_check("ch1.pick_per_rows", _stub)
    text = str(err.value)
    assert "Did you mean 'ch1.pick_per_row'?" in text
    assert all(n in text for n in ALL if n.startswith("ch1.")) and "ch2." not in text  # the names of its part
    with pytest.raises(ValueError, match="ch1.unshuffle"):
        check("nonsense", _stub)


def test_non_callable_is_a_type_error_saying_what_was_passed(capsys):
    with pytest.raises(TypeError) as err:
        check("ch1.pick_per_row", torch.zeros(3))
    assert "torch.Tensor of shape (3,)" in str(err.value)
    assert "check('ch1.pick_per_row', pick_per_row)" in str(err.value)
    with pytest.raises(TypeError, match="got None"):
        run_check("ch1.pick_per_row", None)
    assert capsys.readouterr().out == ""


def test_errors_for_bad_calls_follow_the_language(monkeypatch):
    monkeypatch.setenv("GATHERBOOK_LANG", "zh")
    with pytest.raises(ValueError, match="没有名为"):
        check("ch1.nope", _stub)
    with pytest.raises(TypeError, match="函数本身"):
        check("ch1.pick_per_row", 3)
    # an explicit lang= decides, whatever the environment or the folder says
    with pytest.raises(ValueError, match="There is no exercise called 'ch1.nope'"):
        run_check("ch1.nope", _stub, lang="en")
    with pytest.raises(TypeError, match="needs the function itself"):
        check("ch1.pick_per_row", 3, lang="en")
    monkeypatch.setenv("GATHERBOOK_LANG", "en")
    with pytest.raises(ValueError, match="没有名为"):
        get("ch1.nope", lang="zh")


# --- the reader cannot break the cases; devices -------------------------------------------------

def test_an_answer_that_changes_its_inputs_fails_and_cannot_change_the_cases():
    ex = get("ch1.pick_per_row")
    before = [tuple(t.clone() for t in c) for c in ex.cases()]

    def vandal(x, idx):
        out = ex.reference(x, idx)
        x.zero_()
        idx.zero_()
        return out

    r = run_check(ex.name, vandal, lang="en")
    assert (r.case, r.kind, r.facts, r.hint_key) == (1, "mutated_input", {"arg": "x"}, "generic.mutated_input")
    assert "changed its input `x` in place" in r.message
    after = ex.cases()
    assert all(torch.equal(a, b) for ca, cb in zip(before, after) for a, b in zip(ca, cb))
    assert run_check(ex.name, ex.reference, lang="en").passed


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_answer_on_cuda_is_moved_to_the_cpu():
    ref = get("ch1.pick_step_per_feature").reference
    assert run_check("ch1.pick_step_per_feature", lambda x, idx: ref(x.cuda(), idx.cuda()), lang="en").passed
    r = run_check("ch1.pick_step_per_feature", lambda x, idx: ref(x, idx).cuda() + 1, lang="en")
    assert r.kind == "values" and r.got.device.type == "cpu"


# --- language ----------------------------------------------------------------------------------

#: Glossary terms (book/glossary.md) that the Chinese texts translate; code spans stay in English.
_GLOSSARY_ZH = {"token": "词元", "tokens": "词元", "mask": "掩码", "masks": "掩码", "index": "索引",
                "indices": "索引", "indexes": "索引"}


@pytest.mark.parametrize("name", ALL)
def test_chinese_texts_follow_the_glossary(name):
    ex = get(name)
    for text in [title(name, "zh")] + [_hint(name, m.key, "zh") for m in ex.mistakes]:
        prose = re.sub(r"`[^`]*`", "", text)
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", prose)}
        found = {w: _GLOSSARY_ZH[w] for w in words & _GLOSSARY_ZH.keys()}
        assert not found, f"{name}: write {found} in: {text}"
        assert not re.search(r"[\u4e00-\u9fff][A-Za-z0-9(]|[A-Za-z0-9)][\u4e00-\u9fff]", prose), \
            f"{name}: a space between Chinese and Latin words or numbers: {text}"
        assert not re.search(r"[\u4e00-\u9fff][,:;()]|[,:;(][\u4e00-\u9fff]", prose), \
            f"{name}: full-width punctuation next to Chinese: {text}"


@pytest.mark.parametrize("name", ALL)
def test_titles_are_the_headings_of_the_exercises_in_both_editions(name):
    import json
    from pathlib import Path

    number = int(name.split(".")[0][2:])
    for lang in LANGUAGES:
        (path,) = (Path(__file__).resolve().parents[2] / "notebooks" / lang).glob(f"{number:02d}_*.ipynb")
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        from gatherbook_sphinx.notebooks import fenced_source  # the fences under JupyterLab's label

        headings = [line.split("}", 1)[1].strip() for c in cells if c["cell_type"] == "markdown"
                    for line in fenced_source(c).splitlines() if re.match(r"`{3,}\{exercise\}", line)]
        assert title(name, lang) in headings, f"{name} ({lang}): {title(name, lang)!r} is not one of {headings}"


def _answers(name):
    ex = get(name)
    yield "reference", ex.reference
    yield "stub", _stub
    yield "extra dim", lambda *a: ex.reference(*a).unsqueeze(-1)
    yield "raises", lambda *a: torch.zeros(2).gather(0, torch.tensor([5]))
    yield "float", lambda *a: ex.reference(*a).double()
    for m in ex.mistakes:
        yield m.key, m.fn


@pytest.mark.parametrize("name", ALL)
def test_every_language_renders_the_same_record(name):
    for label, fn in _answers(name):
        results = {lang: run_check(name, fn, lang=lang) for lang in LANGUAGES}
        en = results["en"]
        assert len({r.message for r in results.values()}) == len(LANGUAGES), label
        for lang, r in results.items():
            assert r.lang == lang
            assert (r.record(), r.facts, r.hint_params) == (en.record(), en.facts, en.hint_params), label


def test_language_follows_the_notebook_folder(tmp_path, monkeypatch):
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    assert run_check("ch1.unshuffle", _stub).message.startswith("… ch1.unshuffle 还没有作答")
    (tmp_path / "en").mkdir()
    monkeypatch.chdir(tmp_path / "en")
    assert run_check("ch1.unshuffle", _stub).message.startswith("… ch1.unshuffle not attempted")


# --- check(): printing and the picture -----------------------------------------------------------

def test_check_prints_one_line_on_success_and_returns_none(capsys):
    assert check("ch1.unshuffle", get("ch1.unshuffle").reference) is None
    out = capsys.readouterr().out
    assert out == "✔ ch1.unshuffle: all 12 cases passed\n"


def test_check_prints_the_failure_and_leaves_no_figure_open(capsys):
    assert check("ch1.pick_k_per_row", _mistake("ch1.pick_k_per_row", "same_for_every_row").fn) is None
    out = capsys.readouterr().out
    assert out.startswith(f"✘ ch1.pick_k_per_row: case 1 of {len(get('ch1.pick_k_per_row').cases())} failed\n")
    assert "likely mistake: `index_select` uses one list of columns" in out
    assert plt.get_fignums() == []


def test_figure_marks_the_differing_cells():
    pytest.importorskip("gatherbook.figures")
    r = run_check("ch1.pick_k_per_row", _mistake("ch1.pick_k_per_row", "wrong_dim").fn, lang="en")
    fig = exercises.figure(r)
    assert fig is not None
    plt.close(fig)
    r = run_check("ch1.pick_per_row", lambda x, idx: x.gather(1, idx), lang="en")
    assert exercises.figure(r) is None  # an exception: nothing to draw
    assert exercises.figure(run_check("ch1.unshuffle", get("ch1.unshuffle").reference)) is None


def test_result_repr_is_short():
    r = run_check("ch1.pick_per_row", _mistake("ch1.pick_per_row", "forgot_squeeze").fn, lang="en")
    assert isinstance(r, CheckResult)
    assert repr(r) == f"<CheckResult ch1.pick_per_row: failed case 1/{r.n_cases} (shape, hint=forgot_squeeze)>"
    assert "\n" not in repr(run_check("ch1.pick_per_row", _stub, lang="en"))


def test_an_unknown_lang_or_a_wrong_figure_argument_is_named():
    with pytest.raises(ValueError, match=r"lang='fr' is not a language of this book; expected one of en, zh"):
        run_check("ch1.pick_per_row", get("ch1.pick_per_row").reference, lang="fr")
    with pytest.raises(ValueError, match=r"lang='de' is not a language"):
        title("ch1.pick_per_row", "de")
    assert title("ch1.pick_per_row", "zh") == "找出错误：每行取一个元素"
    with pytest.raises(TypeError, match="figure needs the CheckResult that run_check returns; got str"):
        exercises.figure("ch1.pick_per_row")


@pytest.mark.parametrize("name", ALL)
def test_printed_feedback_fits_the_code_column(name, capsys):
    """What check() prints for every planted mistake fits 88 columns (a Chinese character takes
    two), in every language, and says the same as run_check's unwrapped message."""
    from gatherbook.exercises import messages

    for m in get(name).mistakes:
        for lang in LANGUAGES:
            check(name, m.fn, lang=lang)
            printed = capsys.readouterr().out
            wide = [line for line in printed.splitlines() if messages.columns(line) > 88]
            assert not wide, f"{name} {m.key} ({lang}): {wide[0]!r}"
            message = run_check(name, m.fn, lang=lang).message
            assert "".join(printed.split()) == "".join(message.split())


def test_fit_wraps_english_at_spaces_and_chinese_anywhere():
    from gatherbook.exercises.messages import columns, fit

    en = fit("likely mistake: " + "word " * 30, width=40)
    assert all(columns(line) <= 40 for line in en.splitlines())
    assert all(not line.endswith(" ") for line in en.splitlines())
    assert en.splitlines()[1].startswith("  word")
    zh = fit("可能的错误：" + "索引" * 30, width=40)
    assert [columns(line) <= 40 for line in zh.splitlines()] == [True] * len(zh.splitlines())
    assert fit("short") == "short"


def test_the_picture_shows_the_numbers_the_text_shows():
    """A float that the text writes as -0.0501 more than expected shows the same digits in the
    picture (it used to round to two decimals)."""
    from gatherbook.exercises import figure

    for name in ALL:
        ref = get(name).reference
        r = run_check(name, lambda *a, ref=ref: ref(*a) - 0.0501, lang="en")
        if r.kind == "values" and isinstance(r.got, torch.Tensor) and r.got.is_floating_point():
            fig = figure(r)
            if fig is not None:
                break
    else:
        pytest.fail("no float exercise gives a values failure with a picture: this test checks nothing")
    texts = {t.get_text() for ax in fig.axes for t in ax.texts}
    plt.close(fig)
    got = r.got.reshape(-1)[0].item()
    from gatherbook.exercises.messages import scalar
    assert scalar(got) in texts, (name, scalar(got), sorted(texts)[:20])
    assert scalar(got) in r.message
