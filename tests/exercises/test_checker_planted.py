"""Every planted wrong answer of every declaration runs: it is the slip it names, not broken code.

A planted mistake may raise where its slip makes torch raise (an index out of range, a shape that
does not fit: the checker names the mistake from that error); a TypeError, a NameError, an
AttributeError ... raised by the planted code itself means the reader's real slip, which returns
values, gets no hint (issue 35: ``top_p_mask``'s ``cumsum_lt_p`` called ``sort(1, ..., stable=True)``).
"""
from __future__ import annotations

import pytest
import torch

from gatherbook.exercises import get, names

#: errors that say the planted code is broken, not that the slip it plants failed inside torch
BROKEN = (TypeError, NameError, AttributeError, KeyError, SyntaxError, ImportError, ZeroDivisionError)


def _copy(case):
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in case]


@pytest.mark.parametrize("name", names())
def test_every_planted_answer_runs_on_every_case(name):
    ex = get(name)
    planted = [(f"Mistake {m.key!r}", m.fn) for m in ex.mistakes]
    planted += [(f"Wrong {w.hint!r} ({w.why or w.kind})", w.fn) for w in ex.wrong if w.kind != "exception"]
    broken = []
    for label, fn in planted:
        for k, case in enumerate(ex.cases(), 1):
            try:
                fn(*_copy(case))
            except Exception as e:  # noqa: BLE001 - the slip may raise inside torch; broken code may not
                if isinstance(e, BROKEN):
                    broken.append(f"{label} on case {k}: {type(e).__name__}: {str(e).strip()[:160]}")
                    break
    assert not broken, f"{name}: planted answers that do not run:\n" + "\n".join(broken)
