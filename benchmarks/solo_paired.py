"""The solo Longo bots against `heuristic`, paired by deal, on their benchmark protocol's deals.

    python benchmarks/solo_paired.py     # writes benchmarks/results/solo_paired.json

The benchmark's solo bar compares two means with their own intervals; on the same deals the
paired difference (each deal's score of the bot minus heuristic's) is the sharper test. Each bot
plays the protocol's 2,000 deals alone in the arena (the same dice for both), and the mean
difference is printed with its standard error and 95% interval.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from qwixx_env import benchmark
from qwixx_env.arena import run_arena
from qwixx_env.files import write_atomically

OUT = Path(__file__).resolve().parent / "results" / "solo_paired.json"
PAIRS = (("ppo-longo-1p", "longo-1p"), ("ppo-longo-instead-1p", "longo-instead-1p"))


def scores(bot: str, proto: benchmark.Protocol) -> np.ndarray:
    result = run_arena([bot], num_players=1, variant=proto.table.variant, lucky=proto.table.lucky,
                       games=proto.deals, seed=proto.seed("heuristic"), workers=2)
    return result.games.scores[:, 0].astype(float)


def main() -> None:
    out = []
    for name, table in PAIRS:
        proto = benchmark.protocol(table)
        mine, theirs = scores(name, proto), scores("heuristic", proto)
        d = mine - theirs
        se = float(d.std(ddof=1) / np.sqrt(len(d)))
        row = {"bot": name, "protocol": proto.name, "deals": len(d), "bot_mean": float(mine.mean()),
               "heuristic_mean": float(theirs.mean()), "paired_difference": float(d.mean()), "se": se,
               "interval": [float(d.mean()) - 1.96 * se, float(d.mean()) + 1.96 * se]}
        out.append(row)
        print(f"{name} on {proto.name}: {row['bot_mean']:.2f} against heuristic's {row['heuristic_mean']:.2f}; "
              f"paired difference {row['paired_difference']:+.2f} ± {se:.2f}, 95% "
              f"[{row['interval'][0]:.2f}, {row['interval'][1]:.2f}]")
    write_atomically(OUT, (json.dumps({"results": out}, indent=1) + "\n").encode())


if __name__ == "__main__":
    main()
