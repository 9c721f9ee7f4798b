"""How fast the Parallel view plays against the AEC env it drives, and against another checkout.

Both play random 2-player classic games through their standard loops, with one `pick` for
both (a numpy Generator choosing uniformly among ``np.flatnonzero(mask)``)::

    env = qwixx_v0.env()                                   # the AEC env
    env.reset(seed=s)
    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        env.step(None if term or trunc else pick(obs["action_mask"]))

    env = qwixx_v0.parallel_env()                          # the Parallel view
    observations, infos = env.reset(seed=s)
    while env.agents:                                      # as docs/integrations.md plays it:
        actions = {a: pick(o["action_mask"]) for a, o in observations.items()}  # every live agent
        observations, *_ = env.step(actions)

The figure is whole random games per second. Each source tree (this checkout, and with
``--before DIR`` another one, e.g. a ``git worktree`` of the commit before a change) runs in a
worker process of its own, warmed up first; the workers then take turns in slices of
``--slice`` seconds, AEC and Parallel alternating, so that drift in the machine's speed hits
every figure alike. Rates are per second of the worker's CPU time (``time.process_time``),
which other processes on a shared machine disturb less than wall time; the wall-time rates
are written beside them.

Run: ``python benchmarks/parallel_speed.py [--before DIR] [--seconds 6] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

from qwixx_env.files import write_atomically

ROOT = Path(__file__).resolve().parents[1]
ENVS = ("aec", "parallel")


def pick(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A uniformly random legal action of an action mask (the same code for both envs)."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(legal.size)])


def play(env, kind: str, seconds: float, seed: int, rng: np.random.Generator) -> dict[str, float]:
    """Whole random games for at least `seconds` of CPU time: games, CPU and wall seconds."""
    games = 0
    cpu, wall = time.process_time(), time.perf_counter()
    while time.process_time() - cpu < seconds:
        if kind == "aec":
            env.reset(seed=seed + games)
            for _ in env.agent_iter():
                obs, rew, term, trunc, info = env.last()
                env.step(None if term or trunc else pick(rng, obs["action_mask"]))
        else:
            observations, infos = env.reset(seed=seed + games)
            while env.agents:
                actions = {agent: pick(rng, obs["action_mask"]) for agent, obs in observations.items()}
                observations, *_ = env.step(actions)
        games += 1
    return {"games": games, "cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


def worker(warmup: float) -> int:
    """Serve `play` requests on stdin, one JSON line each, for the qwixx_env on sys.path."""
    from qwixx_env import qwixx_v0

    envs = {"aec": qwixx_v0.env(num_players=2), "parallel": qwixx_v0.parallel_env(num_players=2)}
    for kind, env in envs.items():
        play(env, kind, warmup, 10**9, np.random.default_rng(0))
    print(json.dumps({"ready": str(Path(qwixx_v0.__file__).parents[2])}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        out = play(envs[req["env"]], req["env"], req["seconds"], req["seed"], np.random.default_rng(req["seed"]))
        print(json.dumps(out), flush=True)
    return 0


def start_worker(tree: Path, warmup: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, __file__, "--worker", "--warmup", str(warmup)], cwd="/", env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    ready = json.loads(proc.stdout.readline())["ready"]
    if Path(ready).resolve() != tree.resolve():
        raise SystemExit(f"the worker for {tree} imported qwixx_env from {ready}")
    return proc


def ask(proc: subprocess.Popen, **request) -> dict:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, default=None, metavar="DIR",
                        help="another source tree to measure beside this one (e.g. a git worktree)")
    parser.add_argument("--seconds", type=float, default=6.0, help="CPU seconds per env per tree (default 6)")
    parser.add_argument("--slice", type=float, default=1.0, dest="slice_s", help="seconds per turn (default 1)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of warm-up per env (default 1)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.warmup)
    if args.seconds <= 0 or args.slice_s <= 0 or args.warmup < 0:
        parser.error("--seconds and --slice must be > 0, --warmup >= 0")

    trees = {"after": ROOT} if args.before is None else {"before": args.before, "after": ROOT}
    workers = {name: start_worker(tree, args.warmup) for name, tree in trees.items()}
    totals = {name: {kind: {"games": 0, "cpu_s": 0.0, "wall_s": 0.0} for kind in ENVS} for name in trees}
    seed = 0
    for _ in range(max(1, round(args.seconds / args.slice_s))):
        for name, proc in workers.items():
            for kind in ENVS:
                part = ask(proc, env=kind, seconds=args.slice_s, seed=seed)
                for key, value in part.items():
                    totals[name][kind][key] += value
        seed += 10_000
    for proc in workers.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()

    figures = {
        name: {kind: {**t, "games_per_cpu_s": t["games"] / t["cpu_s"], "games_per_wall_s": t["games"] / t["wall_s"]}
               for kind, t in kinds.items()}
        for name, kinds in totals.items()
    }
    print(f"random 2-player classic games per CPU second, {args.seconds:g} s per env and tree, interleaved")
    print(f"{'tree':8s} {'AEC env()':>12s} {'parallel_env()':>15s} {'parallel / AEC':>15s}")
    for name, f in figures.items():
        aec, par = f["aec"]["games_per_cpu_s"], f["parallel"]["games_per_cpu_s"]
        f["parallel_over_aec"] = par / aec
        print(f"{name:8s} {aec:12,.0f} {par:15,.0f} {par / aec:15.2f}")
    if "before" in figures:
        speedup = figures["after"]["parallel"]["games_per_cpu_s"] / figures["before"]["parallel"]["games_per_cpu_s"]
        print(f"parallel_env() after / before: {speedup:.2f}")

    if args.json is not None:
        report = {
            "benchmark": "parallel_speed",
            "unit": "random games per CPU second (games_per_wall_s beside)",
            "seconds": args.seconds, "slice": args.slice_s, "warmup": args.warmup,
            "trees": {name: str(tree) for name, tree in trees.items()},
            "figures": figures,
            "machine": {
                "python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                **{pkg: version(pkg) for pkg in ("numpy", "numba", "pettingzoo")},
            },
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(args.json, (json.dumps(report, indent=2) + "\n").encode())
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
