"""Train a win-chance network (`policies.value`) on heuristic games: the `rollout` bot's learned leaf
(2 players) and the start of the `afterstate` bot's value iteration (`training/afterstate.py`).

Plays heuristic-against-heuristic games with `BatchedQwixx` (a small share of decisions is
random, so positions a search might reach are covered too), records every position at the
start of a roll from every seat's side (`value_features`) with who went on to win, and fits
a small multi-layer perceptron with torch (binary cross-entropy). The weights are written
atomically as a win-chance network file (`qwixx_env.nets.write_win_chance`) the bot reads with
numpy alone::

    python -m qwixx_env.training.value_leaf --games 40000 --seed 1 --epochs 6   # the shipped file
    python -m qwixx_env.training.value_leaf --players 3 --games 150000 --hidden 128x64 --epochs 8 \
        --out qwixx_env/nets/data/afterstate-classic-3p            # the 3-player afterstate network
    python -m qwixx_env.training.value_leaf --players 4 --games 120000 --hidden 128x64 --epochs 8 \
        --out qwixx_env/nets/data/afterstate-classic-4p            # and the 4-player one

It prints the held-out log loss of the network next to a logistic fit on the heuristic's
evaluation alone (what the network must beat to be worth shipping).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from numba import njit

from qwixx_env.arena.stats import win_shares
from qwixx_env.envs.batched import BatchedQwixx
from qwixx_env.nets.win_chance import network_name, networks_dir, write_win_chance
from qwixx_env.policies.heuristic import weights_array
from qwixx_env.policies.recorded import play_recorded
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.value import NUM_FEATURES, num_features  # noqa: F401 (NUM_FEATURES: the 2-player width, read by callers)

HIDDEN = (64, 32)


def no_network(num_players: int = 2) -> tuple[np.ndarray, ...]:
    """A placeholder network for `play_recorded` when no seat uses one."""
    return (np.zeros((num_features(num_players), 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(1),
            np.zeros((1, 1)), np.zeros(1))


@njit
def _seed_numba(seed):
    """Seed numba's own generator (np.random inside compiled code)."""
    np.random.seed(seed)  # noqa: NPY002 (seeds the compiled code's legacy generator)


def record_games(games: int, seed: int, explore: float, net=None, uses_net=None, records=None,
                 num_players: int = 2):
    """Play `games` classic games of `num_players` with `play_recorded` (dice, exploration
    draws and random moves all seeded from `seed`); every seat plays the heuristic and is
    recorded unless `uses_net` / `records` ((games, num_players) bool) say otherwise. Returns
    (features, win share of the seat, game index, seat) of every recorded roll start."""
    engine = BatchedQwixx(games, num_players=num_players, autoreset=False)
    engine.reset(seed=seed)
    st, tb = engine.state, engine.variant.tables
    everyone = np.ones((games, num_players), np.bool_)
    uses_net = ~everyone if uses_net is None else uses_net
    records = everyone if records is None else records
    cap = games * 50 * num_players  # roll starts: far above any game's
    feats = np.zeros((cap, num_features(num_players)), np.float32)
    rows_game = np.zeros(cap, np.int64)
    rows_seat = np.zeros(cap, np.int64)
    _seed_numba(seed)  # the exploration draws
    rng = np.full(games, seed * 2 + 1, np.uint64)
    net = no_network(num_players) if net is None else net
    n = play_recorded(st, tb, weights_array(), net, uses_net, records, explore, rng, feats, rows_game, rows_seat,
                      new_scratch(engine.variant, num_players, net))
    share = win_shares(engine.engine.scores())
    return feats[:n], share[rows_game[:n], rows_seat[:n]].astype(np.float32), rows_game[:n], rows_seat[:n]


