"""gatherbook: the vocabulary of the gather book, as ``import gatherbook as gb``.

Every notebook imports the package once and calls its helpers through ``gb``::

    import gatherbook as gb
    dev = gb.setup(lang="en")          # the notebook's language; returns its device
    gb.draw_gather(x, 1, idx)          # a picture of a gather, drawn from real tensors
    gb.check("ch1.pick_per_row", pick_per_row)   # an exercise checked, with feedback

``__all__`` below is the table of contents, chapter by chapter; each helper's docstring says
"Introduced in Chapter N", the chapter that explains it. The names load on first use (a chapter
that draws no figure does not import matplotlib). The modules behind them: ``runtime`` (language
and device), ``draw*`` (figures), ``exercises`` (checkers), ``logprobs``, ``fused_logprobs``,
``vocab_parallel``, ``memory``, ``tinylm``, ``vision``, ``bench`` (recorded measurements).
"""
from __future__ import annotations

import importlib
from typing import Any

#: name -> (module it lives in, chapter that introduces it); the order is the table of contents
_EXPORTS: dict[str, tuple[str, int]] = {
    # Chapter 1: gather
    "setup": ("gatherbook.runtime", 1),
    "device": ("gatherbook.runtime", 1),
    "draw_gather": ("gatherbook.draw", 1),
    "check": ("gatherbook.exercises", 1),
    "run_check": ("gatherbook.exercises", 1),
    # Chapter 2: token log-probs
    "token_logprobs": ("gatherbook.logprobs", 2),
    "peak_memory": ("gatherbook.memory", 2),
    "ALICE": ("gatherbook.tinylm", 2),
    "CharVocab": ("gatherbook.tinylm", 2),
    "TinyLM": ("gatherbook.tinylm", 2),
    "draw_shift": ("gatherbook.draw_logprobs", 2),
    "draw_char_logprobs": ("gatherbook.draw_logprobs", 2),
    "draw_token_mask": ("gatherbook.draw_logprobs", 2),
    "draw_peaks": ("gatherbook.draw_logprobs", 2),
    "draw_errors": ("gatherbook.draw_logprobs", 2),
    # Chapter 3: RL action values
    "draw_q_picks": ("gatherbook.draw_rl", 3),
    "draw_curves": ("gatherbook.draw_rl", 3),
    "draw_grid_policy": ("gatherbook.draw_rl", 3),
    # Chapter 4: vision patches
    "sample_image": ("gatherbook.vision", 4),
    "draw_patches": ("gatherbook.draw_vision", 4),
    "draw_patch_rows": ("gatherbook.draw_vision", 4),
    # Chapter 5: scatter
    "patchify": ("gatherbook.vision", 5),
    "unpatchify": ("gatherbook.vision", 5),
    "draw_scatter": ("gatherbook.draw_scatter", 5),
    "draw_images": ("gatherbook.draw_scatter", 5),
    # Chapter 6: pitfalls and performance
    "fused_token_logprobs": ("gatherbook.fused_logprobs", 6),
    "run_vocab_parallel": ("gatherbook.vocab_parallel", 6),
    "recorded": ("gatherbook.bench", 6),
    "format_table": ("gatherbook.bench", 6),
    "speed_figures": ("gatherbook.bench", 6),
    "draw_ratios": ("gatherbook.plots_bench", 6),
}

__all__ = list(_EXPORTS)


def chapter_of(name: str) -> int:
    """The chapter that introduces ``gb.<name>``."""
    return _EXPORTS[name][1]


def _introduced(obj: Any, chapter: int) -> None:
    """Say in ``obj``'s docstring which chapter introduces it (functions and classes only)."""
    if not (callable(obj) and hasattr(obj, "__doc__")):
        return
    line = f"Introduced in Chapter {chapter}."
    doc = obj.__doc__ or ""
    if "Introduced in Chapter" not in doc:
        try:
            obj.__doc__ = (doc.rstrip() + "\n\n" if doc.strip() else "") + line
        except (AttributeError, TypeError):  # a built-in: its docstring cannot be set
            pass


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'gatherbook' has no attribute {name!r}; the book's names are "
                             f"listed in gatherbook.__all__")
    module, chapter = _EXPORTS[name]
    obj = getattr(importlib.import_module(module), name)
    _introduced(obj, chapter)
    globals()[name] = obj  # later lookups do not come back here
    return obj


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
