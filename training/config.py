"""Training configuration: a YAML file read into frozen dataclasses and checked key by key.

>>> cfg = load_config("configs/classic_2p.yaml")
>>> cfg.ppo.learning_rate, cfg.opponents.scripted, cfg.bc.teacher

Every key is declared once, below, with its type and the values it accepts. A key the
schema does not know, a value of the wrong type or one out of range raises `ValueError`
naming the key path (``ppo.learning_rate``), the value and what is accepted; nothing is
silently defaulted except the optional keys listed with their defaults. `docs/training.md`
describes each key and the shipped configs.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import yaml

from qwixx_env import bots
from qwixx_env.bots.afterstate import NETWORKS as AFTERSTATE_TABLES
from qwixx_env.bots.afterstate import tables as afterstate_tables
from qwixx_env.arena.schedule import parse_bot, table_options_in
from qwixx_env.bots.pretrained import INPUTS
from qwixx_env.core.policies import POLICY_NAMES
from qwixx_env.core.rewards import REWARD_MODES, check_reward
from qwixx_env.core.variant import LUCKY_RULES, VARIANT_NAMES

LADDER = ("random", "greedy", "heuristic")  # the scripted bots a learner is measured against
ACTIVATIONS = ("tanh", "relu")


def _check(*, low: float | None = None, high: float | None = None, open_low: bool = False,
           choices: tuple | None = None) -> dict[str, Any]:
    """Field metadata: the accepted range (``low`` inclusive unless `open_low`) or choices."""
    return {"low": low, "high": high, "open_low": open_low, "choices": choices}


@dataclass(frozen=True)
class NetworkConfig:
    """The MLP of the policy: hidden layer sizes of the actor (`pi`) and the critic (`vf`)."""

    pi: tuple[int, ...] = field(default=(256, 256), metadata=_check(low=1))
    vf: tuple[int, ...] = field(default=(256, 256), metadata=_check(low=1))
    activation: str = field(default="tanh", metadata=_check(choices=ACTIVATIONS))


@dataclass(frozen=True)
class PPOConfig:
    """MaskablePPO's hyper-parameters (stable-baselines3 names and meanings). One rollout is
    ``n_steps * num_envs`` learner decisions."""

    learning_rate: float = field(default=3.0e-4, metadata=_check(low=0, open_low=True, high=1))
    n_steps: int = field(default=128, metadata=_check(low=1))
    batch_size: int = field(default=1024, metadata=_check(low=2))
    n_epochs: int = field(default=4, metadata=_check(low=1))
    gamma: float = field(default=0.995, metadata=_check(low=0, high=1))
    gae_lambda: float = field(default=0.95, metadata=_check(low=0, high=1))
    clip_range: float = field(default=0.2, metadata=_check(low=0, open_low=True, high=1))
    ent_coef: float = field(default=0.01, metadata=_check(low=0, high=1))
    vf_coef: float = field(default=0.5, metadata=_check(low=0, high=10))
    max_grad_norm: float = field(default=0.5, metadata=_check(low=0, open_low=True))
    target_kl: float | None = field(default=None, metadata=_check(low=0, open_low=True))


@dataclass(frozen=True)
class SelfPlayConfig:
    """Frozen snapshots of the learner in the opponent pool.

    A snapshot is added every `snapshot_every` steps, and also when an evaluation shows the
    learner beating the pool: a win rate of at least `add_when_win_rate` against each pool
    opponent evaluated (the scripted pool bots among the evaluation opponents and the newest
    snapshot). The newest `max_snapshots` are kept; together they get `share` of the pool's
    weight, split evenly, the scripted bots the rest.
    """

    snapshot_every: int = field(default=1_000_000, metadata=_check(low=1))
    add_when_win_rate: float | None = field(default=0.6, metadata=_check(low=0, open_low=True, high=1))
    max_snapshots: int = field(default=8, metadata=_check(low=1))
    share: float = field(default=0.5, metadata=_check(low=0, open_low=True, high=1))


@dataclass(frozen=True)
class OpponentsConfig:
    """Who sits in the other seats: scripted bots compiled into the engine (name -> weight)
    and, with `self_play`, snapshots of the learner."""

    scripted: dict[str, float] = field(default_factory=dict, metadata=_check(low=0, open_low=True))
    self_play: SelfPlayConfig | None = None


@dataclass(frozen=True)
class EvaluationConfig:
    """Periodic evaluation in the arena: every `every` steps (and at the end) the learner,
    exported to numpy, plays `games` deals against each bot in `opponents` (seats rotated;
    with P players it sits with P-1 copies of the bot). Solo: the learner alone, mean score.
    `workers` arena processes. `opponents` left out or empty: the `LADDER` (multi-player),
    none (solo)."""

    every: int = field(default=500_000, metadata=_check(low=1))
    games: int = field(default=200, metadata=_check(low=1))
    opponents: tuple[str, ...] = ()
    workers: int = field(default=1, metadata=_check(low=1))


@dataclass(frozen=True)
class BCConfig:
    """Behaviour-cloning warm start before PPO: `samples` decisions of the `teacher` bot
    playing the learner's seat against the scripted pool, then `epochs` of cross-entropy on
    the masked logits (and the value head on the observed returns)."""

    teacher: str = "heuristic"
    samples: int = field(default=200_000, metadata=_check(low=100))
    epochs: int = field(default=5, metadata=_check(low=1))
    batch_size: int = field(default=1024, metadata=_check(low=1))
    learning_rate: float = field(default=1.0e-3, metadata=_check(low=0, open_low=True, high=1))


@dataclass(frozen=True)
class TrainConfig:
    """One training run (see the module docstring and docs/training.md)."""

    name: str  # the run's name; its default folder is runs/<name>
    total_steps: int = field(metadata=_check(low=1))  # learner decisions (PPO rounds up to whole rollouts)
    seed: int = field(default=0, metadata=_check(low=0, high=2**32 - 1))  # PPO, the games and the evaluation deals
    variant: str = field(default="classic", metadata=_check(choices=VARIANT_NAMES))
    lucky: str = field(default="bonus", metadata=_check(choices=LUCKY_RULES))  # Longo's lucky-number rule
    num_players: int = field(default=2, metadata=_check(low=1, high=5))
    reward: str | None = field(default=None, metadata=_check(choices=REWARD_MODES))  # None: the env's default
    reward_scale: float = field(default=1.0, metadata=_check(low=0, open_low=True))  # PPO's rewards times this
    num_envs: int = field(default=64, metadata=_check(low=1))  # games stepped together
    torch_threads: int = field(default=1, metadata=_check(low=1))  # torch.set_num_threads
    checkpoint_every: int = field(default=1_000_000, metadata=_check(low=1))  # steps between checkpoints
    # extra policy inputs after the observation (qwixx_env.bots.pretrained.INPUTS)
    inputs: tuple[str, ...] = field(default=(), metadata=_check(choices=INPUTS))
    network: NetworkConfig = NetworkConfig()
    ppo: PPOConfig = PPOConfig()
    opponents: OpponentsConfig | None = None  # required with num_players > 1, refused solo
    evaluation: EvaluationConfig | None = EvaluationConfig()  # None: no evaluation
    bc: BCConfig | None = None  # None: no warm start

    @property
    def reward_mode(self) -> str:
        """The reward mode in force (the env's default when `reward` is not given)."""
        return check_reward(self.reward, self.num_players)

    @property
    def eval_opponents(self) -> tuple[str, ...]:
        """The bots the evaluation plays against (none solo, the `LADDER` by default)."""
        if self.evaluation is None or self.num_players == 1:
            return ()
        return self.evaluation.opponents or LADDER

    @property
    def rollout_steps(self) -> int:
        """Learner decisions per PPO rollout."""
        return self.ppo.n_steps * self.num_envs

    def to_dict(self) -> dict[str, Any]:
        """The configuration as plain YAML/JSON data (reads back with `config_from_dict`)."""
        return _plain(dataclasses.asdict(self))


class _UniqueKeys(yaml.SafeLoader):
    """`yaml.safe_load`'s loader, refusing a key set twice in one mapping (PyYAML would keep
    the last silently, so a forgotten line could override the one the reader sees)."""


def _unique_mapping(loader: _UniqueKeys, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            again = key in seen
        except TypeError:  # an unhashable key: construct_mapping says so below
            break
        if again:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark, f"the key {key!r} is set twice", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep)


_UniqueKeys.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def load_config(path: str | Path) -> TrainConfig:
    """Read and check a YAML config file (see the module docstring)."""
    return config_from_dict(read_yaml(Path(path)))


def read_yaml(path: Path, seen: tuple[Path, ...] = ()) -> Any:
    """A config file's data with its ``extends:`` resolved: ``extends: base.yaml`` (a path
    relative to the file) starts from the base's data; each key the file sets replaces the
    base's, and inside a section (a mapping such as ``ppo`` or ``opponents``) each key it sets
    replaces that key's value whole (``opponents.scripted`` replaces the base's weights, and
    ``opponents.self_play`` stays the base's unless it is set too). A base may extend another."""
    where = f" (extended by {str(seen[-1])!r})" if seen else ""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeys)
    except FileNotFoundError:
        raise ValueError(f"config: no file {str(path)!r}{where}") from None
    except IsADirectoryError:
        raise ValueError(f"config: {str(path)!r}{where} is a folder; expected a YAML file") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"config {str(path)!r}{where}: not UTF-8 text ({err})") from None
    except yaml.YAMLError as err:
        raise ValueError(f"config {str(path)!r}: not valid YAML: {err}") from None
    if not isinstance(data, dict) or "extends" not in data:
        return data
    base_name = data.pop("extends")
    if not isinstance(base_name, str) or not base_name:
        raise ValueError(f"extends: got {base_name!r} in {str(path)!r}; expected the path of a config file")
    base_path = (path.parent / base_name).resolve()
    if base_path in seen or base_path == path.resolve():
        chain = " -> ".join(str(p) for p in (*seen, path, base_path))
        raise ValueError(f"extends: a config may not extend itself; got the cycle {chain}")
    base = read_yaml(base_path, (*seen, path.resolve()))
    if not isinstance(base, dict):
        raise ValueError(f"extends: {str(base_path)!r} is not a mapping of keys; got {base!r}")
    merged = dict(base)
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = {**base[key], **value}
        else:
            merged[key] = value
    return merged


