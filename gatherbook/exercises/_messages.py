"""Every sentence the checker writes, in one table of all languages, and :func:`render`.

:func:`render` turns the facts of a :class:`~gatherbook.exercises._checker.CheckResult` into the
text that :func:`~gatherbook.exercises.check` prints. Nothing here decides anything about the
answer: the facts are final before a word is chosen, so the languages cannot disagree. An
exercise's own words (title and hints) are in its declaration.
Adding a language is one more string in each entry (tests/exercises/test_exercises.py checks
that every entry has one per language).
"""
from __future__ import annotations

import unicodedata
from typing import Any, Mapping

import torch

from gatherbook.runtime import LANGUAGES

#: Tensors with at most this many elements are printed in full in feedback; larger ones by shape.
PRINT_LIMIT = 64

#: Every sentence, ``key: (en, zh)`` in the order of :data:`gatherbook.runtime.LANGUAGES`.
MESSAGES: dict[str, tuple[str, ...]] = {
    "passed": ("✔ {name}: all {n} cases passed", "✔ {name}：{n} 个用例全部通过"),
    "not_attempted": ("… {name} not attempted yet: the function checked still raises the stub's "
                      "NotImplementedError.\n  Fill in its body, run the cell that defines it first, "
                      "then run this check again.",
                      "… {name} 还没有作答：被检查的函数仍在抛出桩函数的 NotImplementedError。\n"
                      "  请补全函数体，先运行定义它的单元格，再重新运行这个检查。"),
    "timeout": ("✘ {name}: stopped after {limit:g} s on case {case} of {n}: the check took too long "
                "(a loop that never ends, or one step per element of a large tensor?)",
                "✘ {name}：在第 {case} 个用例（共 {n} 个）上运行 {limit:g} 秒后被停止：检查耗时过长"
                "（是不是有一个不会结束的循环，或者对大张量逐个元素计算？）"),
    "printed": ("your function printed {count} lines during the check; the first ones:",
                "你的函数在检查期间打印了 {count} 行；前几行是："),
    "failed": ("✘ {name}: case {case} of {n} failed",
               "✘ {name}：第 {case} 个用例（共 {n} 个）未通过"),
    "input": ("input:", "输入："),
    "expected": ("expected", "期望结果"),
    "got": ("got", "你的结果"),
    "likely": ("likely mistake: ", "可能的错误："),
    "sep": (": ", "："),
    "tensor": ("shape {shape}, {dtype}", "形状 {shape}，{dtype}"),
    "kind.type": ("type: expected a torch.Tensor, got {got}",
                  "类型不对：应为 torch.Tensor，实际为 {got}"),
    "kind.shape": ("shape: expected {expected}, got {got}",
                   "形状不对：应为 {expected}，实际为 {got}"),
    "kind.dtype": ("dtype: expected {expected}, got {got}",
                   "dtype 不对：应为 {expected}，实际为 {got}"),
    "kind.values": ("values: {n_diff} of {n} elements differ; first at {where}: expected {expected}, "
                    "got {got} ({how})",
                    "值不对：有 {n_diff} 个元素不同（共 {n} 个）；第一处位于 {where}：应为 {expected}，"
                    "实际为 {got}（{how}）"),
    "values.exact": ("compared exactly", "逐元素精确比较"),
    "values.close": ("compared with torch.allclose, rtol={rtol:g}, atol={atol:g}",
                     "用 torch.allclose 比较，rtol={rtol:g}，atol={atol:g}"),
    "kind.result": ("result: expected {expected}, got {got}",
                    "结果不对：应为 {expected}，实际为 {got}"),
    "kind.exception": ("your function raised {type}: {text}",
                       "你的函数抛出了 {type}：{text}"),
    "kind.mutated_input": ("your function changed its input `{arg}` in place; the caller's tensor is "
                           "not yours to change",
                           "你的函数原地修改了输入 `{arg}`；调用者传入的张量不应被改动"),
    "kind.no_grad": ("the result carries no gradient (requires_grad is False), but it is trained "
                     "through",
                     "结果不带梯度（requires_grad 为 False），但训练要经过它求导"),
    "kind.has_grad": ("the result carries a gradient (requires_grad is True), but it must not",
                      "结果带有梯度（requires_grad 为 True），但它不应带梯度"),
    "kind.grad": ("gradient: the gradient with respect to `{arg}` differs from the reference's in "
                  "{n_diff} of {n} elements",
                  "梯度不对：对 `{arg}` 的梯度与参考答案有 {n_diff} 个元素不同（共 {n} 个）"),
    "kind.device": ("device: on inputs on another device (the `meta` device, standing in for a GPU), "
                    "{how}",
                    "设备不对：输入放在另一个设备上（用 `meta` 设备代替 GPU）时，{how}"),
    "device.raised": ("your function raised: {text}", "你的函数报错：{text}"),
    "device.returned": ("your function returned a tensor on {got}",
                        "你的函数返回了位于 {got} 上的张量"),
    "device.mixed": ("`{op}` in your function received tensors on two devices ({devices}): a "
                     "tensor made without `device=` stays on the CPU",
                     "你的函数里的 `{op}` 收到了位于两个设备上的张量（{devices}）：不指定 `device=` "
                     "创建的张量会留在 CPU 上"),
    "kind.aliased": ("the result shares memory with the input `{arg}` (it is the input, or a view of "
                     "it): changing one would change the other",
                     "结果与输入 `{arg}` 共用内存（它就是输入本身，或输入的视图）：改动其中一个，另一个也会变"),
    "kind.second_call": ("called a second time on the same inputs, your function returned another "
                         "result: it keeps state between calls",
                         "用相同的输入第二次调用时，你的函数返回了不同的结果：它在两次调用之间保留了状态"),
    "kind.not_chunked": ("chunks: an operation received {rows} rows of `{arg}` at once; at most "
                         "{limit} are allowed",
                         "分块不对：某个运算一次拿到了 `{arg}` 的 {rows} 行；最多只允许 {limit} 行"),
    "generic.none": ("your function returned None: did it forget to `return` the result?",
                     "你的函数返回了 None：是不是忘了 `return` 结果？"),
    "generic.list": ("return the tensor itself, not a Python list of its values (no `.tolist()`).",
                     "请直接返回张量本身，而不是由它的值组成的 Python 列表（不要调用 `.tolist()`）。"),
    "generic.numpy": ("return the tensor itself, not a NumPy array (no `.numpy()`).",
                      "请直接返回张量本身，而不是 NumPy 数组（不要调用 `.numpy()`）。"),
    "generic.number": ("return a tensor, not a Python number (no `.item()`).",
                       "请返回张量，而不是 Python 数值（不要调用 `.item()`）。"),
    "generic.tuple": ("you returned a tuple of {count}; the answer is one tensor (functions such as "
                      "`max(dim)`, `sort` and `topk` return values and indices, and a trailing comma "
                      "after `return x` makes a tuple).",
                      "你返回了一个含 {count} 个元素的元组；答案应是一个张量（`max(dim)`、`sort`、"
                      "`topk` 等函数会同时返回值和索引，`return x` 后面多一个逗号也会得到元组）。"),
    "generic.not_tensor": ("return a torch.Tensor.", "请返回一个 torch.Tensor。"),
    "generic.size_one": ("the values are right and the sizes agree except for dimensions of size 1, "
                         "and shapes must match exactly: add or remove them with `unsqueeze(d)`/"
                         "`squeeze(d)`, naming the dimension (`squeeze()` without one also drops a "
                         "batch or length of size 1).",
                         "值都对，除大小为 1 的维度外各维大小也一致，但形状必须完全相同：用 "
                         "`unsqueeze(d)` 补上、用 `squeeze(d)` 去掉这些维度（不带参数的 `squeeze()` "
                         "会连大小为 1 的批次维一起去掉）。"),
    "generic.aliased": ("return a new tensor (`x.clone()`, or the result of an operation), not the "
                        "input itself or a view of it: the caller may change one and not expect the "
                        "other to change.",
                        "请返回新的张量（`x.clone()` 或某个运算的结果），而不是输入本身或它的视图："
                        "调用者改动其中一个时，不会想到另一个也跟着变。"),
    "generic.second_call": ("keep no state between calls: no `.backward()` on the inputs, no `.grad` "
                            "accumulated, no global or default argument that remembers.",
                            "两次调用之间不要保留状态：不要对输入调用 `.backward()`，不要累积 "
                            "`.grad`，也不要用会记住结果的全局变量或默认参数。"),
    "generic.transposed": ("your result is the expected one transposed: check which `dim` you "
                           "worked along.",
                           "你的结果正好是期望结果的转置：检查一下沿哪个 `dim` 做的运算。"),
    "generic.dtype": ("the result must have dtype {expected}; yours is {got}: something converted it "
                      "(`.float()`, `.long()` ...) or wrote it into a tensor of another dtype (e.g. "
                      "`torch.zeros_like(idx)`).",
                      "结果的 dtype 应为 {expected}，你的是 {got}：某一步转换了结果（`.float()`、"
                      "`.long()` 等），或者把结果写进了另一种 dtype 的张量（例如 "
                      "`torch.zeros_like(idx)`）。"),
    "generic.mutated_input": ("in-place operations (`unsqueeze_`, `sub_`, `exp_`, `scatter_`, "
                              "`t[mask] = 0` ...) on an input change the caller's tensor: work on a "
                              "new tensor (`t.unsqueeze(1)`, `t.masked_fill(mask, 0)`, `t.clone()`).",
                              "对输入做原地操作（`unsqueeze_`、`sub_`、`exp_`、`scatter_`、"
                              "`t[mask] = 0` 等）会改动调用者的张量：请在新张量上计算"
                              "（`t.unsqueeze(1)`、`t.masked_fill(mask, 0)`、`t.clone()`）。"),
    "generic.no_grad": ("the loss is differentiated through this quantity: keep it in the graph "
                        "(no `torch.no_grad()`, `.detach()`, or a tensor rebuilt from `.item()` or "
                        "`.tolist()`).",
                        "损失要经过这个量求导：请让它留在计算图里（不要用 `torch.no_grad()`、"
                        "`.detach()`，也不要用 `.item()` 或 `.tolist()` 的结果重新构造张量）。"),
    "generic.has_grad": ("this quantity is a fixed target: compute it under `torch.no_grad()` or "
                         "`.detach()` it, so that no gradient flows back through it.",
                         "这个量是固定的目标：请在 `torch.no_grad()` 下计算它，或对它调用 "
                         "`.detach()`，使梯度不会沿它反向传播。"),
    "generic.grad": ("the values are right but the gradient is not: some step is cut out of the "
                     "graph (a `.detach()` or a value rebuilt from `.item()`), or a constant stands "
                     "where a function of the input should.",
                     "值是对的，梯度却不对：某一步被切出了计算图（`.detach()`，或用 `.item()` "
                     "重新构造的值），或者本应依赖输入的地方用了常数。"),
    "generic.device": ("create new tensors on the inputs' device, e.g. `torch.arange(L, "
                       "device=x.device)`, `torch.zeros_like(x)`, `x.new_zeros(n)`: on a GPU this "
                       "answer fails.",
                       "请在输入所在的设备上创建新张量，例如 `torch.arange(L, device=x.device)`、"
                       "`torch.zeros_like(x)`、`x.new_zeros(n)`：在 GPU 上这个答案会报错。"),
    "generic.not_chunked": ("the point of the exercise is to never hand more than {limit} rows to an "
                            "operation: slice `logits[start:start + {limit}]` in a loop over "
                            "`range(0, N, {limit})` (or `logits.split({limit})`; `torch.chunk(x, "
                            "n)` makes n chunks, not chunks of n rows).",
                            "这道练习的要点是每个运算一次最多只处理 {limit} 行：在遍历 "
                            "`range(0, N, {limit})` 的循环里切片 `logits[start:start + {limit}]`"
                            "（或用 `logits.split({limit})`；`torch.chunk(x, n)` 切出的是 n 块，"
                            "而不是每块 n 行）。"),
    "error.unknown_name": ("There is no exercise called {name!r}.{suggestion} Valid names: {valid}",
                           "没有名为 {name!r} 的练习。{suggestion}可用的练习：{valid}"),
    "error.suggestion": (" Did you mean {close!r}?", "你是不是想写 {close!r}？"),
    "error.not_callable": ("check() needs the function itself as its second argument, e.g. "
                           "check({name!r}, {short}) (without calling it); got {what}{extra}.",
                           "check 的第二个参数应该是函数本身，例如 check({name!r}, {short})"
                           "（不要加括号调用它）；实际传入的是 {what}{extra}。"),
    "error.tensor_shape": (" of shape {shape}", "，形状 {shape}"),
    "error.figure": ("figure needs the CheckResult that run_check returns; got {what}.",
                     "figure 需要 run_check 返回的 CheckResult；实际传入的是 {what}。"),
}


