"""SB3 PPO's reference curve: ``qwixx-train``'s MaskablePPO from scratch in pure self-play.

    python benchmarks/learning/sb3_ppo.py --table classic-2p --seeds 0 1 2

The package's own trainer (`training.trainer.Trainer`) with its defaults (`training.config`:
PPOConfig, NetworkConfig, 64 games stepped together), no behaviour cloning and no scripted
opponent: the other seats are frozen snapshots of the learner, the first one its initial
weights, a new one every `SNAPSHOT_EVERY` decisions. The run is trained in segments that end
at the evaluation points (``--resume`` of the same run folder, as a user would resume it), and
each segment's exported policy is evaluated (`common.Curve`). Needs the ``train`` extra.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

from qwixx_env.bots import make_bot  # noqa: E402

LEARNER = "sb3-ppo"
SNAPSHOT_EVERY = 20_000


def config(table: str, seed: int, steps: int, budget: int) -> dict:
    options = common.table_options(table)
    return {
        "name": f"{LEARNER}-{table}-s{seed}",
        "seed": seed,
        "variant": options.variant,
        "num_players": options.num_players,
        "reward": "win",
        "total_steps": steps,
        "torch_threads": 1,
        "checkpoint_every": budget,
        "evaluation": None,  # the curve's own, on the benchmark's deals
        "opponents": {"self_play": {"snapshot_every": SNAPSHOT_EVERY, "add_when_win_rate": None, "max_snapshots": 8,
                                    "share": 1.0}},
    }


def main() -> None:
    args = common.arguments(LEARNER, "SB3 MaskablePPO (qwixx-train's defaults) from scratch, pure self-play")
    import torch

    from qwixx_env.training.config import config_from_dict
    from qwixx_env.training.trainer import Trainer

    torch.set_num_threads(1)
    curves = []
    for seed in args.seeds:
        curve = common.Curve(LEARNER, library="stable-baselines3 + sb3-contrib", algorithm="MaskablePPO",
                             table=args.table, seed=seed, trained_against="snapshots of itself", deals=args.deals)
        table = common.table_options(args.table)
        with tempfile.TemporaryDirectory(prefix="sb3-ppo-") as folder:
            run = Path(folder) / "run"
            for i, steps in enumerate(common.checkpoints(args.decisions, args.points)):
                if steps > 0:
                    cfg = config_from_dict(config(args.table, seed, steps, args.decisions))
                    steps = Trainer(cfg, run, resume=i > 1, progress=False).run()["steps"]  # whole rollouts
                    bot = make_bot(str(run / "final.json"), table, seed=0)
                else:  # the initial weights: a run of one rollout would have trained already
                    cfg = config_from_dict(config(args.table, seed, 1, args.decisions))
                    bot = initial_policy(cfg, Path(folder) / "init", table)
                curve.point(steps, bot.act)
        curves.append(curve)
    if not args.quick:
        path = common.write(curves, budget=args.decisions, versions=common.versions(
            "stable-baselines3", "sb3-contrib", "torch"),
            notes=f"qwixx-train's PPO defaults (training.config), {SNAPSHOT_EVERY:,}-decision snapshots as the only "
                  "opponents, trained in segments ending at the evaluation points (--resume)")
        print(f"wrote {path}")


def initial_policy(cfg, folder: Path, table):
    """The untrained network of `cfg`'s seed, exported as the trainer exports it."""
    from sb3_contrib import MaskablePPO

    from qwixx_env import QwixxVectorEnv
    from qwixx_env.envs.sb3 import Sb3VecEnv
    from qwixx_env.training.export import export_policy
    from qwixx_env.training.ppo import ppo_options

    model = MaskablePPO("MlpPolicy", Sb3VecEnv(QwixxVectorEnv(2, table=table)), seed=cfg.seed, device="cpu",
                        verbose=0, **ppo_options(cfg))
    folder.mkdir(parents=True, exist_ok=True)
    path = export_policy(model, folder / "initial", meta={"steps": 0})
    return make_bot(str(path), table, seed=0)


if __name__ == "__main__":
    main()
