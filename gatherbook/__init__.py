"""gatherbook: the helper package that every notebook of the gather book imports.

One small module per concern:

- :mod:`gatherbook.runtime`   -- the notebook's language and device (``setup(lang=...)``).
- :mod:`gatherbook.draw`      -- pictures of gather (and later scatter) drawn from real tensors.
- :mod:`gatherbook.exercises` -- exercise checkers (``check("ch1.pick_per_row", fn)``).
"""
from gatherbook.runtime import device, setup

__all__ = ["device", "setup"]
