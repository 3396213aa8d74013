"""The exercise checker: runs a reader's function on fixed and seeded random cases.

A chapter module (``ch1.py``, ``ch2.py`` ...) declares a list ``EXERCISES`` of :class:`Exercise`
objects and nothing else; :func:`registry` finds every ``chN`` module of this package and
collects them. :func:`run_check` compares the reader's answers with the reference, case by case,
in a fixed order (type, then ndim and shape, then dtype, then values) and stops at the first
case that fails; :func:`check` prints the verdict in the notebook's language
(:func:`gatherbook.i18n.language`) and, for a wrong answer, draws expected vs got.

Cases always run on the CPU, whatever device the notebook uses; an answer on another device
is moved to the CPU before it is compared.
"""
from __future__ import annotations

import difflib
import importlib
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import torch

from gatherbook.i18n import language, resolve

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Case = tuple  # the positional arguments of one call

#: Tensors with at most this many elements are printed in full in feedback; larger ones by shape.
PRINT_LIMIT = 64


@dataclass(frozen=True)
class Mistake:
    """A plausible wrong solution and the hint shown when a reader's answer matches it.

    ``fn`` takes the exercise's arguments, like the reference. The checker names this mistake
    when the reader's output on the failing case equals ``fn``'s output on that case (or both
    raise the same exception with the same message). Tests use ``fn`` as a planted wrong answer.
    """

    key: str
    fn: Callable[..., Any]
    hint_en: str
    hint_zh: str


@dataclass(frozen=True)
class Exercise:
    """One exercise: what the reader writes, what is correct, and the cases it is checked on.

    Attributes:
        name: ``"chN.snake_case"``, the name readers pass to :func:`check`.
        title_en, title_zh: one-line titles (the heading of the exercise in the book).
        args: names of the positional arguments, in order (used when printing a case).
        reference: the correct solution.
        edge_cases: hand-written cases, checked first (small, so the feedback is readable).
        random_case: ``random_case(g) -> Case`` draws one case from a CPU ``torch.Generator``.
        n_random: how many random cases to draw.
        seed: the generator's seed, so the cases are the same on every run.
        rtol, atol: tolerance of :func:`torch.allclose` for floating-point answers.
        mistakes: known wrong solutions with their hints (the first that matches is named).
    """

    name: str
    title_en: str
    title_zh: str
    args: tuple[str, ...]
    reference: Callable[..., Any]
    edge_cases: Sequence[Case]
    random_case: Callable[[torch.Generator], Case]
    n_random: int = 8
    seed: int = 0
    rtol: float = 1e-5
    atol: float = 1e-8
    mistakes: Sequence[Mistake] = ()

    def cases(self) -> list[Case]:
        """The edge cases followed by ``n_random`` seeded random ones (same list on every call)."""
        g = torch.Generator(device="cpu").manual_seed(self.seed)
        return list(self.edge_cases) + [self.random_case(g) for _ in range(self.n_random)]

    def title(self, lang: str | None = None) -> str:
        """The title in ``lang`` (default: the notebook's language)."""
        return self.title_zh if resolve(lang) == "zh" else self.title_en


@dataclass(frozen=True, eq=False)
class CheckResult:
    """The outcome of :func:`run_check`.

    ``failed_case`` is 1-based (as printed) and ``None`` when nothing failed; ``failure`` names
    what differed first: ``"type"``, ``"shape"``, ``"dtype"``, ``"values"`` or ``"exception"``.
    ``hint_key`` is the key of the recognised :class:`Mistake` (or ``"generic.<what>"`` for a
    general hint), ``None`` when no hint applies. ``expected``/``got`` hold the outputs of the
    failing case, ``inputs`` its arguments.
    """

    name: str
    passed: bool
    attempted: bool
    n_cases: int
    failed_case: int | None
    message: str
    hint_key: str | None = None
    failure: str | None = None
    lang: str = "en"
    inputs: Case | None = field(default=None, repr=False)
    expected: Any = field(default=None, repr=False)
    got: Any = field(default=None, repr=False)

    def __repr__(self) -> str:
        if not self.attempted:
            verdict = "not attempted"
        elif self.passed:
            verdict = f"passed {self.n_cases}/{self.n_cases}"
        else:
            verdict = f"failed case {self.failed_case}/{self.n_cases} ({self.failure}, hint={self.hint_key})"
        return f"<CheckResult {self.name}: {verdict}>"


