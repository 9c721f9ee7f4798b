"""`afterstate`: plays the action whose resulting position a learned win chance rates best.

Classic, at the table sizes a network ships for (`NETWORKS`: 2, 3 and 4 players). It rebuilds
the game from the observation, crosses each legal action on a scratch sheet with the
heuristic's look-ahead (a white action of the active player together with its best colour
follow-up) and rates the position with the table's win-chance network
(`qwixx_env.core.afterstate`). The networks ship as `qwixx_env/bots/data/afterstate-classic-<P>p.npz`:
at 2 players `training/afterstate.py` trains it by fitted value iteration (the bot plays itself,
and the network is refitted on who won); at 3 and 4 players `training/value_leaf.py` trains it
on heuristic games. One decision costs a few dozen forward passes of a small network: well
under a millisecond.

`afterstate_inputs(observations)` gives the same ratings for a batch of observations, one
per action (-1 where illegal): what a PPO checkpoint trained with ``inputs: afterstate`` reads
beside the observation.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from qwixx_env import bots
from qwixx_env.bots.rollout import read_network
from qwixx_env.core import afterstate as core
from qwixx_env.core import rules
from qwixx_env.core.heuristic import weights_array
from qwixx_env.core.observation import layout_for
from qwixx_env.core.scratch import new_scratch
from qwixx_env.core.state import new_state
from qwixx_env.core.variant import get_variant

NETWORKS = {
    ("classic", 2): "afterstate-classic-2p.npz",
    ("classic", 3): "afterstate-classic-3p.npz",
    ("classic", 4): "afterstate-classic-4p.npz",
}
"""(variant, players) -> the win-chance network's file in qwixx_env/bots/data/: the tables the
bot and the afterstate inputs play."""


def tables() -> str:
    """The tables a network ships for, in words (for error messages)."""
    return ", ".join(f"{v} with {p} players" for v, p in sorted(NETWORKS))


def check_table(variant: str, num_players: int) -> None:
    """Refuse a table no win-chance network is trained for."""
    if (variant, num_players) not in NETWORKS:
        raise ValueError(
            f"afterstate: got variant={variant!r}, num_players={num_players!r}; a win-chance network is "
            f"trained for {tables()} only"
        )


class AfterstateBot:
    """See the module docstring. Deterministic: `seed` is accepted and unused."""

    name = "afterstate"

    def __init__(self, *, variant: str = "classic", num_players: int = 2, seed: int | None = None):
        check_table(variant, num_players)
        self.variant = get_variant(variant)
        self.num_players = num_players
        self._net = read_network(NETWORKS[(variant, num_players)])
        self._weights = weights_array()
        self._base = new_state(num_players)
        self._scratch = new_scratch(self.variant, num_players, self._net)
        self._kernel = None

    def act(self, observation: dict[str, Any]) -> int:
        st, mask = bots.decision_state(observation, self.variant, self.num_players, out=self._base)
        args = (st, self.variant.tables, 0, mask, self._weights, self._net, self._scratch.values, self._scratch)
        if self._kernel is None:
            self._kernel = rules.compiled(core.afterstate_action, *args)
        return int(self._kernel(*args))


INPUT_SCALE = 20.0  # a win chance 0.05 below the best action's reads -1


def afterstate_chances(observations: np.ndarray, variant: str = "classic", num_players: int = 2) -> np.ndarray:
    """(n, A) float64: each action's afterstate win chance for the seat observing each row of
    `observations` (n, D) (-1 where the action is illegal)."""
    check_table(variant, num_players)
    v = get_variant(variant)
    layout = layout_for(v, num_players)  # built once per table, not per call
    obs = np.ascontiguousarray(observations, np.float32)
    if obs.ndim != 2 or obs.shape[1] != layout.size:
        raise ValueError(f"observations: got shape {obs.shape}; expected (n, {layout.size})")
    out = np.zeros((obs.shape[0], v.num_actions), np.float64)
    net = read_network(NETWORKS[(variant, num_players)])
    st, hw, ws = _work_arrays(v, num_players, net)
    core.afterstate_inputs(obs, v.tables, layout.offsets, st, hw, net, out, ws)
    return out


_WORK = threading.local()


def _work_arrays(v, num_players: int, net) -> tuple:
    """This thread's (decision state, heuristic weights, scratch) for `afterstate_chances` at
    one table: made once, not per call (the kernel rebuilds the state from each row, and a
    reused scratch rates as a fresh one)."""
    cache = _WORK.__dict__.setdefault("tables", {})
    key = (v.name, num_players, id(net))  # the scratch is sized for the network (read once, kept)
    if key not in cache:
        cache[key] = (new_state(num_players), weights_array(), new_scratch(v, num_players, net))
    return cache[key]


def afterstate_inputs(observations: np.ndarray, variant: str = "classic", num_players: int = 2) -> np.ndarray:
    """(n, A) float32: for the seat observing each row of `observations` (n, D), how far each
    action's afterstate win chance falls below the best legal action's, scaled and clipped:
    ``max(INPUT_SCALE * (chance - best chance), -1)``: 0 for the `afterstate` bot's choice,
    -1 for an action 5 points of win chance worse or illegal (what a policy network reads
    most easily: the choice marked, the near misses graded)."""
    return afterstate_gaps(afterstate_chances(observations, variant, num_players))


def afterstate_gaps(chances: np.ndarray) -> np.ndarray:
    """`afterstate_inputs` from raw afterstate chances (n, A), -1 where illegal."""
    legal = chances >= 0
    best = np.where(legal, chances, -np.inf).max(axis=1, keepdims=True)
    gaps = np.where(legal, np.maximum(INPUT_SCALE * (chances - best), -1.0), -1.0)
    gaps[~legal.any(axis=1)] = -1.0
    return gaps.astype(np.float32)


def afterstate_policy(observations: np.ndarray, masks: np.ndarray, variant: str = "classic",
                      num_players: int = 2) -> np.ndarray:
    """The `afterstate` bot as a batched frozen policy for a `QwixxVectorEnv` pool:
    (observations (n, D), masks (n, A)) -> actions (n,)."""
    values = afterstate_chances(observations, variant, num_players)
    legal = np.asarray(masks).astype(bool)
    return np.where(legal, values, -np.inf).argmax(axis=1).astype(np.int64)


bots.register("afterstate", AfterstateBot)
