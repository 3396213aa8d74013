"""Write the Practice notebooks of both editions from the puzzles' declarations (maintainers).

    python -m gatherbook.puzzles._notebooks        # writes notebooks/{en,zh}/08_practice*.ipynb
    make execute NB="notebooks/en/08_practice*.ipynb notebooks/zh/08_practice*.ipynb"

The code cells come from the declarations (the loops, the stub's signature, the solution), so the
two editions have the same code cells by construction; the prose is in this file, per language.
Writing drops the stored outputs: execute the notebooks afterwards.
"""
from __future__ import annotations

import io
import json
import re
import sys
import tokenize
import unicodedata
from pathlib import Path

from gatherbook import puzzles as pz
from gatherbook.puzzles._texts import COMMENTS, LEVELS, PUZZLES as WORDS, shapes

ROOT = Path(__file__).resolve().parents[2]
INTRO = "08_practice"
#: the pages of the ladder: (number, file stem, level, the level's first puzzle on the page). Level
#: 4's twelve puzzles take two pages (4a: scatter, counts and segments; 4b: ragged batches and
#: Mixture of Experts), as long as the other levels' pages, so that each page runs within the
#: book's notebook time.
PAGES = [("1", "08_practice_1_warmup", 1, "pick_per_row"), ("2", "08_practice_2_3d", 2, "rows_of_batch"),
         ("3", "08_practice_3_real", 3, "token_logprobs"), ("4a", "08_practice_4a_scatter", 4, "inverse_perm"),
         ("4b", "08_practice_4b_ragged", 4, "ragged_to_padded")]
#: a page's own title where it is not its level's (:data:`._texts.LEVELS`)
PAGE_TITLES = {"en": {"4b": "Ragged batches and Mixture of Experts"},
               "zh": {"4b": "变长序列与混合专家（MoE）"}}
FILES = [INTRO] + [stem for _, stem, _, _ in PAGES]


def page_names(number: str) -> list[str]:
    """The puzzles of page ``number`` (``"1"`` ... ``"4b"``), in ladder order."""
    k = next(i for i, page in enumerate(PAGES) if page[0] == number)
    _, _, level, first = PAGES[k]
    names = pz.names(level)
    nxt = PAGES[k + 1] if k + 1 < len(PAGES) and PAGES[k + 1][2] == level else None
    return names[names.index(first):names.index(nxt[3]) if nxt else None]


def page_title(number: str, lang: str) -> str:
    """``"Practice 4b: Ragged batches and Mixture of Experts"`` (``"练习 4b：..."``)."""
    title = PAGE_TITLES[lang].get(number) or LEVELS[lang][int(number[0])]
    return f"Practice {number}: {title}" if lang == "en" else f"练习 {number}：{title}"
CHAPTERS = {
    "en": {"01_gather_basics": "Chapter 1", "02_token_logprobs": "Chapter 2",
           "03_rl_action_values": "Chapter 3", "04_vision_patches": "Chapter 4",
           "05_scatter": "Chapter 5", "06_pitfalls_performance": "Chapter 6",
           "07_generation": "Chapter 7"},
    "zh": {"01_gather_basics": "第 1 章", "02_token_logprobs": "第 2 章",
           "03_rl_action_values": "第 3 章", "04_vision_patches": "第 4 章",
           "05_scatter": "第 5 章", "06_pitfalls_performance": "第 6 章",
           "07_generation": "第 7 章"},
}

HIDDEN = {"source_hidden": True, "outputs_hidden": True}  # a folded solution cell, in JupyterLab

SETUP = '''import math

import torch
import gatherbook as gb

pz = gb.puzzles  # the practice part's checker, pictures and board
torch.manual_seed(0)
dev = gb.setup(lang="{lang}")  # {comment}'''
SETUP_COMMENT = {"en": "language of this notebook; puzzles run on the CPU",
                 "zh": "本 notebook 的语言；练习题都在 CPU 上运行"}

