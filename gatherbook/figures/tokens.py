"""Pictures for the chapter on per-token log-probabilities: cells of the kit's one renderer, one
character per cell; a text longer than a line wraps, each line named by its first position."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
from matplotlib.figure import Figure

from gatherbook import args
from gatherbook.figures import style
from gatherbook.figures.gather import link_ids
from gatherbook.figures.grid import MARGIN, Panel, panel, render, shape_title, text_panel

__all__ = ["draw_shift", "draw_char_logprobs", "draw_token_mask", "draw_padding", "draw_token_logprobs_3d"]

_GREY, _BLUE, _ORANGE = style.STATE_FACES
_CHAR_W = 0.25  # inches: a cell that holds one character


def _line_length(longest: int, label_w: float) -> int:
    """Cells per line so that ``longest`` cells wrap into balanced lines within the figure width."""
    lines = math.ceil(longest / int((style.MAX_WIDTH - 2 * MARGIN - label_w - 0.1) // _CHAR_W))
    return math.ceil(longest / lines)


def _wrapped(name: str, texts: Sequence[str], faces: Sequence, title: str, cols: int) -> Panel:
    """One row of cells wrapped into lines of ``cols`` cells, each named by its first position."""
    starts = range(0, len(texts), cols)
    cut = [(list(texts[s:s + cols]), list(faces[s:s + cols])) for s in starts]
    return text_panel(name, [t + [""] * (cols - len(t)) for t, _ in cut],
                      [f + [None] * (cols - len(f)) for _, f in cut], title,  # None: no cell
                      row_names=tuple(map(str, starts)), col_numbers=False, cell_w=_CHAR_W)


@style.styled
def draw_shift(text: str, *, title: str | None = None) -> Figure:
    """The next-token shift on ``text`` (at most 12 characters): the tokens ``ids[t]``; the
    ``logits[t]`` computed from ``ids[:t+1]``; under each, the token it is scored against,
    ``ids[t+1]``. The last logits position scores nothing (cut by ``logits[:, :-1]``: a faint
    ``x``) and the first token is never a target (cut by ``ids[:, 1:]``: grey).

    Introduced in Chapter 2.
    """
    assert style.label("text", text, max_len=12), "text: at least one character"
    n = len(text)
    shown = text.replace(" ", "_")
    texts = [list(shown), [""] * (n - 1) + ["x"], list(shown[1:]) + [""]]
    faces = [[_GREY] + [style.PAPER] * (n - 1), [_BLUE] * (n - 1) + [style.FAINT_FACE],
             [_ORANGE] * (n - 1) + [style.FAINT_FACE]]
    return render([[text_panel("shift", texts, faces, row_names=("ids[t]", "logits[t]", "ids[t+1]"),
                               cell_w=0.3)]], title)


@style.styled
def draw_char_logprobs(rows: Mapping[str, tuple[str, torch.Tensor]], *, vmin: float = -10.0,
                       title: str | None = None) -> Figure:
    """Each character coloured by its log-probability under the model.

    ``rows``: a label -> ``(text, logp)``, at most 48 characters and the log-probabilities of
    characters 1, 2, ... (character 0 is never scored: grey), on cividis from ``vmin`` to 0 (a
    row ``logp`` under the texts). Long texts wrap at one column, so rows stay comparable.

    Introduced in Chapter 2.
    """
    assert args.reals("vmin", [vmin])[0] < 0, "vmin: a negative number (the scale ends at 0)"
    checked = []
    for label, (text, logp) in style.mapping("rows", rows).items():  # (text, logp) pairs
        assert style.label(f"rows[{label!r}][0]", text, max_len=48), "a text of one character or more"
        logp = args.tensor(f"rows[{label!r}][1]", logp, ndim=1)
        assert len(logp) == len(text) - 1, f"rows[{label!r}][1]: one log-prob per character after the first"
        checked.append((style.label("a key of rows", label, max_len=24), text, logp.detach().float().cpu().tolist()))
    shade = style.shades(vmin, 0.0)
    cols = _line_length(max(len(t) for _, t, _ in checked), style.text_width("48", style.FS_LABEL))
    panels = [[_wrapped(label, [c if c != " " else "" for c in text],
                        [_GREY] + [shade(max(v, vmin)) for v in logp], label, cols)]
              for label, text, logp in checked]
    ticks = [vmin * k / 5 for k in range(5, -1, -1)]
    scale = text_panel("logp", [[f"{v + 0.0:g}" for v in ticks]], [[shade(v) for v in ticks]], "logp",
                       col_numbers=False)
    return render(panels + [[scale]], title)


@style.styled
def draw_token_mask(tokens: Sequence[str], state: torch.Tensor, legend: Sequence[str], *,
                    row_label: str = "b", title: str | None = None) -> Figure:
    """A batch of token rows, each cell coloured by its state (e.g. 0 padding, 1 prompt, 2 scored).

    ``tokens``: one string per row, a character per cell (padding is drawn empty); ``state``:
    integers ``(rows, columns)``, at most 8 x 40, in ``0 .. len(legend) - 1``; ``legend`` names
    1 to 3 states, written under the rows beside their colours. A long row wraps, each line
    named by its first position.

    Introduced in Chapter 2.
    """
    args.tensor("state", state, ndim=2, kind="int")
    assert not isinstance(tokens, str) and not isinstance(legend, str), "tokens, legend: lists of str"
    tokens = [style.label(f"tokens[{i}]", t, max_len=40) for i, t in enumerate(tokens)]
    legend = [style.label(f"legend[{i}]", name, max_len=40) for i, name in enumerate(legend)]
    style.label("row_label", row_label, max_len=8)
    B, L = state.shape
    assert 1 <= B <= 8 and 1 <= L <= 40, f"state: 1 to 8 rows of 1 to 40 cells, got {B} x {L}"
    assert len(tokens) == B and all(len(t) == L for t in tokens), f"tokens: {B} strings of {L} characters"
    assert 1 <= len(legend) <= 3 and 0 <= int(state.min()) <= int(state.max()) < len(legend), \
        f"state: values in [0, {len(legend)}), one per name of legend (1 to 3 names)"
    st = state.cpu().tolist()
    cols = _line_length(L, style.text_width(str(L - 1), style.FS_LABEL))
    panels = [[_wrapped(f"{row_label}{b}", ["" if s == 0 or c == " " else c for c, s in zip(tokens[b], st[b])],
                        [style.STATE_FACES[s] for s in st[b]], f"{row_label}={b}", cols)] for b in range(B)]
    keys = [[("  ", style.STATE_FACES[s]), (f" {name}  ", None)] for s, name in enumerate(legend)]
    one_line = [seg for key in keys for seg in key]
    fits = style.text_width("".join(t for t, _ in one_line), style.FS_VALUE) + 0.3 < style.MAX_WIDTH - 2 * MARGIN
    return render(panels, title, note=[one_line] if fits else keys)


@style.styled
def draw_padding(tokens: Sequence[str], mask: torch.Tensor, *, left: bool = False,
                 title: str | None = None) -> Figure:
    """A padded batch lined up for scoring: which logits position scores which label, and the mask.

    ``tokens``: 1 to 4 strings of one length L (2 to 12), a character per token; ``mask``:
    ``(rows, L)``, 1 for a token and 0 for padding, left-padded if ``left`` else right-padded.
    Per row, five lines share the columns: ``ids``, ``mask``, ``logits[:, :-1]``, ``ids[:, 1:]``
    (each position's label, orange where it counts) and ``mask[:, 1:]``. A counted label whose
    logits position is padding (left padding's first token) is outlined in red.

    Introduced in Chapter 2.
    """
    assert not isinstance(tokens, str), "tokens: a list of str, one per row"
    tokens = [style.label(f"tokens[{b}]", t, max_len=12) for b, t in enumerate(tokens)]
    mask = args.tensor("mask", mask, ndim=2)
    B, L = mask.shape
    assert 1 <= B <= 4 and 2 <= L <= 12 and [len(t) for t in tokens] == [L] * B, \
        f"tokens: 1 to 4 strings of one length L (2 to 12), one per row of mask {(B, L)}"
    m = mask.detach().cpu().to(torch.int64)
    assert ((m == 0) | (m == 1)).all(), "mask: only 0 (padding) and 1 (a real token)"
    for b, row in enumerate(m.tolist()):
        assert row == sorted(row, reverse=not left), \
            f"mask[{b}] = {row} is not {'left' if left else 'right'}-padded: pass left={not left}"
    panels = []
    for b in range(B):
        ids, mk = tokens[b], m[b].tolist()
        counted = [v == 1 for v in mk[1:]]
        token = [style.PAPER if v else _GREY for v in mk]
        label = [_ORANGE if c else _GREY for c in counted] + [style.FAINT_FACE]
        texts = [list(ids), [str(v) for v in mk], [""] * (L - 1) + ["x"], list(ids[1:]) + [""],
                 [str(v) for v in mk[1:]] + [""]]
        faces = [token, token, [_BLUE] * (L - 1) + [style.FAINT_FACE], label, label]
        # a label counted although its logits position is padding: scored from padding
        wrong = [[False] * L] * 3 + [[c and v == 0 for c, v in zip(counted, mk)] + [False], [False] * L]
        panels.append([text_panel(f"b{b}", texts, faces, f"b={b}", mark=wrong, cell_w=_CHAR_W,
                                  row_names=("ids", "mask", "logits[:, :-1]", "ids[:, 1:]", "mask[:, 1:]"))])
    return render(panels, title)


@style.styled
def draw_token_logprobs_3d(logp: torch.Tensor, tokens: torch.Tensor, *, title: str | None = None) -> Figure:
    """The (B, L, V) case of per-token log-probs: per batch row, the (L, V) slab and its picks.

    ``logp``: ``(B, L, V)``, B <= 4, L <= 8, V <= 10; ``tokens``: ``(B, L)`` ids. Each grid
    ``logp[b]`` outlines and colours the cells picked, ``logp[b, t, tokens[b, t]]``; ``tokens``
    and ``out = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)`` follow in their colours.

    Introduced in Chapter 2.
    """
    logp = args.tensor("logp", logp, ndim=3, kind="float")
    tokens = args.tensor("tokens", tokens, ndim=2, kind="int")
    B, L, V = logp.shape
    assert tokens.shape == (B, L), f"tokens: shape (B, L) = {(B, L)}, one id per position of logp"
    ids = tokens.detach().cpu().to(torch.int64)
    assert ids.numel() == 0 or 0 <= ids.min() <= ids.max() < V, f"tokens: ids in 0 .. {V - 1}"
    assert B <= 4, f"logp has B = {B} rows, too many for a picture: draw logp[:4] and tokens[:4]"
    x = logp.detach().cpu()
    input_ids, index_ids = link_ids((B, L, V), 2, ids.unsqueeze(-1))
    out = torch.gather(x, 2, ids.unsqueeze(-1)).squeeze(-1)
    tagged = int(input_ids.max(initial=-1)) >= len(style.PALETTE)
    rows = [[panel(f"logp[{b}]", x[b], f"logp[{b}]  (L, V) = {(L, V)}", ids=input_ids[b], mark=input_ids[b] >= 0,
                   mark_color=style.PICK, tagged=tagged)] for b in range(B)]
    rows.append([panel("tokens", ids, shape_title("tokens", ids), ids=index_ids[..., 0], tagged=tagged),
                 panel("out", out, "out = logp.gather(-1, tokens.unsqueeze(-1))\n      .squeeze(-1)"
                       f"  {(B, L)}", ids=index_ids[..., 0], tagged=tagged)])
    return render(rows, title)
