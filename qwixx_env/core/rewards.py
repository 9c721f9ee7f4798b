"""Reward modes, written once for the AEC environment and the batched engine.

``"win"``: at the end, +1 for a sole winner, 0 for each player sharing the top score, -1 for
the others. ``"score"``: at the end, the final score. ``"score_delta"``: every step, the change
in the player's own score since its last reward (the rewards sum to the final score).
``"margin"``: at the end, own score minus the best other score.
"""

from __future__ import annotations

from qwixx_env.core.compile import inline_kernel, kernel
from qwixx_env.core.rules import score
from qwixx_env.core.state import OVER

REWARD_MODES = ("win", "score", "score_delta", "margin")
WIN, SCORE, SCORE_DELTA, MARGIN = range(4)


@inline_kernel()  # see rules._inline
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


@kernel(refcounts=False)
def rewards_batch(st, tb, mode, last_scores, out):
    for b in range(st.phase.shape[0]):
        rewards_one(st, tb, b, mode, last_scores, out[b])


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
