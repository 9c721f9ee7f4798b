"""How fast the Qwixx AEC environment plays, measured against PettingZoo's Connect Four.

Every environment plays random legal games through the standard PettingZoo loop::

    env.reset(seed=s)                      # a new seed for every game
    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        action = None if term or trunc else pick(obs["action_mask"])
        env.step(action)

with one `pick` for all of them (a numpy Generator choosing uniformly among
``np.flatnonzero(mask)``). The figure is agent-steps per second: every `env.step` call of
the loop, the final ``step(None)`` of each finished agent included, over whole games (resets
and observations are inside the timed region). Each environment is warmed up first (numba
loads or compiles its kernels on first use), then measured for ``--seconds`` of wall time,
``--repeats`` times; within each repeat the environments take turns in slices of ``--slice``
seconds, so that drift in the machine's speed (another process, frequency scaling) hits them
alike. The table reports the **median** repeat (best and worst beside it). Everything runs in
this one process, on one thread; ``--cpu N`` also pins it to one core.

The environments:

* ``qwixx_v0.env()``            2-player classic Qwixx, with its guard wrapper (what users get)
* ``qwixx_v0.raw_env()``        the same game unwrapped
* ``connect_four_v3.env()``     PettingZoo's stock wrapper chain (TerminateIllegal, AssertOutOfBounds,
                                OrderEnforcing) -- the reference for the target
* ``connect_four_v3.raw_env()`` Connect Four unwrapped
* ``loop floor``                an AEC env that does no work (`LoopFloor`: it hands out one
                                stored observation and ends after 51 steps, a Qwixx game's
                                length): what PettingZoo's loop itself costs, ``agent_iter``,
                                ``last`` and the action picker; no env in this loop is faster

Target: ``qwixx_v0.env()`` makes at least 4x the agent-steps/s of ``connect_four_v3.env()``.

Run: ``python benchmarks/aec_speed.py [--seconds 10] [--repeats 3] [--json PATH] [--cpu N]``
(``make bench``). Needs the ``bench`` extra (rich, pygame for connect_four_v3).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.classic import connect_four_v3
from rich.console import Console
from rich.table import Table

from qwixx_env import qwixx_v0
from qwixx_env.files import write_atomically

TARGET_RATIO = 4.0
REFERENCE = "connect_four_v3.env()"
QWIXX = "qwixx_v0.env()"

class LoopFloor(AECEnv):
    """Two agents that decide in turn for 51 steps; an observation is a copy of one stored
    vector and an all-legal mask of 45 actions, as Qwixx's are sized. Nothing else."""

    metadata = {"name": "loop_floor", "is_parallelizable": False}

    def __init__(self, steps: int = 51):
        self.possible_agents = ["player_0", "player_1"]
        self._steps = steps
        self._vector, self._mask = np.zeros(144, np.float32), np.ones(45, np.int8)

    def observation_space(self, agent: str) -> spaces.Space:
        return spaces.Box(0.0, 1.0, (144,), np.float32)

    def action_space(self, agent: str) -> spaces.Space:
        return spaces.Discrete(45)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return {"observation": self._vector.copy(), "action_mask": self._mask.copy()}

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection, self._done = "player_0", 0

    def step(self, action: int | None) -> None:
        if self.terminations[self.agent_selection]:
            self._was_dead_step(action)
            return
        self._done += 1
        if self._done >= self._steps:
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.possible_agents[self._done % 2]


FLOOR = "loop floor"

ENVS: dict[str, Callable[[], object]] = {
    QWIXX: lambda: qwixx_v0.env(num_players=2, variant="classic"),
    "qwixx_v0.raw_env()": lambda: qwixx_v0.raw_env(num_players=2, variant="classic"),
    REFERENCE: lambda: connect_four_v3.env(),
    "connect_four_v3.raw_env()": lambda: connect_four_v3.raw_env(),
    FLOOR: LoopFloor,
}


