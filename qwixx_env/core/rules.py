"""The rules of Qwixx and Qwixx Longo: the one place they are written down in code.

Kernels compiled with numba work on one game `b` of a `State` in place; the public functions
at the bottom loop them over the batch. Everything above the core (the AEC environment, the
batched engine, the bots, the solver) calls these functions and implements no rule itself.

One roll, as `docs/rules.md` states it::

    roll dice ─► WHITE: every seat, active first, clockwise, records a choice in `pending`
                 (Longo, lucky="bonus": a tie for the lucky cross adds a LUCKY decision)
              ─► resolve_white: all choices take effect together; locks; end?
              ─► COLOR: the active player crosses or passes; penalty; end? ─► next roll

Random numbers come from each game's own splitmix64 generator (`State.rng`), drawn in a
fixed order, so a seed and the decisions reproduce a game exactly on every machine.

The module is longer than the others on purpose: it is the whole rule book, and a reader
checking a rule against `docs/rules.md` should find every rule and every helper it uses here,
in the order of a roll, rather than spread over files.
"""

from __future__ import annotations

import numpy as np

from qwixx_env.core.checks import check_array, check_int
from qwixx_env.core.compile import batch_kernel, inline_kernel, inlined, leaf
from qwixx_env.core.state import COLOR, LUCKY, NO_DECISION, NO_SEAT, OUT_OF_PLAY, OVER, WHITE, State, check_state
from qwixx_env.core.variant import RuleTables, Variant

# Functions called from other kernels are inlined into them: a call that is not inlined
# passes the State and RuleTables tuples as ~150 scalar arguments, which cost more than most
# of these functions do. Helpers that call others are compiled once and inlined by LLVM
# (`inlined`); small leaves are inlined by numba itself (`leaf`), which copies their few lines
# into each caller: cheaper, for a leaf, than compiling it on its own. (Numba-inlining the
# helpers that nest, as this module once did, copied whole call trees into every caller and
# made a new user's first game compile for a minute.) The batch kernels (`batch_kernel`)
# allocate nothing.

BONUS, INSTEAD = 1, 2  # RuleTables.lucky_rule

# The lucky-cross rules (Longo) are a large part of what `apply_one` and `legal_mask_one`
# compile to, and a classic game never uses them. A kernel that plays a variant without lucky
# numbers passes those two ``lucky_code=None`` (`lucky_code_switch`): numba removes a branch on
# ``lucky_code is not None`` before typing when the argument is None, so the lucky helpers are
# neither compiled nor inlined (a new user's first classic game compiles that much less).
# By default they are in. Without lucky numbers the result is the same either way: no white
# sum is lucky, so no game reaches the LUCKY phase (whose mask is then left empty).
WITH_LUCKY_CODE = True


def lucky_code_switch(tables: RuleTables) -> bool | None:
    """The ``lucky_code`` compile switch for kernels that play the variant of these
    `RuleTables`: None (compile without the lucky-cross rules) when it has no lucky numbers."""
    return WITH_LUCKY_CODE if tables.lucky_count else None




# --- random numbers ---------------------------------------------------------------------


@leaf
def random_below(rng, b, n):
    """An integer in [0, n) from game b's splitmix64 generator (advances it)."""
    z = rng[b] + np.uint64(0x9E3779B97F4A7C15)
    rng[b] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z % np.uint64(n))


# --- one row of one sheet ----------------------------------------------------------------


@leaf
def rows_of(tb):
    """R, the rows of a sheet, as a constant of the compiled kernel (the length of a tuple)."""
    return len(tb.row_ids)


@leaf
def dice_of(tb):
    """D, the coloured dice, as a constant of the compiled kernel."""
    return len(tb.die_ids)


