"""`make demo`: train a 2-player classic PPO bot from scratch, then play it against the ladder.

``python -m qwixx_env.training.demo [--config demo] [--out runs/demo] [--games 300] [--steps N]``

The run (`qwixx_env.training.trainer`) starts with a behaviour-cloning warm start from the
`heuristic` bot and improves on it with PPO against scripted bots and its own snapshots; its
checkpoint and final policy land in ``--out``, which is replaced on every demo. Then the final
policy, loaded as a numpy bot, plays ``--games`` deals in each seat against `random`, `greedy`
and `heuristic`, and a table shows its win rates with 95% intervals and the mean scores. (The
environment's own demo, random agents playing a few games, is ``python -m qwixx_env.demo``.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import Any

from qwixx_env.nets import NumpyPolicy
from qwixx_env.training.config import LADDER
from qwixx_env.training.evaluate import evaluate, policy_factory
from qwixx_env.training.train import config_with_overrides
from qwixx_env.training.trainer import Trainer

DEMO_CONFIG = "demo"  # the shipped configs/demo.yaml, found by name from a wheel as from a checkout


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m qwixx_env.training.demo",
                                     description=(__doc__ or "").partition("\n")[0])  # None under -OO
    parser.add_argument("--config", default=DEMO_CONFIG,
                        help="training config: a YAML file's path or a shipped config's name (default demo)")
    parser.add_argument("--out", default="runs/demo", help="run folder, replaced (default runs/demo)")
    parser.add_argument("--games", type=int, default=300, help="deals per opponent in the final table (default 300)")
    parser.add_argument("--steps", type=int, help="override total_steps")
    args = parser.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    console = Console() if Console().is_terminal else Console(width=120)
    cfg = config_with_overrides(args.config, args.steps)
    out = Path(args.out)
    if out.exists():
        if not (out / "config.yaml").is_file():
            raise SystemExit(f"--out: {out} exists and is not a training run; choose another folder")
        shutil.rmtree(out)  # the demo trains from scratch every time
    began = time.perf_counter()
    console.rule(f"[bold]Training {cfg.name}: {cfg.variant}, {cfg.num_players} players, {cfg.total_steps:,} PPO steps")
    trainer = Trainer(cfg, out, console=console)
    summary = trainer.run()
    train_seconds = time.perf_counter() - began
    console.print(learning_table(trainer.history))

    console.rule("[bold]The trained bot against the ladder")
    policy = NumpyPolicy.load(summary["final"])
    opponents = cfg.eval_opponents or LADDER
    result = evaluate(
        policy_factory(policy, "ppo"), {name: name for name in opponents}, num_players=cfg.num_players,
        variant=cfg.variant, lucky=cfg.lucky, games=args.games, seed=cfg.seed + 20_000, workers=os.cpu_count() or 1,
    )
    table = Table(title=f"PPO demo bot ({summary['steps']:,} steps) vs the ladder, {cfg.variant}, "
                        f"{cfg.num_players} players, seats rotated")
    for column in ("opponent", "games", "ppo win rate", "95% interval", "ppo mean score", "opponent mean score", ""):
        table.add_column(column, justify="left" if column in ("opponent", "") else "right")
    for name, r in result["opponents"].items():
        lo, hi = r["win_interval"]
        verdict = "[green]beats it" if lo > 0.5 else ("[red]loses" if hi < 0.5 else "[yellow]level")
        table.add_row(name, f"{r['games']:,}", f"{r['win_rate']:.1%}", f"[{lo:.1%}, {hi:.1%}]",
                      f"{r['score_mean']:.1f}", f"{r['opponent_score_mean']:.1f}", verdict)
    console.print(table)
    bc = summary["bc"]
    if bc:
        console.print(f"Warm start: {bc['samples']:,} decisions of {bc['teacher']!r} "
                      f"({bc['samples_per_second']:,.0f}/s), agreement {bc['agreement']:.1%}, "
                      f"{bc['total_seconds']:.0f} s.")
    rate = summary["ppo_steps_per_second"]
    console.print(f"PPO: {summary['steps']:,} steps at {rate:,.0f} steps/s; training {train_seconds / 60:.1f} min, "
                  f"in all {(time.perf_counter() - began) / 60:.1f} min.")
    console.print(f"Run folder {out}: checkpoint/, final.npz + final.json (qwixx_env.bots.load('{out}/final')), "
                  "eval.jsonl, curves.png, tb/ (tensorboard --logdir " + str(out / "tb") + ").")


def learning_table(history: list[dict]) -> Any:
    """The run's evaluations (warm start at step 0, then PPO): win rate per opponent."""
    from rich.table import Table

    labels = list(history[0]["opponents"]) if history else []
    table = Table(title="Evaluations during the run (win rate of the learner; step 0 = after the warm start)")
    for column in ("steps", "minutes", *(f"vs {label}" for label in labels)):
        table.add_column(column, justify="right")
    for r in history:
        table.add_row(f"{r['steps']:,}", f"{r['wall_time'] / 60:.1f}",
                      *(f"{r['opponents'][label]['win_rate']:.1%}" for label in labels))
    return table


if __name__ == "__main__":
    main()
