"""The `heuristic` policy: a hand-written evaluation of sheets, compiled over the core `State`.

Every legal action is judged by the value of the position it leads to, seen from the seat to
decide. A sheet is worth what its rows are expected to score by the end of the game:

* a row with n crosses and open numbers right of its rightmost cross is expected to end with
  ``n + fill * clock * (open numbers, weighted by how often two dice roll them)`` crosses,
  plus up to `lock_hope` * clock more as that nears the lock threshold (the lock cell and
  the lock); the row's expected points are the variant's score table read at that
  (fractional) number of crosses. So a cross is worth its points now against the numbers it
  skips, and the convex table rewards progress towards a lock;
* the `clock` (1 at the start, towards 0 near the end) shortens the expected rest of the game
  for every locked row, every penalty on the worst penalty track and every opponent row that
  could lock soon, so skipping gets cheaper as the game draws to its end;
* each penalty costs its points plus a rising risk term;
* with opponents, the value is one's own sheet minus `opponent_weight` times the best
  opponent's (locking a row takes its future from them too); a position that ends the game
  is scored exactly, with `win_bonus` for winning (minus for losing): the race to end the
  game when ahead, and to keep it going when behind.

As the active player in the white action the bot sees every die, so it judges each white
option together with the best colour option that may follow it on the same roll (and the
penalty if both pass). On another player's roll a cross must beat passing by
`passive_margin`. Lucky crosses (Longo) are played out on the scratch sheet as the rules say.

The weights are a float64 array in the order of `WEIGHT_NAMES`; `qwixx_env.bots.heuristic`
holds the tuned defaults and documents each. Nothing here allocates: the scratch sheet lives
in the caller's `policies.scratch.Scratch` (`ws`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from qwixx_env.core.checks import check_number
from qwixx_env.core.compile import batch_kernel, inlined, internal
from qwixx_env.core.observation import decode_one
from qwixx_env.core.rules import (
    BONUS,
    active_crossed,
    best_other_score,
    color_cell,
    color_option_count,
    count,
    ends_game,
    is_lucky,
    legal_mask_one,
    lock_dice,
    may_cross,
    rightmost,
    row_locked,
    rows_of,
    sheet_score,
)
from qwixx_env.core.state import COLOR, LUCKY, WHITE

WEIGHT_NAMES = (
    "fill",
    "frequency",
    "lock_hope",
    "clock_locked",
    "clock_penalty",
    "clock_threat",
    "penalty_risk",
    "opponent_weight",
    "win_bonus",
    "passive_margin",
    "fill_multiplayer",
)
(FILL, FREQUENCY, LOCK_HOPE, CLOCK_LOCKED, CLOCK_PENALTY, CLOCK_THREAT, PENALTY_RISK,
 OPPONENT_WEIGHT, WIN_BONUS, PASSIVE_MARGIN, FILL_MULTIPLAYER) = range(len(WEIGHT_NAMES))

_WORST = -1e18


class ScratchSheet(NamedTuple):
    """The sheet a look-ahead crosses on and evaluates: views of the arrays of the same names in
    the caller's `policies.scratch.Scratch` (`scratch_sheet`, `sheet_of`)."""

    # Only these travel through the look-ahead's calls, not the whole Scratch: a call numba
    # does not inline passes every array of a tuple argument field by field, and passing the
    # Scratch (ten arrays) made the heuristic opponents of the vector env 10-20% slower.

    marks: np.ndarray
    locks: np.ndarray
    closed: np.ndarray
    at_roll: np.ndarray
    open_weights: np.ndarray


@inlined
def sheet_of(ws):
    """The `ScratchSheet` of a `policies.scratch.Scratch`."""
    return ScratchSheet(ws.marks, ws.locks, ws.closed, ws.at_roll, ws.open_weights)


