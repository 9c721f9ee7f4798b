"""The extra inputs a policy may read after the observation (a checkpoint's ``inputs``, a
training config's ``inputs``), each computed from the observation itself, one number per
action: ``"afterstate"`` (`qwixx_env.nets.afterstate`, the tables with a win-chance network)
and ``"heuristic"`` (`qwixx_env.nets.heuristic`, every table)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from qwixx_env.nets.afterstate import afterstate_inputs
from qwixx_env.nets.heuristic import heuristic_inputs

READERS: dict[str, Callable[[np.ndarray, str, int, str | None], np.ndarray]] = {
    "afterstate": lambda obs, variant, players, lucky: afterstate_inputs(obs, variant, players),  # classic only
    "heuristic": heuristic_inputs,
}


def extra_inputs(observations: np.ndarray, inputs: Sequence[str], variant: str, num_players: int,
                 lucky: str | None = None) -> np.ndarray:
    """(n, A * len(inputs)) float32: the named inputs of each row of `observations` (n, D), in
    the order named, at the table (`lucky`: Longo's lucky rule, default the bonus cross)."""
    obs = np.asarray(observations, np.float32)
    parts = [READERS[name](obs, variant, num_players, lucky) for name in inputs]
    return np.hstack(parts).astype(np.float32, copy=False)


def with_inputs(observations: np.ndarray, inputs: Sequence[str], variant: str, num_players: int,
                lucky: str | None = None) -> np.ndarray:
    """`observations` (n, D) with the named inputs appended (unchanged when there are none)."""
    obs = np.asarray(observations, np.float32)
    if not inputs:
        return obs
    return np.hstack([obs, extra_inputs(obs, inputs, variant, num_players, lucky)])
