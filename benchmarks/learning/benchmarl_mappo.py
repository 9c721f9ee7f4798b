"""BenchMARL MAPPO's reference curve on the Qwixx task, from scratch (see `benchmarl_runs`).

build/venv-benchmarl/bin/python benchmarks/learning/benchmarl_mappo.py --table classic-2p --seeds 0 1 2
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchmarl_runs  # noqa: E402

if __name__ == "__main__":
    benchmarl_runs.main("mappo")
