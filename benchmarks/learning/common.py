"""What every reference learning curve shares (docs/results.md): the tables, the budget, the
evaluation and the results file.

A learner script (``benchmarks/learning/<name>.py``) trains one library's algorithm from
scratch, no teacher, for `BUDGET` decisions, and at `checkpoints` hands `Curve.point` its
deterministic policy. The evaluation seats that policy beside P-1 copies of each of
`OPPONENTS` on the benchmark's deals (``qwixx bench``'s heuristic-lineup dice of the table's
protocol, which no training run draws), every seating of every deal, and records its win share.
`write` merges the seeds into ``benchmarks/results/learning/<learner>_<table>.json``, from
which ``benchmarks/learning/report.py`` makes the page.

A decision is one the learning network chose in training (every seat it played, exploration
included); a library that counts frames or steps otherwise is converted by its script.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env import benchmark
from qwixx_env.arena import run_arena
from qwixx_env.bots.specs import BotSpec
from qwixx_env.core import TableOptions
from qwixx_env.files import write_atomically

FORMAT = "qwixx_env.learning/1"
TABLES = {"classic-2p": "classic-2p/v1", "classic-3p": "classic-3p/v1"}
"""The two tables every learner is measured on, and the benchmark protocol whose deals evaluate it."""
OPPONENTS = ("random", "greedy", "heuristic")
BUDGET = 200_000
"""Decisions each run trains for (`arguments`' default)."""
POINTS = 6
"""Evaluation points per run, evenly spaced from 0 to the budget."""
DEALS = 100
"""Deals per opponent at each point (each played in all P seatings)."""
RESULTS = Path(__file__).resolve().parents[1] / "results" / "learning"

Act = Callable[[dict[str, np.ndarray]], int]


def arguments(learner: str, description: str, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line every learner script takes (``--help`` lists it)."""
    parser = argparse.ArgumentParser(prog=f"benchmarks/learning/{learner}", description=description)
    parser.add_argument("--table", choices=sorted(TABLES), default="classic-2p")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--decisions", type=int, default=BUDGET, help=f"the training budget (default {BUDGET:,})")
    parser.add_argument("--points", type=int, default=POINTS, help="evaluation points, 0 and the budget included")
    parser.add_argument("--deals", type=int, default=DEALS, help="deals per opponent at each point")
    parser.add_argument("--quick", action="store_true",
                        help="a tiny run (2,000 decisions, 3 points, 4 deals) that writes nothing")
    args = parser.parse_args(argv)
    if args.quick:
        args.decisions, args.points, args.deals = 2_000, 3, 4
    if args.decisions < 1 or args.points < 2 or args.deals < 1:
        parser.error(f"--decisions {args.decisions}, --points {args.points}, --deals {args.deals}: expected "
                     "decisions >= 1, points >= 2, deals >= 1")
    return args


def table_options(table: str) -> TableOptions:
    """The `TableOptions` of one of `TABLES` (the protocol's table: win/loss reward)."""
    if table not in TABLES:
        raise ValueError(f"table: got {table!r}; expected one of {sorted(TABLES)}")
    return benchmark.protocol(TABLES[table]).table


def checkpoints(budget: int, points: int) -> list[int]:
    """The decision counts to evaluate at: `points` of them, evenly spaced, 0 and `budget` included."""
    return sorted({round(budget * i / (points - 1)) for i in range(points)})


def evaluate(act: Act, table: str, deals: int = DEALS, label: str = "learner") -> dict[str, float]:
    """`act`'s win share against each of `OPPONENTS` (P-1 copies beside it, every seating of
    each of the protocol's first `deals` deals; shared wins count as fractions)."""
    proto = benchmark.protocol(TABLES[table])
    spec = BotSpec(label=label, factory=lambda *, table, seed=None: benchmark.CallableBot(act, label))
    out = {}
    for opponent in OPPONENTS:
        result = run_arena([spec, *[opponent] * (proto.players - 1)], num_players=proto.players,
                           variant=proto.table.variant, lucky=proto.table.lucky, games=deals,
                           seed=proto.seed("heuristic"), workers=1)
        out[opponent] = round(float(result.bots[0]["win_rate"]), 5)
    return out


@dataclass
class Curve:
    """One seed's run: its evaluation points, timed on a clock that stops while it evaluates."""

    learner: str
    library: str
    algorithm: str
    table: str
    seed: int
    trained_against: str
    deals: int = DEALS
    points: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    evaluating: float = 0.0

    def training_seconds(self) -> float:
        return time.perf_counter() - self.started - self.evaluating

    def point(self, decisions: int, act: Act) -> dict[str, Any]:
        """Evaluate `act` after `decisions` training decisions; print and keep the point. The
        clock starts at the point of 0 decisions (the initial weights): set-up before it is not
        training."""
        if decisions == 0:
            self.started, self.evaluating = time.perf_counter(), 0.0
        seconds = self.training_seconds()
        tick = time.perf_counter()
        shares = evaluate(act, self.table, self.deals)
        self.evaluating += time.perf_counter() - tick
        row = {"decisions": int(decisions), "seconds": round(seconds, 1), "win_share": shares}
        self.points.append(row)
        said = "  ".join(f"{o} {100 * s:5.1f}%" for o, s in shares.items())
        print(f"[{self.learner} {self.table} seed {self.seed}] {decisions:>9,} decisions {seconds:7.0f} s  {said}",
              flush=True)
        return row

    def as_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "seconds": round(self.training_seconds(), 1),
                "evaluation_seconds": round(self.evaluating, 1), "points": self.points}


def machine() -> dict[str, Any]:
    return {"cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}


def write(curves: Sequence[Curve], *, budget: int, notes: str, versions: dict[str, str]) -> Path:
    """Merge `curves` (one learner and table) into its results file, a seed replacing the same
    seed's earlier run; written atomically. Returns the path."""
    first = curves[0]
    if any((c.learner, c.table) != (first.learner, first.table) for c in curves):
        raise ValueError("write: curves of one learner and table at a time")
    path = RESULTS / f"{first.learner}_{first.table}.json"
    old = json.loads(path.read_text()) if path.is_file() else {}
    if old and old.get("budget") != budget:
        raise ValueError(f"{path}: holds runs of a {old.get('budget'):,}-decision budget; this one is {budget:,}")
    runs = {r["seed"]: r for r in old.get("runs", [])}
    runs.update({c.seed: c.as_dict() for c in curves})
    out = {
        "format": FORMAT,
        "learner": first.learner,
        "library": first.library,
        "versions": versions,
        "algorithm": first.algorithm,
        "trained_against": first.trained_against,
        "table": first.table,
        "protocol": TABLES[first.table],
        "budget": budget,
        "evaluation": {"opponents": list(OPPONENTS), "deals": first.deals,
                       "first_seed": benchmark.protocol(TABLES[first.table]).seed("heuristic"),
                       "policy": "deterministic (the most likely legal action)"},
        "notes": notes,
        "machine": machine(),
        "runs": [runs[s] for s in sorted(runs)],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, (json.dumps(out, indent=1) + "\n").encode())
    return path


def versions(*names: str) -> dict[str, str]:
    """The installed versions of `names` (distribution names), for the results file."""
    from importlib import metadata

    return {n: metadata.version(n) for n in names}
