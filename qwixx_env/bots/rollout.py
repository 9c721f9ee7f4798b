"""`rollout`: a Monte Carlo search bot over clones of the engine state.

For each legal action it plays `continuations` continuations of the game from a copy of the
state rebuilt from the observation (`state_from_observation`): the future dice are sampled,
and so are the white choices that seats before it made on this roll (which it cannot see);
every seat then plays the default `policy` (``"heuristic"`` by default; ``"greedy"`` or
``"random"``). Playout k uses the same dice for every action (common random numbers), so
actions are compared on paired outcomes.

What a playout is worth:

* ``horizon=0``: the playout runs to the end of the game and is scored exactly: the final
  score (solo), or the share of the win plus `margin_weight` x the score margin over the best
  opponent (multi-player: the expected win rate, ties broken by the margin);
* ``horizon=n`` (default 4): it stops at the start of the n-th roll from now, or at the end,
  and the position is scored by the `leaf` evaluation. A full playout's outcome is dominated
  by the dice of the far future: two actions' outcomes on the same dice differ so much that
  a few dozen playouts cannot separate actions a few points apart, and picking the best mean
  plays worse than the default policy alone. Four rolls ahead the paired difference is small
  enough to read, and the search sees what the next rolls actually bring (docs/baselines.md).

The `leaf` evaluations:

* ``"network"`` (the default where one ships: 2-player classic): a learned win chance
  (`policies.value`), a small network trained by `training/value_leaf.py` on positions of
  heuristic-against-heuristic games labelled with who won; a finished game scores its exact
  outcome (win share + `margin_weight` x margin, as with full playouts);
* ``"afterstate"`` (classic, 2-4 players; not the default): the `afterstate` bot's win-chance
  network for the table (trained further, on its own play, by `training/afterstate.py`),
  scored the same way; in 2-player classic the stronger leaf, for a little more time
  (docs/baselines.md);
* ``"heuristic"`` (elsewhere): the heuristic's evaluation (`policies.heuristic.position_value`:
  expected final points against the best opponent's, a finished game scored exactly with
  the win bonus).

The decision is a paired test against the default policy's own choice: an action replaces it
only if its mean gain exceeds `confidence` standard errors. With `anchor` (a bot name, e.g.
``"ppo-classic-2p"`` or ``"afterstate"``, or a checkpoint file's path) the choice to beat is
that bot's instead: the search then runs on top of any bot, its playouts still played by the
default `policy`. Two rounds spend the playouts where they matter: `continuations` playouts
for every action; then the actions that might beat the choice (mean gain within two standard
errors of it; at most `finalists` with the choice) get `refine` x `continuations` more; when
none might, the choice stands at once.

Defaults: 32 continuations, heuristic playouts, horizon 4, confidence 0.5, 3 finalists,
refine 4, the network leaf in 2-player classic. Their time per decision and strength are
measured in `docs/baselines.md`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from qwixx_env.bots import registry
from qwixx_env.bots.pretrained import load
from qwixx_env.bots.specs import BotSpec, make_bot
from qwixx_env.core.checks import check_choice, check_int, check_number
from qwixx_env.core.observation import ObservationView, state_from_observation
from qwixx_env.core.options import TableOptions
from qwixx_env.core.state import new_state
from qwixx_env.nets import (
    AFTERSTATE_TABLES,
    LEAF_TABLES,
    afterstate_tables,
    is_checkpoint_name,
    win_chance_network,
)
from qwixx_env.policies.heuristic import weights_array
from qwixx_env.policies.rollout import (
    LEAF_HEURISTIC,
    LEAF_NETWORK,
    Playouts,
    fill_seeds,
    rollout_outcomes,
    root_action,
)
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.scripted import POLICY_NAMES, ScriptedPolicies, greedy_defaults

DEFAULT_CONTINUATIONS = 32
DEFAULT_POLICY = "heuristic"
DEFAULT_CONFIDENCE = 0.5
DEFAULT_HORIZON = 4
DEFAULT_MARGIN_WEIGHT = 0.01
LEAVES = {"heuristic": LEAF_HEURISTIC, "network": LEAF_NETWORK, "afterstate": LEAF_NETWORK}
_NO_NETWORK = tuple(np.zeros((1, 1)) if k % 2 == 0 else np.zeros(1) for k in range(6))


def _paired_stats(gain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error of each action's paired gain over the playouts."""
    return gain.mean(axis=1), gain.std(axis=1, ddof=1) / np.sqrt(gain.shape[1])


