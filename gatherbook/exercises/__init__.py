"""Self-study exercises that check the reader's answer and explain the mistake.

In a notebook::

    from gatherbook.exercises import check

    def pick_per_row(x, idx):
        return x.gather(1, idx.unsqueeze(1)).squeeze(1)

    check("ch1.pick_per_row", pick_per_row)
    # ✔ ch1.pick_per_row: all 12 cases passed

- :func:`check` prints the verdict in the notebook's language and returns ``None``.
- :func:`run_check` returns a :class:`CheckResult` and prints nothing (for tests and tools).
- :func:`names` lists the exercises; :func:`get` returns one :class:`Exercise`.

Each chapter has one module (``ch1.py``, ``ch2.py`` ...) that declares a list ``EXERCISES`` of
:class:`Exercise` objects; the modules are found by name, so a new chapter only adds its file.
"""
from gatherbook.exercises._checker import (
    CheckResult,
    Exercise,
    Mistake,
    check,
    figure,
    get,
    names,
    run_check,
)

__all__ = ["CheckResult", "Exercise", "Mistake", "check", "figure", "get", "names", "run_check"]
