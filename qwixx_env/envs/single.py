"""`QwixxGymEnv`: one game against bots as a plain `gymnasium.Env`.

Registered as ``"qwixx_env/Qwixx-v0"`` when `qwixx_env` is imported:

>>> import gymnasium, qwixx_env
>>> env = gymnasium.make("qwixx_env/Qwixx-v0", num_players=2, opponents="greedy")
>>> obs, info = env.reset(seed=0)      # {"observation": (D,), "action_mask": (A,)}

It is the training view (`QwixxVectorEnv`) with a single game, so the rules, observations,
rewards and opponents are exactly the same. `action_masks()` serves sb3-contrib.

An illegal action (one the mask does not offer) ends the game with reward -1 and
``info["illegal_action"] = True`` by default, as PettingZoo's classic games do, so that any
action of the action space is accepted; ``illegal_action="raise"`` raises `ValueError` instead.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from qwixx_env.envs.vector import QwixxVectorEnv


class QwixxGymEnv(gymnasium.Env):
    """One learning seat against opponents from a pool; options as `QwixxVectorEnv`."""

    metadata = {"render_modes": []}

    def __init__(self, illegal_action: str = "terminate", **kwargs: Any):
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action: got {illegal_action!r}; expected 'terminate' or 'raise'")
        self.illegal_action = illegal_action
        self.vector = QwixxVectorEnv(1, **kwargs)
        self.observation_space = self.vector.single_observation_space
        self.action_space = self.vector.single_action_space
        self._obs: dict[str, np.ndarray] | None = None
        self._over = True

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new game, always (also in the middle of one). With a seed it is
        reproducible; without one the game's generator continues from the previous game."""
        super().reset(seed=seed)
        if seed is not None or not self.vector._has_reset:
            obs, _ = self.vector.reset(seed=seed)
        elif self._over and self._obs is not None:
            obs = self._obs  # the next game already started when the last one ended
        else:  # in the middle of a game, or one abandoned on an illegal action: start the next
            self.vector._start_games(np.zeros(1, np.int64))
            obs = self.vector._observations()
        self._over = False
        self._obs = obs
        return _one(obs), {}

    def step(self, action: int):
        if self._over:
            raise RuntimeError("the game is over (or not started): call reset()")
        legal = (not isinstance(action, (bool, np.bool_)) and self.action_space.contains(action)
                 and self._obs["action_mask"][0, int(action)] == 1)  # a bool is no action index
        if not legal and self.illegal_action == "terminate":
            self._over = True
            self._obs = None  # the interrupted game is abandoned; reset() starts afresh
            last = _one(self.vector._observations())
            last["action_mask"][:] = 0  # the game is over: nothing is legal (as after a normal end)
            return last, -1.0, True, False, {"illegal_action": True}
        obs, rewards, terminated, truncated, infos = self.vector.step(np.array([action]))
        self._obs = obs
        if terminated[0]:
            self._over = True
            final = {k: v[0] for k, v in infos["final_obs"].items()}
            return final, float(rewards[0]), True, False, {}
        return _one(obs), float(rewards[0]), False, False, {}

    def action_masks(self) -> np.ndarray:
        """(A,) bool: the legal actions now."""
        return self.vector.action_masks()[0]


def _one(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v[0].copy() for k, v in obs.items()}


def register() -> None:
    """Register ``qwixx_env/Qwixx-v0`` with Gymnasium (done on `import qwixx_env`)."""
    if "qwixx_env/Qwixx-v0" not in gymnasium.registry:
        gymnasium.register(id="qwixx_env/Qwixx-v0", entry_point="qwixx_env.envs.single:QwixxGymEnv")
