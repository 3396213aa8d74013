"""The text of a check: :func:`render` turns the facts of a
:class:`~gatherbook.exercises.checker.CheckResult` into what :func:`~gatherbook.exercises.check`
prints, with the words of the edition (:mod:`gatherbook.exercises.words`). Nothing here decides
anything about the answer: the facts are final before a word is chosen, so the editions cannot
disagree. Numbers, shapes and values are written the same way in every edition.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any, Mapping

import torch

from gatherbook.exercises.guard import ops_text
from gatherbook.exercises.words import of, table, text

#: Tensors with at most this many elements are printed in full in feedback; larger ones by shape.
PRINT_LIMIT = 64

# --- numbers and shapes are written the same way in every language ----------------------------

def shape(t: torch.Tensor) -> str:
    """``(3, 5)``, ``(5,)``, ``()``: a shape written as a Python tuple."""
    return str(tuple(t.shape))


def scalar(v: Any) -> str:
    """A number as feedback prints (and its pictures draw) it: floats with at most four decimals,
    and a zero without a sign (``-0.0``, ``-0.00001``: ``0.0``; the values compared keep theirs)."""
    if isinstance(v, float):
        s = f"{v:.4f}".rstrip("0")
        s = s + "0" if s.endswith(".") else s
        return "0.0" if s == "-0.0" else s
    return str(v)


def type_name(v: Any) -> str:
    """``None``, ``list``, ``torch.Tensor``, ``numpy.ndarray`` ...: what a value is, for a message."""
    if v is None:
        return "None"
    t = type(v)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _values(t: torch.Tensor, indent: str) -> list[str]:
    """``t``'s values as aligned nested lists, one row per line (small tensors only)."""
    import numpy as np

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:  # NumPy has no bfloat16; every bfloat16 is exact in float32
        t = t.float()
    a = t.resolve_conj().resolve_neg().numpy()
    if a.ndim == 0:
        return [indent + scalar(a.item())]
    formatter = None
    if a.dtype.kind == "f":  # one width for all, so that the columns line up
        width = max(len(scalar(float(v))) for v in a.flat)
        formatter = {"float_kind": lambda v: scalar(float(v)).rjust(width)}
    text_ = np.array2string(a, separator=", ", threshold=10_000, max_line_width=10_000, formatter=formatter)
    return [(indent + line).rstrip() for line in text_.splitlines()]


def _describe(label: str, v: Any, lang: str, indent: str = "  ") -> list[str]:
    """A header line ``label: shape (3, 5), int64`` and, for a small tensor, its values."""
    sep = text(lang, "sep")
    if isinstance(v, torch.Tensor):
        dtype = str(v.dtype).removeprefix("torch.")
        lines = [f"{indent}{label}{sep}" + text(lang, "tensor", shape=shape(v), dtype=dtype)]
        if 0 < v.numel() <= PRINT_LIMIT and v.layout == torch.strided:
            lines += _values(v, indent + "    ")
        return lines
    if v is None:
        return [f"{indent}{label}{sep}None"]
    r = repr(v)
    if len(r) > 200:
        r = r[:200] + " ..."
    return [f"{indent}{label}{sep}{type(v).__name__} {r}"]


def hint(result, lang: str) -> str | None:
    """The hint ``result.hint_key`` names, in ``lang``: the exercise's or the checker's."""
    key = result.hint_key
    if key is None:
        return None
    if key.startswith("generic."):
        return text(lang, key, **result.hint_params)
    return of(result.name, lang)["hints"][key]


def _allowed(allowed, lang: str) -> str:
    """The allowed operations in ``lang``: each group as the words file writes it (its name first
    in Chinese), joined as the language joins a list; slicing in the Practice pages' words."""
    words = table(lang)
    return ops_text(allowed, words["checker"]["guard.group"], words["checker"]["guard.sep"],
                    words["practice"]["groups"], words["practice"]["op_names"], words["practice"]["list_sep"])


def _kind_line(ex, kind: str, facts: Mapping[str, Any], lang: str) -> str:
    """The line that says what failed; a values or device failure words its ``how`` first."""
    if kind == "rule" and facts["rule"] == "allowed_ops":  # the call, and what is allowed
        return (text(lang, "guard." + facts["how"], **facts) + "\n"
                + text(lang, "guard.allowed", ops=_allowed(ex.allowed, lang)))
    if kind == "rule":
        return of(ex.name, lang)["rules"][facts["rule"]].format(**facts)
    if kind == "values" and "how" not in facts:  # not tensors: the results as they are
        kind = "result"
    if kind in ("values", "device"):
        facts = {**facts, "how": text(lang, f"{kind}.{facts['how']}", **facts)}
    if kind == "exception" and facts.get("type") == "_Prying":  # the answer looked into the check
        facts = {**facts, "text": text(lang, "error.prying", what=facts["text"])}
    return text(lang, "kind." + kind, **facts)