# Rows have at most 15 cells, so the rightmost cross and the count of a row bitmask are
# read from two 32 KiB tables instead of bit loops (they are on every hot path).
_ROW_VALUES = np.arange(1 << 15)
RIGHTMOST = np.full(1 << 15, -1, np.int8)
COUNT = np.zeros(1 << 15, np.int8)
for _bit in range(15):
    _has = (_ROW_VALUES >> _bit) & 1 == 1
    RIGHTMOST[_has] = _bit
    COUNT += _has.astype(np.int8)


@leaf
def rightmost(row_marks):
    """Index of the rightmost cross of a row bitmask, -1 for an empty row."""
    return np.int64(RIGHTMOST[row_marks])


@leaf
def count(row_marks):
    """Number of crossed cells of a row bitmask (the lock not included)."""
    return np.int64(COUNT[row_marks])


@inline_kernel(python=True)  # also called by the solver's sheet checks
def may_cross(tb, row_marks, cell):
    """Rules 4 and 5: right of every cross, and a lock cell only with enough crosses."""
    if cell <= rightmost(row_marks):
        return False
    return cell < tb.first_lock_cell or count(row_marks) >= tb.lock_threshold


@leaf
def row_locked(st, b, r):
    """Rule 8: a row is locked for everyone once any player has crossed its lock."""
    for s in range(st.locks.shape[1]):
        if st.locks[b, s, r]:
            return True
    return False


@inlined
def locked_row_count(st, tb, b):
    n = 0
    for r in range(rows_of(tb)):
        if row_locked(st, b, r):
            n += 1
    return n


@inlined
def sheet_score(tb, marks, locks, penalties):
    """Rule 10 for one sheet (its rows' marks and locks, its penalties; committed or a
    scratch copy): each row's crosses (lock included) through the score table, minus penalties."""
    total = 0
    for r in range(rows_of(tb)):
        total += tb.score_table[count(marks[r]) + (1 if locks[r] else 0)]
    return total - tb.penalty_points * np.int64(penalties)


@inlined
def score(st, tb, b, s):
    """Rule 10: seat s's score in game b."""
    return sheet_score(tb, st.marks[b, s], st.locks[b, s], st.penalties[b, s])


@inlined
def best_other_score(st, tb, b, s):
    """(the top score among the seats other than s in game b, how many of them have it)."""
    best, at_best = -(1 << 30), 0
    for o in range(st.marks.shape[1]):
        if o != s:
            x = score(st, tb, b, o)
            if x > best:
                best, at_best = x, 1
            elif x == best:
                at_best += 1
    return best, at_best


@leaf
def _cross(st, tb, b, s, action):
    """Cross one cell; a lock cell crosses the lock too (rule 5)."""
    r = action // tb.cells
    c = action % tb.cells
    st.marks[b, s, r] |= np.int32(1 << c)
    if c >= tb.first_lock_cell:
        st.locks[b, s, r] = True


# --- the lucky cross (Longo) -------------------------------------------------------------


@leaf
def white_sum(st, b):
    return np.int64(st.dice[b, 0]) + np.int64(st.dice[b, 1])


@inlined
def is_lucky(st, tb, b, s):
    """Longo rule 5: the white sum equals one of seat s's lucky numbers."""
    total = white_sum(st, b)
    for i in range(tb.lucky_count):
        if st.lucky_numbers[b, s, i] == total:
            return True
    return False


@inlined
def _lucky_next(st, tb, b, s, r, white_action):
    """(action, crosses) for the lucky cross in row r, or (-1, 0) if the row does not qualify.

    The row is read after the player's own white choice `white_action` (pass for none):
    open at the roll, not locked by that choice, and its next cell legally crossable.
    """
    if row_locked(st, b, r):
        return -1, 0
    m = np.int64(st.marks[b, s, r])
    if white_action // tb.cells == r and white_action < rows_of(tb) * tb.cells:
        c = white_action % tb.cells
        if c >= tb.first_lock_cell:
            return -1, 0  # the player's own white cross locks this row
        m |= np.int64(1) << c
    nxt = rightmost(m) + 1
    if nxt >= tb.cells or not may_cross(tb, m, nxt):
        return -1, 0
    return r * tb.cells + nxt, count(m)


