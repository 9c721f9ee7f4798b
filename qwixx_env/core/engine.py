"""`Engine`: the one public face of a Qwixx table, for one game or a batch of them.

An engine owns B games of one table (`TableOptions`): their `State`, the buffers the rules
kernels write (legal masks, observations, rewards), and the compiled entry points resolved
once for those buffers. Every adapter — the PettingZoo AEC and Parallel envs, the batched and
vector envs, the Gymnasium view, OpenSpiel, RLlib, the play sessions — is built on it and only
translates (agent names, dicts, spaces, reward modes, what an illegal action does).

>>> engine = Engine(TableOptions(num_players=2), batch_size=4)
>>> engine.reset(seed=0)                     # game b plays as a single game seeded with 0 + b
>>> masks = engine.legal_mask()              # (B, A) int8, the seat to decide in each game
>>> engine.step(actions)                     # one legal action per live game
>>> rewards, done = engine.rewards, engine.done
>>> engine.observe(seats)                    # (B, D) float32, game b as seats[b] sees it

A caller that decides some seats itself and lets compiled policies play the others (the
vector env) moves the games by `apply_games` (some games), `play_table` (a `SeatTable`),
`settle` (rewards and done flags) and `observe_games` (masks and observations of some games).

The returned arrays are the engine's own buffers, written again by the next call: copy what
you keep (each method's docstring says which it returns).

Like pgx's games, the rules stay pure functions over the `State` (`qwixx_env.core.rules`);
the engine adds what a table needs around them: seeds, rewards in the table's mode, the game
record and one resolved kernel call per step.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple, NoReturn

import numpy as np

from qwixx_env.core import rules
from qwixx_env.core.checks import check_flag, check_int, is_int
from qwixx_env.core.compile import batch_kernel, compiled, inlined
from qwixx_env.core.observation import ObservationLayout, encode_one, layout_for
from qwixx_env.core.options import TableOptions, table_from
from qwixx_env.core.rewards import REWARD_MODES, rewards_one
from qwixx_env.core.snapshot import snapshot
from qwixx_env.core.state import LUCKY, NO_DECISION, OVER, WHITE, State, check_state, new_state, seed_to_rng
from qwixx_env.core.variant import custom_sheet

RECORD_FORMAT = "qwixx_env.record/1"
_INT64 = np.dtype(np.int64)  # numpy's one int64 dtype object: an `is` test is the cheapest dtype check

# What `table_kernel` does. One kernel with an op code rather than one kernel per job: a new
# user's first game compiles a kernel mostly per kernel, not per line, and the rules inlined
# into reset, step and observe are the same (docs/environment.md, "First run"; measured by
# benchmarks/cold_start.py). The engine's public methods are the named entry points.
RESET, STEP, OBSERVE = 0, 1, 2
PLAYED, PLAYED_ROLLED = -2, -3  # what STEP returns of game 0 when it played it (and rolled anew); else -1
PLAY, SEATS, PLAY_SEATS = 0, 1, 2  # what `seats_kernel` does
APPLY, SETTLE, OBSERVE_GAMES = 0, 1, 2  # what `games_kernel` does


class Buffers(NamedTuple):
    """The arrays the kernel reads its inputs from and writes its results into (B games, P seats)."""

    actions: np.ndarray  # (B,) int64: the decision of each game (STEP)
    games: np.ndarray  # (B,) int64: the games to start (RESET: the first `count` of them)
    observers: np.ndarray  # (B,) int64: the seat each game is observed from (OBSERVE)
    masks: np.ndarray  # (B, A) int8: the legal actions of the seat to decide
    obs: np.ndarray  # (B, D) float32: observations
    rewards: np.ndarray  # (B, P) int64: every seat's reward for the step just taken
    last_scores: np.ndarray  # (B, P) int64: each seat's score at its last reward
    done: np.ndarray  # (B,) bool: the game ended in the step just taken


class SeatBuffers(NamedTuple):
    """What `seats_kernel` reads and writes besides `Buffers`: every seat at once. Apart from
    `Buffers` so that the calls that do not need them (the AEC env's every step and observation)
    do not pass them: each array an argument costs a little on every call."""

    actions: np.ndarray  # (B, P) int64: each seat's next decision, -1: none (PLAY; it clears what it plays)
    decided: np.ndarray  # (B, P) int64: the seats that decided in the last PLAY, in order; -1 after the last
    obs: np.ndarray  # (P, D) float32: game ``game[0]`` as each seat sees it (SEATS)
    masks: np.ndarray  # (P, A) int8: each seat's legal actions in game ``game[0]``, zeros if it has none (SEATS)
    scratch: np.ndarray  # (A,) int8: a mask the kernel works in
    game: np.ndarray  # (1,) int64: the game SEATS shows


class SeatTable(NamedTuple):
    """Who decides for each seat (`Engine.play_table`): in game b the caller decides for seat
    ``caller[b]`` (a learner's); any other seat s plays table entry ``entries[b, s]``, a compiled
    policy of kind ``kinds[entry]``, or, where that is -1, a policy the caller runs (the game
    then waits for it: ``waiting[b]`` is that entry, else -1). `params` and `scratch` are
    passed on to the compiled policy (for `policies.scripted.policy_action`: its
    `ScriptedPolicies` and a `policies.scratch.Scratch`). The caller owns the arrays and may
    change their values in place."""

    caller: np.ndarray  # (B,) int64: the seat the caller decides for in each game (-1: none)
    entries: np.ndarray  # (B, P) int64: each seat's entry of the table
    kinds: np.ndarray  # (K,) int64: each entry's policy kind, -1: run by the caller
    waiting: np.ndarray  # (B,) int64: written by `play_table`: the entry the game waits for, -1: none
    params: Any  # what the policy plays with
    scratch: Any  # the policy's working arrays


class Setup(NamedTuple):
    """The table's settings as the kernel takes them."""

    reward_mode: int  # index in REWARD_MODES
    start_seat: int  # the first active seat, -1: drawn from each game's generator
    lucky_numbers: np.ndarray  # (P, 2) int64, zeros: drawn each game
    autoreset: bool  # a game that ends in a step restarts at once
    observe_turn: bool  # after a step, write the observation of the seat to decide


@inlined
def first_illegal(st, masks, actions):
    """Index of the first live game whose action its mask does not offer, or -1."""
    for b in range(st.phase.shape[0]):
        if st.phase[b] != OVER:
            a = actions[b]
            if a < 0 or a >= masks.shape[1] or masks[b, a] == 0:
                return b
    return -1


@inlined
def next_decision_mask(st, tb, b, s, mask, out, lucky_code):
    """Seat s's legal actions for its next decision in game b's roll, into `out`: the seat to
    decide's are `mask` (the engine's, for game b); a seat whose white choice is still to come
    is judged as the rules judge it (against the sheets at the roll); a seat with nothing left
    to decide this roll has none."""
    for a in range(out.shape[0]):
        out[a] = 0
    turn, phase = st.turn[b], st.phase[b]
    if s == turn:
        for a in range(out.shape[0]):
            out[a] = mask[a]
    elif (phase == WHITE or phase == LUCKY) and st.pending[b, s] == NO_DECISION:
        st.turn[b], st.phase[b] = s, WHITE
        rules.legal_mask_one(st, tb, b, out, lucky_code)
        st.turn[b], st.phase[b] = turn, phase


@inlined
def first_illegal_seat(st, tb, masks, sb, lucky_code):
    """``b * P + s`` for the first game b and seat s (from the seat to decide on) whose
    ``sb.actions`` entry is not legal for that seat's next decision, or -1."""
    P, A = st.marks.shape[1], masks.shape[1]
    for b in range(st.phase.shape[0]):
        if st.phase[b] == OVER:
            continue
        for k in range(P):
            s = (st.turn[b] + k) % P
            a = sb.actions[b, s]
            if a < 0:
                continue
            next_decision_mask(st, tb, b, s, masks[b], sb.scratch, lucky_code)
            if a >= A or sb.scratch[a] == 0:
                return b * P + s
    return -1


@inlined
def settle_game(st, tb, b, buf, setup):
    """After game b's decisions: its rewards and done flag (and a restart, with autoreset)."""
    rewards_one(st, tb, b, setup.reward_mode, buf.last_scores, buf.rewards[b])
    if st.phase[b] == OVER:
        buf.done[b] = True
        if setup.autoreset:
            rules.reset_one(st, tb, b, setup.start_seat, setup.lucky_numbers)
            for s in range(buf.last_scores.shape[1]):
                buf.last_scores[b, s] = 0


@batch_kernel
def table_kernel(op, count, st, tb, off, buf, setup, lucky_code):
    """The engine's compiled entry point (see `RESET, STEP, OBSERVE`): `RESET` starts games
    ``buf.games[:count]``; `STEP` applies ``buf.actions`` to every live game and writes rewards
    and done flags (returning the first game whose action is illegal, changing nothing; else
    what became of game 0, `PLAYED` or `PLAYED_ROLLED`, or -1 if it was over); both then write
    the mask of each game they touched (and, with ``setup.observe_turn``, the observation of
    its seat to decide). `OBSERVE` writes game b as ``buf.observers[b]`` sees it. `lucky_code`
    is `rules.lucky_code_switch`: None compiles the kernel without the lucky-cross rules (a
    switch only an argument can be: numba prunes the branch before typing)."""
    B = st.phase.shape[0]
    if op == OBSERVE:
        for b in range(B):
            encode_one(st, tb, off, b, buf.observers[b], buf.obs[b])
        return -1
    first = -1  # STEP: what became of game 0 (`PLAYED`, `PLAYED_ROLLED`), for a batch of one's record
    if op == RESET:
        for i in range(count):
            b = buf.games[i]
            rules.reset_one(st, tb, b, setup.start_seat, setup.lucky_numbers)
            for s in range(buf.last_scores.shape[1]):
                buf.last_scores[b, s] = 0
    else:
        bad = first_illegal(st, buf.masks, buf.actions)
        if bad >= 0:
            return bad
        for b in range(B):
            buf.done[b] = False
            if st.phase[b] != OVER:
                roll = st.roll[b]
                rules.apply_one(st, tb, b, buf.actions[b], lucky_code)
                if b == 0:
                    first = PLAYED_ROLLED if st.roll[b] != roll else PLAYED
                settle_game(st, tb, b, buf, setup)
            else:
                for s in range(buf.rewards.shape[1]):
                    buf.rewards[b, s] = 0
    n = count if op == RESET else B  # RESET: only the games it started
    for i in range(n):
        b = buf.games[i] if op == RESET else i
        rules.legal_mask_one(st, tb, b, buf.masks[b], lucky_code)  # one call site: LLVM inlines it once
        if setup.observe_turn:
            encode_one(st, tb, off, b, np.int64(st.turn[b]), buf.obs[b])
    return first


@batch_kernel
def seats_kernel(op, st, tb, off, buf, sb, setup, lucky_code):
    """Every seat at once (`PLAY, SEATS, PLAY_SEATS`): `PLAY` plays ``sb.actions`` (see
    `Engine.play`; returning `first_illegal_seat`, changing nothing, else -1, or
    `PLAYED_ROLLED` if game 0 began a new roll, for a batch of one's record), then writes
    rewards, done flags and masks as `table_kernel`'s `STEP` does; `SEATS` writes game
    ``sb.game[0]`` as every seat sees it, with each seat's legal next decision; `PLAY_SEATS`
    does both."""
    first = -1
    if op != SEATS:
        bad = first_illegal_seat(st, tb, buf.masks, sb, lucky_code)
        if bad >= 0:
            return bad
        roll = st.roll[0]
        for b in range(st.phase.shape[0]):
            buf.done[b] = False
            for k in range(sb.decided.shape[1]):
                sb.decided[b, k] = -1
            if st.phase[b] == OVER:
                for s in range(buf.rewards.shape[1]):
                    buf.rewards[b, s] = 0
                continue
            n = 0
            while st.phase[b] != OVER and sb.actions[b, st.turn[b]] >= 0:
                s = st.turn[b]
                rules.apply_one(st, tb, b, sb.actions[b, s], lucky_code)
                sb.actions[b, s] = -1
                sb.decided[b, n] = s
                n += 1
            settle_game(st, tb, b, buf, setup)
        if st.roll[0] != roll:
            first = PLAYED_ROLLED
        for b in range(st.phase.shape[0]):
            rules.legal_mask_one(st, tb, b, buf.masks[b], lucky_code)
            if setup.observe_turn:
                encode_one(st, tb, off, b, np.int64(st.turn[b]), buf.obs[b])
    if op != PLAY:
        b = sb.game[0]
        for s in range(sb.obs.shape[0]):
            encode_one(st, tb, off, b, s, sb.obs[s])
            if st.phase[b] == OVER:
                for a in range(sb.scratch.shape[0]):
                    sb.scratch[a] = 0
            else:
                next_decision_mask(st, tb, b, s, buf.masks[b], sb.scratch, lucky_code)
            for a in range(sb.scratch.shape[0]):
                sb.masks[s, a] = sb.scratch[a]
    return first


@batch_kernel
def games_kernel(op, count, st, tb, off, buf, setup, lucky_code):
    """Some games at a time (`APPLY, SETTLE, OBSERVE_GAMES`): `APPLY` plays ``buf.actions[b]``
    in each game b of ``buf.games[:count]`` (returning the index in that list of the first
    that is over or whose mask does not offer its action, changing nothing; else -1);
    `SETTLE` writes every game's rewards since its last ones and its done flag, and the
    observation of each game that is over as ``buf.observers[b]`` sees it; `OBSERVE_GAMES`
    writes the mask and the observation (as ``buf.observers[b]`` sees it) of each game of
    ``buf.games[:count]``."""
    if op == APPLY:
        for i in range(count):
            b, a = buf.games[i], buf.actions[buf.games[i]]
            if st.phase[b] == OVER or a < 0 or a >= buf.masks.shape[1] or buf.masks[b, a] == 0:
                return i
        for i in range(count):
            b = buf.games[i]
            rules.apply_one(st, tb, b, buf.actions[b], lucky_code)
    elif op == SETTLE:
        for b in range(st.phase.shape[0]):
            buf.done[b] = False
            if st.phase[b] == OVER:  # written before an autoreset restarts the game
                encode_one(st, tb, off, b, buf.observers[b], buf.obs[b])
            settle_game(st, tb, b, buf, setup)
    else:
        for i in range(count):
            b = buf.games[i]
            rules.legal_mask_one(st, tb, b, buf.masks[b], lucky_code)
            encode_one(st, tb, off, b, buf.observers[b], buf.obs[b])
    return -1


@batch_kernel
def seat_table_kernel(st, tb, lucky_code, table, policy):
    """Play every game on (`Engine.play_table`) until the caller's seat is to decide, the game
    is over or it waits for a policy the caller runs; returns how many decisions it played."""
    decisions = 0
    for b in range(st.phase.shape[0]):
        table.waiting[b] = -1
        while st.phase[b] != OVER and st.turn[b] != table.caller[b]:
            entry = table.entries[b, st.turn[b]]
            kind = table.kinds[entry]
            if kind < 0:
                table.waiting[b] = entry
                break
            rules.apply_one(st, tb, b, policy(kind, st, tb, b, table.params, table.scratch), lucky_code)
            decisions += 1
    return decisions


def game_seeds(seed: int | Sequence[int] | None, num_games: int) -> np.ndarray:
    """Generator states for `num_games` games: an int seeds game i with ``seed + i`` (so game i
    of a batch plays exactly as a single game seeded with ``seed + i``); a sequence gives one
    seed per game; None draws fresh entropy."""
    if seed is None:
        return np.random.SeedSequence().generate_state(num_games, np.uint64)
    # an int, or a scalar that check_int refuses by name; spelt out so that what is left is a sequence
    if isinstance(seed, (int, np.integer, np.bool_, float, np.floating, str)):
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


def as_actions(actions: Any, num_games: int) -> np.ndarray:
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


def as_games(games: Any, num_games: int) -> np.ndarray:
    """`games` as (n,) int64 indices from 0 to num_games - 1, or a ValueError naming the bad one."""
    idx = np.asarray(games)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
        raise ValueError(f"games: got {games!r}; expected a list of game indices (whole numbers)")
    idx = idx.astype(np.int64, copy=False)  # read only, here and by every caller
    if idx.size and (idx.min() < 0 or idx.max() >= num_games):
        outside = idx[(idx < 0) | (idx >= num_games)]
        raise ValueError(f"games: got index {int(outside[0])}; expected indices from 0 to {num_games - 1}")
    return idx


class Engine:
    """B games of one table, stepped by the compiled rules (see the module docstring).

    `table` is a `TableOptions`, or None: the keyword options build one (`options.table_from`);
    `autoreset` restarts a game that ends in a step at once from its own generator;
    `observe_turn` makes `step` and `reset` also write, for each game, the observation of the
    seat to decide into `obs` (the batched engine's contract); `history` keeps each game's
    decisions and dice for `record` (the AEC env's; it costs a little per step).
    """

    def __init__(
        self,
        table: TableOptions | None = None,
        batch_size: int = 1,
        *,
        autoreset: bool = False,
        observe_turn: bool = False,
        history: bool = False,
        **options: Any,
    ):
        self.table = table = table_from(table, **options)
        self.variant = table.rules
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.num_players = table.num_players
        self.num_actions = self.variant.num_actions
        self.layout: ObservationLayout = layout_for(self.variant, self.num_players)
        self.reward_mode = table.reward_mode
        self.autoreset = check_flag("autoreset", autoreset)
        self.observe_turn = check_flag("observe_turn", observe_turn)
        self.history = check_flag("history", history)
        if self.history and self.autoreset:
            raise ValueError("history=True needs autoreset=False: a game that restarts inside a step has no record")
        B, P = self.batch_size, self.num_players
        self.state = new_state(P, B, self.variant)
        self.buffers = Buffers(
            actions=np.zeros(B, np.int64),
            games=np.zeros(B, np.int64),
            observers=np.zeros(B, np.int64),
            masks=np.zeros((B, self.num_actions), np.int8),
            obs=np.zeros((B, self.layout.size), np.float32),
            rewards=np.zeros((B, P), np.int64),
            last_scores=np.zeros((B, P), np.int64),
            done=np.zeros(B, np.bool_),
        )
        self._seat_buffers: SeatBuffers | None = None  # made on first use (`play`, `seat_views`)
        self._one_game = (P,) if B == 1 else None  # the actions' shape on `play`'s hot path
        self.setup = Setup(REWARD_MODES.index(self.reward_mode), table.start_seat, table.lucky_array(),
                           self.autoreset, self.observe_turn)
        self._lucky_code = rules.lucky_code_switch(self.variant.tables)
        self._seeded = False
        self._history: list[dict[str, Any]] = [_empty_history(None, 0) for _ in range(B)]
        self._bind()

    def _bind(self) -> None:
        """Resolve the kernel once for this engine's argument types (`core.compile.compiled`): a step
        is then one direct call into compiled code."""
        self._args = (self.state, self.variant.tables, self.layout.offsets, self.buffers, self.setup, self._lucky_code)
        self._kernel = compiled(table_kernel, RESET, 0, *self._args)
        self._mask_kernel: Any = None
        self._seats_kernel: Any = None  # resolved on first use (`play`, `seat_views`): most engines never need it
        self._seats_args: tuple[Any, ...] = ()
        self._games_kernel: Any = None  # resolved on first use (`apply_games`, `settle`, `observe_games`)
        self._table_kernel: Any = None  # resolved for the table and policy `play_table` last played
        self._table_args: tuple[Any, ...] = ()

    # --- the buffers, by name -----------------------------------------------------------

    @property
    def masks(self) -> np.ndarray:
        """(B, A) int8: the legal actions of the seat to decide in each game (zeros when over)."""
        return self.buffers.masks

    @property
    def obs(self) -> np.ndarray:
        """(B, D) float32: the observations last written (`observe`, or `step` with observe_turn)."""
        return self.buffers.obs

    @property
    def rewards(self) -> np.ndarray:
        """(B, P) int64: every seat's reward for the step just taken, in the table's reward mode."""
        return self.buffers.rewards

    @property
    def last_scores(self) -> np.ndarray:
        """(B, P) int64: each seat's score at its last reward ("score_delta" pays the change)."""
        return self.buffers.last_scores

    @property
    def done(self) -> np.ndarray:
        """(B,) bool: which games ended in the step just taken."""
        return self.buffers.done

    @property
    def seats(self) -> np.ndarray:
        """(B,) int8: the seat to decide in each game."""
        return self.state.turn

    # --- playing ------------------------------------------------------------------------

    def reset(self, seed: int | Sequence[int] | None = None) -> None:
        """Start every game. An int seed seeds game b with ``seed + b``, a sequence gives one
        seed per game; without one each game's generator goes on from where it is (fresh
        entropy on the first reset), so ``reset(0)`` then ``reset()`` is reproducible."""
        if seed is not None or not self._seeded:
            self.seed(seed)
        self._start(np.arange(self.batch_size), seed)

    def seed(self, seed: int | Sequence[int] | None = None) -> None:
        """Set every game's generator as `reset(seed)` does, without starting the games (for a
        caller that starts them itself with `reset_games`)."""
        self.state.rng[:] = game_seeds(seed, self.batch_size)
        self._seeded = True

    def reset_games(self, games: Sequence[int] | np.ndarray) -> None:
        """Restart some games from their own generators (as ``reset()`` without a seed).
        `games` are indices from 0 to B - 1; anything else is a ValueError, changing nothing."""
        idx = as_games(games, self.batch_size)
        if not self._seeded:
            self.seed(None)
        self._start(idx, None)

    def restart(self, game: int, rng_state: int, seed: int | None = None) -> None:
        """Start game `game` from a generator state (a record's ``rng_state``, which `replay`
        restores); `seed` is the seed its record names, if any."""
        idx = as_games([game], self.batch_size)
        self.state.rng[game] = np.uint64(rng_state)
        self._seeded = True
        self._start(idx, None if seed is None else [seed] * self.batch_size)

    def _start(self, idx: np.ndarray, seed: Any) -> None:
        if self.history:
            for b in idx.tolist():
                game_seed = None if seed is None else int(seed) + b if is_int(seed) else int(list(seed)[b])
                self._history[b] = _empty_history(game_seed, int(self.state.rng[b]))
        self.buffers.games[: idx.size] = idx
        self._kernel(RESET, idx.size, *self._args)
        if self.history:
            for b in idx.tolist():
                self._history[b]["rolls"].append(self.dice(b))

    def step(self, actions: int | Sequence[int] | np.ndarray) -> None:
        """One decision per game (an int for a batch of one): applied to every live game, then
        `rewards`, `done` and `masks` are written (and `obs`, with observe_turn). Raises
        ValueError, changing nothing, if a live game's action is not legal for its seat."""
        buf, st = self.buffers, self.state
        if self.batch_size == 1 and (type(actions) is int or isinstance(actions, np.integer)):
            # the AEC env's hot path: no array to build, the record kept with plain ints
            buf.actions[0] = actions
            seat = st.turn[0]
            bad = self._kernel(STEP, 0, *self._args)
            if bad < 0:
                if self.history and bad != -1:  # the game was live: PLAYED or PLAYED_ROLLED
                    hist = self._history[0]
                    hist["decisions"].append([int(seat), int(actions)])
                    if bad == PLAYED_ROLLED:
                        hist["rolls"].append(self.dice(0))
                return
        else:
            buf.actions[:] = as_actions(actions, self.batch_size)
            before = (st.turn.copy(), st.phase.copy(), st.roll.copy()) if self.history else None
            bad = self._kernel(STEP, 0, *self._args)
            if bad < 0:
                if before is not None:
                    turn, phase, roll = before
                    live = np.flatnonzero(phase != OVER)
                    self._log(live.tolist(), turn[live].tolist(), buf.actions[live].tolist(), roll[live].tolist())
                return
        raise ValueError(
            f"actions: game {bad} (seat {int(self.seats[bad])}) got action {int(buf.actions[bad])}; "
            f"legal there: {np.flatnonzero(buf.masks[bad]).tolist()}"
        )

    def play(self, actions: Sequence[int] | np.ndarray, show: int | None = None) -> np.ndarray:
        """Each seat's next decision in each game, as the Parallel API takes them: `actions`
        (B, P), or (P,) for a batch of one, -1 where a seat gives none. In each live game the
        seat to decide plays its action, then the next seat to decide its own, and so on, until
        the seat to decide has none or the game ends (at a new roll the white action takes every
        seat's; a seat that then breaks a Longo lucky tie, or the active seat's colour action,
        needs a call of its own). Then `rewards` (every seat's, summed over these decisions),
        `done` and `masks` are written as by `step`. A given action must be legal for its seat's
        next decision in this roll (`seat_views` shows them); else ValueError, changing nothing.
        Returns (B, P) int64: the actions not played (a later seat's white choice while a seat
        breaks a lucky tie), -1 elsewhere: the engine's buffer, written again by the next call.
        `show`: a game whose `seat_views` to write too, in the same compiled call (the views
        are then in ``seat_buffers.obs`` and ``seat_buffers.masks``)."""
        sb, st, args = self._seat_buffers, self.state, self._seats_args
        if (show == 0 and type(actions) is np.ndarray and sb is not None and args and args[0] is st
                and actions.dtype is _INT64 and actions.shape == self._one_game):
            # the Parallel view's hot path: one game, its views wanted, everything resolved already
            sb.actions[0] = actions
            bad = self._seats_kernel(PLAY_SEATS, *args)
            if bad < 0:
                if self.history:
                    self._log_play(0, sb.decided[0].tolist(), actions.tolist(), bad == PLAYED_ROLLED)
                return sb.actions
            return self._refuse_play(bad)
        sb, B, P = self.seat_buffers, self.batch_size, self.num_players
        op = PLAY
        if show is not None:
            sb.game[0] = show if type(show) is int and 0 <= show < B else as_games([show], B)[0]
            op = PLAY_SEATS
        if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (P,) and B == 1:
            sb.actions[0] = actions  # the Parallel view's hot path
        else:
            given = np.asarray(actions)
            if given.shape != (B, P) and not (B == 1 and given.shape == (P,)):
                raise ValueError(f"actions: got shape {given.shape}; expected ({B}, {P}), one action per game and "
                                 "seat (-1: none)" + (f", or ({P},)" if B == 1 else ""))
            sb.actions[...] = as_actions(given.reshape(-1), B * P).reshape(B, P)
        played, roll = (sb.actions.tolist(), st.roll.tolist()) if self.history else ([], [])
        bad = self._seats(op)
        if bad >= 0:
            self._refuse_play(bad)
        if self.history:
            for b, seats in enumerate(sb.decided.tolist()):
                self._log_play(b, seats, played[b], self.state.roll.item(b) != roll[b])
        return sb.actions

    def _log_play(self, b: int, seats: list[int], played: list[int], rolled: bool) -> None:
        """Add a `play` to game b's history: the seats that decided, in order (-1 after the
        last), with what each played, and the new roll's dice if it `rolled` anew."""
        hist = self._history[b]
        decisions = hist["decisions"]
        for s in seats:
            if s < 0:
                break
            decisions.append([s, played[s]])
        if rolled:
            hist["rolls"].append(self.dice(b))

    def _refuse_play(self, bad: int) -> NoReturn:
        """The ValueError of a `play` whose action for game b, seat s (``bad = b * P + s``) is not
        legal; the actions given are dropped, nothing else changed."""
        sb = self.seat_buffers
        b, s = divmod(bad, self.num_players)
        action = int(sb.actions[b, s])
        sb.actions[...] = -1
        self.seat_views(b)
        legal = np.flatnonzero(sb.masks[s]).tolist()
        raise ValueError(f"actions: game {b}, seat {s} got action {action}; legal for its next decision: "
                         f"{legal or 'none (it has nothing to decide in this roll)'}")

    def seat_views(self, game: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Game `game` as every seat sees it and what each may do now: ((P, D) float32
        observations, (P, A) int8 masks of each seat's next decision in this roll, zeros for a
        seat with none: at a new roll every seat's white choices, judged against the sheets at
        the roll; else the seat to decide's). The engine's buffers, written again by the next call."""
        if not (type(game) is int and 0 <= game < self.batch_size):
            game = int(as_games([game], self.batch_size)[0])  # checks it: a ValueError naming it
        sb = self._seat_buffers or self.seat_buffers
        sb.game[0] = game
        self._seats(SEATS)
        return sb.obs, sb.masks

    @property
    def seat_buffers(self) -> SeatBuffers:
        """The buffers of `play` and `seat_views` (made on first use: most engines never need them)."""
        if self._seat_buffers is None:
            B, P, A = self.batch_size, self.num_players, self.num_actions
            self._seat_buffers = SeatBuffers(
                actions=np.full((B, P), -1, np.int64),
                decided=np.full((B, P), -1, np.int64),
                obs=np.zeros((P, self.layout.size), np.float32),
                masks=np.zeros((P, A), np.int8),
                scratch=np.zeros(A, np.int8),
                game=np.zeros(1, np.int64),
            )
        return self._seat_buffers

    def _seats(self, op: int) -> int:
        """`seats_kernel` for this engine, resolved on first use."""
        if not self._seats_args or self._seats_args[0] is not self.state:  # first use, or `attach`
            st, tb, off, buf, setup, lucky_code = self._args
            self._seats_args = (st, tb, off, buf, self.seat_buffers, setup, lucky_code)
            if self._seats_kernel is None:
                self._seats_kernel = compiled(seats_kernel, op, *self._seats_args)
        return self._seats_kernel(op, *self._seats_args)

    def _log(self, games: list[int], seats: list[int], actions: list[int], rolls: list[int]) -> None:
        """Add one decision per game to its history: seat ``seats[i]`` played ``actions[i]`` in
        game ``games[i]``, whose roll was ``rolls[i]`` before it (a new roll's dice go in too)."""
        for b, seat, action, roll in zip(games, seats, actions, rolls, strict=True):
            hist = self._history[b]
            hist["decisions"].append([seat, action])
            if self.state.roll[b] != roll:
                hist["rolls"].append(self.dice(b))

    def legal_mask(self) -> np.ndarray:
        """(B, A) int8: the legal actions of the seat to decide in each game (the `masks`
        buffer, written again by the next step or reset)."""
        return self.buffers.masks

    def legal_actions(self, game: int = 0) -> list[int]:
        """The legal actions of the seat to decide in game `game` (empty when it is over)."""
        if self.state.phase[game] == OVER:
            return []
        return np.flatnonzero(self.buffers.masks[game]).tolist()

    def observe(self, seats: int | Sequence[int] | np.ndarray) -> np.ndarray:
        """(B, D) float32: game b as seat ``seats[b]`` sees it (an int: that seat in every game).
        The `obs` buffer, written again by the next call: copy what you keep."""
        if self.batch_size == 1 and type(seats) is int:
            self.buffers.observers[0] = seats  # the AEC env's hot path: an item, not a slice
        else:
            self.buffers.observers[:] = seats
        self._kernel(OBSERVE, 0, *self._args)
        return self.buffers.obs

    # --- some games at a time (a caller that plays some seats itself: the vector env) ----

    def apply_games(self, games: Sequence[int] | np.ndarray, actions: Sequence[int] | np.ndarray) -> None:
        """One decision in each of some games: ``actions[i]`` in game ``games[i]`` (distinct
        games, each live, each action offered by its row of `masks`, as `observe_games`,
        `step` and `reset` write them). Unlike `step` it writes no rewards, done flags or
        masks: `settle` and `observe_games` write them when the caller wants them. Raises
        ValueError, changing no game, for a game that is over or an action it does not offer."""
        idx = self._distinct_games(games)
        acts = as_actions(actions, idx.size)
        buf, st = self.buffers, self.state
        buf.games[: idx.size] = idx
        buf.actions[idx] = acts
        before = (st.turn[idx].tolist(), st.roll[idx].tolist()) if self.history else None
        bad = self._games(APPLY, idx.size)
        if bad >= 0:
            b = int(idx[bad])
            legal = "none (the game is over)" if st.phase[b] == OVER else np.flatnonzero(buf.masks[b]).tolist()
            raise ValueError(f"actions: game {b} (seat {int(st.turn[b])}) got action {int(acts[bad])}; "
                             f"legal there: {legal}")
        if before is not None:
            self._log(idx.tolist(), before[0], acts.tolist(), before[1])

    def play_table(self, table: SeatTable, policy: Any) -> int:
        """Play every live game on by the seat table `table` (a `SeatTable`) until, in each,
        the caller's seat is to decide, the game is over, or it waits for a policy the caller
        runs (``table.waiting``): a seat of kind k decides ``policy(k, state, tables, game,
        table.params, table.scratch)``, a compiled policy (`policies.scripted.policy_action`).
        Writes no rewards (`settle` does). Returns how many decisions it played. An engine
        with ``history=True`` refuses it (those decisions would not be recorded)."""
        if self.history:
            raise RuntimeError("play_table(): this engine keeps a history, which would miss the table's decisions; "
                               "build it with history=False")
        args = self._table_args
        if not args or args[0] is not self.state or args[3] is not table or args[4] is not policy:
            self._check_table(table)
            self._table_args = args = (self.state, self.variant.tables, self._lucky_code, table, policy)
            self._table_kernel = compiled(seat_table_kernel, *args)
        return self._table_kernel(*args)

    def _check_table(self, table: Any) -> None:
        """A ValueError unless `table` is a `SeatTable` of this engine's shape whose seats and
        entries are in range (checked when a table is first played: values the caller
        changes in place later are its own to keep in range)."""
        B, P = self.batch_size, self.num_players
        if not isinstance(table, SeatTable):
            raise ValueError(f"table: got {type(table).__name__}; expected a SeatTable")
        shapes = {"caller": (B,), "entries": (B, P), "waiting": (B,)}
        for name, shape in shapes.items():
            arr = getattr(table, name)
            if not (isinstance(arr, np.ndarray) and arr.dtype == np.int64 and arr.shape == shape):
                raise ValueError(f"table.{name}: expected an int64 array of shape {shape}")
        kinds = table.kinds
        if not (isinstance(kinds, np.ndarray) and kinds.dtype == np.int64 and kinds.ndim == 1 and kinds.size):
            raise ValueError("table.kinds: expected a non-empty 1-d int64 array (a policy kind per entry, -1: yours)")
        if table.caller.min() < -1 or table.caller.max() >= P:
            raise ValueError(f"table.caller: expected seats from 0 to {P - 1} (-1: none)")
        if table.entries.min() < 0 or table.entries.max() >= kinds.size:
            raise ValueError(f"table.entries: expected entries from 0 to {kinds.size - 1}")

    def settle(self, observers: int | Sequence[int] | np.ndarray) -> None:
        """For a caller that plays with `apply_games` and `play_table` (`step` settles its
        own): every game's rewards since it was last settled or started into `rewards`, which
        games are over into `done`, and the observation of each that is over, as seat
        ``observers[b]`` sees it (an int: that seat in every game), into its row of `obs`."""
        self.buffers.observers[:] = self._check_seats(observers, self.batch_size)
        self._games(SETTLE, 0)

    def observe_games(self, games: Sequence[int] | np.ndarray,
                      seats: int | Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Write, for each game ``games[i]``, its mask (the legal actions of the seat to
        decide) and its observation as seat ``seats[i]`` sees it (an int: that seat in every
        game) into its rows of `masks` and `obs`; the other rows stay as they were. Returns
        the (obs, masks) buffers, written again by the next call."""
        idx = as_games(games, self.batch_size)
        buf = self.buffers
        buf.observers[idx] = self._check_seats(seats, idx.size)
        buf.games[: idx.size] = idx
        self._games(OBSERVE_GAMES, idx.size)
        return buf.obs, buf.masks

    def _distinct_games(self, games: Sequence[int] | np.ndarray) -> np.ndarray:
        """`games` as checked indices (`as_games`), or a ValueError naming one given twice."""
        idx = as_games(games, self.batch_size)
        if idx.size > 1 and not bool(np.all(idx[1:] > idx[:-1])):
            values, counts = np.unique(idx, return_counts=True)
            if counts.max() > 1:
                raise ValueError(f"games: got game {int(values[np.argmax(counts)])} twice; expected distinct games")
        return idx

    def _check_seats(self, seats: Any, n: int) -> np.ndarray:
        """`seats` as (n,) int64 seats of this table (an int: that seat n times), or a ValueError."""
        arr = np.asarray(seats)
        if arr.ndim == 0:
            arr = np.full(n, arr)
        if arr.shape != (n,) or (n and (arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= self.num_players)):
            raise ValueError(f"seats: got {seats!r}; expected one seat from 0 to {self.num_players - 1} per game")
        return arr

    def _games(self, op: int, count: int) -> int:
        """`games_kernel` for this engine, resolved on first use."""
        if self._games_kernel is None:
            self._games_kernel = compiled(games_kernel, op, count, *self._args)
        return self._games_kernel(op, count, *self._args)

    def scores(self) -> np.ndarray:
        """(B, P) int64: every seat's score now (committed crosses only); a new array."""
        return rules.scores(self.variant, self.state)

    def is_over(self) -> np.ndarray:
        """(B,) bool: which games have ended, by the rules or by an illegal action
        (`end_games`); a new array."""
        return self.state.phase == OVER

    def end_games(self, games: Sequence[int] | np.ndarray, seats: Sequence[int] | np.ndarray,
                  actions: Sequence[int] | np.ndarray | None = None) -> None:
        """An illegal action by seat ``seats[i]`` (``actions[i]``, if given, goes in the record)
        ended game ``games[i]`` where it stands: its phase is over, with that seat as the
        reason (``state.illegal_end``, the snapshot's ``illegal_end``), and no seat has a legal
        action left. The sheets stay as they were. Rewards are the caller's (each adapter's
        illegal-move reward)."""
        idx = as_games(games, self.batch_size)
        who = self._check_seats(seats, idx.size)
        acts = None if actions is None else as_actions(actions, idx.size)
        self.state.phase[idx] = OVER
        self.state.illegal_end[idx] = who
        self.buffers.masks[idx] = 0
        if self.history:
            for i, b in enumerate(idx.tolist()):
                end = {"seat": int(who[i])}
                if acts is not None:
                    end["action"] = int(acts[i])
                self._history[b]["illegal_end"] = end

    def illegal_step_rewards(self, games: Sequence[int] | np.ndarray, seats: Sequence[int] | np.ndarray,
                             illegal_reward: float) -> np.ndarray:
        """What the step of an illegal action pays seat ``seats[i]`` of game ``games[i]``, so
        that its rewards for the game sum to `illegal_reward`: that, less what it has been paid
        already (its score at its last reward, `last_scores`). A new float64 array."""
        idx = as_games(games, self.batch_size)
        return illegal_reward - self.buffers.last_scores[idx, self._check_seats(seats, idx.size)].astype(np.float64)

    def dice(self, game: int = 0) -> list[int | None]:
        """Game `game`'s dice as rolled (white, white, then `Variant.dice_colors`: red, yellow,
        green, blue in classic; None: out of play)."""
        return [d if d > 0 else None for d in self.state.dice[game].tolist()]

    def snapshot(self, game: int = 0) -> dict[str, Any]:
        """The committed state of game `game` as a JSON-serialisable dict (see the README)."""
        return snapshot(self.variant, self.state, game)

    def record(self, game: int = 0) -> dict[str, Any]:
        """Game `game` so far as a JSON-serialisable record (`qwixx_env.replay` rebuilds it);
        needs ``history=True``. It is the game's full history, not one seat's view: made during
        a white action it includes the choices already made in it. A variant that is not the
        package's own goes with it whole (``"sheet"``, `Variant.as_dict`), so that the record
        replays in a process where it is not registered."""
        if not self.history:
            raise RuntimeError("record(): this engine keeps no history; build it with Engine(..., history=True)")
        rec = json.loads(json.dumps(self._history[game]))
        rec["options"] = self.table.as_dict()
        sheet = custom_sheet(self.table.variant)
        if sheet is not None:
            rec["sheet"] = sheet
        rec["snapshot"] = self.snapshot(game)
        keys = ("format", "options", "sheet", "seed", "rng_state", "rolls", "decisions", "illegal_end", "snapshot")
        return {k: rec[k] for k in keys if k in rec}

    def clone(self) -> Engine:
        """An independent copy: the same games, buffers and history, sharing the compiled kernel."""
        new = Engine(self.table, self.batch_size, autoreset=self.autoreset, observe_turn=self.observe_turn,
                     history=self.history)
        new.load(self)
        return new

    def load(self, other: Engine) -> None:
        """Make this engine's games exact copies of `other`'s (the same table and batch size):
        state, buffers and history, copied in place."""
        if other.table != self.table or other.batch_size != self.batch_size:
            raise ValueError(f"load: got an engine of {other.table} x {other.batch_size}; "
                             f"expected {self.table} x {self.batch_size}")
        self.state.copy_from(other.state)
        for dst, src in zip(self.buffers, other.buffers):
            dst[...] = src
        self._history = json.loads(json.dumps(other.history_data())) if self.history else self._history
        self._seeded = other.seeded

    @property
    def seeded(self) -> bool:
        """Whether the games' generators have been set (by a seed, or fresh entropy on the first reset)."""
        return self._seeded

    def history_data(self) -> list[dict[str, Any]]:
        """Each game's history as kept for `record` (the engine's own lists: read them only)."""
        return self._history

    def attach(self, state: State, masks: np.ndarray | None = None) -> None:
        """Play `state` from now on, in place: a `State` of this table and batch size that the
        caller keeps (a search keeps one per node, as the OpenSpiel game does). `masks` are its
        legal masks if the caller has them (they are copied into the `masks` buffer); else they
        are computed. The other buffers stay the engine's."""
        check_state(self.variant, state)
        if state.marks.shape != self.state.marks.shape:
            raise ValueError(f"attach: got a state of shape {state.marks.shape}; expected {self.state.marks.shape}")
        if state is not self.state:
            self.state = state
            self._args = (state, *self._args[1:])
        if masks is None:
            self.update_masks()
        else:
            self.buffers.masks[...] = masks

    def start_game(self, game: int, start_seat: int, lucky_numbers: np.ndarray) -> None:
        """Start game `game` from its generator with this first active seat and these (P, 2)
        lucky numbers, whatever the table says (chance outcomes drawn outside, as OpenSpiel
        draws its set-up)."""
        setup = self.setup._replace(start_seat=int(start_seat), lucky_numbers=np.asarray(lucky_numbers, np.int64))
        self.buffers.games[0] = game
        self._kernel(RESET, 1, *self._args[:4], setup, self._lucky_code)

    def update_masks(self) -> None:
        """Write every game's mask again, after its state was changed from outside (dice set by
        a chance node)."""
        if self._mask_kernel is None:  # resolved on first use: most engines never need it
            self._mask_kernel = compiled(rules.mask_batch, self.state, self.variant.tables, self.buffers.masks)
        self._mask_kernel(self.state, self.variant.tables, self.buffers.masks)

    def memory_per_game(self) -> int:
        """Bytes held per game: the state arrays plus the buffers."""
        return sum(a.nbytes for a in (*self.state, *self.buffers)) // self.batch_size


def _empty_history(seed: Any, rng_state: int) -> dict[str, Any]:
    return {
        "format": RECORD_FORMAT,
        "seed": None if seed is None else int(seed),
        "rng_state": f"{rng_state:#018x}",
        "rolls": [],
        "decisions": [],
    }


__all__ = ["RECORD_FORMAT", "Buffers", "Engine", "SeatTable", "Setup", "State", "as_actions", "as_games", "game_seeds"]