# --------------------------------------------------------------------------------------------
# the registry

_REGISTRY: dict[str, Exercise] = {}
_LOADED = False


def _load() -> dict[str, Exercise]:
    """Import every ``chN`` module of this package once and collect its ``EXERCISES``."""
    global _LOADED
    if not _LOADED:
        package = importlib.import_module("gatherbook.exercises")
        chapters = sorted(
            (m.name for m in pkgutil.iter_modules(package.__path__) if re.fullmatch(r"ch\d+", m.name)),
            key=lambda s: int(s[2:]),
        )
        for chapter in chapters:
            module = importlib.import_module(f"gatherbook.exercises.{chapter}")
            for ex in getattr(module, "EXERCISES", ()):
                if not ex.name.startswith(chapter + "."):
                    raise ValueError(f"exercise {ex.name!r} is declared in {chapter}.py; its name must start with {chapter + '.'!r}")
                if ex.name in _REGISTRY:
                    raise ValueError(f"exercise {ex.name!r} is declared twice")
                _REGISTRY[ex.name] = ex
        _LOADED = True
    return _REGISTRY


def names() -> list[str]:
    """The names of all exercises, chapter by chapter, in the order the chapters declare them."""
    return list(_load())


def get(name: str) -> Exercise:
    """The :class:`Exercise` called ``name``.

    Raises:
        ValueError: no exercise has that name (the message lists the valid names and the closest).
    """
    reg = _load()
    if isinstance(name, str) and name in reg:
        return reg[name]
    close = difflib.get_close_matches(str(name), list(reg), n=1, cutoff=0.5)
    suggestion_en = f" Did you mean {close[0]!r}?" if close else ""
    suggestion_zh = f"你是不是想写 {close[0]!r}？" if close else ""
    valid = ", ".join(reg)
    if language() == "zh":
        raise ValueError(f"没有名为 {name!r} 的练习。{suggestion_zh}可用的练习：{valid}")
    raise ValueError(f"There is no exercise called {name!r}.{suggestion_en} Valid names: {valid}")


# --------------------------------------------------------------------------------------------
# formatting (numbers and shapes are written the same way in both languages)

def _shape(t: torch.Tensor) -> str:
    return str(tuple(t.shape))


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        s = f"{v:.4f}".rstrip("0")
        return s + "0" if s.endswith(".") else s
    return str(v)


def _values(t: torch.Tensor, indent: str) -> list[str]:
    """``t``'s values as aligned nested lists, one row per line (small tensors only)."""
    import numpy as np

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:  # NumPy has no bfloat16; every bfloat16 is exact in float32
        t = t.float()
    a = t.resolve_conj().resolve_neg().numpy()
    if a.ndim == 0:
        return [indent + _scalar(a.item())]
    formatter = None
    if a.dtype.kind == "f":  # one width for all, so that the columns line up
        width = max(len(_scalar(float(v))) for v in a.flat)
        formatter = {"float_kind": lambda v: _scalar(float(v)).rjust(width)}
    text = np.array2string(a, separator=", ", threshold=10_000, max_line_width=10_000, formatter=formatter)
    return [(indent + line).rstrip() for line in text.splitlines()]


def _describe(label: str, v: Any, lang: str, indent: str = "  ") -> list[str]:
    """A header line ``label: shape (3, 5), int64`` and, for a small tensor, its values."""
    sep = "：" if lang == "zh" else ": "
    if isinstance(v, torch.Tensor):
        if lang == "zh":
            head = f"{indent}{label}{sep}形状 {_shape(v)}，{_dtype(v)}"
        else:
            head = f"{indent}{label}{sep}shape {_shape(v)}, {_dtype(v)}"
        if v.device.type != "cpu":
            head += f", {v.device}" if lang == "en" else f"，{v.device}"
        lines = [head]
        if 0 < v.numel() <= PRINT_LIMIT and v.layout == torch.strided:
            lines += _values(v, indent + "    ")
        return lines
    if v is None:
        return [f"{indent}{label}{sep}None"]
    text = repr(v)
    if len(text) > 200:
        text = text[:200] + " ..."
    return [f"{indent}{label}{sep}{type(v).__name__} {text}"]


def _type_name(v: Any) -> str:
    """``None``, ``list``, ``torch.Tensor``, ``numpy.ndarray`` ...: what a value is, for a message."""
    if v is None:
        return "None"
    t = type(v)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


