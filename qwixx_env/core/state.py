"""The game state: a struct of numpy arrays with a leading batch axis.

One `State` holds B games of P players (B = 1 for the AEC environment, thousands for a
batched engine) on sheets of R rows with D coloured dice (4 and 4 in classic and Longo).
Every field is a plain array, so cloning is an array copy and the compiled
rules kernels in `qwixx_env.core.rules` can read and write it in place.

A sheet row is a bitmask of crossed cells (bit i is the i-th number of the row as printed);
the rightmost cross and the number of crosses follow from it. Only *committed* crosses are
in `marks`: the white-action choices of the current roll wait in `pending` until every seat
has decided, so nothing a player chose is visible before the action resolves.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from qwixx_env.core.variant import Variant

# Phases of a roll (State.phase).
WHITE, LUCKY, COLOR, OVER = 0, 1, 2, 3
PHASES = ("white", "lucky", "color", "over")

NO_DECISION = -1  # pending / pending_lucky before a seat has decided
NO_SEAT = -1  # illegal_end of a game that no illegal action ended
OUT_OF_PLAY = 0  # a die whose row is locked


class State(NamedTuple):
    """B games of P players; see the module docstring. Shapes are given per field."""

    marks: np.ndarray  # (B, P, R) int32: bitmask of crossed cells per row
    locks: np.ndarray  # (B, P, R) bool: this player crossed the row's lock
    penalties: np.ndarray  # (B, P) int8
    lucky_numbers: np.ndarray  # (B, P, 2) int8: each sheet's lucky numbers (Longo), 0 when unused
    dice: np.ndarray  # (B, 2 + D) int8: white, white, the coloured dice (red ... blue); 0 = out of play
    active: np.ndarray  # (B,) int8: the active player's seat
    turn: np.ndarray  # (B,) int8: the seat whose decision is next
    phase: np.ndarray  # (B,) int8: WHITE, LUCKY, COLOR or OVER
    pending: np.ndarray  # (B, P) int16: white-action choice of this roll (action index) or -1
    pending_lucky: np.ndarray  # (B, P) int16: lucky cross of this roll (action index) or -1
    roll: np.ndarray  # (B,) int32: rolls made before the current one
    rng: np.ndarray  # (B,) uint64: per-game random generator state (splitmix64)
    illegal_end: np.ndarray  # (B,) int8: the seat whose illegal action ended the game (phase OVER), else -1

    @property
    def batch_size(self) -> int:
        return self.marks.shape[0]

    @property
    def num_players(self) -> int:
        return self.marks.shape[1]

    def clone(self) -> State:
        """An exact, independent copy (one array copy per field)."""
        return State(*(a.copy() for a in self))

    def copy_from(self, other: State) -> None:
        """Overwrite this state with `other` in place (same shapes), without allocating."""
        for dst, src in zip(self, other):
            dst[...] = src

    def game(self, b: int) -> State:
        """Game b of the batch as a batch of one (a copy)."""
        return State(*(a[b : b + 1].copy() for a in self))


def new_state(num_players: int, batch_size: int = 1, variant: Variant | None = None) -> State:
    """An all-empty state for `batch_size` games of `num_players` on the sheet of `variant`
    (the classic four rows and dice by default); `rules.reset` starts them."""
    B, P = batch_size, num_players
    R, D = (4, 4) if variant is None else (variant.num_rows, len(variant.dice_colors))
    return State(
        marks=np.zeros((B, P, R), np.int32),
        locks=np.zeros((B, P, R), np.bool_),
        penalties=np.zeros((B, P), np.int8),
        lucky_numbers=np.zeros((B, P, 2), np.int8),
        dice=np.zeros((B, 2 + D), np.int8),
        active=np.zeros(B, np.int8),
        turn=np.zeros(B, np.int8),
        phase=np.full(B, OVER, np.int8),
        pending=np.full((B, P), NO_DECISION, np.int16),
        pending_lucky=np.full((B, P), NO_DECISION, np.int16),
        roll=np.zeros(B, np.int32),
        rng=np.zeros(B, np.uint64),
        illegal_end=np.full(B, NO_SEAT, np.int8),
    )


def seed_to_rng(seed: int) -> np.uint64:
    """A game's generator state from a user seed (any non-negative integer), the same everywhere."""
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]
