"""`QwixxGymEnv`: one game against bots as a plain `gymnasium.Env`.

Registered as ``"qwixx_env/Qwixx-v0"`` when `qwixx_env` is imported:

>>> import gymnasium, qwixx_env
>>> env = gymnasium.make("qwixx_env/Qwixx-v0", num_players=2, opponents="greedy")
>>> obs, info = env.reset(seed=0)      # {"observation": (D,), "action_mask": (A,)}
>>> flat = gymnasium.make("qwixx_env/Qwixx-v0", observation="flat")
>>> obs, info = flat.reset(seed=0)     # the (D,) vector; the mask from flat.unwrapped.action_masks()

``observation="dict"`` (the default) gives PettingZoo's observation dict, a `Dict` space;
``observation="flat"`` gives the observation vector alone, a `Box` space, as `Sb3VecEnv` does,
so that ``PPO("MlpPolicy", env)`` and sb3-contrib's ``MaskablePPO("MlpPolicy", env)`` take it
(MaskablePPO reads the mask from `action_masks()`). One game at a time is slow to train on:
`QwixxVectorEnv` under `Sb3VecEnv` steps hundreds of games per call (docs/batched.md).

It is the training view (`QwixxVectorEnv`) with a single game, so the rules, observations,
rewards and opponents are exactly the same. `action_masks()` serves sb3-contrib.

An illegal action (one the mask does not offer) ends the game by default, as PettingZoo's
classic games do, with ``info["illegal_action"] = True`` and a reward worse than any legal
ending in the reward mode (`core.rewards.illegal_return`: -2 with ``"win"``; in
``"score_delta"`` the reward that brings the game's rewards to one below the lowest possible
score), so that any action is accepted and none is an escape; ``illegal_reward=x`` sets
another return for such a game. ``illegal_action="raise"`` raises `ValueError` instead.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from qwixx_env.core.checks import check_choice
from qwixx_env.envs.vector import ILLEGAL_ACTIONS, QwixxVectorEnv

OBSERVATIONS = ("dict", "flat")


class QwixxGymEnv(gymnasium.Env):
    """One learning seat against opponents from a pool; options as `QwixxVectorEnv` (the
    default opponent is ``"random"``), plus `illegal_action`, `illegal_reward` and
    `observation` (see the module docstring)."""

    metadata = {"render_modes": []}
    action_space: spaces.Discrete  # as __init__ sets it (gymnasium.Env declares any Space)

    def __init__(self, illegal_action: str = "terminate", observation: str = "dict", **kwargs: Any):
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.observation = check_choice("observation", observation, OBSERVATIONS)
        self.vector = QwixxVectorEnv(1, illegal_action="terminate", **kwargs)
        self.table, self.variant = self.vector.table, self.vector.variant  # options, and the Variant played
        space = self.vector.single_observation_space
        self.observation_space = space["observation"] if observation == "flat" else space
        self.action_space = self.vector.single_action_space
        self._obs: dict[str, np.ndarray] | None = None
        self._over = True

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new game, always (also in the middle of one). With a seed it is
        reproducible; without one the game's generator continues from the previous game."""
        super().reset(seed=seed)
        if seed is not None or not self.vector.has_reset:
            obs, _ = self.vector.reset(seed=seed)
        elif self._over and self._obs is not None:
            obs = self._obs  # the next game already started when the last one ended
        else:  # in the middle of a game: start the next
            self.vector.start_games(np.zeros(1, np.int64))
            obs = self.vector.observations()
        self._over = False
        self._obs = obs
        return self._shown(_one(obs)), {}

    def step(self, action: int):
        if self._over or self._obs is None:  # _obs is None only before the first reset
            raise RuntimeError("the game is over (or not started): call reset()")
        mask = self._obs["action_mask"][0]
        legal = (not isinstance(action, (bool, np.bool_)) and self.action_space.contains(action)
                 and mask[int(action)] == 1)  # a bool is no action index
        if not legal and self.illegal_action == "raise":
            legal_now = np.flatnonzero(mask).tolist()
            where = "action_masks()" + (" and obs['action_mask']" if self.observation == "dict" else "")
            raise ValueError(
                f"action: got {action!r}, which is not legal now; legal now: {legal_now} (the ones {where} "
                "offer); nothing changed. illegal_action='terminate' ends the game instead"
            )
        obs, rewards, terminated, _, infos = self.vector.step(np.array([int(action) if legal else -1]))
        self._obs = obs
        if not terminated[0]:
            return self._shown(_one(obs)), float(rewards[0]), False, False, {}
        self._over = True
        final = {k: v[0].copy() for k, v in infos["final_obs"].items()}
        info = {"illegal_action": True} if not legal else {}
        return self._shown(final), float(rewards[0]), True, False, info

    def __repr__(self) -> str:
        v = self.vector
        return (f"QwixxGymEnv(num_players={v.num_players}, variant={self.variant.name!r}, reward={v.reward_mode!r}, "
                f"learner_seat={v.learner_seat!r}, opponents={v.opponents!r}, "
                f"illegal_action={self.illegal_action!r}, observation={self.observation!r})")

    def __str__(self) -> str:  # what Gymnasium's wrappers show: the options, the default opponent among them
        return f"<{self!r}>"

    def action_masks(self) -> np.ndarray:
        """(A,) bool: the legal actions now (all False once the game is over)."""
        if self._over:
            return np.zeros(self.action_space.n, bool)
        return self.vector.action_masks()[0]

    def _shown(self, obs: dict[str, np.ndarray]) -> Any:
        """An observation in the form chosen by the `observation` option."""
        return obs["observation"] if self.observation == "flat" else obs


def _one(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v[0].copy() for k, v in obs.items()}

