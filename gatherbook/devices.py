"""Which device the notebooks run on."""
from __future__ import annotations

import os

import torch

ENV_VAR = "GATHERBOOK_DEVICE"
_CHOICES = ("cpu", "cuda")


def device() -> torch.device:
    """Return the device every notebook of the book uses.

    CUDA when a GPU is available, otherwise the CPU. The environment variable
    ``GATHERBOOK_DEVICE`` (``cpu`` or ``cuda``) overrides the choice; asking for ``cuda``
    on a machine without a usable GPU is an error rather than a silent fallback.

    Raises:
        ValueError: ``GATHERBOOK_DEVICE`` holds something other than ``cpu`` or ``cuda``,
            or asks for ``cuda`` where none is available.
    """
    wanted = os.environ.get(ENV_VAR, "").strip().lower()
    if wanted == "":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if wanted not in _CHOICES:
        raise ValueError(
            f"{ENV_VAR}={os.environ[ENV_VAR]!r} is not a device this book knows; "
            f"expected one of {', '.join(_CHOICES)} (or leave it unset to pick CUDA when available)."
        )
    if wanted == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"{ENV_VAR}=cuda, but torch.cuda.is_available() is False on this machine "
            f"(torch {torch.__version__}); unset {ENV_VAR} or set it to 'cpu'."
        )
    return torch.device(wanted)
