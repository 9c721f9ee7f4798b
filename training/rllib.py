"""Train a bot by PPO self-play on Ray RLlib from a YAML config (needs the ``rllib`` extra).

``python -m qwixx_env.training.rllib CONFIG [--out DIR] [--resume] [--iterations N]``
(or ``qwixx-train --engine rllib CONFIG ...``)

The config (`RLlibConfig`, below; ``configs/rllib_classic_2p.yaml`` is an example) is checked
key by key as the PPO configs are. The run uses `qwixx_env.integrations.rllib`. By default
(``env: vector``) every env runner steps a `QwixxVectorEnv` of ``num_envs_per_env_runner``
games, the learner's seat against opponents played inside the engine, with the action-masking
PPO module learning; ``opponents`` is the SB3 configs' pool (``scripted`` bots by weight and
``self_play`` snapshots of the learner, broadcast to every env runner: `training.league`),
and ``evaluation`` plays the learner against the ladder in the arena (``eval.jsonl``). With
``env: multi_agent`` the run steps the turn-based `QwixxMultiAgentEnv` instead, every
self-play seat playing the learned module (``self_play.share`` of the seats' weight) and the
scripted bots as frozen modules. It connects to a Ray cluster when ``ray.address`` or the
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
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.utils.metrics import ENV_RUNNER_SAMPLING_TIMER, LEARNER_UPDATE_TIMER, TIMERS

from qwixx_env.bots import make_bot
from qwixx_env.bots.specs import check_spec
from qwixx_env.core.rewards import REWARD_MODES
from qwixx_env.core.variant import LUCKY_RULES
from qwixx_env.files import write_atomically
from qwixx_env.integrations.rllib import (
    ACTIVATIONS,
    ENV_RUNNERS,
    LEARNER,
    SELF,
    VIEWS,
    export_module,
    learned_module,
    ppo_config,
    vector_ppo_config,
)
from qwixx_env.training import bc
from qwixx_env.training.config import (
    BCConfig,
    EvaluationConfig,
    OpponentsConfig,
    PlaysTable,
    SelfPlayConfig,
    _check,
    run_folder,
    run_parser,
)
from qwixx_env.training.config import config_from_dict as train_config_from_dict
from qwixx_env.training.config_schema import build, plain
from qwixx_env.training.config_yaml import config_path, read_yaml, with_variant
from qwixx_env.training.league import WARM_START, League, shipped_policies

KEEP_CHECKPOINTS = 2
ENVS = ("vector", "multi_agent")
RUN_FILES = ("log.jsonl", "eval.jsonl", "bc.json", f"{WARM_START}.json", f"{WARM_START}.npz", "policy.json",
             "policy.npz", "eval", "snapshots", "checkpoints")
"""What a run writes into its folder: what a start over removes of a start interrupted before
its first checkpoint (`check_run_folder`)."""


@dataclass(frozen=True)
class RayConfig:
    """Where the run executes. `address`: a Ray cluster (``"auto"``, ``"ray://head:10001"``,
    ``"10.0.0.1:6379"``); null: the ``RAY_ADDRESS`` environment variable if set, else a local Ray
    started with `num_cpus` (null: all) and `object_store_mb` of object store (null: Ray's
    default). `runtime_env`: Ray's, for every worker (packages, environment variables)."""

    address: str | None = None
    num_cpus: int | None = field(default=None, metadata=_check(low=1))
    object_store_mb: int | None = field(default=None, metadata=_check(low=75))
    # Ray's runtime_env for every worker (e.g. {pip: [...], env_vars: {...}}), as ray.init takes it
    runtime_env: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunnersConfig:
    """Sampling: `num_env_runners` processes (0: the driver samples), each stepping
    `num_envs_per_env_runner` games; on the vector path each is a `runner`: ``batched``
    (`BatchedEnvRunner`, all of its games as one batch per step) or ``rllib`` (RLlib's own
    `SingleAgentEnvRunner`, game by game, for custom connectors and per-episode callbacks);
    each reserves `num_cpus_per_env_runner` of the cluster's CPUs."""

    num_env_runners: int = field(default=0, metadata=_check(low=0))
    num_envs_per_env_runner: int = field(default=256, metadata=_check(low=1))
    num_cpus_per_env_runner: int = field(default=1, metadata=_check(low=1))
    runner: str = field(default="batched", metadata=_check(choices=tuple(ENV_RUNNERS)))


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
    variant: str = field(default="classic")  # as TrainConfig's: a sheet file is read by config_from_dict
    lucky: str = field(default="bonus", metadata=_check(choices=LUCKY_RULES))
    num_players: int = field(default=2, metadata=_check(low=1, high=5))
    reward: str | None = field(default=None, metadata=_check(choices=REWARD_MODES))
    # what the env runners step: "vector" (QwixxVectorEnv, opponents in the engine) or "multi_agent"
    env: str = field(default="vector", metadata=_check(choices=ENVS))
    # who plays the other seats: the SB3 configs' pool (scripted bots by weight, self_play snapshots)
    opponents: OpponentsConfig = field(default_factory=lambda: OpponentsConfig(self_play=SelfPlayConfig(share=1.0)))
    evaluation: EvaluationConfig | None = EvaluationConfig()  # the arena against the ladder; None: none
    checkpoint_every: int = field(default=10, metadata=_check(low=1))  # iterations between checkpoints
    num_learners: int = field(default=0, metadata=_check(low=0))  # 0: the driver learns; n: n learner actors
    num_gpus_per_learner: float = field(default=0, metadata=_check(low=0))  # a learner on a GPU: 1
    bc: BCConfig | None = None  # a behaviour-cloning warm start (as the PPO configs'), before the first iteration
    # env: multi_agent only: "aec" (one decision per env step) or "parallel" (a roll's white choices in one step)
    view: str = field(default="aec", metadata=_check(choices=tuple(VIEWS)))
    network: RLlibNetworkConfig = RLlibNetworkConfig()
    ppo: RLlibPPOConfig = RLlibPPOConfig()
    env_runners: RunnersConfig = RunnersConfig()
    ray: RayConfig = RayConfig()

    def to_dict(self) -> dict[str, Any]:
        return plain(dataclasses.asdict(self))

    @property
    def module_id(self) -> str:
        """The learned module's id: RLlib's default on the vector path, `LEARNER` multi-agent."""
        return DEFAULT_MODULE_ID if self.env == "vector" else LEARNER

    def seat_weights(self) -> dict[str, float]:
        """The multi-agent path's opponent weights (`ppo_config`'s): the learned module
        (`SELF`) `self_play.share` of them, the scripted bots the rest in their proportions."""
        scripted, sp = self.opponents.scripted, self.opponents.self_play
        share = 0.0 if sp is None else 1.0 if not scripted else sp.share
        total = sum(scripted.values())
        weights = {name: (1 - share) * w / total for name, w in scripted.items() if share < 1}
        return {**({SELF: share} if share > 0 else {}), **weights}


