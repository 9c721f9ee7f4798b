"""Learning curves of teacher-free self-play runs (`qwixx-train --engine selfplay`), over seeds.

    python benchmarks/selfplay_curves.py runs/sp_s1 runs/sp_s2 runs/sp_s3 \
        --name classic_2p --png docs/images/selfplay-classic-2p-curves.png

Reads each run's ``curve.json`` (the win share against each evaluation opponent, on deals no
round plays, every `eval_every` rounds) and writes ``benchmarks/results/selfplay/NAME.json``:

- `curves`: for each opponent and each evaluated round that every run reached, the mean over
  runs of the win share, its 95% interval across runs (Student's t on the runs' values: the
  seeds are the unit) and each run's own value with its standard error over deals; the mean
  wall-clock minutes and learner decisions at that round;
- `compute`: the win share against the last opponent (`heuristic` by default) at learner-decision
  budgets that double from the first evaluation after round 0 to the last, each run's value
  read off its curve (linear in log decisions between evaluations), with the same interval:
  what doubling the learner's compute buys.

`--png` draws both: the win shares against wall time and against decisions, and the compute
curve (log decisions).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from qwixx_env.files import write_atomically

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "selfplay"

# Student's t, 97.5th percentile, by degrees of freedom (1 to 9): a 95% interval over a few seeds.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def interval(values: list[float]) -> tuple[float, float, float]:
    """(mean, low, high): the 95% t-interval of the mean over `values` (one per run), cut to [0, 1]."""
    mean = float(np.mean(values))
    if len(values) < 2:
        return mean, mean, mean
    half = T975.get(len(values) - 1, 1.96) * float(np.std(values, ddof=1)) / math.sqrt(len(values))
    return mean, max(mean - half, 0.0), min(mean + half, 1.0)  # a win share lies in [0, 1]


def read_curve(run: Path) -> list[dict]:
    path = run / "curve.json"
    if not path.is_file():
        raise SystemExit(f"{run}: no curve.json (a folder of qwixx-train --engine selfplay)")
    return json.loads(path.read_text())


def summarise(runs: list[Path]) -> dict:
    curves = [read_curve(r) for r in runs]
    opponents = [k for k in curves[0][0] if isinstance(curves[0][0][k], dict)]
    by_round = [{row["round"]: row for row in c} for c in curves]
    common = sorted(set.intersection(*(set(b) for b in by_round)))
    out: dict = {"runs": [str(r) for r in runs], "opponents": opponents, "curves": {}, "compute": {}}
    for name in opponents:
        rows = []
        for rnd in common:
            at = [b[rnd] for b in by_round]
            mean, low, high = interval([a[name]["win_share"] for a in at])
            rows.append({"round": rnd, "minutes": round(float(np.mean([a["minutes"] for a in at])), 2),
                         "decisions": int(np.mean([a["decisions"] for a in at])),
                         "win_share": round(mean, 4), "low": round(low, 4), "high": round(high, 4),
                         "per_run": [{"win_share": a[name]["win_share"], "se": a[name]["se"]} for a in at]})
        out["curves"][name] = rows
    target = opponents[-1]
    out["compute"] = compute_curve(curves, target)
    finals = [c[-1] for c in curves]
    out["final"] = {name: dict(zip(("win_share", "low", "high"), (round(v, 4) for v in
                                   interval([f[name]["win_share"] for f in finals]))))
                    for name in opponents}
    out["final"]["minutes"] = [f["minutes"] for f in finals]
    out["final"]["decisions"] = [f["decisions"] for f in finals]
    return out


def compute_curve(curves: list[list[dict]], name: str) -> dict:
    """Win share against `name` at doubling decision budgets (see the module docstring)."""
    first = max(min(r["decisions"] for r in c if r["decisions"] > 0) for c in curves)
    last = min(c[-1]["decisions"] for c in curves)
    budgets = []
    b = float(first)
    while b <= last * 1.0001:
        budgets.append(int(b))
        b *= 2
    rows = []
    for budget in budgets:
        values = []
        for c in curves:
            d = np.array([r["decisions"] for r in c if r["decisions"] > 0], float)
            w = np.array([r[name]["win_share"] for r in c if r["decisions"] > 0], float)
            values.append(float(np.interp(math.log(budget), np.log(d), w)))
        mean, low, high = interval(values)
        rows.append({"decisions": budget, "win_share": round(mean, 4), "low": round(low, 4), "high": round(high, 4),
                     "per_run": [round(v, 4) for v in values]})
    return {"opponent": name, "budgets": rows}


def plot(summary: dict, png: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    colours = {"random": "tab:gray", "greedy": "tab:blue", "heuristic": "tab:red"}
    for ax, xkey, xlabel in ((axes[0], "minutes", "wall-clock minutes (mean over runs)"),
                             (axes[1], "decisions", "learner decisions (mean over runs)")):
        for name, rows in summary["curves"].items():
            x = [r[xkey] for r in rows]
            ax.plot(x, [r["win_share"] for r in rows], label=f"vs {name}", color=colours.get(name))
            ax.fill_between(x, [r["low"] for r in rows], [r["high"] for r in rows], alpha=0.2,
                            color=colours.get(name))
        ax.axhline(0.5, color="black", lw=0.8, ls=":")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("win share (95% interval over runs)")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    comp = summary["compute"]
    ax = axes[2]
    if not comp["budgets"]:
        comp = {"opponent": comp["opponent"], "budgets": [{"decisions": 1, "win_share": 0.0, "low": 0.0, "high": 0.0}]}
    x = [r["decisions"] for r in comp["budgets"]]
    ax.errorbar(x, [r["win_share"] for r in comp["budgets"]],
                yerr=[[r["win_share"] - r["low"] for r in comp["budgets"]],
                      [r["high"] - r["win_share"] for r in comp["budgets"]]], marker="o", capsize=3, color="tab:red")
    ax.axhline(0.5, color="black", lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("learner decisions (doubling)")
    ax.set_ylabel(f"win share vs {comp['opponent']}")
    ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run folders (one per seed)")
    ap.add_argument("--name", required=True, help="results file name: benchmarks/results/selfplay/NAME.json")
    ap.add_argument("--png", type=Path, help="draw the curves into this file")
    ap.add_argument("--title", default="Teacher-free self-play")
    a = ap.parse_args(argv)
    summary = summarise(a.runs)
    summary["configs"] = [json.loads((r / "config.json").read_text()) for r in a.runs]
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{a.name}.json"
    write_atomically(path, (json.dumps(summary, indent=1) + "\n").encode())
    print(f"wrote {path}")
    for name, row in summary["final"].items():
        if isinstance(row, dict):
            print(f"final vs {name}: {row['win_share']:.1%} [{row['low']:.1%}, {row['high']:.1%}] "
                  f"over {len(a.runs)} runs")
    for row in summary["compute"]["budgets"]:
        print(f"{row['decisions']:>12,} decisions: {row['win_share']:.1%} [{row['low']:.1%}, {row['high']:.1%}]")
    if a.png:
        plot(summary, a.png, a.title)
        print(f"wrote {a.png}")


if __name__ == "__main__":
    main()
