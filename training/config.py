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

import argparse
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qwixx_env.bots.specs import check_spec
from qwixx_env.core.options import TableOptions
from qwixx_env.core.rewards import REWARD_MODES
from qwixx_env.core.variant import LUCKY_RULES
from qwixx_env.nets import AFTERSTATE_TABLES, INPUTS, afterstate_tables
from qwixx_env.training import add_run_options
from qwixx_env.training.config_schema import build, plain
from qwixx_env.training.config_yaml import config_path, read_yaml, with_variant

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
    """Who sits in the other seats: bots by spec -> weight (`scripted`: names with parameters,
    installed checkpoints, a checkpoint's path or run folder, as the arena and the envs take
    them; `qwixx_env.bots.specs`) and, with `self_play`, snapshots of the learner."""

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


def eval_opponents(evaluation: EvaluationConfig | None, num_players: int) -> tuple[str, ...]:
    """The bots a run's evaluation plays against: none solo or without evaluation, else
    `evaluation.opponents` or, left out, the `LADDER`."""
    if evaluation is None or num_players == 1:
        return ()
    return evaluation.opponents or LADDER


class PlaysTable:
    """For a run's config: its table keys (`num_players`, `variant`, `lucky`, `reward`) as the one
    `TableOptions` the run plays, checked as every env checks them."""

    num_players: int
    variant: str
    lucky: str
    reward: str | None

    @property
    def table(self) -> TableOptions:
        """The run's table options (`variant` stays the name, as in the YAML file)."""
        return TableOptions(num_players=self.num_players, variant=self.variant, lucky=self.lucky, reward=self.reward)


@dataclass(frozen=True)
class TrainConfig(PlaysTable):
    """One training run (see the module docstring and docs/training.md)."""

    name: str  # the run's name; its default folder is runs/<name>
    total_steps: int = field(metadata=_check(low=1))  # learner decisions (PPO rounds up to whole rollouts)
    seed: int = field(default=0, metadata=_check(low=0, high=2**32 - 1))  # PPO, the games and the evaluation deals
    # classic, longo, a registered name; in a file also a sheet file (relative to it) or module:attribute
    variant: str = field(default="classic")
    lucky: str = field(default="bonus", metadata=_check(choices=LUCKY_RULES))  # Longo's lucky-number rule
    num_players: int = field(default=2, metadata=_check(low=1, high=5))
    reward: str | None = field(default=None, metadata=_check(choices=REWARD_MODES))  # None: the env's default
    reward_scale: float = field(default=1.0, metadata=_check(low=0, open_low=True))  # PPO's rewards times this
    num_envs: int = field(default=64, metadata=_check(low=1))  # games stepped together
    torch_threads: int = field(default=1, metadata=_check(low=1))  # torch.set_num_threads
    checkpoint_every: int = field(default=1_000_000, metadata=_check(low=1))  # steps between checkpoints
    # extra policy inputs after the observation (qwixx_env.nets.INPUTS)
    inputs: tuple[str, ...] = field(default=(), metadata=_check(choices=INPUTS))
    network: NetworkConfig = NetworkConfig()
    ppo: PPOConfig = PPOConfig()
    opponents: OpponentsConfig | None = None  # required with num_players > 1, refused solo
    evaluation: EvaluationConfig | None = EvaluationConfig()  # None: no evaluation
    bc: BCConfig | None = None  # None: no warm start

    @property
    def reward_mode(self) -> str:
        """The reward mode in force (the env's default when `reward` is not given)."""
        return self.table.reward_mode

    @property
    def eval_opponents(self) -> tuple[str, ...]:
        """The bots the evaluation plays against (none solo, the `LADDER` by default)."""
        return eval_opponents(self.evaluation, self.num_players)

    @property
    def rollout_steps(self) -> int:
        """Learner decisions per PPO rollout."""
        return self.ppo.n_steps * self.num_envs

    def to_dict(self) -> dict[str, Any]:
        """The configuration as plain YAML/JSON data (reads back with `config_from_dict`)."""
        return plain(dataclasses.asdict(self))


# Keys only an RLlib config has (training/rllib.py): such a file is run with `--engine rllib`.
RLLIB_ONLY_KEYS = ("iterations", "env_runners", "ray", "num_learners")


def load_config(path: str | Path) -> TrainConfig:
    """Read and check a YAML config file (see the module docstring): a path, or a shipped
    config's name (``classic_2p``; `config_path`)."""
    path = config_path(path)
    data = read_yaml(path)
    if isinstance(data, dict) and data.get("engine") == "selfplay":
        raise ValueError(f"{path}: a self-play config (engine: selfplay); run it with "
                         f"`qwixx-train --engine selfplay {path}`")
    if isinstance(data, dict) and data.get("engine") == "jax":
        raise ValueError(f"{path}: a JAX PPO config (engine: jax); run it with `qwixx-train --engine jax {path}`")
    if isinstance(data, dict) and any(key in data for key in RLLIB_ONLY_KEYS):
        keys = [key for key in RLLIB_ONLY_KEYS if key in data]
        raise ValueError(
            f"{path}: an RLlib config (it sets {keys}); run it with `qwixx-train --engine rllib {path}`"
        )
    return config_from_dict(data, path.parent)


def config_from_dict(data: Any, relative_to: str | Path | None = None) -> TrainConfig:
    """Check plain data (as read from YAML) and build the `TrainConfig`; a ``variant`` that
    names a sheet file is read from the folder `relative_to` when relative (`with_variant`)."""
    cfg = build(TrainConfig, with_variant(data, relative_to), "")
    _check_together(cfg)
    return cfg


def run_parser(prog: str, description: str, configs: str) -> argparse.ArgumentParser:
    """The command line the training commands share (PPO's and RLlib's): the YAML config (files
    like `configs`), ``--out`` (the run folder, `run_folder`) and ``--resume``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("config", help=f"YAML config ({configs})")
    add_run_options(parser)
    return parser


def run_folder(out: str | None, name: str) -> Path:
    """The run folder: ``--out`` if given, else ``runs/<name>``."""
    return Path(out) if out else Path("runs") / name


# --- checks across keys ----------------------------------------------------------------------------


def _check_together(cfg: TrainConfig) -> None:
    """Rules that involve several keys."""
    parts = Path(cfg.name).parts
    if not cfg.name.strip() or Path(cfg.name).is_absolute() or ".." in parts or "\0" in cfg.name:
        raise ValueError(
            f"name: got {cfg.name!r}; expected a non-empty relative name without '..' (it names the run "
            "folder runs/<name>)"
        )
    # the table options together, as every env checks them (a solo game has no 'win' reward,
    # classic no lucky rule but the default)
    _ = cfg.table
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
            _check_plays(cfg, name, f"opponents.scripted.{name}")
    if cfg.evaluation is not None:
        for i, name in enumerate(cfg.evaluation.opponents):
            _check_plays(cfg, name, f"evaluation.opponents[{i}]")
    if cfg.bc is not None:
        _check_plays(cfg, cfg.bc.teacher, "bc.teacher")


def _check_plays(cfg: TrainConfig, name: str, key: str) -> None:
    """`name` is a bot spec that can play the run's game (`bots.specs.check_spec`, the check
    the envs and the arena make too)."""
    try:
        check_spec(name, cfg.table, who="the run's config")
    except ValueError as err:
        raise ValueError(f"{key}: {err}") from None
