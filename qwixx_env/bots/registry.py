"""The bot registry: every bot has a name, and `register` adds one.

Each bot module registers its bot when `qwixx_env.bots` imports it; a user's bot is one
`register` call. A bot factory is called ``factory(table=table, seed=seed, **params) -> Bot`` with
the table it plays, a `TableOptions` (`qwixx_env.bots.specs.make_bot` makes every bot that
way). Three optional attributes of a factory are data about it: `models_lucky` (True for the
bots that model Longo's lucky rule, which the observation does not show, so a spec may set
``lucky``), `default_table()` (the table `bots.make` fills in when none is given; the
scripted bots: classic with 2 players; a checkpoint: its own game) and `check_table(table)`
(a `ValueError` naming why the bot cannot play a table, cheaply, without making the bot;
without it a bot plays every table).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from qwixx_env.core.observation import ObservationView, state_from_observation
from qwixx_env.core.options import TableOptions
from qwixx_env.core.variant import Variant

NO_LEGAL_ACTION = "observation: the action mask offers no legal action (not this seat's turn?)"
DEFAULT_TABLE = TableOptions()  # what a bot plays when no table is given: classic, 2 players


class Bot(Protocol):
    """The one policy interface: act from an observation dict, return a legal action."""

    name: str

    def act(self, observation: dict[str, Any]) -> int: ...


_REGISTRY: dict[str, Callable[..., Bot]] = {}


def decision_state(
    observation: dict[str, Any], variant: Variant, num_players: int, out: Any = None
) -> tuple[Any, np.ndarray]:
    """What a compiled bot acts on: (the engine state rebuilt from `observation`, the observer
    as seat 0, into `out` if given; the action mask as contiguous int8). A `ValueError` when
    the mask offers no legal action."""
    view = ObservationView(observation, variant, num_players)
    mask = np.ascontiguousarray(observation["action_mask"], np.int8)
    if not mask.any():
        raise ValueError(NO_LEGAL_ACTION)
    return state_from_observation(view, out=out), mask


class TableBot:
    """The table a bot plays, kept as every bot reads it: `table` (the `TableOptions`),
    `variant` (its `Variant`, lucky rule and score table applied) and `num_players`."""

    def __init__(self, table: TableOptions = DEFAULT_TABLE):
        if not isinstance(table, TableOptions):
            raise ValueError(f"table: got {table!r}; expected a qwixx_env.core.options.TableOptions")
        self.table = table
        self.variant = table.rules
        self.num_players = table.num_players


def register(name: str, factory: Callable[..., Bot]) -> None:
    """Add a bot factory ``factory(table=..., seed=..., **params) -> Bot`` under `name` (see the
    module docstring for its optional `models_lucky` and `default_table` attributes)."""
    if name in _REGISTRY:
        raise ValueError(f"bot name: {name!r} is already registered")
    _REGISTRY[name] = factory


def available() -> list[str]:
    """The names `make` accepts, sorted."""
    return sorted(_REGISTRY)


def factory(name: str) -> Callable[..., Bot]:
    """The factory registered under `name`, or a `ValueError` naming the registered ones."""
    if name not in _REGISTRY:
        raise ValueError(f"bot name: got {name!r}; expected one of {available()}")
    return _REGISTRY[name]


def models_lucky(bot: str | Callable[..., Bot]) -> bool:
    """Whether a bot (a registered name, or a factory) models Longo's lucky rule (its
    `models_lucky` attribute), so that a spec may set its ``lucky``."""
    return bool(getattr(factory(bot) if isinstance(bot, str) else bot, "models_lucky", False))


def default_table(bot: str | Callable[..., Bot]) -> TableOptions:
    """The table a bot plays when none is given (its factory's `default_table()`, else
    `DEFAULT_TABLE`)."""
    made = getattr(factory(bot) if isinstance(bot, str) else bot, "default_table", None)
    return DEFAULT_TABLE if made is None else made()


def plays(bot: str | Callable[..., Bot], table: TableOptions) -> bool:
    """Whether a bot (a registered name, or a factory) plays `table`, by its factory's
    `check_table` (without one: every table). Cheap: nothing is loaded or solved, so the play
    page offers only the bots of the table chosen."""
    check = getattr(factory(bot) if isinstance(bot, str) else bot, "check_table", None)
    if check is None:
        return True
    try:
        check(table)
    except ValueError:
        return False
    return True


def parameters(bot: Callable[..., Bot]) -> list[str] | None:
    """The parameters a factory takes by keyword besides the table and seed, for naming a
    parameter it does not take; None when it takes any (``**params``)."""
    try:
        signature = inspect.signature(bot).parameters.values()
    except (TypeError, ValueError):  # a callable without a signature: it takes nothing by name
        return []
    if any(p.kind == p.VAR_KEYWORD for p in signature):
        return None
    return [p.name for p in signature if p.kind == p.KEYWORD_ONLY and p.name not in ("table", "seed")]


def table_with(
    base: TableOptions,
    table: TableOptions | None = None,
    *,
    variant: str | None = None,
    num_players: int | None = None,
    lucky: str | None = None,
) -> TableOptions:
    """The table a bot is made for: `table` when given, else `base` with the keyword options
    that are given in place of its own (``bots.make("ppo-classic-3p", lucky="bonus")``), checked
    once by building the `TableOptions`. Another variant than `base`'s drops its lucky rule."""
    given = {k: v for k, v in (("variant", variant), ("num_players", num_players), ("lucky", lucky)) if v is not None}
    if table is not None:
        if not isinstance(table, TableOptions):
            raise ValueError(f"table: got {table!r}; expected a qwixx_env.core.options.TableOptions")
        if given:
            raise ValueError(f"table: got a TableOptions and {sorted(given)} too; give one or the other")
        return table
    options = {"variant": base.variant, "num_players": base.num_players, "lucky": base.lucky, **given}
    if options["variant"] != base.variant and "lucky" not in given:
        del options["lucky"]
    return TableOptions(**options)
