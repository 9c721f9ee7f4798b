"""What a new user waits for: the first game after install, with an empty kernel cache.

Each entry point a newcomer meets first runs in a fresh Python process, twice: first with an
empty kernel cache (``QWIXX_ENV_CACHE`` set to a new temporary directory, ``NUMBA_CACHE_DIR``
unset), so numba compiles every kernel it needs; then again with the cache that run left
(warm). The entry points:

* ``aec``        ``qwixx_v0.env(num_players=2)``, ``reset(seed=0)``, one game of first-legal
                 actions in the ``agent_iter`` loop (the README's first snippet)
* ``batched``    ``BatchedQwixx(16)``, ``reset(seed=0)``, 100 steps of first-legal actions
* ``vector``     ``QwixxVectorEnv(16, opponents="greedy")``, ``reset(seed=0)``, 100 steps
* ``gymnasium``  ``gymnasium.make("qwixx_env/Qwixx-v0")``, ``reset(seed=0)``, one episode
* ``bot``        ``bots.make("heuristic")`` playing both seats of one AEC game

For each run: the wall time of the whole process, its CPU time (user + system, from the
operating system's record of the child, so interpreter start-up and imports are in it), the
import time, and, from numba's compile events (``numba.core.event``), every kernel compiled:
its own CPU time (the time of the kernels it calls, compiled inside it, taken out) and wall
time. The first table compares the entry points; the second lists where the AEC entry point's
compile time goes. The machine may be shared: the load average at the start is recorded.

Run: ``python benchmarks/cold_start.py [--only aec,bot] [--json PATH]`` (default JSON:
``benchmarks/results/cold_start.json``). Needs the ``bench`` extra (rich).
"""

from __future__ import annotations

import argparse
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
from rich.console import Console
from rich.table import Table

RESULTS = Path(__file__).resolve().parent / "results" / "cold_start.json"

# The snippets, as a user would type them; `first_legal` is defined by the child preamble.
SCENARIOS = {
    "aec": """
from qwixx_env import qwixx_v0
env = qwixx_v0.env(num_players=2)
env.reset(seed=0)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    env.step(None if termination or truncation else first_legal(obs["action_mask"]))
""",
    "batched": """
from qwixx_env import BatchedQwixx
engine = BatchedQwixx(16)
obs, masks = engine.reset(seed=0)
for _ in range(100):
    obs, masks, rewards, done = engine.step(masks.argmax(axis=1))
""",
    "vector": """
from qwixx_env import QwixxVectorEnv
envs = QwixxVectorEnv(16, opponents="greedy")
obs, info = envs.reset(seed=0)
for _ in range(100):
    obs, rewards, terminated, truncated, info = envs.step(obs["action_mask"].argmax(axis=1))
""",
    "gymnasium": """
import gymnasium
import qwixx_env
env = gymnasium.make("qwixx_env/Qwixx-v0")
obs, info = env.reset(seed=0)
done = False
while not done:
    obs, reward, terminated, truncated, info = env.step(first_legal(obs["action_mask"]))
    done = terminated or truncated
""",
    "bot": """
from qwixx_env import bots, qwixx_v0
bot = bots.make("heuristic")
env = qwixx_v0.env(num_players=2)
env.reset(seed=0)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    env.step(None if termination or truncation else bot.act(obs))
""",
}

# Runs in the child before the snippet: records numba's compile events and the import time.
CHILD = """
import json, sys, time
_t0 = time.perf_counter()
from numba.core import event

_compiles, _open = [], []

class _Listener(event.Listener):
    def on_start(self, ev):
        _open.append([time.perf_counter(), time.process_time(), 0.0])
    def on_end(self, ev):
        wall0, cpu0, nested = _open.pop()
        cpu = time.process_time() - cpu0
        if _open:
            _open[-1][2] += cpu
        fn = ev.data["dispatcher"].py_func
        _compiles.append({
            "kernel": f"{fn.__module__}.{fn.__qualname__}",
            "args": str(ev.data["args"]),
            "depth": len(_open),
            "cpu_s": cpu - nested,
            "cpu_inclusive_s": cpu,
            "wall_inclusive_s": time.perf_counter() - wall0,
        })

event.register("numba:compile", _Listener())

def first_legal(mask):
    return int(mask.argmax())

import qwixx_env
_t1 = time.perf_counter()
exec(compile(sys.argv[1], "<snippet>", "exec"))
_t2 = time.perf_counter()
print(json.dumps({"import_s": _t1 - _t0, "snippet_s": _t2 - _t1, "compiles": _compiles}))
"""


