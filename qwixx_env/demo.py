"""The environment's demo: a few seeded games between random legal agents, their final
scorecards and a results table. Run as ``python -m qwixx_env.demo [--games N] [--seed S]``
(rich, with the ``arena`` extra, draws the table; without it the same is plain text).

(`make demo` trains a PPO bot and plays it against the ladder: `qwixx_env.training.demo`.)
"""

from __future__ import annotations

import argparse

import numpy as np

from qwixx_env import qwixx_v0
from qwixx_env.arena.report import print_table, terminal_console


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

    console = terminal_console()  # None without rich: the same output as plain text
    columns = ("variant", "players", "seed", "rolls", "moves", "scores", "winners", "ended by")
    rows = []
    rng = np.random.default_rng(args.seed)
    for variant, players in [("classic", 2), ("classic", 1), ("longo", 3)]:
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
            rows.append([
                variant, str(players), str(seed), str(snap["roll"] + 1), str(snap["decisions"]),
                " / ".join(map(str, scores)), ", ".join(winners), ended,
            ])
            if i == 0:
                heading = f"{variant}, {players} player(s), seed {seed}: final scorecard"
                if console is None:
                    print(f"\n--- {heading} ---\n{env.render()}")
                else:
                    console.rule(heading)
                    console.print(env.render(), markup=False, highlight=False)
    print_table(f"Random legal agents, seeds {args.seed}..{args.seed + args.games - 1}", columns, rows,
                right=("players", "seed", "rolls", "moves"), console=console)


if __name__ == "__main__":
    main()
