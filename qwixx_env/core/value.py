"""A learned win-chance evaluation of 2-player positions: the `rollout` bot's leaf.

`value_features` describes a position between rolls from one seat's side as a fixed vector
(each sheet row by row, penalties, scores, locked rows, who rolls next, and the heuristic's
own evaluation); `win_chance` runs a small multi-layer perceptron (ReLU hidden layers, a
sigmoid output) on it. The network is trained by `training/value_leaf.py` on positions of
heuristic-against-heuristic games labelled with who went on to win, and shipped as a numpy
file beside the `rollout` bot (`qwixx_env/bots/data/`).
"""

from __future__ import annotations

import numpy as np

from qwixx_env.core.compile import kernel
from qwixx_env.core.heuristic import position_value
from qwixx_env.core.rules import count, rightmost, row_locked, score

NUM_FEATURES = 36


@kernel()
def value_features(st, tb, b, s, weights, out):
    """Write the features of game b seen by seat s (2 players) into `out` (NUM_FEATURES,).

    `weights` are the heuristic's (for its evaluation, one of the features)."""
    K = tb.cells
    s = np.int64(s)
    o = 1 - s
    own, other = score(st, tb, b, s), score(st, tb, b, o)
    i = 0
    for k in range(2):
        p = s if k == 0 else o
        for r in range(4):
            m = st.marks[b, p, r]
            out[i] = count(m) / K
            out[i + 1] = (rightmost(m) + 1) / K
            out[i + 2] = 1.0 if st.locks[b, p, r] else 0.0
            i += 3
        out[i] = st.penalties[b, p] / tb.max_penalties
        out[i + 1] = (own if k == 0 else other) / 100.0
        i += 2
    for r in range(4):
        out[i] = 1.0 if row_locked(st, b, r) else 0.0
        i += 1
    out[i] = 1.0 if st.active[b] == s else 0.0
    out[i + 1] = position_value(st, tb, b, s, weights) / 100.0
    out[i + 2] = (own - other) / 50.0
    out[i + 3] = 1.0


@kernel()
def win_chance(x, w1, b1, w2, b2, w3, b3, h1, h2):
    """The network's win chance for features x (h1, h2: scratch for the hidden layers)."""
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
