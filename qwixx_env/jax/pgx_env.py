"""The JAX game as a `pgx.Env` (the ``pgx`` extra): pgx's API, from its own base class, over `Qwixx`.

pgx's `Env` keeps what every game shares (a state dataclass with the seat to decide, its
observation, every seat's rewards, the end and the legal mask; ``init``, ``step`` and
``observe``, the steps counted, a finished game staying finished) and asks a game for
``_init``, ``_step`` and ``_observe``. `PgxQwixx` answers them with `qwixx_env.jax.Qwixx`, which
holds the rules; this module adds nothing to them::

    import jax
    from qwixx_env.jax.pgx_env import PgxQwixx

    env = PgxQwixx(num_players=2, reward="win")       # the options of qwixx_v0.env()
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 1024))
    state = jax.vmap(env.step)(state, actions)        # state.observation, .legal_action_mask, ...

Where Qwixx and pgx's conventions differ, the game's own rules stand:

* The dice come from the generator each game draws from the key at ``init`` (the core's
  splitmix64, as `Qwixx.init`); ``step``'s `key` is not used.
* An illegal action ends the game as ``qwixx_v0.env()`` ends it (the offender's return is
  `qwixx_env.core.rewards.illegal_return`, the others get 0, ``state.game.illegal_end`` names
  the seat), not with pgx's penalty of -1.
* `current_player` is the seat the rules call on (the active seat first on each roll, then
  every other seat's white decision, then the active seat's colour decision): the same seat
  can decide twice in a row, and seats keep their numbers, as in ``qwixx_v0``.

As pgx does for all its games, a finished game's `legal_action_mask` is all True (`Qwixx`'s is
all False) and its `observation` is what `current_player` sees.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import pgx.core

from qwixx_env.core.options import TableOptions
from qwixx_env.jax.game import Qwixx
from qwixx_env.jax.game import State as GameState

__all__ = ["PgxQwixx", "PgxState"]

ENV_ID = "qwixx"
VERSION = "v0"  # the rules and observation of qwixx_v0


# pgx's State is frozen at run time (its own dataclass decorator), which pyright does not see
@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)  # pyright: ignore[reportGeneralTypeIssues]
class PgxState(pgx.core.State):
    """pgx's state (its seven fields, see `pgx.core.State`) and the game (`qwixx_env.jax.State`)."""

    game: GameState

    @property
    def env_id(self) -> Any:  # pgx.core.EnvId lists pgx's own games only
        return ENV_ID


class PgxQwixx(pgx.core.Env):
    """Qwixx as a `pgx.core.Env`: `table` (a `TableOptions`) or the keyword options of
    ``qwixx_v0.env()``, checked as `Qwixx` checks them; `game` is the wrapped `Qwixx`."""

    def __init__(self, table: TableOptions | None = None, **options: Any):
        super().__init__()
        self.game = Qwixx(table, **options)

    def _with_game(self, state: PgxState, game: GameState) -> PgxState:
        return dataclasses.replace(
            state,
            game=game,
            current_player=self.game.current_player(game),
            rewards=self.game.rewards(game),
            terminated=self.game.terminated(game),
            legal_action_mask=self.game.legal_action_mask(game),
        )

    def _init(self, key: jax.Array) -> PgxState:
        game = self.game.init(key)
        blank = PgxState(
            current_player=game.turn,
            observation=jnp.zeros(self.game.observation_size, jnp.float32),  # `init` observes next
            rewards=game.rewards,
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            legal_action_mask=jnp.zeros(self.game.num_actions, bool),
            _step_count=jnp.int32(0),
            game=game,
        )
        return self._with_game(blank, game)

    def _step(self, state: pgx.core.State, action: jax.Array, key: Any) -> PgxState:
        assert isinstance(state, PgxState)
        return self._with_game(state, self.game.step(state.game, action))

    def _step_with_illegal_action(self, state: pgx.core.State, loser: jax.Array) -> pgx.core.State:
        # `_step` has played it: the game ends it and pays as qwixx_v0 does (see the module docstring)
        return state

    def _observe(self, state: pgx.core.State, player_id: jax.Array) -> jax.Array:
        assert isinstance(state, PgxState)
        return self.game.observe(state.game, player_id)

    @property
    def id(self) -> Any:  # pgx.core.EnvId lists pgx's own games only
        return ENV_ID

    @property
    def version(self) -> str:
        return VERSION

    @property
    def num_players(self) -> int:
        return self.game.num_players

    @property
    def num_actions(self) -> int:
        return self.game.num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (self.game.observation_size,)
