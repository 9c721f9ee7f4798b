"""How fast RLlib PPO samples and trains Qwixx with 0, 1 and 2 env runners, old and new path, against SB3.

Every figure is **decisions per second** of 2-player classic, all on this machine:

* RLlib's vector path (the new one, `vector_ppo_config`, what ``qwixx-train --engine rllib``
  runs): every env runner steps a `QwixxVectorEnv` of 256 games, the learner's seat against
  the ``random`` opponent played inside the engine (as the SB3 measurement below), the
  masking PPO module with two 256-unit tanh layers per network; 0, 1 and 2 env runners,
  sampling and training measured as for the multi-agent path. Each runner is a
  `BatchedEnvRunner` (the default: the whole batch of games per step, episodes cut from the
  arrays), and, for comparison, RLlib's own `SingleAgentEnvRunner` (game by game).
* RLlib's multi-agent path (the old one, ``env: multi_agent``; the masking PPO module,
  pure self-play, 8 games per env runner): with
  ``num_env_runners`` 0 (the driver samples), 1 and 2 (remote runner processes, sampling in
  parallel). *sample*: ``EnvRunner.sample`` alone, every runner at once, its episodes handed
  back to the driver through Ray (as training does); decisions are agent
  steps, each chosen by the module (one per env step of `QwixxMultiAgentEnv`; with 0 runners
  also `QwixxParallelMultiAgentEnv`, whose white-action steps hold every seat's decision). *train*: whole
  ``algo.train()`` iterations (sampling, then PPO's update on the learner in the driver:
  ``train_batch_size`` decisions, minibatches of 500, 4 epochs).
* SB3 (the project's own PPO path, `qwixx-train`): sb3-contrib's ``MaskablePPO("MlpPolicy")``
  with the same network sizes on ``Sb3VecEnv(QwixxVectorEnv(64 games, opponents="random"))``,
  and again in the vector path's shape (256 games, 16,384 decisions a rollout, minibatches of
  2,048: ``sb3_same_shape``, the fair comparison);
  the opponent seat is played inside the compiled engine, so only the learner's decisions
  count. *sample*: rollout collection (callback timestamps); *train*: ``learn()`` as a whole,
  ``n_steps=64`` (4096 decisions a rollout), minibatches of 512, 4 epochs.

Every measurement runs in a fresh Python process of its own (one process measuring all of
them in turn made the later ones slower), and SB3 is measured first and last, the mean of the
two being the reference (both rounds are in the JSON), so that a drift in the machine's load
hits both sides alike.

* Like for like: three back-to-back pairs of SB3 in the vector path's shape and the vector
  path with 0 env runners minimising the loss SB3's PPO minimises (``use_kl_loss=False``:
  RLlib's PPO adds a KL penalty by default, SB3's has none); the ratio of each pair, and
  their median.
* The learner's batch: the vector path's `BatchedAdvantages` (the default), and with 0 env
  runners RLlib's own learner connectors (``learner_pipeline="rllib"``), for comparison.
* The scaling run: the vector path with 4 env runners too, on however many cores the machine
  has (its sampling figure is the runners' alone: the learner is not in it).
* The env alone: `QwixxMultiAgentEnv` stepped with random legal actions, no RLlib around it.

Torch runs one thread per process. The machine is shared: the load average before and after
every measurement is recorded with the figures. Bounded: about ``--seconds`` per measurement.

Run: ``python benchmarks/rllib_speed.py [--seconds 20] [--out benchmarks/results]``. Needs the
``rllib`` and ``train`` extras. Writes ``rllib_speed.json``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import ray  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402

from qwixx_env.envs.sb3 import Sb3VecEnv  # noqa: E402
from qwixx_env.envs.vector import QwixxVectorEnv  # noqa: E402
from qwixx_env.integrations.rllib import (  # noqa: E402
    QwixxMultiAgentEnv,
    QwixxParallelMultiAgentEnv,
    ppo_config,
    vector_ppo_config,
)

HIDDEN = (256, 256)
TRAIN_BATCH = 4000
VECTOR_GAMES = 256  # games per env runner on the vector path
PAIRS = 3  # back-to-back pairs of the like-for-like comparison (SB3, then RLlib with the same loss)
VECTOR_TRAIN_BATCH = 16384  # the shipped config's (configs/rllib_classic_2p.yaml)


def env_speed(seconds: float) -> float:
    """Decisions/s of `QwixxMultiAgentEnv` alone (random legal actions, no RLlib around it): the
    ceiling the env puts on sampling."""
    env, rng = QwixxMultiAgentEnv({"num_players": 2}), np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        (agent, o), = obs.items()
        obs, _, terminated, _, _ = env.step({agent: rng.choice(np.flatnonzero(o["action_mask"]))})
        steps += 1
        if terminated["__all__"]:
            obs, _ = env.reset()
    return round(steps / (time.perf_counter() - start), 1)


def _decisions(result: dict) -> int:
    """Agent steps sampled so far (one per decision) from an iteration's result."""
    steps = result["env_runners"]["num_agent_steps_sampled_lifetime"]
    return sum(steps.values()) if isinstance(steps, dict) else steps


