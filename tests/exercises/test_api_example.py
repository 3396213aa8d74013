"""The complete example declaration of gatherbook/exercises/API.md works as its text says."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from gatherbook import exercises
from gatherbook.exercises import get, names, run_check, title

API = Path(exercises.__file__).with_name("API.md")


def test_the_example_declaration_of_the_api_works(tmp_path, monkeypatch):
    code = re.search(r"```python\n(\"\"\"Chapter 7 exercises.*?)```", API.read_text(encoding="utf-8"), re.S).group(1)
    (tmp_path / "ch7.py").write_text(code, encoding="utf-8")
    monkeypatch.setattr(exercises, "__path__", [*exercises.__path__, str(tmp_path)])
    monkeypatch.setattr(exercises, "CHAPTERS", ("ch7",))
    monkeypatch.setattr(exercises, "_REGISTRY", {})
    monkeypatch.delitem(sys.modules, "gatherbook.exercises.ch7", raising=False)
    assert names() == ["ch7.row_max"]
    ex = get("ch7.row_max")
    assert title("ch7.row_max", "zh") == "每行的最大值"
    assert run_check(ex.name, ex.reference, lang="zh").passed
    assert all(run_check(ex.name, fn, lang="en").passed for fn in ex.right)
    for m in ex.mistakes:
        assert run_check(ex.name, m.fn, lang="zh").hint_key == m.key
    for w in ex.wrong:
        r = run_check(ex.name, w.fn, lang="en")
        assert not r.passed and r.hint_key == w.hint, r.message
        assert w.kind is None or r.kind == w.kind, r.message
