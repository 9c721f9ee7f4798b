"""Game records of JAX-played games: what `qwixx_env.replay` rebuilds, as the core's games keep them.

A record (``qwixx_env.record/1``, `qwixx_env.core.engine.Engine.record`) holds the table's
options, the seed, the generator state the game started from, the dice of every roll, every
decision as ``[seat, action]``, an illegal ending if there was one, and the final snapshot. A
compiled JAX loop cannot append to lists, so each step leaves a fixed-size `Trace` (the seat,
the action, whether it was a decision of a live game, the dice if it rolled anew); a
`jax.lax.scan` stacks them, and `records` turns the stack into the records on the host::

    start = jnp.asarray(seed_states(range(100, 100 + B)))         # the core's seeds 100 ...
    def turn(state, key):
        action = policy(state, key)
        after = jax.vmap(env.step)(state, action)
        return after, jax.vmap(trace)(state, action, after)
    last, traces = jax.lax.scan(turn, jax.vmap(env.init_rng)(start), keys)   # (T, B, ...) traces
    recs = records(env, start, traces, last, seeds=range(100, 100 + B))
    qwixx_env.replay(recs[0]).snapshot() == recs[0]["snapshot"]

Several scans in turn (`concat_traces`) record games longer than one scan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from qwixx_env.core.checks import is_int
from qwixx_env.core.engine import RECORD_FORMAT
from qwixx_env.core.snapshot import snapshot
from qwixx_env.core.state import NO_SEAT, OVER, new_state
from qwixx_env.core.variant import custom_sheet
from qwixx_env.jax.game import Qwixx, State, seed_states

__all__ = ["Trace", "concat_traces", "records", "trace"]


class Trace(NamedTuple):
    """What a record keeps of one step of one game (a scan over a batch stacks them (T, B, ...))."""

    seat: jax.Array  # () int32: the seat that decided
    action: jax.Array  # () int32: what it played
    decided: jax.Array  # () bool: a legal decision of a live game (one of the record's decisions)
    illegal: jax.Array  # () bool: an illegal action that ended the game here (the record's illegal_end)
    rolled: jax.Array  # () bool: a new roll followed
    dice: jax.Array  # (2 + D,) int32: the dice after the step (as rolled, where `rolled`)


def trace(before: State, action: jax.Array, after: State) -> Trace:
    """The `Trace` of the step that took one game from `before` to `after` by `action`
    (``after = env.step(before, action)``); pure, for `jit`, `vmap` and `scan`."""
    live = before.phase != OVER
    illegal = live & (after.illegal_end != NO_SEAT) & (before.illegal_end == NO_SEAT)
    return Trace(
        seat=before.turn,
        action=jnp.asarray(action, jnp.int32),
        decided=live & ~illegal,
        illegal=illegal,
        rolled=after.roll != before.roll,
        dice=after.dice,
    )


def concat_traces(parts: Sequence[Trace]) -> Trace:
    """Stacks of traces from scans run one after the other, as one stack (along time, axis 0)."""
    if not parts:
        raise ValueError("parts: got no traces; expected one stack of traces or more")
    return Trace(*(np.concatenate([np.asarray(x) for x in field]) for field in zip(*parts)))


def records(env: Qwixx, start: Any, traces: Trace, last: State, seeds: Any = None) -> list[dict[str, Any]] | dict:
    """The records (``qwixx_env.record/1``) of games played in JAX on table `env`, which
    `qwixx_env.replay` rebuilds to the same snapshot: a list for a batch, one dict for one game.

    `start`: the generator states the games started from, (B, 2) uint32 words (what
    ``jax.vmap(env.init_rng)`` was given; `seed_states`), or (2,) for one game. `traces`: each
    step's `Trace`, stacked along time first, (T, B, ...) or (T, ...). `last`: the games after
    those steps, batched as `start` is (a game still live gives the record of the game so far).
    `seeds`: the core seeds of the games, if they started from seeds (the record's ``seed``;
    they must be the seeds of `start`), else None. A `ValueError` names what does not fit.
    """
    start = np.asarray(start)
    one = start.shape == (2,)
    if one:
        start = start[None]
        traces = Trace(*(np.asarray(x)[:, None] for x in traces))
        last = State(*(np.asarray(x)[None] for x in last))
    if start.ndim != 2 or start.shape[1] != 2:
        raise ValueError(f"start: got shape {start.shape}; expected (B, 2) generator words, or (2,) for one game")
    B, P = start.shape[0], env.num_players
    host = State(*(np.asarray(x) for x in last))
    if host.marks.shape != (B, P, env.variant.num_rows):
        raise ValueError(
            f"last: got sheets of shape {host.marks.shape}; expected {(B, P, env.variant.num_rows)} "
            f"({B} games of this table)"
        )
    steps = Trace(*(np.asarray(x) for x in traces))
    if steps.seat.ndim != 2 or steps.seat.shape[1] != B:
        raise ValueError(f"traces: got seats of shape {steps.seat.shape}; expected (T, {B}), time first")
    if seeds is not None:
        seeds = [seeds] if is_int(seeds) else list(seeds)
        if len(seeds) != B or not np.array_equal(seed_states(seeds), start):
            raise ValueError(
                f"seeds: got {seeds[:4]}{'...' if len(seeds) > 4 else ''}; expected the {B} seeds "
                "the games started from (their seed_states are `start`), or None"
            )
    rolls_seen = steps.rolled.sum(axis=0)
    if not np.array_equal(rolls_seen, host.roll):
        b = int(np.flatnonzero(rolls_seen != host.roll)[0])
        raise ValueError(
            f"traces: game {b} rolled {int(rolls_seen[b])} time(s) after its first roll, but `last` "
            f"stands at roll {int(host.roll[b])}; expected the traces of the steps that led to `last`"
        )
    first_dice = np.asarray(jax.jit(jax.vmap(env.init_rng))(jnp.asarray(start, jnp.uint32)).dice)
    core = new_state(P, B, env.variant)
    for b in range(B):
        env.to_core(State(*(x[b] for x in host)), core, b)
    decided, illegal = steps.decided.T, steps.illegal.T
    out = []
    for b in range(B):
        sheet = custom_sheet(env.table.variant)  # each record its own dicts, as the core's
        rec: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "options": env.table.as_dict(),
            **({"sheet": sheet} if sheet is not None else {}),
            "seed": None if seeds is None else int(seeds[b]),
            "rng_state": f"{int(start[b, 0]) << 32 | int(start[b, 1]):#018x}",
            "rolls": [_dice(first_dice[b])],
            "decisions": [],
        }
        for t in np.flatnonzero(decided[b]).tolist():
            rec["decisions"].append([int(steps.seat[t, b]), int(steps.action[t, b])])
            if steps.rolled[t, b]:
                rec["rolls"].append(_dice(steps.dice[t, b]))
        ended = np.flatnonzero(illegal[b])
        if ended.size:
            t = int(ended[0])
            rec["illegal_end"] = {"seat": int(steps.seat[t, b]), "action": int(steps.action[t, b])}
        rec["snapshot"] = snapshot(env.variant, core, b)
        out.append(rec)
    return out[0] if one else out


def _dice(dice: np.ndarray) -> list[int | None]:
    """A roll's dice as a record lists them (`Engine.dice`: None for a die out of play)."""
    return [int(d) if d > 0 else None for d in dice.tolist()]
