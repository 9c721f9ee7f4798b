"""OpenSpiel's ISMCTS against the project's bots, through the arena (`docs/integrations.md`).

    python benchmarks/openspiel_search.py                      # the doc's figure
    python benchmarks/openspiel_search.py --deals 4 --simulations 16 --json /tmp/x.json

The search bot is ``openspiel-ismcts`` (`qwixx_env.integrations.openspiel_bots.SearchBot`):
OpenSpiel's `ISMCTSBot` searching ``python_qwixx`` from the position its seat sees, its hidden
white choices resampled per simulation, leaves scored by one compiled heuristic playout, PUCT
with the heuristic's choice as prior. It plays 2-player classic against each opponent in
`--opponents`: `--deals` deals, each played in both seatings (common dice), so 2 x deals table
games per opponent. The JSON holds, per opponent, the search bot's win rate with its 95% Wilson
interval, mean scores, and the seconds it took, with the settings, the versions and the machine's
load average at the start (the machine may be shared). Needs the ``openspiel`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from importlib.metadata import version
from pathlib import Path

from qwixx_env.arena import run_arena
from qwixx_env.files import write_atomically
from qwixx_env.integrations.openspiel_bots import (
    DEFAULT_PLAYOUTS,
    DEFAULT_PRIOR,
    DEFAULT_PRIOR_WEIGHT,
    DEFAULT_UCT_C,
    SEARCH_BOT,
)

RESULTS = Path(__file__).resolve().parent / "results" / "openspiel_ismcts.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opponents", default="greedy,heuristic", help="comma-separated bot names")
    parser.add_argument("--deals", type=int, default=16, help="deals per opponent (each played in both seatings)")
    parser.add_argument("--simulations", type=int, default=32, help="ISMCTS simulations per decision")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args()
    search = {"simulations": args.simulations}
    label = f"{SEARCH_BOT}:simulations={args.simulations}"
    out = {
        "format": "qwixx_env.openspiel_search/1",
        "command": "python benchmarks/openspiel_search.py"
        + ("" if args.json == RESULTS else " ...")
        + f" --deals {args.deals} --simulations {args.simulations} --opponents {args.opponents}",
        "game": "2-player classic",
        "search_bot": {
            "name": SEARCH_BOT, "simulations": args.simulations, "uct_c": DEFAULT_UCT_C,
            "playouts": DEFAULT_PLAYOUTS, "playout_policy": "heuristic", "prior": DEFAULT_PRIOR,
            "prior_weight": DEFAULT_PRIOR_WEIGHT, "selection": "PUCT", "final_choice": "most visited",
        },
        "deals": args.deals,
        "seed": args.seed,
        "versions": {"open_spiel": version("open_spiel"), "python": platform.python_version()},
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": list(os.getloadavg()),
                    "workers": args.workers},
        "opponents": [],
    }
    for opponent in args.opponents.split(","):
        start = time.perf_counter()
        result = run_arena([(SEARCH_BOT, search), opponent], num_players=2, games=args.deals, seed=args.seed,
                           workers=args.workers)
        seconds = time.perf_counter() - start
        me, them = result.bots
        row = {
            "opponent": opponent,
            "table_games": me["games"],
            "win_rate": me["win_rate"],
            "win_interval_95": me["win_interval"],
            "score_mean": me["score_mean"],
            "opponent_score_mean": them["score_mean"],
            "seconds": round(seconds, 1),
        }
        out["opponents"].append(row)
        print(f"{label} vs {opponent}: win rate {me['win_rate']:.3f} "
              f"[{me['win_interval'][0]:.3f}, {me['win_interval'][1]:.3f}] over {me['games']} games, "
              f"scores {me['score_mean']:.1f} vs {them['score_mean']:.1f}, {seconds:.0f} s", flush=True)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(args.json, (json.dumps(out, indent=1) + "\n").encode())
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
