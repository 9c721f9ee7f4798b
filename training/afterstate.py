"""Train the `afterstate` bot's network (classic; `--players`, default 2) by fitted value iteration.

Round k: the afterstate policy with the current network plays (`BatchedQwixx`, a share
`explore` of its decisions random), every position at the start of a roll is recorded
(`policies.value.value_features`) with who went on to win, and a new network is fitted on them
(`qwixx_env.training.value_leaf.fit`: binary cross-entropy, a tenth of the games held out). After each
round the policy plays `heuristic` (`match`) and its win rate is printed and kept. The first
round starts from the rollout leaf's network, trained on heuristic games. The result is
written atomically as a win-chance network file (`qwixx_env.nets.write_win_chance`)::

    python -m qwixx_env.training.afterstate      # 3 rounds: 30k, 100k, 100k games

By default the policy plays itself and both sides are recorded with the outcome as the label.
`--opponent heuristic` plays it against `heuristic` instead (a best response, only its side
recorded) and `--td-lambda` < 1 labels positions with TD(lambda) targets; neither made a
stronger bot (docs/training.md).
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from qwixx_env.arena.stats import win_shares
from qwixx_env.core.compile import kernel
from qwixx_env.envs.batched import BatchedQwixx
from qwixx_env.nets.checkpoint import WIN_CHANCE, json_and_npz, read
from qwixx_env.nets.win_chance import kernel_arrays, network_name, networks_dir, write_win_chance
from qwixx_env.policies.heuristic import weights_array
from qwixx_env.policies.recorded import play_recorded
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.value import num_features, win_chance
from qwixx_env.training.value_leaf import fit, hidden_sizes, record_games

OPPONENTS = ("self", "heuristic")
EVAL_SEED = 77  # the dice of the rounds' games against heuristic


def _engine(games: int, seed: int, num_players: int = 2):
    engine = BatchedQwixx(games, num_players=num_players, autoreset=False)
    engine.reset(seed=seed)
    return engine


def _split(games: int, threads: int) -> list[int]:
    return [games // threads + (1 if k < games % threads else 0) for k in range(threads)]


def collect(net, games: int, seed: int, explore: float, threads: int = 2, opponent: str = "self",
            num_players: int = 2):
    """(features, win share, game index, seat) of every roll start of `games` games of the afterstate
    policy with network `net`, on `threads` threads (a share of games each, each thread seeded
    from `seed`: the same data for the same arguments). `opponent` "self": the policy plays
    every seat and every side is recorded; "heuristic": it plays seat (i + 1) % P of game i
    against heuristics and only its side is recorded."""
    if opponent not in OPPONENTS:
        raise ValueError(f"opponent: got {opponent!r}; expected one of {', '.join(OPPONENTS)}")

    def part(k: int):
        n_games = _split(games, threads)[k]
        if opponent == "heuristic":
            uses_net = np.zeros((n_games, num_players), np.bool_)
            uses_net[np.arange(n_games), (np.arange(n_games) + 1) % num_players] = True  # 2 players: as before
        else:
            uses_net = np.ones((n_games, num_players), np.bool_)
        x, share, game, seat = record_games(n_games, seed * 1000 + k, explore, net, uses_net, uses_net, num_players)
        return x, share, game * threads + k, seat

    with ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(part, range(threads)))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))


def td_labels(net, x: np.ndarray, share: np.ndarray, game: np.ndarray, seat: np.ndarray, lam: float) -> np.ndarray:
    """TD(lambda) targets for the rows of `collect`: along each seat's rows of a game (in
    the order played), the last keeps the outcome and each earlier one blends the network's
    value of the next row (weight 1 - lam) with the next row's target (weight lam).
    lam = 1 gives the outcome everywhere."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"td_lambda: got {lam}; expected a number in [0, 1]")
    if lam == 1.0:
        return share
    seq = game * 8 + seat  # one key per (game, seat): at most 5 seats
    order = np.argsort(seq, kind="stable")  # each seat's rows together, in the order played
    y = np.empty(len(share), np.float32)
    y[order] = _td_backward(x, share.astype(np.float64), seq, order, lam, net)
    return y


@kernel()
def _td_backward(x, share, seq, order, lam, net):
    """The targets along `order` (rows of one sequence together, in order of play)."""
    h1, h2 = np.empty(net[0].shape[1]), np.empty(net[2].shape[1])
    y = np.empty(order.shape[0])
    g = 0.0
    for j in range(order.shape[0] - 1, -1, -1):
        i = order[j]
        if j == order.shape[0] - 1 or seq[order[j + 1]] != seq[i]:
            g = share[i]
        else:
            nxt = order[j + 1]
            value = win_chance(x[nxt], net, h1, h2)
            g = (1.0 - lam) * value + lam * g
        y[j] = g
    return y


