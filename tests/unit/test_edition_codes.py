"""Where the code names an edition: a new edition (a third language) edits only the existing files
CONTRIBUTING.md lists under "Adding a language"; everything else reads the editions from
gatherbook/editions.py or from files named by the edition's code (notebooks/<code>/, book/<code>/,
gatherbook/words/<code>.yml, book/words/<code>.yml, _toc_<code>.yml ...).

The test reads every tracked file that the build, the package, the tools and CI run (not the tests,
not the per-edition files) for the code of an edition other than the first (the default, which a
new edition leaves as it is) used as a value: a quoted "zh", a path part /zh/ or _zh, a YAML key
zh:, a tag zh-CN or zh_CN. Comments and docstrings are left out."""
from __future__ import annotations

import io
import re
import subprocess
import tokenize
from pathlib import Path

from gatherbook.editions import CODES, EDITIONS

ROOT = Path(__file__).resolve().parents[2]

#: the existing files a new edition edits, as CONTRIBUTING.md lists them (keep the two together)
A_NEW_EDITION_EDITS = {
    "gatherbook/editions.py": "the table of editions: one row",
    "book/ext/gatherbook_sphinx/search.py": "the search tokenizer, for a language written without spaces",
    "book/pdf/print.css": "the print fonts, for a script the default font lacks",
    "book/_templates/author.html": "the byline's spacing, for a language written without spaces",
}

RUNS = re.compile(r"\.(py|js|html|css|ya?ml|toml|cfg)$|(^|/)Makefile$|^\.ci/run$")


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return out.split()


def _per_edition(path: str) -> bool:
    """A file of one edition: named by its code (notebooks/zh/..., _toc_zh.yml, words/zh.yml, README.zh.md)."""
    return any(re.search(rf"(^|[/_.]){code}([/_.]|$)", path) for code in CODES)


def _code_only(path: str, text: str) -> str:
    """A file without its comments (and a Python file without its docstrings)."""
    if path.endswith((".yml", ".yaml", ".toml", ".cfg")) or path.endswith("Makefile") or path == ".ci/run":
        return "\n".join(line.split(" #")[0] if not line.lstrip().startswith("#") else "" for line in text.split("\n"))
    if not path.endswith(".py"):
        return text
    kept, previous = [], tokenize.INDENT
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        docstring = tok.type == tokenize.STRING and previous in (tokenize.INDENT, tokenize.NEWLINE, tokenize.DEDENT)
        if tok.type != tokenize.COMMENT and not docstring:
            kept.append(tok.string)
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok.type
    return " ".join(kept)


def _names_an_edition(text: str) -> bool:
    tags = "|".join(re.escape(e.tag) for e in EDITIONS[1:] if e.tag != e.code) or "(?!)"
    codes = "|".join(CODES[1:])
    pattern = rf"[\"'/_](?:{codes})[\"'/_]|^(?:{codes}):|\b(?:{tags})\b|\b(?:{codes})_[A-Z]{{2}}\b"
    return re.search(pattern, text, re.M) is not None


def test_a_new_edition_edits_only_the_files_contributing_lists():
    found = {p for p in _tracked() if RUNS.search(p) and not p.startswith(("tests/", "notebooks/"))
             and not _per_edition(p) and _names_an_edition(_code_only(p, (ROOT / p).read_text(encoding="utf8")))}
    assert found <= set(A_NEW_EDITION_EDITS), sorted(found - set(A_NEW_EDITION_EDITS))
    assert len(A_NEW_EDITION_EDITS) <= 5
    listed = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf8").split("## Adding a language", 1)[1]
    assert all(f"`{p}`" in listed for p in A_NEW_EDITION_EDITS), "CONTRIBUTING.md lists each"


def test_the_check_finds_an_edition_named_in_code():
    assert _names_an_edition(_code_only("x.py", 'code = "zh" if x else "en"\n'))
    assert _names_an_edition("zh:\n  title: x\n") and _names_an_edition('html[lang^="zh"] { }')
    assert not _names_an_edition(_code_only("x.py", '"""gb.setup(lang="zh")"""\nx = 1  # "zh"\n'))
