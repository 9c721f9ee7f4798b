"""Reward modes, written once for the AEC environment and the batched engine.

``"win"``: at the end, +1 for a sole winner, 0 for each player sharing the top score, -1 for
the others. ``"score"``: at the end, the final score. ``"score_delta"``: every step, the change
in the player's own score since its last reward (the rewards sum to the final score).
``"margin"``: at the end, own score minus the best other score.

An illegal action, in the envs that end the game on one rather than raise, must never pay
better than playing on: `illegal_return` is the offender's whole return for such a game, one
below the worst any legal ending can give in the mode. The illegal step pays the offender that
return less what it was paid before in the game (``last_scores``: something only in
``"score_delta"``), so its rewards sum to it.
"""

from __future__ import annotations

from typing import Any

from qwixx_env.core.checks import is_number
from qwixx_env.core.compile import inlined
from qwixx_env.core.rules import score
from qwixx_env.core.state import OVER
from qwixx_env.core.variant import Variant

REWARD_MODES = ("win", "score", "score_delta", "margin")
WIN, SCORE, SCORE_DELTA, MARGIN = range(4)


@inlined
def rewards_one(st, tb, b, mode, last_scores, out):
    """Write every seat's reward for the step just taken in game b into `out` (length P).

    `last_scores[b]` holds each seat's score at its last reward; "score_delta" updates it.
    """
    P = st.marks.shape[1]
    if mode == SCORE_DELTA:
        for s in range(P):
            now = score(st, tb, b, s)
            out[s] = now - last_scores[b, s]
            last_scores[b, s] = now
        return
    for s in range(P):
        out[s] = 0
    if st.phase[b] != OVER:
        return
    for s in range(P):
        own = score(st, tb, b, s)
        if mode == SCORE:
            out[s] = own
            continue
        best_other = -(1 << 30)
        for o in range(P):
            if o != s:
                x = score(st, tb, b, o)
                if x > best_other:  # not max(): one compile less on a first run
                    best_other = x
        if mode == MARGIN:
            out[s] = own - best_other
        elif own > best_other:
            out[s] = 1
        elif own < best_other:
            out[s] = -1


def check_reward(reward: str | None, num_players: int) -> str:
    """The reward mode for an option value (None gives the default), or a ValueError."""
    if reward is None:
        return "win" if num_players > 1 else "score"
    if reward not in REWARD_MODES:
        raise ValueError(f"reward: got {reward!r}; expected one of {REWARD_MODES}")
    if num_players == 1 and reward in ("win", "margin"):
        raise ValueError(
            f"reward: got {reward!r} with num_players=1; a solo game has no opponent, "
            "use 'score' or 'score_delta'"
        )
    return reward


def score_bounds(variant: Variant) -> tuple[int, int]:
    """(lowest, highest) final score a sheet of `variant` can reach: every row at the score
    table's lowest (highest) entry, with every penalty (none). Bounds, not always reachable."""
    rows = variant.score_table[: variant.cells + 2]  # 0 to every number and the lock
    R = variant.num_rows
    return R * min(rows) - variant.penalty_points * variant.max_penalties, R * max(rows)


def illegal_return(mode: str, variant: Variant) -> int:
    """The offender's return for a game it ends with an illegal action, by default: one below
    the worst return a legal ending can give in `mode`, so that no seat escapes a bad game by
    an illegal action and an unmasked learner always learns to avoid one.

    ``"win"``: -2 (a loss is -1); ``"score"`` and ``"score_delta"``: the lowest possible score
    minus 1 (classic: -21); ``"margin"``: the lowest possible score minus the highest, minus 1
    (classic: -333).
    """
    low, high = score_bounds(variant)
    return {"win": -2, "score": low - 1, "score_delta": low - 1, "margin": low - high - 1}[mode]


def check_illegal_reward(illegal_reward: Any, mode: str, variant: Variant) -> float:
    """The offender's return for an illegal ending: `illegal_return` for None, else the given
    finite number (a `ValueError` names anything else)."""
    if illegal_reward is None:
        return float(illegal_return(mode, variant))
    if not is_number(illegal_reward):
        raise ValueError(
            f"illegal_reward: got {illegal_reward!r}; expected a finite number (the offender's return for a game "
            f"it ends with an illegal action) or None (default for reward={mode!r}: {illegal_return(mode, variant)})"
        )
    return float(illegal_reward)