W = {
    "en": {
        "allowed": "**Allowed:** {ops}. No Python loops.",
        "shapes": "**Shapes:** `{sig}`",
        "taught": "Taught in {doc}.",
        "caption": "Worked example of `{name}`: the inputs, and the target the loops compute.",
        "alt": "The inputs {args} of {name} and its target, drawn as grids with their numbers.",
        "spec_intro": "",
        "your_code": "your code here",
        "level_title": "# {title}",
        "level_intro": (
            "Each puzzle below gives its definition as plain Python loops (run them: they are the "
            "reference), a picture of a worked example, and a stub. Replace `raise "
            "NotImplementedError` with tensor code, then run the `pz.check` cell under it. It "
            "tries the hand-written edge cases first, then lets "
            "[hypothesis](https://hypothesis.readthedocs.io) search random shapes and values and "
            "report the *smallest* case your answer gets wrong, with a picture. Only the listed "
            "operations are allowed, and no Python loop; the check enforces both. The solutions are "
            "folded; the book's own solution (`..._solution`) does not count on your board."),
        "download": ("To work on your own machine instead, download {download}`these puzzles without "
                     "solutions <{path}>` and open it in JupyterLab (it needs the book's `gatherbook` "
                     "package: see the README)."),
        "board_md": "## Your board\n\nOne call shows which puzzles you have solved in this session.",
        "next": "Next: {doc}.",
    },
    "zh": {
        "allowed": "**允许使用：**{ops}。不许用 Python 循环。",
        "shapes": "**形状：**`{sig}`",
        "taught": "相关内容见{doc}。",
        "caption": "`{name}` 的示例：输入，以及循环算出的目标结果。",
        "alt": "{name} 的输入 {args} 与目标结果，画成标有数字的格子。",
        "spec_intro": "",
        "your_code": "在这里写你的代码",
        "level_title": "# {title}",
        "level_intro": (
            "下面每道题都用普通的 Python 循环给出定义（可以直接运行：它就是参考答案），配一张示例图和一个函数框架。"
            "把 `raise NotImplementedError` 换成张量代码，再运行它下面的 `pz.check` 单元格。"
            "检查先用手写的边界用例，再让 [hypothesis](https://hypothesis.readthedocs.io) 搜索随机的形状和数值，"
            "报告你的答案算错的*最小*用例，并画出图来。只允许使用列出的运算，也不许用 Python 循环；检查会强制执行这两条。"
            "解答默认折叠；本书自带的解答（`..._solution`）不计入你的进度。"),
        "download": ("如果想在自己的电脑上做题，可以下载{download}`不含解答的本篇练习 <{path}>`，"
                     "用 JupyterLab 打开即可（需要本书的 `gatherbook` 辅助包，安装方法见 README）。"),
        "board_md": "## 你的进度\n\n调用一次就能看到本次会话中你已经解出了哪些题。",
        "next": "下一篇：{doc}。",
    },
}


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + [parts[-1]]


def md(text: str, **meta) -> dict:
    return {"cell_type": "markdown", "metadata": meta, "source": _lines(text)}


def code(text: str, **meta) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": meta, "outputs": [],
            "source": _lines(text.rstrip("\n"))}


def _doc(lang: str, stem: str, label: str | None = None) -> str:
    return f"{{doc}}`{label or CHAPTERS[lang][stem]} <{stem}>`"


