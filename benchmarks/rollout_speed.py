"""Time the `rollout` bot's decisions: how long `act` takes, decision by decision.

Plays `--games` 2-player games (or `--players`) of `rollout` against `heuristic` through
``qwixx_v0.env`` and times every ``act`` of the rollout bot, then prints the mean, median,
99th percentile and worst time per decision (forced moves, where only one action is legal,
counted too, and also left out). Nothing here is a timed test: it is a measurement for
docs/baselines.md, with the load average printed beside it since the machine may be shared::

    python benchmarks/rollout_speed.py --games 20
    python benchmarks/rollout_speed.py --games 20 --param horizon=6
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from qwixx_env import bots, qwixx_v0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--variant", default="classic")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--param", action="append", default=[], help="a rollout parameter, name=value (JSON value)"
    )
    a = ap.parse_args()
    if a.games < 1:
        ap.error(f"--games: got {a.games}; expected an integer >= 1")
    if bad := [p for p in a.param if "=" not in p]:
        ap.error(f"--param: got {bad[0]!r}; expected name=value (e.g. horizon=6)")
    try:
        params = {k: json.loads(v) for k, v in (p.split("=", 1) for p in a.param)}
    except ValueError as err:
        ap.error(f"--param: a value is not JSON ({err})")
    P = a.players
    rollout = bots.make("rollout", variant=a.variant, num_players=P, seed=a.seed, **params)
    others = [bots.make("heuristic", variant=a.variant, num_players=P) for _ in range(P)]
    env = qwixx_v0.env(num_players=P, variant=a.variant)
    times, forced = [], []
    for game in range(a.games + 1):  # game 0 compiles the kernels and is not counted
        env.reset(seed=a.seed + game)
        seat = game % P
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            if env.agents.index(agent) == seat:
                t = time.perf_counter()
                action = rollout.act(obs)
                if game:
                    times.append(time.perf_counter() - t)
                    forced.append(obs["action_mask"].sum() == 1)
            else:
                action = others[env.agents.index(agent)].act(obs)
            env.step(action)
    ms = 1000 * np.array(times)
    real = ms[~np.array(forced)]
    for label, x in (("every decision", ms), ("with a choice", real)):
        print(f"{label}: {len(x)} decisions, mean {x.mean():.1f} ms, median {np.median(x):.1f} ms, "
              f"p99 {np.percentile(x, 99):.1f} ms, worst {x.max():.1f} ms")
    print(f"params {params or 'defaults'}; {a.variant}, {P} players, {a.games} games; "
          f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