def load_config(path: str | Path) -> RLlibConfig:
    """Read and check an RLlib YAML config: a path, or a shipped config's name (`config_path`)."""
    path = config_path(path)
    return config_from_dict(read_yaml(path), path.parent)


def config_from_dict(data: Any, relative_to: str | Path | None = None) -> RLlibConfig:
    """Check plain data (as read from YAML) and build the `RLlibConfig` (a sheet file's
    ``variant`` relative to `relative_to`, as `training.config.config_from_dict` reads it)."""
    data = with_variant(data, relative_to)
    opponents = data.get("opponents") if isinstance(data, dict) else None
    if isinstance(opponents, dict) and not set(opponents) <= {"scripted", "self_play"}:  # 0.1's {self: 3, greedy: 1}
        raise ValueError(f"opponents: got {opponents!r}; expected opponents.scripted (bot spec -> weight) and/or "
                         "opponents.self_play (share: the learner's snapshots' weight), as the PPO configs give them")
    cfg = build(RLlibConfig, data, "")
    parts = Path(cfg.name).parts
    if not cfg.name.strip() or Path(cfg.name).is_absolute() or ".." in parts:
        raise ValueError(f"name: got {cfg.name!r}; expected a non-empty relative name without '..'")
    _ = cfg.table  # the table options together, as every env checks them
    if cfg.ppo.minibatch_size > cfg.ppo.train_batch_size:
        raise ValueError(f"ppo.minibatch_size: got {cfg.ppo.minibatch_size}; expected at most ppo.train_batch_size "
                         f"= {cfg.ppo.train_batch_size}")
    if cfg.num_players > 1 and not cfg.opponents.scripted and cfg.opponents.self_play is None:
        raise ValueError("opponents: empty; give opponents.scripted (bot -> weight) and/or opponents.self_play")
    for name in cfg.opponents.scripted:
        try:
            check_spec(name, cfg.table, who="the run's config")
        except ValueError as err:
            raise ValueError(f"opponents.scripted.{name}: {err}") from None
    for i, name in enumerate(cfg.evaluation.opponents if cfg.evaluation else ()):
        try:
            check_spec(name, cfg.table, who="the run's config")
        except ValueError as err:
            raise ValueError(f"evaluation.opponents[{i}]: {err}") from None
    algo_config(cfg)  # the opponents and the table, checked as the run builds them
    return cfg


