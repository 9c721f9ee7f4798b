"""`BatchedQwixx`: N games in one `State`, stepped together by compiled kernels.

The multi-agent batched engine: in every game some seat is to decide (`seats`), and the
caller gives one action per game. It runs the same rules kernels as the AEC environment and
gives the same observations, masks and rewards for the same seeds and decisions; the
single-agent training view (`QwixxVectorEnv`) is built on it.

>>> engine = BatchedQwixx(4096, num_players=2)
>>> engine = BatchedQwixx(4096, table=TableOptions(num_players=2))   # the same table
>>> obs, masks = engine.reset(seed=0)
>>> obs, masks, rewards, done = engine.step(actions)    # one action per game
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from qwixx_env.core.checks import check_int
from qwixx_env.core.engine import Engine, as_actions, game_seeds
from qwixx_env.core.options import TableOptions, table_from

__all__ = ["BatchedQwixx", "as_actions", "game_seeds"]


class BatchedQwixx:
    """N games of Qwixx stepped together; the caller decides for whichever seat is to act.

    `num_envs` is N, the number of games, by the name the vector envs give it (the attributes
    `num_envs` and `num_games` both hold it). The table is `table` (a `TableOptions`) or its
    keyword options as `qwixx_v0.raw_env` takes them (without render_mode), checked once
    (`core.options.table_from`). `obs[b]` is game b as seen by the seat to decide (`seats[b]`),
    `masks[b]` its legal actions; `rewards` is (N, P), one reward per seat for the step just
    taken, in the reward mode. With `autoreset` a finished game restarts at once from its own
    generator (like `reset()` without a seed). A thin view of `core.Engine`.
    """

    def __init__(
        self,
        num_envs: int,
        *,
        table: TableOptions | None = None,
        autoreset: bool = True,
        **options: Any,
    ):
        num_envs = check_int("num_envs", num_envs, minimum=1)
        table = table_from(table, **options)
        self.engine = Engine(table, num_envs, autoreset=autoreset, observe_turn=True)
        e = self.engine
        self.table, self.variant, self.layout = table, e.variant, e.layout
        self.num_envs, self.num_players, self.num_actions = num_envs, e.num_players, e.num_actions
        self.num_games = num_envs  # the same number under its first name
        self.reward_mode = table.reward_mode
        self.lucky_numbers = table.lucky_array()  # zeros: drawn each game
        self.start_seat = table.start_seat  # -1: drawn
        self.autoreset = e.autoreset
        self.state = e.state
        self.obs, self.masks, self.rewards, self.done = e.obs, e.masks, e.rewards, e.done
        self.last_scores = e.last_scores  # each seat's score at its last reward
        self.actions = e.buffers.actions  # the actions of the step being taken

    @property
    def seats(self) -> np.ndarray:
        """(N,) the seat to decide in each game."""
        return self.state.turn

    def reset(self, seed: int | Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Start every game; returns (obs, masks) for the seats to decide. These are the
        engine's buffers, written again by the next call: copy what you keep. Without a seed,
        each game's generator goes on from where it is (fresh entropy only on the first
        reset), as an AEC game's does."""
        self.engine.reset(seed)
        return self.obs, self.masks

    def reset_games(self, games: Sequence[int] | np.ndarray) -> None:
        """Restart some games from their own generators (as ``reset()`` without a seed).
        `games` are indices from 0 to N - 1; anything else is a ValueError, changing nothing."""
        self.engine.reset_games(games)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One decision per game → (obs, masks, rewards, done): the engine's buffers, written
        again by the next step (copy what you keep). Raises ValueError, changing nothing, if
        any live game's action is not legal for its seat."""
        self.engine.step(actions)
        return self.obs, self.masks, self.rewards, self.done

    def memory_per_game(self) -> int:
        """Bytes held per game: the state arrays plus the observation, mask and reward buffers."""
        return self.engine.memory_per_game()