# Tuned by `benchmarks/tune_heuristic.py tune`: a seeded coordinate search on solo classic mean
# score + 50 x the 2-player classic win rate against greedy (common random numbers). Run 1
# (``--games 6000 --rounds 6 --seed 1``) from hand-set values; `fill` and `fill_multiplayer`
# then moved together by hand (the search moves one weight at a time); run 2
# (``--games 8000 --rounds 4 --seed 2 --step 0.15``) refined that. What these weights score,
# at every player count and in both variants: docs/baselines.md, "The heuristic against greedy".
DEFAULT_WEIGHTS: dict[str, float] = {
    # fraction of a row's open numbers (frequency-weighted) it is expected to still cross
    "fill": 1.0,
    # 0: every open number counts 1; 1: a number counts by its chance on two dice (7 most)
    "frequency": 0.845,
    # extra expected crosses (lock cell + lock) once a row is expected to reach its threshold
    "lock_hope": 0.255,
    # how much each locked row shortens the expected rest of the game
    "clock_locked": 0.25,
    # how much each penalty on the worst penalty track shortens it
    "clock_penalty": 0.036,
    # how much each opponent row at (or one short of) the lock threshold shortens it
    "clock_threat": 0.1867,
    # extra cost of the k-th penalty beyond its points: risk * (2k - 1)
    "penalty_risk": 0.1561,
    # weight of the best opponent's expected score against one's own (unused in solo)
    "opponent_weight": 0.5525,
    # points for ending the game ahead (minus for ending it behind)
    "win_bonus": 19.435,
    # value a cross must add to be taken on another player's roll (below 0: crosses are
    # taken there even at a small loss in value)
    "passive_margin": -0.3114,
    # with opponents, fill is divided by 1 + fill_multiplayer (fewer own rolls, shorter games;
    # one factor for 2 to 5 players: measured best for each of them)
    "fill_multiplayer": 0.3306,
}
assert tuple(DEFAULT_WEIGHTS) == WEIGHT_NAMES


def weights_array(weights: Mapping[str, float] | None = None) -> np.ndarray:
    """The defaults with `weights` overriding some by name, as the kernel's float64 array.

    Raises `ValueError` for an unknown name or a value that is not a finite number.
    """
    merged = dict(DEFAULT_WEIGHTS)
    if weights is not None and not isinstance(weights, Mapping):
        raise ValueError(f"weights: got {weights!r}; expected a mapping of weight names to numbers, e.g. "
                         f"{{{WEIGHT_NAMES[0]!r}: 1.0}}, names from {list(WEIGHT_NAMES)}")
    for name, value in (weights or {}).items():
        if name not in merged:
            raise ValueError(f"weights: got unknown name {name!r}; expected some of {list(WEIGHT_NAMES)}")
        merged[name] = check_number(f"weights[{name!r}]", value, accepted="a finite number")
    return np.array([merged[n] for n in WEIGHT_NAMES], np.float64)



@internal
def _table_at(table, x):
    """The score table read at a fractional number of crosses (linear between entries)."""
    top = table.shape[0] - 1
    if x <= 0.0:
        return float(table[0])
    if x >= top:
        return float(table[top])
    i = int(x)
    return table[i] + (x - i) * (table[i + 1] - table[i])


@batch_kernel
def _open_weights(tb, frequency, out):
    """out[r, c]: frequency-weighted count of the open numbers at cells c.. of row r, lock
    cells excluded. A number's weight mixes 1 with its chance on two dice relative to the
    most likely sum: (1 - frequency) + frequency * ways / faces."""
    K = tb.cells
    F = tb.faces
    for r in range(rows_of(tb)):
        out[r, K] = 0.0
        for c in range(K - 1, -1, -1):
            w = 0.0
            if c < tb.first_lock_cell:
                number = tb.number_of[r, c]
                ways = F - abs(number - (F + 1))
                w = (1.0 - frequency) + frequency * ways / F
            out[r, c] = out[r, c + 1] + w


@internal
def _row_value(tb, open_w, r, marks, lock, closed, phi, hope):
    """Expected points of one row (see the module docstring)."""
    n = count(marks) + (1 if lock else 0)
    if closed:
        return float(tb.score_table[n])
    expected = n + phi * open_w[r, rightmost(marks) + 1]
    short = expected - (tb.lock_threshold - 1)
    if short > 0.0:
        expected += hope * min(short, 1.0)
    return _table_at(tb.score_table, expected)


