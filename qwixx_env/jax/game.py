"""The rules of `qwixx_env.core.rules`, written again in JAX: one game as an immutable pytree.

`Qwixx` is a table (the options of ``qwixx_v0.env()``: players, variant, lucky rule, reward,
start player, score table) and the pure functions of a game on it, in pgx's shape::

    env = Qwixx(num_players=2)
    state = env.init_seed(0)                       # the game the core starts with seed 0
    state = jax.jit(env.step)(state, action)       # one decision, the AEC env's order
    env.legal_action_mask(state), env.observe(state, seat), env.current_player(state)
    state.rewards, env.terminated(state)

Every function works on one game; `jax.vmap` makes a batch. The state (`State`) holds the
core's fields, one game's worth, as jnp arrays. The sheet is read from the `Variant`'s
`RuleTables`, baked into the compiled functions as constants, so a registered sheet plays
here too. The dice come from each game's splitmix64 generator, as in the core, computed on
pairs of 32-bit words (JAX's 64-bit mode stays off): a game started from a seed deals the
dice the core deals for that seed, and the same decisions give the same game, decision for
decision (tests/test_jax.py checks masks, observations, rewards and scores).

This module is a transcription, not a second rule book to extend: a rule changes in
`qwixx_env.core.rules` first, then here, and the agreement test says whether they agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from qwixx_env.core.checks import check_int, is_int
from qwixx_env.core.observation import SCORE_SCALE, ObservationLayout, layout_for
from qwixx_env.core.options import TableOptions, table_from
from qwixx_env.core.rewards import illegal_return, score_bounds
from qwixx_env.core.state import COLOR, LUCKY, NO_DECISION, NO_SEAT, OVER, WHITE, check_state, seed_to_rng
from qwixx_env.core.state import State as CoreState

__all__ = ["Qwixx", "State", "seed_states", "splitmix_below"]

_I32, _U32 = jnp.int32, jnp.uint32
_MASK32 = (1 << 32) - 1

# --- splitmix64 on two 32-bit words ------------------------------------------------------


def _halves(x: int) -> tuple[np.uint32, np.uint32]:
    return np.uint32(x >> 32), np.uint32(x & _MASK32)


_GOLDEN = _halves(0x9E3779B97F4A7C15)
_MIX1 = _halves(0xBF58476D1CE4E5B9)
_MIX2 = _halves(0x94D049BB133111EB)


def _add64(ah, al, bh, bl):
    lo = al + bl
    return ah + bh + (lo < al).astype(_U32), lo


def _mul32(a, b):
    """The full 64-bit product of two 32-bit words, as (high, low), from 16-bit pieces."""
    a0, a1 = a & 0xFFFF, a >> 16
    b0, b1 = b & 0xFFFF, b >> 16
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> 16) + (p01 & 0xFFFF) + (p10 & 0xFFFF)
    return p11 + (p01 >> 16) + (p10 >> 16) + (mid >> 16), (p00 & 0xFFFF) | (mid << 16)


def _mul64(ah, al, bh, bl):
    """The product modulo 2**64."""
    hi, lo = _mul32(al, bl)
    return hi + al * bh + ah * bl, lo


def _xorshift(h, lo, k):
    """z ^ (z >> k) for 0 < k < 32."""
    return h ^ (h >> k), lo ^ ((lo >> k) | (h << (32 - k)))


def splitmix_below(rng: jax.Array, n: int) -> tuple[jax.Array, jax.Array]:
    """(an integer in [0, n), the advanced generator) from a splitmix64 state given as (2,)
    uint32 words (high, low): `qwixx_env.core.rules.random_below`, bit for bit."""
    h, lo = _add64(rng[0], rng[1], *_GOLDEN)
    advanced = jnp.stack([h, lo])
    h, lo = _mul64(*_xorshift(h, lo, 30), *_MIX1)
    h, lo = _mul64(*_xorshift(h, lo, 27), *_MIX2)
    h, lo = _xorshift(h, lo, 31)
    m = np.uint32(n)
    wrap = np.uint32((1 << 32) % n)  # 2**32 mod n: z mod n from its two words
    return (((h % m) * wrap + lo % m) % m).astype(_I32), advanced


def seed_states(seeds: int | Sequence[int]) -> np.ndarray:
    """The generator states of the core's seeds as (2,) uint32 words (high, low), or (N, 2) for
    a sequence: what `Qwixx.init_rng` starts from. A seed is what ``Engine.reset(seed=...)``,
    ``BatchedQwixx.reset`` and ``qwixx_v0.env().reset(seed=...)`` take for one game (an int
    seed s of a batch seeds its game b with s + b: pass ``range(s, s + N)`` here)."""
    one = is_int(seeds)
    items = [seeds] if one else list(seeds)  # type: ignore[arg-type]
    out = np.empty((len(items), 2), np.uint32)
    for i, seed in enumerate(items):
        x = int(seed_to_rng(check_int("seed", seed, minimum=0, accepted="a non-negative integer")))
        out[i] = _halves(x)
    return out[0] if one else out


# --- the state -----------------------------------------------------------------------------


class State(NamedTuple):
    """One game (see `qwixx_env.core.state.State`, whose fields these are, without the batch
    axis): P players, R rows, D coloured dice. `rewards` are every seat's rewards for the step
    just taken, in the table's reward mode; `last_scores` each seat's score at its last reward."""

    marks: jax.Array  # (P, R) int32: bitmask of crossed cells per row
    locks: jax.Array  # (P, R) bool
    penalties: jax.Array  # (P,) int32
    lucky_numbers: jax.Array  # (P, 2) int32, 0 when unused
    dice: jax.Array  # (2 + D,) int32: white, white, the coloured dice; 0 = out of play
    active: jax.Array  # () int32
    turn: jax.Array  # () int32: the seat to decide
    phase: jax.Array  # () int32: WHITE, LUCKY, COLOR or OVER
    pending: jax.Array  # (P,) int32: white choice of this roll, -1 before deciding
    pending_lucky: jax.Array  # (P,) int32
    roll: jax.Array  # () int32
    rng: jax.Array  # (2,) uint32: the splitmix64 state, (high, low)
    illegal_end: jax.Array  # () int32: the seat whose illegal action ended the game, else -1
    rewards: jax.Array  # (P,) float32
    last_scores: jax.Array  # (P,) int32


def _where(cond: Any, a: State, b: State) -> State:
    return State(*(jnp.where(cond, x, y) for x, y in zip(a, b)))


def _rightmost(m):
    """Index of the rightmost cross of row bitmasks (int32 < 2**15), -1 for an empty row."""
    return 31 - jax.lax.clz(m)


def _count(m):
    return jax.lax.population_count(m)


class Qwixx:
    """A table of Qwixx in JAX: the options of ``qwixx_v0.env()`` (`table`, a `TableOptions`, or
    its keyword options), checked as the core checks them; the methods are pure functions of a
    `State` (one game), `jit`- and `vmap`-able. An action is a legal one of the seat to decide
    (`legal_action_mask`); an illegal one ends the game, paying the offender
    `qwixx_env.core.rewards.illegal_return` (less what it was paid before) and the others 0,
    as ``qwixx_v0.env()`` does."""

    def __init__(self, table: TableOptions | None = None, **options: Any):
        self.table = table = table_from(table, **options)
        v = self.variant = table.rules
        tb = v.tables
        self.num_players = P = table.num_players
        self.num_actions = v.num_actions
        self.layout: ObservationLayout = layout_for(v, P)
        self.observation_size = self.layout.size
        self.reward_mode = table.reward_mode
        self._illegal = float(illegal_return(self.reward_mode, v))
        self._start_seat = table.start_seat
        self._fixed_lucky = table.lucky_array()
        self._R, self._K, self._D = v.num_rows, v.cells, len(v.dice_colors)
        self._faces = v.faces
        self._first_lock, self._threshold = tb.first_lock_cell, tb.lock_threshold
        self._lucky_count = tb.lucky_count
        self._lucky_rule = v.lucky_rule if tb.lucky_count else None
        self._max_penalties, self._rows_to_end = tb.max_penalties, tb.rows_to_end
        self._penalty_points = tb.penalty_points
        self._cell_of = tb.cell_of.astype(np.int32)
        self._cell_die = tb.cell_die.astype(np.int32)
        self._pairs = tb.color_pairs.astype(np.int32)
        self._score_table = tb.score_table.astype(np.int32)
        # score / SCORE_SCALE as the core's encoder rounds it (float64, then float32), looked up:
        # XLA turns a division by a constant into a multiplication, a last bit off
        self._low, high = score_bounds(v)
        self._score_obs = (np.arange(self._low, high + 1) / SCORE_SCALE).astype(np.float32)
        # (R, D) bool: the dice that leave play when row r locks (its lock cells' dice)
        self._lock_dice = np.array([[(tb.lock_dice >> (8 * r + d)) & 1 for d in range(self._D)]
                                    for r in range(self._R)], bool)

    def __repr__(self) -> str:
        return f"Qwixx({self.table!r})"

    # --- the generator and the roll --------------------------------------------------------

    def init(self, key: jax.Array) -> State:
        """A new game whose generator is drawn from a JAX key (pgx's `init`)."""
        return self.init_rng(jax.random.bits(key, (2,), _U32))

    def init_seed(self, seed: int) -> State:
        """The game the core starts from `seed` (``qwixx_v0.env().reset(seed=seed)``); not
        traceable (the seed becomes a generator state on the host: `seed_states`)."""
        return self.init_rng(jnp.asarray(seed_states(seed)))

    def init_rng(self, rng: jax.Array) -> State:
        """A new game from a generator state, (2,) uint32 (`seed_states`): empty sheets, lucky
        numbers (fixed by the table, or drawn), the first active seat, the first roll."""
        P = self.num_players
        rng = jnp.asarray(rng, _U32)
        lucky_numbers = jnp.zeros((P, 2), _I32)
        if self._lucky_count:
            choices = 2 * self._faces - 1
            rows = []
            for s in range(P):
                if self._fixed_lucky[s, 0] > 0:
                    rows.append(jnp.asarray(self._fixed_lucky[s].astype(np.int32)))
                    continue
                first, rng = splitmix_below(rng, choices)
                second, rng = splitmix_below(rng, choices - 1)
                second = second + (second >= first)
                rows.append(jnp.stack([2 + first, 2 + second]))
            lucky_numbers = jnp.stack(rows).astype(_I32)
        if self._start_seat < 0:
            active, rng = splitmix_below(rng, P)
        else:
            active = jnp.asarray(self._start_seat, _I32)
        zero = jnp.zeros((), _I32)
        state = State(
            marks=jnp.zeros((P, self._R), _I32),
            locks=jnp.zeros((P, self._R), bool),
            penalties=jnp.zeros(P, _I32),
            lucky_numbers=lucky_numbers,
            dice=jnp.zeros(2 + self._D, _I32),
            active=active,
            turn=active,
            phase=jnp.asarray(WHITE, _I32),
            pending=jnp.full(P, NO_DECISION, _I32),
            pending_lucky=jnp.full(P, NO_DECISION, _I32),
            roll=zero,
            rng=rng,
            illegal_end=jnp.asarray(NO_SEAT, _I32),
            rewards=jnp.zeros(P, jnp.float32),
            last_scores=jnp.zeros(P, _I32),
        )
        return self._start_roll(state)

    def _locked_rows(self, state: State) -> jax.Array:
        return state.locks.any(axis=0)

    def _gone(self, state: State) -> jax.Array:
        """(D,) bool: the coloured dice out of play (rule 8)."""
        return (self._locked_rows(state)[:, None] & self._lock_dice).any(axis=0)

    def _start_roll(self, state: State) -> State:
        """Rule 6: roll every die in play (whites first, then the coloured ones in order, a die
        out of play drawing nothing); the white action begins with the active seat."""
        rng = state.rng
        dice = []
        for _ in range(2):
            value, rng = splitmix_below(rng, self._faces)
            dice.append(1 + value)
        gone = self._gone(state)
        for d in range(self._D):
            value, advanced = splitmix_below(rng, self._faces)
            rng = jnp.where(gone[d], rng, advanced)
            dice.append(jnp.where(gone[d], 0, 1 + value))
        P = self.num_players
        return state._replace(
            dice=jnp.stack(dice).astype(_I32), rng=rng, phase=jnp.asarray(WHITE, _I32), turn=state.active,
            pending=jnp.full(P, NO_DECISION, _I32), pending_lucky=jnp.full(P, NO_DECISION, _I32),
        )

    # --- the rules ---------------------------------------------------------------------------

    def _may_cross(self, m, c):
        """Rules 4 and 5 for row bitmasks `m` and cells `c` (-1: none, never crossable)."""
        return (c > _rightmost(m)) & ((c < self._first_lock) | (_count(m) >= self._threshold))

    def scores(self, state: State) -> jax.Array:
        """(P,) int32: every seat's score (rule 10; committed crosses only)."""
        n = _count(state.marks) + state.locks.astype(_I32)
        return jnp.asarray(self._score_table)[n].sum(axis=1) - self._penalty_points * state.penalties

    def _lucky_options(self, state: State, s, white_action):
        """Longo rule 5 for seat s after its white choice: (each row's lucky action, whether
        the row qualifies and has the fewest crosses) as (R,) arrays, and how many tie."""
        R, K = self._R, self._K
        rows = jnp.arange(R)
        m = state.marks[s]
        own = (white_action // K == rows) & (white_action < R * K)
        c = white_action % K
        m = jnp.where(own, m | (1 << c), m)
        nxt = _rightmost(m) + 1
        ok = (~self._locked_rows(state)) & ~(own & (c >= self._first_lock)) & (nxt < K) & self._may_cross(m, nxt)
        n = jnp.where(ok, _count(m), 1 << 30)
        best = ok & (n == n.min())
        return rows * K + nxt, best, best.sum()

    def _is_lucky(self, state: State, s):
        total = state.dice[0] + state.dice[1]
        return (state.lucky_numbers[s] == total).any()

    def legal_action_mask(self, state: State) -> jax.Array:
        """(A,) bool: the legal actions of the seat to decide (all False when the game is over)."""
        R, K, A = self._R, self._K, self.num_actions
        s = state.turn
        locked = self._locked_rows(state)
        cells = jnp.arange(K)
        # white action: the white sum in any open row (judged against the sheets at the roll)
        c = jnp.asarray(self._cell_of)[:, state.dice[0] + state.dice[1]]
        white = (~locked & self._may_cross(state.marks[s], c))[:, None] & (cells == c[:, None])
        white = white.reshape(-1)
        if self._lucky_rule == "instead":
            actions, best, _ = self._lucky_options(state, s, R * K)
            offered = best & self._is_lucky(state, s)
            white = white | ((jnp.arange(R * K) == actions[:, None]) & offered[:, None]).any(0)
        # lucky tie: the tied rows' next cells, after the seat's own white choice
        if self._lucky_count:
            actions, best, _ = self._lucky_options(state, s, state.pending[s])
            lucky = ((jnp.arange(R * K) == actions[:, None]) & best[:, None]).any(0)
        else:
            lucky = jnp.zeros(R * K, bool)
        # colour action: (row, die) pairs with either white die
        pr, pd = self._pairs[:, 0], self._pairs[:, 1]
        colour = state.dice[2 + pd][:, None]  # (n, 1)
        whites = state.dice[:2][None, :]  # (1, 2)
        c = jnp.asarray(self._cell_of)[pr[:, None], whites + colour]  # (n, 2)
        c = jnp.where((c >= 0) & (jnp.asarray(self._cell_die)[pr[:, None], jnp.maximum(c, 0)] != pd[:, None]), -1, c)
        same = (jnp.arange(2) == 1) & (state.dice[1] == state.dice[0])
        c = jnp.where((colour == 0) | same[None, :], -1, c)
        ok = ~locked[pr][:, None] & self._may_cross(state.marks[s][pr][:, None], c)
        index = jnp.where(ok, pr[:, None] * K + c, R * K)  # R*K: nothing (dropped)
        color = jnp.zeros(R * K + 1, bool).at[index.reshape(-1)].set(True)[: R * K]
        cells_mask = jnp.select([state.phase == WHITE, state.phase == LUCKY, state.phase == COLOR],
                                [white, lucky, color], jnp.zeros(R * K, bool))
        passes = (state.phase == WHITE) | (state.phase == COLOR)
        return jnp.concatenate([cells_mask, passes[None]]).reshape(A)

    def _cross(self, marks, locks, s, action, do):
        """Cross cell `action` of seat s where `do` (a lock cell crosses the lock too)."""
        r, c = action // self._K, action % self._K
        r = jnp.clip(r, 0, self._R - 1)
        hit = do & (jnp.arange(self._R) == r)
        marks = marks.at[s].set(jnp.where(hit, marks[s] | (1 << c), marks[s]))
        locks = locks.at[s].set(locks[s] | (hit & (c >= self._first_lock)))
        return marks, locks

    def _game_ends(self, state: State):
        """Rule 9: enough locked rows, or a seat's last penalty."""
        return (self._locked_rows(state).sum() >= self._rows_to_end) | (state.penalties >= self._max_penalties).any()

    def _resolve_white(self, state: State) -> State:
        """Every white choice takes effect together; then the colour action, or the end."""
        RK = self._R * self._K
        marks, locks = state.marks, state.locks
        for s in range(self.num_players):
            p, q = state.pending[s], state.pending_lucky[s]
            marks, locks = self._cross(marks, locks, s, jnp.maximum(p, 0), (p >= 0) & (p < RK))
            marks, locks = self._cross(marks, locks, s, jnp.maximum(q, 0), q >= 0)
        state = state._replace(marks=marks, locks=locks)
        dice = state.dice.at[2:].set(jnp.where(self._gone(state), 0, state.dice[2:]))
        phase = jnp.where(self._game_ends(state), OVER, COLOR)
        return state._replace(dice=dice, turn=state.active, phase=phase.astype(_I32))

    def _next_white_seat(self, state: State) -> State:
        nxt = (state.turn + 1) % self.num_players
        return _where(nxt == state.active, self._resolve_white(state), state._replace(turn=nxt))

    def _white(self, state: State, action) -> State:
        s = state.turn
        state = state._replace(pending=state.pending.at[s].set(action))
        if self._lucky_rule == "bonus":
            actions, best, ties = self._lucky_options(state, s, action)
            lucky = self._is_lucky(state, s)
            choice = actions[jnp.argmax(best)]
            state = state._replace(pending_lucky=state.pending_lucky.at[s].set(
                jnp.where(lucky & (ties == 1), choice, state.pending_lucky[s])))
            tie = state._replace(phase=jnp.asarray(LUCKY, _I32))  # the same seat breaks it next
            return _where(lucky & (ties > 1), tie, self._next_white_seat(state))
        return self._next_white_seat(state)

    def _lucky(self, state: State, action) -> State:
        state = state._replace(pending_lucky=state.pending_lucky.at[state.turn].set(action),
                               phase=jnp.asarray(WHITE, _I32))
        return self._next_white_seat(state)

    def _color(self, state: State, action) -> State:
        s, RK = state.turn, self._R * self._K
        a, p = state.active, state.pending
        crossed = ((p[a] >= 0) & (p[a] < RK)) | (state.pending_lucky[a] >= 0) | (action < RK)
        marks, locks = self._cross(state.marks, state.locks, s, jnp.minimum(action, RK - 1), action < RK)
        penalties = state.penalties.at[s].add(jnp.where(crossed, 0, 1))
        state = state._replace(marks=marks, locks=locks, penalties=penalties)
        over = state._replace(phase=jnp.asarray(OVER, _I32))
        on = self._start_roll(state._replace(active=(a + 1) % self.num_players, roll=state.roll + 1))
        return _where(self._game_ends(state), over, on)

    def _rewards(self, state: State, before: State) -> State:
        """Every seat's reward for the step from `before` to `state` (`core.rewards`)."""
        now = self.scores(state)
        P = self.num_players
        over = state.phase == OVER
        mode = self.reward_mode
        last = before.last_scores
        if mode == "score_delta":
            rewards, last = now - before.last_scores, now
        elif mode == "score":
            rewards = jnp.where(over, now, 0)
        else:
            others = jnp.where(jnp.eye(P, dtype=bool), -(1 << 30), now[None, :]).max(axis=1)
            value = now - others if mode == "margin" else jnp.sign(now - others)
            rewards = jnp.where(over, value, 0)
        return state._replace(rewards=rewards.astype(jnp.float32), last_scores=last)

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """Apply the decision of the seat to decide (the dice of a new roll come from the
        state's own generator; `key`, pgx's argument, is not used). A game that is over stays
        as it is, with zero rewards."""
        del key
        action = jnp.asarray(action, _I32)
        live = state.phase != OVER
        A = self.num_actions
        legal = self.legal_action_mask(state)[jnp.clip(action, 0, A - 1)] & (action >= 0) & (action < A)
        a = jnp.clip(action, 0, A - 1)
        branches: list[Callable[[State, jax.Array], State]] = [
            self._white, self._lucky, self._color, lambda st, _: st]
        played = jax.lax.switch(jnp.clip(state.phase, 0, 3), branches, state, a)
        played = self._rewards(played, state)
        s = state.turn
        paid = state.last_scores[s] if self.reward_mode == "score_delta" else 0
        offender = jnp.arange(self.num_players) == s
        illegal = state._replace(
            phase=jnp.asarray(OVER, _I32), illegal_end=s,
            rewards=jnp.where(offender, self._illegal - paid, 0.0).astype(jnp.float32))
        finished = state._replace(rewards=jnp.zeros_like(state.rewards))
        return _where(live, _where(legal, played, illegal), finished)

    # --- what a seat sees ------------------------------------------------------------------

    def observe(self, state: State, player: jax.Array) -> jax.Array:
        """(size,) float32: the game as seat `player` sees it, the vector of ``qwixx_v0``
        (`qwixx_env.core.observation`, the same layout and values)."""
        P, R, K, F = self.num_players, self._R, self._K, self._faces
        seat = jnp.asarray(player, _I32)
        order = (seat + jnp.arange(P)) % P
        marks, locks = state.marks[order], state.locks[order]
        penalties, lucky = state.penalties[order], state.lucky_numbers[order]
        f32 = jnp.float32
        parts = [
            ((marks[:, :, None] >> jnp.arange(K)) & 1).astype(f32).reshape(-1),
            locks.astype(f32).reshape(-1),
            (jnp.arange(self._max_penalties)[None, :] < penalties[:, None]).astype(f32).reshape(-1),
            jnp.asarray(self._score_obs)[self.scores(state)[order] - self._low],
        ]
        if self._lucky_count:
            width = jnp.arange(2 * F - 1)
            hit = ((lucky[:, :, None] - 2 == width) & (lucky[:, :, None] >= 2)).any(axis=1)
            parts.append(hit.astype(f32).reshape(-1))
        parts += [
            (state.dice[:, None] - 1 == jnp.arange(F)).astype(f32).reshape(-1),
            self._locked_rows(state).astype(f32),
            (jnp.arange(4) == state.phase).astype(f32),
            (state.active == seat).astype(f32)[None],
            (jnp.arange(P) == (state.active - seat) % P).astype(f32),
        ]
        a, p = state.active, state.pending
        crossed = ((p[a] >= 0) & (p[a] < R * K)) | (state.pending_lucky[a] >= 0)
        parts.append(((state.phase == COLOR) & crossed).astype(f32)[None])
        mine = state.pending[seat]
        shown = (state.phase == LUCKY) & (state.turn == seat) & (mine >= 0) & (mine < R * K)
        parts.append(((jnp.arange(R * K) == mine) & shown).astype(f32))
        return jnp.concatenate(parts)

    # --- the bridge to the core ------------------------------------------------------------

    def from_core(self, state: CoreState, game: int = 0) -> State:
        """Game `game` of a core `State` of this table's sheet and players, as a JAX state
        (rewards zero, `last_scores` its scores now): a position built by hand, or replayed."""
        check_state(self.variant, state)
        if state.num_players != self.num_players:
            raise ValueError(f"state: {state.num_players} players; this table has {self.num_players}")
        game = check_int("game", game, minimum=0, maximum=state.batch_size - 1,
                         accepted=f"a game index from 0 to {state.batch_size - 1}")
        fields = {name: jnp.asarray(np.asarray(getattr(state, name)[game]).astype(np.int32))
                  for name in State._fields if name not in ("locks", "rng", "rewards", "last_scores")}
        out = State(**fields, locks=jnp.asarray(state.locks[game]), rng=jnp.asarray(_halves(int(state.rng[game]))),
                    rewards=jnp.zeros(self.num_players, jnp.float32), last_scores=jnp.zeros(self.num_players, _I32))
        return out._replace(last_scores=self.scores(out))

    def to_core(self, state: State, out: CoreState, game: int = 0) -> None:
        """Write a JAX state (one game) into game `game` of a core `State`, in place."""
        check_state(self.variant, out)
        if out.num_players != self.num_players:
            raise ValueError(f"out: {out.num_players} players; this table has {self.num_players}")
        game = check_int("game", game, minimum=0, maximum=out.batch_size - 1,
                         accepted=f"a game index from 0 to {out.batch_size - 1}")
        for name in CoreState._fields:
            if name != "rng":
                getattr(out, name)[game] = np.asarray(getattr(state, name))
        high, low = (int(x) for x in np.asarray(state.rng))
        out.rng[game] = np.uint64(high << 32 | low)

    def current_player(self, state: State) -> jax.Array:
        """The seat to decide."""
        return state.turn

    def terminated(self, state: State) -> jax.Array:
        """Whether the game is over."""
        return state.phase == OVER

    def rewards(self, state: State) -> jax.Array:
        """(P,) float32: every seat's reward for the step that made `state`."""
        return state.rewards
