"""The Practice pages of every edition, written from the puzzles' declarations (maintainers).

    python tools/notebooks.py practice     # writes notebooks/<code>/08_practice*.ipynb

The code cells come from the declarations (the loops, the stub's signature, the solution), so the
editions have the same code cells by construction; the prose is the words file's ``practice``
part (gatherbook/words/<code>.yml); the ladder's pages are the declaration modules'
(``gatherbook.exercises.declaration.pages``). Writing drops the stored outputs: execute the
notebooks afterwards (``make execute``).
"""
from __future__ import annotations

import importlib
import inspect
import io
import re
import textwrap
import tokenize
import unicodedata
from typing import Any, Callable

import gatherbook.exercises as E
from gatherbook.editions import CODES
from gatherbook.exercises.guard import GROUPS, expand
from gatherbook.exercises.words import of, table
from gatherbook_sphinx import reading_time
from gatherbook_sphinx.notebooks import PUZZLE  # (book/ext: tools/notebooks.py puts it on the path)

INTRO = "08_practice"
FIRST = "puzzles.pick_per_row"  # the puzzle the first page works through

HIDDEN = {"source_hidden": True, "outputs_hidden": True}  # a folded solution cell, in JupyterLab

SETUP = '''import math

import torch
import gatherbook as gb

torch.manual_seed(0)
dev = gb.setup(lang="{lang}")  # {comment}'''

TRIES = {
    "squeeze": '''def pick_per_row(x, idx):
    return x.gather(1, idx.unsqueeze(1)).squeeze()


gb.check("puzzles.pick_per_row", pick_per_row)''',
    "take": '''def pick_per_row(x, idx):
    return torch.take_along_dim(x, idx.unsqueeze(1), dim=1).squeeze(1)


gb.check("puzzles.pick_per_row", pick_per_row)''',
    "loop": '''def pick_per_row(x, idx):
    out = torch.zeros(x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i] = x[i].gather(0, idx[i:i + 1])[0]
    return out


gb.check("puzzles.pick_per_row", pick_per_row)''',
    "shrink": '''def reverse(x):
    N = x.shape[0]
    return x.gather(0, torch.arange(N - 1, -1, -1) % 5)


gb.check("puzzles.reverse", reverse)''',
    "right": '''def pick_per_row(x, idx):
    return x.gather(1, idx.unsqueeze(1)).squeeze(1)


gb.check("puzzles.pick_per_row", pick_per_row)''',
}



def words(lang: str) -> dict[str, Any]:
    """The ``practice`` part of edition ``lang``'s words file."""
    return table(lang)["practice"]


def short(name: str) -> str:
    return name.split(".", 1)[1]


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + [parts[-1]]


def md(text: str, **meta) -> dict:
    return {"cell_type": "markdown", "metadata": meta, "source": _lines(text)}


def code(text: str, **meta) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": meta, "outputs": [],
            "source": _lines(text.rstrip("\n"))}


def source(fn: Callable[..., Any], name: str | None = None) -> str:
    """The source of a function, renamed to ``name`` (the notebooks' spec and solution cells)."""
    src = textwrap.dedent(inspect.getsource(fn))
    src = src[src.index("def "):]  # without the declaration above it
    if name:
        src = src.replace(f"def {fn.__name__}(", f"def {name}(", 1)
    return src


def _doc(lang: str, stem: str, label: str | None = None) -> str:
    return f"{{doc}}`{label or words(lang)['chapters'][stem]} <{stem}>`"


