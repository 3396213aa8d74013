"""One look for every figure of the book: font, sizes, inks, palettes, the output format.

The ONLY module of the package that sets a colour, a font size or a colour map (a unit test
finds none elsewhere). Sizes suit a 390 px phone (whole figures, values at 9 CSS px or more) and
a 741 px desktop column (no text below 10 CSS px); each constant below says what it draws.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TypeVar

import matplotlib
from matplotlib.colors import Normalize, to_rgb

from gatherbook.args import described

# --- type --------------------------------------------------------------------------------------
FONT = "DejaVu Sans Mono"  #: the one figure font (ships with matplotlib)
EM = 0.602  #: advance width of one DejaVu Sans Mono character, in ems
#: font sizes in points: cell values, row/column numbers, small labels, panel and figure titles
FS_VALUE, FS_NUMBER, FS_LABEL, FS_TITLE, FS_FIGTITLE = 10.0, 8.0, 9.0, 10.5, 11.5
FS_TAG = 7.5  #: small marks inside a cell (the link numbers of a gather picture)
FS_MIN = min(FS_VALUE, FS_NUMBER, FS_LABEL, FS_TITLE, FS_TAG)  #: no figure text is smaller

# --- sizes on screen ---------------------------------------------------------------------------
DPI = 100  #: CSS pixels per figure inch (figure.dpi of Jupyter's inline backend)
DENSITY = 2  #: image pixels per CSS pixel in the stored PNGs ('retina')
#: inches: the widest figure. Jupyter crops it with 0.1 in of padding a side (5.2 in = 520 px),
#: and a 390 px phone's 343 px column shows that at 66 %: cell values at 9.2 CSS px
MAX_WIDTH = 5.0
#: inches: a line chart, narrower, so that a phone shows its axis numbers (FS_LABEL) at 9 CSS px
CHART_WIDTH = 3.8
#: CSS px: the page's column on a 390 px phone, and the height of one phone screen (844 px less
#: the browser's bars): a picture of cells is at most one screen tall there (:func:`phone_height`)
PHONE_COLUMN, PHONE_SCREEN = 343, 700
#: inches that Jupyter's crop takes off a figure's width (its 0.18 in margins, less 0.1 in padding)
CROP = 0.16


def phone_height(width: float, height: float) -> float:
    """CSS px that a figure of ``width`` x ``height`` inches takes on a 390 px phone: shown at its
    own size, or shrunk to the column's width (the crop first)."""
    return height * DPI * min(1.0, PHONE_COLUMN / ((width - CROP) * DPI))

# --- inks --------------------------------------------------------------------------------------
INK = "#222222"  #: values, titles
MUTED = "#6b6b6b"  #: row and column numbers, slice labels, axis labels, arrows
EDGE = "#4a4a4a"  #: cell borders, bar edges
GRID = "#e0e0e0"  #: chart grid lines
MARK = "#d62728"  #: red: outlines where an answer differs, reference lines
PAPER = "#ffffff"  #: figure background and plain cells
QUIET_FACE = "#f1f1f1"  #: cells that are shown but not the point (input cells nobody reads)
QUIET_INK = "#7a7a7a"  #: text on QUIET_FACE: quieter than INK, still legible
MIN_QUIET_CONTRAST = 3.0  #: least contrast of QUIET_INK on QUIET_FACE (WCAG's large-text ratio)

# --- colours -----------------------------------------------------------------------------------
#: distinct categorical colours: tab10 without its grey (grey means "not read")
CATEGORICAL = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
               "#8c564b", "#e377c2", "#bcbd22", "#17becf")
SEQUENTIAL = "cividis"  #: colour map of a value scale (red-green colour-blind safe)
GREYS = "gray"  #: colour map of a grey image
HOLE = "#3a3a3a"  #: a hole of a grid world
PICK = "#e66100"  #: orange outline of a picked cell: visible on every colour of SEQUENTIAL
#: faces of token states (padding, prompt, scored) and of bars
STATE_FACES = ("#e6e6e6", "#9ecae1", "#fdae6b")
BAR = STATE_FACES[1]
FAINT_FACE = "#f4f4f4"  #: a cell that is cut off (nothing to score)
#: faces of draw_index_shapes' verdicts: light blue, orange, dark purple (apart in lightness too,
#: so red-green colour-blind readers and greyscale tell them apart; the words say it as well)
VERDICT_FACES = {"fine": STATE_FACES[1], "silent": STATE_FACES[2], "error": "#5e3c99"}


def lighten(colour: str, amount: float = 0.55) -> tuple[float, float, float]:
    """``colour`` mixed with white: ``amount=0`` keeps it, ``1`` gives white. RGB in 0..1."""
    rgb = to_rgb(colour)
    return tuple(float(round(c + (1.0 - c) * amount, 4)) for c in rgb)


#: cell faces that link cells: CATEGORICAL half-way to white, so INK reads on each of them
PALETTE = tuple(lighten(c) for c in CATEGORICAL)


def shades(lo: float, hi: float) -> Callable[[float], tuple]:
    """The colour of a value on the :data:`SEQUENTIAL` scale that runs from ``lo`` to ``hi``
    (to ``lo + 1`` when they are equal)."""
    cmap, norm = matplotlib.colormaps[SEQUENTIAL], Normalize(lo, hi if hi > lo else lo + 1)
    return lambda v: cmap(norm(v))


def text_width(text: str, fontsize: float) -> float:
    """Width in inches of ``text`` set in :data:`FONT` at ``fontsize`` points."""
    return len(text) * EM * fontsize / 72.0


