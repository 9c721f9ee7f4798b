"""Tune the `heuristic` bot's weights, and measure it against greedy, with `BatchedQwixx`.

Games are played to the end inside one compiled loop over `BatchedQwixx.state` (every
seat-to-act decided by its kernel: `heuristic_action`, or `greedy_action` with the defaults
``make("greedy")`` uses), split
over threads (the kernels release the GIL). Game i of an evaluation uses seed ``seed + i``
for every candidate (common random numbers), and in multi-player runs the heuristic's seat
rotates with i, so every seat is played equally.

The search is a seeded coordinate search: for each weight in turn, try it scaled up and down
by a step (and shifted, for weights that may be zero); keep a change that improves the
objective; halve the steps after a round without improvement. The objective is solo classic
mean score plus ``--win-scale`` times the 2-player classic win rate against greedy (ties
count half).

Run::

    python benchmarks/tune_heuristic.py tune --games 4000 --rounds 3 --seed 1
    python benchmarks/tune_heuristic.py measure --games 10000 --players 1,2,3,4 --variant classic
    python benchmarks/tune_heuristic.py measure --games 10000 --players 2 --variant longo
    python benchmarks/tune_heuristic.py measure-aec --games 1000

`measure` prints the solo mean ± standard error, or the win rate against greedy with its 95%
Wilson interval, for the default (tuned) weights or ``--weights name=value,...``; `measure-aec`
plays solo games through ``qwixx_v0.raw_env`` with the bot class instead (same seeds, so the
same games as `measure`).

What the tuned defaults score (``measure --games 10000``) is in docs/baselines.md, "The
heuristic against greedy"; how fast the bot and its kernel decide, in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from qwixx_env.core import rules
from qwixx_env.core.state import OVER
from qwixx_env.envs.batched import BatchedQwixx
from qwixx_env.policies.heuristic import WEIGHT_NAMES, heuristic_action, weights_array
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.scripted import greedy_action, greedy_defaults


# Not cached: numba's cache would not see edits to the kernels this one inlines.
@njit(nogil=True)
def play_to_end(st, tb, games, heuristic_seat, weights, rival_weights, max_skip, penalty_worry, out_scores,
                out_decisions, ws):
    """Play `games` to the end: seat heuristic_seat[b] is the heuristic with `weights`, the
    others greedy, or the heuristic with `rival_weights` when that is not empty. Writes every
    seat's final score and how many decisions the first heuristic took per game. `ws`: the
    thread's `policies.scratch.Scratch`."""
    mask = np.zeros(4 * tb.cells + 1, np.int8)
    for b in games:
        while st.phase[b] != OVER:
            rules.legal_mask_one(st, tb, b, mask)
            if st.turn[b] == heuristic_seat[b]:
                a = heuristic_action(st, tb, b, mask, weights, ws)
                out_decisions[b] += 1
            elif rival_weights.size:
                a = heuristic_action(st, tb, b, mask, rival_weights, ws)
            else:
                a = greedy_action(st, tb, b, mask, max_skip, penalty_worry)
            rules.apply_one(st, tb, b, a)
        for s in range(st.marks.shape[1]):
            out_scores[b, s] = rules.score(st, tb, b, s)


def play(weights: np.ndarray, num_players: int, games: int, seed: int, variant: str = "classic",
         lucky: str = "bonus", threads: int = 2,
         rival_weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """(scores (games, P), heuristic seat (games,), heuristic decisions) of `games` games from
    seeds seed, seed+1, …: the heuristic at seat i % P, greedy at the others (or the
    heuristic with `rival_weights`)."""
    engine = BatchedQwixx(games, num_players=num_players, variant=variant, lucky=lucky, autoreset=False)
    engine.reset(seed=seed)
    seat = (np.arange(games) % num_players).astype(np.int64)
    scores = np.zeros((games, num_players), np.int64)
    decisions = np.zeros(games, np.int64)
    rivals = np.zeros(0) if rival_weights is None else rival_weights
    # the opponent the documented figures were measured against: greedy with max_skip 1
    skip, worry = 1, greedy_defaults(num_players)[1]
    chunks = np.array_split(np.arange(games, dtype=np.int64), threads)
    tb = engine.variant.tables
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda c: play_to_end(engine.state, tb, c, seat, weights, rivals, skip, worry, scores,
                                            decisions, new_scratch(engine.variant, num_players)), chunks))
    return scores, seat, int(decisions.sum())


def win_rate(scores: np.ndarray, seat: np.ndarray) -> tuple[float, int]:
    """(wins with shared wins as fractions, games) for the heuristic's seat."""
    mine = scores[np.arange(len(seat)), seat]
    best = scores.max(axis=1)
    sharing = (scores == best[:, None]).sum(axis=1)
    return float(np.where(mine == best, 1.0 / sharing, 0.0).sum()), len(seat)


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def objective_greedy(w: np.ndarray, games: int, seed: int, win_scale: float) -> tuple[float, float, float]:
    """Solo classic mean + win_scale x the 2-player win rate against greedy."""
    solo = play(w, 1, games, seed)[0]
    wins, n = win_rate(*play(w, 2, games, seed + 10_000_000)[:2])
    mean, rate = float(solo.mean()), wins / n
    return mean + win_scale * rate, mean, rate


def objective_h2h(w: np.ndarray, games: int, seed: int, _win_scale: float) -> tuple[float, float, float]:
    """2-player classic win rate against the default (tuned) heuristic, as (objective, 0, rate)."""
    wins, n = win_rate(*play(w, 2, games, seed, rival_weights=weights_array())[:2])
    return wins / n, 0.0, wins / n


