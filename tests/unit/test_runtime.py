"""Unit tests of gatherbook.runtime: the notebook's language and device.

The language a notebook's setup cell states wins over any guess; without one, GATHERBOOK_LANG,
then the working folder's name. The device is CUDA when available; GATHERBOOK_DEVICE overrides.
"""
import pytest
import torch

import gatherbook as gb
from gatherbook import runtime


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.delenv(runtime.LANG_ENV, raising=False)
    monkeypatch.delenv(runtime.DEVICE_ENV, raising=False)
    runtime.set_language(None)
    yield
    runtime.set_language(None)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_setup_sets_the_language_whatever_the_folder(monkeypatch, tmp_path, lang):
    for folder in ("zh", "en", "Downloads"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        monkeypatch.setenv(runtime.LANG_ENV, "en" if lang == "zh" else "zh")
        assert gb.setup(lang=lang) == runtime.device()
        assert runtime.language() == lang


def test_setup_returns_the_cpu_when_asked(monkeypatch):
    monkeypatch.setenv(runtime.DEVICE_ENV, "cpu")
    assert gb.setup(lang="en") == torch.device("cpu")


def test_without_setup_the_folder_decides(monkeypatch, tmp_path):
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    assert runtime.language() == "zh"


@pytest.mark.parametrize("bad", ["fr", "", None, 1, "zh-CN"])
def test_setup_names_a_bad_language(bad):
    with pytest.raises(ValueError, match=r"lang=.* is not a language of this book; expected one of en, zh"):
        gb.setup(lang=bad)
    assert runtime.language() == "en"  # nothing was set


# --- the language without setup() -------------------------------------------------------------

@pytest.mark.parametrize("folder, expected", [("zh", "zh"), ("en", "en"), ("elsewhere", "en")])
def test_language_follows_the_notebook_folder(monkeypatch, tmp_path, folder, expected):
    (tmp_path / "notebooks" / folder).mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "notebooks" / folder)
    assert runtime.language() == expected


def test_only_the_folder_name_counts(monkeypatch, tmp_path):
    (tmp_path / "zh" / "sub").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "zh" / "sub")
    assert runtime.language() == "en"


@pytest.mark.parametrize("value, expected", [("zh", "zh"), ("en", "en"), (" ZH ", "zh"), ("", "zh")])
def test_environment_variable_overrides_the_folder(monkeypatch, tmp_path, value, expected):
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    monkeypatch.setenv(runtime.LANG_ENV, value)
    assert runtime.language() == expected  # an empty value means: not set
    (tmp_path / "en").mkdir()
    monkeypatch.chdir(tmp_path / "en")
    assert runtime.language() == ("en" if value == "" else expected)


@pytest.mark.parametrize("value", ["fr", "zh-cn", "english"])
def test_unknown_language_in_the_environment_is_an_error(monkeypatch, value):
    monkeypatch.setenv(runtime.LANG_ENV, value)
    with pytest.raises(ValueError, match=rf"GATHERBOOK_LANG={value!r} is not a language of this book; "
                                         r"expected one of en, zh"):
        runtime.language()


def test_resolve_returns_a_language_or_names_the_bad_one(monkeypatch, tmp_path):
    assert runtime.resolve("en") == "en" and runtime.resolve("zh") == "zh"
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    assert runtime.resolve() == "zh"
    for bad in ("fr", "", 3, "EN"):
        with pytest.raises(ValueError, match=rf"lang={bad!r} is not a language of this book; expected one of en, zh"):
            runtime.resolve(bad)


# --- the device --------------------------------------------------------------------------------

@pytest.fixture
def cuda(monkeypatch):
    """Pretend CUDA is (or is not) available: cuda(True) / cuda(False)."""
    def set_available(available: bool) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    return set_available


@pytest.mark.parametrize("available, expected", [(True, "cuda"), (False, "cpu")])
def test_default_is_cuda_when_available(cuda, available, expected):
    cuda(available)
    assert runtime.device() == torch.device(expected)


@pytest.mark.parametrize("available", [True, False])
def test_empty_variable_means_the_default(monkeypatch, cuda, available):
    cuda(available)
    monkeypatch.setenv(runtime.DEVICE_ENV, "  ")
    assert runtime.device() == torch.device("cuda" if available else "cpu")


@pytest.mark.parametrize("value", ["cpu", "CPU", " cpu\n"])
def test_cpu_override_wins_even_with_a_gpu(monkeypatch, cuda, value):
    cuda(True)
    monkeypatch.setenv(runtime.DEVICE_ENV, value)
    assert runtime.device() == torch.device("cpu")


def test_cuda_override_with_a_gpu(monkeypatch, cuda):
    cuda(True)
    monkeypatch.setenv(runtime.DEVICE_ENV, "cuda")
    assert runtime.device() == torch.device("cuda")


def test_cuda_override_without_a_gpu_is_an_error_not_a_fallback(monkeypatch, cuda):
    cuda(False)
    monkeypatch.setenv(runtime.DEVICE_ENV, "cuda")
    with pytest.raises(ValueError, match=r"GATHERBOOK_DEVICE=cuda, but torch\.cuda\.is_available\(\) is False") as err:
        runtime.device()
    assert "unset GATHERBOOK_DEVICE or set it to 'cpu'" in str(err.value)
    assert torch.__version__ in str(err.value)


@pytest.mark.parametrize("value", ["gpu", "tpu", "cuda:1", "mps", "0"])
def test_unknown_device_is_an_error_that_lists_the_choices(monkeypatch, cuda, value):
    cuda(True)
    monkeypatch.setenv(runtime.DEVICE_ENV, value)
    with pytest.raises(ValueError, match=rf"GATHERBOOK_DEVICE={value!r} is not a device this book knows; "
                                         r"expected one of cpu, cuda"):
        runtime.device()


def test_real_machine_default_matches_torch():
    assert runtime.device().type == ("cuda" if torch.cuda.is_available() else "cpu")
