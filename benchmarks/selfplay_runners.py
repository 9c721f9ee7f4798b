"""What 1, 2 and 4 runners buy the self-play league in strength per wall-clock hour.

The learner (`qwixx_env.training.selfplay`) plays the same games in a round whatever plays
them: with the same config and seed, one process and any number of Ray runners learn the same
network round by round (`tests/test_selfplay.py` checks it). So an arm's strength after T of
wall time is the strength curve at the rounds the arm gets through in T, and the two things
are measured apart:

* **the curve**: one run for `--minutes` in one process (threads from the config), evaluated
  every `eval_every` rounds against the config's opponents (500 deals, each in both seats);
* **the pace** of each arm, in seconds of wall time a round and an evaluation, over
  `--timing-rounds` rounds: one process (no Ray), and N runners (1, 2, 4) on a simulated
  multi-node Ray cluster (`ray.cluster_utils.Cluster`: a head node with no CPU for work, where
  the driver trains, and N worker nodes of one CPU each, each its own raylet and object store,
  so the weights and the positions cross between nodes as on a real cluster). The arms run
  one after another, each alone on the machine.

An arm's rounds an hour are 3600 / (a round's seconds + an evaluation's seconds / eval_every)
and its strength at T the curve at that many rounds (linear between evaluations; beyond the
curve's last round, not given). The curve's final network also plays `--deals` fresh deals
against ``heuristic`` (dice seeds from `--fresh-seed`: no run's training or evaluation deals),
each in both seats, paired by deal with its random start (the league's lift).

    python benchmarks/selfplay_runners.py --minutes 20 --timing-rounds 4 --runners 1 2 4 \\
        --out runs/selfplay_runners --json benchmarks/results/selfplay/runners.json

Needs the train and rllib extras. Writes the JSON and prints a table. A curve run already in
``OUT/one_process`` is read back, not run again.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env.core.variant import get_variant
from qwixx_env.files import write_atomically
from qwixx_env.nets.checkpoint import WIN_CHANCE, json_and_npz, read
from qwixx_env.nets.win_chance import kernel_arrays
from qwixx_env.policies.value import plain_num_features
from qwixx_env.training.selfplay import SelfPlayRun, deal_shares, kernel_network, load_config, new_model

T95 = 1.96  # deals are many: the t quantile is the normal one


def simulated_cluster(nodes: int):
    """A Ray cluster on this machine: a head with no CPU (the driver's) and `nodes` one-CPU nodes."""
    from ray.cluster_utils import Cluster

    # Ray starts its workers at niceness 15 (its RAY_worker_niceness), below any other job on the
    # machine; the arms must compete for the cores alike, as the one-process arm (niceness 0) does.
    os.environ["RAY_worker_niceness"] = "0"
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": 400 * 2**20})
    for _ in range(nodes):
        cluster.add_node(num_cpus=1, object_store_memory=200 * 2**20)
    cluster.wait_for_nodes()
    return cluster


def run(cfg, out: Path, runners: int) -> float:
    """One run of `cfg`: with `runners` actors on a simulated cluster, or (0) in one process.
    Returns its wall seconds, Ray's start included."""
    import ray

    t0 = time.perf_counter()
    cluster = None
    if runners:
        cluster = simulated_cluster(runners)
        ray.init(address=cluster.address, log_to_driver=False)
        cfg = dataclasses.replace(cfg, runners=runners, ray_address=cluster.address)
    try:
        SelfPlayRun(cfg, out, say=lambda line: None).run()
    finally:
        if cluster is not None:
            ray.shutdown()
            cluster.shutdown()
    return time.perf_counter() - t0


def pace(cfg, out: Path, runners: int, rounds: int) -> dict[str, Any]:
    """Seconds a round (the mean over rounds 2 to `rounds`: the first pays the start) and an
    evaluation (the final one) of an arm."""
    wall = run(dataclasses.replace(cfg, rounds=rounds, hours=10.0, eval_every=10**6), out, runners)
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    curve = json.loads((out / "curve.json").read_text())
    minutes = [row["minutes"] for row in log]
    round_s = 60 * (minutes[-1] - minutes[0]) / (len(minutes) - 1)
    play_s = float(np.mean([row["play_seconds"] for row in log[1:]]))
    eval_s = curve[-1]["eval_seconds"]
    per_hour = 3600 / (round_s + eval_s / cfg.eval_every)
    return {"runners": runners, "wall_seconds": round(wall, 1), "rounds": len(log), "round_seconds": round(round_s, 2),
            "play_seconds": round(play_s, 2), "train_seconds": round(round_s - play_s, 2),
            "eval_seconds": round(eval_s, 2), "rounds_per_hour": round(per_hour, 1),
            "decisions_per_second": round(log[-1]["decisions"] / (60 * minutes[-1]))}


def at_round(curve: list[dict[str, Any]], k: float, opponent: str) -> float | None:
    """The curve's win share against `opponent` at round k (linear between evaluations)."""
    rounds = [row["round"] for row in curve]
    if k > rounds[-1]:
        return None
    return float(np.interp(k, rounds, [row[opponent]["win_share"] for row in curve]))


WALL_MINUTES = (2.5, 5.0, 10.0, 20.0, 60.0)
"""The wall times an arm's strength is read at (None past the curve's last round)."""


def strength_per_time(arm: dict[str, Any], curve: list[dict[str, Any]], opponents) -> dict[str, Any]:
    """`arm` with its strength at each of `WALL_MINUTES` (the curve at the rounds its pace gets
    through) and the minutes it takes to reach each of the curve's evaluated rounds."""
    arm["at_minutes"] = {f"{m:g}": {"rounds": round(arm["rounds_per_hour"] * m / 60, 1), **{
        o: (None if (v := at_round(curve, arm["rounds_per_hour"] * m / 60, o)) is None else round(v, 4))
        for o in opponents}} for m in WALL_MINUTES}
    arm["minutes_to_round"] = {str(row["round"]): round(60 * row["round"] / arm["rounds_per_hour"], 2)
                               for row in curve}
    return arm


def paired(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    """Mean of a - b in points, with a 95% interval over deals."""
    d = 100 * (a - b)
    se = d.std(ddof=1) / math.sqrt(len(d))
    return {"points": round(float(d.mean()), 2),
            "interval": [round(float(d.mean() - T95 * se), 2), round(float(d.mean() + T95 * se), 2)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="selfplay_classic_2p")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=20.0, help="wall time of the curve's run")
    ap.add_argument("--timing-rounds", type=int, default=4, help="rounds of each arm's pace")
    ap.add_argument("--runners", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--games", type=int, help="games a round (default the config's; fewer: a quick look only)")
    ap.add_argument("--deals", type=int, default=2000, help="fresh deals of the paired lift")
    ap.add_argument("--fresh-seed", type=int, default=7_000_000)
    ap.add_argument("--out", default="runs/selfplay_runners")
    ap.add_argument("--json", default="benchmarks/results/selfplay/runners.json")
    a = ap.parse_args()
    cfg = dataclasses.replace(load_config(a.config), seed=a.seed, hours=a.minutes / 60)
    if a.games:
        cfg = dataclasses.replace(cfg, games=a.games, eval_deals=min(cfg.eval_deals, a.games))
    out = Path(a.out)
    load_before = os.getloadavg()
    curve_run = out / "one_process"
    if not (curve_run / "final.json").exists():
        print(f"the curve: {a.minutes:g} minutes in one process")
        run(cfg, curve_run, 0)
    curve = json.loads((curve_run / "curve.json").read_text())
    log = [json.loads(line) for line in (curve_run / "log.jsonl").read_text().splitlines()]
    arms = []
    for n in [0, *a.runners]:
        folder = out / "pace" / (f"runners_{n}" if n else "one_process")
        if folder.exists():
            raise SystemExit(f"{folder} exists: remove {out / 'pace'} to measure the pace again")
        arm = pace(cfg, folder, n, a.timing_rounds)
        arms.append(strength_per_time(arm, curve, cfg.eval_opponents))
        print(f"{'one process' if not n else f'{n} runners'}: {arm['round_seconds']} s a round "
              f"(play {arm['play_seconds']} s), {arm['rounds_per_hour']} rounds an hour")
    # the league's lift over its random start, on fresh deals, paired by deal
    width = plain_num_features(cfg.num_players, get_variant(cfg.variant).num_rows)
    start = kernel_network(new_model(width, cfg.hidden, cfg.seed))
    final = kernel_arrays(*read(*json_and_npz(curve_run / "final"), kind=WIN_CHANCE))
    start_share, _ = deal_shares(cfg, start, "heuristic", a.fresh_seed, a.deals)
    final_share, _ = deal_shares(cfg, final, "heuristic", a.fresh_seed, a.deals)
    result = {
        "benchmark": "selfplay_runners",
        "what": "the teacher-free self-play learner: its strength curve over rounds (one process), each arm's pace "
                "(one process; 1, 2, 4 Ray runners on a simulated multi-node cluster, one CPU a node) and so its "
                "strength per wall-clock hour; the final network's lift over its random start on fresh deals, "
                "paired by deal",
        "command": "python benchmarks/selfplay_runners.py " + " ".join(
            [f"--minutes {a.minutes:g}", f"--timing-rounds {a.timing_rounds}", "--runners", *map(str, a.runners),
             f"--seed {a.seed}", f"--deals {a.deals}"]),
        "date": datetime.date.today().isoformat(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in os.getloadavg()]},
        "config": cfg.to_dict(),
        "curve": {"run": str(curve_run), "rounds": log[-1]["round"], "minutes": log[-1]["minutes"],
                  "decisions": log[-1]["decisions"],
                  "evaluations": [{"round": row["round"], "minutes": row["minutes"], "decisions": row["decisions"],
                                   **{o: {"win_share": row[o]["win_share"], "se": row[o]["se"]}
                                      for o in cfg.eval_opponents}} for row in curve]},
        "arms": arms,
        "fresh": {"deals": a.deals, "first_seed": a.fresh_seed, "opponent": "heuristic",
                  "start": round(float(start_share.mean()), 4), "final": round(float(final_share.mean()), 4),
                  "lift": paired(final_share, start_share)},
    }
    path = Path(a.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, (json.dumps(result, indent=1) + "\n").encode())
    print(f"\n{'arm':<12} {'s/round':>8} {'rounds/h':>9} {'decisions/s':>11}  vs heuristic at 2.5 / 5 / 10 min")
    for arm in arms:
        name = f"{arm['runners']} runners" if arm["runners"] else "one process"
        shown = " / ".join("-" if (v := arm["at_minutes"][m]["heuristic"]) is None else f"{v:.1%}"
                           for m in ("2.5", "5", "10"))
        print(f"{name:<12} {arm['round_seconds']:>8} {arm['rounds_per_hour']:>9} {arm['decisions_per_second']:>11,}  "
              f"{shown}")
    lift = result["fresh"]["lift"]
    print(f"lift over the random start on {a.deals} fresh deals: {lift['points']:+.1f} points "
          f"[{lift['interval'][0]:+.1f}, {lift['interval'][1]:+.1f}]")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