def match(net, games: int, seed: int, threads: int = 2, num_players: int = 2) -> tuple[float, float]:
    """The afterstate policy with `net` against `num_players` - 1 heuristics over `games`
    games (its seat in turn, dice seeds from `seed`): (win rate, standard error)."""
    def part(k: int) -> np.ndarray:
        n_games = _split(games, threads)[k]
        engine = _engine(n_games, seed * 1000 + k, num_players)
        seat = np.arange(n_games) % num_players
        uses_net = np.zeros((n_games, num_players), np.bool_)
        uses_net[np.arange(n_games), seat] = True
        none = np.zeros((0, num_features(num_players)), np.float32)
        play_recorded(engine.state, engine.variant.tables, weights_array(), net, uses_net, np.zeros_like(uses_net),
                      0.0, np.ones(n_games, np.uint64), none, np.zeros(0, np.int64), np.zeros(0, np.int64),
                      new_scratch(engine.variant, num_players, net))
        return win_shares(engine.engine.scores())[np.arange(n_games), seat]

    with ThreadPoolExecutor(threads) as pool:
        share = np.concatenate(list(pool.map(part, range(threads))))
    return float(share.mean()), float(share.std(ddof=1) / np.sqrt(len(share))) if len(share) > 1 else 0.0


def read_network(path: Path) -> tuple[np.ndarray, ...]:
    """A win-chance network file (json + npz, with or without a suffix) as the kernels take it."""
    return kernel_arrays(*read(*json_and_npz(path), kind=WIN_CHANCE))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Fitted value iteration for the afterstate bot's network.")
    ap.add_argument("--players", type=int, default=2, help="table size, 2 or more (classic)")
    ap.add_argument("--start", type=Path, default=None,
                    help="the network the first round plays with (default: qwixx_env/nets/data/value-classic-<P>p, "
                         "training/value_leaf.py's)")
    ap.add_argument("--games", default="30000,100000,100000", help="self-play games of each round")
    ap.add_argument("--hidden", default="64x32,128x64,128x64", help="the network fitted in each round")
    ap.add_argument("--epochs", default="6,8,8")
    ap.add_argument("--seed", type=int, default=11, help="round k uses seed + k")
    ap.add_argument("--explore", type=float, default=0.03, help="share of random decisions")
    ap.add_argument("--opponent", choices=OPPONENTS, default="self",
                    help="who the policy plays while collecting (default: itself)")
    ap.add_argument("--td-lambda", type=float, default=1.0, help="TD(lambda) labels; 1 (default): the outcome")
    ap.add_argument("--eval-games", type=int, default=20000,
                    help="games against heuristic after each round (0: none)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None, help="default: qwixx_env/nets/data/afterstate-classic-<P>p")
    a = ap.parse_args(argv)
    if not 2 <= a.players <= 5:
        raise SystemExit(f"--players: got {a.players}; expected 2 to 5")
    start = a.start or networks_dir() / network_name("value", "classic", a.players)
    out = a.out or networks_dir() / network_name("afterstate", "classic", a.players)
    games = [int(g) for g in a.games.split(",")]
    hidden = [hidden_sizes(layer) for layer in a.hidden.split(",")]
    epochs = [int(e) for e in a.epochs.split(",")]
    if not len(games) == len(hidden) == len(epochs):
        raise SystemExit(f"--games, --hidden, --epochs: got {len(games)}, {len(hidden)}, {len(epochs)} rounds; "
                         "expected the same number")
    if not 0.0 <= a.td_lambda <= 1.0:
        raise SystemExit(f"--td-lambda: got {a.td_lambda}; expected a number in [0, 1]")
    net = read_network(start)
    reports = []
    for k, (g, h, e) in enumerate(zip(games, hidden, epochs)):
        t0 = time.time()
        x, y, game, seat = collect(net, g, a.seed + k, a.explore, a.threads, a.opponent, a.players)
        y = td_labels(net, x, y, game, seat, a.td_lambda)
        print(f"round {k + 1}: {len(x):,} positions from {g:,} games in {time.time() - t0:.0f} s", flush=True)
        arrays, report = fit(x, y, game, epochs=e, seed=a.seed + k, hidden=h)
        net = tuple(arrays[n] for n in ("w1", "b1", "w2", "b2", "w3", "b3"))
        report.update(round=k + 1, games=g, hidden=list(h), epochs=e, opponent=a.opponent, td_lambda=a.td_lambda)
        if a.eval_games > 0:
            rate, se = match(net, a.eval_games, EVAL_SEED, a.threads, a.players)
            report.update(heuristic_games=a.eval_games, heuristic_win_rate=rate, heuristic_win_se=se)
        report.update(seconds=round(time.time() - t0, 1))
        print(json.dumps(report), flush=True)
        reports.append(report)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"start": str(start), "seed": a.seed, "num_players": a.players, "rounds": reports}
    print(f"wrote {write_win_chance(out, net, variant='classic', num_players=a.players, meta=meta)}")


if __name__ == "__main__":
    main()