@inlined
def lucky_options(st, tb, b, s, white_action):
    """(fewest crosses, how many rows tie for it, one such action) among qualifying rows."""
    fewest = 1 << 30
    ties = 0
    choice = -1
    for r in range(rows_of(tb)):
        action, n = _lucky_next(st, tb, b, s, r, white_action)
        if action < 0:
            continue
        if n < fewest:
            fewest, ties, choice = n, 1, action
        elif n == fewest:
            ties += 1
    return fewest, ties, choice


@inlined
def _mark_lucky_options(st, tb, b, s, white_action, out):
    fewest, ties, _ = lucky_options(st, tb, b, s, white_action)
    if ties == 0:
        return
    for r in range(rows_of(tb)):
        action, n = _lucky_next(st, tb, b, s, r, white_action)
        if action >= 0 and n == fewest:
            out[action] = 1


# --- legal decisions -----------------------------------------------------------------------


@leaf
def color_cell(st, tb, b, p, w):
    """The colour-action options, enumerated once for every rule and policy: pair p of
    `RuleTables.color_pairs` (a row, and a coloured die that crosses cells of it; row by row,
    one pair a row in classic) with white die w (0 or 1). Returns the cell of that row that
    the two dice make together (rule 6: a white die and a coloured die, in a cell of that
    die's colour), or -1 where there is none: the die is out of play, the row has no cell of
    that sum and colour, or white die 1 shows what white die 0 shows (the same option again).
    Whether the seat may cross it (rules 4, 5 and 8) is the caller's to judge, on its sheet::

        for p in range(tb.color_pairs.shape[0]):
            r = tb.color_pairs[p, 0]
            for w in range(2):
                c = color_cell(st, tb, b, p, w)   # then: row r open? may_cross(tb, marks, c)?
    """
    r = tb.color_pairs[p, 0]
    d = tb.color_pairs[p, 1]
    colour = np.int64(st.dice[b, 2 + d])
    if colour == OUT_OF_PLAY or (w == 1 and st.dice[b, 1] == st.dice[b, 0]):
        return -1
    c = tb.cell_of[r, np.int64(st.dice[b, w]) + colour]
    if c >= 0 and tb.cell_die[r, c] != d:
        return -1
    return c


@leaf
def color_option_count(tb):
    """How many colour-action options there are, numbered flat: option o is pair ``o >> 1`` of
    `color_cell` with white die ``o & 1``."""
    return 2 * tb.color_pairs.shape[0]


@inlined
def legal_mask_one(st, tb, b, out, lucky_code=WITH_LUCKY_CODE):
    """Write the legal actions of the seat to decide in game b into `out` (0/1).

    ``lucky_code=None`` compiles it without the lucky-cross rules (see `lucky_code_switch`)."""
    for a in range(out.shape[0]):
        out[a] = 0
    K = tb.cells
    R = rows_of(tb)
    s = st.turn[b]
    phase = st.phase[b]
    if phase == WHITE:
        # Judged against the sheets and locks as they stood at the roll (rule 6).
        total = white_sum(st, b)
        for r in range(rows_of(tb)):
            if not row_locked(st, b, r):
                c = tb.cell_of[r, total]
                if may_cross(tb, np.int64(st.marks[b, s, r]), c):
                    out[r * K + c] = 1
        if lucky_code is not None:
            if tb.lucky_rule == INSTEAD and is_lucky(st, tb, b, s):
                _mark_lucky_options(st, tb, b, s, R * K, out)
        out[R * K] = 1
    elif phase == LUCKY:
        if lucky_code is not None:
            _mark_lucky_options(st, tb, b, s, np.int64(st.pending[b, s]), out)  # pass is not an option
    elif phase == COLOR and tb.own_dice:
        # The same options as the loop below, for a sheet whose row r is crossed with die r
        # alone (classic, Longo): read without the pairs' indirection, as the batched
        # engine's speed needs (the general loop made its step about 8% slower).
        for r in range(rows_of(tb)):
            if row_locked(st, b, r):
                continue  # its die is out of play
            m = np.int64(st.marks[b, s, r])
            for w in range(2):
                c = tb.cell_of[r, np.int64(st.dice[b, w]) + np.int64(st.dice[b, 2 + r])]
                if may_cross(tb, m, c):
                    out[r * K + c] = 1
        out[R * K] = 1
    elif phase == COLOR:
        for p in range(tb.color_pairs.shape[0]):
            r = tb.color_pairs[p, 0]
            if row_locked(st, b, r):
                continue  # closed: its cells too, whatever their dice (rule 8)
            m = np.int64(st.marks[b, s, r])
            for w in range(2):
                c = color_cell(st, tb, b, p, w)
                if may_cross(tb, m, c):  # never for c = -1
                    out[r * K + c] = 1
        out[R * K] = 1


