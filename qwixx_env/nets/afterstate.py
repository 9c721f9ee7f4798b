"""Afterstate ratings of a batch of observations: each action's win chance after it is taken.

For each row of observations the game is rebuilt from the observation, every legal action is
crossed on a scratch sheet with the heuristic's look-ahead, and the position after it is rated
by the table's shipped win-chance network (`qwixx_env.policies.afterstate` holds the kernels).
`afterstate_inputs` turns the ratings into what a policy checkpoint with
``inputs: ["afterstate"]`` reads beside the observation; `afterstate_policy` is the
`afterstate` bot as a batched frozen policy.
"""

from __future__ import annotations

import numpy as np

from qwixx_env.core.observation import layout_for
from qwixx_env.core.variant import Variant, get_variant
from qwixx_env.nets.heuristic import gaps, work_arrays
from qwixx_env.nets.win_chance import check_afterstate_table, win_chance_network
from qwixx_env.policies import afterstate as core

INPUT_SCALE = 20.0  # a win chance 0.05 below the best action's reads -1


def afterstate_chances(observations: np.ndarray, variant: str | Variant = "classic",
                       num_players: int = 2) -> np.ndarray:
    """(n, A) float64: each action's afterstate win chance for the seat observing each row of
    `observations` (n, D) (-1 where the action is illegal)."""
    v = get_variant(variant)
    check_afterstate_table(v.name, num_players)
    layout = layout_for(v, num_players)  # built once per table, not per call
    obs = np.ascontiguousarray(observations, np.float32)
    if obs.ndim != 2 or obs.shape[1] != layout.size:
        raise ValueError(f"observations: got shape {obs.shape}; expected (n, {layout.size})")
    out = np.zeros((obs.shape[0], v.num_actions), np.float64)
    net = win_chance_network("afterstate", v.name, num_players)
    st, hw, ws = work_arrays(v, num_players, net)
    core.afterstate_inputs(obs, v.tables, layout.offsets, st, hw, net, out, ws)
    return out


def afterstate_inputs(observations: np.ndarray, variant: str = "classic", num_players: int = 2) -> np.ndarray:
    """(n, A) float32: for the seat observing each row of `observations` (n, D), how far each
    action's afterstate win chance falls below the best legal action's, scaled and clipped:
    ``max(INPUT_SCALE * (chance - best chance), -1)``: 0 for the `afterstate` bot's choice,
    -1 for an action 5 points of win chance worse or illegal (what a policy network reads
    most easily: the choice marked, the near misses graded)."""
    return afterstate_gaps(afterstate_chances(observations, variant, num_players))


def afterstate_gaps(chances: np.ndarray) -> np.ndarray:
    """`afterstate_inputs` from raw afterstate chances (n, A), -1 where illegal."""
    return gaps(chances, chances >= 0, INPUT_SCALE)


def afterstate_policy(observations: np.ndarray, masks: np.ndarray, variant: str = "classic",
                      num_players: int = 2) -> np.ndarray:
    """The `afterstate` bot as a batched frozen policy for a `QwixxVectorEnv` pool:
    (observations (n, D), masks (n, A)) -> actions (n,)."""
    values = afterstate_chances(observations, variant, num_players)
    legal = np.asarray(masks).astype(bool)
    return np.where(legal, values, -np.inf).argmax(axis=1).astype(np.int64)
