"""`greedy`: cross when it costs few numbers, the compiled policy the batched engine uses too.

It rebuilds the game from the observation (`state_from_observation`, the observer as seat 0)
and runs `qwixx_env.policies.scripted.greedy_action`: the legal cross that skips the fewest open
numbers, if it skips at most `max_skip`; ties go to the row closest to its lock; as the active
player facing a penalty with `penalty_worry` or more penalties already, any cross beats it.
"""

from __future__ import annotations

from typing import Any

from qwixx_env.bots import registry
from qwixx_env.core.checks import check_int
from qwixx_env.core.options import TableOptions
from qwixx_env.core.state import new_state
from qwixx_env.policies.scripted import greedy_action, greedy_defaults


class GreedyBot(registry.TableBot):
    """See the module docstring; `max_skip` 0, 1, 2, … (default: the best for the player
    count, `policies.scripted.greedy_defaults`)."""

    name = "greedy"

    def __init__(self, table: TableOptions = registry.DEFAULT_TABLE, *, seed: int | None = None,
                 max_skip: int | None = None, penalty_worry: int | None = None):
        super().__init__(table)
        default_skip, default_worry = greedy_defaults(self.num_players)
        self.max_skip = check_int("max_skip", default_skip if max_skip is None else max_skip, minimum=0)
        self.penalty_worry = check_int(
            "penalty_worry", default_worry if penalty_worry is None else penalty_worry, minimum=0
        )
        self._state = new_state(self.num_players, variant=self.variant)

    def act(self, observation: dict[str, Any]) -> int:
        st, mask = registry.decision_state(observation, self.variant, self.num_players, out=self._state)
        return int(greedy_action(st, self.variant.tables, 0, mask, self.max_skip, self.penalty_worry))


registry.register("greedy", GreedyBot)
