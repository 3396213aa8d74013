"""MathJax, offline, with only the components the pages use.

The pages' math is TeX with the macros of MathJax's base and ``ams`` packages (``\\frac``,
``\\operatorname``, ``\\text`` ...), which ``tex-chtml.js`` holds in one file; its CHTML output
needs the woff2 fonts. Those files, about 1.5 MB, come from the ``sphinx-mathjax-offline``
package (pinned in requirements.txt; its extension is not loaded, since it copies all 24 MB of
MathJax into every edition). ``book/build.py`` then keeps one copy for both editions
(``<site>/_shared/``). A page that needs a macro from another TeX package would need that
package's file from ``input/tex/extensions/`` (MathJax's autoload fetches it): add it to
:data:`COMPONENTS`; the site test that visits every page reports the failed request.
"""
from __future__ import annotations

import importlib.metadata
import shutil
from pathlib import Path

#: what the pages use, relative to MathJax's folder
COMPONENTS = ("tex-chtml.js", "output/chtml/fonts/woff-v2")
#: where the pages load it from, relative to ``_static``
PATH = "mathjax/tex-chtml.js"


def source() -> Path:
    """MathJax's folder inside the installed ``sphinx-mathjax-offline`` package."""
    dist = importlib.metadata.distribution("sphinx-mathjax-offline")
    return Path(dist.locate_file("sphinx-mathjax-offline/static/mathjax"))


def set_path(app, config) -> None:
    """``config-inited``: the pages load ``_static/mathjax/tex-chtml.js``."""
    config.mathjax_path = PATH


def copy_components(app, exception) -> None:
    """``build-finished``: copy :data:`COMPONENTS` into ``_static/mathjax``."""
    if exception is not None or app.builder.format != "html":
        return
    src, dest = source(), Path(app.outdir) / "_static" / "mathjax"
    for component in COMPONENTS:
        if (src / component).is_dir():
            shutil.copytree(src / component, dest / component, dirs_exist_ok=True)
        else:
            (dest / component).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / component, dest / component)
