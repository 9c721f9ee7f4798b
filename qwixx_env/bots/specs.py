"""Bot specs: the one spelling of a bot for every place that takes one, and the one factory.

The arena's bots, an env's opponents (`QwixxVectorEnv`, ``gymnasium.make("qwixx_env/Qwixx-v0",
opponents=...)``), a training config's opponent pool, evaluation opponents and teacher, the
play page and OpenSpiel's and RLlib's bots all take the same strings:

- a registered bot's name, with parameters after a colon: ``"greedy"``,
  ``"greedy:max_skip=2"``, ``"rollout:threads=1,leaf=afterstate"``, ``"afterstate"``;
- an installed checkpoint's name (``"ppo-classic-2p"``; each is a registered bot too);
- a checkpoint file's path, with or without ``.json`` (``"runs/my2p/final"``,
  ``"/abs/runs/my2p/final.json"``), or a training run's folder, meaning its final policy
  (``"runs/my2p"``; an RLlib run's folder means its exported ``policy``; a self-play run's,
  ``qwixx-train --engine selfplay``, its network). Text with a path
  separator or a ``.json``/``.npz`` ending before any colon is a path.

In Python a spec may also be a ``(name, params)`` pair or a factory ``factory(*, table, seed)
-> Bot`` (`as_spec`). `make_bot(spec, table, seed)` makes any of them for a table (a
`TableOptions`); `check_spec` reads a spec and makes its bot once for the table, so that every
mistake is reported where the spec is given; `opponent` is what the vector env plays for a
spec (the compiled scripted policies by name, a batched network, or the bot called row by row).

>>> table = TableOptions(num_players=2)
>>> bot = make_bot("greedy:max_skip=1", table, seed=0)
>>> spec = check_spec("runs/my2p", table)
>>> spec.label                  # "my2p/final": how tables show it
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from qwixx_env.bots import registry, selfplay
from qwixx_env.bots.pretrained import PretrainedBot, checkpoint_table, load
from qwixx_env.bots.registry import table_with
from qwixx_env.core.checks import check_seed
from qwixx_env.core.options import TableOptions
from qwixx_env.nets import NumpyPolicy, afterstate_policy, check_afterstate_table
from qwixx_env.nets.installed import checkpoint_label, is_checkpoint_name
from qwixx_env.policies import Policy
from qwixx_env.policies.scripted import POLICY_NAMES

TABLE_OPTIONS = ("variant", "num_players", "seed")  # set per game by whoever seats the bot


@dataclass
class BotSpec:
    """A bot as every place takes one: a registered bot's `name` with `params`, a checkpoint's
    `path` (a file or a run folder), or a `factory` called ``factory(table=, seed=, **params)``;
    `label` is how tables show it (the text, or for a path its folder and stem, "my2p/final")."""

    label: str
    name: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    path: str | None = None
    factory: Callable[..., Any] | None = None

    def default_table(self) -> TableOptions:
        """The table the bot plays when none is given: a checkpoint's game, else the registry's
        default for its name (`registry.default_table`: classic with 2 players for the
        scripted bots)."""
        if self.path is not None:
            network = selfplay.selfplay_file(self.path)
            if network is not None:
                return selfplay.network(network).default_table()
            return checkpoint_table(NumpyPolicy.load(self.path))
        if self.name is not None:
            return registry.default_table(self.name)
        return registry.DEFAULT_TABLE

    def make(self, table: TableOptions | None = None, *, variant: str | None = None, num_players: int | None = None,
             lucky: str | None = None, seed: int | None = None) -> registry.Bot:
        """`make_bot` for `table`, or for the keyword options given in place of
        `default_table`'s (`registry.table_with`)."""
        base = self.default_table() if table is None else table
        return make_bot(self, table_with(base, table, variant=variant, num_players=num_players, lucky=lucky), seed)


