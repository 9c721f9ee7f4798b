"""`BatchedQwixx`: N games in one `State`, stepped together by compiled kernels.

The multi-agent batched engine: in every game some seat is to decide (`seats`), and the
caller gives one action per game. It runs the same rules kernels as the AEC environment and
gives the same observations, masks and rewards for the same seeds and decisions; the
single-agent training view (`QwixxVectorEnv`) is built on it.

>>> engine = BatchedQwixx(4096, num_players=2)
>>> obs, masks = engine.reset(seed=0)
>>> obs, masks, rewards, done = engine.step(actions)    # one action per game
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from qwixx_env.core import rules
from qwixx_env.core.checks import check_flag, check_int, is_int
from qwixx_env.core.compile import kernel
from qwixx_env.core.observation import encode_one, layout_for
from qwixx_env.core.options import TableOptions
from qwixx_env.core.rewards import REWARD_MODES, rewards_one
from qwixx_env.core.state import OVER, new_state, seed_to_rng


@kernel(refcounts=False)
def first_illegal(st, masks, actions):
    """Index of the first live game whose action its mask does not offer, or -1."""
    for b in range(st.phase.shape[0]):
        if st.phase[b] != OVER:
            a = actions[b]
            if a < 0 or a >= masks.shape[1] or masks[b, a] == 0:
                return b
    return -1


@kernel(refcounts=False)
def step_games(st, tb, off, actions, mode, last_scores, rewards, done, masks, obs,
               autoreset, start_player, lucky_numbers, lucky):
    """Apply one decision per live game, then write rewards, done flags and, for the seat to
    decide next, its mask and observation. Finished games restart when `autoreset` is set.
    Returns the first game with an illegal action (changing nothing), or -1. `lucky` is
    `rules.lucky_switch`: None compiles it without the lucky-cross rules."""
    bad = first_illegal(st, masks, actions)
    if bad >= 0:
        return bad
    for b in range(st.phase.shape[0]):
        done[b] = False
        if st.phase[b] != OVER:
            rules.apply_one(st, tb, b, actions[b], lucky)
            rewards_one(st, tb, b, mode, last_scores, rewards[b])
            if st.phase[b] == OVER:
                done[b] = True
                if autoreset:
                    rules.reset_one(st, tb, b, start_player, lucky_numbers)
                    for s in range(last_scores.shape[1]):
                        last_scores[b, s] = 0
        else:
            for s in range(rewards.shape[1]):
                rewards[b, s] = 0
        rules.legal_mask_one(st, tb, b, masks[b], lucky)
        encode_one(st, tb, off, b, np.int64(st.turn[b]), obs[b])  # int64 like other callers
    return -1


@kernel(refcounts=False)
def observe_games(st, tb, off, masks, obs, lucky):
    for b in range(st.phase.shape[0]):
        rules.legal_mask_one(st, tb, b, masks[b], lucky)
        encode_one(st, tb, off, b, np.int64(st.turn[b]), obs[b])  # int64 like other callers


def game_seeds(seed: int | Sequence[int] | None, num_games: int) -> np.ndarray:
    """Generator states for `num_games` games: an int seeds game i with ``seed + i`` (so game i
    of a batch plays exactly as ``qwixx_v0`` reset with ``seed + i``); a sequence gives one
    seed per game; None draws fresh entropy."""
    if seed is None:
        return np.random.SeedSequence().generate_state(num_games, np.uint64)
    if is_int(seed) or isinstance(seed, (bool, np.bool_, float, np.floating, str)):
        seed = check_int("seed", seed, minimum=0, accepted="None, a non-negative integer or one per game")
        return np.array([seed_to_rng(seed + i) for i in range(num_games)], np.uint64)
    accepted = f"expected None, a non-negative integer or {num_games} of them (one per game)"
    try:
        seeds = list(seed)
    except TypeError:
        raise ValueError(f"seed: got {seed!r}; {accepted}") from None
    if len(seeds) != num_games or not all(is_int(s) and s >= 0 for s in seeds):
        raise ValueError(f"seed: got {seed!r}; {accepted}")
    return np.array([seed_to_rng(int(s)) for s in seeds], np.uint64)


def as_actions(actions, num_games: int) -> np.ndarray:
    """`actions` as (num_games,) int64, or a ValueError: one whole number per game."""
    arr = np.asarray(actions)
    if arr.shape != (num_games,):
        raise ValueError(f"actions: got shape {arr.shape}; expected ({num_games},), one action per game")
    if arr.dtype.kind == "b":
        raise ValueError(f"actions: got booleans {arr.tolist()[:8]}; expected whole numbers (action indices)")
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        return arr.astype(np.int64)
    bad = next(i for i, a in enumerate(arr.tolist()) if not (isinstance(a, (int, float)) and float(a).is_integer()))
    raise ValueError(f"actions: game {bad} got {arr[bad]!r}; expected a whole number (an action index)")


class BatchedQwixx:
    """N games of Qwixx stepped together; the caller decides for whichever seat is to act.

    Options are those of `qwixx_v0.raw_env` (without render_mode). `obs[b]` is game b as seen
    by the seat to decide (`seats[b]`), `masks[b]` its legal actions; `rewards` is (N, P), one
    reward per seat for the step just taken, in the reward mode. With `autoreset` a finished
    game restarts at once from its own generator (like `reset()` without a seed).
    """

    def __init__(
        self,
        num_games: int,
        num_players: int = 2,
        variant: str = "classic",
        lucky: str = "bonus",
        lucky_numbers: Sequence[Sequence[int]] | None = None,
        start_player: int | str = 0,
        reward: str | None = None,
        score_table: Sequence[int] | None = None,
        autoreset: bool = True,
    ):
        num_games = check_int("num_games", num_games, minimum=1)
        self.table = TableOptions(
            num_players=num_players, variant=variant, lucky=lucky, lucky_numbers=lucky_numbers,
            start_player=start_player, reward=reward, score_table=score_table,
        )
        self.variant = self.table.rules
        self.num_games, self.num_players = num_games, self.table.num_players
        # what the kernels read: the fixed lucky numbers (zeros: drawn each game), the first
        # active seat (-1: drawn), the reward mode's index
        self.lucky_numbers = self.table.lucky_array()
        self.start_seat = self.table.start_seat
        self.reward_mode = self.table.reward
        self.reward_index = REWARD_MODES.index(self.reward_mode)
        self.autoreset = check_flag("autoreset", autoreset)
        self.layout = layout_for(self.variant, self.num_players)
        self.num_actions = self.variant.num_actions
        N, P = self.num_games, self.num_players
        self.state = new_state(P, N)
        self.obs = np.zeros((N, self.layout.size), np.float32)
        self.masks = np.zeros((N, self.num_actions), np.int8)
        self.rewards = np.zeros((N, P), np.int64)
        self.done = np.zeros(N, np.bool_)
        self.last_scores = np.zeros((N, P), np.int64)  # each seat's score at its last reward
        self.actions = np.zeros(N, np.int64)  # the actions of the step being taken
        self._has_reset = False
        args = (self.state, self.variant.tables, self.layout.offsets, self.actions, self.reward_index,
                self.last_scores, self.rewards, self.done, self.masks, self.obs,
                self.autoreset, self.start_seat, self.lucky_numbers, rules.lucky_switch(self.variant.tables))
        kernel = rules.compiled(step_games, *args)
        self._step_kernel = lambda: kernel(*args)

    @property
    def seats(self) -> np.ndarray:
        """(N,) the seat to decide in each game."""
        return self.state.turn

    def reset(self, seed: int | Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Start every game; returns (obs, masks) for the seats to decide (buffers reused).
        Without a seed, each game's generator goes on from where it is (fresh entropy only on
        the first reset), as an AEC game's does."""
        if seed is not None or not self._has_reset:
            self.state.rng[:] = game_seeds(seed, self.num_games)
        self._has_reset = True
        self.reset_games(np.arange(self.num_games))
        return self.obs, self.masks

    def reset_games(self, games: Sequence[int]) -> None:
        """Restart some games from their own generators (as ``reset()`` without a seed).
        `games` are indices from 0 to N - 1; anything else is a ValueError, changing nothing."""
        idx = np.asarray(games)
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            raise ValueError(f"games: got {games!r}; expected a list of game indices (whole numbers)")
        idx = idx.astype(np.int64)
        outside = idx[(idx < 0) | (idx >= self.num_games)]
        if outside.size:
            raise ValueError(
                f"games: got index {int(outside[0])}; expected indices from 0 to {self.num_games - 1}"
            )
        rules.reset_batch(self.state, self.variant.tables, idx, self.start_seat, self.lucky_numbers)
        self.last_scores[idx] = 0
        observe_games(self.state, self.variant.tables, self.layout.offsets, self.masks, self.obs,
                      rules.lucky_switch(self.variant.tables))

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One decision per game → (obs, masks, rewards, done). Raises ValueError, changing
        nothing, if any live game's action is not legal for its seat."""
        actions = as_actions(actions, self.num_games)
        self.actions[:] = actions
        bad = self._step_kernel()
        if bad >= 0:
            raise ValueError(
                f"actions: game {bad} (seat {int(self.seats[bad])}) got action {int(actions[bad])}; "
                f"legal there: {np.flatnonzero(self.masks[bad]).tolist()}"
            )
        return self.obs, self.masks, self.rewards, self.done

    def memory_per_game(self) -> int:
        """Bytes held per game: the state arrays plus the observation, mask and reward buffers."""
        arrays = [*self.state, self.obs, self.masks, self.rewards, self.done, self.last_scores, self.actions]
        return sum(a.nbytes for a in arrays) // self.num_games