def _make_anchor(anchor, table: TableOptions, seed: int | None):
    """The anchor bot for the table (see `RolloutBot`): a registered bot's name (`make_bot`),
    or else the path of a checkpoint file (`bots.load`); errors name `anchor`. Its seed is
    drawn from the rollout's (the same seed gives the same anchor), not the rollout's own."""
    others = [n for n in registry.available() if n != "rollout"]
    if not isinstance(anchor, (str, os.PathLike)) or anchor == "rollout":
        raise ValueError(f"anchor: got {anchor!r}; expected a checkpoint file's path or the name of another bot, "
                         f"one of {others}")
    # its own stream, drawn from the rollout's seed (a stochastic anchor must not share the playouts')
    if seed is not None:
        seed = int(np.random.SeedSequence(seed, spawn_key=(1,)).generate_state(1, np.uint64)[0] >> 1)
    try:
        if isinstance(anchor, str) and anchor in registry.available():
            return make_bot(BotSpec(label=anchor, name=anchor), table, seed)
        if is_checkpoint_name(anchor):  # a name, but no bot's (installed checkpoints are bots too)
            raise ValueError(f"not a bot name (one of {others}) nor a checkpoint file's path")
        return load(anchor, table, seed=seed)
    except (OSError, ValueError) as err:
        raise ValueError(f"anchor: got {anchor!r}; {err}") from err


