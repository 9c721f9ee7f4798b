"""qwixx_env: the dice games Qwixx and Qwixx Longo as reinforcement-learning environments.

>>> from qwixx_env import qwixx_v0
>>> env = qwixx_v0.env(num_players=2, variant="classic")

Importing the package loads the rules core and registers ``qwixx_env/Qwixx-v0`` with
Gymnasium; the environments, the bots and the rest load when first used (PEP 562), and no file
is read or written until a kernel first compiles (`qwixx_env.core.compile`).
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import TYPE_CHECKING, Any

from qwixx_env import envs
from qwixx_env.core import (
    CLASSIC,
    COLORS,
    LONGO,
    Engine,
    ObservationLayout,
    ObservationView,
    TableOptions,
    Variant,
    decode_action,
    encode_action,
    get_variant,
)

if TYPE_CHECKING:
    from qwixx_env import bots, nets, policies, solver  # noqa: F401 (for type checkers)
    from qwixx_env.envs import BatchedQwixx, QwixxGymEnv, QwixxVectorEnv, qwixx_v0, replay

    __version__: str  # read from the installed metadata on first use (__getattr__)

__all__ = [
    "BatchedQwixx", "CLASSIC", "COLORS", "Engine", "QwixxGymEnv", "QwixxVectorEnv", "LONGO", "ObservationLayout",
    "ObservationView", "TableOptions", "Variant",
    "decode_action", "encode_action", "get_variant", "qwixx_v0", "replay", "__version__",
]

# Subpackages that ``import qwixx_env`` once loaded along with the environments, so that
# ``qwixx_env.bots.load(...)`` after a bare ``import qwixx_env`` keeps working.
_SUBPACKAGES = ("bots", "nets", "policies", "solver")


def _version() -> str:
    """The installed distribution's version (pyproject.toml's, the one place it is written);
    ``0+unknown`` for a source tree that is not installed."""
    try:
        return metadata.version(__name__)
    except metadata.PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """`__version__`, the environments (from `qwixx_env.envs`) and the subpackages, on first use
    (the version is read once: looking up the installed metadata takes a few milliseconds)."""
    if name == "__version__":
        globals()[name] = version = _version()
        return version
    if name in envs.__all__:
        return getattr(envs, name)
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBPACKAGES})