def algo_config(cfg: RLlibConfig, shipped: Mapping[str, Any] | None = None) -> Any:
    """The run's `PPOConfig`: the vector path (`vector_ppo_config`, the scripted pool; the
    league adds the snapshots) or the multi-agent one (`ppo_config`). `shipped`: the scripted
    bots given by a checkpoint's path, already loaded (`shipped_policies`; loaded here if not)."""
    if cfg.env == "vector":
        # the pool before any snapshot: the scripted bots, or (pure self-play) a stand-in the
        # league replaces with the learner's first snapshot before the first sample
        scripted = dict(cfg.opponents.scripted) or {"random": 1.0}
        if shipped is None:  # checkpoints by path: loaded here, on the driver, and sent through Ray
            shipped = shipped_policies(scripted, cfg.table)
        scripted = {shipped.get(spec, spec): weight for spec, weight in scripted.items()}
        config = vector_ppo_config(table=cfg.table, opponents=scripted if cfg.num_players > 1 else {"random": 1.0},
                                   hidden=cfg.network.hidden, activation=cfg.network.activation,
                                   env_runner=cfg.env_runners.runner)
    else:
        config = ppo_config(table=cfg.table, opponents=cfg.seat_weights(), hidden=cfg.network.hidden,
                            activation=cfg.network.activation, view=cfg.view)
    return (
        config
        .env_runners(num_env_runners=cfg.env_runners.num_env_runners,
                     num_envs_per_env_runner=cfg.env_runners.num_envs_per_env_runner,
                     num_cpus_per_env_runner=cfg.env_runners.num_cpus_per_env_runner)
        .learners(num_learners=cfg.num_learners, num_gpus_per_learner=cfg.num_gpus_per_learner)
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
        ray.init(address=address, log_to_driver=False, runtime_env=cfg.runtime_env)
        return
    store = None if cfg.object_store_mb is None else cfg.object_store_mb * 2**20
    # "local": a Ray of its own, even where `ray start` left a cluster running on this machine
    ray.init(address="local", num_cpus=cfg.num_cpus, object_store_memory=store, include_dashboard=False,
             log_to_driver=False, runtime_env=cfg.runtime_env)


def latest_checkpoint(run: Path) -> Path | None:
    """The newest complete checkpoint of a run folder (``checkpoints/latest.json``), if any."""
    pointer = run / "checkpoints" / "latest.json"
    if not pointer.is_file():
        return None
    return run / "checkpoints" / json.loads(pointer.read_text())["checkpoint"]


def checkpoint_iteration(checkpoint: Path) -> int:
    """The iteration a checkpoint of `save` was taken at (its folder is ``iter_NNNNNN``)."""
    return int(checkpoint.name.removeprefix("iter_"))


def check_run_folder(cfg: RLlibConfig, run: Path, resume: bool) -> None:
    """Refuse a run folder the run cannot go on in: `resume` without a checkpoint, a
    checkpoint without `resume`, or a finished run resumed without more iterations (which
    would evaluate its final policy again as the warm start, step 0). A start interrupted
    before its first checkpoint, run again without `resume`, starts over: its files
    (`RUN_FILES`) are removed, and said."""
    found = latest_checkpoint(run)
    if resume and found is None:
        why = " (its start was interrupted before the first)" if (run / "log.jsonl").exists() else ""
        raise ValueError(f"--resume: {run} holds no checkpoint (checkpoints/latest.json){why}; run again without "
                         "--resume to start over")
    if not resume and found is not None:
        raise ValueError(f"--out: {run} already holds a run; pass --resume to continue it, or another folder")
    if found is not None and checkpoint_iteration(found) >= cfg.iterations:
        done = checkpoint_iteration(found)
        raise ValueError(f"--resume: {run} has already trained its {done} iterations ({found.name}; iterations: "
                         f"{cfg.iterations}); pass --iterations N (N > {done}) to train it further")
    if found is None:
        left = [name for name in RUN_FILES if (run / name).exists()]
        if left:
            print(f"{run}: a start interrupted before its first checkpoint; starting over (removing "
                  f"{', '.join(left)})", file=sys.stderr, flush=True)
            for name in left:
                if (run / name).is_dir():
                    shutil.rmtree(run / name)
                else:
                    (run / name).unlink()


def save(algo: Any, cfg: RLlibConfig, run: Path, started: float, league: League | None = None) -> Path:
    """An RLlib checkpoint (with the league's pool, if any) and the numpy export of the learned
    module in the run folder `run` (an absolute path, as RLlib takes it); old checkpoints pruned."""
    folder = run / "checkpoints"
    target = folder / f"iter_{algo.iteration:06d}"
    if target.exists():
        shutil.rmtree(target)
    algo.save_to_path(str(target))
    if league is not None:
        league.save(target)
    meta = {"engine": f"ray.rllib {ray.__version__}", "iteration": algo.iteration, "config": cfg.to_dict(),
            "wall_time": round(time.perf_counter() - started, 1)}
    export_module(learned_module(algo, cfg.module_id), run / "policy", variant=cfg.variant,
                  num_players=cfg.num_players, lucky=cfg.lucky, meta=meta)
    write_atomically(folder / "latest.json", json.dumps({"checkpoint": target.name}).encode())
    for old in sorted(folder.glob("iter_*"))[:-KEEP_CHECKPOINTS]:
        shutil.rmtree(old)
    return target


ITERATION_TIMERS = ((TIMERS, ENV_RUNNER_SAMPLING_TIMER), (TIMERS, LEARNER_UPDATE_TIMER))
"""The keys of RLlib's timers of an iteration's sampling and of its learner update."""


def time_each_iteration(algo: Any) -> None:
    """Make `ITERATION_TIMERS` report the last iteration's own times (RLlib's ``"item"``
    reduction), not RLlib's moving averages (weight 0.01), which lag: an iteration of 6.8 s
    logged 0.7 s of sampling. Call it after a restore, which brings back the checkpoint's."""
    for key in ITERATION_TIMERS:
        algo.metrics.delete(*key, key_error=False)
        algo.metrics.log_time(key, reduce="item")  # only declares it: the algorithm's own timing fills it


def log_line(result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The few numbers of an iteration worth a log line."""
    runners = result.get("env_runners", {})
    # RLlib's multi-agent runner writes module_episode_returns_mean, its single-agent one (the
    # vector path's) module_episode_return_mean
    returns = runners.get("module_episode_returns_mean") or runners.get("module_episode_return_mean") or {}
    timers = result.get(TIMERS, {})
    return {
        "iteration": result.get("training_iteration"),
        "env_steps": runners.get("num_env_steps_sampled_lifetime"),
        "episodes": runners.get("num_episodes_lifetime"),
        # a module with no finished episode this iteration has NaN: left out (JSON has no NaN)
        "returns": {k: round(float(v), 4) for k, v in returns.items() if v == v},
        "return_mean": _finite(runners.get("episode_return_mean")),
        "seconds": round(seconds, 2),
        # where the iteration's time went (`time_each_iteration`): sampling, and the learner's update
        "sample_seconds": _finite(timers.get(ENV_RUNNER_SAMPLING_TIMER)),
        "learn_seconds": _finite(timers.get(LEARNER_UPDATE_TIMER)),
    }


def trim_logs(run: Path, iteration: int, evaluated: int | None) -> None:
    """On resuming from a checkpoint at `iteration`: drop the lines a killed segment wrote after
    it (``log.jsonl``'s later iterations; ``eval.jsonl``'s evaluations after `evaluated`
    decisions), which the run is about to write again. Each file is rewritten atomically."""
    for name, key, last in (("log.jsonl", "iteration", iteration), ("eval.jsonl", "steps", evaluated)):
        path = run / name
        if last is None or not path.is_file():
            continue
        lines = path.read_text().splitlines(keepends=True)
        kept = [line for line in lines if line.strip() and json.loads(line).get(key, 0) <= last]
        if len(kept) != len(lines):
            write_atomically(path, "".join(kept).encode())


def _finite(value: Any) -> float | None:
    """A metric rounded, or None where RLlib has none yet (NaN, missing: JSON has no NaN)."""
    return None if value is None or value != value else round(float(value), 4)


def behaviour_cloning(algo: Any, cfg: RLlibConfig, b: BCConfig, run: Path) -> dict[str, Any]:
    """The warm start of the SB3 path for the learned module, by the same routine
    (`training.bc.collect`, then `training.bc.fit` on the module's masked logits and critic):
    the teacher's decisions in the learner's seat against the scripted pool, cross-entropy of
    the teacher's action plus the critic's squared error on the returns; the weights go to the
    learner and every env runner. Returns the figures (``bc.json``)."""
    began = time.perf_counter()
    plays = train_config_from_dict({  # the table and pool as the SB3 path collects demonstrations for them
        "name": cfg.name, "total_steps": 1, "seed": cfg.seed, "variant": cfg.variant, "lucky": cfg.lucky,
        "num_players": cfg.num_players, "reward": cfg.reward, "evaluation": None,
        "opponents": {"scripted": dict(cfg.opponents.scripted) or {"random": 1}} if cfg.num_players > 1 else None,
        "ppo": {"gamma": cfg.ppo.gamma}})
    demos, stats = bc.collect(plays, make_bot(b.teacher, cfg.table, cfg.seed), b.samples, seed=cfg.seed + 7,
                              num_envs=256)
    module = learned_module(algo, cfg.module_id)

    def forward(obs: Any, masks: Any) -> tuple[Any, Any]:
        batch = {Columns.OBS: {"observations": obs, "action_mask": masks.float()}}
        return module.forward_train(batch)[Columns.ACTION_DIST_INPUTS], module.compute_values(batch)

    def report(figures: dict[str, float]) -> None:
        print(f"bc epoch {figures['epoch']}: agreement {figures['agreement']:.1%}", flush=True)

    figures = bc.fit(forward, module.parameters(), demos, epochs=b.epochs, batch_size=b.batch_size,
                     learning_rate=b.learning_rate, vf_coef=cfg.ppo.vf_loss_coeff, seed=cfg.seed,
                     train_mode=module.train, on_epoch=report)
    module.eval()
    algo.learner_group.set_weights({cfg.module_id: module.get_state()})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)
    figures = {"teacher": b.teacher, **stats, **figures, "total_seconds": time.perf_counter() - began}
    write_atomically(run / "bc.json", (json.dumps(figures, indent=1) + "\n").encode())
    return figures


def train(cfg: RLlibConfig, run: Path, *, resume: bool = False) -> dict[str, Any]:
    """Run (or, with `resume`, continue) the training; return the summary."""
    check_run_folder(cfg, run, resume)
    run.mkdir(parents=True, exist_ok=True)
    run = run.resolve()  # RLlib saves and restores by URI, and a relative path's has an empty scheme
    start_ray(cfg.ray)
    started = time.perf_counter()
    # loaded once: the env config and the league's broadcasts hand the runners the same objects
    shipped = shipped_policies(cfg.opponents.scripted, cfg.table)
    algo = algo_config(cfg, shipped).build_algo()
    learner = f"{cfg.num_learners} learner actor(s)" if cfg.num_learners else "the driver"
    print(f"training on {'cuda' if cfg.num_gpus_per_learner else 'cpu'} ({learner} learns; "
          f"num_gpus_per_learner: {cfg.num_gpus_per_learner})", file=sys.stderr, flush=True)
    league = make_league(cfg, run, shipped)
    evaluation = None
    try:
        found = latest_checkpoint(run) if resume else None
        if found is not None:
            algo.restore_from_path(str(found))
            if league is not None:
                league.restore(found)
            trim_logs(run, algo.iteration, None if league is None else league.last["eval"])
        elif cfg.bc is not None:
            behaviour_cloning(algo, cfg, cfg.bc, run)
        if league is not None:
            league.start(algo)
            if found is None and cfg.evaluation is not None:
                evaluation = league.evaluate(algo, 0)  # the warm start: the in-run evaluations begin from it
        last = None
        time_each_iteration(algo)
        with open(run / "log.jsonl", "a") as log:
            while algo.iteration < cfg.iterations:
                tick = time.perf_counter()
                last = log_line(algo.train(), time.perf_counter() - tick)
                if league is not None:
                    evaluation = league.after_iteration(algo, int(last["env_steps"])) or evaluation
                log.write(json.dumps(last) + "\n")
                log.flush()
                print(json.dumps(last), flush=True)
                if algo.iteration % cfg.checkpoint_every == 0 and algo.iteration < cfg.iterations:
                    save(algo, cfg, run, started, league)
        steps = int(last["env_steps"]) if last else 0
        if league is not None and cfg.evaluation is not None and league.last["eval"] != steps:
            evaluation = league.evaluate(algo, steps)  # the final policy, as the SB3 path ends
        checkpoint = save(algo, cfg, run, started, league)
    finally:
        algo.stop()
    return {"run": str(run), "iterations": algo.iteration, "checkpoint": str(checkpoint),
            "policy": str(run / "policy.json"), "wall_time": round(time.perf_counter() - started, 1), "last": last,
            "evaluation": evaluation}


def make_league(cfg: RLlibConfig, run: Path, shipped: Mapping[str, Any]) -> League | None:
    """The run's league: on the vector path with other seats to fill (None otherwise);
    `shipped` the scripted bots given by path, loaded (`shipped_policies`)."""
    if cfg.env != "vector" or cfg.num_players == 1:
        return None
    meta = {"engine": f"ray.rllib {ray.__version__}", "config": cfg.to_dict()}
    return League(cfg.table, cfg.opponents, cfg.evaluation, run, cfg.seed, meta, shipped)


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
        check_run_folder(cfg, out, args.resume)  # before Ray starts
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    ours = not ray.is_initialized()  # a Ray this command starts (or connects to) it also shuts down
    previous = signal.getsignal(signal.SIGTERM)
    try:
        start_ray(cfg.ray)
        # after Ray's start, which puts in its own SIGTERM handler (a stack dump, then abort):
        # SIGTERM as Ctrl-C, the same clean stop
        signal.signal(signal.SIGTERM, _interrupt)
        summary = train(cfg, out, resume=args.resume)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if latest_checkpoint(out) is None:
            print(f"interrupted before the first checkpoint: Ray shut down; run the same command again (without "
                  f"--resume) to start {out} over", file=sys.stderr)
        else:
            print(f"interrupted: Ray shut down; continue with --out {out} --resume from the last checkpoint",
                  file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
        if ours and ray.is_initialized():
            ray.shutdown()
    print(json.dumps(summary, indent=1))
    return 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


if __name__ == "__main__":
    sys.exit(main())