@internal
def _sheet_value(tb, sheet, mk, lk, pen, phi, hope, risk):
    """Expected points of a sheet (mk, lk, pen) with the locked rows and open-number weights
    of the scratch `sheet`."""
    total = 0.0
    for r in range(rows_of(tb)):
        total += _row_value(tb, sheet.open_weights, r, mk[r], lk[r], sheet.closed[r], phi, hope)
    return total - tb.penalty_points * pen - risk * pen * pen


@internal
def evaluate_sheet(st, tb, b, s, sheet, pen, w):
    """Value for seat s of the position where s's sheet is the `ScratchSheet` `sheet` (its
    marks and locks) with `pen` penalties, the others' sheets are as committed, and
    ``sheet.closed`` marks the locked rows."""
    mk, lk, closed = sheet.marks, sheet.locks, sheet.closed
    P = st.marks.shape[1]
    n_closed = 0
    for r in range(rows_of(tb)):
        if closed[r]:
            n_closed += 1
    worst_pen = pen
    for j in range(P):
        if j != s and st.penalties[b, j] > worst_pen:
            worst_pen = st.penalties[b, j]
    if ends_game(st, tb, b, s, pen, n_closed):
        mine = sheet_score(tb, mk, lk, pen)
        if P == 1:
            return float(mine)
        best = best_other_score(st, tb, b, s)[0]
        sign = 1.0 if mine > best else (0.0 if mine == best else -1.0)
        return mine - w[OPPONENT_WEIGHT] * best + w[WIN_BONUS] * sign
    threat = 0.0
    for j in range(P):
        if j == s:
            continue
        for r in range(rows_of(tb)):
            if not closed[r]:
                n = count(st.marks[b, j, r])
                if n >= tb.lock_threshold:
                    threat += 1.0
                elif n == tb.lock_threshold - 1:
                    threat += 0.5
    clock = 1.0 / (1.0 + w[CLOCK_LOCKED] * n_closed + w[CLOCK_PENALTY] * worst_pen + w[CLOCK_THREAT] * threat)
    phi = w[FILL] * clock / (1.0 + w[FILL_MULTIPLAYER] * (P > 1))
    hope = w[LOCK_HOPE] * clock
    risk = w[PENALTY_RISK]
    mine = _sheet_value(tb, sheet, mk, lk, pen, phi, hope, risk)
    if P == 1:
        return mine
    best = _WORST
    for j in range(P):
        if j != s:
            other = _sheet_value(tb, sheet, st.marks[b, j], st.locks[b, j], st.penalties[b, j], phi, hope, risk)
            best = max(best, other)
    return mine - w[OPPONENT_WEIGHT] * best


@internal
def scratch_sheet(st, tb, b, s, weights, ws):
    """Seat s's sheet in game b copied into the scratch `ws` (marks, locks, locked rows) with
    the open numbers' weights: what a look-ahead crosses on and evaluates, returned as a
    `ScratchSheet` (``at_roll`` as the caller left it)."""
    for r in range(rows_of(tb)):
        ws.marks[r] = st.marks[b, s, r]
        ws.locks[r] = st.locks[b, s, r]
        ws.closed[r] = row_locked(st, b, r)
    if weights.shape[0] > 0:  # empty (`value.NO_HEURISTIC`): no heuristic evaluation follows
        _open_weights(tb, weights[FREQUENCY], ws.open_weights)
    return sheet_of(ws)


@batch_kernel
def position_value(st, tb, b, s, weights, ws):
    """The evaluation, for seat s, of game b's committed sheets (between decisions: what the
    `rollout` bot reads at the end of a truncated playout). A finished game is scored
    exactly (with the win bonus when there are opponents). `ws`: a `policies.scratch.Scratch`."""
    sheet = scratch_sheet(st, tb, b, s, weights, ws)
    return evaluate_sheet(st, tb, b, s, sheet, np.int64(st.penalties[b, s]), weights)


@internal
def cross_scratch(tb, sheet, action):
    """Cross `action` on the scratch `sheet`; returns the row's old marks (to undo)."""
    r = action // tb.cells
    c = action % tb.cells
    old = sheet.marks[r]
    sheet.marks[r] = old | (1 << c)
    if c >= tb.first_lock_cell:
        sheet.locks[r] = True
        sheet.closed[r] = True
    return old


