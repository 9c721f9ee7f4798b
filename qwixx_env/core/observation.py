"""The observation vector, declared once: `ObservationLayout` names its slices, the compiled
encoder writes batches of it, and `ObservationView` reads one back by name.

Every sheet in Qwixx is public, so an observation holds the whole game as the observing seat
sees it: sheets in seat order starting with its own, the dice, the phase, who is active.
Nothing a player chose in the current white action appears until the action resolves; the
one exception is `pending_cross`, which shows the observer *its own* white choice while it
breaks a lucky-cross tie (Longo), the only decision that depends on that choice.

Fields, in order (P players, R rows of K numbers, D coloured dice, F die faces, M penalty boxes
(`Variant.max_penalties`); "seat j" is j seats clockwise from the observer, seat 0 being the
observer; R = D = M = 4 in classic and Longo):

================ ============ ==================================================================
name             shape        meaning
================ ============ ==================================================================
crosses          (P, R, K)    1 where seat j crossed the k-th number of row r (sheet order)
locks            (P, R)       1 where seat j crossed the lock of row r
penalties        (P, M)       penalty boxes of seat j, filled from the left
scores           (P,)         seat j's current score / 100
lucky_numbers    (P, 2F-1)    1 at number-2 for each lucky number of seat j (Longo; empty in classic)
dice             (2 + D, F)   one-hot face of white, white, then each coloured die (red, yellow,
                              green, blue); all 0 = out of play
locked_rows      (R,)         1 where the row is locked
phase            (4,)         one-hot: white, lucky, color, over
is_active        (1,)         1 if the observer is the active player
active_seat      (P,)         one-hot: how many seats clockwise the active player sits
active_crossed   (1,)         colour action: 1 if the active player crossed in the white action
pending_cross    (R, K)       the observer's own white cross while it breaks a lucky tie
================ ============ ==================================================================
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from qwixx_env.core.checks import array_words, check_array, check_int
from qwixx_env.core.compile import batch_kernel, inlined, leaf
from qwixx_env.core.rules import active_crossed, dice_of, row_locked, rows_of, score
from qwixx_env.core.state import COLOR, LUCKY, NO_DECISION, PHASES, State, check_state, new_state
from qwixx_env.core.variant import Variant, get_variant

SCORE_SCALE = 100.0


class Offsets(NamedTuple):
    """Start of every field in the flat vector (what the compiled encoder needs)."""

    crosses: int
    locks: int
    penalties: int
    scores: int
    lucky_numbers: int
    dice: int
    locked_rows: int
    phase: int
    is_active: int
    active_seat: int
    active_crossed: int
    pending_cross: int


class ObservationLayout:
    """Named slices of the flat float32 observation for one variant and player count."""

    def __init__(self, variant: Variant, num_players: int):
        P, K, F = num_players, variant.cells, variant.faces
        R, D = variant.num_rows, len(variant.dice_colors)
        # the score table is a rule parameter: any entry may be the most or the least a row gives
        score_max = R * max(max(variant.score_table), 0) / SCORE_SCALE
        worst_rows = R * min(min(variant.score_table), 0)
        score_min = (worst_rows - variant.penalty_points * variant.max_penalties) / SCORE_SCALE
        lucky_width = (2 * F - 1) if variant.lucky_count else 0
        # name -> (shape, low, high)
        spec = {
            "crosses": ((P, R, K), 0.0, 1.0),
            "locks": ((P, R), 0.0, 1.0),
            "penalties": ((P, variant.max_penalties), 0.0, 1.0),
            "scores": ((P,), score_min, score_max),
            "lucky_numbers": ((P, lucky_width), 0.0, 1.0),
            "dice": ((2 + D, F), 0.0, 1.0),
            "locked_rows": ((R,), 0.0, 1.0),
            "phase": ((len(PHASES),), 0.0, 1.0),
            "is_active": ((1,), 0.0, 1.0),
            "active_seat": ((P,), 0.0, 1.0),
            "active_crossed": ((1,), 0.0, 1.0),
            "pending_cross": ((R, K), 0.0, 1.0),
        }
        assert tuple(spec) == Offsets._fields
        self.variant = variant
        self.num_players = num_players
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.slices: dict[str, slice] = {}
        low, high, start = [], [], 0
        for name, (shape, lo, hi) in spec.items():
            size = int(np.prod(shape))
            self.shapes[name] = shape
            self.slices[name] = slice(start, start + size)
            low += [lo] * size
            high += [hi] * size
            start += size
        self.size = start
        self.low = np.array(low, np.float32)
        self.high = np.array(high, np.float32)
        self.offsets = Offsets(*(s.start for s in self.slices.values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}{self.shapes[n]}" for n in self.slices)
        return f"ObservationLayout({self.variant.name}, {self.num_players} players, size {self.size}: {fields})"

    def field(self, vector: np.ndarray, name: str) -> np.ndarray:
        """The named field of an observation vector, in its shape (a view, no copy)."""
        return np.asarray(vector)[..., self.slices[name]].reshape(
            np.shape(vector)[:-1] + self.shapes[name]
        )

    def encode(self, state: State, seats: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """(B, size) float32: game b of `state` as seen from seat `seats[b]`."""
        check_state(self.variant, state)
        B, P = state.batch_size, state.num_players
        if P != self.num_players:
            raise ValueError(f"state: {P} players; this layout is for {self.num_players} (layout_for(variant, {P}))")
        seats = np.asarray(seats)
        if seats.shape != (B,) or not np.issubdtype(seats.dtype, np.integer) or (
                B and not (0 <= seats.min() and seats.max() < P)):
            raise ValueError(f"seats: got {array_words(seats)}; expected ({B},) seats from 0 to {P - 1}, one a game")
        shape = (B, self.size)
        if out is None:
            out = np.empty(shape, np.float32)
        check_array("out", out, shape, np.float32)
        encode_batch(state, self.variant.tables, self.offsets, seats.astype(np.int64), out)
        return out


@leaf
def _clear(out, start, size):
    for i in range(start, start + size):
        out[i] = 0.0


@inlined
def encode_one(st, tb, off, b, seat, out):
    """Write game b as seen from `seat` into the flat vector `out` (see the module docstring).

    Dense fields are written cell by cell without branches and only the sparse one-hot blocks
    are cleared first: with random play, data-dependent branches and a full clear would cost
    more than the writes themselves.
    """
    P = st.marks.shape[1]
    K = tb.cells
    R = rows_of(tb)
    F = tb.faces
    lucky_width = 2 * F - 1
    phase = st.phase[b]
    _clear(out, off.lucky_numbers, P * lucky_width * (tb.lucky_count > 0))
    _clear(out, off.dice, (2 + dice_of(tb)) * F)
    _clear(out, off.active_seat, P)
    _clear(out, off.pending_cross, R * K)
    for j in range(P):
        s = (seat + j) % P
        for r in range(R):
            m = np.int64(st.marks[b, s, r])
            base = off.crosses + (j * R + r) * K
            for c in range(K):
                out[base + c] = (m >> c) & 1
            out[off.locks + j * R + r] = st.locks[b, s, r]
        penalties = st.penalties[b, s]
        for k in range(tb.max_penalties):
            out[off.penalties + j * tb.max_penalties + k] = k < penalties
        out[off.scores + j] = score(st, tb, b, s) / SCORE_SCALE
        for i in range(tb.lucky_count):
            if st.lucky_numbers[b, s, i] >= 2:  # 0: none set (a position built by hand)
                out[off.lucky_numbers + j * lucky_width + st.lucky_numbers[b, s, i] - 2] = 1.0
    for i in range(2 + dice_of(tb)):
        d = st.dice[b, i]
        if d > 0:
            out[off.dice + i * F + d - 1] = 1.0
    for r in range(R):
        out[off.locked_rows + r] = row_locked(st, b, r)
    for i in range(4):
        out[off.phase + i] = phase == i
    a = st.active[b]
    out[off.is_active] = a == seat
    out[off.active_seat + (a - seat) % P] = 1.0
    out[off.active_crossed] = phase == COLOR and active_crossed(st, tb, b)
    if phase == LUCKY and st.turn[b] == seat:
        p = st.pending[b, seat]
        if 0 <= p < R * K:
            out[off.pending_cross + p] = 1.0


@batch_kernel
def encode_batch(st, tb, off, seats, out):
    for b in range(st.phase.shape[0]):
        encode_one(st, tb, off, b, seats[b], out[b])


_LAYOUTS: dict[tuple[Variant, int], ObservationLayout] = {}


def layout_for(variant: str | Variant, num_players: int) -> ObservationLayout:
    """The (cached) layout for a variant and player count."""
    v = get_variant(variant)
    key = (v, num_players)
    if key not in _LAYOUTS:
        _LAYOUTS[key] = ObservationLayout(v, num_players)
    return _LAYOUTS[key]


class ObservationView:
    """Read one observation by name, as any agent (a bot, a policy, a test) receives it.

    >>> view = ObservationView(obs, variant="classic", num_players=2)
    >>> view.white_sum, view.marks(0)["red"], view.phase, view.legal_actions

    `obs` may be the observation dict (then `legal_actions` is available) or the vector.
    Seat indices are relative: 0 is the observer, 1 the next seat clockwise, and so on.
    """

    def __init__(self, obs, variant: str | Variant = "classic", num_players: int = 2):
        self.layout = layout_for(variant, num_players)
        self.variant = self.layout.variant
        if isinstance(obs, dict):
            self.vector = np.asarray(obs["observation"])
            self.action_mask = np.asarray(obs["action_mask"])
        else:
            self.vector = np.asarray(obs)
            self.action_mask = None
        if self.vector.shape != (self.layout.size,):
            raise ValueError(
                f"obs: got a vector of shape {self.vector.shape}; the {self.variant.name} "
                f"layout for {num_players} players has shape ({self.layout.size},)"
            )

    def __getitem__(self, name: str) -> np.ndarray:
        """A raw field by its layout name, e.g. ``view["crosses"]`` of shape (P, R, K)."""
        if name not in self.layout.slices:
            raise KeyError(f"no field {name!r}; fields are {list(self.layout.slices)}")
        return self.layout.field(self.vector, name)

    @property
    def num_players(self) -> int:
        return self.layout.num_players

    @property
    def crosses(self) -> np.ndarray:
        """(P, R, K) bool: crossed cells of every sheet, the observer's first."""
        return self["crosses"] > 0.5

    @property
    def locks(self) -> np.ndarray:
        """(P, R) bool: locks each seat has crossed."""
        return self["locks"] > 0.5

    @property
    def penalties(self) -> np.ndarray:
        """(P,) int: penalties of each seat."""
        return np.rint(self["penalties"].sum(axis=-1)).astype(int)

    @property
    def scores(self) -> np.ndarray:
        """(P,) int: current score of each seat."""
        return np.rint(self["scores"] * SCORE_SCALE).astype(int)

    @property
    def lucky_numbers(self) -> list[list[int]]:
        """Each seat's lucky numbers (empty lists in classic)."""
        return [[int(i) + 2 for i in np.flatnonzero(row)] for row in self["lucky_numbers"]]

    @property
    def dice(self) -> dict[str, Any]:
        """``{"white": [w1, w2], "red": d or None, ...}`` like the snapshot (typed as its dicts are)."""
        faces = self["dice"]
        values = [int(np.argmax(f)) + 1 if f.any() else None for f in faces]
        return {"white": values[:2], **dict(zip(self.variant.dice_colors, values[2:]))}

    @property
    def white_sum(self) -> int:
        w1, w2 = self.dice["white"]
        return w1 + w2

    @property
    def locked_rows(self) -> np.ndarray:
        """(R,) bool: locked rows, in sheet order (red, yellow, green, blue in classic)."""
        return self["locked_rows"] > 0.5

    @property
    def phase(self) -> str:
        """``"white"``, ``"lucky"``, ``"color"`` or ``"over"``."""
        return PHASES[int(np.argmax(self["phase"]))]

    @property
    def is_active(self) -> bool:
        return bool(self["is_active"][0] > 0.5)

    @property
    def active_seat(self) -> int:
        """Relative seat of the active player (0 = the observer)."""
        return int(np.argmax(self["active_seat"]))

    @property
    def active_crossed(self) -> bool:
        return bool(self["active_crossed"][0] > 0.5)

    @property
    def pending_cross(self) -> int | None:
        """The observer's own white cross (an action) while it breaks a lucky tie, else None."""
        hits = np.flatnonzero(self["pending_cross"].ravel())
        return int(hits[0]) if hits.size else None

    @property
    def legal_actions(self) -> np.ndarray:
        """Indices of the legal actions (needs the observation dict, not the bare vector)."""
        if self.action_mask is None:
            raise ValueError("legal_actions needs the observation dict with its 'action_mask'")
        return np.flatnonzero(self.action_mask)

    def marks(self, seat: int = 0) -> dict[str, list[int]]:
        """Crossed numbers of each row of a (relative) seat, in sheet order."""
        P = self.num_players
        seat = check_int("seat", seat, minimum=0, maximum=P - 1,
                         accepted=f"a seat from 0 (the observer) to {P - 1} in this {P}-player game")
        numbers = self.variant.row_numbers
        return {
            color: [numbers[r][c] for c in np.flatnonzero(self.crosses[seat, r])]
            for r, color in enumerate(self.variant.row_names)
        }


