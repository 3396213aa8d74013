"""JupyterLab's exercise and solution labels (``tools/notebooks.py labels``) say what the site's titles say:
the same words, the same numbers, page by page, in both editions."""
from __future__ import annotations

import html
import json
import re

import site_helpers as sh

pytestmark = __import__("pytest").mark.slow


def site_titles(page: str) -> list[str]:
    found = re.findall(r'<p class="admonition-title">(.*?)</p>', page, flags=re.S)
    titles = [" ".join(html.unescape(re.sub(r"<[^>]+>", "", t)).split()) for t in found]
    # Sphinx's smart quotes; JupyterLab shows the apostrophe as written
    return [t.replace("\u2019", "'") for t in titles if re.match(r"(Exercise|Solution to|练习) ", t)]


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
