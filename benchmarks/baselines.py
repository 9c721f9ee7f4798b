"""The baseline ladder (`docs/baselines.md`): arenas between the scripted bots, tables + JSON.

    python benchmarks/baselines.py greedy            # which max_skip is best (solo + 2-player)
    python benchmarks/baselines.py ladder            # 2-player classic: each rung vs the next
    python benchmarks/baselines.py ladder --variant longo
    python benchmarks/baselines.py solo              # solo classic means, every bot
    python benchmarks/baselines.py pool --players 3  # all bots at one table, seats rotated
    python benchmarks/baselines.py speed             # 10,000 heuristic-vs-heuristic games
    python benchmarks/baselines.py edge --bot afterstate   # the win rate a points edge buys
    python benchmarks/baselines.py markdown          # the saved results as the doc's tables

Each arena prints its table (`qwixx_env.arena.report`) and saves its JSON summary (without
the per-game rows) under ``benchmarks/results/baselines/``. Sizes are options: the defaults
are the ones the doc reports (``--deals`` for the cheap bots, ``--rollout-deals`` when the
search bot plays).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console

from qwixx_env.arena import run_arena
from qwixx_env.arena.report import print_report
from qwixx_env.files import save_figure, write_atomically

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
    write_atomically(path, json.dumps(summary, indent=1).encode())
    return result


EDGES = tuple(range(0, 21))
IMAGES = Path(__file__).parent.parent / "docs" / "images"


def _measured_against_heuristic() -> dict[str, tuple[float, float]]:
    """(mean margin, win rate) against heuristic of the bots measured elsewhere in the repo:
    the ladder's rollout and the published 2-player PPO bot."""
    points = {}
    ladder = OUT / "ladder_classic_2p_heuristic_vs_rollout.json"
    if ladder.exists():
        rows = {b["label"]: b for b in json.loads(ladder.read_text())["bots"]}
        points["rollout"] = (
            rows["rollout"]["score_mean"] - rows["heuristic"]["score_mean"],
            rows["rollout"]["win_rate"],
        )
    card = OUT.parent / "pretrained" / "ppo-classic-2p.json"
    if card.exists():
        for o in json.loads(card.read_text())["evaluation"].get("opponents", []):
            if o["opponent"] == "heuristic":
                points["ppo-classic-2p"] = (o["score_mean"] - o["opponent_score_mean"], o["win_rate"])
    return points


def edge(bot: str, *, deals: int, seed: int, workers: int | None) -> dict:
    """How many points a game a 2-player classic bot must gain over `heuristic` for a given
    win rate: `bot` plays `heuristic` (seats swapped on every deal), and every game's margin
    (its score minus the heuristic's) is shifted by 0, 1, ... points and counted as a win
    (ties half). Saves the JSON and a plot (docs/images/edge_vs_heuristic.png)."""
    import numpy as np

    from qwixx_env.arena.stats import win_shares

    result = arena(f"edge_{bot}_vs_heuristic", [bot, "heuristic"], deals=deals, players=2, variant="classic",
                   seed=seed, workers=workers)
    seats = result.seat_bots
    scores = result.games.scores
    rows = np.arange(len(scores))
    margin = scores[rows, np.argmax(seats == 0, axis=1)] - scores[rows, np.argmax(seats == 1, axis=1)]
    curve = [
        float(win_shares(np.stack([margin + e, np.zeros_like(margin)], axis=1))[:, 0].mean()) for e in EDGES
    ]
    out = {"bot": bot, "games": int(len(margin)), "margin_mean": float(margin.mean()),
           "margin_sd": float(margin.std(ddof=1)), "edges": list(EDGES), "win_rate": curve}
    path = OUT / f"edge_{bot}_vs_heuristic.json"
    summary = json.loads(path.read_text())
    summary["edge"] = out
    write_atomically(path, json.dumps(summary, indent=1).encode())
    print(
        f"{bot} vs heuristic: {len(margin):,} games, "
        f"margin {out['margin_mean']:+.2f} (sd {out['margin_sd']:.1f})"
    )
    print("extra points a game -> win rate: " + ", ".join(f"+{e}: {_pct(w)}" for e, w in zip(EDGES, curve)))
    plot_edge(out)
    return out


def plot_edge(out: dict) -> None:
    """docs/images/edge_vs_heuristic.png from `edge`'s result, with the measured bots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    total = [out["margin_mean"] + e for e in out["edges"]]
    ax.plot(total, [100 * w for w in out["win_rate"]], "o-", ms=3, label=f"{out['bot']}'s margins, shifted")
    for label, (m, w) in _measured_against_heuristic().items():
        ax.plot([m], [100 * w], "s", ms=6, label=f"{label} (measured)")
    ax.axhline(65, color="tab:red", ls="--", lw=1, label="target: 65%")
    ax.set_xlabel("mean margin over heuristic (points a game)")
    ax.set_ylabel("win rate against heuristic (%)")
    ax.set_title(f"What an edge buys: {out['games']:,} games of {out['bot']} vs heuristic")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    IMAGES.mkdir(parents=True, exist_ok=True)
    save_figure(fig, IMAGES / "edge_vs_heuristic.png")


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
    ap.add_argument("part", choices=["greedy", "ladder", "solo", "pool", "speed", "edge", "markdown"])
    ap.add_argument("--bot", default="afterstate", help="edge: the bot that plays heuristic")
    ap.add_argument("--variant", default="classic", choices=["classic", "longo"])
    ap.add_argument("--players", type=int, default=2, choices=range(1, 6), metavar="1..5")
    ap.add_argument("--deals", type=int, default=5000)
    ap.add_argument("--rollout-deals", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--workers", type=int, default=None)
    a = ap.parse_args()
    least = 5 if a.part == "greedy" else 1  # greedy plays a fifth of the deals at 2 players
    for flag, value, low in (("--deals", a.deals, least), ("--rollout-deals", a.rollout_deals, 1),
                             ("--seed", a.seed, 0), ("--workers", a.workers, 1)):
        if value is not None and value < low:
            ap.error(f"{flag}: got {value}; expected an integer >= {low}")
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
        arena(
            f"solo_{v}", ["random", "greedy", "heuristic", "solo_optimal"], deals=a.deals, players=1, **common
        )
        arena(f"solo_{v}_rollout", ["rollout"], deals=a.rollout_deals, players=1, **common)
    elif a.part == "edge":
        edge(a.bot, deals=a.deals, seed=a.seed, workers=a.workers)
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
