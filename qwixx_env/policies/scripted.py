"""Fast scripted policies over the game state: the batched engine's opponents, the default
policy of search playouts, and the scripted bots all run these compiled kernels.

A policy reads only public information (committed sheets, dice, phase, lucky numbers; never
`pending` choices of other seats), so running it on the state is the same as running it on
the seat's observation. Randomness comes from a separate generator array (`policy_rng`), never
from a game's own generator: the dice of a game do not depend on who plays it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from qwixx_env.core.compile import inline_kernel, inlined
from qwixx_env.core.rules import active_crossed, count, legal_mask_one, random_below, rightmost, rows_of
from qwixx_env.core.state import COLOR
from qwixx_env.policies.heuristic import heuristic_action

RANDOM, GREEDY, HEURISTIC = 0, 1, 2  # policy kinds (the batched engine's opponent codes)
POLICY_NAMES = ("random", "greedy", "heuristic")


class ScriptedPolicies(NamedTuple):
    """What the scripted policies play with (`policy_action`), the same for every policy kind."""

    max_skip: int  # the greedy policy's (`greedy_defaults`)
    penalty_worry: int  # the greedy policy's
    weights: np.ndarray  # the heuristic's, `policies.heuristic.weights_array`
    rng: np.ndarray  # (B,) uint64: the random policy's generator of each game slot


@inlined
def random_legal(mask, policy_rng, b):
    """A uniformly random legal action of a 0/1 mask row, from `policy_rng[b]`."""
    n = 0
    for a in range(mask.shape[0]):
        n += mask[a]
    k = random_below(policy_rng, b, n)
    for a in range(mask.shape[0]):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return mask.shape[0] - 1


@inlined
def skipped(st, tb, b, s, action):
    """How many open numbers a cross skips (lost for good) in seat s's row, given the
    seat's own committed crosses and, in the colour action, its white cross of this roll."""
    r = action // tb.cells
    c = action % tb.cells
    return c - rightmost(st.marks[b, s, r]) - 1


@inline_kernel(python=True)  # the greedy bot calls it from Python too
def greedy_action(st, tb, b, mask, max_skip, penalty_worry):
    """`greedy`: the legal cross that skips fewest numbers, if it skips at most `max_skip`.

    Ties go to the row with more crosses (closer to its lock). As the active player in the
    colour action with nothing crossed this roll and at least `penalty_worry` penalties, any
    cross beats a penalty. A lucky tie takes the first tied row.
    """
    K = tb.cells
    s = st.turn[b]
    best = -1
    best_skip = 1 << 30
    best_count = -1
    for a in range(rows_of(tb) * K):
        if not mask[a]:
            continue
        k = skipped(st, tb, b, s, a)
        n = count(st.marks[b, s, a // K])
        if k < best_skip or (k == best_skip and n > best_count):
            best, best_skip, best_count = a, k, n
    pass_action = rows_of(tb) * K
    if best < 0:
        return pass_action
    if not mask[pass_action]:
        return best  # a lucky tie: pass is not an option
    if best_skip <= max_skip:
        return best
    from_penalty = st.phase[b] == COLOR and not active_crossed(st, tb, b)
    if from_penalty and st.penalties[b, s] >= penalty_worry:
        return best
    return pass_action


@inlined
def policy_action(kind, st, tb, b, policies, ws):
    """The action of scripted policy `kind` for the seat to act in game b, as `policies` (a
    `ScriptedPolicies`) set it; `ws` is the caller's `policies.scratch.Scratch` (its `mask`
    takes the legal actions)."""
    mask = ws.mask
    legal_mask_one(st, tb, b, mask)
    if kind == GREEDY:
        return greedy_action(st, tb, b, mask, policies.max_skip, policies.penalty_worry)
    if kind == HEURISTIC:
        return heuristic_action(st, tb, b, mask, policies.weights, ws)
    return random_legal(mask, policies.rng, b)


# The best max_skip, measured by `benchmarks/baselines.py greedy` (docs/baselines.md): alone,
# skipping at most one number scores most; with opponents the game is shorter and 2 wins
# most (in 2-, 3- and 4-player classic).
BEST_MAX_SKIP_SOLO, BEST_MAX_SKIP_MULTIPLAYER = 1, 2
PENALTY_WORRY = 2


def greedy_defaults(num_players: int) -> tuple[int, int]:
    """(max_skip, penalty_worry) of the default greedy policy for `num_players` players: the
    best max_skip for the player count. The `greedy` bot, the batched engine's greedy
    opponents and greedy playouts all take it from here."""
    return (BEST_MAX_SKIP_SOLO if num_players == 1 else BEST_MAX_SKIP_MULTIPLAYER), PENALTY_WORRY

