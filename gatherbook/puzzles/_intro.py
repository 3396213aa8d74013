"""The cells of the Practice part's first notebook (08_practice): how a puzzle works, one puzzle
tried as a learner would (wrong in several ways, then right), the ladder and the board."""
from __future__ import annotations

from gatherbook import puzzles as pz
from gatherbook.puzzles._texts import PUZZLES as WORDS

TEXT = {
    "en": {
        "title": """# Practice: gather and scatter puzzles

Read a loop, write the one line of tensor code that does the same. This part is a ladder of
{n} puzzles in four levels, each checked by a property test that shows you the smallest case your
answer gets wrong.

**What you will learn**

- to read an index computation written as loops and turn it into `gather`, `scatter` and their
  relatives;
- to build the index a gather needs: `unsqueeze`, `expand`, `arange`, a `% N`, a `cumsum`;
- to undo a gather (`argsort`, `scatter`) and to reduce with the `scatter` family;
- to think of the edge cases that bite: size 1, an empty batch, repeated indices, negative values.

**Prerequisites:** {ch1} and {ch5}; levels 3 and 4 use the settings of {ch2} to {ch4} and {ch7}.
**Time:** 5 to 15 minutes a puzzle.""",
        "how": """## How a puzzle works

Each puzzle gives you:

- **the definition as plain Python loops.** Run it: it is what your answer is compared with;
- **a stub** with the shapes, and **a picture** of a worked example: the inputs and the target;
- **the device**: your answer also runs once on inputs on the `meta` device (standing in for a
  GPU), so make new tensors on the inputs' device: `torch.arange(n, device=x.device)`,
  `torch.zeros_like(x)`, `x.new_zeros(n)`;
- **the operations allowed**, listed under the puzzle and enforced while your answer runs: a call
  outside the list, indexing with a tensor (`x[idx]`, a gather in disguise), taking values into
  Python (`.item()`, `.tolist()`) or a Python loop stops the check with a message that names the
  call and lists what is allowed;
- **a check**, `pz.check(name, fn)`. It runs the hand-written edge cases first, then lets
  [hypothesis](https://hypothesis.readthedocs.io) draw random shapes and values (the same ones on
  every run) and *shrink* a failure to the smallest case it can find. Answers are compared as
  they are: the shape exactly (a `(1,)` answer is not a `()` one), the dtype, then the values;
  nothing is broadcast first. When your answer matches a known mistake, the check names it;
- **a solution**, folded, with one line on why it works.

Here is the first puzzle of level 1. Its definition:""",
        "picture": "Its worked example, drawn from the loops:",
        "try": """## Trying it

A first attempt: `gather` along `dim=1`, then `squeeze()` to drop the extra axis.""",
        "after_squeeze": """The check found the case where a bare `squeeze()` goes wrong: a batch of one row. The picture
shows the inputs, the expected answer and yours. Next, an attempt with `take_along_dim`, which
would work but is not what this puzzle practises:""",
        "after_take": "And one with a Python loop:",
        "after_loop": """Both are stopped before any value is compared. Now an answer whose index was written for short
vectors only (here, in the puzzle `reverse`): it passes every hand-written case, and hypothesis
finds the smallest vector on which it fails.""",
        "after_shrink": "Finally the right answer to the first puzzle:",
        "ladder": """## The ladder

{levels}

The board below shows what you have solved in this session: call `pz.board()` in any practice
notebook.""",
        "caption": "Worked example of `pick_per_row`: the inputs, and the target the loops compute.",
        "alt": "The inputs x and idx of pick_per_row and its target, drawn as grids with their numbers.",
        "level_line": "- {doc}: {names}.",
        "chapter": "Chapter {k}",
    },
    "zh": {
        "title": """# 练习：gather 与 scatter 习题

读懂一段循环，写出做同样事情的那一行张量代码。这一部分是分四级、共 {n} 道的练习题，每道题都由一个性质测试来检查，它会找出你的答案算错的最小用例给你看。

**你将学到**

- 读懂用循环写成的索引计算，并把它改写成 `gather`、`scatter` 及相关运算；
- 构造 gather 需要的索引：`unsqueeze`、`expand`、`arange`、`% N`、`cumsum`；
- 撤销一次 gather（`argsort`、`scatter`），以及用 `scatter` 一族做归约；
- 想到那些容易出错的边界情况：大小为 1、空批次、重复索引、负值。

**预备知识：**{ch1}和{ch5}；第 3、4 级用到{ch2}到{ch4}以及{ch7}的场景。

**用时：**每道题 5 到 15 分钟。""",
        "how": """## 一道题由什么组成

每道题都提供：

- **用普通 Python 循环写成的定义**。可以直接运行：你的答案就是和它比较的；
- **一个函数框架**，注明各参数的形状，以及**一张示例图**：输入和目标结果；
- **设备**：你的答案还会在 `meta` 设备（代替 GPU）的输入上运行一次，所以新建张量要放在输入所在的设备上，例如 `torch.arange(n, device=x.device)`、`torch.zeros_like(x)`、`x.new_zeros(n)`；
- **允许使用的运算**，列在题目下方，并在你的答案运行时强制执行：调用列表以外的运算、用张量做下标（`x[idx]`，变相的 gather）、把值取到 Python 中（`.item()`、`.tolist()`）或使用 Python 循环，检查都会停下来，指出是哪个调用，并列出允许使用的运算；
- **检查**：`pz.check(name, fn)`。它先运行手写的边界用例，再让 [hypothesis](https://hypothesis.readthedocs.io) 随机生成形状和数值（每次运行都相同），并把失败的用例*收缩*到它能找到的最小用例。答案按原样比较：形状必须完全相同（`(1,)` 的答案不等于 `()` 的答案），然后是 dtype，最后是数值；比较前不做任何广播。如果你的答案和某个已知的错误一致，检查会指出它；
- **解答**，默认折叠，附一句话说明它为什么对。

下面是第 1 级的第一道题。它的定义：""",
        "picture": "由循环算出的示例：",
        "try": """## 动手试一试

第一次尝试：沿 `dim=1` 做 `gather`，再用 `squeeze()` 去掉多出来的那一维。""",
        "after_squeeze": """检查找到了不带参数的 `squeeze()` 出错的用例：只有一行的批次。图中画出了输入、期望结果和你的结果。接下来用 `take_along_dim` 试试，它能算对，但不是这道题要练的：""",
        "after_take": "再试一个用 Python 循环的：",
        "after_loop": """这两个答案在比较数值之前就被拦下了。下面这个答案的索引只适用于较短的向量（这里用的是 `reverse` 这道题）：它能通过所有手写用例，而 hypothesis 找到了让它出错的最短向量。""",
        "after_shrink": "最后是第一道题的正确答案：",
        "ladder": """## 题目一览

{levels}

下面的进度表显示你在本次会话中已经解出的题目：在任何一个练习 notebook 里调用 `pz.board()` 即可。""",
        "caption": "`pick_per_row` 的示例：输入，以及循环算出的目标结果。",
        "alt": "pick_per_row 的输入 x、idx 与目标结果，画成标有数字的格子。",
        "level_line": "- {doc}：{names}。",
        "chapter": "第 {k} 章",
    },
}