def config_from_dict(data: Any) -> TrainConfig:
    """Check plain data (as read from YAML) and build the `TrainConfig`."""
    cfg = _build(TrainConfig, data, "")
    _check_together(cfg)
    return cfg


# --- checking -----------------------------------------------------------------------------------


def _build(cls: type, data: Any, path: str) -> Any:
    """An instance of dataclass `cls` from a mapping, every key checked against its field."""
    where = path or "config"
    if not isinstance(data, dict):
        raise ValueError(f"{where}: got {data!r}; expected a mapping of keys {_names(cls)}")
    names = _names(cls)
    unknown = [k for k in data if k not in names]
    if unknown:
        key = f"{path}.{unknown[0]}" if path else str(unknown[0])
        raise ValueError(f"{key}: unknown key; accepted keys here: {names}")
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        key = f"{path}.{f.name}" if path else f.name
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{key}: missing; this key is required")
            continue
        values[f.name] = _value(hints[f.name], data[f.name], key, f.metadata)
    return cls(**values)


def _value(hint: Any, value: Any, key: str, rules: dict[str, Any]) -> Any:
    """`value` checked against a type hint and the field's range or choices."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType) and type(None) in args:  # Optional[X]
        if value is None:
            return None
        (hint,) = [a for a in args if a is not type(None)]
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, key)
    if origin is tuple:
        if not isinstance(value, list):
            raise ValueError(f"{key}: got {value!r}; expected a list of {_describe(args[0], rules)}")
        return tuple(_value(args[0], v, f"{key}[{i}]", rules) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{key}: got {value!r}; expected a mapping name -> {_describe(args[1], rules)}")
        return {_value(args[0], k, f"{key}.{k}", {}): _value(args[1], v, f"{key}.{k}", rules) for k, v in value.items()}
    ok = (
        (hint is int and isinstance(value, int) and not isinstance(value, bool))
        or (hint is float and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))
        or (hint in (str, bool) and isinstance(value, hint))
    )
    low, high, choices = rules.get("low"), rules.get("high"), rules.get("choices")
    if ok and choices is not None:
        ok = value in choices
    if ok and low is not None:
        ok = value > low if rules.get("open_low") else value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        hint_text = ""
        if hint is float and isinstance(value, str):
            hint_text = _number_hint(value)
        raise ValueError(f"{key}: got {value!r}; expected {_describe(hint, rules)}{hint_text}")
    return float(value) if hint is float else value


def _number_hint(text: str) -> str:
    """Why a number came as text, and how to write it (YAML 1.1 reads 3e-4 as a string);
    nothing for text that is not a finite number."""
    try:
        if not math.isfinite(float(text)):
            return ""
    except ValueError:
        return ""
    if isinstance(yaml.safe_load(text), float | int):
        return " (it is quoted: write the number without quotes)"
    mantissa, e, exponent = text.strip().lower().partition("e")
    if e:  # YAML 1.1 reads a number with an exponent only with a '.' and a signed exponent
        fixed = (mantissa if "." in mantissa else mantissa + ".0") + "e" + (
            exponent if exponent[:1] in ("+", "-") else "+" + exponent
        )
        if isinstance(yaml.safe_load(fixed), float):
            return f" (YAML reads {text} as text: write {fixed})"
    return f" (YAML reads {text} as text: write it as a decimal, {float(text)!r})"


def _describe(hint: Any, rules: dict[str, Any]) -> str:
    """What a field accepts, in words."""
    if rules.get("choices") is not None:
        return f"one of {list(rules['choices'])}"
    kind = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(hint, str(hint))
    low, high = rules.get("low"), rules.get("high")
    if low is not None and high is not None:
        return f"{kind} {'>' if rules.get('open_low') else '>='} {low} and <= {high}"
    if low is not None:
        return f"{kind} {'>' if rules.get('open_low') else '>='} {low}"
    return kind


def _names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def _check_together(cfg: TrainConfig) -> None:
    """Rules that involve several keys."""
    parts = Path(cfg.name).parts
    if not cfg.name.strip() or Path(cfg.name).is_absolute() or ".." in parts or "\0" in cfg.name:
        raise ValueError(
            f"name: got {cfg.name!r}; expected a non-empty relative name without '..' (it names the run "
            "folder runs/<name>)"
        )
    try:
        check_reward(cfg.reward, cfg.num_players)
    except ValueError as err:
        message = str(err)
        raise ValueError(message if message.startswith("reward:") else f"reward: {message}") from None
    if "afterstate" in cfg.inputs and (cfg.variant, cfg.num_players) not in AFTERSTATE_TABLES:
        raise ValueError(
            f"inputs: 'afterstate' needs a table with a win-chance network ({afterstate_tables()}); got "
            f"{cfg.variant} with {cfg.num_players}"
        )
    if len(set(cfg.inputs)) != len(cfg.inputs):
        raise ValueError(f"inputs: got {list(cfg.inputs)}; expected each name once")
    if cfg.ppo.batch_size > cfg.rollout_steps:
        raise ValueError(
            f"ppo.batch_size: got {cfg.ppo.batch_size}; expected at most ppo.n_steps * num_envs = {cfg.rollout_steps}"
        )
    if cfg.num_players == 1:
        if cfg.opponents is not None:
            raise ValueError("opponents: a solo game (num_players: 1) has no opponents; remove the key")
        if cfg.evaluation is not None and cfg.evaluation.opponents:
            raise ValueError(
                f"evaluation.opponents: got {list(cfg.evaluation.opponents)}; a solo learner is evaluated alone, "
                "expected []"
            )
    else:
        if cfg.opponents is None or (not cfg.opponents.scripted and cfg.opponents.self_play is None):
            raise ValueError(
                "opponents: missing; with num_players > 1 give opponents.scripted (name -> weight) and/or "
                "opponents.self_play"
            )
        for name in cfg.opponents.scripted:
            if name not in POLICY_NAMES + ("afterstate",):
                raise ValueError(f"opponents.scripted.{name}: unknown opponent; expected names from "
                                 f"{list(POLICY_NAMES) + ['afterstate']}")
            if name == "afterstate" and (cfg.variant, cfg.num_players) not in AFTERSTATE_TABLES:
                raise ValueError(f"opponents.scripted.afterstate: plays {afterstate_tables()} only; got "
                                 f"{cfg.variant} with {cfg.num_players}")
    if cfg.evaluation is not None:
        for i, name in enumerate(cfg.evaluation.opponents):
            _check_plays(cfg, name, f"evaluation.opponents[{i}]")
    if cfg.bc is not None:
        _check_plays(cfg, cfg.bc.teacher, "bc.teacher")


def make_bot(cfg: TrainConfig, name: str, seed: int | None = 0) -> bots.Bot:
    """Bot `name` for the run's game: a registry name, or one with parameters as the arena
    reads them (``"rollout:leaf=afterstate"``). Longo's lucky rule goes to the bots that
    model it."""
    lucky = cfg.lucky if cfg.variant == "longo" else None
    return parse_bot(name).make(variant=cfg.variant, num_players=cfg.num_players, lucky=lucky, seed=seed)


def _check_plays(cfg: TrainConfig, name: str, key: str) -> None:
    """`name` is a bot that can play the run's game (made once, as the run will make it)."""
    try:
        entry = parse_bot(name)
    except ValueError as err:
        raise ValueError(f"{key}: {err}") from None
    if entry.name not in bots.available():
        raise ValueError(f"{key}: got {name!r}; expected one of {bots.available()}, optionally with "
                         "parameters ('rollout:leaf=afterstate')")
    table = sorted({*table_options_in(entry.params), *({"lucky"} & set(entry.params))})
    if table:
        raise ValueError(f"{key}: got {name!r}; {', '.join(table)} come(s) from the run's config, not from the "
                         "bot's parameters")
    try:
        make_bot(cfg, entry.name)
    except ValueError as err:
        raise ValueError(
            f"{key}: got {name!r}, which cannot play {cfg.variant} with {cfg.num_players} player(s): {err}"
        ) from None
    if entry.params:
        try:
            make_bot(cfg, name)
        except (ValueError, TypeError, AttributeError) as err:  # a parameter the bot does not take, or a bad value
            raise ValueError(f"{key}: got {name!r}: {err}") from None


def _plain(value: Any) -> Any:
    """Tuples to lists, recursively (YAML and JSON friendly)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
