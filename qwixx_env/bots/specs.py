"""Bot specs: the one spelling of a bot for every place that takes one, and its one check.

The arena's bots, an env's opponents (`QwixxVectorEnv`, ``gymnasium.make("qwixx_env/Qwixx-v0",
opponents=...)``) and a training config's opponent pool, evaluation opponents and teacher all
take the same strings:

- a registered bot's name, with parameters after a colon: ``"greedy"``,
  ``"greedy:max_skip=2"``, ``"rollout:threads=1,leaf=afterstate"``, ``"afterstate"``;
- an installed checkpoint's name (``"ppo-classic-2p"``; each is a registered bot too);
- a checkpoint file's path, with or without ``.json`` (``"runs/my2p/final"``,
  ``"/abs/runs/my2p/final.json"``), or a training run's folder, meaning its final policy
  (``"runs/my2p"``). Text with a path separator or a ``.json``/``.npz`` ending before any
  colon is a path.

`check_spec` reads a spec and makes its bot once for the table, so that every mistake is
reported where the spec is given; `opponent` is what the vector env plays for a spec (the
compiled scripted policies by name, a batched network, or the bot called row by row).

>>> spec = check_spec("runs/my2p", variant="classic", num_players=2)
>>> spec.label                  # "my2p/final": how tables show it
>>> bot = spec.make(variant="classic", num_players=2, seed=0)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from qwixx_env.bots import registry
from qwixx_env.bots.pretrained import PretrainedBot, load
from qwixx_env.nets import afterstate_policy, check_afterstate_table
from qwixx_env.nets.installed import checkpoint_label, is_checkpoint_name
from qwixx_env.policies.scripted import POLICY_NAMES

TABLE_OPTIONS = ("variant", "num_players", "seed")  # set per game by whoever seats the bot


@dataclass
class BotSpec:
    """A parsed bot spec: a registry name with parameters, or a checkpoint's path."""

    text: str  # as given
    label: str  # how tables show it: the text, or for a path its folder and stem ("my2p/final")
    name: str | None = None  # a registry name, None for a path
    params: dict[str, Any] = field(default_factory=dict)
    path: str | None = None  # a checkpoint file or run folder

    def make(self, *, variant: str | None = None, num_players: int | None = None, lucky: str | None = None,
             seed: int | None = None) -> registry.Bot:
        """A fresh bot for a table (as `bots.make`; a `ValueError` when it cannot play it).
        In Longo, `lucky` is the game's rule, for the bots that model it; a ``lucky``
        parameter of the spec wins."""
        if self.path is not None:
            bot = load(self.path, variant=variant, num_players=num_players, lucky=lucky, seed=seed)
            bot.name = self.label  # tables tell runs apart by it, not by the file's stem "final"
            return bot
        params = dict(self.params)
        lucky = params.pop("lucky", lucky if variant == "longo" else None)
        return registry.make(self.name, variant=variant, num_players=num_players, lucky=lucky, seed=seed, **params)


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
        return BotSpec(text=text, label=label, path=text)
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
    return BotSpec(text=text, label=text, name=name, params=params)


ACCEPTED = (
    "a bot's name with optional parameters ('greedy:max_skip=2'), an installed checkpoint's name, or a "
    "checkpoint's path ('runs/my2p/final', or the run folder 'runs/my2p')"
)


def check_params(spec: BotSpec, who: str, how: str = "") -> None:
    """Refuse parameters that the table sets (`TABLE_OPTIONS`), and `lucky` for a bot that
    does not model the lucky rule; `who` sets the table (`how`: with which options)."""
    table = sorted(set(TABLE_OPTIONS) & set(spec.params))
    if table:
        raise ValueError(f"bot {spec.label!r}: {table} set, but {who} sets the table's variant, player count "
                         f"and each game's seeds{how}")
    if "lucky" in spec.params and not registry.takes(spec.name, "lucky"):
        modelling = [n for n in registry.available() if registry.takes(n, "lucky")]
        raise ValueError(f"bot {spec.label!r}: lucky is set, but this bot takes no lucky rule (it does not "
                         f"model Longo's lucky cross; the bots that do: {modelling})")


def check_spec(text: str, *, variant: str, num_players: int, lucky: str | None = None,
               who: str = "the caller") -> BotSpec:
    """The one check of a bot spec wherever one is given: `parse_spec`, `check_params`, and its
    bot made once for the table (`variant`, `num_players`, Longo's `lucky`), so that a bot that
    cannot play it, or a bad parameter value, is a `ValueError` here, naming the spec."""
    spec = parse_spec(text)
    check_params(spec, who)
    table = dict(variant=variant, num_players=num_players, lucky=lucky, seed=0)
    bare = BotSpec(spec.text, spec.label, spec.name, {k: v for k, v in spec.params.items() if k == "lucky"}, spec.path)
    try:  # the bot itself, then with its parameters: a bad parameter is not a table it cannot play
        bare.make(**table)
    except (TypeError, ValueError, OSError) as err:  # OSError: a checkpoint file that is not there
        raise ValueError(f"bot {spec.label!r} cannot play {variant} with {num_players} player(s): {err}") from None
    if spec.params.keys() - {"lucky"}:
        try:
            spec.make(**table)
        except (TypeError, ValueError, AttributeError) as err:  # a parameter it does not take, or a bad value
            raise ValueError(f"bot {spec.label!r}: {err}") from None
    return spec


Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def opponent(text: str, *, variant: str, num_players: int, lucky: str | None = None, seed: int = 0) -> str | Policy:
    """What `QwixxVectorEnv` plays for a spec (checked by `check_spec`): the name of a
    compiled scripted policy (``"random"``, ``"greedy"``, ``"heuristic"`` without parameters),
    a batched policy (``"afterstate"``; a checkpoint's `NumpyPolicy`), or any other bot called
    row by row (`BotPolicy`, made once with `seed`)."""
    spec = check_spec(text, variant=variant, num_players=num_players, lucky=lucky, who="the env")
    if spec.name in POLICY_NAMES and not spec.params:
        return spec.name
    if spec.name == "afterstate" and not spec.params:
        check_afterstate_table(variant, num_players)
        return _Afterstate(variant, num_players)
    bot = spec.make(variant=variant, num_players=num_players, lucky=lucky, seed=seed)
    if isinstance(bot, PretrainedBot):
        return bot.policy
    return BotPolicy(bot, spec.label)


class _Afterstate:
    """The `afterstate` bot as a batched policy for one table."""

    def __init__(self, variant: str, num_players: int):
        self.variant, self.num_players = variant, num_players

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return afterstate_policy(observations, masks, self.variant, self.num_players)

    def __repr__(self) -> str:
        return f"afterstate ({self.variant}, {self.num_players} player(s))"


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


__all__ = ["ACCEPTED", "TABLE_OPTIONS", "BotPolicy", "BotSpec", "check_params", "check_spec", "opponent", "parse_spec"]