def _width(line: str) -> int:
    """Columns in a monospace font: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def page_title(number: str, lang: str) -> str:
    """``"Level 4b: Ragged batches and experts"``, in ``lang``: the page's own title, or its
    level's. A page is named by its level (``page_numbers``), never by the part's name."""
    w = words(lang)
    title = w["page_titles"].get(number) or w["levels"][int(number[0])]
    return w["page_title"].format(number=w["page_numbers"][number], title=title)


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets: ``"x: (B, N), k: int"`` -> two parts."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([" and 1 or (-1 if ch in ")]" else 0)
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()]


_CORE = re.compile(r"^(?P<core>(?:\([^)]*\))?\s*(?:int64|float32|float|bool|int)?)\s*(?P<cond>.*)$")
_RANGE_EXTRA = re.compile(r"^in (?P<range>[\[(][^\]\)]*[\])])(?P<extra>.*)$")


def signature_parts(signature: str) -> tuple[str, list[tuple[str, str, str]]]:
    """A puzzle's signature as code without its conditions, and the conditions:
    ``(kind, subject, text)`` with kind ``in`` (a range, maybe with an extra such as ``or -100``),
    ``cmp`` (``>= 0``), ``eq`` (``= lengths.sum()``), ``phrase`` (a whole condition in words) or
    ``dtype`` (the result has an argument's dtype)."""
    head, result = signature.split("  ->  ")
    code, conds, last = [], [], ""
    for part in _split_top(head):
        m = re.match(r"^(\w+): (.*)$", part)
        if not m:  # a condition of its own: "values distinct within a row", "L >= max length"
            conds.append(("phrase", last, part))
            continue
        last, rest = m.groups()
        core = _CORE.match(rest)
        code.append(f"{last}: {core['core'].strip()}" if core["core"].strip() else last)
        cond = core["cond"].strip()
        if cond.startswith("in "):
            conds.append(("in", last, cond[3:]))
        elif cond.startswith(("= ",)):
            conds.append(("eq", last, cond[2:]))
        elif cond.startswith((">= ", "<= ", "> ", "< ")):
            conds.append(("cmp", last, cond))
        elif cond:
            conds.append(("phrase", last, cond))
    out = _split_top(result)
    core = _CORE.match(out[0])
    if core["cond"].startswith("in "):
        conds.append(("in", "", core["cond"][3:]))
    for extra in out[1:]:
        conds.append(("dtype", "", extra.replace("'s dtype", "").replace("' dtype", "")))
    return ", ".join(code) + "  ->  " + core["core"].strip(), conds


def conditions(signature: str, lang: str) -> str:
    """The signature's conditions as a sentence in ``lang`` (empty when it has none)."""
    w = words(lang)["conditions"]
    said = []
    for kind, subject, text in signature_parts(signature)[1]:
        if kind == "in":
            m = _RANGE_EXTRA.match("in " + text)
            rng, extra = (m["range"], m["extra"].strip()) if m else (text, "")
            key = "result_in" if not subject else "in"
            said.append(w[key].format(name=subject, range=rng) + (w["extras"][extra] if extra else ""))
        elif kind == "cmp":
            said.append(w["cmp"].format(name=subject, cond=text))
        elif kind == "eq":
            said.append(w["eq"].format(name=subject, expr=text))
        elif kind == "dtype":
            said.append(w["dtype"].format(name=text))
        else:
            said.append(w["phrases"][text].format(name=subject))
    # a space between a Chinese character and code, as the book writes them ("其中 `seg`")
    return re.sub(r"([\u4e00-\u9fff])`", r"\1 `", w["sentence"].format(conds=w["sep"].join(said))) if said else ""


def shapes(signature: str, lang: str) -> str:
    """A puzzle's shapes line: the signature as code, its conditions in a sentence of ``lang``."""
    code, text = signature_parts(signature)[0], conditions(signature, lang)
    return words(lang)["page"]["shapes"].format(sig=code) + text


def _op(op: str, lang: str) -> str:
    """An operation as the page names it: a code span, or words for ``x[...]`` (slicing)."""
    named = words(lang)["op_names"]
    return named[op] if op in named else f"`{op}`"


def _ops(ops: list[str], lang: str) -> str:
    """Operations in Markdown, a whole group by its name (``arithmetic + - * ...``)."""
    w, rest, out = words(lang), list(ops), []
    for group, members in GROUPS.items():
        if all(m in rest for m in members):
            plain = [m for m in members if m not in w["op_names"]]
            named = [w["op_names"][m] for m in members if m in w["op_names"]]
            out.append(w["list_sep"].join([f"{w['groups'][group]} `{' '.join(plain)}`"] + named))
            rest = [m for m in rest if m not in members]
    return w["group_sep"].join([w["list_sep"].join(_op(m, lang) for m in rest)] * bool(rest) + out)


def page_base(number: str) -> tuple[str, ...]:
    """The operations every puzzle of page ``number`` allows (the page module's ``BASE``)."""
    return importlib.import_module(f"gatherbook.exercises.puzzles.page{number}").BASE


def allowed(ex: E.Exercise, lang: str, base: tuple[str, ...]) -> str:
    """The operations ``ex`` allows, as the difference from its page's ``base``: ``+ `gather`;
    − slicing``, with its limits (``at most 1 × `argsort```), or the page's set as it is."""
    w = words(lang)
    mine, theirs = expand(ex.allowed), expand(base)
    plus = [op for op in mine if op not in theirs]
    minus = [op for op in theirs if op not in mine]
    said = ([w["plus"].format(ops=_ops(plus, lang))] if plus else []) + (
        [w["minus"].format(ops=_ops(minus, lang))] if minus else [])
    said += [w["limit"].format(op=op, n=n) for op, n in (ex.limits or {}).items()]
    return w["page"]["allowed"].format(ops=w["group_sep"].join(said) if said else w["page"]["same_ops"])


#: a comment in words (two words in a row), which needs its words in every language
WORDS_IN_COMMENT = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,}")


