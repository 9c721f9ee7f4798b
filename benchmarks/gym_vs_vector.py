"""MaskablePPO on the single Gymnasium env against the vector path: learner steps per second.

A newcomer's first try is ``MaskablePPO("MlpPolicy", gymnasium.make("qwixx_env/Qwixx-v0",
observation="flat"))``: one game per step call, stable-baselines3 wrapping it in a
``DummyVecEnv``. The vector path, ``Sb3VecEnv(QwixxVectorEnv(256))``, steps 256 games per call.
Both train the same small network (the same PPO settings per rollout step, 2-player classic,
greedy opponents) for a few thousand learner steps, after one short warm-up run that compiles
the kernels; the figure is learner steps per second of ``model.learn``, PPO updates included.

Run: ``python benchmarks/gym_vs_vector.py [--single-steps N] [--vector-steps N] [--json PATH]``
(default JSON: ``benchmarks/results/gym_vs_vector.json``). Needs the ``train`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import gymnasium
import torch
from sb3_contrib import MaskablePPO

import qwixx_env  # noqa: F401 (registers qwixx_env/Qwixx-v0)
from qwixx_env import QwixxVectorEnv
from qwixx_env.envs.sb3 import Sb3VecEnv

RESULTS = Path(__file__).resolve().parent / "results" / "gym_vs_vector.json"
NUM_ENVS = 256
PPO = dict(n_steps=256, batch_size=256, n_epochs=1, policy_kwargs={"net_arch": [64, 64]}, device="cpu", seed=0)


def single_env():
    return gymnasium.make("qwixx_env/Qwixx-v0", num_players=2, opponents="greedy", observation="flat")


def vector_env():
    return Sb3VecEnv(QwixxVectorEnv(NUM_ENVS, num_players=2, opponents="greedy"))


def measure(make_env, steps: int, n_steps: int) -> dict:
    """Learner steps per second of MaskablePPO.learn(steps) on a fresh env."""
    model = MaskablePPO("MlpPolicy", make_env(), **{**PPO, "n_steps": n_steps})
    start = time.perf_counter()
    model.learn(steps)
    seconds = time.perf_counter() - start
    return {"steps": int(model.num_timesteps), "seconds": seconds, "steps_per_second": model.num_timesteps / seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--single-steps", type=int, default=2048, help="learner steps on the single env")
    parser.add_argument("--vector-steps", type=int, default=8192, help="learner steps on Sb3VecEnv(256)")
    parser.add_argument("--json", type=Path, default=RESULTS, metavar="PATH")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    measure(single_env, 256, 256)  # warm-up: compile and load the kernels before timing
    measure(vector_env, NUM_ENVS, 1)
    single = measure(single_env, args.single_steps, 256)
    vector = measure(vector_env, args.vector_steps, 8)  # 8 x 256 = 2048 steps a rollout
    results = {
        "benchmark": "gym_vs_vector",
        "what": "MaskablePPO('MlpPolicy', net_arch [64, 64], 1 epoch) learner steps per second, 2-player classic "
                "against greedy: the single Gymnasium env (observation='flat', rollouts of 256) against "
                f"Sb3VecEnv(QwixxVectorEnv({NUM_ENVS})) (rollouts of 8 x {NUM_ENVS})",
        "single_env": single,
        "sb3_vec_env_256": vector,
        "speedup": vector["steps_per_second"] / single["steps_per_second"],
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                    "load_average": os.getloadavg()},
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1) + "\n")
    print(f"single env: {single['steps_per_second']:,.0f} steps/s; Sb3VecEnv({NUM_ENVS}): "
          f"{vector['steps_per_second']:,.0f} steps/s ({results['speedup']:.1f}x); figures in {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
