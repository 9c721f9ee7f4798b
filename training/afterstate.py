"""Train the `afterstate` bot's network (2-player classic) by fitted value iteration.

Round k: the afterstate policy with the current network plays itself (`BatchedQwixx`, a
share `explore` of decisions random), every position at the start of a roll is recorded
from both seats' sides (`core.value.value_features`) with who went on to win, and a new
network is fitted on them (`training.value_leaf.fit`: binary cross-entropy, a tenth of the
games held out). The first round starts from the rollout leaf's network, trained on
heuristic games. The result is written atomically as a numpy file::

    python -m training.afterstate      # 3 rounds: 30k, 100k, 100k games; ~12 min on 2 cores

`play_match` (the policy against `heuristic`) is what the rounds were judged by.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from qwixx_env.core import rules
from qwixx_env.core.afterstate import afterstate_action
from qwixx_env.core.compile import kernel
from qwixx_env.core.heuristic import heuristic_action
from qwixx_env.core.policies import random_legal
from qwixx_env.core.state import OVER
from qwixx_env.core.value import NUM_FEATURES, value_features

_jit = kernel()


@_jit
def play_selfplay(st, tb, hw, net, explore, rng, feats, rows_game, rows_seat):
    """Every game of st played to its end by the net policy for both seats (a share
    `explore` of decisions random); the roll-start features from both sides are recorded."""
    mask = np.zeros(4 * tb.cells + 1, np.int8)
    values = np.zeros(4 * tb.cells + 1)
    x = np.zeros(NUM_FEATURES)
    n = 0
    for b in range(st.phase.shape[0]):
        last_roll = -1
        while st.phase[b] != OVER:
            if st.roll[b] != last_roll and n + 2 <= feats.shape[0]:
                last_roll = st.roll[b]
                for s in range(2):
                    value_features(st, tb, b, s, hw, x)
                    feats[n, :] = x
                    rows_game[n] = b
                    rows_seat[n] = s
                    n += 1
            rules.legal_mask_one(st, tb, b, mask)
            if np.random.random() < explore:
                a = random_legal(mask, rng, b)
            else:
                a = afterstate_action(st, tb, b, mask, hw, net, values)
            rules.apply_one(st, tb, b, a)
    return n


@_jit
def play_match(st, tb, hw, net, net_seat, explore, rng):
    """Every game of st to its end: seat net_seat[b] plays the net policy, the other the
    heuristic (weights hw)."""
    mask = np.zeros(4 * tb.cells + 1, np.int8)
    values = np.zeros(4 * tb.cells + 1)
    for b in range(st.phase.shape[0]):
        while st.phase[b] != OVER:
            rules.legal_mask_one(st, tb, b, mask)
            if st.turn[b] == net_seat[b]:
                a = afterstate_action(st, tb, b, mask, hw, net, values)
            else:
                a = heuristic_action(st, tb, b, mask, hw)
            rules.apply_one(st, tb, b, a)


# --- value iteration ----------------------------------------------------------------------------


def collect(net, games: int, seed: int, explore: float, threads: int = 2):
    """(features, win share, game index) of every roll start of `games` self-play games of the
    afterstate policy with network `net`, on `threads` threads (a share of games each, each
    thread seeded from `seed`: the same data for the same arguments)."""
    from qwixx_env.arena.stats import win_shares
    from qwixx_env.core.heuristic import weights_array
    from qwixx_env.envs.batched import BatchedQwixx
    from training.value_leaf import _seed_numba

    def part(k: int):
        n_games = games // threads + (1 if k < games % threads else 0)
        engine = BatchedQwixx(n_games, num_players=2, autoreset=False)
        engine.reset(seed=seed * 1000 + k)
        st, tb = engine.state, engine.variant.tables
        cap = n_games * 80
        feats = np.zeros((cap, NUM_FEATURES), np.float32)
        rows_game, rows_seat = np.zeros(cap, np.int64), np.zeros(cap, np.int64)
        _seed_numba(seed * 1000 + k)  # this thread's exploration draws
        rng = np.full(n_games, seed * 2000 + 2 * k + 1, np.uint64)
        n = play_selfplay(st, tb, weights_array(), net, explore, rng, feats, rows_game, rows_seat)
        share = win_shares(rules.scores(engine.variant, st))
        return feats[:n], share[rows_game[:n], rows_seat[:n]].astype(np.float32), rows_game[:n] * threads + k

    with ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(part, range(threads)))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def read_npz(path: Path) -> tuple[np.ndarray, ...]:
    with np.load(path, allow_pickle=False) as f:
        return tuple(np.ascontiguousarray(f[k], np.float64) for k in ("w1", "b1", "w2", "b2", "w3", "b3"))


def main(argv: list[str] | None = None) -> None:
    import training.value_leaf as value_leaf
    from qwixx_env.bots.pretrained import write_atomically

    ap = argparse.ArgumentParser(description="Fitted value iteration for the afterstate bot's network.")
    ap.add_argument("--start", type=Path, default=Path("qwixx_env/bots/data/value-classic-2p.npz"),
                    help="the network the first round plays with (default: the rollout leaf's)")
    ap.add_argument("--games", default="30000,100000,100000", help="self-play games of each round")
    ap.add_argument("--hidden", default="64x32,128x64,128x64", help="the network fitted in each round")
    ap.add_argument("--epochs", default="6,8,8")
    ap.add_argument("--seed", type=int, default=11, help="round k uses seed + k")
    ap.add_argument("--explore", type=float, default=0.03, help="share of random decisions")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("qwixx_env/bots/data/afterstate-classic-2p.npz"))
    a = ap.parse_args(argv)
    games = [int(g) for g in a.games.split(",")]
    hidden = [tuple(int(h) for h in layer.split("x")) for layer in a.hidden.split(",")]
    epochs = [int(e) for e in a.epochs.split(",")]
    if not len(games) == len(hidden) == len(epochs):
        raise SystemExit(f"--games, --hidden, --epochs: got {len(games)}, {len(hidden)}, {len(epochs)} rounds; "
                         "expected the same number")
    net = read_npz(a.start)
    reports = []
    for k, (g, h, e) in enumerate(zip(games, hidden, epochs)):
        t0 = time.time()
        x, y, game = collect(net, g, a.seed + k, a.explore, a.threads)
        print(f"round {k + 1}: {len(x):,} positions from {g:,} games in {time.time() - t0:.0f} s", flush=True)
        arrays, report = value_leaf.fit(x, y, game, epochs=e, seed=a.seed + k, hidden=h)
        report.update(round=k + 1, games=g, hidden=list(h), epochs=e, seconds=round(time.time() - t0, 1))
        print(json.dumps(report), flush=True)
        reports.append(report)
        net = tuple(arrays[n] for n in ("w1", "b1", "w2", "b2", "w3", "b3"))
    buf = io.BytesIO()
    np.savez(buf, **arrays, meta=np.array(json.dumps({"start": str(a.start), "seed": a.seed, "rounds": reports})))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(a.out, buf.getvalue())
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
