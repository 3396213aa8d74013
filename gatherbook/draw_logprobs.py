"""Pictures for the chapter on per-token log-probabilities of a language model.

- :func:`draw_shift` -- which logits position scores which token (the next-token shift).
- :func:`draw_char_logprobs` -- each character of a text coloured by its log-probability.
- :func:`draw_token_mask` -- a batch of target tokens: padding, prompt, scored completion.
- :func:`draw_peaks` -- measured peak memory of several ways to compute token log-probs.
- :func:`draw_errors` -- error of low-precision variants against a float64 reference.

Labels are code identifiers, numbers and ASCII only: no words of either language, so one
figure serves both editions and the caption, in the page's language, says what to look at.
Figures have a white face and end a notebook cell with ``;``.
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

# one look for every picture of the book: gatherbook.style's font, inks and colour map
from gatherbook.style import EDGE as _EDGE
from gatherbook.style import FONT as _FONT
from gatherbook.style import INK as _INK
from gatherbook.style import MARK as _RED
from gatherbook.style import MUTED as _MUTED
from gatherbook.style import SEQUENTIAL, contrast_ratio, styled


__all__ = ["draw_shift", "draw_char_logprobs", "draw_token_mask", "draw_peaks", "draw_errors"]

_GREY = "#e6e6e6"
_BLUE = "#9ecae1"
_ORANGE = "#fdae6b"
_MAX_TITLE = 80
# readable with red-green colour blindness, dark blue (unlikely) to yellow (likely)
CHAR_CMAP = SEQUENTIAL


def _check_text(name: str, text: object, fn: str, max_len: int) -> str:
    if not isinstance(text, str) or not text:
        raise TypeError(f"{fn}: {name} must be a non-empty str; got {text!r}.")
    if not text.isascii() or "\n" in text:
        raise ValueError(f"{fn}: {name} must be one line of ASCII characters (labels are ASCII only); got {text!r}.")
    if len(text) > max_len:
        raise ValueError(f"{fn}: {name} has {len(text)} characters; at most {max_len} fit in a picture.")
    return text


def _check_title(title: object, fn: str) -> None:
    if title is not None:
        _check_text("title", title, fn, _MAX_TITLE)


def _check_strs(name: str, value: object, fn: str, what: str) -> list[str]:
    """A list or tuple of str (a bare str is refused: it would be read character by character)."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{fn}: {name} must be a list of str ({what}); got {type(value).__name__} {value!r}.")
    for i, v in enumerate(value):
        if not isinstance(v, str):
            raise TypeError(f"{fn}: {name}[{i}] must be a str ({what}); got {type(v).__name__} {v!r}.")
    return list(value)


def _is_real(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _check_reals(name: str, values: object, fn: str) -> list[float]:
    """A sequence of real numbers (list, tuple, 1-d tensor or array) as a list of floats."""
    if isinstance(values, (torch.Tensor, np.ndarray)):
        if values.ndim != 1 or values.dtype == bool or values.dtype == torch.bool:
            raise TypeError(f"{fn}: {name} must be a 1-d sequence of numbers; got a {values.ndim}-d "
                            f"{type(values).__name__} of dtype {values.dtype}.")
        values = values.tolist()
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{fn}: {name} must be a sequence of numbers (e.g. a list of floats); "
                        f"got {type(values).__name__} {values!r}.")
    for i, v in enumerate(values):
        if not _is_real(v):
            raise TypeError(f"{fn}: {name}[{i}] must be a number; got {type(v).__name__} {v!r}.")
    return [float(v) for v in values]


def _show(c: str) -> str:
    return "_" if c == " " else c


def _figure(width: float, height: float) -> Figure:
    return plt.figure(figsize=(width, height), facecolor="white")


def _ink_on(face) -> str:
    """White or black, whichever contrasts more with ``face``: at least 4.5:1 on all of cividis
    (the book's dark ink, #222222, falls to 4:1 on cividis's middle grey)."""
    return max(("white", "black"), key=lambda ink: contrast_ratio(ink, face))


def _box(ax, x: float, y: float, text: str, face, *, edge=_EDGE, color=_INK, size=11, lw=0.8, ls="-"):
    ax.add_patch(Rectangle((x, y), 1, 1, facecolor=face, edgecolor=edge, linewidth=lw, linestyle=ls))
    if text:
        ax.text(x + 0.5, y + 0.5, text, ha="center", va="center", fontsize=size, family=_FONT, color=color)


