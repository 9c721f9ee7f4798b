"""The leaderboard: every scripted bot, every shipped checkpoint and every shipped self-play
network (`selfplay-*`) on the benchmark.

    python benchmarks/leaderboard.py run [AGENT ...] [--workers 2]   # benchmark them (default: all)
    python benchmarks/leaderboard.py page                             # docs/leaderboard.md from the JSON

`run` plays `qwixx_env.benchmark.run_all` for each agent (every protocol it plays) and writes
``benchmarks/results/leaderboard/AGENT.json``; an agent whose file already holds the current
protocols is skipped unless ``--force``. `page` writes docs/leaderboard.md from those files
alone (`qwixx_env.benchmark.leaderboard_markdown`), so the page always says what the JSON says.
`rollout` is not an agent here: in every seat of 4,000-odd games a table it would take hours.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from qwixx_env import benchmark
from qwixx_env.bots import selfplay
from qwixx_env.files import write_atomically
from qwixx_env.nets import checkpoint_names

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "leaderboard"
PAGE = ROOT / "docs" / "leaderboard.md"
SCRIPTED = ("random", "greedy", "heuristic", "afterstate", "solo_optimal")


def default_agents() -> list[str]:
    return [*SCRIPTED, *checkpoint_names(), *selfplay.shipped()]


def run(agents: list[str], workers: int, force: bool) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    for agent in agents:
        path = RESULTS / f"{agent}.json"
        if path.exists() and not force:
            done = json.loads(path.read_text())
            if all(r["complete"] and r["protocol"] in benchmark.PROTOCOLS for r in done["results"]):
                print(f"{agent}: {path.name} holds it already (--force to run it again)", flush=True)
                continue
        started = time.perf_counter()
        print(f"{agent}: benchmarking", flush=True)
        record = benchmark.run_all(agent, workers=workers, progress=_progress(agent))
        write_atomically(path, (json.dumps(record, indent=1, allow_nan=False) + "\n").encode())
        print(f"{agent}: {len(record['results'])} tables in {time.perf_counter() - started:.0f} s -> {path}",
              flush=True)


def _progress(agent: str) -> Callable[[str, str, int, int], None]:
    """A line in the log as each protocol's lineup starts."""
    shown: set[tuple[str, str]] = set()

    def progress(proto: str, lineup: str, done: int, total: int) -> None:
        if (proto, lineup) not in shown:
            shown.add((proto, lineup))
            print(f"  {agent} {proto} {lineup}: {total:,} table games", flush=True)

    return progress


def page() -> None:
    records = [json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))]
    write_atomically(PAGE, benchmark.leaderboard_markdown(records).encode())
    print(f"wrote {PAGE} from {len(records)} agents' results")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="benchmark agents and write their JSON")
    r.add_argument("agents", nargs="*",
                   help="bot specs or checkpoint names (default: every scripted bot and checkpoint)")
    r.add_argument("--workers", type=int, default=2)
    r.add_argument("--force", action="store_true", help="run an agent again though its JSON is there")
    sub.add_parser("page", help="write docs/leaderboard.md from the JSON")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.agents or default_agents(), args.workers, args.force)
    else:
        page()
    return 0


if __name__ == "__main__":
    sys.exit(main())