def localized(source: str, lang: str) -> str:
    """``source`` with its comments in ``lang`` (the words file's ``practice.comments``; none: the
    code's own comments are in that language); the code stays the same. A comment that would take
    a line past 88 columns goes on its own line above.

    Raises:
        KeyError: a comment in words has no words in ``lang`` (add them to ``comments``).
    """
    comments = words(lang)["comments"]
    if comments is None:
        return source
    lines = source.split("\n")
    found = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    for tok in reversed(found):  # from the bottom, so a comment moved up shifts no line still to do
        text = tok.string.lstrip("#").strip()
        if text not in comments:
            if WORDS_IN_COMMENT.search(text):
                raise KeyError(f"no {lang} words for the comment {text!r} (gatherbook/words/{lang}.yml)")
            continue
        row, col = tok.start[0] - 1, tok.start[1]
        code_part, comment = lines[row][:col], f"# {comments[text]}"
        if _width(code_part + comment) <= 88 or not code_part.strip():
            lines[row] = code_part + comment
        else:
            indent = code_part[:len(code_part) - len(code_part.lstrip())]
            lines[row] = code_part.rstrip()
            lines.insert(row, indent + comment)
    return "\n".join(lines)


def _setup(lang: str) -> dict:
    return code(localized(SETUP.format(lang=lang, comment=words(lang)["setup_comment"]), lang))


def _stub(ex: E.Exercise, lang: str) -> str:
    doc = signature_parts(ex.signature)[0]
    if _width(doc) + 10 > 88:  # the shapes on their lines (at most 88 columns), the result on the next
        head, result = doc.split("  ->  ")
        lines = [""]
        for part in head.split(", "):
            if lines[-1] and _width(f"    {lines[-1]}, {part}") + 3 > 88:
                lines[-1] += ","
                lines.append(part)
            else:
                lines[-1] = f"{lines[-1]}, {part}" if lines[-1] else part
        doc = "\n    ".join(lines) + f"\n    ->  {result}"
    said = conditions(ex.signature, lang)
    if said:  # the conditions in a sentence, wrapped at 88 columns
        wrapped, line = [], ""
        for piece in re.split(r"(?<=[ ；])", said):  # after a space, or a Chinese clause's ；
            if line and _width(f"    {line}{piece}".rstrip()) > 84:
                wrapped.append(line.rstrip())
                line = piece
            else:
                line += piece
        doc += "\n\n    " + "\n    ".join(wrapped + [line.rstrip()]).strip() + "\n    "
    return (f"def {short(ex.name)}({', '.join(ex.args)}):\n"
            f"    \"\"\"{doc}\"\"\"\n"
            f"    raise NotImplementedError  # {words(lang)['page']['your_code']}")