def _width(line: str) -> int:
    """Columns in a monospace font: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


#: a comment in words (two words in a row), which needs its words in every language
WORDS_IN_COMMENT = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,}")


def localized(source: str, lang: str) -> str:
    """``source`` with its comments in ``lang`` (:data:`._texts.COMMENTS`); the code stays the
    same. A comment that would take a line past 88 columns goes on its own line above.

    Raises:
        KeyError: a comment in words has no words in ``lang`` (add them to ``COMMENTS``).
    """
    words = COMMENTS[lang]
    if lang == "en":
        return source
    lines = source.split("\n")
    found = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    for tok in reversed(found):  # from the bottom, so a comment moved up shifts no line still to do
        text = tok.string.lstrip("#").strip()
        if text not in words:
            if WORDS_IN_COMMENT.search(text):
                raise KeyError(f"no {lang} words for the comment {text!r} (gatherbook/puzzles/_texts.py)")
            continue
        row, col = tok.start[0] - 1, tok.start[1]
        code_part, comment = lines[row][:col], f"# {words[text]}"
        if _width(code_part + comment) <= 88 or not code_part.strip():
            lines[row] = code_part + comment
        else:
            indent = code_part[:len(code_part) - len(code_part.lstrip())]
            lines[row] = code_part.rstrip()
            lines.insert(row, indent + comment)
    return "\n".join(lines)


def _stub(p: pz.Puzzle, lang: str) -> str:
    args = ", ".join(p.args)
    doc = shapes(p.signature, lang)
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
    return (f"def {p.name}({args}):\n"
            f"    \"\"\"{doc}\"\"\"\n"
            f"    raise NotImplementedError  # {W[lang]['your_code']}")


def puzzle_cells(p: pz.Puzzle, lang: str, number: str) -> list[dict]:
    w, words = W[lang], WORDS[lang][p.name]
    label = f"pz-{p.name.replace('_', '-')}"
    task = "\n\n".join([
        words["task"],
        w["shapes"].format(sig=shapes(p.signature, lang)),
        w["allowed"].format(ops=pz.allowed(p.name, lang)),
        w["taught"].format(doc=_doc(lang, p.chapter)),
    ])
    cells = [  # the heading puts the puzzle in the page's contents; the box holds the task
        md(f"## {number} `{p.name}`"),
        md(f"````{{exercise}} {words['title']}\n:label: {label}\n\n{task}\n````"),
        code(localized(pz.source(p.spec, f"{p.name}_spec"), lang)),
        code(f'pz.show("{p.name}");', mystnb={"figure": {"caption": w["caption"].format(name=p.name)},
                                             "image": {"alt": w["alt"].format(
                                                 name=p.name, args=", ".join(p.args))}}),
        code(_stub(p, lang)),
        code(f'pz.check("{p.name}", {p.name})'),
        md(f"````{{solution-start}} {label}\n:class: dropdown\n````\n\n{words['why']}",
           jupyter={"source_hidden": True}),
        code(localized(pz.source(p.solution, f"{p.name}_solution"), lang), jupyter=HIDDEN),
        code(f'pz.check("{p.name}", {p.name}_solution)', jupyter=HIDDEN),
        md("````{solution-end}\n````"),
    ]
    return cells


def level_notebook(number: str, lang: str) -> list[dict]:
    """The cells of page ``number`` (``"1"`` ... ``"4b"``) of the ladder."""
    w = W[lang]
    k = next(i for i, page in enumerate(PAGES) if page[0] == number)
    _, stem, level, _ = PAGES[k]
    download = w["download"].format(download="{download}",
                                    path=f"/_build/exercises/{lang}/{stem}_exercises.ipynb")
    cells = [md(w["level_title"].format(title=page_title(number, lang)) + "\n\n" + w["level_intro"]
                + "\n\n" + download),
             code(localized(SETUP.format(lang=lang, comment=SETUP_COMMENT[lang]), lang))]
    for name in page_names(number):  # numbered within the level: 4.8 is the first puzzle of 4b
        cells += puzzle_cells(pz.get(name), lang, f"{level}.{pz.names(level).index(name) + 1}")
    cells.append(md(w["board_md"]))
    cells.append(code("pz.board()"))
    if k + 1 < len(PAGES):
        nxt, nxt_stem = PAGES[k + 1][:2]
        cells.append(md(w["next"].format(doc=_doc(lang, nxt_stem, page_title(nxt, lang)))))
    return cells


def notebook(cells: list[dict]) -> dict:
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i:03d}"
    return {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def write(path: Path, nb: dict) -> None:
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf8")


def main() -> None:
    from gatherbook.puzzles._intro import intro_cells

    for lang in ("en", "zh"):
        folder = ROOT / "notebooks" / lang
        write(folder / f"{INTRO}.ipynb", notebook(intro_cells(lang)))
        for number, stem, _, _ in PAGES:
            write(folder / f"{stem}.ipynb", notebook(level_notebook(number, lang)))
    print("wrote", ", ".join(f"{f}.ipynb" for f in FILES), "in notebooks/en and notebooks/zh",
          file=sys.stderr)


if __name__ == "__main__":
    main()
