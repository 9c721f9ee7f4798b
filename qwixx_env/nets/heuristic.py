"""Heuristic ratings of a batch of observations: each action's value in the `heuristic` bot's
evaluation, as extra inputs a policy may read (``inputs: ["heuristic"]``), on any table.

For each row of observations the game is rebuilt from the observation and every legal action
is valued by the heuristic's look-ahead (`qwixx_env.policies.heuristic.heuristic_values`, the
bot's own evaluation with its tuned weights). `heuristic_inputs` turns the values into how far
each action falls below the best one, in points scaled by `INPUT_SCALE` and clipped: 0 marks
the `heuristic` bot's choice, so a policy can start from the bot and learn where to differ.
"""

from __future__ import annotations

import threading

import numpy as np

from qwixx_env.core.observation import layout_for
from qwixx_env.core.state import new_state
from qwixx_env.core.variant import get_variant
from qwixx_env.policies import heuristic as core
from qwixx_env.policies.scratch import new_scratch

INPUT_SCALE = 0.2
"""Per point of the heuristic's value: an action 5 points below the best reads -1."""


def heuristic_values(observations: np.ndarray, variant: str = "classic", num_players: int = 2,
                     lucky: str | None = None) -> np.ndarray:
    """(n, A) float64: the heuristic's value of each action for the seat observing each row of
    `observations` (n, D) at the table (`lucky`: Longo's lucky rule, default the bonus cross);
    -inf where the action is illegal."""
    v = get_variant(variant, lucky)
    layout = layout_for(v, num_players)
    obs = np.ascontiguousarray(observations, np.float32)
    if obs.ndim != 2 or obs.shape[1] != layout.size:
        raise ValueError(f"observations: got shape {obs.shape}; expected (n, {layout.size})")
    out = np.zeros((obs.shape[0], v.num_actions), np.float64)
    st, weights, ws = work_arrays(v, num_players)
    core.values_of_observations(obs, v.tables, layout.offsets, st, weights, out, ws)
    return out


_WORK = threading.local()


def work_arrays(v, num_players: int, net=None) -> tuple:
    """This thread's (decision state, heuristic weights, scratch) for the ratings of one table,
    made once, not per call (the kernels rebuild the state from each row, and a reused scratch
    rates as a fresh one); `net`: the win-chance network the scratch is sized for, if any."""
    cache = _WORK.__dict__.setdefault("tables", {})
    key = (v.name, v.lucky_rule, num_players, None if net is None else id(net))  # a net is read once, kept
    if key not in cache:
        cache[key] = (new_state(num_players, variant=v), core.weights_array(), new_scratch(v, num_players, net))
    return cache[key]


def gaps(values: np.ndarray, legal: np.ndarray, scale: float) -> np.ndarray:
    """(n, A) float32: how far each legal action's value falls below the best legal one's,
    ``max(scale * (value - best), -1)``; -1 where `legal` refuses it (every -1 in a row with
    nothing legal). What a policy network reads most easily: the choice marked 0, the near
    misses graded."""
    finite = np.where(legal, values, 0.0)
    best = np.where(legal, values, -np.inf).max(axis=1, keepdims=True)
    best = np.where(np.isfinite(best), best, 0.0)
    return np.where(legal, np.maximum(scale * (finite - best), -1.0), -1.0).astype(np.float32)


def heuristic_inputs(observations: np.ndarray, variant: str = "classic", num_players: int = 2,
                     lucky: str | None = None) -> np.ndarray:
    """(n, A) float32: for the seat observing each row of `observations` (n, D), how far each
    action's heuristic value falls below the best legal action's, ``max(INPUT_SCALE * (value -
    best), -1)``: 0 for the heuristic's choice, -1 for an action 5 points worse or illegal."""
    values = heuristic_values(observations, variant, num_players, lucky)
    return gaps(values, np.isfinite(values), INPUT_SCALE)
