"""Adapters on the rules core: the PettingZoo AEC environment `qwixx_v0` (and its Parallel
view, `qwixx_v0.parallel_env`), game records, the batched engine and its single-agent training
views (Gymnasium vector env, Gymnasium env; the stable-baselines3 adapter lives in
`qwixx_env.envs.sb3` and needs the train extra)."""

from qwixx_env.envs import qwixx_v0
from qwixx_env.envs.batched import BatchedQwixx
from qwixx_env.envs.record import replay
from qwixx_env.envs.single import QwixxGymEnv, register
from qwixx_env.envs.vector import QwixxVectorEnv

register()

__all__ = ["BatchedQwixx", "QwixxGymEnv", "QwixxVectorEnv", "qwixx_v0", "replay"]