def loads() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def rllib_speed(num_env_runners: int, seconds: float, env: type = QwixxMultiAgentEnv) -> dict[str, float]:
    """Sampling and training decisions/s of the multi-agent path with `num_env_runners` remote runners on `env`."""
    config = (
        ppo_config(num_players=2, hidden=HIDDEN)
        .environment(env)
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=8, num_cpus_per_env_runner=1)
        .training(train_batch_size_per_learner=TRAIN_BATCH, minibatch_size=500, num_epochs=4)
        .debugging(seed=0)
    )
    return measure(config, num_env_runners, seconds, per_call=1000)


def vector_speed(num_env_runners: int, seconds: float, env_runner: str = "batched",
                 learner_pipeline: str = "batched", loss: str = "rllib") -> dict[str, float]:
    """Sampling and training learner decisions/s of the vector path with `num_env_runners`
    remote runners, each a `env_runner` (``"batched"``: `BatchedEnvRunner`, ``"rllib"``:
    RLlib's `SingleAgentEnvRunner`), the learner's batch built by `learner_pipeline`
    (``"batched"``: `BatchedAdvantages`, ``"rllib"``: RLlib's default connectors). `loss`:
    ``"rllib"``, RLlib's PPO loss as it comes (with its KL penalty, ``use_kl_loss``), or
    ``"sb3"``, the loss SB3's PPO minimises (clipped surrogate, value and entropy terms only)."""
    config = (
        vector_ppo_config(num_players=2, opponents={"random": 1}, hidden=HIDDEN, env_runner=env_runner,
                          learner_pipeline=learner_pipeline)
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=VECTOR_GAMES, num_cpus_per_env_runner=1)
        .training(train_batch_size_per_learner=VECTOR_TRAIN_BATCH, minibatch_size=2048, num_epochs=4,
                  use_kl_loss=LOSSES[loss])
        .debugging(seed=0)
    )
    return measure(config, num_env_runners, seconds, per_call=VECTOR_GAMES * 32)


LOSSES = {"rllib": True, "sb3": False}
"""The vector path's PPO loss by name -> ``use_kl_loss``: RLlib's own, or the one SB3 minimises."""


def measure(config, num_env_runners: int, seconds: float, per_call: int) -> dict[str, float]:
    """Sampling (`per_call` steps per runner per call, every runner at once) and training
    (whole iterations) decisions/s of the algorithm `config` builds; the load average before and after."""
    load_before = loads()
    algo = config.build_algo()
    try:
        if num_env_runners == 0:
            def sample() -> int:
                return sum(e.agent_steps() for e in algo.env_runner.sample(num_timesteps=per_call))
        else:
            def sample() -> int:
                # the episodes themselves come back to the driver, as in training: the hand-over is timed
                batches = algo.env_runner_group.foreach_env_runner(
                    lambda runner: runner.sample(num_timesteps=per_call), local_env_runner=False,
                )
                return sum(e.agent_steps() for episodes in batches for e in episodes)
        sample()  # warm-up: first forward passes, kernel compiles in the runners
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            steps += sample()
        sampled = steps / (time.perf_counter() - start)
        algo.train()  # warm-up iteration
        before = _decisions(algo.train())
        iterations, start = 0, time.perf_counter()
        after = before
        while time.perf_counter() - start < seconds or iterations == 0:
            after = _decisions(algo.train())
            iterations += 1
        trained = (after - before) / (time.perf_counter() - start)
    finally:
        algo.stop()
    return {"sample_decisions_per_second": round(sampled, 1), "train_decisions_per_second": round(trained, 1),
            "train_iterations": iterations, "load_average_before": load_before, "load_average_after": loads()}


class _RolloutClock(BaseCallback):
    """Time spent collecting rollouts (SB3's rollout hooks)."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds, self._start = 0.0, 0.0

    def _on_rollout_start(self) -> None:
        self._start = time.perf_counter()

    def _on_rollout_end(self) -> None:
        self.seconds += time.perf_counter() - self._start

    def _on_step(self) -> bool:
        return True


SB3_SHAPES = {"default": (64, 512), "same": (VECTOR_GAMES, 2048)}
"""SB3's batch shapes (games, minibatch; 64 steps a rollout, 4 epochs): its own default (64 games,
4,096 decisions a rollout) and the RLlib vector path's (256 games, 16,384, minibatches of 2,048)."""


