"""`random`: a uniformly random legal action (pass included)."""

from __future__ import annotations

from typing import Any

import numpy as np

from qwixx_env.bots import registry
from qwixx_env.core.options import TableOptions


class RandomBot(registry.TableBot):
    """Picks uniformly among the legal actions of the observation's mask."""

    name = "random"

    def __init__(self, table: TableOptions = registry.DEFAULT_TABLE, *, seed: int | None = None):
        super().__init__(table)
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError(registry.NO_LEGAL_ACTION)
        return int(legal[self.rng.integers(legal.size)])


registry.register("random", RandomBot)
