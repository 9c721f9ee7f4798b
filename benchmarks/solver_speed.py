"""The exact solo solver's figures: solve time, peak memory, table size, load time, and the
optimal bot's mean score over simulated solo games through the real AEC environment.

Steps, each in fresh processes so that nothing is shared with this one:

1. **Solve from nothing**: a child process solves classic Qwixx into an empty cache directory
   and reports the solve time, the wall time of the whole process, and its peak resident
   memory. Run twice: once with numba's compiled kernels cached (``solve``), once with an
   empty numba cache (``cold``: the compile time is included, as on a fresh clone).
2. **Load**: a child process loads the saved table (`ValueTable.load`), and reports the time.
3. **Simulate**: ``--games`` solo games (seeds 0, 1, ...) with ``solo_optimal`` through
   ``qwixx_v0.env(num_players=1)``, split over ``--workers`` processes; the mean final score
   must lie within 3 standard errors of the table's root value (the exit status says whether
   it does). Then ``--bot-games`` games with each ``--bot`` (default: ``random``) for its
   regret: the optimum minus its mean solo score.

Run: ``python benchmarks/solver_speed.py [--games 100000] [--bot random --bot NAME ...]
[--bot-games 20000] [--workers 2] [--json PATH]``. A progress bar shows when `rich` is installed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from qwixx_env.files import write_atomically

CHUNK = 500  # games per work item of the simulation

SOLVE_CHILD = """
import json, resource, sys, time
start = time.perf_counter()
from qwixx_env.solver import load_table, table_path
imported = time.perf_counter() - start
table = load_table("classic", directory=sys.argv[1])
path = table_path(table.variant, sys.argv[1])
print(json.dumps({
    "root": table.root,
    "solve_s": table.solve_seconds,
    "import_s": imported,
    "process_s": time.perf_counter() - start,
    "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "table_path": str(path),
    "table_mib": path.stat().st_size / 2**20,
}))
"""

LOAD_CHILD = """
import json, sys, time
from qwixx_env.solver import ValueTable
start = time.perf_counter()
table = ValueTable.load(sys.argv[1])
print(json.dumps({"load_s": time.perf_counter() - start, "root": table.root}))
"""


def child(code: str, *args: str, env: dict[str, str] | None = None) -> dict:
    """Run `code` in a fresh Python; return the JSON it prints last."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, **(env or {})},
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- simulation workers ----------------------------------------------------------------------

_worker: dict = {}


def _init_worker(cache: str, bot: str) -> None:
    os.environ["QWIXX_ENV_CACHE"] = cache
    from qwixx_env import bots, qwixx_v0

    _worker["env"] = qwixx_v0.env(num_players=1)
    _worker["make"] = lambda seed: bots.make(bot, num_players=1, seed=seed)


def _play(seeds: tuple[int, int]) -> np.ndarray:
    """Final scores of the solo games with these seeds (the bot is seeded with the first)."""
    env = _worker["env"]
    bot = _worker["make"](seeds[0])
    scores = []
    for seed in range(*seeds):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            env.step(None if term or trunc else bot.act(obs))
        scores.append(reward)  # solo "score" reward: the final score
    return np.array(scores, np.int64)


