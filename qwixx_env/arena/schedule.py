"""Who plays: the bots of a tournament and the lineups that seat them.

A bot is a bot spec (`qwixx_env.bots.specs`: a registry name with parameters,
``"greedy:max_skip=2"`` on the command line, an installed checkpoint's name or a checkpoint's
path such as ``"runs/my2p/final"``), a ``("greedy", {"max_skip": 2})`` pair in Python, or a
factory ``factory(*, table, seed) -> Bot`` (`qwixx_env.bots.specs.as_spec`); each is read into
a `BotSpec` and made for every game by `qwixx_env.bots.make_bot`.

The lineups give every bot every seat equally often (see `lineups`); a *deal* (one seed of
the dice) is played once by every lineup, and *table game* g is deal ``g // L`` played by
lineup ``g % L`` for L lineups.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from qwixx_env.bots.specs import BotSpec, as_spec, check_params
from qwixx_env.bots.specs import parse_spec as parse_bot

ARENA_SETS = " (the --variant / --players / --seed options, or run_arena's arguments)"


def bot_entry(spec: Any) -> BotSpec:
    """A `BotSpec` from any accepted spelling (see the module docstring), refusing parameters
    a tournament sets itself (the table options) and `lucky` for a bot that does not model the
    lucky rule."""
    spec = as_spec(spec)
    check_params(spec, "the arena", ARENA_SETS)
    return spec


def bot_entries(specs: Sequence[Any]) -> list[BotSpec]:
    """Entries for a list of specs, with repeated labels numbered (``greedy``, ``greedy#2``)."""
    one_pair = isinstance(specs, tuple) and len(specs) == 2 and isinstance(specs[1], dict)
    if isinstance(specs, str) or one_pair or not len(specs):
        raise ValueError(f"bots: got {specs!r}; expected a non-empty list of bots")
    entries = [dataclasses.replace(bot_entry(s)) for s in specs]  # copies: labels may change
    seen: dict[str, int] = {}
    for e in entries:
        seen[e.label] = seen.get(e.label, 0) + 1
        if seen[e.label] > 1:
            e.label = f"{e.label}#{seen[e.label]}"
    return entries


def lineups(num_bots: int, num_players: int) -> list[tuple[int, ...]]:
    """The seatings of one deal: tuples of bot indices, seat 0 first.

    - ``num_bots >= num_players``: every set of `num_players` bots (in pool order), each in
      its `num_players` cyclic rotations. For 2 players that is every ordered pair; solo,
      every bot alone.
    - ``num_bots < num_players``: `num_bots` lineups, lineup j seating bot ``(j + s) % k`` in
      seat s (one bot fills several seats; with one bot it is self-play).

    Either way every bot sits in every seat equally often.
    """
    k, P = num_bots, num_players
    if k < P:
        return [tuple((j + s) % k for s in range(P)) for j in range(k)]
    return [c[r:] + c[:r] for c in itertools.combinations(range(k), P) for r in range(P)]


def bot_seed(seed: int, deal: int, lineup: int, seat: int) -> int:
    """The seed of the bot in `seat` of table game (deal, lineup): fixed by those numbers alone,
    so results do not depend on which worker plays the game."""
    return int(np.random.SeedSequence([seed, deal, lineup, seat]).generate_state(1)[0])


__all__ = ["BotSpec", "bot_entries", "bot_entry", "bot_seed", "lineups", "parse_bot"]