def pick(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A uniformly random legal action of an action mask (the same code for every env)."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(legal.size)])


def play(env, seconds: float, first_seed: int, rng: np.random.Generator) -> dict[str, float]:
    """Play whole random games for at least `seconds` of wall time; count agent-steps."""
    steps = games = 0
    seed = first_seed
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        env.reset(seed=seed)
        seed += 1
        for _ in env.agent_iter():
            obs, rew, term, trunc, info = env.last()
            action = None if term or trunc else pick(rng, obs["action_mask"])
            env.step(action)
            steps += 1
        games += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {"steps": steps, "games": games, "seconds": elapsed, "steps_per_s": steps / elapsed}


def measure(seconds: float, repeats: int, warmup: float, seed: int, slice_s: float) -> dict[str, list[dict]]:
    """Warm every env up, then `repeats` rounds in which each env plays for `seconds`.

    Within a round the envs take turns in slices of `slice_s` seconds, so that a change in
    the machine's speed (another process, frequency scaling) hits every env alike.
    """
    envs = {name: make() for name, make in ENVS.items()}
    for env in envs.values():
        play(env, warmup, first_seed=10**9, rng=np.random.default_rng(seed))
    runs: dict[str, list[dict]] = {name: [] for name in envs}
    slices = max(1, round(seconds / slice_s))
    for r in range(repeats):
        # Within a round every env starts from the same game seed and action-stream seed.
        rngs = {name: np.random.default_rng(seed + r) for name in envs}
        seeds = dict.fromkeys(envs, seed + r * 10**6)
        totals = {name: {"steps": 0, "games": 0, "seconds": 0.0} for name in envs}
        for _ in range(slices):
            for name, env in envs.items():
                part = play(env, seconds / slices, first_seed=seeds[name], rng=rngs[name])
                seeds[name] += part["games"]
                for key in totals[name]:
                    totals[name][key] += part[key]
        for name, t in totals.items():
            runs[name].append({**t, "steps_per_s": t["steps"] / t["seconds"]})
    return runs


def summarise(runs: dict[str, list[dict]]) -> dict[str, dict]:
    """Median, best and worst rate per env, and each median's ratio to the reference's."""
    out = {}
    for name, rs in runs.items():
        rates = [r["steps_per_s"] for r in rs]
        steps = sum(r["steps"] for r in rs)
        games = sum(r["games"] for r in rs)
        out[name] = {
            "median_steps_per_s": statistics.median(rates),
            "best_steps_per_s": max(rates),
            "worst_steps_per_s": min(rates),
            "games_per_s": games / sum(r["seconds"] for r in rs),
            "steps_per_game": steps / games,
            "runs": rs,
        }
    ref = out[REFERENCE]["median_steps_per_s"]
    for s in out.values():
        s["ratio_to_reference"] = s["median_steps_per_s"] / ref
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="wall time per env per repeat (default 10)"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="rounds over all envs; the median is reported (default 3)"
    )
    parser.add_argument(
        "--warmup", type=float, default=1.0, help="seconds of warm-up play per env (default 1)"
    )
    parser.add_argument("--slice", type=float, default=1.0, dest="slice_s",
                        help="seconds an env plays before the next takes its turn (default 1)")
    parser.add_argument(
        "--seed", type=int, default=0, help="first game seed and action-stream seed (default 0)"
    )
    parser.add_argument("--cpu", type=int, default=None, help="pin this process to one CPU core (Linux)")
    parser.add_argument(
        "--json", type=Path, default=None, metavar="PATH", help="also write the figures as JSON"
    )
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if the target is missed")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1 or args.warmup < 0 or args.slice_s <= 0:
        parser.error("--seconds and --slice must be > 0, --repeats >= 1, --warmup >= 0")
    if args.cpu is not None:
        if args.cpu not in os.sched_getaffinity(0):
            parser.error(
                f"--cpu: got {args.cpu}; expected one of this process's cores "
                f"{sorted(os.sched_getaffinity(0))}"
            )
        os.sched_setaffinity(0, {args.cpu})

    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # a redirected run keeps the table on one line per env
    console.print(
        f"Random legal 2-player games, {args.repeats} x {args.seconds:g} s per env after "
        f"{args.warmup:g} s warm-up; one process"
        + (f", pinned to CPU {args.cpu}" if args.cpu is not None else "")
        + "."
    )
    summary = summarise(measure(args.seconds, args.repeats, args.warmup, args.seed, args.slice_s))

    table = Table(title="AEC agent-steps per second (median of repeats)")
    table.add_column("environment")
    table.add_column("agent-steps/s", justify="right")
    table.add_column("best .. worst", justify="right")
    table.add_column("games/s", justify="right")
    table.add_column("steps/game", justify="right")
    table.add_column(f"x {REFERENCE}", justify="right")
    for name, s in summary.items():
        table.add_row(
            name,
            f"{s['median_steps_per_s']:,.0f}",
            f"{s['best_steps_per_s']:,.0f} .. {s['worst_steps_per_s']:,.0f}",
            f"{s['games_per_s']:,.1f}",
            f"{s['steps_per_game']:.1f}",
            f"{s['ratio_to_reference']:.2f}",
        )
    console.print(table)

    ratio = summary[QWIXX]["ratio_to_reference"]
    passed = ratio >= TARGET_RATIO
    verdict = "PASS" if passed else "FAIL"
    console.print(
        f"target: qwixx env() >= {TARGET_RATIO:g}x connect_four_v3  "
        f"[{'green' if passed else 'red'}]{verdict}[/] ({ratio:.2f}x)"
    )
    floor = summary[FLOOR]["median_steps_per_s"]
    console.print(
        f"the loop itself (an env doing nothing) makes {summary[FLOOR]['ratio_to_reference']:.1f}x; "
        f"per agent-step qwixx env() takes {1e6 / summary[QWIXX]['median_steps_per_s']:.1f} us, "
        f"of which the loop {1e6 / floor:.1f} us"
    )

    if args.json is not None:
        report = {
            "benchmark": "aec_speed",
            "statistic": "median",
            "seconds": args.seconds,
            "repeats": args.repeats,
            "warmup": args.warmup,
            "slice": args.slice_s,
            "seed": args.seed,
            "cpu": args.cpu,
            "target": {"env": QWIXX, "reference": REFERENCE, "ratio": TARGET_RATIO,
                       "measured": ratio, "passed": passed},
            "envs": summary,
            "machine": {
                "python": platform.python_version(),
                "platform": platform.platform(),
                "processor": platform.processor(),
                "cpus": os.cpu_count(),
                **{pkg: version(pkg) for pkg in ("numpy", "numba", "pettingzoo", "gymnasium", "qwixx_env")},
            },
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(args.json, (json.dumps(report, indent=2) + "\n").encode())
        console.print(f"figures written to {args.json}")
    return 1 if args.strict and not passed else 0


if __name__ == "__main__":
    sys.exit(main())
