"""What 1, 2 and 4 runners buy the self-play league in strength per wall-clock hour.

Each arm is one run of the teacher-free learner (`qwixx_env.training.selfplay`, a shipped
config, the same seed: the same start and the same games a round) for the same wall time:

* ``runners N``: a simulated multi-node Ray cluster (`ray.cluster_utils.Cluster`: a head
  node with no CPU for work, where the driver trains, and N worker nodes of one CPU each,
  each its own raylet and object store, so the weights and the positions cross between
  nodes as on a real cluster), the round's games and the evaluations played by N
  `training.selfplay_ray.SelfPlayRunner` actors, one a node;
* ``one process``: the same config in one process, its games on ``threads`` threads (no Ray).

The arms run one after another (each alone on the machine). Each run's curve (its win share
against the config's evaluation opponents every ``eval_every`` rounds) gives its strength
against wall time; at the end every arm's final network plays ``--deals`` fresh deals
against ``heuristic`` (dice seeds from ``--fresh-seed``: no run's training or evaluation
deals), each deal in both seats, and each arm's difference from the one-process run is
paired by deal, with a 95% t-interval over deals; the lift of each run over its random start
is paired the same way.

    python benchmarks/selfplay_runners.py --minutes 15 --runners 1 2 4 --baseline \\
        --out runs/selfplay_runners --json benchmarks/results/selfplay/runners.json

Needs the train and rllib extras. Writes the JSON and prints a table.
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


def run_arm(cfg, out: Path, runners: int) -> dict[str, Any]:
    """One run for `cfg.hours`: with `runners` actors on a simulated cluster, or (0) in one process."""
    import ray

    t0 = time.perf_counter()
    cluster = None
    if runners:
        cluster = simulated_cluster(runners)
        ray.init(address=cluster.address, log_to_driver=False)
        cfg = dataclasses.replace(cfg, runners=runners, ray_address=cluster.address)
    try:
        result = SelfPlayRun(cfg, out).run()
    finally:
        if cluster is not None:
            ray.shutdown()
            cluster.shutdown()
    curve = json.loads((out / "curve.json").read_text())
    return {"runners": runners, "threads": cfg.threads if not runners else 1, "out": str(out),
            "wall_minutes": round((time.perf_counter() - t0) / 60, 2), "rounds": result["rounds"],
            "games": result["games"], "decisions": result["decisions"],
            "decisions_per_second": round(result["decisions"] / max(curve[-1]["minutes"] * 60, 1e-9)),
            "curve": [{"minutes": row["minutes"], "decisions": row["decisions"],
                       **{k: {"win_share": v["win_share"], "se": v["se"]} for k, v in row.items()
                          if isinstance(v, dict)}} for row in curve]}


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
    ap.add_argument("--minutes", type=float, default=15.0, help="wall time of each arm")
    ap.add_argument("--runners", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--baseline", action="store_true", help="also the one-process arm (threads from the config)")
    ap.add_argument("--deals", type=int, default=2000, help="fresh deals of the paired comparison")
    ap.add_argument("--fresh-seed", type=int, default=7_000_000)
    ap.add_argument("--out", default="runs/selfplay_runners")
    ap.add_argument("--json", default="benchmarks/results/selfplay/runners.json")
    a = ap.parse_args()
    cfg = dataclasses.replace(load_config(a.config), seed=a.seed, hours=a.minutes / 60)
    out = Path(a.out)
    load_before = os.getloadavg()
    arms = []
    for n in ([0] if a.baseline else []) + a.runners:
        folder = out / (f"runners_{n}" if n else "one_process")
        if (folder / "final.json").exists():
            print(f"{folder}: done already, read back")
            arm = json.loads((folder / "arm.json").read_text())
        else:
            arm = run_arm(cfg, folder, n)
            write_atomically(folder / "arm.json", (json.dumps(arm) + "\n").encode())
        arms.append(arm)
        print(f"{'one process' if not n else f'{n} runners'}: {arm['rounds']} rounds, {arm['decisions']:,} decisions "
              f"in {arm['wall_minutes']} min; heuristic {arm['curve'][-1]['heuristic']['win_share']:.1%}")
    # the paired comparison on fresh deals
    width = plain_num_features(cfg.num_players, get_variant(cfg.variant).num_rows)
    start = kernel_network(new_model(width, cfg.hidden, cfg.seed))
    start_share, _ = deal_shares(cfg, start, "heuristic", a.fresh_seed, a.deals)
    shares = {}
    for arm in arms:
        net = kernel_arrays(*read(*json_and_npz(Path(arm["out"]) / "final"), kind=WIN_CHANCE))
        shares[arm["runners"]], _ = deal_shares(cfg, net, "heuristic", a.fresh_seed, a.deals)
        arm["fresh"] = {"heuristic": round(float(shares[arm["runners"]].mean()), 4),
                        "lift_over_start": paired(shares[arm["runners"]], start_share)}
        if 0 in shares and arm["runners"]:
            arm["fresh"]["minus_one_process"] = paired(shares[arm["runners"]], shares[0])
    result = {
        "benchmark": "selfplay_runners",
        "what": "the teacher-free self-play learner with 1, 2 and 4 Ray runners on a simulated multi-node cluster "
                "(one CPU a node) against one process, the same seed and wall time: strength over wall time, and the "
                "final networks paired by deal on fresh deals against heuristic",
        "command": "python benchmarks/selfplay_runners.py " + " ".join(
            [f"--minutes {a.minutes:g}", "--runners", *map(str, a.runners), *(["--baseline"] if a.baseline else []),
             f"--seed {a.seed}", f"--deals {a.deals}"]),
        "date": datetime.date.today().isoformat(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in os.getloadavg()]},
        "config": cfg.to_dict(), "fresh_deals": a.deals, "fresh_seed": a.fresh_seed,
        "start_fresh_heuristic": round(float(start_share.mean()), 4), "arms": arms,
    }
    path = Path(a.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, (json.dumps(result, indent=1) + "\n").encode())
    print(f"\n{'arm':<12} {'rounds':>6} {'decisions/s':>11} {'eval heuristic':>14} {'fresh':>7} {'vs one process':>22}")
    for arm in arms:
        name = f"{arm['runners']} runners" if arm["runners"] else "one process"
        vs = arm["fresh"].get("minus_one_process")
        shown = f"{vs['points']:+.1f} [{vs['interval'][0]:+.1f}, {vs['interval'][1]:+.1f}]" if vs else "-"
        print(f"{name:<12} {arm['rounds']:>6} {arm['decisions_per_second']:>11,} "
              f"{arm['curve'][-1]['heuristic']['win_share']:>14.1%} {arm['fresh']['heuristic']:>7.1%} {shown:>22}")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
