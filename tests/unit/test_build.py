"""book/build.py without a build: merging the configs, and a bad edition named in the message."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
# loaded by path under its own name: "build" is also the name of a PyPI package
_spec = importlib.util.spec_from_file_location("gatherbook_book_build", ROOT / "book" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def test_merge_overrides_win_dicts_merge_lists_replace():
    base = {"a": 1, "d": {"x": 1, "y": 2}, "l": [1, 2]}
    got = build.merge(base, {"a": 2, "d": {"y": 3}, "l": [9]})
    assert got == {"a": 2, "d": {"x": 1, "y": 3}, "l": [9]}
    assert base == {"a": 1, "d": {"x": 1, "y": 2}, "l": [1, 2]}  # the base is not changed


def test_chinese_config_is_the_english_one_with_the_overrides(tmp_path):
    en = yaml.safe_load(build.edition_config("en", tmp_path).read_text(encoding="utf8"))
    assert en["title"] == "The gather book" and en["sphinx"]["config"]["gatherbook_edition"] == "en"
    zh = yaml.safe_load(build.edition_config("zh", tmp_path).read_text(encoding="utf8"))
    overrides = yaml.safe_load((ROOT / "book" / "zh" / "config.yml").read_text(encoding="utf8"))
    assert zh["sphinx"]["config"]["language"] == overrides["sphinx"]["config"]["language"]
    assert zh["title"] == "gather 之书"  # from book/words/zh.yml
    assert zh["sphinx"]["config"]["html_theme_options"]["navbar_persistent"] == []  # the base stays
    for path in zh.get("sphinx", {}).get("local_extensions", {}).values():
        assert Path(path).is_absolute()


def test_unknown_edition_is_named():
    with pytest.raises(ValueError, match=r"lang='fr' is not a language of this book; expected one of en, zh"):
        build.edition_config("fr", Path("unused"))


def test_translations_are_compiled_in_a_copy_under_the_work_folder(tmp_path):
    zh = yaml.safe_load(build.edition_config("zh", tmp_path).read_text(encoding="utf8"))
    (folder,) = zh["sphinx"]["config"]["locale_dirs"]
    assert Path(folder).is_relative_to(tmp_path)
    assert (Path(folder) / "zh_CN" / "LC_MESSAGES" / "sphinx.po").is_file()

