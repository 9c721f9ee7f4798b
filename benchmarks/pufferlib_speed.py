"""How fast `QwixxPufferEnv` (the native PufferLib env) steps, against the `QwixxVectorEnv` it wraps.

Every env plays ``--games`` 2-player classic games of its learner against random opponents,
the learner choosing a uniformly random legal action in every game each step (the same numpy
code for all). The figure is learner decisions per second: games x steps over the wall time of
the stepping loop (the action choice included). The in-process envs take turns of ``--slice``
seconds, so that a change in the machine's speed hits them alike:

* ``QwixxVectorEnv``           the vector env alone (`step` returns copies of its arrays)
* ``QwixxPufferEnv``           the PufferLib env, stepped directly (PufferLib's native backend)
* ``pufferlib.vector.Serial``  the PufferLib env in PufferLib's Serial vectorisation, 2 envs of
                               half the games each
* ``Multiprocessing(2)``       2 worker processes of half the games each (shared-memory buffers),
                               measured after the others, alone; on a machine with fewer than 2
                               free cores this measures contention

Run (in a venv with the pufferlib extra): ``python benchmarks/pufferlib_speed.py [--games 1024]
[--seconds 3] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pufferlib  # pyright: ignore[reportMissingImports]
import pufferlib.vector  # pyright: ignore[reportMissingImports]

from qwixx_env import QwixxVectorEnv
from qwixx_env.files import write_atomically
from qwixx_env.integrations.pufferlib import QwixxPufferEnv, observation_and_mask

REFERENCE = "QwixxVectorEnv"


ENVS = (REFERENCE, "QwixxPufferEnv", "pufferlib.vector.Serial", "Multiprocessing(2)")


def make(name: str, games: int):
    """The env under test, `games` games in all."""
    half = {"num_games": games // 2, "num_players": 2}
    if name == REFERENCE:
        return QwixxVectorEnv(games, num_players=2)
    if name == "QwixxPufferEnv":
        return QwixxPufferEnv(games, num_players=2)
    if name == "pufferlib.vector.Serial":
        return pufferlib.vector.make(QwixxPufferEnv, backend=pufferlib.vector.Serial, num_envs=2, env_kwargs=half)
    return pufferlib.vector.make(QwixxPufferEnv, backend=pufferlib.vector.Multiprocessing, num_envs=2,
                                 num_workers=2, overwork=True, env_kwargs=half)


class Runner:
    """One env under test, reset once; `run(seconds)` steps it and counts learner decisions."""

    def __init__(self, name: str, games: int):
        self.name, self.games, self.env = name, games, make(name, games)
        self.observation_size = QwixxVectorEnv(1, num_players=2).layout.size
        self.rng = np.random.default_rng(0)
        obs, _ = self.env.reset(seed=0)
        self.masks = self.masks_of(obs)

    def masks_of(self, obs) -> np.ndarray:
        if self.name == REFERENCE:
            return obs["action_mask"]
        return observation_and_mask(obs, self.observation_size)[1]

    def run(self, seconds: float) -> tuple[int, float]:
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            actions = np.argmax(self.rng.random(self.masks.shape) * self.masks, axis=1)  # a random legal action
            obs, *_ = self.env.step(actions)
            self.masks = self.masks_of(obs)
            steps += 1
        return steps * self.games, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1024, help="games per env, in all (even; default 1024)")
    parser.add_argument("--seconds", type=float, default=3.0, help="wall seconds per env (default 3)")
    parser.add_argument("--slice", type=float, default=0.5, dest="slice_s", help="seconds per turn (default 0.5)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2 or args.seconds <= 0 or args.slice_s <= 0:
        parser.error("--games must be even and >= 2, --seconds and --slice > 0")

    totals: dict[str, list] = {}
    # The in-process envs take turns; the workers come last, alone: between PufferLib's calls
    # they spin for half a second, which would slow whatever ran beside them.
    for group in (ENVS[:3], ENVS[3:]):
        runners = [Runner(name, args.games) for name in group]
        for runner in runners:
            runner.run(0.3)  # warm-up: numba loads its kernels, the workers start
            totals[runner.name] = [0, 0.0]
        for _ in range(max(1, round(args.seconds / args.slice_s))):
            for runner in runners:
                decisions, seconds = runner.run(args.slice_s)
                totals[runner.name][0] += decisions
                totals[runner.name][1] += seconds
        for runner in runners:
            runner.env.close()

    rates = {name: decisions / seconds for name, (decisions, seconds) in totals.items()}
    print(f"learner decisions per second, {args.games} games per env, 2-player classic vs random, "
          f"{args.seconds:g} s each, interleaved")
    for name, rate in rates.items():
        print(f"{name:26s} {rate:12,.0f}   x {REFERENCE}: {rate / rates[REFERENCE]:.2f}")
    if args.json is not None:
        report = {
            "benchmark": "pufferlib_speed",
            "unit": "learner decisions per wall second",
            "games": args.games, "seconds": args.seconds, "slice": args.slice_s,
            "envs": {name: {"decisions": totals[name][0], "seconds": totals[name][1], "decisions_per_s": rate,
                            "ratio_to_reference": rate / rates[REFERENCE]} for name, rate in rates.items()},
            "reference": REFERENCE,
            "machine": {
                "python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                **{pkg: version(pkg) for pkg in ("numpy", "numba", "pufferlib-core", "gymnasium", "torch")},
            },
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(args.json, (json.dumps(report, indent=2) + "\n").encode())
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
