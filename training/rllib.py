"""Train a bot by PPO self-play on Ray RLlib from a YAML config (needs the ``rllib`` extra).

``python -m qwixx_env.training.rllib CONFIG [--out DIR] [--resume] [--iterations N]``
(or ``qwixx-train --engine rllib CONFIG ...``)

The config (`RLlibConfig`, below; ``configs/rllib_classic_2p.yaml`` is an example) is checked
key by key as the PPO configs are. The run uses `qwixx_env.integrations.rllib`: the
turn-based `QwixxMultiAgentEnv`, the action-masking PPO module shared by every self-play seat,
and frozen bots by name as opponents. It connects to a Ray cluster when ``ray.address`` or the
``RAY_ADDRESS`` environment variable names one, and starts a Ray of its own on this machine
otherwise; nothing else changes between a laptop and a cluster.

In the run folder (``--out``, default ``runs/<name>``): ``checkpoints/iter_NNNNNN`` (RLlib's
own checkpoints, every ``checkpoint_every`` iterations and at the end; ``latest.json`` names
the newest, written atomically after it, and the two newest are kept), ``policy.json`` +
``policy.npz`` (the learned module exported to the project's numpy format with each
checkpoint: ``qwixx_env.bots.load("runs/<name>/policy.json")`` plays it) and ``log.jsonl``
(one line per iteration). ``--resume`` continues from the newest checkpoint. A bad config
is a one-line error and exit status 2; at the end a JSON summary is printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray

from qwixx_env.core.rewards import REWARD_MODES
from qwixx_env.core.variant import LUCKY_RULES, VARIANT_NAMES
from qwixx_env.files import write_atomically
from qwixx_env.integrations.rllib import ACTIVATIONS, LEARNER, VIEWS, export_module, ppo_config
from qwixx_env.training.config import PlaysTable, _check, run_folder, run_parser
from qwixx_env.training.config_schema import build, plain
from qwixx_env.training.config_yaml import config_path, read_yaml

KEEP_CHECKPOINTS = 2


@dataclass(frozen=True)
class RayConfig:
    """Where the run executes. `address`: a Ray cluster (``"auto"``, ``"ray://head:10001"``,
    ``"10.0.0.1:6379"``); null: the ``RAY_ADDRESS`` environment variable if set, else a local Ray
    started with `num_cpus` (null: all) and `object_store_mb` of object store (null: Ray's
    default)."""

    address: str | None = None
    num_cpus: int | None = field(default=None, metadata=_check(low=1))
    object_store_mb: int | None = field(default=None, metadata=_check(low=75))


@dataclass(frozen=True)
class RunnersConfig:
    """Sampling: `num_env_runners` processes (0: the driver samples), each stepping
    `num_envs_per_env_runner` games."""

    num_env_runners: int = field(default=0, metadata=_check(low=0))
    num_envs_per_env_runner: int = field(default=8, metadata=_check(low=1))


@dataclass(frozen=True)
class RLlibPPOConfig:
    """PPO's hyper-parameters, by RLlib's names (`PPOConfig.training`); one iteration trains on
    `train_batch_size` agent steps."""

    learning_rate: float = field(default=3.0e-4, metadata=_check(low=0, open_low=True, high=1))
    train_batch_size: int = field(default=4000, metadata=_check(low=2))
    minibatch_size: int = field(default=512, metadata=_check(low=1))
    num_epochs: int = field(default=4, metadata=_check(low=1))
    gamma: float = field(default=0.995, metadata=_check(low=0, high=1))
    lambda_: float = field(default=0.95, metadata=_check(low=0, high=1))
    clip_param: float = field(default=0.2, metadata=_check(low=0, open_low=True, high=1))
    entropy_coeff: float = field(default=0.01, metadata=_check(low=0, high=1))
    vf_loss_coeff: float = field(default=0.5, metadata=_check(low=0, high=10))
    grad_clip: float = field(default=0.5, metadata=_check(low=0, open_low=True))


@dataclass(frozen=True)
class RLlibNetworkConfig:
    """The actor's and the critic's hidden layers (two separate MLPs, as the numpy export runs them)."""

    hidden: tuple[int, ...] = field(default=(256, 256), metadata=_check(low=1))
    activation: str = field(default="tanh", metadata=_check(choices=tuple(ACTIVATIONS)))


@dataclass(frozen=True)
class RLlibConfig(PlaysTable):
    """One RLlib run (see the module docstring and docs/integrations.md)."""

    name: str  # the run's name; its default folder is runs/<name>
    iterations: int = field(metadata=_check(low=1))  # training iterations (algo.train() calls)
    seed: int = field(default=0, metadata=_check(low=0, high=2**32 - 1))
    variant: str = field(default="classic", metadata=_check(choices=VARIANT_NAMES))
    lucky: str = field(default="bonus", metadata=_check(choices=LUCKY_RULES))
    num_players: int = field(default=2, metadata=_check(low=1, high=5))
    reward: str | None = field(default=None, metadata=_check(choices=REWARD_MODES))
    # who plays the other seats, by weight: "self" (the learned module) and bot names
    opponents: dict[str, float] = field(default_factory=lambda: {"self": 1.0}, metadata=_check(low=0, open_low=True))
    checkpoint_every: int = field(default=10, metadata=_check(low=1))  # iterations between checkpoints
    num_learners: int = field(default=0, metadata=_check(low=0))  # 0: the driver learns; n: n learner actors
    # the MultiAgentEnv: "aec" (one decision per env step) or "parallel" (a roll's white choices in one step)
    view: str = field(default="aec", metadata=_check(choices=tuple(VIEWS)))
    network: RLlibNetworkConfig = RLlibNetworkConfig()
    ppo: RLlibPPOConfig = RLlibPPOConfig()
    env_runners: RunnersConfig = RunnersConfig()
    ray: RayConfig = RayConfig()

    def to_dict(self) -> dict[str, Any]:
        return plain(dataclasses.asdict(self))


def load_config(path: str | Path) -> RLlibConfig:
    """Read and check an RLlib YAML config: a path, or a shipped config's name (`config_path`)."""
    return config_from_dict(read_yaml(config_path(path)))