@styled
def draw_shift(text: str, *, title: str | None = None) -> Figure:
    """The next-token shift on one sequence ``text`` (at most 24 characters).

    Top row: the tokens ``ids[t]``; middle: ``logits[t]``, computed from ``ids[:t+1]``;
    bottom: the token each logits position is scored against, ``ids[t+1]``. The last logits
    position has nothing to score (it is cut by ``logits[:, :-1]``) and the first token is never
    a target (it is cut by ``ids[:, 1:]``).
    """
    text = _check_text("text", text, "draw_shift", 24)
    _check_title(title, "draw_shift")
    n = len(text)
    fig = _figure(0.5 * n + 2.6, 2.6)
    ax = fig.add_axes((0, 0, 1, 1))
    x0 = 2.2
    ax.set_xlim(0, x0 + n + 0.4)
    ax.set_ylim(-0.15, 4.6)
    ax.axis("off")
    rows = {"ids[t]": 3.2, "logits[t]": 1.6, "ids[t+1]": 0.0}
    for label, y in rows.items():
        ax.text(x0 - 0.25, y + 0.5, label, ha="right", va="center", fontsize=10, family=_FONT, color=_INK)
    for t, c in enumerate(text):
        x = x0 + t
        ax.text(x + 0.5, 4.35, str(t), ha="center", va="center", fontsize=8, family=_FONT, color=_MUTED)
        _box(ax, x, rows["ids[t]"], _show(c), _GREY if t == 0 else "white")
        last = t == n - 1
        _box(ax, x, rows["logits[t]"], "x" if last else "", "#f4f4f4" if last else _BLUE,
             edge="#aaaaaa" if last else _EDGE, color=_RED)
        if last:
            _box(ax, x, rows["ids[t+1]"], "", "white", edge="#aaaaaa", ls=(0, (2, 2)))
        else:
            _box(ax, x, rows["ids[t+1]"], _show(text[t + 1]), _ORANGE)
            ax.add_patch(FancyArrowPatch((x + 0.5, rows["logits[t]"]), (x + 0.5, rows["ids[t+1]"] + 1),
                                         arrowstyle="-|>", mutation_scale=8, color=_MUTED, lw=0.8))
        ax.add_patch(FancyArrowPatch((x + 0.5, rows["ids[t]"]), (x + 0.5, rows["logits[t]"] + 1),
                                     arrowstyle="-|>", mutation_scale=8, color=_MUTED, lw=0.8))
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=11, family=_FONT)
    return fig


@styled
def draw_char_logprobs(
    rows: Mapping[str, tuple[str, torch.Tensor]],
    *,
    vmin: float = -10.0,
    title: str | None = None,
) -> Figure:
    """Each character coloured by its log-probability under the model.

    ``rows`` maps a label to ``(text, logp)``, ``logp`` of shape ``(len(text) - 1,)``: the
    log-probability of characters 1, 2, ... (character 0 is never scored and is drawn grey).
    Colours run on the colour-blind-safe ``cividis`` scale from dark blue at ``vmin`` (and
    below, a negative number) to yellow at 0; each letter is white or dark, whichever
    contrasts more with its cell. Texts: at most 48 ASCII characters; labels at most 24.
    """
    if not isinstance(rows, Mapping) or not rows:
        raise TypeError(f"draw_char_logprobs: rows must be a non-empty mapping label -> (text, logp); got {rows!r}.")
    if not _is_real(vmin) or not vmin < 0:
        raise ValueError(f"draw_char_logprobs: vmin must be a negative number (the log-prob of the darkest "
                         f"colour; the scale ends at 0); got {vmin!r}.")
    _check_title(title, "draw_char_logprobs")
    checked = []
    for label, pair in rows.items():
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"draw_char_logprobs: rows[{label!r}] must be a (text, logp) pair; got {type(pair).__name__}.")
        text, logp = pair
        text = _check_text(f"rows[{label!r}][0]", text, "draw_char_logprobs", 48)
        if not isinstance(logp, torch.Tensor) or logp.shape != (len(text) - 1,):
            got = tuple(logp.shape) if isinstance(logp, torch.Tensor) else type(logp).__name__
            raise ValueError(
                f"draw_char_logprobs: rows[{label!r}][1] must be a tensor of shape ({len(text) - 1},) "
                f"(one log-prob per character after the first); got {got}."
            )
        checked.append((_check_text("label", str(label), "draw_char_logprobs", 24), text,
                        logp.detach().float().cpu().numpy()))
    width = max(len(t) for _, t, _ in checked)
    cw, rh = 0.25, 0.5  # inches per character and per row
    label_w = max(len(lbl) for lbl, _, _ in checked) * 0.11 + 0.35
    fig_w = label_w + cw * width + 1.1
    fig_h = rh * len(checked) + 0.35 + (0.35 if title else 0)
    fig = _figure(fig_w, fig_h)
    ax = fig.add_axes((label_w / fig_w, 0.2 / fig_h, cw * width / fig_w, rh * len(checked) / fig_h))
    cmap = plt.get_cmap(CHAR_CMAP)
    norm = plt.Normalize(vmin=vmin, vmax=0.0)
    for r, (label, text, logp) in enumerate(checked):
        y = len(checked) - 1 - r
        ax.text(-0.3, y + 0.5, label, ha="right", va="center", fontsize=10, family=_FONT, color=_INK)
        for t, c in enumerate(text):
            face = _GREY if t == 0 else cmap(norm(max(float(logp[t - 1]), vmin)))
            _box(ax, t, y + 0.06, c if c != " " else "", face, size=12, lw=0.5, color=_ink_on(face))
    ax.set_xlim(0, width)
    ax.set_ylim(0, len(checked) + 0.06)
    ax.axis("off")
    cax = fig.add_axes(((label_w + cw * width + 0.2) / fig_w, 0.2 / fig_h, 0.1 / fig_w, rh * len(checked) / fig_h))
    bar = fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), cax=cax)
    bar.set_label("logp", family=_FONT, fontsize=9)
    bar.ax.tick_params(labelsize=8)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=11, family=_FONT)
    return fig