def run_child(snippet: str, cache: Path) -> dict:
    """Run `snippet` in a fresh interpreter with the kernel cache at `cache`; its figures."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["QWIXX_ENV_CACHE"] = str(cache)
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, snippet], env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    out, err = child.communicate()
    wall = time.perf_counter() - start
    usage = child_rusage(child)
    if child.returncode != 0:
        raise RuntimeError(f"the child failed (exit {child.returncode}):\n{err}")
    figures = json.loads(out.strip().splitlines()[-1])
    compiles = figures.pop("compiles")
    return {
        "wall_s": wall,
        "cpu_s": usage,
        **figures,
        "kernels_compiled": len(compiles),
        "compile_cpu_s": sum(c["cpu_s"] for c in compiles),
        "stderr": err.strip().splitlines(),
        "compiles": compiles,
    }


_USAGE_BEFORE: list[float] = [0.0]


def child_rusage(child: subprocess.Popen) -> float:
    """User + system CPU seconds of the child just reaped (the children's total grows by it)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    used, _USAGE_BEFORE[0] = total - _USAGE_BEFORE[0], total
    return used


def measure(names: list[str]) -> dict:
    """Every scenario of `names`: a cold run on a new empty cache, then a warm run on it."""
    results = {}
    for name in names:
        with tempfile.TemporaryDirectory(prefix="qwixx_cold_") as tmp:
            cold = run_child(SCENARIOS[name], Path(tmp))
            warm = run_child(SCENARIOS[name], Path(tmp))
        results[name] = {"snippet": SCENARIOS[name].strip(), "cold": cold, "warm": warm}
        print(f"{name}: cold {cold['wall_s']:.1f} s wall, {cold['cpu_s']:.1f} s CPU; "
              f"warm {warm['wall_s']:.1f} s wall, {warm['cpu_s']:.1f} s CPU", flush=True)
    return results


def show(results: dict) -> None:
    table = Table(title="First run of each entry point, fresh process (cold: empty kernel cache)")
    for col in ("entry point", "cache", "wall s", "CPU s", "import s", "kernels compiled", "compile CPU s"):
        table.add_column(col, justify="left" if col in ("entry point", "cache") else "right")
    for name, r in results.items():
        for cache in ("cold", "warm"):
            x = r[cache]
            table.add_row(name, cache, f"{x['wall_s']:.1f}", f"{x['cpu_s']:.1f}", f"{x['import_s']:.1f}",
                          str(x["kernels_compiled"]), f"{x['compile_cpu_s']:.1f}")
    console = Console()
    console.print(table)
    if "aec" in results:
        kernels = Table(title="aec, cold: every kernel compiled (own CPU: its callees' compiles taken out)")
        for col in ("kernel", "args", "depth", "own CPU s", "wall s (with callees)"):
            kernels.add_column(col, no_wrap=True, justify="left" if col in ("kernel", "args") else "right")
        for c in sorted(results["aec"]["cold"]["compiles"], key=lambda c: -c["cpu_s"]):
            kernels.add_row(c["kernel"].removeprefix("qwixx_env."), c["args"][:24], str(c["depth"]),
                            f"{c['cpu_s']:.2f}", f"{c['wall_inclusive_s']:.2f}")
        console.print(kernels)


def machine() -> dict:
    return {
        "python": platform.python_version(),
        "numba": numba.__version__,
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average_at_start": list(os.getloadavg()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(SCENARIOS),
                        help=f"comma-separated entry points (default all: {','.join(SCENARIOS)})")
    parser.add_argument("--json", type=Path, default=RESULTS, metavar="PATH",
                        help="where to write the figures (default benchmarks/results/cold_start.json)")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        parser.error(f"--only: got {unknown}; expected names from {list(SCENARIOS)}")
    info = machine()
    results = measure(names)
    show(results)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"benchmark": "cold_start", "machine": info, "entry_points": results},
                                    indent=2) + "\n")
    print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
