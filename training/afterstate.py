"""Experimental: a 2-player classic policy that picks the action whose afterstate the
win-chance network rates best (the heuristic's look-ahead, its evaluation replaced by the
network), and fitted value iteration on its own games."""

from __future__ import annotations

import numpy as np

from qwixx_env.core.compile import kernel
from qwixx_env.core.heuristic import heuristic_action
from qwixx_env.core.policies import random_legal
from qwixx_env.core import rules
from qwixx_env.core.afterstate import afterstate_action
from qwixx_env.core.state import OVER
from qwixx_env.core.value import NUM_FEATURES, value_features

_jit = kernel()


@_jit
def play_selfplay(st, tb, hw, net, explore, rng, feats, rows_game, rows_seat):
    """Every game of st played to its end by the net policy for both seats (a share
    `explore` of decisions random); the roll-start features from both sides are recorded."""
    mask = np.zeros(4 * tb.cells + 1, np.int8)
    values = np.zeros(4 * tb.cells + 1)
    x = np.zeros(NUM_FEATURES)
    n = 0
    for b in range(st.phase.shape[0]):
        last_roll = -1
        while st.phase[b] != OVER:
            if st.roll[b] != last_roll and n + 2 <= feats.shape[0]:
                last_roll = st.roll[b]
                for s in range(2):
                    value_features(st, tb, b, s, hw, x)
                    feats[n, :] = x
                    rows_game[n] = b
                    rows_seat[n] = s
                    n += 1
            rules.legal_mask_one(st, tb, b, mask)
            if np.random.random() < explore:
                a = random_legal(mask, rng, b)
            else:
                a = afterstate_action(st, tb, b, mask, hw, net, values)
            rules.apply_one(st, tb, b, a)
    return n


@_jit
def play_match(st, tb, hw, net, net_seat, explore, rng):
    """Every game of st to its end: seat net_seat[b] plays the net policy, the other the
    heuristic (weights hw)."""
    mask = np.zeros(4 * tb.cells + 1, np.int8)
    values = np.zeros(4 * tb.cells + 1)
    for b in range(st.phase.shape[0]):
        while st.phase[b] != OVER:
            rules.legal_mask_one(st, tb, b, mask)
            if st.turn[b] == net_seat[b]:
                a = afterstate_action(st, tb, b, mask, hw, net, values)
            else:
                a = heuristic_action(st, tb, b, mask, hw)
            rules.apply_one(st, tb, b, a)
