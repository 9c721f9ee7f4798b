"""What a newcomer's first use costs in CPU time, with nothing compiled yet.

Each measurement runs in a fresh process with an empty kernel cache (``QWIXX_ENV_CACHE`` set to
a new temporary folder, ``NUMBA_CACHE_DIR`` unset), so numba compiles every kernel it needs
(`qwixx_env.core.compile`); for the arena, a second run on the cache the first one left gives
the cached cost beside it. The measurements:

* ``game``     one game of random legal actions through ``qwixx_v0.env()`` (the README's first
               snippet)
* ``arena``    ``qwixx arena greedy heuristic --games 50 --quiet`` (the console script, with
               its worker processes: all cores)
* ``serve:B``  what ``qwixx serve`` prepares before a first game against bot B can start
               (`qwixx_env.play.prepare`: the game's kernels, then B's, and for solo_optimal the
               solo table, solved from nothing); each part's CPU seconds are kept too

The figure is CPU seconds: user + system time of the process and of its children (the arena's
workers), from the operating system's record of the reaped children, so interpreter start-up
and imports are in it. Other work on a shared machine changes the wall time a lot and the CPU
time little; the load average (1 minute) before and after each measurement is recorded beside
it. Each measurement is repeated ``--repeats`` times, each time on a new empty cache.

``--package DIR`` measures the qwixx_env of another checkout (put first on the children's
``PYTHONPATH``), e.g. the code before a change: ``git worktree add /tmp/before HEAD~1``, then
``python benchmarks/first_use.py --package /tmp/before --label before``. The JSON keeps one
entry per ``--label`` (default ``after``), so a before and an after sit side by side; the table
compares every label the file holds.

Run: ``python benchmarks/first_use.py [--only game,arena,serve] [--repeats 2] [--label NAME]
[--package DIR] [--json PATH]`` (default JSON: ``benchmarks/results/first_use.json``). Needs the
play extra for the serve measurements.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba

RESULTS = Path(__file__).resolve().parent / "results" / "first_use.json"
ARENA = ["arena", "greedy", "heuristic", "--games", "50", "--quiet"]

GAME = """
import numpy as np
from qwixx_env import qwixx_v0
rng = np.random.default_rng(0)
env = qwixx_v0.env()
env.reset(seed=0)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
"""

# What the play server prepares before a first game against bot sys.argv[1], part by part
# (needs_of_game reads only the game's bots); prints each part's CPU seconds as JSON.
SERVE = """
import json, sys, time
from types import SimpleNamespace
from qwixx_env.play.games import bot_catalogue
from qwixx_env.play.prepare import default_tasks, needs_of_game
tasks = {task.name: task for task in default_tasks(bot_catalogue())}
parts = {}
for name in needs_of_game(SimpleNamespace(bots=[sys.argv[1]])):
    start = time.process_time()
    tasks[name].run(lambda done: None)
    parts[name] = time.process_time() - start
print(json.dumps(parts))
"""


def serve_bots(package: Path | None) -> list[str]:
    """The bots the play page offers (its catalogue), read in a child: from `package` too."""
    code = ("import json; from qwixx_env.play.games import bot_catalogue; "
            "print(json.dumps([e['name'] for e in bot_catalogue()]))")
    done = subprocess.run([sys.executable, "-c", code], env=child_env(None, package), cwd=package, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def child_env(cache: Path | None, package: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if cache is not None:
        env["QWIXX_ENV_CACHE"] = str(cache)
    if package is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(package), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def commit(checkout: Path) -> str:
    """The commit `checkout` is at (with ``+changes`` where its files differ from it)."""
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    changed = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no", "qwixx_env"],
                             capture_output=True, text=True)
    return head.stdout.strip() + ("+changes" if changed.stdout.strip() else "")


def command(name: str) -> list[str]:
    """The child's command line for measurement `name`."""
    if name == "game":
        return [sys.executable, "-c", GAME]
    if name == "arena":
        script = Path(sys.executable).with_name("qwixx")  # the console script a user types
        return [str(script), *ARENA] if script.exists() else [sys.executable, "-m", "qwixx_env.cli", *ARENA]
    return [sys.executable, "-c", SERVE, name.removeprefix("serve:")]


_CHILDREN_CPU = [0.0]


