# A two-notebook book for the reading-path conventions (tests/unit/test_sphinx_reading.py builds it
# with -W): deep-dive sections, predict-then-reveal answers, and a link to an anchor in another
# notebook. Only the parts of gatherbook_sphinx.setup() these need, plus the site's CSS and JS.
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "book" / "ext"))
from gatherbook_sphinx import anchors, deepdives  # noqa: E402

extensions = ["myst_nb"]
language = "en"
gatherbook_edition = "en"
nb_execution_mode = "off"
exclude_patterns = ["_build"]
html_static_path = [str(ROOT / "book" / "_static")]
html_css_files = ["gatherbook.css"]
html_js_files = ["gatherbook.js"]
html_theme = "sphinx_book_theme"
master_doc = "index"


def setup(app):  # the reading parts of gatherbook_sphinx.setup()
    app.add_config_value("gatherbook_edition", "en", "html")
    app.add_post_transform(deepdives.DeepDiveSections)
    app.add_node(deepdives.deep_dive_fold, html=deepdives.HTML, **deepdives.OTHER_WRITERS)
    app.connect("doctree-read", anchors.record_html_anchors)
