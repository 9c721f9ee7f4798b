"""The baseline ladder (`docs/baselines.md`): arenas between the scripted bots, tables + JSON.

    python benchmarks/baselines.py greedy            # which max_skip is best (solo + 2-player)
    python benchmarks/baselines.py ladder            # 2-player classic: each rung vs the next
    python benchmarks/baselines.py ladder --variant longo
    python benchmarks/baselines.py solo              # solo classic means, every bot
    python benchmarks/baselines.py pool --players 3  # all bots at one table, seats rotated
    python benchmarks/baselines.py speed             # 10,000 heuristic-vs-heuristic games
    python benchmarks/baselines.py markdown          # the saved results as the doc's tables

Each arena prints its table (`qwixx_env.arena.report`) and saves its JSON summary (without
the per-game rows) under ``benchmarks/results/baselines/``. Sizes are options: the defaults
are the ones the doc reports (``--deals`` for the cheap bots, ``--rollout-deals`` when the
search bot plays).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from rich.console import Console

from qwixx_env.arena import run_arena
from qwixx_env.arena.report import print_report

OUT = Path(__file__).parent / "results" / "baselines"
LADDER = ["random", "greedy", "heuristic", "rollout"]


def arena(tag: str, bots, *, deals: int, players: int, variant: str, seed: int, workers: int | None):
    console = Console()
    console.rule(f"{tag}: {', '.join(map(str, bots))}")
    result = run_arena(bots, num_players=players, variant=variant, games=deals, seed=seed, workers=workers)
    print_report(result, console)
    summary = result.to_dict()
    summary.pop("games", None)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{tag}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=1))
    os.replace(tmp, path)
    return result


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def markdown(tag: str, r: dict) -> str:
    """One saved arena as a markdown table (bots best first) plus its head-to-head line."""
    solo = r["num_players"] == 1
    head = f"**{tag}** — {r['variant']}, {r['num_players']} player(s), {r['table_games']:,} games " \
           f"({r['deals']:,} deals x {len(r['lineups'])} lineups), seed {r['seed']}"
    cols = ["bot", "games", "score ± s.e."] if solo else ["bot", "games", "win rate [95% CI]", "score ± s.e.",
                                                        "rating μ"]
    rows = sorted(r["bots"], key=lambda b: -(b["score_mean"] if solo else b["win_rate"]))
    lines = [head, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for b in rows:
        score = f"{b['score_mean']:.2f} ± {b['score_se']:.2f}"
        if solo:
            cells = [b["label"], f"{b['games']:,}", score]
        else:
            lo, hi = b["win_interval"]
            cells = [b["label"], f"{b['games']:,}", f"{_pct(b['win_rate'])} [{_pct(lo)}, {_pct(hi)}]", score,
                     f"{b['rating']['mu']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    h2h = r.get("head_to_head")
    if h2h and len(r["bots"]) == 2:
        a, b = (x["label"] for x in r["bots"])
        lo, hi = h2h["interval"][1][0]
        lines += ["", f"Head to head: {b} wins {_pct(h2h['win_rate'][1][0])} [{_pct(lo)}, {_pct(hi)}] "
                      f"of {h2h['games'][1][0]:,} games against {a}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=["greedy", "ladder", "solo", "pool", "speed", "markdown"])
    ap.add_argument("--variant", default="classic")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--deals", type=int, default=5000)
    ap.add_argument("--rollout-deals", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--workers", type=int, default=None)
    a = ap.parse_args()
    if a.part == "markdown":
        for path in sorted(OUT.glob("*.json")):
            print(markdown(path.stem, json.loads(path.read_text())))
        return
    common = dict(variant=a.variant, seed=a.seed, workers=a.workers)
    v = a.variant
    if a.part == "greedy":
        skips = [f"greedy:max_skip={k}" for k in range(5)]
        arena("greedy_solo", skips, deals=a.deals, players=1, **common)
        arena(f"greedy_{v}_2p", skips, deals=a.deals // 5, players=2, **common)
    elif a.part == "ladder":
        for low, high in zip(LADDER, LADDER[1:]):
            deals = a.rollout_deals if "rollout" in (low, high) else a.deals
            arena(f"ladder_{v}_2p_{low}_vs_{high}", [low, high], deals=deals, players=2, **common)
    elif a.part == "solo":
        arena(f"solo_{v}", ["random", "greedy", "heuristic", "solo_optimal"], deals=a.deals, players=1, **common)
        arena(f"solo_{v}_rollout", ["rollout"], deals=a.rollout_deals, players=1, **common)
    elif a.part == "pool":
        arena(f"pool_{v}_{a.players}p", LADDER, deals=a.rollout_deals, players=a.players, **common)
    else:
        t = time.perf_counter()
        r = arena("speed_heuristic_2p", ["heuristic", "heuristic"], deals=a.deals, players=2, **common)
        wall = time.perf_counter() - t
        games = len(r.games.rolls)
        print(f"{games:,} games in {wall:.1f} s wall (incl. start-up): {games / wall:.0f} games/s")


if __name__ == "__main__":
    main()
