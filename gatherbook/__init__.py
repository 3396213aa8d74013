"""gatherbook: the vocabulary of the gather book, as ``import gatherbook as gb``.

Every notebook imports the package once and calls its helpers through ``gb``::

    import gatherbook as gb
    dev = gb.setup(lang="en")          # the notebook's language; returns its device
    gb.draw_gather(x, 1, idx)          # a picture of a gather, drawn from real tensors
    gb.check("ch1.pick_per_row", pick_per_row)   # an exercise checked, with feedback

``__all__`` below is the table of contents, chapter by chapter; each helper's docstring says
"Introduced in Chapter N", the chapter that explains it (a constant says it in its ``#:``
comment). The names load on first use (a chapter that draws no figure does not import
matplotlib). The modules behind them: ``runtime`` (language and device), ``figures`` (the figure
kit), ``exercises`` (the exercises and puzzles, and their checker), ``logprobs``, ``fused_logprobs``, ``vocab_parallel``, ``memory``,
``tinylm``, ``vision``, ``generation``, ``expert_parallel``, ``bench`` (recorded measurements).
"""
from __future__ import annotations

import importlib
from typing import Any

#: name -> (module it lives in, chapter that introduces it); the order is the table of contents
_EXPORTS: dict[str, tuple[str, int]] = {
    # Chapter 1: gather
    "setup": ("gatherbook.runtime", 1),
    "device": ("gatherbook.runtime", 1),
    "draw_gather": ("gatherbook.figures.gather", 1),
    "draw_index_shapes": ("gatherbook.figures.gather", 1),
    "folded": ("gatherbook.folds", 1),
    "check": ("gatherbook.exercises", 1),
    "run_check": ("gatherbook.exercises", 1),
    # Chapter 2: token log-probs
    "token_logprobs": ("gatherbook.logprobs", 2),
    "peak_memory": ("gatherbook.memory", 2),
    "ALICE": ("gatherbook.tinylm", 2),
    "CharVocab": ("gatherbook.tinylm", 2),
    "TinyLM": ("gatherbook.tinylm", 2),
    "draw_shift": ("gatherbook.figures.tokens", 2),
    "draw_char_logprobs": ("gatherbook.figures.tokens", 2),
    "draw_token_mask": ("gatherbook.figures.tokens", 2),
    "draw_padding": ("gatherbook.figures.tokens", 2),
    "draw_token_logprobs_3d": ("gatherbook.figures.tokens", 2),
    "draw_peaks": ("gatherbook.figures.charts", 2),
    "draw_errors": ("gatherbook.figures.charts", 2),
    # Chapter 3: RL action values
    "draw_q_picks": ("gatherbook.figures.rl", 3),
    "draw_curves": ("gatherbook.figures.charts", 3),
    "draw_grid_policy": ("gatherbook.figures.rl", 3),
    # Chapter 4: vision patches
    "sample_image": ("gatherbook.vision", 4),
    "draw_patches": ("gatherbook.figures.images", 4),
    "draw_patch_rows": ("gatherbook.figures.images", 4),
    # Chapter 5: scatter
    "patchify": ("gatherbook.vision", 5),
    "unpatchify": ("gatherbook.vision", 5),
    "draw_scatter": ("gatherbook.figures.scatter", 5),
    "draw_images": ("gatherbook.figures.images", 5),
    # Chapter 6: pitfalls and performance
    "fused_token_logprobs": ("gatherbook.fused_logprobs", 6),
    "run_vocab_parallel": ("gatherbook.vocab_parallel", 6),
    "recorded": ("gatherbook.bench", 3),
    "format_table": ("gatherbook.bench", 6),
    "speed_figures": ("gatherbook.bench", 6),
    "draw_ratios": ("gatherbook.figures.charts", 6),
    # Chapter 7: generation (sampling, beam search, Mixture of Experts)
    "greedy": ("gatherbook.generation", 7),
    "top_k_filter": ("gatherbook.generation", 7),
    "top_p_filter": ("gatherbook.generation", 7),
    "top_p_filter_gather": ("gatherbook.generation", 7),
    "sample": ("gatherbook.generation", 7),
    "flat_topk": ("gatherbook.generation", 7),
    "beam_offsets": ("gatherbook.generation", 7),
    "reorder_cache": ("gatherbook.generation", 7),
    "beam_search": ("gatherbook.generation", 7),
    "route": ("gatherbook.generation", 7),
    "dispatch": ("gatherbook.generation", 7),
    "combine": ("gatherbook.generation", 7),
    "swiglu_experts": ("gatherbook.generation", 7),
    "moe_loop": ("gatherbook.generation", 7),
    "moe_sorted": ("gatherbook.generation", 7),
    "repetition_penalty": ("gatherbook.generation", 7),
    "capacity_slots": ("gatherbook.generation", 7),
    "load_balancing_loss": ("gatherbook.generation", 7),
    "run_expert_parallel": ("gatherbook.expert_parallel", 7),
    "draw_routing": ("gatherbook.figures.generation", 7),
    "draw_beam_step": ("gatherbook.figures.generation", 7),
    "draw_top_p": ("gatherbook.figures.generation", 7),
    "draw_capacity": ("gatherbook.figures.generation", 7),
    # Practice (the part after chapter 7): gb.check checks the puzzles too
    "show": ("gatherbook.exercises", 8),
    "board": ("gatherbook.exercises", 8),
}

__all__ = list(_EXPORTS)

#: names that an earlier edition of the book had, and what a notebook writes instead
_MOVED = {"puzzles": 'the puzzles are checked like the exercises: gb.check("puzzles.<name>", fn), '
                     'gb.show("puzzles.<name>"), gb.board()'}


def chapter_of(name: str) -> int:
    """The chapter that introduces ``gb.<name>``."""
    return _EXPORTS[name][1]


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        raise AttributeError(f"gatherbook.{name} is gone: {_MOVED[name]}")
    if name not in _EXPORTS:
        raise AttributeError(f"module 'gatherbook' has no attribute {name!r}; the book's names are "
                             f"listed in gatherbook.__all__")
    module = _EXPORTS[name][0]
    loaded = importlib.import_module(module)
    obj = loaded if module == f"gatherbook.{name}" else getattr(loaded, name)  # a module: itself
    globals()[name] = obj  # later lookups do not come back here
    return obj


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
