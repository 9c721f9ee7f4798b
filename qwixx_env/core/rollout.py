"""Monte Carlo rollouts over the rules kernels: the `rollout` search bot's engine.

For each legal action of the seat to decide, play K continuations of the game from a copy of
the state with a fast default policy for every seat, and average the outcome for that seat:
the final score (solo) or the share of the win plus a small margin term (multi-player). The
K continuations share their dice seeds across actions (common random numbers), so the
comparison between actions is not drowned in dice luck.

What the observer cannot know is sampled: the future dice, and the white choices that seats
before it made in the current white action (taken from the default policy, as the others
would play it).
"""

from __future__ import annotations

import numpy as np

from qwixx_env.core.compile import kernel
from qwixx_env.core.policies import policy_action
from qwixx_env.core.rules import apply_one, random_below, score
from qwixx_env.core.state import NO_DECISION, OVER, WHITE

MARGIN_WEIGHT = 1e-3  # multi-player: win share first, then the margin breaks near-ties


@kernel()
def _copy_game(src, dst):
    dst.marks[0] = src.marks[0]
    dst.locks[0] = src.locks[0]
    dst.penalties[0] = src.penalties[0]
    dst.lucky[0] = src.lucky[0]
    dst.dice[0] = src.dice[0]
    dst.active[0] = src.active[0]
    dst.turn[0] = src.turn[0]
    dst.phase[0] = src.phase[0]
    dst.pending[0] = src.pending[0]
    dst.pending_lucky[0] = src.pending_lucky[0]
    dst.roll[0] = src.roll[0]


@kernel()
def _outcome(st, tb, seat):
    P = st.marks.shape[1]
    own = score(st, tb, 0, seat)
    if P == 1:
        return float(own)
    best_other = -(1 << 30)
    ties = 1
    for s in range(P):
        if s != seat:
            x = score(st, tb, 0, s)
            if x > best_other:
                best_other = x
    for s in range(P):
        if s != seat and score(st, tb, 0, s) == own:
            ties += 1
    share = 0.0
    if own > best_other:
        share = 1.0
    elif own == best_other:
        share = 1.0 / ties
    return share + MARGIN_WEIGHT * (own - best_other)


@kernel()
def rollout_values(base, work, tb, legal, continuations, kind, max_skip, penalty_worry, weights, seeds, policy_rng,
                   mask, out):
    """Write into `out[i]` the mean outcome, for the seat to decide in `base` (a one-game
    state), of playing `legal[i]` and then `continuations` playouts with policy `kind`.
    `seeds[k]` seeds the dice of playout k (the same for every action)."""
    seat = base.turn[0]
    P = base.marks.shape[1]
    for i in range(legal.shape[0]):
        total = 0.0
        for k in range(continuations):
            _copy_game(base, work)
            work.rng[0] = seeds[k]
            if work.phase[0] == WHITE:
                # Seats before this one in the white action chose already; sample their choices.
                s = work.active[0]
                while s != seat:
                    if work.pending[0, s] == NO_DECISION:
                        work.turn[0] = s
                        work.pending[0, s] = policy_action(kind, work, tb, 0, mask, policy_rng, max_skip,
                                                           penalty_worry, weights)
                    s = (s + 1) % P
                work.turn[0] = seat
            apply_one(work, tb, 0, legal[i])
            while work.phase[0] != OVER:
                action = policy_action(kind, work, tb, 0, mask, policy_rng, max_skip, penalty_worry, weights)
                apply_one(work, tb, 0, action)
            total += _outcome(work, tb, seat)
        out[i] = total / continuations


@kernel()
def fill_seeds(rng, seeds):
    """Draw playout seeds from a one-element generator array."""
    for k in range(seeds.shape[0]):
        seeds[k] = np.uint64(random_below(rng, 0, 1 << 62))
