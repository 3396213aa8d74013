"""The Chinese notebooks' prose keeps the glossary's one word per concept (book/glossary.md).

Checked on the markdown cells and figure captions of every Chinese notebook, outside code
spans, math and link targets: no English noun the glossary translates (index, token, key,
mask), none of the near-synonyms the glossary rules out, Chinese number style (90%, 1657), and
a bold lead-in closes before its full stop (「**……**。」, no gap after 「。**」).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ZH = sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))

ENGLISH_NOUNS = {"index": "索引", "indices": "索引", "token": "词元", "tokens": "词元",
                 "key": "键", "keys": "键", "mask": "掩码", "masks": "掩码"}
RULED_OUT = {"悄悄": "静默", "悄无声息": "静默", "拷贝": "复制", "就地": "原地", "规约": "归约",
             "贪婪": "贪心", "设备侧断言": "设备端断言", "桩函数": "函数框架"}
PATTERNS = {
    r"\d %": "90% (no space before %)",
    r"\d,\d{3}(?!\d)": "1657 (no thousands separator)",
    r"。\*\*(?!\S)": "「**……**。」 (the full stop after the bold)",
}
# Fixed on another branch (chapter 2's review): a strict xfail, a reminder once it lands.
PENDING: dict[str, str] = {}


def prose(text: str) -> str:
    """Markdown without code spans and blocks, math, link targets and directive lines."""
    text = re.sub(r"````.*?\n|```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(":"))


def texts(path: Path) -> list[tuple[int, str]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] == "markdown":
            found.append((i, prose("".join(c["source"]))))
        caption = c.get("metadata", {}).get("mystnb", {})
        for part in (caption.get("figure", {}).get("caption"), caption.get("image", {}).get("alt")):
            if part:
                found.append((i, part))
    return found


def problems(cells: list[tuple[int, str]]) -> list[str]:
    found = []
    for i, text in cells:
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):  # token_logprobs is one name
            if word.lower() in ENGLISH_NOUNS:
                found.append(f"cell {i}: {word!r} -> {ENGLISH_NOUNS[word.lower()]}")
        for bad, good in RULED_OUT.items():
            if bad in text:
                found.append(f"cell {i}: {bad} -> {good}")
        for pattern, good in PATTERNS.items():
            for m in re.finditer(pattern, text):
                found.append(f"cell {i}: {m.group()!r} -> {good}")
    return found


@pytest.mark.parametrize("path", [
    pytest.param(p, marks=[pytest.mark.xfail(strict=True, reason=PENDING[p.stem])]
                 if p.stem in PENDING else [], id=p.stem) for p in ZH])
def test_chinese_prose_uses_the_glossary_words(path):
    bad = problems(texts(path))
    assert not bad, f"zh/{path.name}:\n" + "\n".join(bad)


def test_the_checks_find_what_they_look_for():
    cells = [(0, prose("每个 index 都悄悄地读取 `index`，占 90 % 的 1,657 个。**粗体。** 正文")),
             (2, "token_logprobs 和 keys_sorted 是代码里的名字"),
             (1, prose("[词元](https://example.com/token) 和 $\\mathrm{index}_i$ 都没问题"))]
    found = problems(cells)
    assert len(found) == 5 and all(f.startswith("cell 0") for f in found)
