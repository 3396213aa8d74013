"""Unit tests of gatherbook.runtime.setup(): the notebook's stated language wins over any guess."""
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
