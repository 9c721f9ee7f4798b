"""Does an RLlib league run's PPO phase lift its policy above its warm start? By how much?

For each finished run folder of ``qwixx-train --engine rllib`` on the vector path (a 2-player
table, with an evaluation, so the run kept ``warm_start.json``, the policy its first evaluation
played at step 0), the arena plays the warm start and the final ``policy.json`` against each of
``--opponents`` on the same ``--games`` deals (each deal in both seats: twice as many games),
and the run's own in-run evaluations (``eval.jsonl``), its warm start (``bc.json``) and its
config are read beside them. The lift is the final policy's win rate minus the warm start's,
with a 95% interval (the two are played on the same deals; the interval treats them as
independent samples, which is the wider of the two).

Runs of the configs in ``benchmarks/rllib_league/`` (the shipped ``configs/rllib_classic_2p.yaml``
with one thing changed) answer why the shipped run moves as little as it does:

    qwixx-train --engine rllib configs/rllib_classic_2p.yaml --out runs/rllib_classic_2p
    qwixx-train --engine rllib benchmarks/rllib_league/from_scratch.yaml --out runs/rllib_from_scratch
    python benchmarks/rllib_league.py runs/rllib_classic_2p runs/rllib_from_scratch

Writes ``benchmarks/results/rllib_league.json`` (``--json``) and prints a table. Needs the
``rllib`` extra's run folders only (the arena is the core's).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any

from qwixx_env.arena import run_arena


def arena(path: Path, opponent: str, games: int, seed: int, workers: int) -> dict[str, Any]:
    """`path`'s policy against `opponent` on `games` deals, both seats."""
    result = run_arena([str(path), opponent], num_players=2, games=games, seed=seed, workers=workers)
    me, other = result.bots
    return {"games": me["games"], "win_rate": round(me["win_rate"], 4),
            "win_interval": [round(x, 4) for x in me["win_interval"]], "score_mean": round(me["score_mean"], 2),
            "opponent_score_mean": round(other["score_mean"], 2)}


def lift(after: dict[str, Any], before: dict[str, Any]) -> dict[str, float]:
    """The change in win rate and its 95% interval (independent samples)."""
    a, b = after["win_rate"], before["win_rate"]
    se = math.sqrt(a * (1 - a) / after["games"] + b * (1 - b) / before["games"])
    return {"points": round(100 * (a - b), 2), "interval": [round(100 * (a - b - 1.96 * se), 2),
                                                            round(100 * (a - b + 1.96 * se), 2)]}


def measure(run: Path, opponents: list[str], games: int, seed: int, workers: int) -> dict[str, Any]:
    for name in ("warm_start.json", "policy.json", "eval.jsonl", "log.jsonl"):
        if not (run / name).exists():
            raise SystemExit(f"{run}: no {name} (a finished vector-path run with an evaluation is needed)")
    meta = json.loads((run / "policy.json").read_text()).get("meta", {})
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    iteration = int(meta.get("iteration", len(log)))
    evaluations = [json.loads(line) for line in (run / "eval.jsonl").read_text().splitlines()]
    out: dict[str, Any] = {
        "run": str(run), "config": meta.get("config"),
        "bc": json.loads((run / "bc.json").read_text()) if (run / "bc.json").exists() else None,
        # the policy's own iteration (a run stopped after its last checkpoint logged a few more)
        "iterations": iteration, "decisions": log[iteration - 1]["env_steps"] if iteration else 0,
        "in_run_evaluations": [{"steps": e["steps"], **{o: {k: r[k] for k in ("games", "win_rate", "win_interval")}
                                                        for o, r in e["opponents"].items()}}
                               for e in evaluations],
        "snapshots_added": [e["snapshot_added"] for e in evaluations if e.get("snapshot_added")],
        "arena": {}, "lift": {},
    }
    for opponent in opponents:
        started = time.perf_counter()
        before = arena(run / "warm_start.json", opponent, games, seed, workers)
        after = arena(run / "policy.json", opponent, games, seed, workers)
        out["arena"][opponent] = {"warm_start": before, "final": after,
                                  "seconds": round(time.perf_counter() - started, 1)}
        out["lift"][opponent] = lift(after, before)
        print(f"{run.name} vs {opponent}: warm start {before['win_rate']:.1%} {before['win_interval']}, "
              f"final {after['win_rate']:.1%} {after['win_interval']}, lift {out['lift'][opponent]}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="finished run folders (qwixx-train --engine rllib --out)")
    parser.add_argument("--opponents", default="heuristic,greedy", help="comma-separated bots")
    parser.add_argument("--games", type=int, default=2000, help="deals, each in both seats (default 2000)")
    parser.add_argument("--seed", type=int, default=424242, help="deal i uses dice seed SEED + i")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="arena processes")
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/rllib_league.json"))
    args = parser.parse_args()
    opponents = [o for o in args.opponents.split(",") if o]
    load = [round(x, 2) for x in os.getloadavg()]
    runs = [measure(run, opponents, args.games, args.seed, args.workers) for run in args.runs]
    result = {
        "benchmark": "rllib_league",
        "what": "RLlib league runs (vector path, 2-player classic): the warm start's and the final policy's "
                "win rates against scripted bots in the arena on the same deals, and the in-run evaluations",
        "command": "python benchmarks/rllib_league.py " + " ".join(str(r) for r in args.runs),
        "date": datetime.date.today().isoformat(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_average_before": load,
                    "load_average_after": [round(x, 2) for x in os.getloadavg()]},
        "deals": args.games, "seed": args.seed,
        "runs": runs,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
