"""How fast the rules kernels play, classic and Longo, on one core: the speed check of a change
to the core's kernels, before against after (issue 52 measured per-row score tables and rows of
different lengths with it: docs/environment.md, "Rows of one length, one score table").

Two loops, each for every variant named, 2-player games, random legal decisions from a compiled
picker (one splitmix64 generator per game):

* ``rules`` -- the core's batch kernels alone, on a `State` of ``--batch`` games:
  ``legal_mask``, the picker, ``apply``, ``scores`` every step, and the games that ended
  reset. Decisions per second: the rules' own cost, with nothing else in the loop.
* ``engine`` -- `BatchedQwixx` (``--batch`` games, autoreset): ``step`` builds the next
  observations and masks too, the figure a user of the batched engine sees.

Each measurement plays ``--seconds`` of this process's CPU time (not wall time: on a shared
machine the wall clock counts the other jobs' turns too) after a warm-up; ``--repeats`` rounds
visit every configuration in turn and the median round is reported (JSON on stdout, or
``--out FILE``).
To compare two versions of the code, run this file once per version in turn, several times,
from each version's tree (``PYTHONPATH=TREE``), and compare the medians: a change of the
kernel sources changes the compile cache's key, so each tree's first run compiles (its warm-up
absorbs that; the timed rounds do not include it).

Run: ``python benchmarks/rules_speed.py [--variants classic,longo] [--batch 1024]
[--seconds 2] [--repeats 3] [--cpu 0] [--out FILE]``.
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import qwixx_env  # noqa: E402
from qwixx_env.core import rules  # noqa: E402
from qwixx_env.core.compile import kernel  # noqa: E402
from qwixx_env.core.state import new_state, seed_to_rng  # noqa: E402
from qwixx_env.core.variant import get_variant  # noqa: E402
from qwixx_env.envs.batched import BatchedQwixx  # noqa: E402
from qwixx_env.policies.scripted import random_legal  # noqa: E402

NUM_PLAYERS = 2


@kernel()
def pick_actions(masks, pick_rng, actions):
    """One uniformly random legal action per row of `masks`, from generator `pick_rng[b]`."""
    for b in range(masks.shape[0]):
        actions[b] = random_legal(masks[b], pick_rng, b)


def rules_loop(variant_name: str, batch: int, seconds: float, seed: int) -> float:
    """Decisions per second of the core's batch kernels alone (mask, pick, apply, scores, reset)."""
    variant = get_variant(variant_name)
    state = new_state(NUM_PLAYERS, batch, variant)
    state.rng[:] = [seed_to_rng(seed + b) for b in range(batch)]
    rules.reset(variant, state)
    masks = np.zeros((batch, variant.num_actions), np.int8)
    points = np.zeros((batch, NUM_PLAYERS), np.int64)
    actions = np.zeros(batch, np.int64)
    pick_rng = np.random.SeedSequence(seed).generate_state(batch, np.uint64)
    decisions = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        rules.legal_mask(variant, state, masks)
        pick_actions(masks, pick_rng, actions)
        rules.apply(variant, state, actions)
        rules.scores(variant, state, points)
        decisions += batch
        over = np.flatnonzero(rules.is_over(state))
        if over.size:
            rules.reset(variant, state, games=over)
    return decisions / (time.process_time() - start)


def engine_loop(variant_name: str, batch: int, seconds: float, seed: int) -> float:
    """Decisions per second of `BatchedQwixx.step` (observations and masks built each step)."""
    engine = BatchedQwixx(batch, num_players=NUM_PLAYERS, variant=variant_name)
    _, masks = engine.reset(seed=seed)
    pick_rng = np.random.SeedSequence(seed).generate_state(batch, np.uint64)
    actions = np.zeros(batch, np.int64)
    steps = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        pick_actions(masks, pick_rng, actions)
        _, masks, _, _ = engine.step(actions)
        steps += 1
    return steps * batch / (time.process_time() - start)


LOOPS = {"rules": rules_loop, "engine": engine_loop}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="classic,longo")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=0, help="the core to pin to (-1: no pinning)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.cpu >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    configs = [(loop, v) for loop in LOOPS for v in args.variants.split(",")]
    for loop, v in configs:  # warm-up: compiles (or loads from the cache) every kernel
        LOOPS[loop](v, 64, 0.2, 1)
    rounds: dict[str, list[float]] = {f"{loop}/{v}": [] for loop, v in configs}
    for r in range(args.repeats):
        for loop, v in configs:
            rounds[f"{loop}/{v}"].append(LOOPS[loop](v, args.batch, args.seconds, 100 + r))
    result = {
        "source": str(Path(qwixx_env.__file__).parent),
        "batch": args.batch,
        "seconds": args.seconds,
        "repeats": args.repeats,
        "decisions_per_s": {k: statistics.median(xs) for k, xs in rounds.items()},
        "rounds": rounds,
    }
    text = json.dumps(result, indent=1)
    if args.out is not None:
        args.out.write_text(text + "\n")
    else:
        print(text)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
