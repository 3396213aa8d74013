"""Which device the notebooks run on (kept for older imports; see :mod:`gatherbook.runtime`)."""
from gatherbook.runtime import DEVICE_ENV as ENV_VAR, device

__all__ = ["ENV_VAR", "device"]