# --- the flow of a roll --------------------------------------------------------------------


@leaf
def active_crossed(st, tb, b):
    """After the white action: did the active player cross anything in it (lucky included)?"""
    a = st.active[b]
    p = st.pending[b, a]
    return (p >= 0 and p < rows_of(tb) * tb.cells) or st.pending_lucky[b, a] >= 0


@leaf
def ends_game(st, tb, b, s, penalties, n_locked):
    """Rule 9 for game b with seat s's penalties and the count of locked rows replaced by
    `penalties` and `n_locked` (a scratch position): two rows locked, or a fourth penalty."""
    if n_locked >= tb.rows_to_end or penalties >= tb.max_penalties:
        return True
    for o in range(st.penalties.shape[1]):
        if o != s and st.penalties[b, o] >= tb.max_penalties:
            return True
    return False


@inlined
def _game_ends(st, tb, b):
    """Rule 9: two rows locked (counting all of them), or a fourth penalty."""
    return ends_game(st, tb, b, 0, st.penalties[b, 0], locked_row_count(st, tb, b))


@leaf
def share_of_win(own, best_other, others_at_best):
    """A seat's share of the win at the end: 1 above every other score, 1/k in a tie for the
    top between k seats (itself and `others_at_best` others), else 0."""
    if own > best_other:
        return 1.0
    if own == best_other:
        return 1.0 / (1 + others_at_best)
    return 0.0


@leaf
def lock_dice(tb, r):
    """Rule 8: the coloured dice (a bitmask) that leave play when row r locks, those of its
    lock cells (in classic, the row's own die)."""
    return (tb.lock_dice >> (8 * r)) & 255


@inline_kernel(python=True)  # also called by the snapshot's checks
def dice_out_of_play(st, tb, b):
    """Rule 8 in game b, as a bitmask of coloured dice: the dice of every locked row's lock
    cells have left play (in classic, a locked row's own die)."""
    gone = 0
    for r in range(rows_of(tb)):
        if row_locked(st, b, r):
            gone |= lock_dice(tb, r)
    return gone


@inlined
def _start_roll(st, tb, b):
    """Rule 6: the active player rolls every die still in play; the white action begins."""
    for w in range(2):
        st.dice[b, w] = 1 + random_below(st.rng, b, tb.faces)
    gone = dice_out_of_play(st, tb, b)
    for d in range(dice_of(tb)):
        if gone >> d & 1:
            st.dice[b, 2 + d] = OUT_OF_PLAY
        else:
            st.dice[b, 2 + d] = 1 + random_below(st.rng, b, tb.faces)
    for s in range(st.pending.shape[1]):
        st.pending[b, s] = NO_DECISION
        st.pending_lucky[b, s] = NO_DECISION
    st.phase[b] = WHITE
    st.turn[b] = st.active[b]


