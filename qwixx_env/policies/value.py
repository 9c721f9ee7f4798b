"""A learned win-chance evaluation of positions: the `rollout` bot's leaf, the `afterstate` bot's
rating.

`value_features` describes a position between rolls from one seat's side as a fixed vector
(each sheet row by row, penalties, scores, locked rows, who rolls next, and the heuristic's
own evaluation); given `NO_HEURISTIC` in place of the heuristic's weights it writes the
*plain* layout instead (`plain_num_features`: nothing from the heuristic, a bit per row for
"may lock" in its place), what the teacher-free self-play networks read
(`qwixx_env.training.selfplay`). `win_chance` runs a small multi-layer perceptron (ReLU hidden layers, a
sigmoid output) on it. The network is trained by `qwixx_env.training.value_leaf` on positions of
heuristic-against-heuristic games labelled with who went on to win, and shipped as a network
file (json + npz) in `qwixx_env/nets/data/`. The features are defined for any table of
2 or more players on any sheet (`num_features`); the 2-player layout of the classic four rows
is the one the 2-player networks read.
"""

from __future__ import annotations

import numpy as np

from qwixx_env.core import rules
from qwixx_env.core.compile import batch_kernel, leaf
from qwixx_env.core.rules import count, rightmost, rows_of
from qwixx_env.policies.heuristic import evaluate_sheet, scratch_sheet


@batch_kernel
def num_features(num_players, rows=4):
    """Length of `value_features` at a table of `num_players` (2 or more) on a sheet of `rows`
    rows (the classic four by default): `sheet_width` for each sheet, a locked bit per row, who
    rolls next (1 bit at 2 players, one per seat beyond), the heuristic's evaluation, the
    margin and a constant."""
    return sheet_width(rows) * num_players + rows + (1 if num_players == 2 else num_players) + 3


@leaf
def sheet_width(rows):
    """Features of one sheet of `rows` rows (`sheet_features`): 3 a row, penalties, score."""
    return 3 * rows + 2


NO_HEURISTIC = np.zeros(0, np.float64)
"""In place of the heuristic's weights: the features are the plain layout (`plain_features`),
with no column computed by the heuristic, and a look-ahead rates with the network alone."""


@batch_kernel
def plain_num_features(num_players, rows=4):
    """Length of the plain layout (`plain_features`) at a table of `num_players` (2 or more)
    on a sheet of `rows` rows: `plain_sheet_width` for each sheet, a locked bit per row, who
    rolls next (as in `num_features`), the margin and a constant."""
    return plain_sheet_width(rows) * num_players + rows + (1 if num_players == 2 else num_players) + 2


@leaf
def plain_sheet_width(rows):
    """Features of one sheet of `rows` rows in the plain layout: 4 a row, penalties, score."""
    return 4 * rows + 2


NUM_FEATURES = 36  # num_features(2): the 2-player classic layout the shipped networks read


@batch_kernel
def sheet_features(tb, marks, locks, penalties, points, out, i):
    """Write one sheet's `sheet_width` features (14 on the classic sheet) from out[i]: per row
    the share of cells crossed, the rightmost crossed cell and the lock; the penalties; the
    score / 100."""
    K = tb.cells
    for r in range(rows_of(tb)):
        m = marks[r]
        out[i] = count(m) / K
        out[i + 1] = (rightmost(m) + 1) / K
        out[i + 2] = 1.0 if locks[r] else 0.0
        i += 3
    out[i] = penalties / tb.max_penalties
    out[i + 1] = points / 100.0


@batch_kernel
def plain_sheet_features(tb, marks, locks, penalties, points, out, i):
    """Write one sheet's `plain_sheet_width` features from out[i]: per row the share of cells
    crossed, the rightmost crossed cell, the lock and whether the row has the crosses a lock
    cell needs; the penalties; the score / 100. Raw facts of the sheet, nothing rated."""
    K = tb.cells
    for r in range(rows_of(tb)):
        m = marks[r]
        n = count(m)
        out[i] = n / K
        out[i + 1] = (rightmost(m) + 1) / K
        out[i + 2] = 1.0 if locks[r] else 0.0
        out[i + 3] = 1.0 if n >= tb.lock_threshold else 0.0
        i += 4
    out[i] = penalties / tb.max_penalties
    out[i + 1] = points / 100.0


@batch_kernel
def one_sheet_features(tb, marks, locks, penalties, points, plain, out, i):
    """`plain_sheet_features` in the plain layout, else `sheet_features`."""
    if plain:
        plain_sheet_features(tb, marks, locks, penalties, points, out, i)
    else:
        sheet_features(tb, marks, locks, penalties, points, out, i)