def make_bot(spec: BotSpec | str | Any, table: TableOptions, seed: int | None = None) -> registry.Bot:
    """A fresh bot for a table: `spec` is a `BotSpec` or any spelling `as_spec` reads (a spec's
    text, a ``(name, params)`` pair, a factory), `table` the `TableOptions` it plays, `seed` its
    own random stream. A ``lucky`` parameter of the spec replaces the table's lucky rule where
    the table has lucky numbers (Longo). A `ValueError` names what is wrong: the spec, a
    parameter the bot does not take, or a table it cannot play."""
    spec = as_spec(spec)
    check_seed(seed)
    if not isinstance(table, TableOptions):
        raise ValueError(f"table: got {table!r}; expected a qwixx_env.core.options.TableOptions")
    params = dict(spec.params)
    lucky = params.pop("lucky", None)
    if lucky is not None and table.rules.lucky_count:  # the bot's own parameter wins over the game's
        table = dataclasses.replace(table, lucky=lucky)
    if spec.path is not None:
        network = selfplay.selfplay_file(spec.path)  # a self-play run's network, or a policy checkpoint
        bot = selfplay.network(network)(table, seed=seed) if network is not None else load(spec.path, table, seed=seed)
        bot.name = spec.label  # tables tell runs apart by it, not by the file's stem "final"
        return bot
    if spec.factory is not None:
        factory = spec.factory
    elif spec.name is not None:
        factory = registry.factory(spec.name)
    else:
        raise ValueError(f"bot {spec.label!r}: a BotSpec needs a name, a path or a factory")
    accepted = registry.parameters(factory)
    unknown = [] if accepted is None else sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"bot {spec.name or spec.label!r}: got parameter(s) {unknown}; "
                         f"it accepts {accepted or 'none'}")
    return factory(table=table, seed=seed, **params)


def make(name: str, *, variant: str | None = None, num_players: int | None = None, lucky: str | None = None,
         seed: int | None = None, **params: Any) -> registry.Bot:
    """A registered bot by name, with `params`, for the table of the keyword options:
    `variant`, `num_players` and `lucky` replace the bot's default table's
    (`BotSpec.default_table`: ``"classic"`` and 2 for the scripted bots, what its checkpoint
    plays for a pretrained bot, so ``make("ppo-classic-1p")`` is a solo bot). Raises
    `ValueError` naming the bad value for an unknown bot, variant, player count or lucky
    rule, or a parameter the bot does not take."""
    registry.factory(name)  # an unknown name first, before the table's options
    return BotSpec(label=name, name=name, params=params).make(variant=variant, num_players=num_players, lucky=lucky,
                                                              seed=seed)


def parse_spec(text: str) -> BotSpec:
    """A `BotSpec` from its text (see the module docstring), checking its spelling only:
    parameters are ``key=value`` (values read as JSON where they parse, else kept as text),
    none twice, and a name must be registered. A `ValueError` names what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"bot: got {text!r}; expected {ACCEPTED}")
    head = text.partition(":")[0]
    if not is_checkpoint_name(head):  # a path, whole
        try:
            label = checkpoint_label(text)
        except (OSError, ValueError) as err:
            raise ValueError(f"bot {text!r}: {err}") from None
        return BotSpec(label=label, path=text)
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
    name = name.strip()
    if name not in registry.available():
        raise ValueError(f"bot name: got {name!r}; expected one of {registry.available()}, or {ACCEPTED}")
    return BotSpec(label=text, name=name, params=params)


ACCEPTED = (
    "a bot's name with optional parameters ('greedy:max_skip=2'), an installed checkpoint's name, or a "
    "checkpoint's path ('runs/my2p/final', or the run folder 'runs/my2p')"
)


def as_spec(value: Any) -> BotSpec:
    """A `BotSpec` from any spelling of a bot: a `BotSpec` (as is), a spec's text
    (`parse_spec`), a ``(name, params)`` pair (labelled ``"name:key=value,..."``) or a factory
    ``factory(*, table, seed) -> Bot`` (labelled by its `name` attribute or `__name__`)."""
    if isinstance(value, BotSpec):
        return value
    if isinstance(value, str):
        return parse_spec(value)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict):
        name, params = value
        label = name + "".join(f"{':' if i == 0 else ','}{k}={v}" for i, (k, v) in enumerate(params.items()))
        return BotSpec(label=label, name=name, params=dict(params))
    if callable(value):
        label = str(getattr(value, "name", None) or getattr(value, "__name__", None) or type(value).__name__)
        # a factory is taken on trust to return a Bot; callable() only says it can be called
        return BotSpec(label=label, factory=_check_factory(cast(Callable[..., registry.Bot], value), label))
    raise ValueError(
        f"bot: got {value!r}; expected a name ('greedy:max_skip=2'), a (name, params) pair or a bot factory"
    )


def _check_factory(factory: Callable[..., Any], label: str) -> Callable[..., Any]:
    """`factory` if it takes the table (a ``table`` or ``**options`` parameter), or a `ValueError`
    naming its signature and the one it needs, ``factory(*, table, seed)``."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # no signature to read: taken on trust
        return factory
    names = signature.parameters
    if "table" in names or any(p.kind == p.VAR_KEYWORD for p in names.values()):
        return factory
    raise ValueError(f"bot factory {label!r}: got {label}{signature}; expected factory(*, table, seed) -> Bot "
                     "(table: a qwixx_env.core.options.TableOptions)")