@styled
def draw_token_mask(
    tokens: Sequence[str],
    state: torch.Tensor,
    legend: Sequence[str],
    *,
    row_label: str = "b",
    title: str | None = None,
) -> Figure:
    """A batch of token rows, each cell coloured by its state (e.g. 0 padding, 1 prompt, 2 scored).

    ``tokens`` holds one string per row (one character per cell; padding cells may hold any
    character, they are drawn empty); ``state`` is an integer tensor ``(rows, columns)`` with
    values ``0 .. len(legend) - 1``; ``legend`` names the states (1 to 3 of them). At most 8
    rows of 40 columns.
    """
    if not isinstance(state, torch.Tensor) or state.dim() != 2 or state.is_floating_point():
        raise ValueError(f"draw_token_mask: state must be a 2-d integer tensor (rows, columns); got {state!r}.")
    tokens = _check_strs("tokens", tokens, "draw_token_mask", "one string per row of state")
    legend = _check_strs("legend", legend, "draw_token_mask", "one name per state")
    for i, name in enumerate(legend):
        _check_text(f"legend[{i}]", name, "draw_token_mask", 40)
    _check_text("row_label", row_label, "draw_token_mask", 8)
    _check_title(title, "draw_token_mask")
    B, L = state.shape
    if B == 0 or L == 0:
        raise ValueError(f"draw_token_mask: state has shape {tuple(state.shape)}; it needs at least one row "
                         "and one column.")
    if len(tokens) != B or any(len(t) != L for t in tokens):
        raise ValueError(
            f"draw_token_mask: tokens must hold {B} strings of {L} characters (state has shape {tuple(state.shape)}); "
            f"got lengths {[len(t) for t in tokens]}."
        )
    if not 1 <= len(legend) <= 3 or int(state.min()) < 0 or int(state.max()) >= len(legend):
        raise ValueError(f"draw_token_mask: state values must lie in [0, {len(legend)}) for legend {list(legend)!r}.")
    if L > 40 or B > 8:
        raise ValueError(f"draw_token_mask: at most 8 rows of 40 cells fit in a picture; got {B} x {L}.")
    faces = [_GREY, _BLUE, _ORANGE][: len(legend)]
    height = 0.36 * (B + 0.6) + 0.55 + (0.4 if title else 0.1)
    fig = _figure(0.28 * L + 1.2, height)
    ax = fig.add_axes((0.6 / fig.get_figwidth(), 0.55 / height, 0.28 * L / fig.get_figwidth(),
                       0.36 * (B + 0.6) / height))
    st = state.cpu()
    for b in range(B):
        y = B - 1 - b
        ax.text(-0.3, y + 0.5, f"{row_label}={b}", ha="right", va="center", fontsize=8, family=_FONT, color=_MUTED)
        for t in range(L):
            s = int(st[b, t])
            c = tokens[b][t]
            _box(ax, t, y, "" if s == 0 or c == " " else c, faces[s], size=9, lw=0.5)
    for t in range(L):
        ax.text(t + 0.5, B + 0.3, str(t), ha="center", va="center", fontsize=6.5, family=_FONT, color=_MUTED)
    ax.set_xlim(0, L)
    ax.set_ylim(0, B + 0.6)
    ax.axis("off")
    handles = [Rectangle((0, 0), 1, 1, facecolor=f, edgecolor=_EDGE, linewidth=0.5) for f in faces]
    fig.legend(handles, list(legend), loc="lower left", ncol=len(legend), frameon=False,
               prop={"family": _FONT, "size": 9}, bbox_to_anchor=(0.6 / fig.get_figwidth(), 0.0))
    if title:
        fig.suptitle(title, x=0.02, y=1 - 0.08 / height, ha="left", va="top", fontsize=11, family=_FONT)
    return fig


