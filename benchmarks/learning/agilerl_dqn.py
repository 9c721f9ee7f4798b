"""AgileRL DQN's reference curve: AgileRL's own `train_off_policy` with its evolutionary HPO.

    build/venv-agilerl/bin/python benchmarks/learning/agilerl_dqn.py --table classic-2p --seeds 0 1 2

`qwixx_env.integrations.agilerl.Trainer` with its `Settings` defaults, which are AgileRL's for
DQN (the constructor's learning rate, batch, learn step, tau, double DQN; `train_off_policy`'s
epsilon schedule) and a population of 4 under AgileRL's tournament and mutations. The learner
takes one seat (drawn per game) of `agilerl_env`; the others are a frozen copy of the fittest
agent, renewed every generation (self-play: the first copy is an initial network). A decision
is one any agent of the population chose in training (AgileRL's fitness tests are not
counted); at each point the fittest agent is evaluated (`common.Curve`). Needs the ``agilerl``
extra (its own venv: ``KEEP=1 ONE=1 .ci/test-integrations agilerl``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
import torch  # noqa: E402

from qwixx_env.integrations.agilerl import SELF, Settings, Trainer, dqn_action  # noqa: E402

LEARNER = "agilerl-dqn"


def main() -> None:
    args = common.arguments(
        LEARNER,
        "AgileRL DQN (its defaults) through train_off_policy with evolutionary HPO, "
        "self-play against the fittest agent",
    )
    torch.set_num_threads(1)
    table = common.table_options(args.table)
    points = common.checkpoints(args.decisions, args.points)
    defaults = Settings()
    # a generation no longer than the stretch between two points (a --quick run's are short), in whole steps of
    # the num_envs games, as train_off_policy counts them
    evo_steps = max(1, min(defaults.evo_steps, points[1] // defaults.population) // defaults.num_envs)
    evo_steps *= defaults.num_envs
    curves = []
    for seed in args.seeds:
        trainer = Trainer(
            Settings(
                num_players=table.num_players,
                variant=table.variant,
                reward=table.reward,
                opponent=SELF,
                evo_steps=evo_steps,
                seed=seed,
            )
        )
        curve = common.Curve(
            LEARNER,
            library="agilerl",
            algorithm="DQN (population of 4, evolutionary HPO)",
            table=args.table,
            seed=seed,
            trained_against="a frozen copy of its fittest agent",
            deals=args.deals,
        )
        for decisions in points:
            if decisions:  # each agent's share, in the whole generations nearest to it
                generations = max(1, round(decisions / defaults.population / evo_steps))
                trainer.train_to(generations * evo_steps)
            best = trainer.best
            curve.point(trainer.decisions, lambda observation, agent=best: dqn_action(agent, observation))
        curves.append(curve)
    if not args.quick:
        path = common.write(
            curves,
            budget=args.decisions,
            versions=common.versions("agilerl", "torch"),
            notes=(
                "qwixx_env.integrations.agilerl.Trainer with its Settings defaults: AgileRL's DQN defaults (lr 1e-4, "
                "batch 64, learn_step 5, gamma 0.99, tau 1e-3, double), train_off_policy's epsilon 1 -> 0.01 by 0.999 "
                f"a step of 8 games, a population of 4 with tournament (size 2, elitism) and mutations every "
                f"{evo_steps:,} decisions per agent; 64-unit encoder and head. Self-play: the other seats are a frozen "
                "copy of the fittest agent, renewed every generation. Decisions count every agent's training "
                "decisions; the fittest agent is evaluated."
            ),
        )
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