#: a check cell that draws the failing case: its caption and alt text (myst-nb, and JupyterLab's caption cell)
FEEDBACK = {
    "en": {"figure": {"caption": "The check's picture of the failing case: the inputs, the expected "
                                 "result and yours, differences outlined."},
           "image": {"alt": "The failing case drawn as grids: the inputs, expected and yours."}},
    "zh": {"figure": {"caption": "检查为未通过的用例画的图：输入、期望结果（图中 expected）和你的结果"
                                 "（图中 yours），不同之处有描边。"},
           "image": {"alt": "未通过的用例画成格子：输入、expected 与 yours。"}},
}

TRIES = {
    "squeeze": '''def pick_per_row(x, idx):
    return x.gather(1, idx.unsqueeze(1)).squeeze()


pz.check("pick_per_row", pick_per_row)''',
    "take": '''def pick_per_row(x, idx):
    return torch.take_along_dim(x, idx.unsqueeze(1), dim=1).squeeze(1)


pz.check("pick_per_row", pick_per_row)''',
    "loop": '''def pick_per_row(x, idx):
    out = torch.zeros(x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i] = x[i].gather(0, idx[i:i + 1])[0]
    return out


pz.check("pick_per_row", pick_per_row)''',
    "shrink": '''def reverse(x):
    N = x.shape[0]
    return x.gather(0, torch.arange(N - 1, -1, -1) % 5)


pz.check("reverse", reverse)''',
    "right": '''def pick_per_row(x, idx):
    return x.gather(1, idx.unsqueeze(1)).squeeze(1)


pz.check("pick_per_row", pick_per_row)''',
}


def intro_cells(lang: str) -> list[dict]:
    from gatherbook.puzzles._notebooks import (PAGES, SETUP, SETUP_COMMENT, code, localized, md, page_names,
                                               page_title)

    t = TEXT[lang]

    def ch(k: int, stem: str) -> str:
        return f"{{doc}}`{t['chapter'].format(k=k)} <{stem}>`"

    levels = []
    for number, stem, _, _ in PAGES:
        titles = ", ".join(f"{WORDS[lang][n]['title']} (`{n}`)" if lang == "en"
                           else f"{WORDS[lang][n]['title']}（`{n}`）" for n in page_names(number))
        if lang == "zh":
            titles = titles.replace(", ", "、")
        doc = f"{{doc}}`{page_title(number, lang)} <{stem}>`"
        levels.append(t["level_line"].format(doc=doc, names=titles))
    p = pz.get("pick_per_row")
    return [
        md(t["title"].format(n=len(pz.PUZZLES), ch1=ch(1, "01_gather_basics"), ch5=ch(5, "05_scatter"),
                             ch2=ch(2, "02_token_logprobs"), ch4=ch(4, "04_vision_patches"),
                             ch7=ch(7, "07_generation"))),
        code(localized(SETUP.format(lang=lang, comment=SETUP_COMMENT[lang]), lang)),
        md(t["how"]),
        code(localized(pz.source(p.spec, "pick_per_row_spec"), lang)),
        md(t["picture"]),
        code('pz.show("pick_per_row");', mystnb={"figure": {"caption": t["caption"]},
                                                "image": {"alt": t["alt"]}}),
        md(t["try"]),
        code(localized(TRIES["squeeze"], lang), mystnb=FEEDBACK[lang]),
        md(t["after_squeeze"]),
        code(localized(TRIES["take"], lang)),
        md(t["after_take"]),
        code(localized(TRIES["loop"], lang)),
        md(t["after_loop"]),
        code(localized(TRIES["shrink"], lang), mystnb=FEEDBACK[lang]),
        md(t["after_shrink"]),
        code(localized(TRIES["right"], lang)),
        md(t["ladder"].format(levels="\n".join(levels))),
        code("pz.board()"),
    ]
