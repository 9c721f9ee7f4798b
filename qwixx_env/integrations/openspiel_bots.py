"""Bots across the OpenSpiel border, both ways, for ``python_qwixx`` (`integrations.openspiel`).

* `SpielBot`: any project bot (``"heuristic"``, ``"rollout"``, ``"ppo-classic-2p"``, ...) as a
  `pyspiel.Bot`, so OpenSpiel's own tools play it, e.g. `evaluate_bots`:

  >>> from open_spiel.python.algorithms.evaluate_bots import evaluate_bots
  >>> game = pyspiel.load_game("python_qwixx(players=2)")
  >>> bots = [SpielBot(game, "heuristic", seed=0), SpielBot(game, "random", seed=1)]
  >>> evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0))

  It acts on exactly what the env would give that seat: ``observation_tensor(seat)`` (the env's
  observation vector) and the legal actions as the mask.

* `SearchBot`: OpenSpiel's information-set MCTS (`open_spiel.python.algorithms.ismcts.ISMCTSBot`)
  as a project bot, registered as ``"openspiel-ismcts"``, so the arena plays it like any other
  (``run_arena(["openspiel-ismcts", "heuristic"], ...)``). From an observation it builds the
  position that seat sees (`QwixxGame.state_from_observation`) and searches from it. What it can
  see is what the seat sees: the sheets, dice and its own choices. The white choices that seats
  before it made on this roll are hidden; ISMCTS samples them afresh for every simulation
  (`QwixxState.resample_from_infostate`, uniform over each seat's legal actions), and its tree
  is keyed by information states, so it never conditions on a hidden choice. The future dice
  are the game's chance nodes, sampled in each simulation.

* `PlayoutEvaluator`: the search's leaf evaluation, an OpenSpiel `Evaluator`: the mean outcome
  of playouts of the rest of the game by a scripted policy (``"heuristic"``, ``"greedy"`` or
  ``"random"``, `qwixx_env.policies.scripted`) for every seat. OpenSpiel's own
  `RandomRolloutEvaluator` plays rollouts in Python through the game's API, which costs
  hundreds of Python calls per playout; this one runs a whole playout in one compiled call
  (`qwixx_env.policies.rollout.play_out`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from qwixx_env.bots import registry
from qwixx_env.bots.registry import DEFAULT_TABLE
from qwixx_env.bots.specs import BotSpec, make_bot
from qwixx_env.core.checks import check_choice, check_int, check_number
from qwixx_env.core.options import TableOptions
from qwixx_env.core.state import new_state
from qwixx_env.integrations.openspiel import GAME_NAME, QwixxGame, QwixxState
from qwixx_env.policies.heuristic import weights_array
from qwixx_env.policies.rollout import play_out
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.scripted import POLICY_NAMES, ScriptedPolicies, greedy_defaults

SEARCH_BOT = "openspiel-ismcts"
DEFAULT_SIMULATIONS = 64
DEFAULT_UCT_C = 2.0  # PUCT: how far the prior steers (returns are in [-1, 1])
DEFAULT_PLAYOUTS = 1
DEFAULT_POLICY = "heuristic"
DEFAULT_PRIOR = "heuristic"  # PUCT's prior: this bot's choice gets DEFAULT_PRIOR_WEIGHT
DEFAULT_PRIOR_WEIGHT = 0.5


class PlayoutEvaluator(mcts.Evaluator):
    """An OpenSpiel evaluator for ``python_qwixx``: `evaluate` is the mean of `playouts`
    compiled playouts (see the module docstring). `prior` is uniform over the legal actions,
    or with `prior_bot` (a project bot's name) puts `prior_weight` on that bot's choice (from
    the seat's observation) and spreads the rest uniformly: what PUCT selection steers by."""

    def __init__(self, game: QwixxGame, playouts: int = DEFAULT_PLAYOUTS, policy: str = DEFAULT_POLICY,
                 seed: int | None = None, prior_bot: str | None = None, prior_weight: float = DEFAULT_PRIOR_WEIGHT):
        self.playouts = check_int("playouts", playouts, minimum=1, accepted="an integer >= 1")
        self.kind = POLICY_NAMES.index(check_choice("policy", policy, POLICY_NAMES))
        self.prior_weight = check_number("prior_weight", prior_weight, minimum=0.0, maximum=1.0,
                                         accepted="a number from 0 to 1")
        self.game = game
        P = game.num_players()
        self.prior_bot = None if prior_bot is None else SpielBot(game, prior_bot, seed=seed)
        self._rng = np.random.default_rng(seed)
        self._work = new_state(P, variant=game.variant)
        self._policy_rng = np.zeros(1, np.uint64)
        self._policies = ScriptedPolicies(*greedy_defaults(P), weights_array(), self._policy_rng)
        self._ws = new_scratch(game.variant, P)
        self._last = np.zeros((1, P), np.int64)
        self._out = np.zeros(P, np.int64)

    def evaluate(self, state: QwixxState) -> np.ndarray:
        while state.is_chance_node():  # the dice still to come (or the set-up): drawn here
            state = state.clone()
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(self._rng.choice(outcomes, p=probs)))
        if state.is_terminal():
            return np.array(state.returns())
        total = np.zeros(self.game.num_players())
        seeds = self._rng.integers(0, 1 << 62, size=(self.playouts, 2), dtype=np.uint64)
        for dice_seed, policy_seed in seeds:
            self._work.copy_from(state.core_state)
            self._work.rng[0], self._policy_rng[0] = dice_seed, policy_seed
            play_out(self._work, self.game.variant.tables, self.kind, self._policies, self._ws,
                     self.game.engine.setup.reward_mode, self._last, self._out)
            total += self._out
        return total / self.playouts

    def prior(self, state: QwixxState) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions()
        if self.prior_bot is None:
            return [(a, 1.0 / len(legal)) for a in legal]
        choice = self.prior_bot.step(state)
        rest = (1.0 - self.prior_weight) / len(legal)
        return [(a, rest + (self.prior_weight if a == choice else 0.0)) for a in legal]


def search_game(table: TableOptions) -> QwixxGame:
    """The ``python_qwixx`` game of a table (`pyspiel.load_game` with its parameters; the
    lucky rule where the variant has lucky numbers)."""
    params = {"players": table.num_players, "variant": table.variant}
    if table.rules.lucky_count:
        params["lucky"] = table.lucky
    return pyspiel.load_game(GAME_NAME, params)


class SearchBot:
    """OpenSpiel's `ISMCTSBot` playing the env as a project bot (see the module docstring):
    `simulations` per decision, exploration constant `uct_c`, leaves scored by a
    `PlayoutEvaluator` (`playouts` playouts of `policy`). With a `prior` (a project bot's name,
    ``"heuristic"`` by default) the search selects children by PUCT, that bot's choice getting
    `prior_weight` of the prior; with ``prior=None`` by plain UCT. The final choice is the most
    visited action."""

    name = SEARCH_BOT
    models_lucky = True  # its game plays the table's lucky rule, which the observation does not show

    def __init__(self, table: TableOptions = DEFAULT_TABLE, *, seed: int | None = None,
                 simulations: int = DEFAULT_SIMULATIONS, uct_c: float = DEFAULT_UCT_C,
                 playouts: int = DEFAULT_PLAYOUTS, policy: str = DEFAULT_POLICY, prior: str | None = DEFAULT_PRIOR,
                 prior_weight: float = DEFAULT_PRIOR_WEIGHT):
        simulations = check_int("simulations", simulations, minimum=1, accepted="an integer >= 1")
        uct_c = check_number("uct_c", uct_c, minimum=0.0, accepted="a number >= 0")
        self.game = search_game(table)
        seeds = np.random.SeedSequence(seed).generate_state(3)
        self.evaluator = PlayoutEvaluator(self.game, playouts, policy, seed=int(seeds[0]), prior_bot=prior,
                                          prior_weight=prior_weight)
        selection = ismcts.ChildSelectionPolicy.UCT if prior is None else ismcts.ChildSelectionPolicy.PUCT
        self.search = ismcts.ISMCTSBot(
            self.game, self.evaluator, uct_c, simulations, random_state=np.random.RandomState(seeds[1]),
            final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, child_selection_policy=selection,
        )
        self._rng = np.random.default_rng(seeds[2])  # draws the hidden choices of the root

    def act(self, observation: dict[str, Any]) -> int:
        if not np.asarray(observation["action_mask"]).any():
            raise ValueError(registry.NO_LEGAL_ACTION)
        state = self.game.state_from_observation(observation, self._rng)
        return int(self.search.step(state))


registry.register(SEARCH_BOT, SearchBot)


class SpielBot(pyspiel.Bot):
    """A project bot as a `pyspiel.Bot` for a ``python_qwixx`` game: `bot` is a registered
    name (made by `make_bot` with `params` for the game's table and `seed`) or any object with
    ``act(observation) -> int``. It plays whichever seat is to move when `step` is called."""

    def __init__(self, game: QwixxGame, bot: str | Any, seed: int | None = None, **params: Any):
        pyspiel.Bot.__init__(self)
        if isinstance(bot, str):
            bot = make_bot(BotSpec(label=bot, name=bot, params=params), game.table, seed)
        elif not callable(getattr(bot, "act", None)):
            raise ValueError(f"bot: got {bot!r}; expected a bot name ({registry.available()}) or an object with act()")
        self.bot = bot
        self._mask = np.zeros(game.num_distinct_actions(), np.int8)

    def step(self, state: QwixxState) -> int:
        player = state.current_player()
        if player < 0:
            raise ValueError(f"SpielBot.step: got a state where no seat decides (current player {player})")
        self._mask[:] = 0
        self._mask[state.legal_actions()] = 1
        obs = np.array(state.observation_tensor(player), np.float32)
        return int(self.bot.act({"observation": obs, "action_mask": self._mask.copy()}))

    def restart_at(self, state: QwixxState) -> None:
        pass  # the project's bots keep no memory between decisions

    def inform_action(self, state: QwixxState, player_id: int, action: int) -> None:
        pass

    def provides_policy(self) -> bool:
        return False
