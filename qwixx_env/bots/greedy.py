"""`greedy`: cross when it costs few numbers, the compiled policy the batched engine uses too.

It rebuilds the game from the observation (`state_from_observation`, the observer as seat 0)
and runs `qwixx_env.core.policies.greedy_action`: the legal cross that skips the fewest open
numbers, if it skips at most `max_skip`; ties go to the row closest to its lock; as the active
player facing a penalty with `penalty_worry` or more penalties already, any cross beats it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qwixx_env import bots
from qwixx_env.core.observation import ObservationView, state_from_observation
from qwixx_env.core.policies import greedy_action, greedy_defaults
from qwixx_env.core.state import new_state
from qwixx_env.core.variant import get_variant


# The best max_skip (`benchmarks/baselines.py greedy`, docs/baselines.md): alone, skipping at
# most one number scores most (73.0 against 65.4 for 2); with opponents the game is shorter
# and 2 wins most (2-player classic round robin of 0-4: 67.8% of games; 56.8% head to head
# against 1; the best of 1-3 in 3- and 4-player classic too).
BEST_MAX_SKIP = {"solo": 1, "multi-player": 2}


class GreedyBot:
    """See the module docstring; `max_skip` 0, 1, 2, … (default: the best for the player
    count, `BEST_MAX_SKIP`)."""

    name = "greedy"

    def __init__(
        self,
        *,
        variant: str = "classic",
        num_players: int = 2,
        seed: int | None = None,
        max_skip: int | None = None,
        penalty_worry: int | None = None,
    ):
        _, default_worry = greedy_defaults()
        if max_skip is None:
            max_skip = BEST_MAX_SKIP["solo" if num_players == 1 else "multi-player"]
        self.max_skip = max_skip
        self.penalty_worry = default_worry if penalty_worry is None else penalty_worry
        for name, value in (("max_skip", self.max_skip), ("penalty_worry", self.penalty_worry)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name}: got {value!r}; expected an integer >= 0")
        self.variant = get_variant(variant)
        self.num_players = num_players
        self._state = new_state(num_players)

    def act(self, observation: dict[str, Any]) -> int:
        view = ObservationView(observation, self.variant, self.num_players)
        mask = np.asarray(observation["action_mask"], np.int8)
        if not mask.any():
            raise ValueError("observation: the action mask offers no legal action (not this seat's turn?)")
        st = state_from_observation(view, out=self._state)
        return int(greedy_action(st, self.variant.tables, 0, mask, self.max_skip, self.penalty_worry))


bots.register("greedy", GreedyBot)
