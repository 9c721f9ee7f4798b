"""A JSON-serialisable picture of one game's committed state (what `snapshot()` returns)."""

from __future__ import annotations

from typing import Any

import numpy as np

from qwixx_env.core.checks import is_int
from qwixx_env.core.rules import dice_out_of_play, row_locked, scores
from qwixx_env.core.state import PHASES, State, new_state
from qwixx_env.core.variant import Variant

PLAYER_FIELDS = ("marks", "locks", "penalties", "lucky_numbers", "score")  # each player of a snapshot


def snapshot(variant: Variant, state: State, b: int = 0) -> dict[str, Any]:
    """Game b of `state` as plain dicts and lists (pending white choices are not shown)."""
    P = state.num_players
    rows = variant.row_names
    locked = [bool(row_locked(state, b, r)) for r in range(len(rows))]
    # Rule 8 from the locks, not the dice array: a lock in the colour action that ends the game
    # leaves its die's face in the state, as no roll follows to take it out of play.
    gone = int(dice_out_of_play(state, variant.tables, b))
    dice = [int(d) if d > 0 and not (i >= 2 and gone >> (i - 2) & 1) else None for i, d in enumerate(state.dice[b])]
    points = scores(variant, state.game(b))[0]
    players = []
    for s in range(P):
        marks = {}
        for r, color in enumerate(rows):
            m = int(state.marks[b, s, r])
            marks[color] = [variant.row_numbers[r][c] for c in range(variant.cells) if m >> c & 1]
        player = (
            marks,
            [c for r, c in enumerate(rows) if state.locks[b, s, r]],
            int(state.penalties[b, s]),
            [int(x) for x in state.lucky_numbers[b, s, : variant.lucky_count]],
            int(points[s]),
        )
        players.append(dict(zip(PLAYER_FIELDS, player)))
    snap = {
        "variant": variant.name,
        "num_players": P,
        "roll": int(state.roll[b]),
        "active_player": int(state.active[b]),
        "phase": PHASES[int(state.phase[b])],
        "dice": {"white": dice[:2], **dict(zip(variant.dice_colors, dice[2:]))},
        "locked_rows": [c for c, is_locked in zip(rows, locked) if is_locked],
        "players": players,
    }
    if state.illegal_end[b] >= 0:  # only then: the snapshot of every other game keeps its keys
        snap["illegal_end"] = {"seat": int(state.illegal_end[b])}
    return snap


def state_from_snapshot(variant: Variant, snap: dict[str, Any]) -> State:
    """Rebuild a one-game `State` from a snapshot (its committed state; nothing pending).

    Useful for hand-set positions in tests and for search. The generator state is zero;
    set `state.rng` before rolling on. A row is locked when a player's ``locks`` lists it (the
    lock cross is on that sheet), so ``locked_rows``, where given, must agree with the sheets,
    and the white dice and every coloured die still in play must be from 1 to the variant's
    faces; a die out of play (a locked row's, rule 8) is out whatever it says (None in a
    snapshot). Anything else is a `ValueError` naming it.
    """
    P = int(snap["num_players"])
    if len(snap["players"]) != P:
        raise ValueError(f"players: got {len(snap['players'])} sheets; num_players is {P}")
    st = new_state(P, variant=variant)
    rows = variant.row_names
    for s, player in enumerate(snap["players"]):
        for r, color in enumerate(rows):
            for number in player["marks"].get(color, []):
                st.marks[0, s, r] |= np.int32(1 << int(variant.tables.cell_of[r, number]))
            st.locks[0, s, r] = color in player.get("locks", [])
        st.penalties[0, s] = int(player.get("penalties", 0))
        for i, x in enumerate(player.get("lucky_numbers", [])):
            st.lucky_numbers[0, s, i] = int(x)
    locked = [c for r, c in enumerate(rows) if row_locked(st, 0, r)]
    if "locked_rows" in snap and sorted(snap["locked_rows"], key=str) != sorted(locked):
        raise ValueError(
            f"locked_rows: got {snap['locked_rows']!r}; the players' locks lock {locked} (a row is locked "
            "by the lock cross on the sheet of whoever locked it: list it in that player's 'locks')"
        )
    dice = snap["dice"]
    colors = variant.dice_colors
    gone = int(dice_out_of_play(st, variant.tables, 0))
    out = [c for d, c in enumerate(colors) if gone >> d & 1]
    for name, value in [("white", d) for d in dice["white"]] + [(c, dice[c]) for c in colors]:
        if name in out:
            continue  # out of play, as the engine holds it after the lock
        is_die = is_int(value)
        if not (is_die and 1 <= value <= variant.faces):
            raise ValueError(
                f"dice.{name}: got {value!r}; expected 1 to {variant.faces} ({variant.name})"
                + ("" if name == "white" else f", as the {name} row is open" if name in rows
                   else f", as the {name} die is in play")
            )
    if len(dice["white"]) != 2:
        raise ValueError(f"dice.white: got {dice['white']!r}; expected two dice")
    values = list(dice["white"]) + [None if c in out else dice[c] for c in colors]
    st.dice[0] = [0 if d is None else int(d) for d in values]
    st.roll[0] = int(snap.get("roll", 0))
    st.active[0] = int(snap.get("active_player", 0))
    st.phase[0] = PHASES.index(snap.get("phase", "white"))
    st.turn[0] = st.active[0]
    if snap.get("illegal_end") is not None:
        seat = snap["illegal_end"].get("seat") if isinstance(snap["illegal_end"], dict) else None
        if type(seat) is not int or not 0 <= seat < P or st.phase[0] != PHASES.index("over"):
            raise ValueError(f"illegal_end: got {snap['illegal_end']!r} in phase {snap.get('phase')!r}; expected "
                             f"{{'seat': 0 to {P - 1}}} in a game whose phase is 'over'")
        st.illegal_end[0] = seat
    return st
