"""Who plays: the bot entries of a tournament and the lineups that seat them.

A bot entry is a bot spec (`qwixx_env.bots.specs`: a registry name with parameters,
``"greedy:max_skip=2"`` on the command line, an installed checkpoint's name or a checkpoint's
path such as ``"runs/my2p/final"``), a ``("greedy", {"max_skip": 2})`` pair in Python, or a
factory called like `bots.make` is (``factory(*, variant, num_players, seed, **params) -> Bot``;
in Longo, a factory with a ``lucky`` parameter is also given the game's lucky rule).

The lineups give every bot every seat equally often (see `lineups`); a *deal* (one seed of
the dice) is played once by every lineup, and *table game* g is deal ``g // L`` played by
lineup ``g % L`` for L lineups.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from qwixx_env import bots
from qwixx_env.bots.specs import TABLE_OPTIONS, BotSpec, check_params, parse_spec


@dataclass
class BotEntry:
    """One competitor: how to make it, and the label results are reported under."""

    label: str
    name: str | None = None  # a registry name, or None when `factory` or `path` is given
    params: dict[str, Any] = field(default_factory=dict)
    factory: Callable[..., bots.Bot] | None = None
    path: str | None = None  # a checkpoint file or training run folder (`bots.specs`)

    def make(self, *, variant: str, num_players: int, seed: int | None, lucky: str | None = None) -> bots.Bot:
        """A fresh bot for one game. In Longo, a bot that takes `lucky` (it models the lucky
        rule, which the observation does not show) is told the game's, unless its parameters
        set it (`bots.build`)."""
        if self.factory is None:
            spec = BotSpec(self.label, self.label, self.name, self.params, self.path)
            return spec.make(variant=variant, num_players=num_players, lucky=lucky, seed=seed)
        params = dict(self.params)
        lucky = params.pop("lucky", lucky if variant == "longo" else None)
        return bots.build(self.factory, variant=variant, num_players=num_players, lucky=lucky, seed=seed, **params)


def parse_bot(text: str) -> BotEntry:
    """A bot entry from a bot spec (`qwixx_env.bots.specs`): ``"name"``,
    ``"name:key=value,key=value"``, an installed checkpoint's name or a checkpoint's path.
    Raises `ValueError` on a malformed parameter or an unknown name."""
    spec = parse_spec(text)
    return BotEntry(label=spec.label, name=spec.name, params=spec.params, path=spec.path)


def table_options_in(params: dict[str, Any]) -> list[str]:
    """The table options (`TABLE_OPTIONS`) among a bot's own parameters, sorted."""
    return sorted(set(TABLE_OPTIONS) & set(params))


def _check_entry(entry: BotEntry) -> BotEntry:
    """Refuse parameters a tournament sets itself (the table options), and `lucky` for a bot
    that does not model the lucky rule."""
    if entry.factory is None:
        check_params(BotSpec(entry.label, entry.label, entry.name, entry.params, entry.path), "the arena",
                     " (the --variant / --players / --seed options, or run_arena's arguments)")
        return entry
    table = table_options_in(entry.params)
    if table:
        raise ValueError(f"bot {entry.label!r}: {table} set, but the arena sets the table's variant, player count "
                         "and each game's seeds (the --variant / --players / --seed options, or run_arena's arguments)")
    if "lucky" in entry.params and not bots.takes(entry.factory, "lucky"):
        modelling = [n for n in bots.available() if bots.takes(n, "lucky")]
        raise ValueError(f"bot {entry.label!r}: lucky is set, but this bot takes no lucky rule (it does not "
                         f"model Longo's lucky cross; the bots that do: {modelling})")
    return entry


def bot_entry(spec: Any) -> BotEntry:
    """A `BotEntry` from any accepted spelling (see the module docstring)."""
    if isinstance(spec, BotEntry):
        return _check_entry(spec)
    if isinstance(spec, str):
        return _check_entry(parse_bot(spec))
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) and isinstance(spec[1], dict):
        name, params = spec
        label = name + "".join(f"{':' if i == 0 else ','}{k}={v}" for i, (k, v) in enumerate(params.items()))
        return _check_entry(BotEntry(label=label, name=name, params=dict(params)))
    if callable(spec):
        label = getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__
        return BotEntry(label=str(label), factory=spec)
    raise ValueError(
        f"bot: got {spec!r}; expected a name ('greedy:max_skip=2'), a (name, params) pair or a bot factory"
    )


def bot_entries(specs: Sequence[Any]) -> list[BotEntry]:
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
