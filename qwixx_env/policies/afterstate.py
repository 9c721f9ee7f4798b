"""Afterstate values: how the learned win chance rates the position each legal action leads to.

Classic, any table of 2 or more players (one network per table size). For the seat to decide,
every legal action is crossed on a scratch copy of its sheet (as the `heuristic` does) and the
position is rated by a win-chance network over `policies.value.value_features`, read at the
moment the roll is over: a white action of the active player is rated with the best colour
action that may follow on the same dice (or the penalty when both pass); a position that ends
the game is rated exactly (1 win, 0 loss, a tie its share of the win). Where the heuristic
adds up hand-set points, this asks a network trained on who went on to win.

Two uses: the `afterstate` bot plays the best-rated action (`afterstate_action`), and
learned policies may read the ratings as extra inputs (`afterstate_inputs`, a batch of
observations in, one rating per action out), computed from the observation alone.
"""

from __future__ import annotations

import numpy as np

from qwixx_env.core import rules
from qwixx_env.core.compile import batch_kernel
from qwixx_env.core.observation import decode_one
from qwixx_env.core.state import COLOR, WHITE
from qwixx_env.policies.heuristic import cross_scratch, dice_gone, scratch_color_option, scratch_sheet, undo_scratch
from qwixx_env.policies.value import scratch_features, win_chance


@batch_kernel
def _value(st, tb, b, sheet, pen, hw, net, work):
    """Win chance of the seat to decide in game b at the scratch position `sheet` with `pen`
    penalties, at the end of the roll (exact when the game has ended: the share of the win,
    ties split). `work`: the network's work arrays (features, hidden1, hidden2) of a Scratch,
    passed without the rest of it (see `heuristic.ScratchSheet`)."""
    s = st.turn[b]
    n_closed = 0
    for r in range(rules.rows_of(tb)):
        if sheet.closed[r]:
            n_closed += 1
    if rules.ends_game(st, tb, b, s, pen, n_closed):
        best_other, at_best = rules.best_other_score(st, tb, b, s)
        return rules.share_of_win(rules.sheet_score(tb, sheet.marks, sheet.locks, pen), best_other, at_best)
    x, h1, h2 = work
    scratch_features(st, tb, b, s, sheet, pen, (st.active[b] + 1) % st.marks.shape[1], hw, x)
    return win_chance(x, net, h1, h2)


@batch_kernel
def _best_color(st, tb, b, sheet, pen, crossed, hw, net, work):
    """Best `_value` over the active player's colour options (pass included)."""
    best = _value(st, tb, b, sheet, pen if crossed else pen + 1, hw, net, work)
    gone = dice_gone(tb, sheet.closed)
    for o in range(rules.color_option_count(tb)):
        a = scratch_color_option(st, tb, b, sheet, o, gone)
        if a >= 0:
            old = cross_scratch(tb, sheet, a)
            v = _value(st, tb, b, sheet, pen, hw, net, work)
            undo_scratch(tb, sheet, a, old)
            if v > best:
                best = v
    return best


@batch_kernel
def action_values(st, tb, b, mask, hw, net, values, ws):
    """values[a]: the afterstate win chance of each legal action a (others -1). `ws`: a
    `policies.scratch.Scratch` of the table, sized for `net`."""
    K = tb.cells
    s = st.turn[b]
    phase = st.phase[b]
    active = st.active[b] == s
    sheet = scratch_sheet(st, tb, b, s, hw, ws)
    work = (ws.features, ws.hidden1, ws.hidden2)
    closed = sheet.closed
    pen = np.int64(st.penalties[b, s])
    crossed_before = phase == COLOR and rules.active_crossed(st, tb, b)
    for a in range(rules.rows_of(tb) * K + 1):
        values[a] = -1.0
        if not mask[a]:
            continue
        crossing = a < rules.rows_of(tb) * K
        old = cross_scratch(tb, sheet, a) if crossing else 0
        if phase == WHITE:
            n_closed = 0
            for r in range(rules.rows_of(tb)):
                if closed[r]:
                    n_closed += 1
            if active and n_closed < tb.rows_to_end:
                v = _best_color(st, tb, b, sheet, pen, crossing, hw, net, work)
            else:
                v = _value(st, tb, b, sheet, pen, hw, net, work)
        else:
            penalty = 0 if (crossing or crossed_before) else 1
            v = _value(st, tb, b, sheet, pen + penalty, hw, net, work)
        if crossing:
            undo_scratch(tb, sheet, a, old)
        values[a] = v


@batch_kernel
def afterstate_action(st, tb, b, mask, hw, net, values, ws):
    action_values(st, tb, b, mask, hw, net, values, ws)
    best, best_v = rules.rows_of(tb) * tb.cells, -2.0
    for a in range(values.shape[0]):
        if values[a] > best_v:
            best, best_v = a, values[a]
    return best


@batch_kernel
def afterstate_inputs(obs, tb, off, st, hw, net, out, ws):
    """out[i, a]: the afterstate value of action a for the seat observing obs[i] (-1 where a
    is illegal or nobody is to decide). `st` is a one-game scratch state of the table's size,
    `ws` a `policies.scratch.Scratch` of the table sized for `net`."""
    mask, values = ws.mask, ws.values
    for i in range(obs.shape[0]):
        for a in range(out.shape[1]):
            out[i, a] = -1.0
        decode_one(obs[i], tb, off, st)
        if st.phase[0] > COLOR:
            continue
        rules.legal_mask_one(st, tb, 0, mask)
        action_values(st, tb, 0, mask, hw, net, values, ws)
        for a in range(out.shape[1]):
            if mask[a]:
                out[i, a] = values[a]
