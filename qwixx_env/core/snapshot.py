"""A JSON-serialisable picture of one game's committed state (what `snapshot()` returns)."""

from __future__ import annotations

from typing import Any

import numpy as np

from qwixx_env.core.rules import row_locked, scores
from qwixx_env.core.state import PHASES, State
from qwixx_env.core.variant import COLORS, Variant


def snapshot(variant: Variant, state: State, b: int = 0) -> dict[str, Any]:
    """Game b of `state` as plain dicts and lists (pending white choices are not shown)."""
    P = state.num_players
    locked = [bool(row_locked(state, b, r)) for r in range(4)]
    dice = [int(d) if d > 0 else None for d in state.dice[b]]
    points = scores(variant, state.game(b))[0]
    players = []
    for s in range(P):
        marks = {}
        for r, color in enumerate(COLORS):
            m = int(state.marks[b, s, r])
            marks[color] = [variant.row_numbers[r][c] for c in range(variant.cells) if m >> c & 1]
        players.append(
            {
                "marks": marks,
                "locks": [c for r, c in enumerate(COLORS) if state.locks[b, s, r]],
                "penalties": int(state.penalties[b, s]),
                "lucky_numbers": [int(x) for x in state.lucky[b, s, : variant.lucky_count]],
                "score": int(points[s]),
            }
        )
    return {
        "variant": variant.name,
        "num_players": P,
        "roll": int(state.roll[b]),
        "active_player": int(state.active[b]),
        "phase": PHASES[int(state.phase[b])],
        "dice": {"white": dice[:2], **dict(zip(COLORS, dice[2:]))},
        "locked_rows": [c for c, is_locked in zip(COLORS, locked) if is_locked],
        "players": players,
    }


def state_from_snapshot(variant: Variant, snap: dict[str, Any]) -> State:
    """Rebuild a one-game `State` from a snapshot (its committed state; nothing pending).

    Useful for hand-set positions in tests and for search. The generator state is zero;
    set `state.rng` before rolling on.
    """
    from qwixx_env.core.state import new_state  # local: keeps this module's imports flat

    P = int(snap["num_players"])
    st = new_state(P)
    for s, player in enumerate(snap["players"]):
        for r, color in enumerate(COLORS):
            for number in player["marks"].get(color, []):
                st.marks[0, s, r] |= np.int32(1 << int(variant.tables.cell_of[r, number]))
            st.locks[0, s, r] = color in player.get("locks", [])
        st.penalties[0, s] = int(player.get("penalties", 0))
        for i, x in enumerate(player.get("lucky_numbers", [])):
            st.lucky[0, s, i] = int(x)
    dice = snap["dice"]
    values = list(dice["white"]) + [dice[c] for c in COLORS]
    st.dice[0] = [0 if d is None else int(d) for d in values]
    st.roll[0] = int(snap.get("roll", 0))
    st.active[0] = int(snap.get("active_player", 0))
    st.phase[0] = PHASES.index(snap.get("phase", "white"))
    st.turn[0] = st.active[0]
    return st
