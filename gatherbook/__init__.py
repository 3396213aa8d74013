"""gatherbook: the helper package that every notebook of the gather book imports.

One small module per concern:

- :mod:`gatherbook.devices`  -- which device the notebooks run on (``device()``).
- :mod:`gatherbook.draw`     -- pictures of gather (and later scatter) drawn from real tensors.
- :mod:`gatherbook.i18n`     -- the language of the running notebook (English or Chinese).
- :mod:`gatherbook.exercises` -- exercise checkers (``check("ch1.pick_per_row", fn)``).
"""
from gatherbook.runtime import device, setup

__all__ = ["device", "setup"]
__version__ = "0.1.0"
