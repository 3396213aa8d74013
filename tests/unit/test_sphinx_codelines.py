"""book/ext/gatherbook_sphinx/codelines.py: where a code line may break on a phone."""
from __future__ import annotations

import html
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "ext"))

from pygments import highlight  # noqa: E402
from pygments.lexers import PythonLexer  # noqa: E402

from gatherbook_sphinx.codelines import LineFormatter  # noqa: E402

TAG = re.compile(r"<(?!wbr>)[^>]+>")


def _html(code: str) -> str:
    return highlight(code, PythonLexer(), LineFormatter())


def _unbreakable(page: str) -> list[str]:
    """The texts of the gb-nobreak spans (tags inside them dropped)."""
    return [TAG.sub("", m) for m in re.findall(r'<span class="gb-nobreak">((?:<span[^>]*>[^<]*</span>|[^<])*)</span>', page)]


def test_a_line_breaks_after_operators_and_punctuation():
    page = _html("out = x.gather(1, idx)\n")
    assert '<span class="o">=</span><wbr>' in page and '<span class="p">(</span><wbr>' in page


def test_a_minus_sign_stays_with_its_number():
    """``-5.0`` never splits (a phone showed ``-`` at a line's end, ``5.0]]]).to(dev)`` on the
    next: issue 37); a binary minus between spaces may still break after it."""
    page = _html("s = torch.tensor([[-0.7, -3.3, -5.0]]).to(dev)\ny = a - 5\nz = x[-1]\n")
    assert not re.search(r'<span class="o">-</span><wbr><span class="m', page), page
    assert {"-0.7", "-3.3", "-5.0", "-1"} <= set(_unbreakable(page))
    assert '<span class="o">-</span><wbr> <span class="mi">5</span>' in page


def test_a_comments_short_shape_stays_on_one_line():
    page = _html("x = y  # (B, K, V)\nz = w  # over the flat (B, K * V) row, see [0, 1]\n")
    assert {"# (B, K, V)", "(B, K * V)", "[0, 1]"} <= set(_unbreakable(page))  # "#" not alone at a line's end
    long = _html("x = y  # (a long remark that may wrap anywhere)\n")
    assert not _unbreakable(long)


def test_the_copied_source_is_unchanged():
    code = "s = torch.tensor([[-1.0, -2.6]]).to(dev)  # (B, K, V)\nf = a -> b\n"
    text = html.unescape(re.sub(r"<[^>]+>", "", _html(code)))
    assert text.rstrip("\n") == code.rstrip("\n")
