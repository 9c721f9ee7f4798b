"""`afterstate`: plays the action whose resulting position a learned win chance rates best.

Classic, at the table sizes a network ships for (`qwixx_env.nets.AFTERSTATE_TABLES`). It rebuilds
the game from the observation, crosses each legal action on a scratch sheet with the
heuristic's look-ahead (a white action of the active player together with its best colour
follow-up) and rates the position with the table's win-chance network
(`qwixx_env.policies.afterstate`). The networks ship as `qwixx_env/nets/data/afterstate-classic-<P>p`:
at 2 players `training/afterstate.py` trains it by fitted value iteration (the bot plays itself,
and the network is refitted on who won); at 3 and 4 players `training/value_leaf.py` trains it
on heuristic games. One decision costs a few dozen forward passes of a small network.

`qwixx_env.nets.afterstate_inputs(observations)` gives the same ratings for a batch of
observations, one per action (-1 where illegal): what a PPO checkpoint trained with
``inputs: afterstate`` reads beside the observation. (The batched functions lived here
before; their names still import from this module.)
"""

from __future__ import annotations

from typing import Any

from qwixx_env.bots import registry
from qwixx_env.core.compile import compiled
from qwixx_env.core.options import TableOptions
from qwixx_env.core.state import new_state
from qwixx_env.nets import check_afterstate_table, win_chance_network
from qwixx_env.nets.afterstate import (  # noqa: F401 (their former home: these names still import from here)
    INPUT_SCALE,
    afterstate_chances,
    afterstate_gaps,
    afterstate_inputs,
    afterstate_policy,
)
from qwixx_env.policies import afterstate as core
from qwixx_env.policies.heuristic import weights_array
from qwixx_env.policies.scratch import new_scratch


class AfterstateBot(registry.TableBot):
    """See the module docstring. Deterministic: `seed` is accepted and unused."""

    name = "afterstate"

    def __init__(self, table: TableOptions = registry.DEFAULT_TABLE, *, seed: int | None = None):
        self.check_table(table)
        super().__init__(table)
        self._net, self._weights = self.network(table)
        self._base = new_state(self.num_players, variant=self.variant)
        self._scratch = new_scratch(self.variant, self.num_players, self._net)
        self._kernel = None

    @staticmethod
    def check_table(table: TableOptions) -> None:
        """Refuse a table no win-chance network ships for (the registry's `check_table`)."""
        check_afterstate_table(table.variant, table.num_players)

    def network(self, table: TableOptions):
        """(the win-chance network as the kernels take it, the heuristic's weights for its
        features, or `policies.value.NO_HEURISTIC` for the plain ones)."""
        return win_chance_network("afterstate", table.variant, table.num_players), weights_array()

    def act(self, observation: dict[str, Any]) -> int:
        st, mask = registry.decision_state(observation, self.variant, self.num_players, out=self._base)
        args = (st, self.variant.tables, 0, mask, self._weights, self._net, self._scratch.values, self._scratch)
        if self._kernel is None:
            self._kernel = compiled(core.afterstate_action, *args)
        return int(self._kernel(*args))


registry.register("afterstate", AfterstateBot)
