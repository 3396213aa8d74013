"""The published site is small: MathJax once with only what the pages use, nothing twice.

Uses the session's one build (``conftest.py``).
"""
from __future__ import annotations

import filecmp
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_helpers as sh  # noqa: E402

# issue 20: from 77 MB to 15 MiB. 16 MiB since the questions page (issue 36), the Practice ladder's
# second worked examples (issue 35) and chapter 7's pictures (issue 37) added 0.3 MiB of pages and
# figures: content, not copies (the tests below find a file twice or MathJax's unused parts).
MAX_BYTES = 16 * 1024 * 1024
MATHJAX_MAX_BYTES = 2 * 1024 * 1024  # tex-chtml.js and its woff2 fonts


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_the_site_is_at_most_16_mib(site):
    total = sum(p.stat().st_size for p in _files(site["path"]))
    biggest = sorted(_files(site["path"]), key=lambda p: -p.stat().st_size)[:8]
    assert total <= MAX_BYTES, (f"the site is {total / 2**20:.1f} MiB; the biggest files: "
                                + ", ".join(f"{p.relative_to(site['path'])} ({p.stat().st_size >> 10} KiB)"
                                            for p in biggest))


def test_mathjax_once_and_only_what_the_pages_use(site):
    found = [p for p in _files(site["path"]) if p.name == "tex-chtml.js"]
    assert [p.relative_to(site["path"]).as_posix() for p in found] == ["_shared/_static/mathjax/tex-chtml.js"]
    mathjax = found[0].parent
    assert sum(p.stat().st_size for p in _files(mathjax)) <= MATHJAX_MAX_BYTES
    assert not (mathjax / "sre").exists() and not (mathjax / "tex-svg-full.js").exists()


def test_no_file_is_published_twice(site):
    """No file of one edition is byte for byte a file of another at the same path (those are
    kept once, in _shared/). Except a page's source (``_sources/``: the bilingual glossary's is the
    same in both), which Sphinx's search loads by the edition's own path for its summaries."""
    root = site["path"]
    first = root / sh.EDITIONS[0]
    twice = []
    for path in _files(first):
        rel = path.relative_to(first)
        if rel.parts[0] == "_sources":
            continue
        for other in sh.EDITIONS[1:]:
            twin = root / other / rel
            if twin.is_file() and filecmp.cmp(path, twin, shallow=False):
                twice.append(rel.as_posix())
    assert not twice, twice[:20]
