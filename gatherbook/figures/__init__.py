"""The figure kit: every picture of the book, drawn from the real tensors in a notebook cell.

One renderer of cells (``grid``), one bar and one line chart (``charts``), topic modules named
by subject (the imports below say which holds what; each function's docstring, its chapter),
and ``style``, the one place that sets colours, font sizes and colour maps. The checker draws
with ``checks`` (a case's inputs, the target, yours).

Every drawing function takes ``title=``, an optional line above the picture. Titles and labels
are code identifiers and numbers only, so one figure serves both editions; the caption, in the
page's language, lives in the notebook cell. End a figure cell with ``;``.
"""
from gatherbook.figures.charts import bars, draw_curves, draw_errors, draw_peaks, draw_ratios, lines
from gatherbook.figures.gather import draw_gather, draw_index_shapes
from gatherbook.figures.generation import draw_beam_step, draw_capacity, draw_routing, draw_top_p
from gatherbook.figures.grid import draw_tensors
from gatherbook.figures.images import draw_images, draw_patch_rows, draw_patches
from gatherbook.figures.rl import draw_grid_policy, draw_q_picks
from gatherbook.figures.scatter import draw_scatter
from gatherbook.figures.style import use_book_format
from gatherbook.figures.tokens import (draw_char_logprobs, draw_padding, draw_shift,
                                       draw_token_logprobs_3d, draw_token_mask)

__all__ = [
    "draw_gather", "draw_index_shapes", "draw_tensors", "draw_padding", "draw_token_logprobs_3d",
    "draw_scatter", "draw_shift", "draw_char_logprobs", "draw_token_mask", "draw_q_picks",
    "draw_grid_policy", "draw_patches", "draw_patch_rows", "draw_images", "draw_peaks",
    "draw_errors", "draw_curves", "draw_ratios", "draw_routing", "draw_beam_step", "draw_top_p",
    "draw_capacity", "bars", "lines", "use_book_format",
]