def simulate(bot: str, games: int, workers: int, cache: str, first_seed: int = 0) -> dict:
    """Play `games` solo games with `bot` over `workers` processes; mean, standard error, time."""
    items = [(s, min(s + CHUNK, first_seed + games)) for s in range(first_seed, first_seed + games, CHUNK)]
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that ran numba threads
    start = time.perf_counter()
    results = []
    with ctx.Pool(workers, initializer=_init_worker, initargs=(cache, bot)) as pool:
        stream = pool.imap_unordered(_play, items)
        try:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
        except ImportError:
            results = list(stream)
        else:
            columns = (
                TextColumn(f"{bot:>12}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("games"),
                TimeRemainingColumn(),
            )
            with Progress(*columns, transient=True) as bar:
                task = bar.add_task(bot, total=games)
                for scores in stream:
                    results.append(scores)
                    bar.advance(task, len(scores))
    scores = np.concatenate(results)
    return {
        "bot": bot,
        "games": int(scores.size),
        "mean": float(scores.mean()),
        "sd": float(scores.std(ddof=1)),
        "se": float(scores.std(ddof=1) / np.sqrt(scores.size)),
        "min": int(scores.min()),
        "max": int(scores.max()),
        "seconds": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--games", type=int, default=100_000, help="solo games with solo_optimal (default 100000)"
    )
    parser.add_argument(
        "--bot",
        action="append",
        default=None,
        help="a bot whose regret to measure (repeatable; default: random)",
    )
    parser.add_argument("--bot-games", type=int, default=20_000, help="solo games per --bot (default 20000)")
    parser.add_argument("--workers", type=int, default=2, help="simulation processes (default 2)")
    parser.add_argument("--skip-cold", action="store_true", help="skip the solve with an empty numba cache")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    from qwixx_env import bots

    for bot in args.bot or []:  # before the solve, not after it
        if bot not in bots.available():
            parser.error(f"--bot: got {bot!r}; expected one of {bots.available()}")

    report: dict = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load_average_at_start": os.getloadavg(),
        "numba_threads": int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count() or 1)),
    }
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as numba_cache:
        if not args.skip_cold:
            print("solving from nothing with an empty numba cache (compile included) ...", flush=True)
            report["cold"] = child(
                SOLVE_CHILD, str(Path(cache) / "cold"), env={"NUMBA_CACHE_DIR": numba_cache}
            )
            print(f"  {report['cold']}", flush=True)
        print("solving from nothing (numba kernels cached) ...", flush=True)
        report["solve"] = child(SOLVE_CHILD, cache)
        print(f"  {report['solve']}", flush=True)
        report["load"] = child(LOAD_CHILD, report["solve"]["table_path"])
        print(f"  {report['load']}", flush=True)
        root = report["solve"]["root"]
        runs = [("solo_optimal", args.games)] + [(bot, args.bot_games) for bot in args.bot or ["random"]]
        report["simulations"] = [simulate(bot, n, args.workers, cache) for bot, n in runs if n > 0]
    for sim in report["simulations"]:
        sim["regret"] = root - sim["mean"]
        sim["z"] = (sim["mean"] - root) / sim["se"]
    report["load_average_at_end"] = os.getloadavg()

    _print(report)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        write_atomically(args.json, json.dumps(report, indent=2).encode())
    optimal = [s for s in report["simulations"] if s["bot"] == "solo_optimal"]
    return 0 if all(abs(s["z"]) < 3 for s in optimal) else 1


def _print(report: dict) -> None:
    solve, load = report["solve"], report["load"]
    lines = [
        ("optimal expected solo score", f"{solve['root']:.4f}"),
        ("solve (kernels cached)", f"{solve['solve_s']:.1f} s; whole process {solve['process_s']:.1f} s"),
    ]
    if "cold" in report:
        lines.append(
            (
                "solve (empty numba cache)",
                f"{report['cold']['solve_s']:.1f} s; whole process {report['cold']['process_s']:.1f} s",
            )
        )
    lines += [
        ("peak memory (solve process)", f"{solve['peak_rss_mib']:.0f} MiB"),
        ("table on disk", f"{solve['table_mib']:.1f} MiB"),
        ("table load", f"{load['load_s']:.3f} s"),
    ]
    for sim in report["simulations"]:
        lines.append(
            (
                f"{sim['bot']} ({sim['games']:,} games)",
                f"mean {sim['mean']:.4f} ± {sim['se']:.4f} (s.e.), regret {sim['regret']:.4f}, "
                f"z {sim['z']:+.2f}, {sim['seconds']:.0f} s",
            )
        )
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        for name, value in lines:
            print(f"{name:32} {value}")
        return
    table = Table(title=f"solo solver, {report['when']} ({report['machine']})")
    table.add_column("figure")
    table.add_column("value")
    for name, value in lines:
        table.add_row(name, value)
    Console().print(table)


if __name__ == "__main__":
    sys.exit(main())