@internal
def undo_scratch(tb, sheet, action, old):
    """Undo `cross_scratch` (a legal cross lies in a row that was open, its lock uncrossed)."""
    r = action // tb.cells
    sheet.marks[r] = old
    sheet.locks[r] = False
    sheet.closed[r] = False


@inlined
def dice_gone(tb, closed):
    """Rule 8 on a scratch sheet: the coloured dice (a bitmask) of the lock cells of the rows
    `closed` marks, out of play for the colour action that follows (in classic, the locked
    rows' own dice)."""
    gone = 0
    for r in range(rows_of(tb)):
        if closed[r]:
            gone |= lock_dice(tb, r)
    return gone


@inlined
def scratch_color_option(st, tb, b, sheet, o, gone):
    """Colour option o (`rules.color_option_count`: pair ``o >> 1`` of `rules.color_cell`,
    white die ``o & 1``) as the seat may cross it on the scratch `sheet`:
    its action, or -1 where there is none, its row is closed, its die is in `gone`
    (`dice_gone` of the sheet) or the cross is not allowed (rules 4 and 5)."""
    c = color_cell(st, tb, b, o >> 1, o & 1)
    if c < 0:
        return -1
    r = tb.color_pairs[o >> 1, 0]
    if sheet.closed[r] or (gone >> tb.cell_die[r, c]) & 1 or not may_cross(tb, sheet.marks[r], c):
        return -1
    return r * tb.cells + c


@internal
def _best_color(st, tb, b, s, sheet, pen, crossed, w):
    """Best value over the colour options (pass included) on the scratch sheet."""
    best = evaluate_sheet(st, tb, b, s, sheet, pen if crossed else pen + 1, w)
    gone = dice_gone(tb, sheet.closed)
    for o in range(color_option_count(tb)):
        a = scratch_color_option(st, tb, b, sheet, o, gone)
        if a >= 0:
            old = cross_scratch(tb, sheet, a)
            v = evaluate_sheet(st, tb, b, s, sheet, pen, w)
            undo_scratch(tb, sheet, a, old)
            if v > best:
                best = v
    return best


@internal
def _after_white(st, tb, b, s, sheet, pen, crossed, w):
    """Value once seat s's white choices are on the scratch sheet: the game may end there,
    else, for the active player, its colour action follows."""
    n_closed = 0
    for r in range(rows_of(tb)):
        if sheet.closed[r]:
            n_closed += 1
    if st.active[b] == s and n_closed < tb.rows_to_end:
        return _best_color(st, tb, b, s, sheet, pen, crossed, w)
    return evaluate_sheet(st, tb, b, s, sheet, pen, w)


@internal
def _with_lucky(st, tb, b, s, sheet, pen, crossed, w):
    """Longo, lucky="bonus": the lucky cross that follows the white choice on the scratch
    sheet (a tie goes to the best row), then `_after_white`."""
    K = tb.cells
    mk, closed, at_roll = sheet.marks, sheet.closed, sheet.at_roll
    fewest = 1 << 30
    for r in range(rows_of(tb)):
        if at_roll[r] or closed[r]:
            continue
        nxt = rightmost(mk[r]) + 1
        if nxt < K and may_cross(tb, mk[r], nxt):
            fewest = min(fewest, count(mk[r]))
    if fewest == 1 << 30:
        return _after_white(st, tb, b, s, sheet, pen, crossed, w)
    best = _WORST
    for r in range(rows_of(tb)):
        if at_roll[r] or closed[r]:
            continue
        nxt = rightmost(mk[r]) + 1
        if nxt < K and may_cross(tb, mk[r], nxt) and count(mk[r]) == fewest:
            a = r * K + nxt
            old = cross_scratch(tb, sheet, a)
            # np.bool_(True), not True: numba types a literal True apart from a bool, and
            # _after_white and _best_color would compile twice
            v = _after_white(st, tb, b, s, sheet, pen, np.bool_(True), w)
            undo_scratch(tb, sheet, a, old)
            best = max(best, v)
    return best