def check_params(spec: BotSpec, who: str, how: str = "") -> None:
    """Refuse parameters that the table sets (`TABLE_OPTIONS`), and `lucky` for a bot that
    does not model the lucky rule; `who` sets the table (`how`: with which options)."""
    table = sorted(set(TABLE_OPTIONS) & set(spec.params))
    if table:
        raise ValueError(f"bot {spec.label!r}: {table} set, but {who} sets the table's variant, player count "
                         f"and each game's seeds{how}")
    bot = spec.factory or spec.name  # None for a checkpoint's path: it takes no lucky parameter
    if "lucky" in spec.params and (bot is None or not registry.models_lucky(bot)):
        modelling = [n for n in registry.available() if registry.models_lucky(n)]
        raise ValueError(f"bot {spec.label!r}: lucky is set, but this bot takes no lucky rule (it does not "
                         f"model Longo's lucky cross; the bots that do: {modelling})")


def check_spec(spec: BotSpec | str | Any, table: TableOptions | None = None, *, variant: str | None = None,
               num_players: int | None = None, lucky: str | None = None, who: str = "the caller") -> BotSpec:
    """The one check of a bot spec wherever one is given: `as_spec`, `check_params`, and its
    bot made once for `table` (or the table of `variant`, `num_players` and Longo's `lucky`),
    so that a bot that cannot play it, or a bad parameter value, is a `ValueError` here,
    naming the spec. Returns the `BotSpec`."""
    spec = as_spec(spec)
    table = table_with(registry.DEFAULT_TABLE, table, variant=variant, num_players=num_players, lucky=lucky)
    check_params(spec, who)
    bare = dataclasses.replace(spec, params={k: v for k, v in spec.params.items() if k == "lucky"})
    try:  # the bot itself, then with its parameters: a bad parameter is not a table it cannot play
        make_bot(bare, table, seed=0)
    except (TypeError, ValueError, OSError) as err:  # OSError: a checkpoint file that is not there
        raise ValueError(f"bot {spec.label!r} cannot play {table.variant} with {table.num_players} player(s): "
                         f"{err}") from None
    if spec.params.keys() - {"lucky"}:
        try:
            make_bot(spec, table, seed=0)
        except (TypeError, ValueError, AttributeError) as err:  # a parameter it does not take, or a bad value
            raise ValueError(f"bot {spec.label!r}: {err}") from None
    return spec



def opponent(spec: BotSpec | str | Any, table: TableOptions | None = None, *, variant: str | None = None,
             num_players: int | None = None, lucky: str | None = None, seed: int = 0) -> str | Policy:
    """What `QwixxVectorEnv` plays for a spec (checked by `check_spec`) at `table` (or the
    table of the keyword options): the name of a compiled scripted policy (``"random"``,
    ``"greedy"``, ``"heuristic"`` without parameters), a batched policy (``"afterstate"``; a
    checkpoint's `NumpyPolicy`), or any other bot called row by row (`BotPolicy`, made once
    with `seed`)."""
    table = table_with(registry.DEFAULT_TABLE, table, variant=variant, num_players=num_players, lucky=lucky)
    spec = check_spec(spec, table, who="the env")
    if spec.name in POLICY_NAMES and not spec.params:
        return spec.name
    if spec.name == "afterstate" and not spec.params:
        check_afterstate_table(table.variant, table.num_players)
        return _Afterstate(table)
    bot = make_bot(spec, table, seed)
    if isinstance(bot, PretrainedBot):
        return bot.policy
    return BotPolicy(bot, spec.label)


class _Afterstate:
    """The `afterstate` bot as a batched policy for one table (`table`, a `TableOptions`)."""

    def __init__(self, table: TableOptions):
        self.table = table

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return afterstate_policy(observations, masks, self.table.variant, self.table.num_players)

    def __repr__(self) -> str:
        return f"afterstate ({self.table.variant}, {self.table.num_players} player(s))"


class BotPolicy:
    """A bot as a batched policy: ``(observations (n, D), masks (n, A)) -> actions (n,)``,
    one `act` per row (for bots that have no batched form)."""

    def __init__(self, bot: registry.Bot, label: str):
        self.bot, self.label = bot, label

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([self.bot.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks)],
                        np.int64)

    def __repr__(self) -> str:
        return self.label


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


__all__ = [
    "ACCEPTED", "TABLE_OPTIONS", "BotPolicy", "BotSpec", "as_spec", "check_params", "check_spec", "make", "make_bot",
    "opponent", "parse_spec",
]
