"""docs/results.md, its summary and its plot, from every learner's results file.

    python benchmarks/learning/report.py            # writes the three below
    python benchmarks/learning/report.py --check    # exits 1 if the page is not what the files say

Reads ``benchmarks/results/learning/<learner>_<table>.json`` (`common.write`), and writes:

- ``benchmarks/results/learning/summary.json``: per table, learner and opponent, the win share
  at every evaluation point as the interquartile mean over seeds with its 95% stratified
  bootstrap interval (rliable's `get_interval_estimates` with `aggregate_iqm`; `REPS`
  resamples, a fixed random state), the decisions and training seconds of each point (the
  means over seeds), and whether the learner beat `greedy` within the budget;
- ``docs/results.md``: the page, rendered from the summary alone (`render`);
- ``docs/images/results.png``: the curves.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

from qwixx_env.files import write_atomically  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = common.RESULTS / "summary.json"
PAGE = ROOT / "docs" / "results.md"
PLOT = ROOT / "docs" / "images" / "results.png"
REPS = 2_000
ORDER = ("sb3-ppo", "rllib-ppo", "benchmarl-ippo", "benchmarl-mappo", "benchmarl-qmix", "tianshou-dqn",
         "agilerl-dqn", "pufferlib-ppo", "selfplay-td")
"""The learners in the order the page lists them (any other after them, by name)."""
NOT_YET = {
    "benchmarl-qmix": "not run yet, for want of time on this 2-core machine: its 2-player runs took about 1,500 "
    "CPU-seconds a seed (45 batches, evaluations included); at 3 players seat 0 decides in fewer frames (0.67 a "
    "frame against 0.76), so the budget needs about 50 batches, each training three seats' networks, not two",
}
"""Why a learner has no results file yet, for the page (the runner exists for each)."""
SHORT: dict[str, str] = {}
"""Why a learner's runs ended before the budget, for the page (the ends come from the results)."""
SEEDS_NOT_YET: dict[str, str] = {}
"""Why a learner's results file lacks some of `SEEDS`, for the page."""
SEEDS = (0, 1, 2)
"""The seeds the page asks of every learner; a results file with fewer is marked so, and the
missing seeds are listed with what is not measured yet."""

JAX_PPO = ("The same algorithm does pass greedy with more updates: at 2-player classic the JAX PPO of "
           "[Qwixx in JAX](jax.md), at 16,384 decisions an update, is past it by its 200th update (about 3.3 "
           "million decisions).")
WHY = {
    "sb3-ppo": "PPO at qwixx-train's defaults takes one update per 8,192 decisions (64 games x 128 steps), so "
               "the budget is 25 updates. " + JAX_PPO,
    "rllib-ppo": "PPO at `qwixx-train --engine rllib`'s defaults takes one update per 4,000 decisions, so the "
                 "budget is about 50 updates. " + JAX_PPO,
    "pufferlib-ppo": "CleanRL's PPO settings here take one update per 8,192 decisions (64 games x 128), so the "
                     "budget is 25 updates, and it plays only its current self (no snapshots to hold it "
                     "steady). " + JAX_PPO,
    "agilerl-dqn": "It does not get past random play: the population of 4 splits the budget (50,000 decisions "
                   "an agent), and AgileRL's DQN defaults learn slowly from a reward paid only at the game's "
                   "end, tens of decisions later (1-step targets, learning rate 1e-4, a target network moved "
                   "by 1e-3 at each learning step). Its win share against `random` stays near or below parity.",
    "benchmarl-ippo": "BenchMARL's PPO takes one update per batch of 6,000 frames (about 9,000 decisions at 2 "
    "players, 12,000 at 3; 45 passes of 15 minibatches each), so the budget is about 23 updates at 2 players and "
    "17 at 3. " + JAX_PPO,
    "benchmarl-mappo": "MAPPO here is IPPO's PPO with a centralised critic (every seat's observation), so it "
    "gets the same one update per batch of 6,000 frames: about 23 updates in the budget at 2 players, 17 at "
    "3. " + JAX_PPO,
    "benchmarl-qmix": "QMIX runs with a group per seat (BenchMARL's table group refuses off-policy algorithms), so "
    "each seat has its own Q-network and its mixer mixes that one seat's Q-value: independent Q-learning against "
    "the other seats' learners. BenchMARL's off-policy defaults take 1,000 optimizer steps of 128 transitions per "
    "batch of 6,000 frames (about 45 batches in the budget at 2 players), at learning rate 5e-5, with one-step "
    "targets from a reward paid only at the game's end, tens of decisions later, and epsilon annealed from 0.8 to "
    "0.01 over the first third of the frames.",
    "tianshou-dqn": "It learns to beat `random` early and then stalls against `greedy`: Tianshou's DQN "
                    "quick-start settings learn from a reward paid only at the game's end, tens of decisions later, "
                    "with 3-step targets, exploration held at epsilon 0.1 throughout, and a 20,000-transition "
                    "buffer that holds only the last tenth of the run.",
    "selfplay-td": "Its own learner, TD(lambda) over afterstates, updates at every decision; at three players "
                   "the budget ends while it is still climbing fast.",
}
"""Why a learner does not beat greedy within the budget, for the page: what its settings give it
(the trend at the end is computed from the results, `trend`)."""