def nudge_cell(ex: E.Exercise, lang: str) -> dict:
    """The puzzle's nudge, folded: a dropdown on the site (``metadata.gatherbook.site``), a
    ``<details>`` in JupyterLab (as a solution's explanation), closed after Run All in both."""
    w, text = words(lang)["page"], of(ex.name, lang)["nudge"]
    site = f"```{{admonition}} {w['nudge_title']}\n:class: dropdown\n\n{text}\n```"
    lab = f"<details class=\"gb-solution\"><summary>{w['nudge_summary']}</summary>\n\n{text}\n\n</details>"
    return md(lab, gatherbook={"site": site})


def _picture(ex: E.Exercise, lang: str) -> dict:
    """The worked example's caption and alt text: one example, or two, (a) and (b), each with its
    line from the words file (``examples.a``, ``examples.b``)."""
    w, name, args = words(lang)["page"], short(ex.name), words(lang)["list_sep"].join(ex.args)
    if ex.second_example is None:  # the image's alt joins the argument names: "x, idx", "x、idx"
        return {"figure": {"caption": w["caption"].format(name=name)},
                "image": {"alt": w["alt"].format(name=name, args=args)}}
    lines = of(ex.name, lang)["examples"]
    return {"figure": {"caption": w["caption_two"].format(name=name, a=lines["a"], b=lines["b"])},
            "image": {"alt": w["alt_two"].format(name=name, args=args)}}


def _taught(ex: E.Exercise, lang: str) -> str:
    """"Taught in Chapter 2.", or the puzzle's own sentence (its words' ``taught``) where no one
    chapter teaches its idea: ``{doc}`` is ``taught_in``'s chapter, ``{ch7}`` any chapter's."""
    w = words(lang)
    text = of(ex.name, lang).get("taught", w["page"]["taught"])
    chapters = {f"ch{int(stem[:2])}": _doc(lang, stem) for stem in w["chapters"]}
    return text.format(doc=_doc(lang, ex.taught_in), **chapters)


def puzzle_cells(ex: E.Exercise, lang: str, base: tuple[str, ...]) -> list[dict]:
    w, own, name = words(lang)["page"], of(ex.name, lang), short(ex.name)
    label = f"pz-{name.replace('_', '-')}"
    task = "\n\n".join([
        own["task"],
        shapes(ex.signature, lang),
        allowed(ex, lang, base),
        _taught(ex, lang),
    ])
    return [  # the heading puts the puzzle in the page's contents; the box holds the task and its one
        # number ("Puzzle 9", 「第 9 题」: the puzzle class, book/ext/gatherbook_sphinx/titles.py)
        md(f"## `{name}`"),
        md(f"````{{exercise}} {own['title']}\n:label: {label}\n:class: {PUZZLE}\n\n{task}\n````"),
        code(localized(source(ex.spec, f"{name}_spec"), lang)),
        code(f'gb.show("{ex.name}");', mystnb=_picture(ex, lang)),
        code(_stub(ex, lang)),
        code(f'gb.check("{ex.name}", {name})'),
        nudge_cell(ex, lang),
        md(f"````{{solution-start}} {label}\n:class: dropdown\n````\n\n{own['why']}",
           jupyter={"source_hidden": True}),
        code(localized(source(ex.reference, f"{name}_solution"), lang), jupyter=HIDDEN),
        code(f'gb.check("{ex.name}", {name}_solution)', jupyter=HIDDEN),
        md("````{solution-end}\n````"),
    ]


