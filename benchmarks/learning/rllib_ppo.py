"""RLlib PPO's reference curve: ``qwixx-train --engine rllib`` from scratch in pure self-play.

    python benchmarks/learning/rllib_ppo.py --table classic-2p --seeds 0 1 2

The package's RLlib path (`training.rllib.train`: RLlib's PPO on the vector env, the driver
sampling and learning) with its defaults (`RLlibConfig`: RLlibPPOConfig, RLlibNetworkConfig,
256 games stepped together), no behaviour cloning and no scripted opponent: the other seats are
frozen snapshots of the learner, the first one its initial weights, a new one every
`SNAPSHOT_EVERY` decisions. The run trains in segments (``--resume`` with more iterations) that
end at the first iteration at or past each evaluation point, whose exported policy is
evaluated (`common.Curve`). Needs the ``rllib`` extra.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

from qwixx_env.bots import make_bot  # noqa: E402

LEARNER = "rllib-ppo"
SNAPSHOT_EVERY = 20_000


def main() -> None:
    args = common.arguments(LEARNER, "RLlib PPO (qwixx-train --engine rllib's defaults) from scratch, pure self-play")
    import ray

    from qwixx_env.training.rllib import config_from_dict, train

    table = common.table_options(args.table)
    curves = []
    for seed in args.seeds:
        curve = common.Curve(LEARNER, library="ray[rllib]", algorithm="PPO", table=args.table, seed=seed,
                             trained_against="snapshots of itself", deals=args.deals)
        with tempfile.TemporaryDirectory(prefix="rllib-ppo-") as folder:
            run = Path(folder) / "run"
            data = {"name": f"{LEARNER}-{args.table}-s{seed}", "seed": seed, "variant": table.variant,
                    "num_players": table.num_players, "reward": "win", "evaluation": None, "checkpoint_every": 1000,
                    "opponents": {"self_play": {"snapshot_every": SNAPSHOT_EVERY, "add_when_win_rate": None,
                                                "max_snapshots": 8, "share": 1.0}}}
            batch = config_from_dict({**data, "iterations": 1}).ppo.train_batch_size
            done = 0
            for target in common.checkpoints(args.decisions, args.points):
                iterations = max(1, math.ceil(target / batch))
                if iterations > done:  # else the last segment is at or past this point already
                    summary = train(config_from_dict({**data, "iterations": iterations}), run, resume=done > 0)
                    done = iterations
                steps = int(summary["last"]["env_steps"])
                if target == 0:  # the first iteration has trained; the initial weights are snapshot@0
                    bot = make_bot(str(first_snapshot(run)), table, seed=0)
                    steps = 0
                else:
                    bot = make_bot(summary["policy"], table, seed=0)
                curve.point(steps, bot.act)
        curves.append(curve)
    ray.shutdown()
    if not args.quick:
        path = common.write(curves, budget=args.decisions, versions=common.versions("ray", "torch"),
                            notes=f"qwixx-train --engine rllib's defaults (RLlibConfig), {SNAPSHOT_EVERY:,}-decision "
                                  "snapshots as the only opponents, trained in segments ending at the first iteration "
                                  "at or past each evaluation point (--resume)")
        print(f"wrote {path}")


def first_snapshot(run: Path) -> Path:
    """The league's first snapshot of the learner: its initial weights."""
    found = sorted((run / "snapshots").glob("*.json"))
    if not found:
        raise FileNotFoundError(f"{run / 'snapshots'}: no snapshot of the initial weights")
    return found[0]


if __name__ == "__main__":
    main()