@batch_kernel
def decode_one(obs, tb, off, st):
    """The inverse of `encode_one` into game 0 of `st`, the observer becoming seat 0."""
    P = st.marks.shape[1]
    K = tb.cells
    R = rows_of(tb)
    F = tb.faces
    lucky_width = 2 * F - 1
    for j in range(P):
        for r in range(R):
            m = 0
            base = off.crosses + (j * R + r) * K
            for c in range(K):
                if obs[base + c] > 0.5:
                    m |= 1 << c
            st.marks[0, j, r] = m
            st.locks[0, j, r] = obs[off.locks + j * R + r] > 0.5
        n = 0
        for k in range(tb.max_penalties):
            if obs[off.penalties + j * tb.max_penalties + k] > 0.5:
                n += 1
        st.penalties[0, j] = n
        i = 0
        st.lucky_numbers[0, j, 0] = 0
        st.lucky_numbers[0, j, 1] = 0
        for x in range(lucky_width * (tb.lucky_count > 0)):
            if obs[off.lucky_numbers + j * lucky_width + x] > 0.5 and i < 2:
                st.lucky_numbers[0, j, i] = x + 2
                i += 1
    for d in range(2 + dice_of(tb)):
        st.dice[0, d] = 0
        for f in range(F):
            if obs[off.dice + d * F + f] > 0.5:
                st.dice[0, d] = f + 1
    phase = 0
    for i in range(4):
        if obs[off.phase + i] > 0.5:
            phase = i
    st.phase[0] = phase
    active = 0
    for j in range(P):
        if obs[off.active_seat + j] > 0.5:
            active = j
    st.active[0] = active
    st.turn[0] = 0
    st.roll[0] = 0
    for j in range(P):
        st.pending[0, j] = NO_DECISION
        st.pending_lucky[0, j] = NO_DECISION
    if phase == COLOR:
        st.pending[0, active] = 0 if obs[off.active_crossed] > 0.5 else R * K
    elif phase == LUCKY:
        for a in range(R * K):
            if obs[off.pending_cross + a] > 0.5:
                st.pending[0, 0] = a


def state_from_observation(view: ObservationView, out: State | None = None) -> State:
    """Rebuild a one-game `State` from what one seat sees, with that seat as seat 0.

    Seats are renumbered relative to the observer (seat j = j seats clockwise), and it is the
    observer's decision (`turn` = 0). Everything public is exact; what no observation holds
    is filled in neutrally: the generator state and roll count are 0, and other seats'
    hidden white choices of the current roll are unknown (not decided). In the colour
    action the active player's white cross, already applied to its sheet, is recorded only
    as *whether* it crossed (what the penalty rule needs). `out` (a one-game state of the
    right player count) is filled in place instead of allocating one.
    """
    st = new_state(view.num_players, variant=view.variant) if out is None else out
    check_state(view.variant, st)
    if st.num_players != view.num_players:
        raise ValueError(f"out: a state of {st.num_players} players; the observation is of {view.num_players}")
    decode_one(np.ascontiguousarray(view.vector, np.float32), view.variant.tables, view.layout.offsets, st)
    return st
