"""`NumpyPolicy`: a policy checkpoint run by a numpy forward pass (no torch).

>>> policy = NumpyPolicy.load("ppo-classic-2p")        # an installed checkpoint, or a path
>>> actions = policy(observations, masks)               # batched: (n, D), (n, A) -> (n,)
>>> QwixxVectorEnv(256, opponents={policy: 1, "heuristic": 1})  # a frozen opponent
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from qwixx_env.nets.checkpoint import NETWORKS, Layer, read
from qwixx_env.nets.inputs import with_inputs
from qwixx_env.nets.installed import resolve

_ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, np.float32(0))}


class NumpyPolicy:
    """A loaded checkpoint: the policy and value networks as numpy arrays.

    Called on a batch — ``policy(observations (n, D), masks (n, A)) -> actions (n,)`` — it
    returns the legal action with the highest logit (deterministic; ties go to the lowest
    action). That is the action ``MaskablePPO.predict(..., deterministic=True)`` picks, but
    where two legal logits are within float32 rounding of each other: MaskablePPO takes the
    argmax of the softmax, where they tie and the lower action wins. It can stand in a
    `QwixxVectorEnv` opponent pool as a frozen policy. Make it with `load`.
    """

    def __init__(self, spec: dict[str, Any], arrays: dict[str, np.ndarray], *, name: str, source: str):
        self.name, self.source, self.spec = name, source, spec
        self.variant: str = spec["variant"]
        self.lucky: str | None = spec["lucky"]
        self.num_players: int = spec["num_players"]
        self.observation_size: int = spec["observation_size"]
        self.num_actions: int = spec["num_actions"]
        self.meta: dict[str, Any] = spec["meta"]
        self.inputs: tuple[str, ...] = tuple(spec.get("inputs", ()))
        self._nets = {
            net: [
                (arrays[f"{net}.{i}.weight"], arrays[f"{net}.{i}.bias"], layer["activation"])
                for i, layer in enumerate(spec["networks"][net])
            ]
            for net in NETWORKS
        }

    @classmethod
    def load(cls, name_or_path: str | os.PathLike[str]) -> NumpyPolicy:
        """Load an installed checkpoint by name (``"ppo-classic-2p"``) or a checkpoint file
        by path (with or without the ``.json``/``.npz`` suffix; a str with a path separator
        or one of those suffixes is a path; a training run's folder means its ``final``, an
        RLlib run's its ``policy``).
        Raises `FileNotFoundError` for a missing file and `CheckpointError` (a `ValueError`)
        for an unknown name or a bad file."""
        json_path, npz_path = resolve(name_or_path)
        try:
            spec, arrays = read(json_path, npz_path)
        except FileNotFoundError as err:
            raise FileNotFoundError(
                f"{err} (a checkpoint is a .json + .npz pair; a training run's policy is <run folder>/final, "
                "and the run folder itself means that file)"
            ) from None
        return cls(spec, arrays, name=json_path.name[: -len(".json")], source=str(json_path))

    def __repr__(self) -> str:
        return f"NumpyPolicy({self.name!r}: {self.variant}, {self.num_players} player(s))"

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """(n, A) float32: the policy network's raw action logits, before masking."""
        return _forward(self._nets["policy"], self._observations(observations))

    def value(self, observations: np.ndarray) -> np.ndarray:
        """(n,) float32: the value network's estimate of each observation."""
        return _forward(self._nets["value"], self._observations(observations))[:, 0]

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(n,) int64: the highest-logit legal action of each row (see the class docstring)."""
        logits = self.logits(observations)
        masks = np.asarray(masks)
        if masks.shape != logits.shape:
            raise ValueError(
                f"masks: got shape {masks.shape}; {self!r} expects (n, {self.num_actions}) "
                f"for {len(logits)} observation(s)"
            )
        legal = masks.astype(bool)
        empty = np.flatnonzero(~legal.any(axis=1))
        if empty.size:
            raise ValueError(f"masks: row {int(empty[0])} offers no legal action (not this seat's turn?)")
        return np.where(legal, logits, -np.inf).argmax(axis=1).astype(np.int64)

    def _observations(self, observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.observation_size:
            raise ValueError(
                f"observations: got shape {obs.shape}; {self!r} expects (n, {self.observation_size}), "
                f"the {self.variant} observation for {self.num_players} player(s)"
            )
        return with_inputs(obs, self.inputs, self.variant, self.num_players, self.lucky)


def _forward(layers: list[Layer], x: np.ndarray) -> np.ndarray:
    for weight, bias, activation in layers:
        x = x @ weight.T + bias
        if activation is not None:
            x = _ACTIVATIONS[activation](x)
    return x


# --- the bot --------------------------------------------------------------------------------