@inlined
def _prepare_decision(st, tb, b, weights, ws):
    """The scratch sheet of the seat to decide in game b, as every option of its decision is
    judged against: its committed sheet (in the lucky phase with its white choice crossed),
    the rows locked at the roll in `ws.at_roll`."""
    s = st.turn[b]
    sheet = scratch_sheet(st, tb, b, s, weights, ws)
    for r in range(rows_of(tb)):
        sheet.at_roll[r] = sheet.closed[r]
    if st.phase[b] == LUCKY and 0 <= st.pending[b, s] < rows_of(tb) * tb.cells:
        cross_scratch(tb, sheet, np.int64(st.pending[b, s]))  # an int64, as every other call: compiled once


@inlined
def _option_value(st, tb, b, a, weights, ws):
    """The heuristic's value of legal action `a` for the seat to decide in game b, on the
    scratch sheet `_prepare_decision` made (left as it was found)."""
    K = tb.cells
    s = st.turn[b]
    phase = st.phase[b]
    active = st.active[b] == s
    sheet = sheet_of(ws)
    pen = np.int64(st.penalties[b, s])
    crossing = a < rows_of(tb) * K
    old = cross_scratch(tb, sheet, a) if crossing else 0
    if phase == WHITE:
        if tb.lucky_rule == BONUS and is_lucky(st, tb, b, s):
            v = _with_lucky(st, tb, b, s, sheet, pen, crossing, weights)
        else:
            v = _after_white(st, tb, b, s, sheet, pen, crossing, weights)
        if not crossing and not active and st.marks.shape[1] > 1:
            v += weights[PASSIVE_MARGIN]
    elif phase == LUCKY:
        v = _after_white(st, tb, b, s, sheet, pen, np.bool_(True), weights)  # np.bool_: see _with_lucky
    else:
        penalty = 0 if (crossing or active_crossed(st, tb, b)) else 1  # the colour action: the white cross counts
        v = evaluate_sheet(st, tb, b, s, sheet, pen + penalty, weights)
    if crossing:
        undo_scratch(tb, sheet, a, old)
    return v


@batch_kernel
def heuristic_action(st, tb, b, mask, weights, ws):
    """The `heuristic` action of the seat to decide in game b, among the legal actions `mask`:
    the first with the highest `heuristic_values`.

    `weights` is a float64 array in `WEIGHT_NAMES` order, `ws` a `policies.scratch.Scratch` of
    the table. Reads only public information.
    """
    _prepare_decision(st, tb, b, weights, ws)
    best, best_value = rows_of(tb) * tb.cells, _WORST
    for a in range(rows_of(tb) * tb.cells + 1):
        if mask[a]:
            v = _option_value(st, tb, b, a, weights, ws)
            if v > best_value:
                best, best_value = a, v
    return best


@batch_kernel
def heuristic_values(st, tb, b, mask, weights, ws, values):
    """values[a]: the heuristic's value of each legal action a (see the module docstring) for
    the seat to decide in game b; -inf where `mask` refuses a. The value is the evaluation of
    the position the action leads to, in the heuristic's points (a finished game: the exact
    score, with the win bonus against opponents); `heuristic_action` plays the highest."""
    _prepare_decision(st, tb, b, weights, ws)
    for a in range(rows_of(tb) * tb.cells + 1):
        values[a] = _option_value(st, tb, b, a, weights, ws) if mask[a] else -np.inf


@batch_kernel
def values_of_observations(obs, tb, off, st, weights, out, ws):
    """out[i, a]: the heuristic's value of action a (`heuristic_values`) for the seat observing
    obs[i], rebuilt from the observation into the one-game scratch state `st`; -inf where a is
    illegal or nobody is to decide. `ws` is a `policies.scratch.Scratch` of the table."""
    mask, values = ws.mask, ws.values
    for i in range(obs.shape[0]):
        for a in range(out.shape[1]):
            out[i, a] = -np.inf
        decode_one(obs[i], tb, off, st)
        if st.phase[0] > COLOR:
            continue
        legal_mask_one(st, tb, 0, mask)
        heuristic_values(st, tb, 0, mask, weights, ws, values)
        for a in range(out.shape[1]):
            out[i, a] = values[a]
