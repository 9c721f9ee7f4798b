"""`BatchedAdvantages`: PPO's learner pipeline for the vector path, as array operations.

RLlib's default learner pipeline for PPO turns the sampled episodes into a train batch one
episode and one column at a time (`AddOneTsToEpisodesAndTruncate`, then
`AddObservationsFromEpisodesToBatch`, `AddColumnsFromEpisodesToTrainBatch`, ...,
`GeneralAdvantageEstimation`), and adds one artificial timestep to every episode so that the
bootstrap values come out of the same forward pass; those rows then ride through every
minibatch of the update, masked out of the loss. On the vector path an iteration brings about
a thousand short episodes (every game's chunk of every call), and that per-episode Python is
about a seventh of an iteration (docs/integrations.md, "Where the learner's time goes").

`BatchedAdvantages` is the whole pipeline in one connector: it joins every episode's columns
with one concatenation each, computes every value (each observation's, and each chunk's last,
the bootstrap) in one forward pass, runs generalized advantage estimation over all episodes at
once (a backward pass over the longest episode's steps, all episodes a row each), and hands the
learner the real timesteps only, so no minibatch carries a masked row. The figures are those of
RLlib's `GeneralAdvantageEstimation` (`tests/test_rllib_learner.py` compares them on the same
episodes), but for one detail: the advantages are standardized over the real timesteps, where
RLlib's standardizes over its artificial ones too.

It serves single-agent PPO with the masking module (`MaskedPPOModule`) and no recurrent state:
`vector_ppo_config` installs it (``learner_pipeline="batched"``, the default; ``"rllib"`` keeps
RLlib's). Needs the ``rllib`` extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.evaluation.postprocessing import Postprocessing

from qwixx_env.integrations.rllib_runner import as_tensors, join_leaves, leaves

EXTRAS = (Columns.ACTION_LOGP, Columns.ACTION_DIST_INPUTS)
"""The sampled model outputs the PPO loss reads, besides the observations and actions."""


class BatchedAdvantages(ConnectorV2):
    """The learner pipeline of single-agent PPO (see the module docstring): episodes in, the
    train batch of the default module out, with ``advantages`` (standardized) and
    ``value_targets``, as torch tensors. `gamma` and `lambda_` are PPO's."""

    def __init__(self, input_observation_space: Any = None, input_action_space: Any = None, *, gamma: float,
                 lambda_: float):
        super().__init__(input_observation_space, input_action_space)
        self.gamma, self.lambda_ = float(gamma), float(lambda_)

    def __call__(self, *, rl_module: Any, batch: dict[str, Any], episodes: list[Any], **kwargs: Any) -> Any:
        module = rl_module[DEFAULT_MODULE_ID]
        lengths = np.array([len(e) for e in episodes], np.int64)
        # each episode: one observation a step and one more
        obs = join_leaves(np.concatenate, [e.get_observations() for e in episodes])
        ends = np.cumsum(lengths + 1) - 1  # each episode's last observation, in the joined rows
        real = np.ones(len(lengths) + int(lengths.sum()), bool)
        real[ends] = False
        with torch.no_grad():
            values = module.compute_values({Columns.OBS: as_tensors(obs, None)}).numpy().astype(np.float32)
        rewards = np.concatenate([e.get_rewards() for e in episodes]).astype(np.float32)
        terminated = np.array([e.is_terminated for e in episodes], bool)
        targets = value_targets(values, rewards, lengths, terminated, self.gamma, self.lambda_)
        advantages = targets - values[real]
        advantages = (advantages - advantages.mean()) / max(1e-4, float(advantages.std()))
        columns = {key: np.concatenate([e.get_extra_model_outputs(key) for e in episodes]) for key in EXTRAS}
        columns[Columns.ACTIONS] = np.concatenate([e.get_actions() for e in episodes])
        batch[DEFAULT_MODULE_ID] = {
            Columns.OBS: as_tensors(leaves(obs, real, None), None),
            **{key: torch.from_numpy(np.ascontiguousarray(value)) for key, value in columns.items()},
            Postprocessing.ADVANTAGES: torch.from_numpy(advantages.astype(np.float32)),
            Postprocessing.VALUE_TARGETS: torch.from_numpy(targets),
        }
        return batch


def value_targets(values: np.ndarray, rewards: np.ndarray, lengths: np.ndarray, terminated: np.ndarray,
                  gamma: float, lambda_: float) -> np.ndarray:
    """GAE's value targets (advantages plus values) of every real timestep, episode after
    episode. `values`: every episode's observations' values, one more than its steps (the last
    the bootstrap value of a chunk cut short; a terminated episode's is not used); `rewards`,
    one a step; `lengths`, the episodes' steps; `terminated`, each episode's end."""
    e, longest = len(lengths), int(lengths.max(initial=0))
    # episodes as rows, steps as columns, each row right-aligned so that all end in the last column
    starts = np.cumsum(lengths + 1) - lengths - 1
    column = np.arange(longest)
    offset = column[None, :] - (longest - lengths)[:, None]  # the step of each cell; < 0: padding
    inside = offset >= 0
    rows = np.where(inside, starts[:, None] + offset, 0)
    v = np.where(inside, values[rows], 0.0)
    v_next = np.where(inside, values[rows + 1], 0.0)
    v_next[:, -1] *= ~terminated  # no value after a game's end
    step = np.cumsum(lengths) - lengths  # each episode's first reward, in `rewards`
    r = np.where(inside, rewards[np.where(inside, step[:, None] + offset, 0)], 0.0)
    delta = r + gamma * v_next - v
    advantages = np.zeros((e, longest), np.float64)
    running = np.zeros(e, np.float64)
    for t in range(longest - 1, -1, -1):  # padding cells come first in a row and carry nothing into it
        running = delta[:, t] + gamma * lambda_ * running
        advantages[:, t] = running
    return (advantages + v)[inside].astype(np.float32)  # row by row: the episodes' order
