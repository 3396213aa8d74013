"""What a cell prints, folded: the output under a Predict question that gives its answer away.

A Predict question's answer is folded (a ``<details>`` in its markdown), and so must be the output of
the cell below it, which prints that answer. A cell's own fold does not hold in JupyterLab: Lab
shows a cell's output again each time the cell runs, so Run All laid every answer open (issue 38).
The fold is therefore the output itself::

    with gb.folded():                       # prints nothing in plain view
        print(torch.gather(x, 0, idx0))

    with gb.folded(raises=IndexError):      # the Predict asks whether it raises
        torch.gather(x, 1, torch.tensor([[-1]]))

The notebook, the site and JupyterLab show a closed ``<details>`` whose summary says what it holds;
the text inside is what the block printed (and the error it raised, as ``IndexError: ...``), then
the pictures the block drew through :func:`hold_figure` (a check's picture: ``gb.check`` inside the
block, as under a find-the-bug exercise that asks the reader to predict its output first), as
PNGs at twice their CSS size with alt text from the words. The plain-text copy of the same output
is what nbval compares and what a terminal shows. A check that passes inside the block calls
:func:`unfold`: once the reader's stub is right, its ✔ verdict is shown open.
"""
from __future__ import annotations

import contextlib
import dataclasses
import html
import io
import sys
from collections.abc import Iterator

from gatherbook.wordbook import table
from gatherbook.runtime import resolve


@dataclasses.dataclass
class _Fold:
    """An open :func:`folded` block: the <img> tags of its pictures, and whether it is shown open
    after all (:func:`unfold`)."""
    images: list[str] = dataclasses.field(default_factory=list)
    opened: bool = False


_OPEN: list[_Fold] = []  # the open folds, innermost last


def unfold() -> bool:
    """Show the innermost open :func:`folded` block's output open after all, when it gives nothing
    away: a check that passed (the reader fixed the stub, and the verdict is what they want to
    see, not a fold to click). Returns ``False`` when no fold is open."""
    if not _OPEN:
        return False
    _OPEN[-1].opened = True
    return True


def hold_figure(fig, alt: str) -> bool:
    """Put ``fig`` inside the innermost open :func:`folded` block's output, with ``alt`` as its
    alt text; returns ``False`` (and keeps nothing) when no fold is open, so that the caller
    displays it as usual."""
    if not _OPEN:
        return False
    from IPython.core.pylabtools import retina_figure

    from gatherbook.figures.style import text_sizes

    data, size = retina_figure(fig, base64=True, metadata=text_sizes(fig))
    alt = html.escape(alt, quote=False).replace('"', "&quot;")  # an apostrophe as itself, not &#x27;
    _OPEN[-1].images.append(f'<img src="data:image/png;base64,{data.strip()}" width="{size["width"]}" '
                     f'alt="{alt}" style="max-width: 100%; height: auto">')
    return True


def _show(text: str, label: str, images: list[str] = ()) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # no IPython: a script prints it
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        sys.stdout.write(text)
        return
    page = (f'<details class="predict-output"><summary>{html.escape(label)}</summary>'
            f'<pre>{html.escape(text)}</pre>{"".join(images)}</details>')
    display({"text/plain": text.rstrip("\n"), "text/html": page}, raw=True)


def _show_open(text: str, images: list[str]) -> None:
    """What the block printed, as it would print without the fold (and its pictures under it)."""
    sys.stdout.write(text)
    if images:
        from IPython.display import HTML, display

        sys.stdout.flush()
        display(HTML("".join(images)))


@contextlib.contextmanager
def folded(raises: type[BaseException] | tuple[type[BaseException], ...] | None = None,
           *, lang: str | None = None) -> Iterator[None]:
    """Fold what the ``with`` block prints (and, when ``raises`` names its type, the error it
    raises, as one line ``Type: message``) into one closed output, so that running the cell
    does not lay it open. Introduced in Chapter 1.

    Args:
        raises: the exception class (or a tuple of them) the block is expected to raise; it is
            shown folded and the cell goes on. Any other exception propagates as usual.
        lang: the words' language (default: the notebook's, from ``gb.setup``).

    Raises:
        TypeError: ``raises`` is not an exception class or a tuple of them.
        AssertionError: ``raises`` was given and the block raised nothing (the Predict's answer
            would be wrong).
    """
    kinds = raises if isinstance(raises, tuple) else (() if raises is None else (raises,))
    if not all(isinstance(k, type) and issubclass(k, BaseException) for k in kinds):
        raise TypeError(f"gb.folded(raises=...) takes an exception class or a tuple of them, such as "
                        f"IndexError or (IndexError, RuntimeError); got {raises!r}")
    words = table(resolve(lang))["notebook"]
    out = io.StringIO()
    error = None
    fold = _Fold()
    _OPEN.append(fold)
    try:
        with contextlib.redirect_stdout(out):
            try:
                yield
            except kinds as e:  # an empty tuple catches nothing
                error = e
    finally:
        _OPEN.pop()
    text = out.getvalue()
    if kinds and error is None:
        raise AssertionError(f"gb.folded(raises={raises!r}): the block raised nothing")
    if error is not None:
        message = str(error).strip().splitlines()
        text += f"{type(error).__name__}: {message[0] if message else ''}\n"
    if fold.opened:
        _show_open(text, fold.images)
    else:
        _show(text, words["folded_output"], fold.images)
