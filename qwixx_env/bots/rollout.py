"""`rollout`: a Monte Carlo search bot over clones of the engine state.

For each legal action it plays `continuations` games to the end with a fast default policy
(`"greedy"` by default, `"random"` or `"heuristic"`, which plays better but slower: use
fewer continuations with it) for every seat — future dice and the hidden white
choices of the current roll sampled — and picks the action with the best mean outcome: the
expected score in solo games, the expected share of the win (then the margin) otherwise.
Everything it knows comes from the observation (`state_from_observation`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qwixx_env import bots
from qwixx_env.core.heuristic import weights_array
from qwixx_env.core.observation import ObservationView, state_from_observation
from qwixx_env.core.policies import POLICY_NAMES, greedy_defaults
from qwixx_env.core.rollout import fill_seeds, rollout_values
from qwixx_env.core.state import new_state
from qwixx_env.core.variant import get_variant

DEFAULT_CONTINUATIONS = 128  # about 10 ms a decision on average, 50 ms at worst (2 cores, idle)


class RolloutBot:
    """See the module docstring. `continuations` K per action; `policy` the default policy."""

    name = "rollout"

    def __init__(
        self,
        *,
        variant: str = "classic",
        num_players: int = 2,
        seed: int | None = None,
        continuations: int = DEFAULT_CONTINUATIONS,
        policy: str = "greedy",
        max_skip: int | None = None,
    ):
        if isinstance(continuations, bool) or not isinstance(continuations, int) or continuations < 1:
            raise ValueError(f"continuations: got {continuations!r}; expected an integer >= 1")
        if policy not in POLICY_NAMES:
            raise ValueError(f"policy: got {policy!r}; expected one of {POLICY_NAMES}")
        default_skip, worry = greedy_defaults()
        self.max_skip = default_skip if max_skip is None else max_skip
        if isinstance(self.max_skip, bool) or not isinstance(self.max_skip, int) or self.max_skip < 0:
            raise ValueError(f"max_skip: got {max_skip!r}; expected an integer >= 0")
        self.penalty_worry = worry
        self.variant = get_variant(variant)
        self.num_players = num_players
        self.continuations = continuations
        self.kind = POLICY_NAMES.index(policy)
        self.rng = np.array(np.random.SeedSequence(seed).generate_state(1, np.uint64))
        self._work = new_state(num_players)
        self._base = new_state(num_players)
        self._seeds = np.zeros(continuations, np.uint64)
        self._mask = np.zeros(self.variant.num_actions, np.int8)
        self._weights = weights_array()

    def action_values(self, observation: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """(legal actions, their estimated values) for this observation."""
        view = ObservationView(observation, self.variant, self.num_players)
        legal = view.legal_actions.astype(np.int64)
        if legal.size == 0:
            raise ValueError("observation: the action mask offers no legal action (not this seat's turn?)")
        values = np.zeros(legal.size)
        if legal.size > 1:
            base = state_from_observation(view, out=self._base)
            fill_seeds(self.rng, self._seeds)
            policy_rng = self._seeds[:1].copy()
            rollout_values(base, self._work, self.variant.tables, legal, self.continuations, self.kind,
                           self.max_skip, self.penalty_worry, self._weights, self._seeds, policy_rng, self._mask,
                           values)
        return legal, values

    def act(self, observation: dict[str, Any]) -> int:
        legal, values = self.action_values(observation)
        return int(legal[int(np.argmax(values))])  # ties: the earlier action


bots.register("rollout", RolloutBot)
