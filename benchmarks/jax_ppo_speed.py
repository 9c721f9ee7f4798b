"""PPO's decisions per second: the JAX PPO (`qwixx_env.training.jax_ppo`) beside SB3's MaskablePPO
at the same batch shape, in one process on this CPU.

Both train 2-player classic with the same shape: `--envs` games side by side, `--steps`
decisions of each between updates, 4 epochs of 4 minibatches, a tanh MLP of `--hidden` for the
policy and for the value. A figure counts the decisions PPO trains on, per wall second of
training (rollout and updates; compiling and building excluded):

* ``jax PPO`` -- every decision of every game is the learner's (it plays every seat); a run of
  `--updates` updates, timed after one compiled call of the same length;
* ``SB3 MaskablePPO`` -- `Sb3VecEnv(QwixxVectorEnv(envs, opponents="random"))`, the learner in one
  seat and a random opponent played inside the engine (its decisions are not counted);
  ``model.learn`` for the same number of learner decisions, timed after one warm-up update.

Torch and XLA both get ``--threads`` threads (default 1), in one process pinned to as many cores.
Run in a venv with the ``jax`` extra and the ``train`` extra (torch's CPU build, sb3-contrib):
``python benchmarks/jax_ppo_speed.py [--envs 256] [--steps 64] [--updates 4]``. Writes
``jax/ppo_speed.json`` under ``--out`` (default benchmarks/results).
"""

from __future__ import annotations

import os
import sys

_threads = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--threads=")), "1")
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = _threads
if _threads == "1":
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from qwixx_env.envs.sb3 import Sb3VecEnv  # noqa: E402
from qwixx_env.envs.vector import QwixxVectorEnv  # noqa: E402
from qwixx_env.files import write_atomically  # noqa: E402
from qwixx_env.training.jax_ppo import JaxPPOConfig, make_run  # noqa: E402


def jax_rate(envs: int, steps: int, hidden: tuple[int, ...], updates: int) -> dict:
    cfg = JaxPPOConfig(
        name="speed",
        num_envs=envs,
        num_steps=steps,
        hidden=hidden,
        total_decisions=envs * steps * updates * 2,
        num_snapshots=0,  # the learner in every seat: every decision trained on
    )
    start, run = make_run(cfg)[:2]
    runner = start(jax.random.PRNGKey(0))
    t0 = time.perf_counter()
    runner, _ = jax.block_until_ready(run(runner, updates))  # compiles
    first = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    jax.block_until_ready(run(runner, updates))
    return _rate(envs * steps * updates, time.perf_counter() - t0, time.process_time() - c0, first)


def sb3_rate(envs: int, steps: int, hidden: tuple[int, ...], updates: int) -> dict:
    venv = Sb3VecEnv(QwixxVectorEnv(envs, num_players=2, opponents="random"))
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=steps,
        batch_size=envs * steps // 4,
        n_epochs=4,
        learning_rate=3e-4,
        gamma=1.0,
        gae_lambda=0.95,
        clip_range=0.2,
        ent_coef=0.01,
        policy_kwargs={"net_arch": {"pi": list(hidden), "vf": list(hidden)}, "activation_fn": torch.nn.Tanh},
        device="cpu",
        seed=0,
        verbose=0,
    )
    t0 = time.perf_counter()
    model.learn(envs * steps)  # one update: warms up
    first = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    model.learn(envs * steps * updates, reset_num_timesteps=False)
    return _rate(envs * steps * updates, time.perf_counter() - t0, time.process_time() - c0, first)


def _rate(decisions: int, seconds: float, cpu_seconds: float, first: float) -> dict:
    return {
        "decisions": decisions,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "first_call_seconds": first,
        "decisions_per_s": decisions / seconds,
        "decisions_per_cpu_s": decisions / cpu_seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=256, help="games side by side (default 256)")
    parser.add_argument("--steps", type=int, default=64, help="decisions of each game between updates (default 64)")
    parser.add_argument("--hidden", default="128,128", help="hidden layer sizes (default 128,128)")
    parser.add_argument("--updates", type=int, default=4, help="updates timed (default 4)")
    parser.add_argument(
        "--threads", type=int, default=1, help="threads for torch and XLA (default 1; give as --threads=N)"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args(argv)
    hidden = tuple(int(x) for x in args.hidden.split(","))
    if min(args.envs, args.steps, args.updates, args.threads, *hidden) < 1 or (args.envs * args.steps) % 4:
        parser.error(
            "--envs, --steps, --updates, --threads and the layer sizes must be >= 1, envs * steps a multiple of 4"
        )
    cores = sorted(os.sched_getaffinity(0))[: args.threads]
    os.sched_setaffinity(0, set(cores))
    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    results = {}
    for name, fn in (("jax PPO", jax_rate), ("SB3 MaskablePPO", sb3_rate)):
        print(f"{name}: {args.updates} updates of {args.envs} x {args.steps} decisions ...", flush=True)
        results[name] = fn(args.envs, args.steps, hidden, args.updates)
        r = results[name]
        print(f"  {r['decisions_per_s']:,.0f} decisions/s ({r['decisions_per_cpu_s']:,.0f} per CPU-second)", flush=True)
    jx, sb = results["jax PPO"], results["SB3 MaskablePPO"]
    ratio = jx["decisions_per_s"] / sb["decisions_per_s"]
    cpu_ratio = jx["decisions_per_cpu_s"] / sb["decisions_per_cpu_s"]
    print(
        f"jax PPO / SB3 MaskablePPO: {ratio:.2f}x per wall second, {cpu_ratio:.2f}x per CPU-second "
        f"({args.threads} thread(s), on CPU; no GPU was used)"
    )
    report = {
        "benchmark": "jax_ppo_speed",
        "unit": "learner decisions trained on per wall second (rollout + updates; compile and warm-up excluded)",
        "shape": {
            "envs": args.envs,
            "steps": args.steps,
            "epochs": 4,
            "minibatches": 4,
            "hidden": list(hidden),
            "activation": "tanh",
        },
        "threads": args.threads,
        "cores": cores,
        "device": "CPU; no GPU was used",
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "results": results,
        "ratio_jax_over_sb3": ratio,
        "ratio_jax_over_sb3_per_cpu_s": cpu_ratio,
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            **{
                p: version(p)
                for p in ("jax", "jaxlib", "equinox", "optax", "torch", "stable-baselines3", "sb3-contrib", "qwixx_env")
            },
        },
    }
    path = args.out / "jax" / "ppo_speed.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, (json.dumps(report, indent=2) + "\n").encode())
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
