"""Whole games played in one compiled call, with positions recorded on the way: the data the
win-chance networks are trained on (`training/value_leaf.py`, `training/afterstate.py`).

`play_recorded` plays every game of a `State` to its end, each seat with the heuristic or the
afterstate policy, and writes `policies.value.value_features` of every roll start from the
sides asked for; the caller labels them with who went on to win.
"""

from __future__ import annotations

import numpy as np

from qwixx_env.core.compile import batch_kernel, kernel
from qwixx_env.core.rules import apply_one, legal_mask_one
from qwixx_env.core.state import OVER
from qwixx_env.policies.afterstate import afterstate_action
from qwixx_env.policies.heuristic import heuristic_action
from qwixx_env.policies.scripted import random_legal
from qwixx_env.policies.value import value_features


@batch_kernel
def record_roll_start(st, tb, b, hw, records, feats, rows_game, rows_seat, n, ws):
    """At the start of a roll of game b, write `value_features` (with `hw`: the heuristic's
    weights, or `value.NO_HEURISTIC` for the plain layout) of every seat s with records[b, s]
    into feats[n], ..., with rows_game and rows_seat (until feats is full). Returns the rows
    written so far. `ws`: a `policies.scratch.Scratch` (its `features` is the work row)."""
    x = ws.features
    for s in range(st.marks.shape[1]):
        if records[b, s] and n < feats.shape[0]:
            value_features(st, tb, b, s, hw, x, ws)
            for j in range(x.shape[0]):  # element by element: a slice copy would need numba's runtime
                feats[n, j] = x[j]
            rows_game[n] = b
            rows_seat[n] = s
            n += 1
    return n


@kernel()
def play_recorded(st, tb, hw, net, uses_net, records, explore, rng, feats, rows_game, rows_seat, ws):
    """Play every game of `st` to its end; returns the number of feature rows written.

    Seat s of game b plays the afterstate policy with network `net` where uses_net[b, s], else
    the heuristic (weights hw). A seat with records[b, s] takes a share `explore` of its
    decisions at random and has the features of every roll start written from its side
    (feats, rows_game, rows_seat; until feats is full). `ws`: a `policies.scratch.Scratch` sized
    for `net`. The exploration draws come from numba's own generator (seed it from compiled code)."""
    mask, values = ws.mask, ws.values
    n = 0
    for b in range(st.phase.shape[0]):
        last_roll = -1
        while st.phase[b] != OVER:
            if st.roll[b] != last_roll:
                last_roll = st.roll[b]
                n = record_roll_start(st, tb, b, hw, records, feats, rows_game, rows_seat, n, ws)
            legal_mask_one(st, tb, b, mask)
            s = st.turn[b]
            if records[b, s] and np.random.random() < explore:  # noqa: NPY002 (numba has the legacy API only)
                a = random_legal(mask, rng, b)
            elif uses_net[b, s]:
                a = afterstate_action(st, tb, b, mask, hw, net, values, ws)
            else:
                a = heuristic_action(st, tb, b, mask, hw, ws)
            apply_one(st, tb, b, a)
    return n
