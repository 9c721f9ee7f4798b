"""qwixx_env: the dice games Qwixx and Qwixx Longo as reinforcement-learning environments.

>>> from qwixx_env import qwixx_v0
>>> env = qwixx_v0.env(num_players=2, variant="classic")

Importing the package loads the rules core and registers ``qwixx_env/Qwixx-v0`` with
Gymnasium; the environments, the bots and the rest load when first used (PEP 562), and no file
is read or written until a kernel first compiles (`qwixx_env.core.compile`).
"""

from __future__ import annotations

import importlib
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

__version__ = "0.1.0"

__all__ = [
    "BatchedQwixx", "CLASSIC", "COLORS", "Engine", "QwixxGymEnv", "QwixxVectorEnv", "LONGO", "ObservationLayout",
    "ObservationView", "TableOptions", "Variant",
    "decode_action", "encode_action", "get_variant", "qwixx_v0", "replay", "__version__",
]

# Subpackages that ``import qwixx_env`` once loaded along with the environments, so that
# ``qwixx_env.bots.load(...)`` after a bare ``import qwixx_env`` keeps working.
_SUBPACKAGES = ("bots", "nets", "policies", "solver")


def __getattr__(name: str) -> Any:
    """The environments (from `qwixx_env.envs`) and the subpackages, imported on first use."""
    if name in envs.__all__:
        return getattr(envs, name)
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBPACKAGES})
