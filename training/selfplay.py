"""Teacher-free self-play: a win-chance network learned from random weights by playing itself.

The learner is TD-Gammon's recipe on this package's afterstates. A small network (ReLU,
ReLU, a logit) rates a position between rolls from one seat's side, over the *plain*
features (`policies.value.NO_HEURISTIC`: the sheets, locked rows, who rolls next and the
margin; nothing a scripted bot computes). Its policy crosses each legal action on a scratch
sheet and plays the best-rated one (`policies.afterstate`; the active player's white action
rated with its best colour follow-up). Each round:

1. the policy plays `games` games against itself (every seat recorded, a share `explore` of
   its decisions random) and, in a share `snapshot_share` of them, against a frozen snapshot
   of itself (only its own seats recorded); a new snapshot is taken every `snapshot_every`
   rounds (`policies.selfplay.play_games`, compiled, on `threads` threads);
2. every recorded roll start is labelled with a TD(lambda) target: along each seat's
   positions of a game, the last keeps the outcome (1 win, 0 loss, a tie its share) and each
   earlier one blends the network's rating of the next (1 - lambda) with the next target
   (lambda);
3. the same network is trained on them for `epochs` passes (Adam, binary cross-entropy).

No behaviour cloning, no warm start and no scripted opponent: scripted bots (`random`,
`greedy`, `heuristic`) appear only in the evaluations, every `eval_every` rounds, on deals
no round trains on (dice seeds from `EVAL_SEED`, each deal played with seats swapped), whose
win shares with their standard errors make the learning curve (`curve.json`, over wall time
and the learner's decisions). The run stops after `rounds` rounds or `hours` of wall time,
whichever comes first, and writes its network as a win-chance network file
(`final.json` + `final.npz`, ``"features": "plain"``) that the `selfplay` bot reads with
numpy alone::

    qwixx-train --engine selfplay selfplay_classic_2p          # a shipped config, by name
    python -m qwixx_env.training.selfplay configs/selfplay_classic_2p.yaml --seed 1 --out runs/sp1

docs/research/self-play.md has what was tried and what it reaches.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env import extras
from qwixx_env.arena.stats import win_shares
from qwixx_env.core.compile import kernel
from qwixx_env.core.state import OVER
from qwixx_env.core.variant import get_variant, variant_names
from qwixx_env.envs.batched import BatchedQwixx
from qwixx_env.files import write_atomically
from qwixx_env.nets.policy import NumpyPolicy
from qwixx_env.nets.win_chance import write_win_chance
from qwixx_env.policies.heuristic import weights_array
from qwixx_env.policies.recorded import record_roll_start
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.scripted import POLICY_NAMES, ScriptedPolicies, greedy_defaults
from qwixx_env.policies.selfplay import LEARNER, SCRIPTED, SNAPSHOT, play_games
from qwixx_env.policies.value import NO_HEURISTIC, plain_num_features
from qwixx_env.training.afterstate import td_labels
from qwixx_env.training.config_yaml import config_path, dataclass_values, read_yaml, with_variant

EVAL_SEED = 5_000_000
"""First dice seed of the evaluation deals (the same deals at every evaluation; no round's)."""
TRAIN_SEED_STRIDE = 100_000_000
"""Round games of a run with seed k are dealt seeds from (k + 1) * this: never an evaluation's
or the benchmark's (`qwixx_env.benchmark.FIRST_SEED`, 10**10)."""

HOW_KEYS = ("hours", "rounds", "threads", "runners", "ray_address")
"""Config keys that say how long and where a run plays, not what it learns: they may change on
`--resume` (the games a round plays depend on the seed alone)."""

TEACHER_KEYS = ("bc", "warm_start", "inputs", "teacher", "start")
"""Keys of other configs that would bring a teacher in: refused by name."""


@dataclasses.dataclass(frozen=True)
class SelfPlayConfig:
    """One self-play run (see the module docstring). Every field has the shipped default."""

    name: str
    variant: str = "classic"
    num_players: int = 2
    seed: int = 0
    hidden: tuple[int, int] = (128, 64)
    games: int = 4000  # self-play games a round
    rounds: int = 1000  # at most; `hours` usually ends the run first
    hours: float = 2.0  # wall-time budget, evaluations included
    explore: float = 0.03  # share of the recorded seats' decisions played at random
    td_lambda: float = 0.7
    epochs: int = 2
    learning_rate: float = 1e-3
    batch_size: int = 1024
    snapshot_share: float = 0.2  # share of a round's games against a snapshot of the learner
    snapshot_every: int = 10  # rounds
    eval_every: int = 5  # rounds (the first and last round are always evaluated)
    eval_deals: int = 500  # each played with seats swapped: P games a deal, a lineup; 2 at least (an error needs two)
    eval_opponents: tuple[str, ...] = ("random", "greedy", "heuristic")
    threads: int = 2  # in this process, when runners is 0
    # Not teacher-free: the first start_rounds rounds' games are played by this pretrained policy
    # network (a checkpoint's name or path) in every seat, their positions labelled with who won
    # (the learner learns to rate its play), then the learner plays itself as from scratch.
    start_policy: str | None = None
    start_rounds: int = 10
    runners: int = 0  # Ray actors playing each round's games and evaluations (the rllib extra); 0: none
    ray_address: str | None = None  # a running Ray cluster for the runners; None: a local Ray

    def __post_init__(self) -> None:
        def bad(field: str, accepted: str) -> ValueError:
            return ValueError(f"{field}: got {getattr(self, field)!r}; expected {accepted}")

        if not isinstance(self.name, str) or not self.name or "/" in self.name:
            raise bad("name", "a non-empty name without '/' (the run folder's)")
        if self.variant not in variant_names():
            raise bad("variant", f"one of {list(variant_names())}")
        for field, low in (("num_players", 2), ("games", 1), ("rounds", 1), ("epochs", 1), ("batch_size", 1),
                           ("snapshot_every", 1), ("eval_every", 1), ("eval_deals", 2), ("threads", 1)):
            value = getattr(self, field)
            if type(value) is not int or value < low:
                raise bad(field, f"an integer of at least {low}")
        if self.start_policy is not None:
            if not isinstance(self.start_policy, str) or not self.start_policy:
                raise bad("start_policy", "null or a pretrained policy checkpoint's name or path")
            if self.start_policy in POLICY_NAMES or self.start_policy in ("rollout", "afterstate", "solo_optimal"):
                raise bad("start_policy", "a pretrained policy checkpoint (e.g. 'ppo-classic-2p'); a scripted or "
                          "search bot is a teacher, which the self-play learner does not take")
        if type(self.start_rounds) is not int or self.start_rounds < 1:
            raise bad("start_rounds", "an integer of at least 1")
        if type(self.runners) is not int or not 0 <= self.runners <= 256:
            raise bad("runners", "an integer from 0 (play in this process) to 256 (Ray actors)")
        if self.ray_address is not None and (not isinstance(self.ray_address, str) or not self.ray_address):
            raise bad("ray_address", "null (a local Ray) or a Ray cluster's address, e.g. '10.0.0.5:6379' or 'auto'")
        if self.ray_address is not None and not self.runners:
            raise bad("ray_address", "null when runners is 0 (games are played in this process then)")
        if self.num_players > 5:
            raise bad("num_players", "2 to 5")
        if type(self.seed) is not int or not 0 <= self.seed < 90:
            raise bad("seed", "an integer from 0 to 89 (its deals stay below the benchmark's)")
        if len(self.hidden) != 2 or any(type(h) is not int or h < 1 for h in self.hidden):
            raise bad("hidden", "two positive layer sizes, e.g. [128, 64]")
        for field, low, high in (("explore", 0.0, 1.0), ("td_lambda", 0.0, 1.0), ("snapshot_share", 0.0, 1.0)):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise bad(field, f"a number from {low} to {high}")
        for field in ("hours", "learning_rate"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise bad(field, "a positive number")
        unknown = [o for o in self.eval_opponents if o not in POLICY_NAMES]
        if unknown or not self.eval_opponents:
            raise bad("eval_opponents", f"scripted bots among {list(POLICY_NAMES)} (evaluation only)")

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}


def config_from_dict(data: Any, source: str = "config", relative_to: str | os.PathLike[str] | None = None
                     ) -> SelfPlayConfig:
    """A checked `SelfPlayConfig` from plain data (as read from YAML). A key that would bring
    a teacher in (`TEACHER_KEYS`) is refused by name, as is any key the learner does not know;
    a ``variant`` naming a sheet file is read relative to `relative_to` (`with_variant`)."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: got {type(data).__name__}; expected a mapping of keys to values")
    try:
        data = with_variant(data, relative_to)
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None
    teacher = [key for key in TEACHER_KEYS if key in data]
    if teacher:
        shown = ", ".join(f"{key}: {data[key]!r}" for key in teacher)
        raise ValueError(
            f"{source}: {shown}: the self-play learner takes no teacher (no behaviour cloning, warm start or inputs "
            "from a scripted or search bot); it starts from random weights and plays itself and its snapshots. "
            "Scripted bots belong in eval_opponents only"
        )
    if "opponents" in data:
        raise ValueError(
            f"{source}: opponents: got {data['opponents']!r}; the self-play learner's opponents are itself and its "
            "snapshots (snapshot_share, snapshot_every); scripted bots belong in eval_opponents only"
        )
    return SelfPlayConfig(**dataclass_values(data, SelfPlayConfig, "selfplay", source, ("hidden", "eval_opponents")))


def load_config(name_or_path: str | os.PathLike[str]) -> SelfPlayConfig:
    """A self-play config from a YAML file's path or a shipped config's name."""
    path = config_path(name_or_path)
    return config_from_dict(read_yaml(path), str(path), path.parent)


# --- the network ----------------------------------------------------------------------------------


def new_model(width: int, hidden: tuple[int, int], seed: int):
    """A win-chance network with random weights (torch's default initialisation, seeded)."""
    import torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(width, hidden[0]), torch.nn.ReLU(),
        torch.nn.Linear(hidden[0], hidden[1]), torch.nn.ReLU(),
        torch.nn.Linear(hidden[1], 1),
    )


def kernel_network(model) -> tuple[np.ndarray, ...]:
    """The model's layers as the kernels take them: (w1, b1, w2, b2, w3, b3), weights (in, out)."""
    out: list[np.ndarray] = []
    for layer in (m for m in model if hasattr(m, "weight")):
        out += [np.ascontiguousarray(layer.weight.detach().numpy().T, np.float64),
                np.ascontiguousarray(layer.bias.detach().numpy(), np.float64)]
    return tuple(out)


# --- playing --------------------------------------------------------------------------------------


def split(n: int, parts: int) -> list[tuple[int, int]]:
    """(start, count) of `parts` near-equal slices of range(n)."""
    sizes = [n // parts + (1 if k < n % parts else 0) for k in range(parts)]
    starts = np.cumsum([0, *sizes[:-1]])
    return [(int(a), b) for a, b in zip(starts, sizes) if b > 0]


def play_part(variant: str, num_players: int, learner, snapshot, kinds: np.ndarray, records: np.ndarray,
              seeds: np.ndarray, explore: float, td_lambda: float) -> dict[str, Any]:
    """Play one game per row of `kinds` ((games, P): `policies.selfplay` seat kinds), game i dealt
    dice seed seeds[i] (its exploration drawn from its own generator, seeded from the same
    seed). Returns the recorded roll starts' features ``x`` with their TD(lambda) targets ``y``
    (`training.afterstate.td_labels` under `learner`; float32), every game's final ``scores``
    and the learner's ``decisions``. One thread's (or one runner's) share of a round: the
    games of a part are independent of how a round is cut into parts."""
    table = get_variant(variant)
    width = learner[0].shape[0]
    n = len(kinds)
    engine = BatchedQwixx(n, num_players=num_players, variant=variant, autoreset=False)
    engine.reset(seed=[int(s) for s in seeds])
    cap = int(records.sum()) * 80 + 1
    feats = np.zeros((cap, width), np.float64)
    rows_game = np.zeros(cap, np.int64)
    rows_seat = np.zeros(cap, np.int64)
    rng = seeds.astype(np.uint64) * np.uint64(2) + np.uint64(1)
    max_skip, worry = greedy_defaults(num_players)
    policies = ScriptedPolicies(max_skip, worry, weights_array(), rng.copy())
    rows, decisions = play_games(engine.state, table.tables, NO_HEURISTIC, learner, snapshot, kinds, records,
                                 explore, rng, policies, feats, rows_game, rows_seat,
                                 new_scratch(table, num_players, learner))
    scores = engine.engine.scores()
    x = feats[:rows]
    share = win_shares(scores)[rows_game[:rows], rows_seat[:rows]].astype(np.float32)
    y = td_labels(learner, x, share, rows_game[:rows], rows_seat[:rows], td_lambda) if rows else share
    return {"x": x.astype(np.float32), "y": np.asarray(y, np.float32), "scores": scores, "decisions": int(decisions)}


def join_parts(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The parts of `play_part`, in order, as one."""
    return {"x": np.concatenate([p["x"] for p in parts]), "y": np.concatenate([p["y"] for p in parts]),
            "scores": np.concatenate([p["scores"] for p in parts]), "decisions": sum(p["decisions"] for p in parts)}


@kernel()
def record_new_rolls(st, tb, plain, last_roll, records, feats, rows_game, rows_seat, n, ws):
    """For games stepped from Python (`play_policy_part`): every live game whose roll changed
    since `last_roll` has the plain features of its roll start written from the sides in
    `records`, as `policies.selfplay.play_games` writes them, and `last_roll` is brought up to
    date. Returns the rows written so far."""
    for b in range(st.phase.shape[0]):
        if st.phase[b] != OVER and st.roll[b] != last_roll[b]:
            last_roll[b] = st.roll[b]
            n = record_roll_start(st, tb, b, plain, records, feats, rows_game, rows_seat, n, ws)
    return n


@functools.lru_cache(maxsize=4)
def start_policy(name: str, variant: str, num_players: int) -> NumpyPolicy:
    """A pretrained policy network for the start rounds, checked against the run's table."""
    policy = NumpyPolicy.load(name)
    if (policy.variant, policy.num_players) != (variant, num_players):
        raise ValueError(f"start_policy: got {name!r}, a policy for {policy.variant} with {policy.num_players} "
                         f"player(s); the run plays {variant} with {num_players}")
    return policy


def play_policy_part(variant: str, num_players: int, policy_name: str, seeds: np.ndarray, width: int) -> dict[str, Any]:
    """Play one game per seed with the pretrained policy `policy_name` in every seat (its
    deterministic action, `nets.NumpyPolicy`), every seat's roll starts recorded; each row is
    labelled with its seat's win share of the game (lambda = 1: the value of that policy's
    play). The same return as `play_part` (``decisions``: the policy's)."""
    policy = start_policy(policy_name, variant, num_players)
    table = get_variant(variant)
    n = len(seeds)
    engine = BatchedQwixx(n, num_players=num_players, variant=variant, autoreset=False)
    obs, masks = engine.reset(seed=[int(s) for s in seeds])
    cap = n * num_players * 80 + 1
    feats = np.zeros((cap, width), np.float64)
    rows_game = np.zeros(cap, np.int64)
    rows_seat = np.zeros(cap, np.int64)
    last_roll = np.full(n, -1, np.int64)
    records = np.ones((n, num_players), np.bool_)
    sizer = (np.zeros((width, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(1))
    ws = new_scratch(table, num_players, sizer)
    rows, decisions = 0, 0
    actions = np.zeros(n, np.int64)
    while True:
        rows = record_new_rolls(engine.state, table.tables, NO_HEURISTIC, last_roll, records, feats, rows_game,
                                rows_seat, rows, ws)
        live = engine.state.phase != OVER
        if not live.any():
            break
        actions[:] = 0
        actions[live] = policy(obs[live], masks[live])
        obs, masks, _, _ = engine.step(actions)
        decisions += int(live.sum())
    scores = engine.engine.scores()
    share = win_shares(scores)[rows_game[:rows], rows_seat[:rows]]
    return {"x": feats[:rows].astype(np.float32), "y": share.astype(np.float32), "scores": scores,
            "decisions": decisions}


class ThreadPlayers:
    """Plays a round's games in this process, cut into `threads` parts played at once (the
    kernels release the GIL)."""

    def __init__(self, cfg: SelfPlayConfig):
        self.cfg = cfg
        self.pool = ThreadPoolExecutor(cfg.threads)

    def play(self, learner, snapshot, kinds: np.ndarray, records: np.ndarray, seeds: np.ndarray,
             explore: float) -> dict[str, Any]:
        cfg = self.cfg
        return self.in_parts(len(seeds), lambda a, n: play_part(
            cfg.variant, cfg.num_players, learner, snapshot, kinds[a : a + n], records[a : a + n], seeds[a : a + n],
            explore, cfg.td_lambda))

    def play_policy(self, policy_name: str, seeds: np.ndarray, width: int) -> dict[str, Any]:
        cfg = self.cfg
        return self.in_parts(len(seeds), lambda a, n: play_policy_part(
            cfg.variant, cfg.num_players, policy_name, seeds[a : a + n], width))

    def in_parts(self, games: int, part) -> dict[str, Any]:
        """`part(start, count)` for each thread's slice of `games`, joined in order."""
        return join_parts(list(self.pool.map(lambda piece: part(*piece), split(games, self.cfg.threads))))

    def close(self) -> None:
        self.pool.shutdown()


def players(cfg: SelfPlayConfig) -> Any:
    """What plays a run's games: `ThreadPlayers`, or with ``runners`` set, Ray actors
    (`training.selfplay_ray.RayPlayers`, the rllib extra)."""
    if cfg.runners:
        absent = extras.missing("rllib", ["ray"])
        if absent:
            raise ValueError(f"runners: got {cfg.runners}; {extras.needs('Ray runners', 'rllib', absent)}, "
                             "or set runners: 0 to play in this process")
        from qwixx_env.training.selfplay_ray import RayPlayers

        return RayPlayers(cfg)
    return ThreadPlayers(cfg)


def round_kinds(cfg: SelfPlayConfig, round_index: int) -> tuple[np.ndarray, np.ndarray]:
    """Seat kinds and recorded seats of a round's games: most games the learner in every seat
    (all recorded); the last `snapshot_share` of them, the learner in one seat (in turn)
    against its snapshot (only the learner's seat recorded)."""
    G, P = cfg.games, cfg.num_players
    kinds = np.full((G, P), LEARNER, np.int64)
    records = np.ones((G, P), np.bool_)
    against = int(round(G * cfg.snapshot_share)) if round_index > 0 else 0
    if against:
        rows = np.arange(G - against, G)
        kinds[rows] = SNAPSHOT
        records[rows] = False
        seat = (rows + round_index) % P
        kinds[rows, seat] = LEARNER
        records[rows, seat] = True
    return kinds, records


def deal_shares(cfg: SelfPlayConfig, net, opponent: str, first_seed: int = EVAL_SEED, deals: int | None = None,
                playing: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """`net` against P - 1 copies of the scripted `opponent` on `deals` deals (dice seeds from
    `first_seed`), each played P times with the network in each seat: its win share on each
    deal (the mean over its seats) and its games' scores ((deals * P, P), the network's seat
    turning). `playing`: what plays the games (`players`; by default this process's threads)."""
    P, D = cfg.num_players, cfg.eval_deals if deals is None else deals
    own = playing is None
    playing = ThreadPlayers(cfg) if own else playing
    try:
        kinds = np.full((D * P, P), SCRIPTED + POLICY_NAMES.index(opponent), np.int64)
        seat = np.tile(np.arange(P), D)
        kinds[np.arange(D * P), seat] = LEARNER
        seeds = first_seed + np.repeat(np.arange(D), P)
        scores = playing.play(net, net, kinds, np.zeros((D * P, P), np.bool_), seeds, 0.0)["scores"]
    finally:
        if own:
            playing.close()
    return win_shares(scores)[np.arange(D * P), seat].reshape(D, P).mean(axis=1), scores


def evaluate(cfg: SelfPlayConfig, net, playing: Any = None) -> dict[str, dict[str, float]]:
    """The learner against each of `eval_opponents` on the evaluation deals (`deal_shares` from
    `EVAL_SEED`): its mean win share, the standard error over deals (the P games of a deal
    share their dice) and the mean scores."""
    P, D = cfg.num_players, cfg.eval_deals
    seat = np.tile(np.arange(P), D)
    out = {}
    for name in cfg.eval_opponents:
        share, result = deal_shares(cfg, net, name, playing=playing)
        mine = result[np.arange(D * P), seat]
        theirs = (result.sum(axis=1) - mine) / (P - 1)
        out[name] = {"win_share": float(share.mean()), "se": float(share.std(ddof=1) / math.sqrt(D)),
                     "score": float(mine.mean()), "opponent_score": float(theirs.mean()), "games": D * P}
    return out


# --- training -------------------------------------------------------------------------------------


def train_round(model, optimizer, x: np.ndarray, y: np.ndarray, cfg: SelfPlayConfig, seed: int) -> float:
    """`cfg.epochs` passes of Adam over (x, y); the mean binary cross-entropy of the last pass."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.float32))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    total = 0.0
    for _ in range(cfg.epochs):
        perm = torch.randperm(len(xt), generator=generator)
        total, batches = 0.0, 0
        for i in range(0, len(xt), cfg.batch_size):
            idx = perm[i : i + cfg.batch_size]
            optimizer.zero_grad()
            loss = loss_fn(model(xt[idx]).squeeze(1), yt[idx])
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        total /= max(batches, 1)
    return total


class SelfPlayRun:
    """A run in a folder: `run()` trains (or resumes from ``state.pt``) and writes ``config.json``,
    ``curve.json`` (one row per evaluation), ``log.jsonl`` (one row per round) and the final
    network (``final.json`` + ``final.npz``)."""

    def __init__(self, cfg: SelfPlayConfig, out: str | os.PathLike[str], *, resume: bool = False,
                 say: Any = print):
        self.cfg, self.out, self.resume, self.say = cfg, Path(out), resume, say
        self.playing: Any = None  # ThreadPlayers or RayPlayers while running

    def run(self) -> dict[str, Any]:
        import torch

        cfg, out = self.cfg, self.out
        torch.set_num_threads(1)
        out.mkdir(parents=True, exist_ok=True)
        width = plain_num_features(cfg.num_players, get_variant(cfg.variant).num_rows)
        model = new_model(width, cfg.hidden, cfg.seed)
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
        state: dict[str, Any] = {"round": 0, "seconds": 0.0, "decisions": 0, "games": 0, "curve": []}
        snapshot = kernel_network(model)
        if self.resume and (out / "state.pt").is_file():
            saved = torch.load(out / "state.pt", weights_only=False)
            changed = sorted(k for k, v in cfg.to_dict().items()
                             if k not in HOW_KEYS and saved["config"].get(k) != v)
            if changed:
                raise ValueError(f"--resume: {out} was run with other {changed}; start a new --out "
                                 f"(only {list(HOW_KEYS)} may change on resume)")
            model.load_state_dict(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
            snapshot = tuple(saved["snapshot"])
            state = saved["state"]
            self.say(f"resumed {out} at round {state['round']} ({state['seconds'] / 60:.1f} min)")
        elif (out / "state.pt").exists() or (out / "final.json").exists():
            raise FileExistsError(f"{out} holds a run already; pass --resume to continue it, or another --out")
        write_atomically(out / "config.json", (json.dumps(cfg.to_dict(), indent=1) + "\n").encode())
        budget = cfg.hours * 3600.0
        t0 = time.perf_counter() - state["seconds"]
        self.playing = players(cfg)  # runners start inside the wall time they cost
        try:
            return self._rounds(model, optimizer, snapshot, state, t0, budget)
        finally:
            self.playing.close()

    def _rounds(self, model, optimizer, snapshot, state: dict[str, Any], t0: float, budget: float) -> dict[str, Any]:
        cfg, out = self.cfg, self.out
        while state["round"] < cfg.rounds and time.perf_counter() - t0 < budget:
            k = state["round"]
            net = kernel_network(model)
            if k == 0 or (k % cfg.eval_every == 0):
                self._evaluate(net, state, t0)
            if k > 0 and k % cfg.snapshot_every == 0:
                snapshot = net
            kinds, records = round_kinds(cfg, k)
            first_seed = (cfg.seed + 1) * TRAIN_SEED_STRIDE + state["games"]
            tp = time.perf_counter()
            seeds = first_seed + np.arange(cfg.games)
            if cfg.start_policy is not None and k < cfg.start_rounds:
                data = self.playing.play_policy(cfg.start_policy, seeds, net[0].shape[0])
                state["start_decisions"] = state.get("start_decisions", 0) + data["decisions"]
                data["decisions"] = 0  # the start policy's, not the learner's
            else:
                data = self.playing.play(net, snapshot, kinds, records, seeds, cfg.explore)
            y = data["y"]
            tp = time.perf_counter() - tp
            loss = train_round(model, optimizer, data["x"], y, cfg, cfg.seed * 100_000 + k)
            state["round"] = k + 1
            state["games"] += cfg.games
            state["decisions"] += int(data["decisions"])
            state["seconds"] = time.perf_counter() - t0
            row = {"round": k + 1, "minutes": round(state["seconds"] / 60, 2), "decisions": state["decisions"],
                   "positions": int(len(y)), "loss": round(loss, 4), "play_seconds": round(tp, 1),
                   "mean_score": round(float(data["scores"].mean()), 2)}
            with open(out / "log.jsonl", "a", encoding="utf-8") as log:
                log.write(json.dumps(row) + "\n")
            self._save(model, optimizer, snapshot, state)
        self._evaluate(kernel_network(model), state, t0, final=True)
        self._save(model, optimizer, snapshot, state)
        teacher = None if cfg.start_policy is None else (
            f"{cfg.start_policy} (played every seat of the first {cfg.start_rounds} rounds)")
        meta = {"teacher": teacher, "learner": "self-play TD(lambda) on afterstates (qwixx_env.training.selfplay)",
                "config": cfg.to_dict(), "rounds": state["round"], "games": state["games"],
                "decisions": state["decisions"], "minutes": round(state["seconds"] / 60, 1),
                "final_evaluation": state["curve"][-1]}
        write_win_chance(out / "final", kernel_network(model), variant=cfg.variant, num_players=cfg.num_players,
                         meta=meta, features="plain")
        return {"out": str(out), **meta}

    def _evaluate(self, net, state: dict[str, Any], t0: float, final: bool = False) -> None:
        if state["curve"] and state["curve"][-1]["round"] == state["round"]:
            return  # this round is evaluated already (a resumed or finished run)
        te = time.perf_counter()
        result = evaluate(self.cfg, net, self.playing)
        row = {"round": state["round"], "minutes": round((time.perf_counter() - t0) / 60, 2),
               "decisions": state["decisions"], "games": state["games"],
               "eval_seconds": round(time.perf_counter() - te, 1),
               **{name: {k: round(v, 4) for k, v in r.items()} for name, r in result.items()}}
        state["curve"].append(row)
        write_atomically(self.out / "curve.json", (json.dumps(state["curve"], indent=1) + "\n").encode())
        shown = ", ".join(f"{n} {r['win_share']:.1%} ± {r['se']:.1%}" for n, r in result.items())
        self.say(f"{'final' if final else 'round ' + str(state['round'])}: {row['minutes']:.1f} min, "
                 f"{state['decisions']:,} decisions: {shown}")

    def _save(self, model, optimizer, snapshot, state: dict[str, Any]) -> None:
        import torch

        tmp = self.out / ".state.pt.tmp"
        torch.save({"config": self.cfg.to_dict(), "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "snapshot": list(snapshot), "state": state}, tmp)
        os.replace(tmp, self.out / "state.pt")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="qwixx-train --engine selfplay",
                                 description="Teacher-free self-play (TD(lambda) on afterstates) from a YAML config.")
    ap.add_argument("config", help="YAML config: a file's path or a shipped config's name, e.g. selfplay_classic_2p")
    ap.add_argument("--out", help="run folder (default runs/<name>)")
    ap.add_argument("--resume", action="store_true", help="continue the run in --out from its last round")
    ap.add_argument("--seed", type=int, help="overrides the config's seed")
    ap.add_argument("--hours", type=float, help="overrides the config's wall-time budget")
    ap.add_argument("--rounds", type=int, help="overrides the config's rounds")
    ap.add_argument("--threads", type=int, help="overrides the config's threads")
    ap.add_argument("--runners", type=int, help="overrides the config's runners (Ray actors; 0: this process)")
    a = ap.parse_args(argv)
    try:
        cfg = load_config(a.config)
        overrides = {k: getattr(a, k) for k in ("seed", "hours", "rounds", "threads", "runners")
                     if getattr(a, k) is not None}
        cfg = dataclasses.replace(cfg, **overrides) if overrides else cfg
    except (ValueError, OSError) as err:
        print(f"error: {err}", flush=True)
        return 2
    out = Path(a.out) if a.out else Path("runs") / cfg.name
    try:
        result = SelfPlayRun(cfg, out, resume=a.resume).run()
    except (ValueError, FileExistsError) as err:
        print(f"error: {err}", flush=True)
        return 2
    print(f"wrote {out / 'final.json'} ({result['rounds']} rounds, {result['minutes']} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
