"""The complete example declaration of gatherbook/exercises/API.md works as its text says."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from gatherbook import exercises
from gatherbook.exercises import get, names, run_check, title

API = Path(exercises.__file__).with_name("API.md")


def test_the_example_declaration_of_the_api_works(chapter, words):
    text = API.read_text(encoding="utf-8")
    code = re.search(r"```python\n(\"\"\"Chapter 9 exercises.*?)```", text, re.S).group(1)
    chapter("ch9", code)
    for lang in ("en", "zh"):  # its words, as the example's words files hold them
        block = re.search(rf"```yaml\n# gatherbook/words/{lang}.yml\n(.*?)```", text, re.S).group(1)
        words("ch9.row_max", **{lang: yaml.safe_load(block)["exercises"]["ch9.row_max"]})
    assert names() == ["ch9.row_max"]
    ex = get("ch9.row_max")
    assert title("ch9.row_max", "zh") == "每行的最大值"
    assert run_check(ex.name, ex.reference, lang="zh").passed
    assert all(run_check(ex.name, fn, lang="en").passed for fn in ex.right)
    for m in ex.mistakes:
        assert run_check(ex.name, m.fn, lang="zh").hint_key == m.key
    for w in ex.wrong:
        r = run_check(ex.name, w.fn, lang="en")
        assert not r.passed and r.hint_key == w.hint, r.message
        assert w.kind is None or r.kind == w.kind, r.message