def children_cpu() -> float:
    """User + system CPU seconds of the children reaped since the last call (their children too,
    once reaped: the arena's pool joins its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    used, _CHILDREN_CPU[0] = total - _CHILDREN_CPU[0], total
    return used


def run(name: str, cache: Path, package: Path | None) -> dict:
    """One run of measurement `name` with the kernel cache at `cache`."""
    load = os.getloadavg()[0]
    children_cpu()
    start = time.perf_counter()
    # In the checkout's folder: ``python -c`` puts the working folder first on sys.path
    done = subprocess.run(command(name), env=child_env(cache, package), cwd=package, capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu = children_cpu()
    if done.returncode != 0:
        raise RuntimeError(f"{name}: the child failed (exit {done.returncode}):\n{done.stderr}")
    out = {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "load_before": round(load, 2),
           "load_after": round(os.getloadavg()[0], 2), "kernels_cached": len(list(cache.rglob("*.nbi"))),
           "stderr": done.stderr.strip().splitlines()[:5]}
    if name.startswith("serve:"):
        out["parts_cpu_s"] = {k: round(v, 2) for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}
    return out


def measure(names: list[str], repeats: int, package: Path | None) -> dict:
    results: dict = {}
    for name in names:
        runs = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="qwixx_first_use_") as tmp:
                first = run(name, Path(tmp), package)
                if name == "arena":
                    first["cached"] = run(name, Path(tmp), package)
            runs.append(first)
            print(f"{name}: {first['cpu_s']:.1f} s CPU, {first['wall_s']:.1f} s wall "
                  f"(load {first['load_before']:.2f})", flush=True)
        results[name] = {"command": command(name)[-1] if name != "arena" else "qwixx " + " ".join(ARENA),
                         "runs": runs}
    return results


def show(labels: dict) -> None:
    """A table: each measurement's CPU seconds per run, for every label in the file."""
    names = list(dict.fromkeys(n for entry in labels.values() for n in entry["results"]))
    heads = list(labels)
    print("\nCPU seconds (user + system, children included) on an empty kernel cache; [1-minute load before]")
    print(f"{'':<28}" + "".join(f"{label:>34}" for label in heads))
    for name in names:
        cells = []
        for label in heads:
            runs = labels[label]["results"].get(name, {}).get("runs", [])
            cells.append(", ".join(f"{r['cpu_s']:.1f} [{r['load_before']:.2f}]" for r in runs) or "-")
        print(f"{name:<28}" + "".join(f"{cell:>34}" for cell in cells))
    for label in heads:
        arena = labels[label]["results"].get("arena")
        if arena:
            cached = ", ".join(f"{r['cached']['cpu_s']:.1f}" for r in arena["runs"])
            print(f"arena, cached afterwards ({label}): {cached} s CPU")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", default="game,arena,serve",
                        help="comma-separated: game, arena, serve (every bot offered) or serve:BOT (default all)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each measurement, each on a new cache")
    parser.add_argument("--label", default="after", help="the name these figures are kept under (default after)")
    parser.add_argument("--package", type=Path, default=None, metavar="DIR",
                        help="measure the qwixx_env of this checkout instead of the installed one")
    parser.add_argument("--json", type=Path, default=RESULTS, metavar="PATH",
                        help="where the figures are kept (default benchmarks/results/first_use.json)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats: got {args.repeats}; expected an integer >= 1")
    if args.package is not None and not (args.package / "qwixx_env" / "__init__.py").is_file():
        parser.error(f"--package: got {str(args.package)!r}; expected a checkout holding qwixx_env/")
    names = []
    for name in filter(None, args.only.split(",")):
        if name == "serve":
            names += [f"serve:{bot}" for bot in serve_bots(args.package)]
        elif name in ("game", "arena") or name.startswith("serve:"):
            names.append(name)
        else:
            parser.error(f"--only: got {name!r}; expected game, arena, serve or serve:BOT")
    labels = json.loads(args.json.read_text())["labels"] if args.json.exists() else {}
    started = os.getloadavg()
    results = measure(names, args.repeats, args.package)
    entry = labels.setdefault(args.label, {"results": {}})
    entry["results"].update(results)
    entry.update(
        date=datetime.date.today().isoformat(),
        commit=commit(args.package or Path(__file__).resolve().parent.parent),
        machine={"python": platform.python_version(), "numba": numba.__version__, "machine": platform.machine(),
                 "cpu_count": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in started]},
    )
    show(labels)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"benchmark": "first_use", "labels": labels}, indent=1) + "\n")
    print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
