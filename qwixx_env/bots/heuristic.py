"""`heuristic`: a hand-written evaluation of crosses, locks, penalties and the race to the end.

It rebuilds the game from the observation (`state_from_observation`, the observer as seat 0)
and runs `qwixx_env.policies.heuristic.heuristic_action`, which judges every legal action by the
expected value of the position it leads to (the module docstring there explains the
evaluation). The weights below are its defaults; ``make("heuristic", weights={...})``
overrides some of them by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qwixx_env.bots import registry
from qwixx_env.core.compile import compiled
from qwixx_env.core.options import TableOptions
from qwixx_env.core.state import new_state
from qwixx_env.policies.heuristic import heuristic_action, weights_array
from qwixx_env.policies.scratch import new_scratch


class HeuristicBot(registry.TableBot):
    """See the module docstring; `weights` overrides named defaults (`DEFAULT_WEIGHTS`)."""

    name = "heuristic"
    # The observation does not say which lucky rule is played (Longo); the bot plays the
    # bonus cross out in its look-ahead only under "bonus", so it takes the table's rule.
    models_lucky = True

    def __init__(self, table: TableOptions = registry.DEFAULT_TABLE, *, seed: int | None = None,
                 weights: Mapping[str, float] | None = None):
        super().__init__(table)
        self.weights = weights_array(weights)
        self._scratch = new_scratch(self.variant, self.num_players)
        # the decision's state, rebuilt in place each call
        self._base = new_state(self.num_players, variant=self.variant)
        self._kernel = None

    def act(self, observation: dict[str, Any]) -> int:
        st, mask = registry.decision_state(observation, self.variant, self.num_players, out=self._base)
        args = (st, self.variant.tables, 0, mask, self.weights, self._scratch)
        if self._kernel is None:
            self._kernel = compiled(heuristic_action, *args)  # the same types every call
        return int(self._kernel(*args))


registry.register("heuristic", HeuristicBot)