def relative_luminance(colour) -> float:
    """WCAG 2 relative luminance of a matplotlib colour (0 for black, 1 for white)."""
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a, b) -> float:
    """WCAG 2 contrast ratio of two colours, from 1 (same) to 21 (black on white)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def ink_on(face) -> str:
    """The ink that reads best on ``face``: :data:`INK` on light faces, white on dark ones."""
    return INK if contrast_ratio(INK, face) >= contrast_ratio(PAPER, face) else PAPER


#: PNG text keys under which :func:`use_book_format` stores a figure's smallest text sizes
TEXT_PT_KEY, VALUE_PT_KEY = "gatherbook:min_text_pt", "gatherbook:min_value_pt"


def text_sizes(fig) -> dict[str, str]:
    """The smallest text of ``fig`` and its smallest cell value (texts with gid ``"value"``; every
    text where there is none), in points, as PNG metadata: tests/site/test_figure_layout.py
    reads them from each image and multiplies by the scale the page shows it at."""
    from matplotlib.text import Text

    fig.draw_without_rendering()  # tick labels get their texts
    hidden = {id(t) for ax in fig.axes if not ax.axison for axis in (ax.xaxis, ax.yaxis) for t in axis.findobj(Text)}
    shown = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]
    sizes = [t.get_fontsize() for t in shown] or [0.0]
    values = [t.get_fontsize() for t in shown if t.get_gid() == "value"] or sizes
    return {TEXT_PT_KEY: f"{min(sizes):g}", VALUE_PT_KEY: f"{min(values):g}"}


def use_book_format() -> None:
    """Make Jupyter show every figure as a PNG of :data:`DENSITY` x its CSS size (``retina``)
    carrying its :func:`text_sizes`; nothing outside IPython. PNG rather than SVG: nbval skips
    PNG, and SVG text carries ids and font paths that depend on the machine."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with Jupyter
        return
    shell = get_ipython()
    if shell is None:
        return
    from IPython.core.pylabtools import retina_figure
    from matplotlib.figure import Figure
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    assert DENSITY == 2, "matplotlib_inline's 'retina' is 2x"
    set_matplotlib_formats("retina")
    shell.display_formatter.formatters["image/png"].for_type(
        Figure, lambda fig: retina_figure(fig, base64=True, metadata=text_sizes(fig)))


# --- the shared matplotlib style ---------------------------------------------------------------
#: rcParams every figure of the book is drawn under (see :func:`styled`)
RC = {
    "font.family": "monospace",
    "font.monospace": [FONT],
    "font.size": FS_LABEL,
    "text.color": INK,
    "axes.edgecolor": EDGE,
    "axes.labelcolor": INK,
    "axes.titlesize": FS_TITLE,
    "axes.labelsize": FS_LABEL,
    "axes.prop_cycle": matplotlib.cycler(color=list(CATEGORICAL)),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "grid.color": GRID,
    "grid.linewidth": 0.6,
    # both axes' ticks: muted marks, labels in ink
    **{f"{axis}.{key}": value for axis in ("xtick", "ytick")
       for key, value in (("color", MUTED), ("labelcolor", INK), ("labelsize", FS_LABEL))},
    "legend.fontsize": FS_LABEL,
    "legend.frameon": False,
    "image.cmap": SEQUENTIAL,
    "figure.facecolor": PAPER,
    "figure.dpi": DPI,
    "figure.edgecolor": PAPER,
    "figure.titlesize": FS_FIGTITLE,
    "savefig.facecolor": PAPER,
    "svg.fonttype": "path",
}

_F = TypeVar("_F", bound=Callable)


@functools.cache
def _load_backend() -> None:
    """Load pyplot's backend outside any ``rc_context``, once: the inline backend switches
    interactive mode on when first loaded, and inside :func:`styled`'s ``rc_context`` that
    switch would be undone when the context closes (the notebook then shows no new figure)."""
    import matplotlib.pyplot as plt

    plt.switch_backend(plt.get_backend())


def styled(draw: _F) -> _F:
    """Decorator: run a drawing function under :data:`RC` (the caller's rcParams stay as they
    were), so every artist keeps the book's style when Jupyter renders the figure later; its
    ``title=``, which every drawing function takes, is checked here (:func:`label`)."""
    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        label("title", kwargs.get("title"), optional=True)
        _load_backend()
        with matplotlib.rc_context(RC):
            return draw(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


# --- what a figure shows: texts the figure font draws, and panels keyed by them -------------------

@lru_cache(maxsize=1)
def _drawable() -> frozenset[int]:
    from matplotlib import font_manager, ft2font

    path = font_manager.findfont(font_manager.FontProperties(family=FONT))
    return frozenset(ft2font.FT2Font(path).get_charmap())


def label(name: str, value: object, *, optional: bool = False, max_len: int = 80) -> str | None:
    """A text a figure shows: a one-line str of at most ``max_len`` characters, each one the
    figure font draws (``None`` passes when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {described(value)}.")
    if len(value) > max_len:
        raise ValueError(f"{name} must be at most {max_len} characters to fit a figure, "
                         f"got {len(value)}: {value!r}.")
    for ch in value:
        if not ch.isprintable() or ord(ch) not in _drawable():
            raise ValueError(
                f"{name} must be code and numbers (input, index, dim=1), got {value!r} with {ch!r}: "
                "one figure serves both editions, so words in the page's language go in the caption.")
    return value


def mapping(name: str, value: object, *, optional: bool = False) -> Mapping:
    """A non-empty mapping whose keys are labels (:func:`label`: a figure shows them), ``{}``
    for ``None`` when ``optional``."""
    if value is None and optional:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping (e.g. a dict), got {described(value)}.")
    if not value and not optional:
        raise ValueError(f"{name} must hold at least one entry, got an empty {type(value).__name__}.")
    for key in value:
        label(f"a key of {name}", key)
    return value
