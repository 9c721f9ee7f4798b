"""AgileRL's DQN through its own loop: does a short run beat its initial weights against random?

    build/venv-agilerl/bin/python benchmarks/agilerl_short_run.py    # writes benchmarks/results/agilerl_short_run.json

For each init seed, `qwixx_env.integrations.agilerl.train` trains a population of DQNs with
AgileRL's `train_off_policy` and evolutionary HPO against `random` on the 2-player classic
table (`Settings` defaults otherwise). Before training, each agent of the population (its
initial weights) plays `random` in the arena; after, the fittest agent does, on the same deals
(each deal in both seat orders).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from qwixx_env.files import write_atomically
from qwixx_env.integrations.agilerl import Settings, Trainer, win_share

OUT = Path(__file__).resolve().parent / "results" / "agilerl_short_run.json"


def share(agent, deals: int, seed: int) -> dict:
    row = win_share(agent, "random", games=deals, seed=seed)
    return {"win_rate": row["win_rate"], "win_interval": list(row["win_interval"]), "games": row["games"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=20_000, help="learner decisions per agent")
    parser.add_argument("--deals", type=int, default=200, help="arena deals per measurement")
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs = []
    for seed in args.seeds:
        settings = Settings(opponent="random", steps=args.steps, seed=seed)
        trainer = Trainer(settings)
        initial = [share(agent, args.deals, seed=1000) for agent in trainer.population]
        start = time.perf_counter()
        trainer.train_to(settings.steps)
        seconds = time.perf_counter() - start
        trained = share(trainer.best, args.deals, seed=1000)
        runs.append(
            {
                "seed": seed,
                "initial": initial,
                "trained": trained,
                "decisions": trainer.decisions,
                "generations": trainer.generations,
                "train_seconds": round(seconds, 1),
                "fitnesses": trainer.fitnesses,
                "best": {
                    "lr": trainer.best.lr,
                    "batch_size": trainer.best.batch_size,
                    "learn_step": trainer.best.learn_step,
                },
            }
        )
        print(
            f"seed {seed}: initial {[round(r['win_rate'], 3) for r in initial]} -> trained "
            f"{trained['win_rate']:.3f} {[round(x, 3) for x in trained['win_interval']]} "
            f"({trainer.decisions} decisions, {seconds:.0f} s)",
            flush=True,
        )
    settings = {k: v for k, v in vars(Settings(opponent="random", steps=args.steps)).items() if k != "seed"}
    write_atomically(
        OUT,
        (
            json.dumps({"settings": settings, "eval_seed": 1000, "deals": args.deals, "runs": runs}, indent=1) + "\n"
        ).encode(),
    )


if __name__ == "__main__":
    main()
