"""Monte Carlo playouts over the rules kernels: the `rollout` search bot's engine.

`rollout_outcomes` plays, for each legal action of the seat to decide and each playout seed,
the action and then the game on from a copy of the state with a scripted default policy for
every seat, and records the outcome for that seat: scored exactly at the end of the game
(`horizon` 0), or by the heuristic's evaluation of the position some rolls ahead. The seeds
are shared across actions (common random numbers), so outcomes are paired by playout.

What the observer cannot know is sampled: the future dice, and the white choices that seats
before it made in the current white action (taken from the default policy, as the others
would play it). `qwixx_env.bots.rollout` turns the outcomes into a decision.

`play_out` plays one game to its end with a scripted policy for every seat and writes the
rewards: the leaf evaluation of OpenSpiel's search (`integrations.openspiel_bots`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from qwixx_env.core.compile import batch_kernel
from qwixx_env.core.rewards import rewards_one
from qwixx_env.core.rules import apply_one, best_other_score, random_below, score, share_of_win
from qwixx_env.core.state import NO_DECISION, OVER, WHITE
from qwixx_env.policies.heuristic import position_value
from qwixx_env.policies.scripted import ScriptedPolicies, policy_action
from qwixx_env.policies.value import value_features, win_chance

# How a truncated playout's last position is scored (`rollout_outcomes`' `leaf`).
LEAF_HEURISTIC = 0  # the heuristic's evaluation, `position_value`
LEAF_NETWORK = 1  # a learned win chance over `policies.value.value_features`, `policies.value.win_chance`


class Playouts(NamedTuple):
    """The playouts each candidate action is tried with (`rollout_outcomes`)."""

    seeds: np.ndarray  # (K,) uint64: the dice seed of each playout, the same for every action
    kind: int  # the default policy every seat plays (`policies.scripted.POLICY_NAMES` index)
    policies: ScriptedPolicies  # how it plays; its `rng` has one generator per thread
    horizon: int  # rolls to play before scoring the position (0: to the end of the game)
    leaf: int  # how a truncated playout is scored: LEAF_HEURISTIC or LEAF_NETWORK
    leaf_weights: np.ndarray  # the heuristic weights of the leaf (and of the network's features)
    net: tuple  # the leaf network's layers (w1, b1, w2, b2, w3, b3)
    margin_weight: float  # weight of the score margin added to a finished game's win share


@batch_kernel
def _copy_game(src, dst, t):
    """Copy the one game of `src` into game slot t of `dst` (element by element: a slice
    assignment may copy its source through a temporary array, which needs the allocator)."""
    for s in range(src.marks.shape[1]):
        for r in range(src.marks.shape[2]):
            dst.marks[t, s, r] = src.marks[0, s, r]
            dst.locks[t, s, r] = src.locks[0, s, r]
        dst.penalties[t, s] = src.penalties[0, s]
        dst.pending[t, s] = src.pending[0, s]
        dst.pending_lucky[t, s] = src.pending_lucky[0, s]
        for i in range(src.lucky_numbers.shape[2]):
            dst.lucky_numbers[t, s, i] = src.lucky_numbers[0, s, i]
    for i in range(src.dice.shape[1]):
        dst.dice[t, i] = src.dice[0, i]
    dst.active[t] = src.active[0]
    dst.turn[t] = src.turn[0]
    dst.phase[t] = src.phase[0]
    dst.roll[t] = src.roll[0]


@batch_kernel
def _outcome(st, tb, t, seat, margin_weight):
    P = st.marks.shape[1]
    own = score(st, tb, t, seat)
    if P == 1:
        return float(own)
    best_other, at_best = best_other_score(st, tb, t, seat)
    return share_of_win(own, best_other, at_best) + margin_weight * (own - best_other)


@batch_kernel
def rollout_outcomes(base, work, tb, legal, playouts, t, threads, ws, out):
    """Write into `out[i, k]` the outcome, for the seat to decide in `base` (a one-game
    state), of playing `legal[i]` and then playout k of `playouts` (a `Playouts`) with policy
    ``playouts.kind`` for every seat; ``playouts.seeds[k]`` seeds the dice of playout k (the
    same for every action: common random numbers). `out` has shape (len(legal), len(seeds)).

    A horizon of 0 plays to the end and scores the outcome (`_outcome`); a horizon of n rolls
    stops at the start of the n-th roll after this one (or at the end) and scores the
    position with the leaf: the heuristic's evaluation (`position_value` with the leaf
    weights), or the learned win chance (a finished game then scores its exact outcome, as at
    horizon 0).

    Splitting the work over threads: this call plays the playouts j = i * len(seeds) + k with
    j % threads == t, in game slot t of `work`, with generator ``playouts.policies.rng[t]``
    and the thread's own `ws` (a `policies.scratch.Scratch` sized for the network); calls for
    t = 0 .. threads-1 may run at once (the kernel releases the GIL). An outcome depends on
    its seed alone, so the split changes no result."""
    seeds = playouts.seeds
    items = legal.shape[0] * seeds.shape[0]
    for j in range(t, items, threads):
        i = j // seeds.shape[0]
        k = j % seeds.shape[0]
        out[i, k] = _playout(base, work, t, tb, legal[i], seeds[k], playouts, ws)


@batch_kernel
def _playout(base, work, t, tb, action, seed, playouts, ws):
    """One playout of `rollout_outcomes` in game slot t of `work`: its outcome. `ws`: the
    thread's `policies.scratch.Scratch`."""
    kind, policies, horizon, leaf = playouts.kind, playouts.policies, playouts.horizon, playouts.leaf
    seat = base.turn[0]
    P = base.marks.shape[1]
    _copy_game(base, work, t)
    work.rng[t] = seed
    policies.rng[t] = seed ^ np.uint64(0x5DEECE66D)
    if work.phase[t] == WHITE:
        # Seats before this one in the white action chose already; sample their choices.
        s = work.active[t]
        while s != seat:
            if work.pending[t, s] == NO_DECISION:
                work.turn[t] = s
                work.pending[t, s] = policy_action(kind, work, tb, t, policies, ws)
            s = (s + 1) % P
        work.turn[t] = seat
    apply_one(work, tb, t, action)
    stop = base.roll[0] + horizon
    while work.phase[t] != OVER and (horizon == 0 or work.roll[t] < stop):
        a = policy_action(kind, work, tb, t, policies, ws)
        apply_one(work, tb, t, a)
    if horizon == 0 or (leaf == LEAF_NETWORK and work.phase[t] == OVER):
        return _outcome(work, tb, t, seat, playouts.margin_weight)
    if leaf == LEAF_NETWORK:
        value_features(work, tb, t, seat, playouts.leaf_weights, ws.features, ws)
        return win_chance(ws.features, playouts.net, ws.hidden1, ws.hidden2)
    return position_value(work, tb, t, seat, playouts.leaf_weights, ws)


@batch_kernel
def root_action(base, work, tb, kind, policies, ws):
    """The default policy's own choice for the seat to decide in `base` (game slot 0 of
    `work`, played as `policies` say with generator ``policies.rng[0]``, scratch `ws`)."""
    _copy_game(base, work, 0)
    return policy_action(kind, work, tb, 0, policies, ws)


@batch_kernel
def play_out(st, tb, kind, policies, ws, mode, last_scores, out):
    """Play game 0 of `st` to its end, every seat playing scripted policy `kind` as `policies`
    (a `policies.scripted.ScriptedPolicies`) set it; write every seat's reward in `mode` into
    `out` (length P)."""
    while st.phase[0] != OVER:
        apply_one(st, tb, 0, policy_action(kind, st, tb, 0, policies, ws))
    rewards_one(st, tb, 0, mode, last_scores, out)


@batch_kernel
def fill_seeds(rng, seeds):
    """Draw playout seeds from a one-element generator array."""
    for k in range(seeds.shape[0]):
        seeds[k] = np.uint64(random_below(rng, 0, 1 << 62))
