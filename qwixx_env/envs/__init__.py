"""Adapters on the rules core: the PettingZoo AEC environment `qwixx_v0` and game records."""

from qwixx_env.envs import qwixx_v0
from qwixx_env.envs.record import replay

__all__ = ["qwixx_v0", "replay"]