def page_cells(k: int, lang: str) -> list[dict]:
    """The cells of the ladder's page ``k`` (0-based)."""
    w = words(lang)["page"]
    ladder = E.pages()
    number, stem, level, names = ladder[k]
    base = page_base(number)
    download = w["download"].format(download="{download}", path=f"/_build/exercises/{lang}/{stem}_exercises.ipynb")
    rule = w["base"].format(ops=_ops(list(expand(base)), lang), calls=table(lang)["checker"]["guard.calls"])
    cells = [md(w["level_title"].format(title=page_title(number, lang)) + "\n\n" + words(lang)["why_here"][number]
                + "\n\n" + w["level_intro"] + "\n\n" + rule + "\n\n" + download),
             _setup(lang)]
    for name in names:
        cells += puzzle_cells(E.get(name), lang, base)
    cells += [md(w["board_md"]), code("gb.board()")]
    if k + 1 < len(ladder):
        nxt, nxt_stem = ladder[k + 1][:2]
        cells.append(md(w["next"].format(doc=_doc(lang, nxt_stem, page_title(nxt, lang)))))
    return cells


# Reading time, counted as the chapters count theirs (gatherbook_sphinx.reading_time: prose at the
# edition's rate a minute, its words file's practice.intro.reading_rate), and each puzzle's code a
# reader reads (its loops and stub: a cell that opens with ``def``) at half a minute.
def reading_minutes(cells: list[dict], lang: str) -> int:
    """Minutes to read a page before solving it: its prose and the code a reader reads (each
    puzzle's loops and stub), not the folded hints and solutions, nor the checks' output."""
    return reading_time.reading_minutes(cells, lang, code=lambda text: text.startswith("def "))


def intro_cells(lang: str) -> list[dict]:
    """The cells of the Practice part's first page: how a puzzle works, one puzzle tried as a
    learner would (wrong in several ways, then right), the ladder and the board."""
    w, t = words(lang), words(lang)["intro"]

    def ch(k: int, stem: str) -> str:
        return f"{{doc}}`{t['chapter'].format(k=k)} <{stem}>`"

    levels, numbers = [], E.puzzle_numbers()
    for number, stem, _, names in E.pages():
        titles = w["list_sep"].join(w["ladder_item"].format(title=of(n, lang)["title"], name=short(n)) for n in names)
        levels.append(t["level_line"].format(doc=f"{{doc}}`{page_title(number, lang)} <{stem}>`", names=titles,
                                             first=numbers[names[0]], last=numbers[names[-1]]))
    first = E.get(FIRST)
    feedback = w["feedback"]
    n_puzzles = sum(len(names) for *_, names in E.pages())
    minutes = {number: reading_minutes(page_cells(k, lang), lang) for k, (number, *_) in enumerate(E.pages())}
    read = w["list_sep"].join(t["time_item"].format(page=w["page_numbers"][n], minutes=m) for n, m in minutes.items())
    return [
        md(t["title"].format(n=n_puzzles, ch1=ch(1, "01_gather_basics"), ch5=ch(5, "05_scatter"),
                             ch2=ch(2, "02_token_logprobs"), ch4=ch(4, "04_vision_patches"),
                             ch7=ch(7, "07_generation"), times=t["times"].format(levels=read, total=sum(minutes.values())))),
        _setup(lang),
        md(t["how"]),
        code(localized(source(first.spec, "pick_per_row_spec"), lang)),
        md(t["picture"]),
        code(f'gb.show("{FIRST}");', mystnb={"figure": {"caption": t["caption"]}, "image": {"alt": t["alt"]}}),
        md(t["try"]),
        code(localized(TRIES["squeeze"], lang), mystnb=feedback),
        md(t["after_squeeze"]),
        code(localized(TRIES["take"], lang)),
        md(t["after_take"]),
        code(localized(TRIES["loop"], lang)),
        md(t["after_loop"]),
        code(localized(TRIES["shrink"], lang), mystnb=feedback),
        md(t["after_shrink"]),
        code(localized(TRIES["right"], lang)),
        md(t["ladder"].format(levels="\n".join(levels))),
        code("gb.board()"),
    ]


def notebooks() -> dict[str, list[dict]]:
    """Every Practice page of every edition: ``"<code>/<stem>"`` -> its cells."""
    out = {}
    for lang in CODES:
        out[f"{lang}/{INTRO}"] = intro_cells(lang)
        for k, (_, stem, _, _) in enumerate(E.pages()):
            out[f"{lang}/{stem}"] = page_cells(k, lang)
    return out