@inlined
def _resolve_white(st, tb, b):
    """Rule 6: every white choice takes effect together; then the colour action, or the end."""
    K = tb.cells
    for s in range(st.marks.shape[1]):
        if 0 <= st.pending[b, s] < rows_of(tb) * K:
            _cross(st, tb, b, s, np.int64(st.pending[b, s]))
        if st.pending_lucky[b, s] >= 0:
            _cross(st, tb, b, s, np.int64(st.pending_lucky[b, s]))
    gone = dice_out_of_play(st, tb, b)
    for d in range(dice_of(tb)):
        if gone >> d & 1:
            st.dice[b, 2 + d] = OUT_OF_PLAY  # rule 8: the die leaves play at once
    st.turn[b] = st.active[b]
    st.phase[b] = OVER if _game_ends(st, tb, b) else COLOR


@inlined
def _next_white_seat(st, tb, b):
    nxt = (st.turn[b] + 1) % st.marks.shape[1]
    if nxt == st.active[b]:
        _resolve_white(st, tb, b)
    else:
        st.turn[b] = nxt


@inlined
def apply_one(st, tb, b, action, lucky_code=WITH_LUCKY_CODE):
    """Apply the decision of the seat to decide in game b. The action must be legal.

    ``lucky_code=None`` compiles it without the lucky-cross rules (see `lucky_code_switch`)."""
    s = st.turn[b]
    phase = st.phase[b]
    if phase == WHITE:
        st.pending[b, s] = action
        if lucky_code is not None:
            if tb.lucky_rule == BONUS and is_lucky(st, tb, b, s):
                _, ties, choice = lucky_options(st, tb, b, s, action)
                if ties == 1:
                    st.pending_lucky[b, s] = choice
                elif ties > 1:
                    st.phase[b] = LUCKY  # the same seat breaks the tie next
                    return
        _next_white_seat(st, tb, b)
    elif phase == LUCKY:
        st.pending_lucky[b, s] = action
        st.phase[b] = WHITE
        _next_white_seat(st, tb, b)
    elif phase == COLOR:
        crossed = active_crossed(st, tb, b)
        if action < rows_of(tb) * tb.cells:
            _cross(st, tb, b, s, action)
            crossed = True
        if not crossed:
            st.penalties[b, s] += 1  # rule 7
        if _game_ends(st, tb, b):
            st.phase[b] = OVER
        else:
            st.active[b] = (st.active[b] + 1) % st.marks.shape[1]  # rule 11
            st.roll[b] += 1
            _start_roll(st, tb, b)


@inlined
def reset_one(st, tb, b, start_player, lucky_numbers):
    """Start game b: empty sheets, lucky numbers, first active player, first roll.

    `start_player` < 0 draws the first active player; a row of `lucky_numbers` (P, 2)
    whose first entry is 0 draws that seat's two different lucky numbers.
    """
    P = st.marks.shape[1]
    for s in range(P):
        st.penalties[b, s] = 0
        st.lucky_numbers[b, s, 0] = 0
        st.lucky_numbers[b, s, 1] = 0
        for r in range(rows_of(tb)):
            st.marks[b, s, r] = 0
            st.locks[b, s, r] = False
    st.roll[b] = 0
    st.illegal_end[b] = NO_SEAT
    lowest = 2
    choices = 2 * tb.faces - 1
    for s in range(P):
        if tb.lucky_count == 0:
            continue
        if lucky_numbers[s, 0] > 0:
            st.lucky_numbers[b, s, 0] = lucky_numbers[s, 0]
            st.lucky_numbers[b, s, 1] = lucky_numbers[s, 1]
        else:
            first = random_below(st.rng, b, choices)
            second = random_below(st.rng, b, choices - 1)
            if second >= first:
                second += 1  # two different numbers, one draw each
            st.lucky_numbers[b, s, 0] = lowest + first
            st.lucky_numbers[b, s, 1] = lowest + second
    st.active[b] = random_below(st.rng, b, P) if start_player < 0 else start_player
    _start_roll(st, tb, b)


# --- batch kernels -------------------------------------------------------------------------


@batch_kernel
def reset_batch(st, tb, games, start_player, lucky_numbers):
    for b in games:
        reset_one(st, tb, b, start_player, lucky_numbers)


