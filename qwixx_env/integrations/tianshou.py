"""Tianshou over Qwixx: one learning seat, each transition from its decision to its next.

>>> from qwixx_env.integrations.tianshou import tianshou_env
>>> env = tianshou_env(num_players=2, opponents="heuristic")   # options as QwixxGymEnv's
>>> obs, info = env.reset(seed=0)      # {"obs": (D,) float32, "mask": (A,) bool}

Tianshou's `PettingZooEnv` over ``qwixx_v0.env()`` with its multi-agent manager stores one
transition per AEC decision: a seat's next observation is that of whichever seat decides next
(in Qwixx mostly another seat's, as seats take turns in each roll), and a reward that comes on
another seat's decision (the game's end, with ``reward="win"``) is never on the seat's own
transition. `tianshou_env` gives Tianshou one learning seat instead: the other seats are played
inside the env by bots (or frozen policies) as `qwixx_env.envs.single.QwixxGymEnv` plays them,
so every step runs from one learner decision to its next (or to the game's end), with the
learner's rewards in between summed, and the next observation is always the learner's own. The
observation is renamed to Tianshou's keys: ``obs`` (the vector) and ``mask`` (the legal actions
as booleans), which Tianshou's DQN reads to leave out illegal actions. It needs nothing of
Tianshou itself; docs/integrations.md (Tianshou) trains Tianshou's DQN on it.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from qwixx_env.envs.single import QwixxGymEnv


class TianshouEnv(gymnasium.ObservationWrapper):
    """A `QwixxGymEnv` (dict observations) with Tianshou's observation keys ``obs`` and ``mask``."""

    def __init__(self, env: QwixxGymEnv):
        if env.observation != "dict":
            raise ValueError(f"env: got observation={env.observation!r}; expected a QwixxGymEnv with "
                             "observation='dict' (the mask is part of the observation)")
        super().__init__(env)
        space = env.observation_space
        assert isinstance(space, spaces.Dict)  # observation="dict"
        self.observation_space = spaces.Dict({
            "obs": space["observation"],
            "mask": spaces.MultiBinary(int(env.action_space.n)),
        })

    def observation(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"obs": observation["observation"], "mask": observation["action_mask"].astype(bool)}


def tianshou_env(**options: Any) -> TianshouEnv:
    """`TianshouEnv` over ``QwixxGymEnv(**options)``: the table's options (num_players, variant,
    lucky, reward, ...), `opponents` (bot specs or frozen policies; default ``"random"``),
    `learner_seat` (a seat, or ``"random"``: drawn per game), as `QwixxVectorEnv` takes them."""
    if options.get("observation", "dict") != "dict":
        raise ValueError(f"observation: got {options['observation']!r}; tianshou_env gives Tianshou's dict "
                         "({'obs', 'mask'}) and takes no other")
    return TianshouEnv(QwixxGymEnv(**options))