@batch_kernel
def sheets_features(st, tb, b, s, sheet, pen, plain, out):
    """Write every sheet's features from out[0] (`one_sheet_features`): seat s's own, the
    scratch `sheet` with `pen` penalties, first, then the others' as committed in seat order
    after s; then a bit per row locked in ``sheet.closed``. Returns (s's score, the best
    other score)."""
    P = st.marks.shape[1]
    R = rows_of(tb)
    width = plain_sheet_width(R) if plain else sheet_width(R)
    own = rules.sheet_score(tb, sheet.marks, sheet.locks, pen)
    best_other = -(1 << 30)
    one_sheet_features(tb, sheet.marks, sheet.locks, pen, own, plain, out, 0)
    for k in range(1, P):
        o = (s + k) % P
        other = rules.score(st, tb, b, o)
        if other > best_other:
            best_other = other
        one_sheet_features(tb, st.marks[b, o], st.locks[b, o], st.penalties[b, o], other, plain, out, width * k)
    for r in range(R):
        out[width * P + r] = 1.0 if sheet.closed[r] else 0.0
    return own, best_other


@batch_kernel
def rolls_next_features(P, s, next_active, out, i):
    """Write who rolls next from out[i]: at 2 players one bit (s itself), beyond one bit per
    seat in seat order from s. Returns the index after them."""
    if P == 2:
        out[i] = 1.0 if next_active == s else 0.0
        return i + 1
    for k in range(P):
        out[i + k] = 1.0 if next_active == (s + k) % P else 0.0
    return i + P


@batch_kernel
def plain_features(st, tb, b, s, sheet, pen, next_active, out):
    """The plain layout of the position `scratch_features` describes: each sheet
    (`plain_sheet_features`, s's own first, then the others in seat order after s), a bit
    per locked row, who rolls next (one bit at 2 players, one per seat in seat order from s
    beyond), the margin over the best other score / 50 and a constant 1."""
    P = st.marks.shape[1]
    R = rows_of(tb)
    width = plain_sheet_width(R)
    own, best_other = sheets_features(st, tb, b, s, sheet, pen, True, out)
    i = width * P + R
    i = rolls_next_features(P, s, next_active, out, i)
    out[i] = (own - best_other) / 50.0
    out[i + 1] = 1.0


@batch_kernel
def table_features(st, b, s, next_active, evaluation, own, best_other, out):
    """Write the features after the sheets and the R locked-row bits (from index
    ``sheet_width(R) * P + R``, the callers write those): who rolls next (at 2 players one bit,
    s; beyond, one bit per seat in seat order from s), the evaluation / 100, the margin over the
    best other score / 50 and a constant 1."""
    P = st.marks.shape[1]
    R = st.marks.shape[2]
    i = sheet_width(R) * P + R
    i = rolls_next_features(P, s, next_active, out, i)
    out[i] = evaluation / 100.0
    out[i + 1] = (own - best_other) / 50.0
    out[i + 2] = 1.0


@batch_kernel
def scratch_features(st, tb, b, s, sheet, pen, next_active, hw, out):
    """`value_features` of the position where seat s's sheet is the scratch `sheet` (a
    `heuristic.ScratchSheet`) with `pen` penalties, the others' as committed, ``sheet.closed``
    the locked rows and `next_active` who rolls next; the plain layout where `hw` is
    `NO_HEURISTIC` (empty)."""
    if hw.shape[0] == 0:
        plain_features(st, tb, b, s, sheet, pen, next_active, out)
        return
    own, best_other = sheets_features(st, tb, b, s, sheet, pen, False, out)
    evaluation = evaluate_sheet(st, tb, b, s, sheet, pen, hw)
    table_features(st, b, s, next_active, evaluation, own, best_other, out)


@batch_kernel
def value_features(st, tb, b, s, weights, out, ws):
    """Write the features of game b seen by seat s into `out` (num_features(P, R),): each
    sheet, s's own first and then the others in seat order after s (`sheet_features`), then
    `table_features`. At 2 players this is the layout of NUM_FEATURES the shipped networks
    read. `weights` are the heuristic's (for its evaluation, one of the features). The
    committed position is `scratch_features` of an untouched scratch copy of s's sheet (in
    `ws`, a `policies.scratch.Scratch`)."""
    sheet = scratch_sheet(st, tb, b, s, weights, ws)
    scratch_features(st, tb, b, s, sheet, np.int64(st.penalties[b, s]), st.active[b], weights, out)


@batch_kernel
def win_chance(x, net, h1, h2):
    """The network's win chance for features x; `net` is its layers (w1, b1, w2, b2, w3, b3),
    as `qwixx_env.nets.win_chance_network` gives them; h1, h2: scratch for the hidden layers."""
    w1, b1, w2, b2, w3, b3 = net
    for j in range(w1.shape[1]):
        a = b1[j]
        for i in range(x.shape[0]):
            a += x[i] * w1[i, j]
        h1[j] = a if a > 0.0 else 0.0
    for j in range(w2.shape[1]):
        a = b2[j]
        for i in range(h1.shape[0]):
            a += h1[i] * w2[i, j]
        h2[j] = a if a > 0.0 else 0.0
    z = b3[0]
    for i in range(h2.shape[0]):
        z += h2[i] * w3[i, 0]
    return 1.0 / (1.0 + np.exp(-z))