@styled
def draw_peaks(peaks: Mapping[str, int], *, reference: int | None = None,
               reference_label: str = "logits", xlabel: str = "peak_memory (MB)",
               title: str | None = None) -> Figure:
    """Horizontal bars of measured peak memory in MB (``peaks`` maps a label to bytes).

    ``reference`` (bytes) draws a dashed line, e.g. at the size of the logits tensor.
    """
    if not isinstance(peaks, Mapping) or not peaks:
        raise TypeError(f"draw_peaks: peaks must be a non-empty mapping label -> bytes; got {peaks!r}.")
    for name, nbytes in [*((f"peaks[{k!r}]", v) for k, v in peaks.items()), ("reference", reference)]:
        if name == "reference" and nbytes is None:
            continue
        if not _is_real(nbytes):
            raise TypeError(f"draw_peaks: {name} must be a number of bytes (e.g. from peak_memory); "
                            f"got {type(nbytes).__name__} {nbytes!r}.")
        if nbytes < 0:
            raise ValueError(f"draw_peaks: {name} must be a number of bytes >= 0; got {nbytes!r}.")
    _check_text("xlabel", xlabel, "draw_peaks", 60)
    _check_title(title, "draw_peaks")
    labels = list(peaks)
    mb = np.array([peaks[k] / 1e6 for k in labels], dtype=float)
    fig = _figure(7.2, 0.42 * len(labels) + 0.9 + (0.3 if title else 0))
    ax = fig.add_subplot()
    y = np.arange(len(labels))[::-1]
    ax.barh(y, mb, color=_BLUE, edgecolor=_EDGE, linewidth=0.6)
    for yi, v in zip(y, mb):
        ax.text(v, yi, f" {v:.0f} MB", va="center", fontsize=9, family=_FONT, color=_INK)
    ax.set_yticks(y, labels, fontsize=9, family=_FONT)
    if reference is not None:
        ax.axvline(reference / 1e6, color=_RED, linestyle="--", linewidth=1)
        ax.text(reference / 1e6, y.max() + 0.6, f"{reference_label} = {reference / 1e6:.0f} MB ", color=_RED,
                fontsize=8.5, family=_FONT, ha="right", va="center")
    ax.set_xlim(0, max(mb.max(), (reference or 0) / 1e6) * 1.22)
    ax.set_ylim(-0.6, len(labels) + 0.1)
    ax.set_xlabel(xlabel, family=_FONT, fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_facecolor("white")
    if title:
        ax.set_title(title, loc="left", fontsize=10.5, family=_FONT)
    fig.tight_layout()
    return fig


@styled
def draw_errors(x: Sequence[float], errors: Mapping[str, Sequence[float]], *, xlabel: str,
                ylabel: str = "max |err|", title: str | None = None) -> Figure:
    """Lines of errors (log scale) against ``x``; ``errors`` maps a label to one value per ``x``.

    ``x``: a sequence of ``n`` numbers; each ``errors[label]``: a sequence of ``n`` numbers (values
    below 1e-9, zeros included, are drawn at 1e-9).
    """
    x = _check_reals("x", x, "draw_errors")
    if not isinstance(errors, Mapping) or not errors:
        raise TypeError(f"draw_errors: errors must be a non-empty mapping label -> values; got {errors!r}.")
    errors = {k: _check_reals(f"errors[{k!r}]", v, "draw_errors") for k, v in errors.items()}
    for k, v in errors.items():
        if len(v) != len(x):
            raise ValueError(f"draw_errors: errors[{k!r}] has {len(v)} values for {len(x)} x positions.")
    _check_text("xlabel", xlabel, "draw_errors", 60)
    _check_text("ylabel", ylabel, "draw_errors", 40)
    _check_title(title, "draw_errors")
    fig = _figure(7.2, 3.2)
    ax = fig.add_subplot()
    markers = ["o", "s", "^", "D"]
    for i, (label, v) in enumerate(errors.items()):
        ax.plot(x, [max(e, 1e-9) for e in v], marker=markers[i % 4], label=label, linewidth=1.4)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel, family=_FONT, fontsize=9)
    ax.set_ylabel(ylabel, family=_FONT, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(True, which="major", color="#e0e0e0", linewidth=0.6)
    ax.legend(prop={"family": _FONT, "size": 8.5}, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title, loc="left", fontsize=10.5, family=_FONT)
    fig.subplots_adjust(left=0.12, right=0.58, bottom=0.16, top=0.9 if title else 0.95)
    return fig