def tune(args) -> None:
    objective = objective_h2h if args.h2h else objective_greedy
    w = weights_array(parse_weights(args.weights))
    steps = {n: args.step for n in WEIGHT_NAMES}
    rng = np.random.default_rng(args.seed)
    best, mean, rate = objective(w, args.games, args.seed, args.win_scale)
    print(f"start: objective {best:.3f} (solo {mean:.2f}, 2p win {rate:.4f})", flush=True)
    for rnd in range(args.rounds):
        improved = False
        for i in rng.permutation(len(WEIGHT_NAMES)):
            name = WEIGHT_NAMES[i]
            for direction in (1, -1):
                trial = w.copy()
                scale = steps[name] * direction
                trial[i] = w[i] * (1 + scale) if abs(w[i]) > 0.05 else w[i] + scale
                t0 = time.time()
                value, m, r = objective(trial, args.games, args.seed, args.win_scale)
                print(f"round {rnd} {name}={trial[i]:.4f}: {value:.3f} (solo {m:.2f}, 2p {r:.4f}) "
                      f"[{time.time() - t0:.0f}s]", flush=True)
                if value > best:
                    best, w, improved = value, trial, True
                    print(f"  -> kept; objective {best:.3f}", flush=True)
                    break
        if not improved:
            steps = {n: s / 2 for n, s in steps.items()}
        print("weights:", {n: round(float(v), 4) for n, v in zip(WEIGHT_NAMES, w)}, flush=True)


def parse_weights(text: str | None) -> dict[str, float]:
    if not text:
        return {}
    weights = {}
    for item in text.split(","):
        name, eq, value = item.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            eq = ""
        if not eq or not name.strip():
            print(
                f"tune_heuristic.py: error: --weights: got {item!r}; "
                "expected name=number,... (e.g. fill=1.5)",
                file=sys.stderr,
            )
            raise SystemExit(2)
    return weights


def measure(args) -> None:
    w = weights_array(parse_weights(args.weights))
    for P in (int(p) for p in args.players.split(",")):
        play(w, P, 2 * P, args.seed, args.variant, args.lucky)  # compile first
        t0 = time.time()
        scores, seat, decisions = play(w, P, args.games, args.seed, args.variant, args.lucky)
        dt = time.time() - t0
        speed = f"[{dt:.1f}s, {decisions / dt:,.0f} heuristic decisions/s on 2 threads]"
        rule = "/" + args.lucky if args.variant == "longo" else ""
        label = f"{args.variant}{rule} {P}p, {args.games} games"
        if P == 1:
            s = scores[:, 0]
            sem = s.std(ddof=1) / math.sqrt(len(s))
            print(f"{label}: heuristic mean {s.mean():.2f} ± {sem:.2f} (standard error) {speed}")
        else:
            wins, n = win_rate(scores, seat)
            lo, hi = wilson(wins, n)
            mine = scores[np.arange(n), seat]
            print(f"{label}: heuristic vs greedy win rate {wins / n:.4f} (95% Wilson {lo:.4f}–{hi:.4f}), "
                  f"mean score {mine.mean():.2f} {speed}")


def measure_aec(args) -> None:
    """Solo games through the AEC environment with the bot class (`bots.make("heuristic")`):
    the mean score, to compare with the batched loop, and the bot's decisions per second."""
    from qwixx_env import bots, qwixx_v0

    bot = bots.make("heuristic", num_players=1, weights=parse_weights(args.weights))
    env = qwixx_v0.raw_env(num_players=1)
    scores, decisions, spent = [], 0, 0.0
    for game in range(args.games):
        env.reset(seed=args.seed + game)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            action = None
            if not (terminated or truncated):
                t0 = time.perf_counter()
                action = bot.act(obs)
                spent += time.perf_counter() - t0
                decisions += 1
            env.step(action)
        scores.append(int(rules.scores(env.variant, env.core_state)[0, 0]))
    s = np.array(scores, float)
    print(f"classic 1p via AEC + bot class, {args.games} games (seeds {args.seed}..): mean {s.mean():.2f} "
          f"± {s.std(ddof=1) / math.sqrt(len(s)):.2f}; bot.act {decisions / spent:,.0f} decisions/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("tune")
    t.add_argument("--games", type=int, default=4000)
    t.add_argument("--rounds", type=int, default=3)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--win-scale", type=float, default=50.0)
    t.add_argument("--step", type=float, default=0.3, help="first relative step of every weight")
    t.add_argument("--h2h", action="store_true",
                   help="objective: 2-player classic win rate against the default heuristic")
    t.add_argument("--weights", default=None, help="start from these weights (name=value,...)")
    m = sub.add_parser("measure")
    m.add_argument("--games", type=int, default=10000)
    m.add_argument("--players", default="1,2")
    m.add_argument("--variant", default="classic")
    m.add_argument("--lucky", default="bonus")
    m.add_argument("--seed", type=int, default=12345)
    m.add_argument("--weights", default=None)
    a = sub.add_parser("measure-aec")
    a.add_argument("--games", type=int, default=1000)
    a.add_argument("--seed", type=int, default=12345)
    a.add_argument("--weights", default=None)
    args = parser.parse_args()
    {"tune": tune, "measure": measure, "measure-aec": measure_aec}[args.command](args)


if __name__ == "__main__":
    main()