@batch_kernel
def apply_batch(st, tb, actions):
    for b in range(st.phase.shape[0]):
        if st.phase[b] != OVER:
            apply_one(st, tb, b, actions[b])


@batch_kernel
def mask_batch(st, tb, out):
    for b in range(st.phase.shape[0]):
        legal_mask_one(st, tb, b, out[b])


@batch_kernel
def scores_batch(st, tb, out):
    for b in range(st.phase.shape[0]):
        for s in range(st.marks.shape[1]):
            out[b, s] = score(st, tb, b, s)


# --- the public functions ------------------------------------------------------------------


def reset(
    variant: Variant,
    state: State,
    *,
    start_player: int = 0,
    lucky_numbers: np.ndarray | None = None,
    games: np.ndarray | None = None,
) -> None:
    """Start new games in place from each game's current generator state (`state.rng`).

    `start_player` is a seat, or -1 for a seeded random first active player.
    `lucky_numbers` is an optional (P, 2) array of fixed lucky numbers (Longo).
    `games` restricts the reset to those batch indices (default: all).
    """
    check_state(variant, state)
    B, P = state.batch_size, state.num_players
    start_player = check_int("start_player", start_player, minimum=-1, maximum=P - 1,
                             accepted=f"a seat from 0 to {P - 1}, or -1 to draw one")
    fixed = np.zeros((P, 2), np.int64) if lucky_numbers is None else np.asarray(lucky_numbers, np.int64)
    top = 2 * variant.faces
    if fixed.shape != (P, 2) or not np.all((fixed == 0) | ((fixed >= 2) & (fixed <= top))):
        raise ValueError(f"lucky_numbers: got {lucky_numbers!r}; expected a ({P}, 2) array of numbers from 2 "
                         f"to {top} (0 to draw a seat's)")
    idx = np.arange(B) if games is None else np.asarray(games, np.int64).reshape(-1)
    if idx.size and not (0 <= idx.min() and idx.max() < B):
        raise ValueError(f"games: got indices from {idx.min()} to {idx.max()}; expected 0 to {B - 1}")
    reset_batch(state, variant.tables, idx, start_player, fixed)


def legal_mask(variant: Variant, state: State, out: np.ndarray | None = None) -> np.ndarray:
    """(B, R*K+1) int8: the legal actions of the seat to decide in each game (zeros when over)."""
    check_state(variant, state)
    shape = (state.batch_size, variant.num_actions)
    if out is None:
        out = np.empty(shape, np.int8)
    check_array("out", out, shape, np.int8)
    mask_batch(state, variant.tables, out)
    return out


def apply(variant: Variant, state: State, actions: np.ndarray) -> None:
    """Apply one decision per game (ignored for games that are over). Actions must be legal:
    check them against `legal_mask` first; the adapters do (here only their range is checked)."""
    check_state(variant, state)
    a = np.asarray(actions)
    if a.size != state.batch_size or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"actions: got {a.size} of {a.dtype}; expected {state.batch_size} integers, one a game")
    a = a.astype(np.int64).reshape(state.batch_size)
    if a.size and not (0 <= a.min() and a.max() <= variant.pass_action):
        raise ValueError(f"actions: got actions from {a.min()} to {a.max()}; expected 0 to "
                         f"{variant.pass_action} ({variant.pass_action} is pass)")
    apply_batch(state, variant.tables, a)


def scores(variant: Variant, state: State, out: np.ndarray | None = None) -> np.ndarray:
    """(B, P) int64: every player's current score (committed crosses only)."""
    check_state(variant, state)
    shape = (state.batch_size, state.num_players)
    if out is None:
        out = np.empty(shape, np.int64)
    check_array("out", out, shape, np.int64)
    scores_batch(state, variant.tables, out)
    return out


def is_over(state: State) -> np.ndarray:
    """(B,) bool: which games have ended."""
    return state.phase == OVER