def text(lang: str, key: str, **params: Any) -> str:
    """The sentence ``key`` of the checker in ``lang``, filled with ``params``."""
    return MESSAGES[key][LANGUAGES.index(lang)].format(**params)


# --- numbers and shapes are written the same way in every language ----------------------------

def shape(t: torch.Tensor) -> str:
    """``(3, 5)``, ``(5,)``, ``()``: a shape written as a Python tuple."""
    return str(tuple(t.shape))


def scalar(v: Any) -> str:
    """A number as feedback prints it: floats with at most four decimals."""
    if isinstance(v, float):
        s = f"{v:.4f}".rstrip("0")
        return s + "0" if s.endswith(".") else s
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


def _kind_line(kind: str, facts: Mapping[str, Any], lang: str, kind_text: str | None = None) -> str:
    """The line that says what failed; a values or device failure words its ``how`` first."""
    if kind == "rule":
        return kind_text or facts.get("rule", "")
    if kind == "values" and "how" not in facts:  # not tensors: the results as they are
        kind = "result"
    if kind in ("values", "device"):
        facts = {**facts, "how": text(lang, f"{kind}.{facts['how']}", **facts)}
    return text(lang, "kind." + kind, **facts)


def render(result, args: tuple[str, ...], hint: str | None, lang: str, kind_text: str | None = None) -> str:
    """The text of ``result`` in ``lang``; ``hint`` is the exercise's or the checker's hint, if any;
    what the answer printed during the check, summarised, comes first."""
    r, lines = result, []
    if r.n_printed:
        lines = [text(lang, "printed", count=r.n_printed)] + ["  | " + s[:120] for s in r.printed]
    if r.status in ("passed", "not_attempted", "timeout"):  # one sentence
        return "\n".join(lines + [text(lang, r.status, name=r.name, n=r.n_cases, case=r.case,
                                        **r.facts)])
    lines += [text(lang, "failed", name=r.name, case=r.case, n=r.n_cases),
              _kind_line(r.kind, r.facts, lang, kind_text), text(lang, "input")]
    for arg, value in zip(args, r.inputs):
        lines += _describe(arg, value, lang)
    lines += _describe(text(lang, "expected"), r.expected, lang, indent="")
    if r.status != "raised":
        lines += _describe(text(lang, "got"), r.got, lang, indent="")
    if hint:
        lines.append(text(lang, "likely") + hint)
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


def _pieces(line: str) -> list[str]:
    """``line`` cut where it may break: after a space and around every wide character, except
    before closing punctuation and after an opening bracket."""
    kept: list[str] = []
    for prev, ch in zip(" " + line, line):
        breaks = prev == " " or _wide(prev) or _wide(ch)
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