class RolloutBot(registry.TableBot):
    """See the module docstring. `continuations` K per action; `policy` the default policy;
    `confidence` the z a paired difference must reach to overrule the choice to beat (the
    default policy's own, or the `anchor`'s); `margin_weight` the value of a point of score
    margin next to a whole win; `leaf` how a truncated playout is scored: ``"network"`` (the
    learned win chance; the default where one ships, 2-player classic), ``"afterstate"`` (the
    `afterstate` bot's network, classic with 2-4 players) or ``"heuristic"`` (the heuristic's
    evaluation);
    `threads` how many threads share the playouts (default: 2, or 1 on a one-core machine;
    the decisions are the same for any number); `anchor` a bot name (`make_bot`, for the same
    table and seed) or a checkpoint file's path (`bots.load`) whose action is the choice to
    beat, instead of the default policy's."""

    name = "rollout"
    models_lucky = True  # its playouts play the table's lucky rule, which the observation does not show

    def __init__(
        self,
        table: TableOptions = registry.DEFAULT_TABLE,
        *,
        seed: int | None = None,
        continuations: int = DEFAULT_CONTINUATIONS,
        policy: str = DEFAULT_POLICY,
        confidence: float = DEFAULT_CONFIDENCE,
        margin_weight: float = DEFAULT_MARGIN_WEIGHT,
        horizon: int = DEFAULT_HORIZON,
        leaf_opponent_weight: float | None = None,
        finalists: int = 3,
        refine: int = 4,
        max_skip: int | None = None,
        weights: Mapping[str, float] | None = None,
        leaf: str | None = None,
        threads: int | None = None,
        anchor: str | os.PathLike | None = None,
    ):
        continuations = check_int("continuations", continuations, minimum=2, accepted="an integer >= 2")
        check_choice("policy", policy, POLICY_NAMES)
        self.confidence = check_number("confidence", confidence, minimum=0)
        self.finalists = check_int("finalists", finalists, minimum=0)
        self.refine = check_int("refine", refine, minimum=1, accepted="an integer >= 1")
        self.horizon = check_int("horizon", horizon, minimum=0)
        self.margin_weight = check_number("margin_weight", margin_weight, minimum=0)
        super().__init__(table)
        num_players = self.num_players
        default_skip, worry = greedy_defaults(num_players)
        self.max_skip = check_int("max_skip", default_skip if max_skip is None else max_skip, minimum=0)
        self.penalty_worry = worry
        self.continuations = continuations
        self.kind = POLICY_NAMES.index(policy)
        self.rng = np.array(np.random.SeedSequence(seed).generate_state(1, np.uint64))
        # Playouts run on `threads` threads, each in its own game slot of `_work` with its own
        # generator and scratch; a playout's outcome depends on its seed alone, so the decision
        # does not depend on how many threads ran them.
        if threads is None:
            threads = min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
        self.threads = check_int("threads", threads, minimum=1, accepted="an integer >= 1")
        self._work = new_state(num_players, threads, variant=self.variant)
        self._base = new_state(num_players, variant=self.variant)
        self._policy_rng = np.zeros(1, np.uint64)  # the root decision's
        self._playout_rngs = np.zeros(threads, np.uint64)
        self._weights = weights_array(weights)
        leaf_w = dict(weights or {})
        if leaf_opponent_weight is not None:
            leaf_w["opponent_weight"] = leaf_opponent_weight
        self._leaf_weights = weights_array(leaf_w)
        game = (table.variant, num_players)
        if leaf is None:
            leaf = "network" if game in LEAF_TABLES else "heuristic"
        self.leaf = check_choice("leaf", leaf, tuple(LEAVES))
        if leaf == "network" and game not in LEAF_TABLES:
            raise ValueError(f"leaf: got 'network' for {self.variant.name} with {num_players} player(s); a win-chance "
                             f"network ships for {sorted(LEAF_TABLES)} only (use leaf='heuristic')")
        if leaf == "afterstate" and game not in AFTERSTATE_TABLES:
            raise ValueError(f"leaf: got 'afterstate' for {self.variant.name} with {num_players} player(s); the "
                             f"afterstate network ships for {afterstate_tables()} only (use leaf='heuristic')")
        self._net = _NO_NETWORK
        if leaf == "network":
            self._net = win_chance_network("value", *game)
        elif leaf == "afterstate":
            self._net = win_chance_network("afterstate", *game)
        # one scratch per thread
        self._scratch = [new_scratch(self.variant, num_players, self._net) for _ in range(self.threads)]
        self.anchor_spec = anchor
        self.anchor = None if anchor is None else _make_anchor(anchor, table, seed)

    def _playouts(self, base, legal: np.ndarray, count: int) -> np.ndarray:
        """(len(legal), count) outcomes: playout k has the same dice for every action."""
        seeds = np.zeros(count, np.uint64)
        fill_seeds(self.rng, seeds)
        outcomes = np.zeros((legal.size, count))
        playouts = Playouts(seeds, self.kind, ScriptedPolicies(self.max_skip, self.penalty_worry, self._weights,
                                                               self._playout_rngs),
                            self.horizon, LEAVES[self.leaf], self._leaf_weights, self._net, self.margin_weight)
        # the other threads' shares on fresh threads (none outlive the call: safe to fork), the
        # first share on this one
        errors: list[BaseException] = []

        def share(t: int) -> None:
            try:
                rollout_outcomes(base, self._work, self.variant.tables, legal, playouts, t, self.threads,
                                 self._scratch[t], outcomes)
            except BaseException as e:  # re-raised below, in the caller's thread
                errors.append(e)

        helpers = [threading.Thread(target=share, args=(t,)) for t in range(1, self.threads)]
        for h in helpers:
            h.start()
        share(0)
        for h in helpers:
            h.join()
        if errors:
            raise errors[0]
        return outcomes

    def _search(self, observation: dict[str, Any]):
        """(legal actions, base state or None, index of the choice to beat: the anchor's, else
        the default policy's own)."""
        view = ObservationView(observation, self.variant, self.num_players)
        legal = view.legal_actions.astype(np.int64)
        if legal.size == 0:
            raise ValueError(registry.NO_LEGAL_ACTION)
        if legal.size == 1:
            return legal, None, 0
        base = state_from_observation(view, out=self._base)
        if self.anchor is not None:
            own = self.anchor.act(observation)
            if own not in legal:
                raise ValueError(f"anchor={self.anchor_spec!r}: chose action {own!r}, which is not legal here "
                                 f"(legal: {legal.tolist()})")
            return legal, base, int(np.flatnonzero(legal == own)[0])
        policies = ScriptedPolicies(self.max_skip, self.penalty_worry, self._weights, self._policy_rng)
        own = root_action(base, self._work, self.variant.tables, self.kind, policies, self._scratch[0])
        return legal, base, int(np.flatnonzero(legal == own)[0])

    def action_values(self, observation: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """(legal actions, their estimated values: mean outcome over `continuations` playouts)."""
        legal, base, _ = self._search(observation)
        if base is None:
            return legal, np.zeros(1)
        return legal, self._playouts(base, legal, self.continuations).mean(axis=1)

    def act(self, observation: dict[str, Any]) -> int:
        legal, base, own = self._search(observation)
        if base is None:
            return int(legal[0])
        gain = self._playouts(base, legal, self.continuations)
        gain -= gain[own]  # paired: the same dice in playout k for every action
        if self.finalists:
            # Actions that may beat the default policy's choice (within two standard errors)
            # and the choice itself get `refine` x more playouts; none left: the choice stands.
            mean, se = _paired_stats(gain)
            rivals = np.flatnonzero(mean + 2 * se > 0)
            rivals = rivals[rivals != own]
            if rivals.size == 0:
                return int(legal[own])
            rivals = rivals[np.argsort(-mean[rivals], kind="stable")][: self.finalists - 1]
            keep = np.sort(np.concatenate([[own], rivals]))
            more = self._playouts(base, legal[keep], self.refine * self.continuations)
            own = int(np.flatnonzero(keep == own)[0])
            more -= more[own]
            legal, gain = legal[keep], np.hstack([gain[keep], more])
        mean, se = _paired_stats(gain)
        better = mean > np.maximum(self.confidence * se, 0.0)
        if not better.any():
            return int(legal[own])
        return int(legal[np.argmax(np.where(better, mean, -np.inf))])


registry.register("rollout", RolloutBot)
