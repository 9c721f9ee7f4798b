"""How much wider the benchmark's deal-clustered win-share interval is than a Wilson interval
that treats every game as independent, on the first deals of some protocols.

    python benchmarks/clustered_intervals.py [--deals 300] [--agent greedy] [--workers 2]

Plays `agent` in the heuristic lineup of each protocol (`qwixx_env.benchmark.run` with
``limit=deals``: the protocol's first deals) and writes, per protocol, the win share, the
clustered interval the benchmark reports, the Wilson interval over the same games and the ratio
of their widths to ``benchmarks/results/clustered_intervals.json`` (docs/benchmark.md cites it).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from qwixx_env import benchmark
from qwixx_env.arena.stats import wilson_interval
from qwixx_env.files import write_atomically

OUT = Path(__file__).resolve().parent / "results" / "clustered_intervals.json"
TABLES = ("classic-2p", "classic-3p", "classic-4p", "classic-5p", "longo-5p")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=300, help="deals of each protocol (default: 300)")
    parser.add_argument("--agent", default="greedy", help="the agent (default: greedy)")
    parser.add_argument("--workers", type=int, default=2, help="arena workers (default: 2)")
    args = parser.parse_args()
    rows = []
    for table in TABLES:
        began = time.perf_counter()
        result = benchmark.run(args.agent, table, lineups=["heuristic"], limit=args.deals, workers=args.workers)
        f = result["lineups"]["heuristic"]
        low, high = f["win_interval"]
        naive = wilson_interval(f["win_share"] * f["games"], f["games"])
        rows.append({"protocol": result["protocol"], "deals": f["deals"], "games": f["games"],
                     "win_share": f["win_share"], "clustered": [low, high], "wilson": list(naive),
                     "width_ratio": (high - low) / (naive[1] - naive[0])})
        print(f"{result['protocol']:<16} {f['games']:>5} games  win share {f['win_share']:.4f}  "
              f"width ratio {rows[-1]['width_ratio']:.3f}  ({time.perf_counter() - began:.0f} s)", flush=True)
    data = {"agent": args.agent, "lineup": "heuristic", "deals": args.deals, "results": rows,
            "machine": benchmark.machine()}
    write_atomically(OUT, (json.dumps(data, indent=1) + "\n").encode())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
