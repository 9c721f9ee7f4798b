"""What installing the wheel costs a user: its size and contents, the install time of the core
and of the ``train`` extra, and the first game from that install on an empty kernel cache.

``python benchmarks/release_install.py WHEEL [--json PATH]`` (default JSON:
``benchmarks/results/release_install.json``; build the wheel with ``python -m build`` or take
``build/test-wheel/dist/`` from ``make test-wheel``). Each install goes into a fresh venv with
pip's cache warm (an install of the same requirements runs first, untimed), so the times are
pip's resolve, unpack and byte-compile, not the download. ``train`` is timed as the Makefile
installs it: torch's CPU build first (``torch==2.13.0``, on this machine's disk), then the
extra. The first game is ``qwixx_v0.env(num_players=2)``, ``reset(seed=0)`` and one step in a
fresh process with ``QWIXX_ENV_CACHE`` a new folder; CPU is the child's user + system time.
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
import zipfile
from collections import Counter
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "release_install.json"
FIRST_GAME = (
    "import time; t = time.perf_counter(); from qwixx_env import qwixx_v0; "
    "env = qwixx_v0.env(num_players=2); env.reset(seed=0); obs, *_ = env.last(); "
    "env.step(int(obs['action_mask'].argmax())); print(time.perf_counter() - t)"
)


def contents(wheel: Path) -> dict:
    """The wheel's size and its files grouped by folder (bytes uncompressed)."""
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
    folders: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for info in infos:
        parts = info.filename.split("/")
        key = "/".join(parts[:2]) if parts[0] == "qwixx_env" and len(parts) > 2 else parts[0]
        folders[key] += info.file_size
        counts[key] += 1
    return {
        "file": wheel.name, "bytes": wheel.stat().st_size, "files": len(infos),
        "uncompressed_bytes": sum(i.file_size for i in infos),
        "by_folder": {k: {"files": counts[k], "bytes": b} for k, b in folders.most_common()},
    }


def timed_install(python: str, steps: list[list[str]]) -> float:
    """Seconds to run `steps` (pip install argument lists) into a fresh venv, after an untimed
    run of the same into another venv (the pip cache then holds every wheel)."""
    seconds = []
    for _ in range(2):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([python, "-m", "venv", f"{tmp}/venv"], check=True)
            pip = [f"{tmp}/venv/bin/python", "-m", "pip", "--disable-pip-version-check", "-q", "install"]
            start = time.perf_counter()
            for args in steps:
                subprocess.run([*pip, *args], check=True, capture_output=True)
            seconds.append(time.perf_counter() - start)
    return round(seconds[-1], 1)


def first_game(python: str, wheel: Path) -> dict:
    """The first AEC step after a core install, on an empty kernel cache: wall and CPU."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([python, "-m", "venv", f"{tmp}/venv"], check=True)
        subprocess.run([f"{tmp}/venv/bin/python", "-m", "pip", "-q", "install", str(wheel)], check=True,
                       capture_output=True)
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env["QWIXX_ENV_CACHE"] = f"{tmp}/cache"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([f"{tmp}/venv/bin/python", "-c", FIRST_GAME], cwd=tmp, env=env, check=True,
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"process_wall_s": round(wall, 1), "process_cpu_s": round(cpu, 1),
            "import_to_first_step_s": round(float(done.stdout.split()[-1]), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not args.wheel.is_file() or args.wheel.suffix != ".whl":
        raise SystemExit(f"wheel: got {str(args.wheel)!r}; expected a .whl file")
    wheel = args.wheel.resolve()
    python = sys.executable
    result = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(), "load_average_at_start": os.getloadavg(),
        "wheel": contents(wheel),
        "install_core_s": timed_install(python, [[str(wheel)]]),
        "install_train_s": timed_install(python, [["torch==2.13.0"], [f"{wheel}[train]"]]),
        "first_game_empty_cache": first_game(python, wheel),
        "notes": "pip cache warm; train = torch==2.13.0 (CPU build, local disk) first, then the extra",
    }
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