def config_from_dict(data: Any) -> RLlibConfig:
    """Check plain data (as read from YAML) and build the `RLlibConfig`."""
    cfg = build(RLlibConfig, data, "")
    parts = Path(cfg.name).parts
    if not cfg.name.strip() or Path(cfg.name).is_absolute() or ".." in parts:
        raise ValueError(f"name: got {cfg.name!r}; expected a non-empty relative name without '..'")
    _ = cfg.table  # the table options together, as every env checks them
    if cfg.ppo.minibatch_size > cfg.ppo.train_batch_size:
        raise ValueError(f"ppo.minibatch_size: got {cfg.ppo.minibatch_size}; expected at most ppo.train_batch_size "
                         f"= {cfg.ppo.train_batch_size}")
    algo_config(cfg)  # the opponents and the table, checked as the run builds them
    return cfg


def algo_config(cfg: RLlibConfig) -> Any:
    """The run's `PPOConfig`."""
    return (
        ppo_config(table=cfg.table, opponents=cfg.opponents, hidden=cfg.network.hidden,
                   activation=cfg.network.activation, view=cfg.view)
        .env_runners(num_env_runners=cfg.env_runners.num_env_runners,
                     num_envs_per_env_runner=cfg.env_runners.num_envs_per_env_runner)
        .learners(num_learners=cfg.num_learners)
        .training(lr=cfg.ppo.learning_rate, train_batch_size_per_learner=cfg.ppo.train_batch_size,
                  minibatch_size=cfg.ppo.minibatch_size, num_epochs=cfg.ppo.num_epochs, gamma=cfg.ppo.gamma,
                  lambda_=cfg.ppo.lambda_, clip_param=cfg.ppo.clip_param, entropy_coeff=cfg.ppo.entropy_coeff,
                  vf_loss_coeff=cfg.ppo.vf_loss_coeff, grad_clip=cfg.ppo.grad_clip)
        .debugging(seed=cfg.seed)
    )


def start_ray(cfg: RayConfig) -> None:
    """Connect to the cluster `cfg.address` or ``RAY_ADDRESS`` names, else start Ray here."""
    if ray.is_initialized():
        return
    address = cfg.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=False)
        return
    store = None if cfg.object_store_mb is None else cfg.object_store_mb * 2**20
    # "local": a Ray of its own, even where `ray start` left a cluster running on this machine
    ray.init(address="local", num_cpus=cfg.num_cpus, object_store_memory=store, include_dashboard=False,
             log_to_driver=False)


