"""Unit tests of gatherbook.i18n: which language a notebook's feedback is written in."""
import pytest

from gatherbook import i18n
from gatherbook.i18n import language, pick


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv(i18n.ENV_VAR, raising=False)


@pytest.mark.parametrize("folder, expected", [("zh", "zh"), ("en", "en"), ("elsewhere", "en")])
def test_language_follows_the_notebook_folder(monkeypatch, tmp_path, folder, expected):
    (tmp_path / "notebooks" / folder).mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "notebooks" / folder)
    assert language() == expected


def test_only_the_folder_name_counts(monkeypatch, tmp_path):
    (tmp_path / "zh" / "sub").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "zh" / "sub")
    assert language() == "en"


@pytest.mark.parametrize("value, expected", [("zh", "zh"), ("en", "en"), (" ZH ", "zh"), ("", "zh")])
def test_environment_variable_overrides_the_folder(monkeypatch, tmp_path, value, expected):
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    monkeypatch.setenv("GATHERBOOK_LANG", value)
    assert language() == expected  # an empty value means: not set
    (tmp_path / "en").mkdir()
    monkeypatch.chdir(tmp_path / "en")
    assert language() == ("en" if value == "" else expected)


@pytest.mark.parametrize("value", ["fr", "zh-cn", "english"])
def test_unknown_language_is_an_error(monkeypatch, value):
    monkeypatch.setenv("GATHERBOOK_LANG", value)
    with pytest.raises(ValueError, match=rf"GATHERBOOK_LANG={value!r} is not a language of this book; "
                                         r"expected one of en, zh"):
        language()


def test_pick_with_an_explicit_language():
    assert pick("row", "行", "en") == "row"
    assert pick("row", "行", "zh") == "行"


def test_pick_defaults_to_the_running_language(monkeypatch, tmp_path):
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    assert pick("row", "行") == "行"
    monkeypatch.setenv("GATHERBOOK_LANG", "en")
    assert pick("row", "行") == "row"


@pytest.mark.parametrize("lang", ["fr", "EN", ""])
def test_pick_rejects_an_unknown_language(lang):
    with pytest.raises(ValueError, match=rf"lang={lang!r} is not a language of this book"):
        pick("row", "行", lang)


def test_pick_checks_the_environment_too(monkeypatch):
    monkeypatch.setenv("GATHERBOOK_LANG", "de")
    with pytest.raises(ValueError, match="GATHERBOOK_LANG='de'"):
        pick("row", "行")


def test_resolve_returns_a_language_or_names_the_bad_one(monkeypatch, tmp_path):
    assert i18n.resolve("en") == "en" and i18n.resolve("zh") == "zh"
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    monkeypatch.delenv(i18n.ENV_VAR, raising=False)
    assert i18n.resolve() == "zh"
    for bad in ("fr", "", 3):
        with pytest.raises(ValueError, match=rf"lang={bad!r} is not a language of this book; expected one of en, zh"):
            i18n.resolve(bad)
