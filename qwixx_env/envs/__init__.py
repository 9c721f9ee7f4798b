"""Adapters on the rules core: the PettingZoo AEC environment `qwixx_v0` (and its Parallel
view, `qwixx_v0.parallel_env`), game records, the batched engine and its single-agent training
views (Gymnasium vector env, Gymnasium env; the stable-baselines3 adapter lives in
`qwixx_env.envs.sb3` and needs the train extra).

Importing this package registers ``qwixx_env/Qwixx-v0`` with Gymnasium and loads nothing else:
each adapter's module (and PettingZoo, the bots, ...) loads when its name is first used
(PEP 562), so that ``import qwixx_env`` stays quick for a script that uses one part."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import gymnasium

if TYPE_CHECKING:
    from qwixx_env.envs import qwixx_v0
    from qwixx_env.envs.batched import BatchedQwixx
    from qwixx_env.envs.record import replay
    from qwixx_env.envs.single import QwixxGymEnv
    from qwixx_env.envs.vector import QwixxVectorEnv

__all__ = ["BatchedQwixx", "QwixxGymEnv", "QwixxVectorEnv", "qwixx_v0", "replay"]

# The module each public name lives in.
_HOMES = {
    "BatchedQwixx": "qwixx_env.envs.batched",
    "QwixxGymEnv": "qwixx_env.envs.single",
    "QwixxVectorEnv": "qwixx_env.envs.vector",
    "replay": "qwixx_env.envs.record",
}


def __getattr__(name: str) -> Any:
    """The adapters, imported on first use (PEP 562)."""
    if name == "qwixx_v0":
        return importlib.import_module("qwixx_env.envs.qwixx_v0")
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def register() -> None:
    """Register ``qwixx_env/Qwixx-v0`` with Gymnasium (done on `import qwixx_env`). The entry
    point is a string: Gymnasium imports `QwixxGymEnv` at the first `gymnasium.make`."""
    if "qwixx_env/Qwixx-v0" not in gymnasium.registry:
        gymnasium.register(id="qwixx_env/Qwixx-v0", entry_point="qwixx_env.envs.single:QwixxGymEnv")


register()