def collect(games: int, seed: int, explore: float, num_players: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, win share of the seat, game index) of every roll start of `games`
    games of `num_players` heuristics."""
    return record_games(games, seed, explore, num_players=num_players)[:3]


def hidden_sizes(text: str) -> tuple[int, int]:
    """The two hidden layer sizes of a `--hidden` value such as ``"128x64"``; `SystemExit`
    naming it when it is not two positive sizes."""
    hidden = tuple(int(h) for h in text.split("x"))
    if len(hidden) != 2 or min(hidden) < 1:
        raise SystemExit(f"--hidden: got {text!r}; expected two layer sizes such as 64x32")
    return hidden


def fit(x: np.ndarray, y: np.ndarray, game: np.ndarray, *, epochs: int, seed: int,
        hidden: tuple[int, int] = HIDDEN) -> tuple[dict, dict]:
    """Train a network with `hidden` units; (numpy weights, report with held-out log losses)."""
    import torch

    torch.manual_seed(seed)
    held = game % 10 == 0  # a tenth of the games, whole, held out
    xt, yt = torch.from_numpy(x[~held]), torch.from_numpy(y[~held])
    xv, yv = torch.from_numpy(x[held]), torch.from_numpy(y[held])
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], hidden[0]), torch.nn.ReLU(),
        torch.nn.Linear(hidden[0], hidden[1]), torch.nn.ReLU(),
        torch.nn.Linear(hidden[1], 1),
    )
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    batch = 4096
    for epoch in range(epochs):
        perm = torch.randperm(len(xt))
        for g in opt.param_groups:
            g["lr"] = 2e-3 * (1 - epoch / epochs) + 1e-4
        for i in range(0, len(xt), batch):
            idx = perm[i : i + batch]
            opt.zero_grad()
            loss = loss_fn(net(xt[idx]).squeeze(1), yt[idx])
            loss.backward()
            opt.step()
        with torch.no_grad():
            val = float(loss_fn(net(xv).squeeze(1), yv))
        print(f"epoch {epoch + 1}/{epochs}: held-out log loss {val:.4f}", flush=True)
    # the baseline: a logistic fit on the heuristic's evaluation (feature -3) alone
    pv = torch.nn.Linear(1, 1)
    opt2 = torch.optim.LBFGS(pv.parameters(), max_iter=100)
    col = x.shape[1] - 3

    def closure():
        opt2.zero_grad()
        loss = loss_fn(pv(xt[:, col : col + 1]).squeeze(1), yt)
        loss.backward()
        return loss

    opt2.step(closure)
    with torch.no_grad():
        base = float(loss_fn(pv(xv[:, col : col + 1]).squeeze(1), yv))
        prior = float(loss_fn(torch.zeros(len(yv)), yv))
    layers = [m for m in net if isinstance(m, torch.nn.Linear)]
    arrays = {}
    for k, layer in enumerate(layers, 1):
        arrays[f"w{k}"] = layer.weight.detach().numpy().T.astype(np.float64).copy()
        arrays[f"b{k}"] = layer.bias.detach().numpy().astype(np.float64).copy()
    report = {"held_out_log_loss": val, "heuristic_logistic_log_loss": base, "coin_log_loss": prior,
              "train_rows": int(len(xt)), "held_out_rows": int(len(xv))}
    return arrays, report


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])  # None under -OO
    ap.add_argument("--games", type=int, default=40000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--explore", type=float, default=0.03, help="share of random decisions")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--hidden", default="x".join(map(str, HIDDEN)), help="the two hidden layers, e.g. 128x64")
    ap.add_argument("--players", type=int, default=2, help="table size, 2 or more (classic)")
    ap.add_argument("--out", type=Path, default=None, help="default: qwixx_env/nets/data/value-classic-<P>p")
    a = ap.parse_args(argv)
    if not 2 <= a.players <= 5:
        raise SystemExit(f"--players: got {a.players}; expected 2 to 5")
    hidden = hidden_sizes(a.hidden)
    out = a.out or networks_dir() / network_name("value", "classic", a.players)
    t0 = time.time()
    x, y, game = collect(a.games, a.seed, a.explore, a.players)
    print(f"{len(x):,} positions from {a.games:,} games in {time.time() - t0:.0f} s", flush=True)
    arrays, report = fit(x, y, game, epochs=a.epochs, seed=a.seed, hidden=hidden)
    report.update(games=a.games, seed=a.seed, explore=a.explore, epochs=a.epochs, hidden=list(hidden),
                  num_players=a.players, num_features=int(x.shape[1]), seconds=round(time.time() - t0, 1))
    print(json.dumps(report, indent=1))
    out.parent.mkdir(parents=True, exist_ok=True)
    net = tuple(arrays[n] for n in ("w1", "b1", "w2", "b2", "w3", "b3"))
    print(f"wrote {write_win_chance(out, net, variant='classic', num_players=a.players, meta=report)}")


if __name__ == "__main__":
    main()
