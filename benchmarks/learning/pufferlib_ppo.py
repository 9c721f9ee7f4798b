"""PufferLib's reference curve: the package's CPU PPO over `QwixxPufferEnv`, from scratch, self-play.

    build/venv-pufferlib/bin/python benchmarks/learning/pufferlib_ppo.py --table classic-2p --seeds 0 1 2

`qwixx_env.integrations.pufferlib_ppo.train` with `PPOConfig`'s defaults (CleanRL's `ppo.py`
settings, 64 games, 128-decision rollouts, one torch thread) and ``opponents="self"``: the
network plays every seat, the learning seat (drawn per game) trained on, the others sampling
from its current weights inside the env. PufferLib's own trainer needs CUDA, so this is the
PPO a CPU user of the PufferLib env runs. The run is one call of `train`; its callback
evaluates the current weights (`MaskedPolicy.act_one`, the most likely legal action) after the
first update at or past each evaluation point, at the decisions counted there. ``--quick``
trains a smaller batch (8 games, 32-decision rollouts), as the default one alone passes its
budget.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

from qwixx_env.integrations.pufferlib import MaskedPolicy  # noqa: E402
from qwixx_env.integrations.pufferlib_ppo import PPOConfig, Progress, train  # noqa: E402

LEARNER = "pufferlib-ppo"


def run(table: str, seed: int, budget: int, points: int, deals: int, quick: bool) -> common.Curve:
    """One seed's curve."""
    curve = common.Curve(
        LEARNER,
        library="PufferLib (pufferlib-core, its env side) + torch",
        algorithm="PPO (CleanRL-style, qwixx_env.integrations.pufferlib_ppo)",
        table=table,
        seed=seed,
        trained_against="itself (the current network in every other seat)",
        deals=deals,
    )
    config = PPOConfig(
        table=table, steps=budget, seed=seed, log_every=0, **(dict(games=8, rollout=32) if quick else {})
    )
    protocol_table = common.table_options(table)
    if config.options != protocol_table:
        raise ValueError(f"table: {table!r} trains {config.options!r}, not the protocol's {protocol_table!r}")
    marks = common.checkpoints(budget, points)

    def evaluate(progress: Progress, policy: MaskedPolicy) -> None:
        if not marks or progress.decisions < marks[0]:
            return
        while marks and progress.decisions >= marks[0]:  # one update may pass several points: evaluate once
            marks.pop(0)
        curve.point(progress.decisions, policy.act_one)

    train(config, on_iteration=evaluate)
    return curve


def main() -> None:
    args = common.arguments(LEARNER, "PPO on the CPU over PufferLib's QwixxPufferEnv, from scratch, pure self-play")
    curves = [run(args.table, seed, args.decisions, args.points, args.deals, args.quick) for seed in args.seeds]
    if not args.quick:
        path = common.write(
            curves,
            budget=args.decisions,
            versions=common.versions("pufferlib-core", "torch"),
            notes="qwixx_env.integrations.pufferlib_ppo's PPOConfig defaults (CleanRL ppo.py: lr 2.5e-4 annealed, "
            "gamma 0.99, GAE lambda 0.95, 4 epochs x 4 minibatches, clip 0.2, entropy 0.01, value 0.5, grad "
            "norm 0.5), 64 games x 128-decision rollouts, a 128x128 tanh MLP, 1 torch thread; self-play: the "
            "current network samples every other seat inside the env, only the learning seat's decisions are "
            "trained on, all of the network's decisions count; evaluated after the first update at or past "
            "each point (PufferLib's own trainer needs CUDA)",
        )
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