def sb3_speed(seconds: float, shape: str = "default") -> dict[str, float]:
    """Sampling and training learner decisions/s of the project's MaskablePPO path, batch `shape`."""
    games, minibatch = SB3_SHAPES[shape]
    before = loads()
    venv = Sb3VecEnv(QwixxVectorEnv(games, num_players=2, opponents="random"))
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=minibatch, n_epochs=4, seed=0, device="cpu",
                        policy_kwargs={"net_arch": {"pi": list(HIDDEN), "vf": list(HIDDEN)},
                                       "activation_fn": torch.nn.Tanh})
    model.learn(games * 64)  # warm-up rollout and update
    rollout = games * 64
    clock, steps, start = _RolloutClock(), 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        model.learn(rollout, callback=clock, reset_num_timesteps=False)
        steps += rollout
    wall = time.perf_counter() - start
    return {"sample_decisions_per_second": round(steps / clock.seconds, 1),
            "train_decisions_per_second": round(steps / wall, 1), "load_average_before": before,
            "load_average_after": loads()}


def measure_one(spec: str, seconds: float) -> dict[str, Any] | float:
    """One measurement named `spec`: ``env``, ``sb3``, ``multi_agent:<view>:<runners>`` or
    ``vector:<env runner>:<runners>[:<learner pipeline>[:<loss>]]``."""
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    if spec == "env":
        return env_speed(seconds)
    if spec.startswith("sb3"):
        return sb3_speed(seconds, spec.split(":")[1] if ":" in spec else "default")
    kind, variant, runners, *pipeline = spec.split(":")
    # a runner takes one of Ray's CPUs: more runners than cores (the scaling run) share the cores
    ray.init(address="local", num_cpus=max(os.cpu_count() or 1, int(runners)), include_dashboard=False,
             log_to_driver=False, configure_logging=False)
    try:
        if kind == "multi_agent":
            views = {"aec": QwixxMultiAgentEnv, "parallel": QwixxParallelMultiAgentEnv}
            return rllib_speed(int(runners), seconds, views[variant])
        return vector_speed(int(runners), seconds, variant, *pipeline)
    finally:
        ray.shutdown()


