"""The optimal solo policy: the best decision in one position, read off the value table.

Each function takes the sheet as row codes (`states`), the penalty count, the six dice
(0 for a die out of play) and the action mask of the decision, and returns the action (the
environment's numbering: ``row * K + cell``, ``4 * K`` for pass) whose value under the table
is highest. Only actions the mask allows are chosen; on equal values the earlier action
(pass first) wins, so the policy is deterministic.

* `white_action_active`: the active player's white action. It sees all six dice, so each
  white option is valued with the best colour action that would follow it; this is the joint
  maximum the solver takes.
* `white_action_other`: a white action on another player's roll (multi-player): no colour
  action and no penalty follow, so each option is worth its points plus the sheet after it.
* `color_action`: the colour action after the own white action is committed; passing costs a
  penalty unless the white action crossed something.
"""

from __future__ import annotations

import numpy as np

from qwixx_env.core.compile import kernel
from qwixx_env.solver.states import combo_index, cross

NEG = -1.0e300


@kernel()
def _worth(V, sp, tb, rows, pen):
    """Expected further points of a sheet before a roll (0 once the game is over)."""
    locked = 0
    for r in range(4):
        if rows[r] == sp.locked:
            locked += 1
    if locked >= tb.rows_to_end or pen >= tb.max_penalties:
        return 0.0
    return float(V[combo_index(rows[0], rows[1], rows[2], rows[3]), pen])


@kernel()
def _best_color(V, sp, tb, rows, pen, dice, crossed, mask):
    """(value, action) of the best colour action on `rows`; `mask` restricts it if given."""
    K = tb.cells
    pass_action = 4 * K
    if crossed:
        best = _worth(V, sp, tb, rows, pen)
    else:
        best = -tb.penalty_points + _worth(V, sp, tb, rows, pen + 1)
    action = pass_action
    after = rows.copy()
    for r in range(4):
        d = dice[2 + r]
        if d == 0 or rows[r] == sp.locked:
            continue  # the row's die is out of play
        for w in range(2):
            c = tb.cell_of[r, dice[w] + d]
            if mask.shape[0] and not mask[r * K + c]:
                continue
            code, gain = cross(sp, tb, rows[r], c)
            if code < 0:
                continue
            after[r] = code
            v = gain + _worth(V, sp, tb, after, pen)
            after[r] = rows[r]
            if v > best:
                best = v
                action = r * K + c
    return best, action


@kernel()
def white_action_active(V, sp, tb, rows, pen, dice, mask):
    """The active player's best white action, valued jointly with the colour action after it."""
    K = tb.cells
    no_mask = np.zeros(0, np.int8)
    best, _ = _best_color(V, sp, tb, rows, pen, dice, False, no_mask)
    action = 4 * K
    after = rows.copy()
    for a in range(4 * K):
        if not mask[a]:
            continue
        r = a // K
        code, gain = cross(sp, tb, rows[r], a % K)
        if code < 0:
            continue
        after[r] = code
        locked = 0
        for q in range(4):
            if after[q] == sp.locked:
                locked += 1
        if locked >= tb.rows_to_end:
            v = gain  # the white action ends the game: no colour action
        else:
            v = gain + _best_color(V, sp, tb, after, pen, dice, True, no_mask)[0]
        after[r] = rows[r]
        if v > best:
            best = v
            action = a
    return action


@kernel()
def white_action_other(V, sp, tb, rows, pen, dice, mask):
    """The best white action on another player's roll: points plus the sheet's worth after it."""
    K = tb.cells
    best = _worth(V, sp, tb, rows, pen)
    action = 4 * K
    after = rows.copy()
    for a in range(4 * K):
        if not mask[a]:
            continue
        r = a // K
        code, gain = cross(sp, tb, rows[r], a % K)
        if code < 0:
            continue
        after[r] = code
        v = gain + _worth(V, sp, tb, after, pen)
        after[r] = rows[r]
        if v > best:
            best = v
            action = a
    return action


@kernel()
def color_action(V, sp, tb, rows, pen, dice, crossed, mask):
    """The best colour action (or pass) on the committed sheet; `crossed`: the white action crossed."""
    return _best_color(V, sp, tb, rows, pen, dice, crossed, mask)[1]
