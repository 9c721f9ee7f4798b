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

from qwixx_env.core.checks import array_words
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


def _fields(batch_size: int, num_players: int, variant: Variant | None) -> dict[str, tuple[tuple[int, ...], type, int]]:
    """Every field of a `State` as (shape, dtype, value of a new state): the one statement of
    the arrays' shapes, read by `new_state` and by `check_state`."""
    B, P = batch_size, num_players
    R, D = (4, 4) if variant is None else (variant.num_rows, len(variant.dice_colors))
    return {
        "marks": ((B, P, R), np.int32, 0),
        "locks": ((B, P, R), np.bool_, False),
        "penalties": ((B, P), np.int8, 0),
        "lucky_numbers": ((B, P, 2), np.int8, 0),
        "dice": ((B, 2 + D), np.int8, 0),
        "active": ((B,), np.int8, 0),
        "turn": ((B,), np.int8, 0),
        "phase": ((B,), np.int8, OVER),
        "pending": ((B, P), np.int16, NO_DECISION),
        "pending_lucky": ((B, P), np.int16, NO_DECISION),
        "roll": ((B,), np.int32, 0),
        "rng": ((B,), np.uint64, 0),
        "illegal_end": ((B,), np.int8, NO_SEAT),
    }


def new_state(num_players: int, batch_size: int = 1, variant: Variant | None = None) -> State:
    """An all-empty state for `batch_size` games of `num_players` on the sheet of `variant`
    (the classic four rows and dice by default: pass the variant of any other sheet, or the
    rules refuse the state); `rules.reset` starts them."""
    fields = _fields(batch_size, num_players, variant)
    return State(**{name: np.full(shape, value, dtype) for name, (shape, dtype, value) in fields.items()})


def check_state(variant: Variant, state: State) -> None:
    """Refuse a `state` whose arrays do not fit the sheet of `variant`, with a `ValueError`
    naming the shapes. The core's public functions call it once per call: their compiled
    kernels check nothing, and a state of fewer rows or dice than the sheet is read and
    written past its arrays' ends (wrong scores, or a crashed process). A read-only array is
    refused too: numba cannot compile the kernels that write the state for it (an error that
    names no field), and compiles the others anew for each field that is read-only."""
    if not isinstance(state, State):
        raise ValueError(f"state: got {type(state).__name__}; expected a State (new_state(num_players, "
                         "batch_size, variant))")
    marks, dice = state.marks, state.dice
    if not (isinstance(marks, np.ndarray) and marks.ndim == 3 and marks.shape[1] >= 1
            and isinstance(dice, np.ndarray) and dice.ndim == 2):
        raise ValueError(f"state: marks {array_words(marks)} and dice {array_words(dice)}; expected marks "
                         "(games, players, rows) with at least one player and dice (games, 2 + coloured dice)")
    B, P, R = marks.shape
    D = len(variant.dice_colors)
    sheet = f"the {variant.name} sheet has {variant.num_rows} rows of {variant.cells} cells and {D} coloured dice"
    if (R, dice.shape[1] - 2) != (variant.num_rows, D):
        raise ValueError(
            f"state: its sheets have {R} rows and {dice.shape[1] - 2} coloured dice (marks {marks.shape}, dice "
            f"{dice.shape}); {sheet}: build the state with new_state({P}, {B}, variant=...) for that variant"
        )
    for name, (shape, dtype, _) in _fields(B, P, variant).items():
        value = getattr(state, name)
        if not (isinstance(value, np.ndarray) and value.shape == shape and value.dtype == dtype):
            raise ValueError(f"state.{name}: got {array_words(value)}; expected {shape} {np.dtype(dtype)} for "
                             f"{B} games of {P} players ({sheet}), as new_state builds it")
        if not value.flags.writeable:
            raise ValueError(f"state.{name}: a read-only array; the rules write the state in place (new_state(...) "
                             "or state.clone() gives a writeable one)")


def seed_to_rng(seed: int) -> np.uint64:
    """A game's generator state from a user seed (any non-negative integer), the same everywhere."""
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]
