"""JupyterLab's exercise and solution labels (``tools/notebooks.py labels``) say what the site's titles say:
the same words, the same numbers, page by page, in both editions."""
from __future__ import annotations

import html
import json
import re

import pytest

import site_helpers as sh

pytestmark = pytest.mark.slow


def site_titles(page: str) -> list[str]:
    found = re.findall(r'<p class="admonition-title">(.*?)</p>', page, flags=re.S)
    titles = [" ".join(html.unescape(re.sub(r"<[^>]+>", "", t)).split()) for t in found]
    # Sphinx's smart quotes; JupyterLab shows the apostrophe as written
    return [t.replace("\u2019", "'") for t in titles if re.match(r"(Exercise |Solution to |练习 |Puzzle |第 \d+ 题)", t)]


def lab_labels(nb: dict) -> list[str]:
    labels = [((c["metadata"].get("gatherbook") or {}).get("lab") or {}).get("label", "")
              for c in nb["cells"] if c["cell_type"] == "markdown"]
    return [label.strip("*") for label in labels if label and not label.startswith("<!--")]


def test_lab_labels_are_the_site_titles(site):
    checked = 0
    for path in sorted((sh.ROOT / "notebooks").glob("*/*.ipynb")):
        lang = path.parent.name
        page = site["path"] / lang / "notebooks" / lang / f"{path.stem}.html"
        labels = lab_labels(json.loads(path.read_text(encoding="utf8")))
        assert labels == site_titles(page.read_text(encoding="utf8")), path.relative_to(sh.ROOT)
        checked += len(labels)
    assert checked > 100, "the notebooks carry almost no labels: run python tools/notebooks.py labels"


@pytest.mark.parametrize("code, box, solution", [
    ("en", r"Puzzle (\d+) \(", r"Solution to Puzzle (\d+) \("),
    ("zh", r"第 (\d+) 题（", r"第 (\d+) 题（.*）的解答$"),
])
def test_the_practice_pages_title_a_puzzle_with_its_one_number(site, code, box, solution):
    """Issue 35: on the Practice pages a puzzle's box says "Puzzle 9" / 「第 9 题」, its solution the
    same number, 1, 2, ... over the part; 练习 / Exercise stay the chapters' words."""
    numbers = []
    pages = sorted((site["path"] / code / "notebooks" / code).glob("08_practice_*.html"))
    assert len(pages) == 5
    for page in pages:
        titles = site_titles(page.read_text(encoding="utf8"))
        assert titles and not [t for t in titles if t.startswith(("Exercise", "练习"))], (page.name, titles)
        for t in titles:
            sol = re.match(solution, t)
            if sol:
                assert int(sol.group(1)) == numbers[-1], (page.name, t)
            else:
                numbers.append(int(re.match(box, t).group(1)))
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 32
