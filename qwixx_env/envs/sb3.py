"""`Sb3VecEnv`: the training view as a stable-baselines3 `VecEnv`, for sb3-contrib's
`MaskablePPO` (needs the ``train`` extra: stable-baselines3).

Observations are the flat vectors (a `Box`); the legal actions come from `action_masks()`,
which MaskablePPO finds by itself. Finished games restart at once, SB3-style: the returned
observation is the new game's and ``infos[i]["terminal_observation"]`` holds the final one.

>>> from sb3_contrib import MaskablePPO
>>> venv = Sb3VecEnv(QwixxVectorEnv(256, num_players=2, opponents="greedy"))
>>> MaskablePPO("MlpPolicy", venv).learn(100_000)
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from qwixx_env.envs.vector import QwixxVectorEnv
from qwixx_env.nets import INPUTS, check_afterstate_table, extra_inputs


class Sb3VecEnv(VecEnv):
    """Adapts a `QwixxVectorEnv` (or builds one from its keyword arguments) to SB3."""

    observation_space: spaces.Box  # the games' observation vectors (VecEnv declares any Space)

    def __init__(self, env: QwixxVectorEnv | None = None, **kwargs: Any):
        self.env = env if env is not None else QwixxVectorEnv(**kwargs)
        self.render_mode = None
        super().__init__(
            self.env.num_envs,
            self.env.single_observation_space["observation"],
            self.env.single_action_space,
        )
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]  # SB3's seed(s) sets per-env seeds; game i uses seed + i anyway
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        return obs["observation"]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        self._seeds = [seed] + [None] * (self.num_envs - 1)
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait: no actions to play; call step_async(actions) first")
        obs, rewards, terminated, truncated, infos = self.env.step(self._actions)
        done = terminated | truncated
        info_list: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if "final_obs" in infos:
            final = infos["final_obs"]["observation"]
            for i in np.flatnonzero(infos["_final_obs"]):
                info_list[i]["terminal_observation"] = final[i]
                info_list[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs["observation"], rewards, done, info_list

    def action_masks(self) -> np.ndarray:
        """(N, A) bool: the legal actions of every game's learner."""
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    # VecEnv plumbing: there are no sub-environment objects, the games live in arrays.

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self, attr_name) if hasattr(self, attr_name) else getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self, attr_name) or hasattr(self.env, attr_name)


def frozen_policy(model, deterministic: bool = True):
    """A frozen copy of a (Maskable)PPO model's policy as a batched opponent for the pool.

    The returned callable takes (observations (n, D), masks (n, A)) and returns actions (n,)
    from one forward pass; later training of `model` does not change it.
    """
    # A new policy of the same class and settings with copied weights, through SB3's own
    # `BasePolicy.save`/`load` in memory (a deepcopy trips over non-leaf tensors the training holds).
    saved = io.BytesIO()
    model.policy.save(saved)
    saved.seek(0)
    policy = type(model.policy).load(saved, device="cpu").eval()
    for p in policy.parameters():
        p.requires_grad_(False)

    def act(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            obs = torch.as_tensor(observations, dtype=torch.float32)
            try:  # sb3-contrib's MaskablePPO policies take the masks
                actions, _, _ = policy(obs, deterministic=deterministic, action_masks=masks.astype(bool))
            except TypeError:
                actions, _, _ = policy(obs, deterministic=deterministic)
        return actions.cpu().numpy().astype(np.int64)

    return act


class PolicyInputs(VecEnvWrapper):
    """Appends extra inputs (`qwixx_env.nets.INPUTS`, in the order given) to an `Sb3VecEnv`'s
    observations, one number per action each: ``"afterstate"`` (a table with a win-chance
    network), how far its afterstate win chance falls below the best action's; ``"heuristic"``,
    how far its value to the `heuristic` bot does. `qwixx_env.training.export.export_policy`
    records them (``inputs``), and the loaded policy computes the same numbers from the plain
    observation.

    >>> venv = PolicyInputs(Sb3VecEnv(QwixxVectorEnv(64, opponents="heuristic")), ["afterstate"])
    """

    venv: Sb3VecEnv  # what __init__ wraps (VecEnvWrapper declares any VecEnv)

    def __init__(self, venv: Sb3VecEnv, inputs: Sequence[str]):
        game = venv.env
        self._variant_name, self._players, self._lucky = game.variant.name, game.num_players, game.variant.lucky_rule
        inputs = tuple(inputs)
        bad = [name for name in inputs if name not in INPUTS]
        if bad or not inputs or len(set(inputs)) != len(inputs):
            raise ValueError(f"inputs: got {list(inputs)!r}; expected distinct names from {list(INPUTS)}")
        if "afterstate" in inputs:
            check_afterstate_table(self._variant_name, self._players)
        self.policy_inputs = inputs
        base = venv.observation_space
        extra = game.single_action_space.n * len(inputs)
        space = spaces.Box(
            np.concatenate([base.low, np.full(extra, -1, np.float32)]),
            np.concatenate([base.high, np.zeros(extra, np.float32)]),
            dtype=np.float32,
        )
        super().__init__(venv, observation_space=space)

    def _extend(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, np.float32)
        return np.hstack([obs, extra_inputs(obs.reshape(-1, obs.shape[-1]), self.policy_inputs, self._variant_name,
                                             self._players, self._lucky).reshape(*obs.shape[:-1], -1)])

    def reset(self) -> np.ndarray:
        return self._extend(self.venv.reset())

    def step_wait(self):
        obs, rewards, done, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                info["terminal_observation"] = self._extend(info["terminal_observation"][None])[0]
        return self._extend(obs), rewards, done, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()
