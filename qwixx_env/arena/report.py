"""Showing an `ArenaResult`: rich tables on the terminal and a matplotlib PNG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env.arena import ArenaResult
from qwixx_env.files import save_figure


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _ladder(result: ArenaResult) -> list[int]:
    """Bot indices best first: by rating where there is one, else by mean score."""
    def key(b: int) -> float:
        row = result.bots[b]
        return row["rating"]["mu"] if row["rating"] else row["score_mean"]

    return sorted(range(len(result.labels)), key=key, reverse=True)


def print_report(result: ArenaResult, console: Any = None) -> None:
    """The summary table (bots best first) and, for 2 players, the head-to-head matrix."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    t = result.timing
    title = (
        f"{result.variant}"
        + (f" (lucky={result.lucky})" if result.variant == "longo" else "")
        + f", {result.num_players} player(s): {result.deals:,} deals × {len(result.lineups)} lineup(s)"
        + f" = {len(result.games.rolls):,} games, seed {result.seed}"
    )
    caption = f"{t['seconds']:.1f} s, {t['games_per_second']:.0f} games/s, {t['workers']} worker(s)"
    table = Table(title=title, caption=caption)
    for name, justify in (
        ("bot", "left"),
        ("games", "right"),
        ("win rate [95% CI]", "right"),
        ("score ± s.e.", "right"),
        ("penalties", "right"),
        ("rolls", "right"),
        ("rating μ ± σ", "right"),
    ):
        table.add_column(name, justify=justify)
    for b in _ladder(result):
        row = result.bots[b]
        win = (
            "—"
            if row["win_rate"] is None
            else f"{_pct(row['win_rate'])} [{_pct(row['win_interval'][0])}, {_pct(row['win_interval'][1])}]"
        )
        se = "" if row["score_se"] is None else f" ± {row['score_se']:.2f}"
        rating = "—" if row["rating"] is None else f"{row['rating']['mu']:.1f} ± {row['rating']['sigma']:.1f}"
        table.add_row(
            row["label"],
            f"{row['games']:,}",
            win,
            f"{row['score_mean']:.2f}{se}",
            f"{row['penalties_mean']:.2f}",
            f"{row['rolls_mean']:.1f}",
            rating,
        )
    console.print(table)
    h2h = result.head_to_head
    if h2h and len(h2h["bots"]) > 1:
        console.print("head to head: the row bot's win rate against the column bot")
        matrix = Table()
        matrix.add_column("")
        for label in h2h["bots"]:
            matrix.add_column(label, justify="right")
        for i, label in enumerate(h2h["bots"]):
            matrix.add_row(label, *(_pct(x) if x is not None else "" for x in h2h["win_rate"][i]))
        console.print(matrix)


def save_png(result: ArenaResult, path: str | Path) -> None:
    """Score distributions per bot and the rating ladder (95% intervals) as one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = _ladder(result)
    has_ratings = result.bots[order[0]]["rating"] is not None
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.5 * len(order) + 4), squeeze=False)
    dist, ladder = axes[0]
    scores = [result.bot_scores(b) for b in order]
    low, high = min(s.min() for s in scores), max(s.max() for s in scores)
    bins = np.arange(low - 0.5, high + 1.5, max(1, (high - low + 1) // 40))
    for b, s in zip(order, scores):
        dist.hist(s, bins=bins, histtype="step", linewidth=1.6, label=f"{result.labels[b]} (mean {s.mean():.1f})")
    dist.set_xlabel("final score")
    dist.set_ylabel("games")
    dist.set_title("score distribution per bot")
    dist.legend(fontsize="small")
    y = np.arange(len(order))[::-1]
    if has_ratings:
        mu = np.array([result.bots[b]["rating"]["mu"] for b in order])
        half = np.array([result.bots[b]["rating"]["mu"] - result.bots[b]["rating"]["interval"][0] for b in order])
        ladder.set_xlabel("openskill μ (bars: μ ± 1.96σ)")
        ladder.set_title("rating ladder")
    else:
        mu = np.array([result.bots[b]["score_mean"] for b in order])
        half = np.array([1.96 * (result.bots[b]["score_se"] or 0.0) for b in order])
        ladder.set_xlabel("mean score (bars: ± 1.96 s.e.)")
        ladder.set_title("mean score ladder")
    ladder.errorbar(mu, y, xerr=half, fmt="o", capsize=4)
    ladder.set_yticks(y, [result.labels[b] for b in order])
    ladder.set_ylim(-0.6, len(order) - 0.4)
    ladder.grid(axis="x", alpha=0.3)
    fig.suptitle(
        f"qwixx arena: {result.variant}, {result.num_players} player(s), "
        f"{len(result.games.rolls):,} games, seed {result.seed}"
    )
    fig.tight_layout()
    save_figure(fig, path, dpi=100)
