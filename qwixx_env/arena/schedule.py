"""Who plays: the bot entries of a tournament and the lineups that seat them.

A bot entry is a registry name with parameters (``"greedy:max_skip=2"`` on the command
line, ``("greedy", {"max_skip": 2})`` in Python) or a factory called like `bots.make` is
(``factory(*, variant, num_players, seed, **params) -> Bot``; in Longo, a factory with a
``lucky`` parameter is also given the game's lucky rule).

The lineups give every bot every seat equally often (see `lineups`); a *deal* (one seed of
the dice) is played once by every lineup, and *table game* g is deal ``g // L`` played by
lineup ``g % L`` for L lineups.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from qwixx_env import bots


@dataclass
class BotEntry:
    """One competitor: how to make it, and the label results are reported under."""

    label: str
    name: str | None = None  # a registry name, or None when `factory` is given
    params: dict[str, Any] = field(default_factory=dict)
    factory: Callable[..., bots.Bot] | None = None

    def make(self, *, variant: str, num_players: int, seed: int | None, lucky: str | None = None) -> bots.Bot:
        """A fresh bot for one game. In Longo, a bot that takes `lucky` (it models the lucky
        rule, which the observation does not show) is told the game's, unless its parameters
        set it (`bots.build`)."""
        params = dict(self.params)
        lucky = params.pop("lucky", lucky if variant == "longo" else None)
        table = dict(variant=variant, num_players=num_players, lucky=lucky, seed=seed)
        if self.factory is None:
            return bots.make(self.name, **table, **params)
        return bots.build(self.factory, **table, **params)


def parse_bot(text: str) -> BotEntry:
    """A bot entry from ``"name"`` or ``"name:key=value,key=value"``.

    Values are read as JSON where they parse (``2``, ``0.5``, ``true``, ``null``) and kept
    as strings otherwise. Raises `ValueError` on a malformed parameter.
    """
    name, _, rest = text.partition(":")
    params: dict[str, Any] = {}
    for item in filter(None, _split_top_level(rest)):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"bot {text!r}: parameter {item!r} is not key=value (e.g. 'greedy:max_skip=2')")
        if key in params:
            raise ValueError(f"bot {text!r}: parameter {key!r} is set twice")
        try:
            params[key] = json.loads(value)
        except ValueError:
            params[key] = value.strip()
    return BotEntry(label=text, name=name.strip(), params=params)


def _split_top_level(text: str) -> list[str]:
    """`text` split at the commas outside brackets, braces and double quotes, so a JSON
    value such as ``weights={"fill":1,"frequency":2}`` stays whole."""
    items, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if quoted:
            quoted = ch != '"' or text[i - 1] == "\\"
        elif ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


TABLE_OPTIONS = ("variant", "num_players", "seed")  # set per game by whoever seats the bot


def table_options_in(params: dict[str, Any]) -> list[str]:
    """The table options (`TABLE_OPTIONS`) among a bot's own parameters, sorted."""
    return sorted(set(TABLE_OPTIONS) & set(params))


def _check_entry(entry: BotEntry) -> BotEntry:
    """Refuse parameters a tournament sets itself (the table options), and `lucky` for a bot
    that does not model the lucky rule."""
    table = table_options_in(entry.params)
    if table:
        raise ValueError(f"bot {entry.label!r}: {table} set, but the arena sets the table's variant, player count "
                         "and each game's seeds (the --variant / --players / --seed options, or run_arena's arguments)")
    known = entry.factory is not None or entry.name in bots.available()  # an unknown name: reported when made
    if "lucky" in entry.params and known and not bots.takes(entry.factory or entry.name, "lucky"):
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