def run_one(spec: str, seconds: float) -> Any:
    """`measure_one(spec)` in a fresh Python process (so no measurement inherits another's
    processes, threads or memory), its result read back from the last line it prints."""
    command = [sys.executable, __file__, "--one", spec, "--seconds", f"{seconds:g}"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{spec}: exit status {done.returncode}\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(spec, result, flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="wall time per measurement")
    parser.add_argument("--out", default="benchmarks/results", help="folder for rllib_speed.json")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # a single measurement (run_one)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(args.one, args.seconds)))
        return
    def ratio(a: dict, b: dict) -> dict[str, float]:
        return {kind: round(a[f"{kind}_decisions_per_second"] / b[f"{kind}_decisions_per_second"], 4)
                for kind in ("sample", "train")}

    load_before = os.getloadavg()
    env_only = run_one("env", args.seconds)
    sb3_rounds = [run_one("sb3", args.seconds)]  # again at the end: the mean of both is the reference
    rounds = {view: [run_one(f"multi_agent:{view}:0", args.seconds)] for view in ("aec", "parallel")}
    rllib = {str(n): run_one(f"multi_agent:aec:{n}", args.seconds) for n in (1, 2)}
    vector, stock = {}, {}
    for n in ("0", "1", "2"):
        vector[n] = run_one(f"vector:batched:{n}", args.seconds)
        stock[n] = run_one(f"vector:rllib:{n}", args.seconds)
    # the scaling run: 4 runners on this machine's cores; and RLlib's own learner pipeline, for comparison
    vector["4"] = run_one("vector:batched:4", args.seconds)
    rllib_pipeline = run_one("vector:batched:0:rllib", args.seconds)
    sb3_rounds.append(run_one("sb3", args.seconds))
    sb3 = {key: round(sum(r[key] for r in sb3_rounds) / 2, 1) for key in sb3_rounds[0]
           if not key.startswith("load_average")}
    # the like-for-like comparison, in pairs run back to back so that a drift in the load hits both:
    # the same shape (256 games, 16,384 decisions a rollout, minibatches of 2,048) and the same loss
    same_rounds, same_loss = [], []
    for _ in range(PAIRS):
        same_rounds.append(run_one("sb3:same", args.seconds))
        same_loss.append(run_one("vector:batched:0:batched:sb3", args.seconds))
    sb3_same = {key: round(sum(r[key] for r in same_rounds) / PAIRS, 1) for key in same_rounds[0]
                if not key.startswith("load_average")}
    pair_ratios = [ratio(r, s) for r, s in zip(same_loss, same_rounds, strict=True)]

    def mean(view: str) -> dict[str, float]:
        return {key: round(sum(r[key] for r in rounds[view]) / len(rounds[view]), 1) for key in rounds[view][0]
                if not key.startswith("load_average")}

    rllib = {"0": mean("aec"), **rllib}
    parallel = mean("parallel")
    ratios = {
        f"rllib_{n}_runners_over_sb3": {
            kind: round(r[f"{kind}_decisions_per_second"] / sb3[f"{kind}_decisions_per_second"], 4)
            for kind in ("sample", "train")
        }
        for n, r in rllib.items()
    }
    for n in ("0", "1", "2"):
        ratios[f"vector_over_multi_agent_{n}_runners"] = ratio(vector[n], rllib[n])
        ratios[f"vector_{n}_runners_over_sb3"] = ratio(vector[n], sb3)
        ratios[f"vector_over_stock_runner_{n}_runners"] = ratio(vector[n], stock[n])
        ratios[f"vector_{n}_runners_over_sb3_same_shape"] = ratio(vector[n], sb3_same)
    ratios["vector_2_runners_over_1"] = ratio(vector["2"], vector["1"])
    ratios["vector_4_runners_over_1"] = ratio(vector["4"], vector["1"])
    ratios["vector_4_runners_over_sb3_same_shape"] = ratio(vector["4"], sb3_same)
    ratios["batched_over_rllib_learner_pipeline_0_runners"] = ratio(vector["0"], rllib_pipeline)
    ratios["rllib_learner_pipeline_0_runners_over_sb3_same_shape"] = ratio(rllib_pipeline, sb3_same)
    ratios["vector_0_runners_sb3_loss_over_sb3_same_shape_by_pair"] = pair_ratios
    ratios["vector_0_runners_sb3_loss_over_sb3_same_shape_median"] = {
        kind: round(float(np.median([r[kind] for r in pair_ratios])), 4) for kind in ("sample", "train")}
    ratios["stock_runner_2_runners_over_1"] = ratio(stock["2"], stock["1"])
    ratios["multi_agent_2_runners_over_1"] = ratio(rllib["2"], rllib["1"])
    ratios["rllib_parallel_view_over_aec_view_0_runners"] = {
        kind: round(parallel[f"{kind}_decisions_per_second"] / rllib["0"][f"{kind}_decisions_per_second"], 4)
        for kind in ("sample", "train")
    }
    result = {
        "benchmark": "rllib_speed",
        "what": "decisions per second, 2-player classic: RLlib PPO on the vector path (QwixxVectorEnv of 256 "
                "games per env runner, learner decisions, opponent in the engine; sampled by BatchedEnvRunner, "
                "and by RLlib's SingleAgentEnvRunner) and on the multi-agent path "
                "(self-play, every decision by the module) with 0/1/2 env runners (and the Parallel-view env "
                "with 0) vs MaskablePPO on Sb3VecEnv (learner decisions; opponent in the engine)",
        "command": "python benchmarks/rllib_speed.py --seconds " + f"{args.seconds:g}",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in os.getloadavg()]},
        "versions": {"ray": ray.__version__, "torch": torch.__version__},
        "network": {"hidden": list(HIDDEN), "activation": "tanh"},
        "env_alone_decisions_per_second": env_only,
        "sb3": sb3,
        "sb3_rounds": sb3_rounds,
        "sb3_same_shape": sb3_same,
        "sb3_same_shape_rounds": same_rounds,
        "sb3_shapes": {k: {"games": g, "decisions_per_rollout": g * 64, "minibatch": m}
                       for k, (g, m) in SB3_SHAPES.items()},
        "rllib_vector_by_env_runners": vector,
        "rllib_vector_stock_runner_by_env_runners": stock,
        "rllib_vector_rllib_learner_pipeline_0_runners": rllib_pipeline,
        "rllib_vector_0_runners_sb3_loss_by_pair": same_loss,
        "rllib_by_env_runners": rllib,
        "rllib_parallel_view_0_runners": parallel,
        "rounds_0_runners": rounds,
        "ratios": ratios,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rllib_speed.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(ratios, indent=1))


if __name__ == "__main__":
    main()
