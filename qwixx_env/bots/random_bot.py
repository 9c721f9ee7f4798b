"""`random`: a uniformly random legal action (pass included)."""

from __future__ import annotations

from typing import Any

import numpy as np

from qwixx_env.bots import registry


class RandomBot:
    """Picks uniformly among the legal actions of the observation's mask."""

    name = "random"

    def __init__(self, *, variant: str = "classic", num_players: int = 2, seed: int | None = None):
        self.variant = variant
        self.num_players = num_players
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError(registry.NO_LEGAL_ACTION)
        return int(legal[self.rng.integers(legal.size)])


registry.register("random", RandomBot)