def _heading(r, ex) -> str:
    """The words key of a failure's first line: a rule refused the answer (no case failed for its
    values), a case the search drew, an edge case of a puzzle (whose cases are its edge cases and the
    one the search found, as its passing line counts them), or a case of a chapter exercise."""
    if r.kind == "rule":
        return "refused"
    if r.found:
        return "failed.found"
    return "failed.edge" if ex.strategy is not None and ex.random_case is None else "failed"


def render(result, ex, lang: str) -> str:
    """The text of ``result`` (a check of exercise ``ex``) in ``lang``: what the answer printed
    during the check, summarised, first; then the verdict, what differed on the first failing case
    (a case the search found says so), its inputs, expected and got, and the likely mistake."""
    r, lines = result, []
    if r.n_printed:
        lines = [text(lang, "printed", count=r.n_printed)] + ["  | " + s[:120] for s in r.printed]
    if r.status == "passed" and r.searched is not None:
        return "\n".join(lines + [text(lang, "passed.search", name=r.name, edges=r.n_cases, search=r.searched)])
    if r.status in ("passed", "not_attempted", "timeout"):  # one sentence
        return "\n".join(lines + [text(lang, r.status, name=r.name, n=r.n_cases, case=r.case,
                                        **r.facts)])
    lines.append(text(lang, _heading(r, ex), name=r.name, case=r.case, n=r.n_cases))
    lines.append(_kind_line(ex, r.kind, r.facts, lang))
    if r.kind == "rule" and r.facts["rule"] == "allowed_ops":  # the values were right: no case to show
        return "\n".join(lines)
    lines.append(text(lang, "input"))
    for arg, value in zip(ex.args, r.inputs):
        lines += _describe(arg, value, lang)
    if r.kind != "device":  # (on the CPU the answer was right or not compared: only the device failed)
        lines += _describe(text(lang, "expected"), r.expected, lang, indent="")
        if r.status != "raised":
            lines += _describe(text(lang, "got"), r.got, lang, indent="")
    if (h := hint(r, lang)):
        lines.append(text(lang, "likely") + h)
    return "\n".join(lines)


#: the widest line :func:`fit` leaves: the code column of the book's pages holds 88 characters
WIDTH = 88


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def columns(text: str) -> int:
    """How many monospace columns ``text`` takes (a Chinese character takes two)."""
    return sum(2 if _wide(ch) else 1 for ch in text)


#: full-width closing punctuation never starts a line, opening brackets never end one (kinsoku)
NO_LINE_START = set("，。、：；！？）」』】》〉〕］｝”’…·%)]},.:;!?")
NO_LINE_END = set("（「『【《〈〔［｛“‘([{")


#: a shape or a position written as a tuple, ``(3, 5)``, ``(B, L - 1)``, ``[0, 1]``: never broken
TUPLE = re.compile(r"\([A-Za-z0-9_·.+\-*/ ]*(?:,[A-Za-z0-9_·.+\-*/ ]*)*\)|\[[A-Za-z0-9_·.+\-*/ ]*(?:,[A-Za-z0-9_·.+\-*/ ]*)*\]")
#: the longest tuple kept whole: a longer one (a row of values) may break after its commas
TUPLE_MAX = 24
#: a code span, ```b * K ... b * K + K - 1```: kept whole up to CODE_MAX characters (issue 37)
CODE = re.compile(r"`[^`\n]+`")
CODE_MAX = 32


def _pieces(line: str) -> list[str]:
    """``line`` cut where it may break: after a space and around every wide character, except
    before closing punctuation, after an opening bracket and inside a short tuple (a shape) or a short code span."""
    spans = [*((m, TUPLE_MAX) for m in TUPLE.finditer(line)), *((m, CODE_MAX) for m in CODE.finditer(line))]
    whole = {i for m, most in spans if m.end() - m.start() <= most for i in range(m.start() + 1, m.end())}
    kept: list[str] = []
    for i, (prev, ch) in enumerate(zip(" " + line, line)):
        breaks = (prev == " " or _wide(prev) or _wide(ch)) and i not in whole
        if not kept or (breaks and ch not in NO_LINE_START and prev not in NO_LINE_END):
            kept.append(ch)
        else:
            kept[-1] += ch
    return kept


def fit(message: str, width: int = WIDTH) -> str:
    """``message`` with every line longer than ``width`` columns wrapped, continued two spaces
    further in than the line it continues (for printing; :func:`render`'s text stays whole)."""
    out = []
    for line in message.split("\n"):
        if columns(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        current = ""
        for piece in _pieces(line):
            if current.strip() and columns(current + piece.rstrip()) > width:
                out.append(current.rstrip())
                current = indent + piece.lstrip(" ")
            else:
                current += piece
        out.append(current.rstrip())
    return "\n".join(out)
