"""PufferLib: Qwixx as a native PufferLib environment over the batched engine.

>>> import pufferlib.vector
>>> from qwixx_env.integrations.pufferlib import QwixxPufferEnv
>>> env = QwixxPufferEnv(num_games=1024, num_players=2, opponents="greedy")
>>> observations, infos = env.reset(seed=0)             # env.observations: (1024, D + A) float32
>>> observations, rewards, terminals, truncations, infos = env.step(actions)  # the same arrays
>>> vecenv = pufferlib.vector.make(QwixxPufferEnv, num_envs=2, num_workers=2,
...                                backend=pufferlib.vector.Multiprocessing, env_kwargs={"num_games": 512})

`QwixxPufferEnv` is a `pufferlib.PufferEnv` (PufferLib's vectorised form, not its PettingZoo
emulation): each of its ``num_agents`` rows is one game of `QwixxVectorEnv`, seen from that
game's learning seat, which plays against opponents inside the engine and restarts a game
that ends in the same step. The tables, opponents and rewards are `QwixxVectorEnv`'s, whose
options it takes (but ``autoreset_mode``: PufferLib's envs restart in the same step).

**The buffers** are PufferLib's own: ``observations``, ``rewards``, ``terminals``,
``truncations`` and ``masks``, made by `PufferEnv` or handed in by PufferLib's vectorisation
(``buf``: shared memory under `pufferlib.vector.Multiprocessing`). Every `reset` and `step`
writes into them in place and returns them. The rules run in `QwixxVectorEnv`, which steps the
engine and hands back its arrays; one copy a step moves them into PufferLib's buffers, where
the observation and the int8 mask share one float32 row.

**The action mask** travels in the observation, PufferLib's only channel to a policy (its
``masks`` buffer says which rows hold a live agent: here every row, always): a row is the
learner's observation (``observation_size`` floats, as `qwixx_v0` encodes it) followed by its
legal actions as 0/1 floats (``num_actions`` of them). `observation_and_mask` splits a batch
of rows again; ``env.observation`` and ``env.action_mask`` are those two views of the
buffer. An action the mask does not offer ends that game as `QwixxVectorEnv` ends it
(``illegal_action="terminate"``: the learner's return for it is ``illegal_reward``).

**Seeds.** ``reset(seed)`` seeds game b with ``seed * num_games + b``, so that PufferLib's
workers, which it seeds ``seed``, ``seed + 1``, ..., play different games; the constructor's
``seed`` (PufferLib passes one) is used by a first reset given none.

**infos** is a list, as PufferLib asks: one dict on a step in which games ended, with their
mean return (``episode_return``), mean length in learner decisions (``episode_length``), how
many ended (``games``) and how many of those an illegal action ended (``illegal_actions``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pufferlib import PufferEnv  # pyright: ignore[reportMissingImports]

from qwixx_env.envs.vector import QwixxVectorEnv


def observation_and_mask(observations: np.ndarray, observation_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(the observations, the action masks) of rows as `QwixxPufferEnv` writes them (a numpy
    array or a torch tensor of shape (..., observation_size + num_actions)): two views."""
    return observations[..., :observation_size], observations[..., observation_size:]


# pyright, without pufferlib installed, finds `pufferlib` in this module's own folder: this very file
class QwixxPufferEnv(PufferEnv):  # pyright: ignore[reportGeneralTypeIssues]
    """`num_games` games of one table as a native PufferLib env (see the module docstring).

    `options` are `QwixxVectorEnv`'s keyword options (``num_players``, ``variant``, ``opponents``,
    ``learner_seat``, ``reward``, ``illegal_reward``, ...), checked as it checks them; `buf` and
    `seed` are what PufferLib's vectorisation passes.
    """

    def __init__(self, num_games: int = 1024, *, buf: dict | None = None, seed: int | None = None, **options: Any):
        if "autoreset_mode" in options:
            raise ValueError(f"autoreset_mode: got {options['autoreset_mode']!r}; QwixxPufferEnv restarts a game in "
                             "the step it ends in, as PufferLib's envs do (leave autoreset_mode out)")
        self.games = QwixxVectorEnv(num_games, **options)
        layout, A = self.games.layout, self.games.single_action_space.n
        self.observation_size, self.num_actions = layout.size, int(A)
        self.single_observation_space = spaces.Box(
            np.concatenate([layout.low, np.zeros(A)]).astype(np.float32),
            np.concatenate([layout.high, np.ones(A)]).astype(np.float32),
            dtype=np.float32,
        )
        self.single_action_space = spaces.Discrete(A)
        self.num_agents = self.games.num_envs
        self.first_seed = seed
        super().__init__(buf)  # PufferLib's buffers: made here, or the ones handed in
        self.observation, self.action_mask = observation_and_mask(self.observations, self.observation_size)
        self._returns = np.zeros(self.num_agents, np.float64)  # each game's return so far, for infos
        self._lengths = np.zeros(self.num_agents, np.int64)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, list[dict]]:
        """Start every game (see Seeds in the module docstring); returns (observations, [])."""
        if seed is None and not self.games.has_reset:
            seed = self.first_seed
        obs, _ = self.games.reset(seed=None if seed is None else seed * self.num_agents)
        self._write(obs)
        self.rewards[:] = 0.0
        self.terminals[:] = False
        self.truncations[:] = False
        self.masks[:] = True
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return self.observations, []

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """One learner decision per game; fills and returns (observations, rewards, terminals,
        truncations, infos), a game that ended showing the first decision of its next one."""
        obs, rewards, terminated, truncated, infos = self.games.step(actions)
        self._write(obs)
        self.rewards[:] = rewards
        self.terminals[:] = terminated
        self.truncations[:] = truncated
        self._returns += rewards
        self._lengths += 1
        ended = terminated | truncated
        if not ended.any():
            return self.observations, self.rewards, self.terminals, self.truncations, []
        illegal = infos.get("illegal_action", np.zeros_like(ended))
        summary = {
            "episode_return": float(self._returns[ended].mean()),
            "episode_length": float(self._lengths[ended].mean()),
            "games": int(ended.sum()),
            "illegal_actions": int(illegal[ended].sum()),
        }
        self._returns[ended] = 0.0
        self._lengths[ended] = 0
        return self.observations, self.rewards, self.terminals, self.truncations, [summary]

    def close(self) -> None:
        self.games.close()

    def _write(self, obs: dict[str, np.ndarray]) -> None:
        self.observation[...] = obs["observation"]
        self.action_mask[...] = obs["action_mask"]