def runs() -> list[dict[str, Any]]:
    """Every learner's results file, in page order."""
    files = [json.loads(p.read_text()) for p in sorted(common.RESULTS.glob("*_*.json"))]
    files = [f for f in files if f.get("format") == common.FORMAT]

    def key(f: dict[str, Any]) -> tuple:
        name = f["learner"]
        return (list(common.TABLES).index(f["table"]), ORDER.index(name) if name in ORDER else len(ORDER), name)

    return sorted(files, key=key)


def iqm_interval(values: np.ndarray, seed: int) -> tuple[float, float, float]:
    """The interquartile mean of `values` (one per seed) and its 95% stratified bootstrap
    interval, as rliable computes them."""
    from rliable import library as rly
    from rliable import metrics

    scores = {"x": np.asarray(values, float).reshape(-1, 1)}  # runs x tasks (one task)
    with warnings.catch_warnings():  # arch's notice that random_state will go (rliable 1.2 passes it)
        warnings.simplefilter("ignore", FutureWarning)
        point, interval = rly.get_interval_estimates(
            scores, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=REPS,
            random_state=np.random.RandomState(seed))
    return float(point["x"][0]), float(interval["x"][0, 0]), float(interval["x"][1, 0])


def summarise(files: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary of the results files (see the module docstring)."""
    out: dict[str, Any] = {"format": "qwixx_env.learning-summary/1", "reps": REPS, "tables": {}}
    for f in files:
        # the bootstrap's seed names the learner and table, so adding a file changes no other's interval
        base = zlib.crc32(f"{f['learner']}_{f['table']}".encode()) % 2**20 * 1000
        parity = 1 / common.table_options(f["table"]).num_players
        counts = {len(r["points"]) for r in f["runs"]}
        if len(counts) != 1:
            raise ValueError(f"{f['learner']} {f['table']}: its seeds have {sorted(counts)} points; expected the same")
        points = []
        for i in range(counts.pop()):
            at = [r["points"][i] for r in f["runs"]]
            shares = {}
            for k, opponent in enumerate(f["evaluation"]["opponents"]):
                values = np.array([p["win_share"][opponent] for p in at])
                iqm, low, high = iqm_interval(values, seed=base + 10 * i + k)
                shares[opponent] = [round(iqm, 4), round(low, 4), round(high, 4)]
            points.append({"decisions": round(float(np.mean([p["decisions"] for p in at]))),
                           "seconds": round(float(np.mean([p["seconds"] for p in at])), 1), "win_share": shares})
        last = points[-1]["win_share"].get("greedy")
        verdict = None if last is None else ("yes" if last[1] > parity else "no" if last[2] < parity else "not shown")
        out["tables"].setdefault(f["table"], {"parity": parity, "learners": []})["learners"].append({
            "learner": f["learner"], "library": f["library"], "versions": f["versions"], "algorithm": f["algorithm"],
            "trained_against": f["trained_against"], "budget": f["budget"], "seeds": [r["seed"] for r in f["runs"]],
            "deals": f["evaluation"]["deals"], "notes": f["notes"],
            "seconds": round(float(np.mean([r["seconds"] for r in f["runs"]])), 1),
            "ended": [r["points"][-1]["decisions"] for r in f["runs"]],
            "beats_greedy": verdict, "points": points,
            "file": f"{f['learner']}_{f['table']}.json",
        })
    return out


def trend(row: dict[str, Any]) -> str:
    """How its win share against greedy moved over the last stretch between evaluations."""
    before, after = row["points"][-2], row["points"][-1]
    a, b = 100 * before["win_share"]["greedy"][0], 100 * after["win_share"]["greedy"][0]
    way = "still climbing" if b - a >= 2 else "falling" if a - b >= 2 else "about flat"
    return (f"Against `greedy` it went from {a:.1f}% to {b:.1f}% over its last "
            f"{after['decisions'] - before['decisions']:,} decisions ({way}; the interquartile means).")


def _pct(triple: list[float]) -> str:
    iqm, low, high = triple
    return f"{100 * iqm:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def _short(row: dict[str, Any]) -> bool:
    """Whether a run of the row ended before its budget."""
    return min(row["ended"]) < row["budget"]


def render(summary: dict[str, Any]) -> str:
    """docs/results.md from the summary alone."""
    lines = [
        "# Reference learning curves",
        "",
        "What each library's default learner reaches on Qwixx from scratch (no teacher, no behaviour",
        "cloning), so that a run of yours has something to be compared with. Every learner trains for",
        "the same budget of decisions (a decision is one its network chose in training, in any seat it",
        "played, exploration included), three seeds each, and is evaluated at evenly spaced points by",
        "its deterministic policy: it sits beside P-1 copies of `random`, `greedy` and `heuristic` on",
        "the benchmark's deals (`qwixx bench`'s heuristic-lineup dice of the table's protocol, which no",
        "training run draws), every seating of every deal. A figure is the interquartile mean over the",
        "seeds with its 95% stratified bootstrap interval, as [rliable](https://github.com/google-research/rliable)",
        "computes them; with three seeds the interval is wide, and it says so. Parity is 1/P.",
        "",
        "A learner *beats greedy* when the interval of its final win share against `greedy` lies above",
        "parity, and does not when it lies below; otherwise the page says it is not shown. A \"no\" is",
        "within this budget only, and each learner's section says why: whether it was still climbing at",
        "its end, and what its settings give it. None was tuned for Qwixx beyond the defaults its",
        "script names.",
        "",
        "Wall time is training time only (evaluations excluded) on the machine in each results file,",
        "a 2-core CPU shared with other work: compare it within a row, not across machines.",
        "",
        "![Win share over training decisions](images/results.png)",
        "",
    ]
    for table, t in summary["tables"].items():
        lines += [f"## {table} (parity {100 * t['parity']:.1f}%)", "",
                  "| learner | algorithm | trained against | budget | training time | vs random | vs greedy "
                  "| vs heuristic | beats greedy |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for row in t["learners"]:
            final = row["points"][-1]["win_share"]
            short = f" ({len(row['seeds'])} of {len(SEEDS)} seeds)" if set(SEEDS) - set(row["seeds"]) else ""
            cells = [f"[{row['learner']}](../benchmarks/results/learning/{row['file']}){short}", row["algorithm"],
                     row["trained_against"], f"{row['budget']:,}{' (short)' if _short(row) else ''}",
                     f"{row['seconds'] / 60:.1f} min",
                     *(_pct(final[o]) if o in final else "-" for o in common.OPPONENTS), row["beats_greedy"] or "-"]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        for row in t["learners"]:
            lines += [f"### {row['learner']} ({table})", "",
                      f"{row['library']} ({', '.join(f'{k} {v}' for k, v in row['versions'].items())}), "
                      f"{row['algorithm']}; seeds {', '.join(map(str, row['seeds']))}; {row['deals']} deals per "
                      f"opponent at each point. {row['notes'].rstrip('.')}.", "",
                      "| decisions | training time | vs random | vs greedy | vs heuristic |",
                      "|---|---|---|---|---|"]
            for p in row["points"]:
                lines.append(f"| {p['decisions']:,} | {p['seconds'] / 60:.1f} min | "
                             + " | ".join(_pct(p["win_share"][o]) if o in p["win_share"] else "-"
                                          for o in common.OPPONENTS) + " |")
            lines.append("")
            if _short(row):
                ended = ", ".join(f"{n:,}" for n in row["ended"])
                lines += [f"**Short of the budget.** Its runs ended at {ended} decisions, against the budget of "
                          f"{row['budget']:,}. {SHORT.get(row['learner'], '')}".rstrip(), ""]
            if row["beats_greedy"] != "yes":
                why = WHY.get(row["learner"], "")
                lines += [f"**Why it does not beat greedy here.** {trend(row)} {why}".rstrip(), ""]
    missing = [(name, table) for table in common.TABLES for name in ORDER
               if not any(r["learner"] == name for r in summary["tables"].get(table, {}).get("learners", []))]
    unseeded = [(row["learner"], table, sorted(set(SEEDS) - set(row["seeds"])))
                for table, t in summary["tables"].items() for row in t["learners"] if set(SEEDS) - set(row["seeds"])]
    if missing or unseeded:
        lines += ["## Not measured yet", "", "| learner | table | why |", "|---|---|---|"]
        lines += [f"| `{name}` | {table} | {NOT_YET.get(name, 'not run yet')} |" for name, table in missing]
        lines += [f"| `{name}` | {table} | seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}: "
                  f"{SEEDS_NOT_YET.get(name, 'not run yet')} |" for name, table, seeds in unseeded]
        lines.append("")
    lines += ["## How to reproduce", "",
              "One command per learner and table (`--table classic-3p` for the other), each in a venv with its",
              "library's extra: `.venv` (`make test` makes it) for the first three, and for the others the venv",
              "`KEEP=1 make test-integrations NAMES=<library>` leaves in `build/venv-<library>`. Each merges its",
              "seeds into its results file; the last command makes this page, its summary and its plot.", "",
              "```bash",
              ".venv/bin/python benchmarks/learning/sb3_ppo.py --table classic-2p --seeds 0 1 2",
              ".venv/bin/python benchmarks/learning/rllib_ppo.py --table classic-2p --seeds 0 1 2",
              ".venv/bin/python benchmarks/learning/selfplay_td.py --table classic-2p --seeds 0 1 2",
              "build/venv-pufferlib/bin/python benchmarks/learning/pufferlib_ppo.py --table classic-2p --seeds 0 1 2",
              "build/venv-agilerl/bin/python benchmarks/learning/agilerl_dqn.py --table classic-2p --seeds 0 1 2",
              "build/venv-tianshou/bin/python benchmarks/learning/tianshou_dqn.py --table classic-2p --seeds 0 1 2",
              "build/venv-benchmarl/bin/python benchmarks/learning/benchmarl_ippo.py --table classic-2p --seeds 0 1 2",
              "build/venv-benchmarl/bin/python benchmarks/learning/benchmarl_mappo.py --table classic-2p --seeds 0 1 2",
              "build/venv-benchmarl/bin/python benchmarks/learning/benchmarl_qmix.py --table classic-2p --seeds 0 1 2",
              ".venv/bin/python benchmarks/learning/report.py",
              "```", "",
              "Each takes `--quick` for a tiny run that writes nothing, and `--help`.", ""]
    return "\n".join(lines)


def plot(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = list(summary["tables"])
    # a learner keeps its colour in every panel and on every page (its place in ORDER), and the
    # figure has one legend of every learner shown
    shown = {row["learner"] for t in summary["tables"].values() for row in t["learners"]}
    names = list(ORDER) + sorted(shown - set(ORDER))
    colour = {name: f"C{i % 10}" for i, name in enumerate(names)}
    lines = {}
    fig, axes = plt.subplots(len(tables), len(common.OPPONENTS), figsize=(4.2 * len(common.OPPONENTS),
                                                                          3.4 * max(1, len(tables))), squeeze=False)
    for r, table in enumerate(tables):
        t = summary["tables"][table]
        for c, opponent in enumerate(common.OPPONENTS):
            ax = axes[r][c]
            for row in t["learners"]:
                xs = [p["decisions"] for p in row["points"]]
                ys = np.array([p["win_share"][opponent] for p in row["points"]])
                name = row["learner"]
                (lines[name],) = ax.plot(xs, 100 * ys[:, 0], marker="o", ms=3, color=colour[name], label=name)
                ax.fill_between(xs, 100 * ys[:, 1], 100 * ys[:, 2], color=colour[name], alpha=0.15)
            ax.axhline(100 * t["parity"], color="grey", lw=0.8, ls="--")
            ax.set_title(f"{table}: vs {opponent}", fontsize=10)
            ax.set_xlabel("training decisions")
            ax.set_ylabel("win share (%)")
            ax.set_ylim(0, 100)
    order = [name for name in names if name in lines]
    fig.legend([lines[name] for name in order], order, loc="lower center", ncol=min(len(order), 5), fontsize=8)
    legend_inches = 0.15 + 0.22 * math.ceil(len(order) / 5)
    fig.tight_layout(rect=(0, legend_inches / fig.get_figheight(), 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the page is what the files say")
    args = parser.parse_args(argv)
    summary = summarise(runs())
    page = render(summary)
    if args.check:
        ok = PAGE.is_file() and PAGE.read_text() == page and json.loads(SUMMARY.read_text()) == summary
        print("docs/results.md is up to date" if ok else "docs/results.md differs from the results: rerun report.py")
        return 0 if ok else 1
    write_atomically(SUMMARY, (json.dumps(summary, indent=1) + "\n").encode())
    write_atomically(PAGE, page.encode())
    plot(summary, PLOT)
    print(f"wrote {SUMMARY.relative_to(ROOT)}, {PAGE.relative_to(ROOT)}, {PLOT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
