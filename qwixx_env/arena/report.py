"""Showing an `ArenaResult`: tables on the terminal (rich's where rich is installed, else plain
text) and a matplotlib PNG."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env.arena import ArenaResult
from qwixx_env.core.variant import get_variant
from qwixx_env.files import save_figure


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _ladder(result: ArenaResult) -> list[int]:
    """Bot indices best first: by rating where there is one, else by mean score."""
    def key(b: int) -> float:
        row = result.bots[b]
        return row["rating"]["mu"] if row["rating"] else row["score_mean"]

    return sorted(range(len(result.labels)), key=key, reverse=True)


def terminal_console() -> Any:
    """rich's Console for stdout (120 columns wide where stdout is not a terminal, which rich
    would wrap to 80), or None where rich (the arena extra) is not installed."""
    try:
        from rich.console import Console
    except ImportError:
        return None
    console = Console()
    return console if console.is_terminal else Console(width=120)


def table_text(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[str]],
               right: Collection[str] = (), caption: str | None = None) -> str:
    """A table as plain text: `title`, the `columns` over a rule, a line per row (the columns
    named in `right` right-aligned, the others left-aligned), then `caption`."""
    widths = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(columns)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.rjust(w) if name in right else cell.ljust(w)
                         for cell, w, name in zip(cells, widths, columns)).rstrip()

    lines = [title] if title else []
    lines += [line(columns), "  ".join("-" * w for w in widths), *(line(row) for row in rows)]
    return "\n".join([*lines, caption] if caption else lines)


def print_table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[str]],
                right: Collection[str] = (), caption: str | None = None, console: Any = None) -> None:
    """Print a table with rich on `console` (default `terminal_console`), or as `table_text` on
    stdout where rich is not installed."""
    console = console or terminal_console()
    if console is None:
        print(table_text(title, columns, rows, right, caption))
        return
    from rich.table import Table

    table = Table(title=title, caption=caption)
    for name in columns:
        table.add_column(name, justify="right" if name in right else "left")
    for row in rows:
        table.add_row(*row)
    console.print(table)


SUMMARY_COLUMNS = ("bot", "games", "win rate [95% CI]", "score ± s.e.", "penalties", "rolls", "rating μ ± σ")


def print_report(result: ArenaResult, console: Any = None) -> None:
    """The summary table (bots best first) and, for 2 players, the head-to-head matrix: with
    rich on `console` (default `terminal_console`), as plain text where rich is not installed."""
    console = console or terminal_console()
    t = result.timing
    title = (
        f"{result.variant}"
        + (f" (lucky={result.lucky})" if get_variant(result.variant).lucky_count else "")
        + f", {result.num_players} player(s): {result.deals:,} deals × {len(result.lineups)} lineup(s)"
        + f" = {len(result.games.rolls):,} games, seed {result.seed}"
    )
    caption = f"{t['seconds']:.1f} s, {t['games_per_second']:.0f} games/s, {t['workers']} worker(s)"
    rows = []
    for b in _ladder(result):
        row = result.bots[b]
        win = (
            "—"
            if row["win_rate"] is None
            else f"{_pct(row['win_rate'])} [{_pct(row['win_interval'][0])}, {_pct(row['win_interval'][1])}]"
        )
        se = "" if row["score_se"] is None else f" ± {row['score_se']:.2f}"
        rating = "—" if row["rating"] is None else f"{row['rating']['mu']:.1f} ± {row['rating']['sigma']:.1f}"
        rows.append([row["label"], f"{row['games']:,}", win, f"{row['score_mean']:.2f}{se}",
                     f"{row['penalties_mean']:.2f}", f"{row['rolls_mean']:.1f}", rating])
    print_table(title, SUMMARY_COLUMNS, rows, right=SUMMARY_COLUMNS[1:], caption=caption, console=console)
    h2h = result.head_to_head
    if h2h and len(h2h["bots"]) > 1:
        matrix = [[label, *(_pct(x) if x is not None else "" for x in h2h["win_rate"][i])]
                  for i, label in enumerate(h2h["bots"])]
        print_table("head to head: the row bot's win rate against the column bot", ["", *h2h["bots"]], matrix,
                    right=h2h["bots"], console=console)


def save_png(result: ArenaResult, path: str | Path) -> None:
    """`arena_figure` as a PNG file."""
    save_figure(arena_figure(result), path, dpi=100)


def arena_figure(result: ArenaResult) -> Any:
    """The tournament as one matplotlib figure, read at a glance for 1 to 8 bots, best bot
    first everywhere.

    Left, leading: each bot's win rate with its 95% interval (solo: mean score ± 1.96 s.e.),
    then the rating ladder (openskill μ ± 1.96σ; none solo, where it would repeat the mean
    score). Right: the score distribution of each bot as
    small multiples, one row per bot on a shared score axis, each scaled to its own peak so no
    bot's histogram flattens another's, with its mean marked. One colour per bot throughout.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = _ladder(result)
    k = len(order)
    labels = [result.labels[b] for b in order]
    colours = [plt.get_cmap("tab10")(i % 10) for i in range(k)]
    rows = [result.bots[b] for b in order]
    fig = plt.figure(figsize=(13, max(5.5, 0.6 * k + 3.5)))
    columns = fig.add_gridspec(1, 2, width_ratios=(1, 1.15), wspace=0.35)
    has_ladder = k > 1 and rows[0]["rating"] is not None
    left = columns[0].subgridspec(2 if has_ladder else 1, 1, hspace=0.45)  # win rates above the ladder
    right = columns[1].subgridspec(k, 1, hspace=0.2)
    lead = fig.add_subplot(left[0])
    y = np.arange(k)[::-1]
    if result.num_players > 1:
        rate = np.array([r["win_rate"] for r in rows])
        low = rate - np.array([r["win_interval"][0] for r in rows])
        high = np.array([r["win_interval"][1] for r in rows]) - rate
        lead.barh(y, rate, color=colours, alpha=0.35, height=0.6)
        lead.errorbar(rate, y, xerr=[low, high], fmt="o", color="black", ecolor="black", capsize=3, markersize=4)
        lead.axvline(1 / result.num_players, color="grey", linestyle=":", linewidth=1)
        lead.set_xlim(0, 1)
        lead.set_xlabel(f"win rate (bars: 95% interval; dotted: 1/{result.num_players}, an even share)")
        lead.set_title("win rate", loc="left", fontweight="bold")
        for yi, r, lo, h in zip(y, rate, low, high):  # the figure beside the interval, inside the panel
            right_of = r + h + 0.02 < 0.88
            lead.annotate(f"{100 * r:.1f}%", (r + h + 0.02 if right_of else r - lo - 0.02, yi), va="center",
                          ha="left" if right_of else "right", fontsize="small")
    else:
        mean = np.array([r["score_mean"] for r in rows])
        half = np.array([1.96 * (r["score_se"] or 0.0) for r in rows])
        lead.errorbar(mean, y, xerr=half, fmt="o", color="black", capsize=3)
        lead.set_xlabel("mean score (bars: ± 1.96 s.e.)")
        lead.set_title("mean score (solo: no win rate)", loc="left", fontweight="bold")
    lead.set_yticks(y, labels)
    lead.set_ylim(-0.6, k - 0.4)
    lead.grid(axis="x", alpha=0.3)
    if has_ladder:
        ladder = fig.add_subplot(left[1])
        mu = np.array([r["rating"]["mu"] for r in rows])
        half = np.array([r["rating"]["mu"] - r["rating"]["interval"][0] for r in rows])
        for yi, m, h, c in zip(y, mu, half, colours):
            ladder.errorbar(m, yi, xerr=h, fmt="o", color=c, capsize=3)
        ladder.set_xlabel("openskill μ (bars: μ ± 1.96σ)")
        ladder.set_title("rating ladder", loc="left")
        ladder.set_yticks(y, labels)
        ladder.set_ylim(-0.6, k - 0.4)
        ladder.grid(axis="x", alpha=0.3)
    scores = [result.bot_scores(b) for b in order]
    low, high = min(int(s.min()) for s in scores), max(int(s.max()) for s in scores)
    width = max(1, (high - low + 1) // 40)
    bins = np.arange(low - 0.5, high + width + 0.5, width)
    panels = []  # one per bot, all on the first one's x axis
    for i, (s, c, label, row) in enumerate(zip(scores, colours, labels, rows)):
        ax = fig.add_subplot(right[i], sharex=panels[0] if panels else None)
        panels.append(ax)
        counts, edges = np.histogram(s, bins=bins)
        share = counts / max(1, counts.sum())
        ax.fill_between(edges[:-1], share, step="post", color=c, alpha=0.45, linewidth=0)
        ax.axvline(s.mean(), color="black", linewidth=1)
        ax.set_ylim(0, share.max() * 1.25 if share.max() > 0 else 1)
        ax.set_yticks([])
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
        se = "" if row["score_se"] is None else f" ± {row['score_se']:.1f}"
        ax.text(0.01, 0.95, f"{label}: mean {s.mean():.1f}{se}", transform=ax.transAxes, va="top", fontsize="small",
                bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1})
        if i < k - 1:
            ax.tick_params(labelbottom=False)
        if i == 0:
            ax.set_title("final score: each bot's games (line: mean)", loc="left")
    panels[0].set_xlim(low - 1, high + 1)
    fig.axes[-1].set_xlabel("final score")
    fig.suptitle(
        f"qwixx arena: {result.variant}, {result.num_players} player(s), "
        f"{len(result.games.rolls):,} games, seed {result.seed}"
    )
    fig.subplots_adjust(left=0.17, right=0.98, top=0.9, bottom=0.1)
    return fig