def latest_checkpoint(run: Path) -> Path | None:
    """The newest complete checkpoint of a run folder (``checkpoints/latest.json``), if any."""
    pointer = run / "checkpoints" / "latest.json"
    if not pointer.is_file():
        return None
    return run / "checkpoints" / json.loads(pointer.read_text())["checkpoint"]


def save(algo: Any, cfg: RLlibConfig, run: Path, started: float) -> Path:
    """An RLlib checkpoint and the numpy export of the learned module in the run folder `run`
    (an absolute path, as RLlib takes it); old checkpoints pruned."""
    folder = run / "checkpoints"
    target = folder / f"iter_{algo.iteration:06d}"
    if target.exists():
        shutil.rmtree(target)
    algo.save_to_path(str(target))
    meta = {"engine": f"ray.rllib {ray.__version__}", "iteration": algo.iteration, "config": cfg.to_dict(),
            "wall_time": round(time.perf_counter() - started, 1)}
    export_module(algo.get_module(LEARNER), run / "policy", variant=cfg.variant, num_players=cfg.num_players,
                  lucky=cfg.lucky, meta=meta)
    write_atomically(folder / "latest.json", json.dumps({"checkpoint": target.name}).encode())
    for old in sorted(folder.glob("iter_*"))[:-KEEP_CHECKPOINTS]:
        shutil.rmtree(old)
    return target


def log_line(result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The few numbers of an iteration worth a log line."""
    runners = result.get("env_runners", {})
    returns = runners.get("module_episode_returns_mean", {})
    return {
        "iteration": result.get("training_iteration"),
        "env_steps": runners.get("num_env_steps_sampled_lifetime"),
        "episodes": runners.get("num_episodes_lifetime"),
        # a module with no finished episode this iteration has NaN: left out (JSON has no NaN)
        "returns": {k: round(float(v), 4) for k, v in returns.items() if v == v},
        "seconds": round(seconds, 2),
    }


def train(cfg: RLlibConfig, run: Path, *, resume: bool = False) -> dict[str, Any]:
    """Run (or, with `resume`, continue) the training; return the summary."""
    if resume and latest_checkpoint(run) is None:
        raise ValueError(f"--resume: {run} holds no checkpoint (checkpoints/latest.json)")
    if not resume and latest_checkpoint(run) is not None:
        raise ValueError(f"--out: {run} already holds a run; pass --resume to continue it, or another folder")
    run.mkdir(parents=True, exist_ok=True)
    run = run.resolve()  # RLlib saves and restores by URI, and a relative path's has an empty scheme
    start_ray(cfg.ray)
    started = time.perf_counter()
    algo = algo_config(cfg).build_algo()
    try:
        if resume:
            algo.restore_from_path(str(latest_checkpoint(run)))
        last = None
        with open(run / "log.jsonl", "a") as log:
            while algo.iteration < cfg.iterations:
                tick = time.perf_counter()
                last = log_line(algo.train(), time.perf_counter() - tick)
                log.write(json.dumps(last) + "\n")
                log.flush()
                print(json.dumps(last), flush=True)
                if algo.iteration % cfg.checkpoint_every == 0 and algo.iteration < cfg.iterations:
                    save(algo, cfg, run, started)
        checkpoint = save(algo, cfg, run, started)
    finally:
        algo.stop()
    return {"run": str(run), "iterations": algo.iteration, "checkpoint": str(checkpoint),
            "policy": str(run / "policy.json"), "wall_time": round(time.perf_counter() - started, 1), "last": last}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    description = (__doc__ or "").partition("\n")[0]
    parser = run_parser("python -m qwixx_env.training.rllib", description,
                        "a file's path, or a shipped config's name: rllib_classic_2p")
    parser.add_argument("--iterations", type=int, help="training iterations in all (overrides iterations)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        cfg = load_config(args.config)
        if args.iterations is not None:
            cfg = config_from_dict({**cfg.to_dict(), "iterations": args.iterations})
        out = run_folder(args.out, cfg.name)
        summary = train(cfg, out, resume=args.resume)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