# --------------------------------------------------------------------------------------------
# running and comparing

@dataclass(frozen=True)
class _Raised:
    """What a call raised, compared by type and message (to recognise a known mistake)."""

    type_name: str
    text: str

    @classmethod
    def of(cls, e: BaseException) -> "_Raised":
        return cls(type(e).__name__, str(e).strip())


def _clone(case: Case) -> Case:
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in case)


def _call(fn: Callable[..., Any], case: Case) -> Any:
    """``fn(*case)`` on fresh copies of the inputs; an exception is returned as :class:`_Raised`."""
    try:
        out = fn(*_clone(case))
    except Exception as e:  # the reader's code: report it, never let it escape
        return _Raised.of(e)
    if isinstance(out, torch.Tensor):
        try:
            out = out.detach()
            if out.device.type != "cpu":
                out = out.cpu()
            if out.layout != torch.strided:  # sparse: compare its values
                out = out.to_dense()
        except Exception as e:
            return _Raised.of(e)
    return out


def _same(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Exactly the same answer (a tensor's type, shape and dtype included)."""
    if isinstance(a, _Raised) or isinstance(b, _Raised):
        return isinstance(a, _Raised) and isinstance(b, _Raised) and a == b
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_floating_point() or a.is_complex():
            return torch.allclose(a, b, rtol=rtol, atol=atol)
        return torch.equal(a, b)
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:
        return False


def _differing(expected: torch.Tensor, got: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    """Boolean mask of the cells where ``got`` differs from ``expected`` (same shape and dtype)."""
    if expected.is_floating_point() or expected.is_complex():
        return ~torch.isclose(got, expected, rtol=rtol, atol=atol)
    return got != expected


def _compare(ex: Exercise, expected: Any, got: Any, lang: str) -> tuple[str | None, list[str]]:
    """``(failure, lines)``: what differs first between ``got`` and ``expected``, or ``(None, [])``."""
    zh = lang == "zh"
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            what = _type_name(got)
            if zh:
                line = f"类型不对：应为 torch.Tensor，实际为 {what}"
            else:
                line = f"type: expected a torch.Tensor, got {what}"
            return "type", [line]
        if got.shape != expected.shape:
            if zh:
                line = f"形状不对：应为 {_shape(expected)}，实际为 {_shape(got)}"
            else:
                line = f"shape: expected {_shape(expected)}, got {_shape(got)}"
            return "shape", [line]
        if got.dtype != expected.dtype:
            if zh:
                line = f"dtype 不对：应为 {expected.dtype}，实际为 {got.dtype}"
            else:
                line = f"dtype: expected {expected.dtype}, got {got.dtype}"
            return "dtype", [line]
        if _same(expected, got, ex.rtol, ex.atol):
            return None, []
        is_float = expected.is_floating_point() or expected.is_complex()
        diff = _differing(expected, got, ex.rtol, ex.atol)
        n_diff, n = int(diff.sum()), diff.numel()
        first = [int(i) for i in diff.nonzero()[0]] if n_diff else []
        where = "[" + ", ".join(map(str, first)) + "]"
        e_v, g_v = _scalar(expected[tuple(first)].item()), _scalar(got[tuple(first)].item())
        if zh:
            how = f"用 torch.allclose 比较，rtol={ex.rtol:g}，atol={ex.atol:g}" if is_float else "逐元素精确比较"
            line = f"值不对：有 {n_diff} 个元素不同（共 {n} 个）；第一处位于 {where}：应为 {e_v}，实际为 {g_v}（{how}）"
        else:
            how = f"compared with torch.allclose, rtol={ex.rtol:g}, atol={ex.atol:g}" if is_float else "compared exactly"
            line = f"values: {n_diff} of {n} elements differ; first at {where}: expected {e_v}, got {g_v} ({how})"
        return "values", [line]
    if _same(expected, got, ex.rtol, ex.atol):
        return None, []
    line = (f"结果不对：应为 {expected!r}，实际为 {got!r}" if zh else f"result: expected {expected!r}, got {got!r}")
    return "values", [line]


def _generic_hint(expected: Any, got: Any) -> tuple[str, str, str] | None:
    """A hint for common slips that no declared mistake covers: ``(key, en, zh)``."""
    if got is None:
        return ("generic.none",
                "your function returned None: did it forget to `return` the result?",
                "你的函数返回了 None：是不是忘了 `return` 结果？")
    if not isinstance(expected, torch.Tensor):
        return None
    if not isinstance(got, torch.Tensor):
        return ("generic.not_tensor",
                "return the tensor itself, not a Python or NumPy copy of it "
                "(no `.tolist()`, `.item()` or `.numpy()`).",
                "请直接返回张量本身，而不是它的 Python 或 NumPy 副本"
                "（不要调用 `.tolist()`、`.item()` 或 `.numpy()`）。")
    e, g = tuple(expected.shape), tuple(got.shape)
    if g != e and [s for s in g if s != 1] == [s for s in e if s != 1]:
        return ("generic.size_one",
                "the sizes agree except for dimensions of size 1, and shapes must match exactly: "
                "add or remove them with `unsqueeze(d)`/`squeeze(d)` (a bare `squeeze()` also drops "
                "a batch dimension of size 1).",
                "除了大小为 1 的维度以外各维大小都一致，而形状必须完全相同：用 `unsqueeze(d)`/`squeeze(d)` "
                "补上或去掉这些维度（不带参数的 `squeeze()` 还会把大小为 1 的批次维也去掉）。")
    if g != e and len(g) == len(e) == 2 and g == e[::-1]:
        return ("generic.transposed",
                "your result has the expected shape transposed: check which `dim` you gathered along.",
                "你的结果形状正好是期望形状的转置：检查一下沿哪个 `dim` 做的 gather。")
    if g == e and got.dtype != expected.dtype:
        return ("generic.dtype",
                "gather keeps the dtype of the tensor it reads from; something in your function "
                "converted the result (`.float()`, `.half()`, `.long()` ...).",
                "gather 的输出与被读取的张量 dtype 相同；是你函数里的某一步转换了结果"
                "（`.float()`、`.half()`、`.long()` 等）。")
    return None


# --------------------------------------------------------------------------------------------
# the public entry points

def _check_args(name: str, fn: Any) -> Exercise:
    ex = get(name)
    if not callable(fn):
        short = ex.name.split(".", 1)[1]
        what = _type_name(fn)
        extra = ""
        if isinstance(fn, torch.Tensor):
            extra = (f"，形状 {_shape(fn)}" if language() == "zh" else f" of shape {_shape(fn)}")
        if language() == "zh":
            raise TypeError(
                f"check 的第二个参数应该是函数本身，例如 check({ex.name!r}, {short})（不要加括号调用它）；"
                f"实际传入的是 {what}{extra}。")
        raise TypeError(
            f"check() needs the function itself as its second argument, e.g. check({ex.name!r}, {short}) "
            f"(without calling it); got {what}{extra}.")
    return ex


def run_check(name: str, fn: Callable[..., Any], *, lang: str | None = None) -> CheckResult:
    """Check ``fn`` against exercise ``name`` without printing anything.

    Args:
        name: an exercise name such as ``"ch1.pick_per_row"`` (see :func:`names`).
        fn: the reader's function; it is called with each case's inputs as positional arguments.
        lang: ``"en"`` or ``"zh"`` for the message (default: :func:`gatherbook.i18n.language`).

    Returns:
        A :class:`CheckResult`; its ``message`` is what :func:`check` prints.

    Raises:
        ValueError: ``name`` is not an exercise (the message lists the valid names), or ``lang``
            is neither ``"en"`` nor ``"zh"``.
        TypeError: ``fn`` is not callable.
    """
    ex = _check_args(name, fn)
    lang = resolve(lang)
    zh = lang == "zh"
    cases = ex.cases()
    n = len(cases)
    for k, case in enumerate(cases, start=1):
        expected = _call(ex.reference, case)
        if isinstance(expected, _Raised):  # a bug in the book, not in the reader's answer
            raise RuntimeError(f"the reference of {ex.name} raised on case {k}: {expected.type_name}: {expected.text}")
        got = _call(fn, case)
        if isinstance(got, _Raised) and got.type_name == "NotImplementedError" and k == 1:
            msg = (f"… {ex.name} 还没有作答：请补全函数体，然后重新运行这个单元格。" if zh else
                   f"… {ex.name} not attempted yet: fill in the function body, then run this cell again.")
            return CheckResult(ex.name, False, False, n, None, msg, lang=lang)
        if isinstance(got, _Raised):
            failure = "exception"
            text = got.text if len(got.text) <= 600 else got.text[:600] + " ..."
            what = [f"你的函数抛出了 {got.type_name}：{text}" if zh else f"your function raised {got.type_name}: {text}"]
        else:
            failure, what = _compare(ex, expected, got, lang)
            if failure is None:
                continue
        # the case failed: name the likely mistake, then describe the case
        hint_key, hint = None, None
        for m in ex.mistakes:
            if _same(_call(m.fn, case), got, ex.rtol, ex.atol):
                hint_key, hint = m.key, (m.hint_zh if zh else m.hint_en)
                break
        if hint is None and not isinstance(got, _Raised):
            generic = _generic_hint(expected, got)
            if generic:
                hint_key, hint = generic[0], (generic[2] if zh else generic[1])
        head = (f"✘ {ex.name}：第 {k} 个用例（共 {n} 个）未通过" if zh else
                f"✘ {ex.name}: case {k} of {n} failed")
        lines = [head] + what
        lines.append("输入：" if zh else "input:")
        for arg, value in zip(ex.args, case):
            lines += _describe(arg, value, lang)
        lines += _describe("期望结果" if zh else "expected", expected, lang, indent="")
        if not isinstance(got, _Raised):
            lines += _describe("你的结果" if zh else "got", got, lang, indent="")
        if hint:
            lines.append(("可能的错误：" if zh else "likely mistake: ") + hint)
        return CheckResult(ex.name, False, True, n, k, "\n".join(lines), hint_key, failure, lang,
                           inputs=case, expected=expected, got=None if isinstance(got, _Raised) else got)
    msg = f"✔ {ex.name}：{n} 个用例全部通过" if zh else f"✔ {ex.name}: all {n} cases passed"
    return CheckResult(ex.name, True, True, n, None, msg, lang=lang)


def figure(result: CheckResult) -> "Figure | None":
    """A picture of expected vs got for a failed :class:`CheckResult`, or ``None``.

    Drawn with :func:`gatherbook.draw.draw_tensors` when both are tensors that can be drawn
    (0 to 3 dims, at most ``(4, 8, 10)``; cells that differ are marked when the shapes agree);
    ``None`` when there is nothing that makes sense to draw, or the tensors are too big for a
    picture.

    Raises:
        TypeError: ``result`` is not a :class:`CheckResult` (pass what :func:`run_check` returns).
    """
    if not isinstance(result, CheckResult):
        raise TypeError(f"figure needs the CheckResult that run_check returns; got {type(result).__name__}.")
    e, g = result.expected, result.got
    if result.passed or not isinstance(e, torch.Tensor) or not isinstance(g, torch.Tensor):
        return None
    if result.failure not in ("shape", "values") or e.ndim > 3 or g.ndim > 3 or e.numel() == 0 or g.numel() == 0:
        return None
    try:
        from gatherbook.draw import draw_tensors
    except ImportError:
        return None
    mark: Mapping[str, torch.Tensor] | None = None
    if result.failure == "values":
        ex = get(result.name)
        mark = {"got": _differing(e, g, ex.rtol, ex.atol)}
    try:
        return draw_tensors({"expected": e, "got": g}, title=f"{result.name}  #{result.failed_case}", mark=mark)
    except ValueError:  # too big (or shapes it cannot draw): the text says it all
        return None


def _show(fig) -> None:
    """Display ``fig`` under the printed text in a notebook; elsewhere just release it."""
    import matplotlib.pyplot as plt

    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None and getattr(shell, "kernel", None) is not None:
        from IPython.display import display

        sys.stdout.flush()
        display(fig)
    plt.close(fig)


def check(name: str, fn: Callable[..., Any]) -> None:
    """Check the reader's ``fn`` against exercise ``name`` and print the verdict.

    Prints one line when every case passes; for a wrong answer, the first failing case: what
    differed (type, shape, dtype or values), its inputs, expected and got, the likely mistake
    when it is a known one, and a picture of expected vs got. A function whose body is still
    ``raise NotImplementedError`` is reported as not attempted. Never raises for a wrong
    answer (the notebook keeps running); returns ``None`` so that nothing else is displayed.
    Use :func:`run_check` to get the result as an object.

    Raises:
        ValueError: ``name`` is not an exercise (the message lists the valid names).
        TypeError: ``fn`` is not callable.
    """
    result = run_check(name, fn)
    print(result.message)
    fig = figure(result)
    if fig is not None:
        _show(fig)
