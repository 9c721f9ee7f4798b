"""`Scratch`: the work arrays of one look-ahead decision, allocated once by its caller.

The heuristic, the afterstate ratings, the learned leaf and the search playouts cross
candidate actions on a scratch copy of a sheet and run a small network; they write into
these arrays instead of allocating their own. That lets every kernel on those paths compile
without numba's reference counts (`compile.batch_kernel`), which allocation would
need. One `Scratch` serves one thread: a kernel call fills what it uses before reading it, and
nothing in it survives from one decision to the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from qwixx_env.core.variant import Variant, get_variant
from qwixx_env.policies.value import num_features


class Scratch(NamedTuple):
    """See the module docstring; shapes for R rows of K numbers and A actions."""

    marks: np.ndarray  # (R,) int64: the sheet's rows as bitmasks
    locks: np.ndarray  # (R,) bool: its crossed locks
    closed: np.ndarray  # (R,) bool: the locked rows
    at_roll: np.ndarray  # (R,) bool: the rows locked when the roll began
    open_weights: np.ndarray  # (R, K + 1) float64: the heuristic's weight of the open numbers
    mask: np.ndarray  # (A,) int8: legal actions
    values: np.ndarray  # (A,) float64: one rating per action
    features: np.ndarray  # (the network's inputs,) float64: a position's `value_features` (0 alone)
    hidden1: np.ndarray  # the network's first hidden layer (0 without a network)
    hidden2: np.ndarray  # its second hidden layer


def new_scratch(variant: str | Variant, num_players: int, net: Sequence[np.ndarray] | None = None) -> Scratch:
    """Work arrays for decisions at this table; `net` (w1, b1, w2, b2, w3, b3) sizes the
    hidden layers of a win-chance network the decisions run (none: empty)."""
    v = get_variant(variant)
    R = v.num_rows
    return Scratch(
        marks=np.zeros(R, np.int64),
        locks=np.zeros(R, np.bool_),
        closed=np.zeros(R, np.bool_),
        at_roll=np.zeros(R, np.bool_),
        open_weights=np.zeros((R, v.cells + 1), np.float64),
        mask=np.zeros(v.num_actions, np.int8),
        values=np.zeros(v.num_actions, np.float64),
        features=np.zeros(_feature_width(num_players, R, net), np.float64),
        hidden1=np.zeros(0 if net is None else net[0].shape[1], np.float64),
        hidden2=np.zeros(0 if net is None else net[2].shape[1], np.float64),
    )


def _feature_width(num_players: int, rows: int, net: Sequence[np.ndarray] | None) -> int:
    """The features a position is written as: the network's input width where there is one
    (the heuristic's layout or the plain one), else `num_features` (none alone)."""
    if num_players < 2:
        return 0
    return num_features(num_players, rows) if net is None else int(net[0].shape[0])
