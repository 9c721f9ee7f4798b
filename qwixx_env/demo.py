"""The environment's demo: a few seeded games between random legal agents, their final
scorecards and a results table. Run as ``python -m qwixx_env.demo [--games N] [--seed S]``.

(`make demo` trains a PPO bot and plays it against the ladder: `qwixx_env.training.demo`.)
"""

from __future__ import annotations

import argparse

import numpy as np

from qwixx_env import qwixx_v0


def play_random_game(env, seed: int, rng: np.random.Generator) -> dict:
    """Play one game with uniformly random legal actions; return the final snapshot."""
    env.reset(seed=seed)
    decisions = 0
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        decisions += 1
    snap = env.unwrapped.snapshot()
    snap["decisions"] = decisions
    return snap


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])  # None under -OO
    parser.add_argument("--games", type=int, default=3, help="games per table (default 3)")
    parser.add_argument("--seed", type=int, default=2026, help="first seed (default 2026)")
    args = parser.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # piped or captured: do not wrap the table to 80 columns
    tables = [("classic", 2), ("classic", 1), ("longo", 3)]
    results = Table(title=f"Random legal agents, seeds {args.seed}..{args.seed + args.games - 1}")
    for column in ("variant", "players", "seed", "rolls", "moves", "scores", "winners", "ended by"):
        results.add_column(column, justify="right" if column in ("players", "seed", "rolls", "moves") else "left")
    rng = np.random.default_rng(args.seed)
    for variant, players in tables:
        env = qwixx_v0.env(num_players=players, variant=variant, render_mode="ansi")
        for i in range(args.games):
            seed = args.seed + i
            snap = play_random_game(env, seed, rng)
            scores = [p["score"] for p in snap["players"]]
            best = max(scores)
            winners = [f"player_{s}" for s, x in enumerate(scores) if x == best]
            ended = (
                "4th penalty"
                if any(p["penalties"] >= 4 for p in snap["players"])
                else f"locked {', '.join(snap['locked_rows'])}"
            )
            results.add_row(
                variant, str(players), str(seed), str(snap["roll"] + 1), str(snap["decisions"]),
                " / ".join(map(str, scores)), ", ".join(winners), ended,
            )
            if i == 0:
                console.rule(f"{variant}, {players} player(s), seed {seed}: final scorecard")
                console.print(env.render(), markup=False, highlight=False)
    console.print(results)


if __name__ == "__main__":
    main()
