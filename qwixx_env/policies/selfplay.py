"""Whole games of the teacher-free self-play learner, played in one compiled call: its
training data and its evaluations (`qwixx_env.training.selfplay`).

Each seat of each game plays one of: the afterstate policy with the learner's current
network (`LEARNER`), the same policy with an earlier snapshot of it (`SNAPSHOT`), or, in
evaluations only, a scripted policy (`SCRIPTED + scripted.RANDOM` and so on). The networks
read the plain features (`policies.value.NO_HEURISTIC`): nothing a scripted policy computes
reaches the learner's decisions or its data. Recorded seats take a share `explore` of their
decisions at random and have the plain features of every roll start written from their side;
the caller labels them (the outcome, or TD(lambda) targets).

Every random draw comes from a per-game splitmix64 generator (`explore_rng`), never from a
game's dice generator or a global one: the same seeds give the same games on any thread.
"""

from __future__ import annotations

import numpy as np

from qwixx_env.core.compile import kernel
from qwixx_env.core.rules import apply_one, legal_mask_one, random_below
from qwixx_env.core.state import OVER
from qwixx_env.policies.afterstate import afterstate_action
from qwixx_env.policies.recorded import record_roll_start
from qwixx_env.policies.scripted import policy_action, random_legal

LEARNER, SNAPSHOT, SCRIPTED = 0, 1, 2  # seat kinds; SCRIPTED + k plays scripted policy kind k
_EXPLORE_SCALE = 1 << 30


@kernel()
def play_games(st, tb, plain, learner, snapshot, kinds, records, explore, explore_rng, policies,
               feats, rows_game, rows_seat, ws):
    """Play every game of `st` to its end, seat s of game b as kinds[b, s] says (see the
    module docstring; `learner` and `snapshot` are networks of the same shape, `plain` is
    `NO_HEURISTIC`, `policies` a `scripted.ScriptedPolicies` for scripted seats). Returns
    (feature rows written, decisions taken by `LEARNER` seats). `ws`: a
    `policies.scratch.Scratch` sized for the networks."""
    mask, values = ws.mask, ws.values
    threshold = np.int64(explore * _EXPLORE_SCALE)
    n = 0
    decisions = 0
    for b in range(st.phase.shape[0]):
        last_roll = -1
        while st.phase[b] != OVER:
            if st.roll[b] != last_roll:
                last_roll = st.roll[b]
                n = record_roll_start(st, tb, b, plain, records, feats, rows_game, rows_seat, n, ws)
            s = st.turn[b]
            kind = kinds[b, s]
            if kind >= SCRIPTED:
                a = policy_action(kind - SCRIPTED, st, tb, b, policies, ws)
            else:
                legal_mask_one(st, tb, b, mask)
                if records[b, s] and random_below(explore_rng, b, _EXPLORE_SCALE) < threshold:
                    a = random_legal(mask, explore_rng, b)
                elif kind == LEARNER:
                    a = afterstate_action(st, tb, b, mask, plain, learner, values, ws)
                else:
                    a = afterstate_action(st, tb, b, mask, plain, snapshot, values, ws)
                if kind == LEARNER:
                    decisions += 1
            apply_one(st, tb, b, a)
    return n, decisions
