"""Learning curves of a run: its evaluation history drawn against steps and wall time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qwixx_env.files import save_figure


def plot_curves(history: list[dict[str, Any]], path: Path, title: str) -> Path:
    """Write a PNG of `history` (the records of ``eval.jsonl``): win rate with its 95%
    interval (multi-player) and mean score, each against learner steps and wall time."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    solo = bool(history) and "solo" in history[0]
    rows = [("score", "mean score")] if solo else [("win", "win rate"), ("score", "mean score")]
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 3.6 * len(rows)), squeeze=False)
    if solo:
        series = {"learner": [(r, r["solo"]) for r in history]}
    else:
        labels = list(dict.fromkeys(label for r in history for label in r["opponents"]))
        series = {
            f"vs {label}": [(r, r["opponents"][label]) for r in history if label in r["opponents"]] for label in labels
        }
    for i, (kind, ylabel) in enumerate(rows):
        for j, (x_of, xlabel) in enumerate(((lambda r: r["steps"], "learner steps"),
                                            (lambda r: r["wall_time"] / 60, "wall time (minutes)"))):
            ax = axes[i][j]
            for label, points in series.items():
                x = [x_of(r) for r, _ in points]
                if kind == "win":
                    lows, highs = zip(*(p["win_interval"] for _, p in points))
                    ax.fill_between(x, lows, highs, alpha=0.2)
                    ax.plot(x, [p["win_rate"] for _, p in points], marker=".", label=label)
                else:
                    ax.plot(x, [p["score_mean"] for _, p in points], marker=".", label=label)
            if kind == "win":
                ax.set_ylim(0, 1)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
            if series:
                ax.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path
