"""The benchmark: one named, versioned protocol per table, that any agent can enter.

>>> from qwixx_env import benchmark
>>> result = benchmark.run("ppo-classic-2p", "classic-2p/v1", workers=2)
>>> result["headline"]            # {"figure": "win share vs heuristic", "value": ..., "interval": [...], ...}
>>> benchmark.run(lambda obs: int(obs["action_mask"].nonzero()[0][0]), "longo-instead-3p")

A protocol (`PROTOCOLS`, named like ``classic-2p/v1``, ``longo-3p/v1`` (Longo, lucky cross as a
bonus) and ``longo-instead-4p/v1``) fixes everything that makes a figure comparable:

- **the lineups**: ``heuristic``: the agent in every seat in turn, every other seat the
  `heuristic` bot; ``rollout`` (the harder one; not solo): the agent against the `rollout`
  search bot, `heuristic` filling the other seats (at 2 players `rollout` alone), again the
  agent in every seat in turn. Solo, the agent plays alone.
- **the deals**: lineup L of the table with index t (`Protocol.index`, the order of
  `PROTOCOLS`) deals dice seeds ``FIRST_SEED + t * TABLE_STRIDE + offset ...`` (offset 0 for
  ``heuristic``, `HARDER_OFFSET` for ``rollout``), one per deal, every seating of a deal
  dealt the same dice (`qwixx_env.arena`). `FIRST_SEED` is 10**10: a training config's seed
  is below 2**32 and its games and evaluations add less than 10**7, so no training run ever
  plays a benchmark deal. The numbers of deals (`Protocol.deals`, `Protocol.harder_deals`)
  give the heuristic lineup's win share a 95% interval of about ±1.5 points at parity.
- **the figures**: the agent's win share (a k-way tie for the top score counts 1/k) with its
  95% interval, its mean margin (its score minus the best other score) and mean score, each
  with its standard error, all clustered by deal (the seatings of a deal share its dice, so
  errors are taken over deals: `qwixx_env.arena.stats.clustered_interval`); solo the mean
  score with its standard error and, in solo classic, the regret to the exact optimum
  (`qwixx_env.solver`). The *headline* is the heuristic lineup's win share, with parity 1/P
  beside it; solo the mean score.

An agent is a bot spec (``"greedy"``, ``"rollout:leaf=afterstate"``), an installed
checkpoint's name, a checkpoint file, a training run's folder (a PPO run's ``final``, an
RLlib run's exported ``policy``), an SB3 ``MaskablePPO`` ``.zip`` (needs the train extra;
one that records its game, as `qwixx-train`'s do, is labelled by its run and checked as a
checkpoint is: `qwixx_env.bots.sb3_zip`), a `BotSpec` (a bot factory included), or a
Python callable from an observation (the AEC env's ``{"observation", "action_mask"}``) to an
action. Every agent is checked against the table before any game: one that does not play it
is refused with a `ValueError` saying what it plays. The figures depend only on the agent and
the protocol: not on the machine or the number of workers (the agent must be deterministic,
or seeded by the seed it is made with).
`qwixx bench` is the command line; docs/benchmark.md says how to cite a protocol.
"""

from __future__ import annotations

import importlib.util
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env import extras, solver
from qwixx_env.arena import run_arena
from qwixx_env.arena.stats import Z95, clustered_interval, mean_and_se, win_shares
from qwixx_env.bots import BotSpec, make_bot, selfplay
from qwixx_env.bots.pretrained import check_trained_table
from qwixx_env.bots.sb3_zip import read_game
from qwixx_env.bots.specs import as_spec, check_params
from qwixx_env.core.checks import check_int
from qwixx_env.core.options import MAX_PLAYERS, TableOptions
from qwixx_env.core.variant import VARIANT_NAMES, get_variant, variant_names
from qwixx_env.envs.qwixx_v0 import raw_env
from qwixx_env.nets import checkpoint_names

FORMAT = "qwixx_env.benchmark/1"
VERSION = 1
FIRST_SEED = 10**10
"""The first dice seed of the benchmark's range, ``FIRST_SEED ... FIRST_SEED + 15 * TABLE_STRIDE``."""
TABLE_STRIDE = 10**6
HARDER_OFFSET = 500_000
HALF_WIDTH = 0.015
"""The 95% half-width the heuristic lineup's deals are sized for, at a win share of 1/P."""
HARDER_GAMES = 400
"""Agent games in the rollout lineup (a search bot at the table: about 0.1 to 0.4 s a game)."""
SOLO_DEALS = 2_000
LINEUPS = ("heuristic", "rollout")
ROLLOUT = BotSpec(label="rollout", name="rollout", params={"threads": 1})
"""The search bot of the harder lineup: the registry's `rollout` with its defaults; one thread,
since the arena's workers already fill the cores (its choices do not depend on the threads)."""
HEURISTIC = "heuristic"
ERRORS = "by deal"
"""The ``errors`` entry of a lineup's figures: its standard errors and intervals are clustered by
deal. Results written before it (no ``errors``) treat every game as independent (Wilson)."""


@dataclass(frozen=True)
class Protocol:
    """One table's benchmark (see the module docstring): its `name`, its table, its index in
    `PROTOCOLS` (which fixes its dice) and the deals of each lineup."""

    name: str
    table: TableOptions
    index: int
    user: bool = False
    """A protocol of a user's sheet (``NAME-Np/user``), not one of the package's (`PROTOCOLS`)."""

    @property
    def players(self) -> int:
        return self.table.num_players

    @property
    def parity(self) -> float | None:
        """The win share of an agent no better than the others (1/P); None solo."""
        return None if self.players == 1 else 1 / self.players

    @property
    def deals(self) -> int:
        """The heuristic lineup's deals: enough that P seats of each give a Wilson half-width
        of `HALF_WIDTH` at a win share of 1/P (solo: `SOLO_DEALS`)."""
        P = self.players
        if P == 1:
            return SOLO_DEALS
        p = 1 / P
        return math.ceil(Z95**2 * p * (1 - p) / HALF_WIDTH**2 / P)

    @property
    def harder_deals(self) -> int:
        """The rollout lineup's deals (`HARDER_GAMES` agent games); 0 solo."""
        return 0 if self.players == 1 else math.ceil(HARDER_GAMES / self.players)

    def seed(self, lineup: str) -> int:
        """The first dice seed of `lineup`'s deals."""
        return FIRST_SEED + self.index * TABLE_STRIDE + (HARDER_OFFSET if lineup == "rollout" else 0)

    def lineups(self) -> tuple[str, ...]:
        return LINEUPS if self.players > 1 else LINEUPS[:1]

    def others(self, lineup: str) -> list[Any]:
        """The bots beside the agent in `lineup`."""
        fill: list[Any] = [HEURISTIC] * (self.players - 1)
        if lineup == "rollout":
            fill[0] = ROLLOUT
        return fill

    def describe(self) -> dict[str, Any]:
        """The protocol as JSON-ready data (recorded with every result)."""
        t = self.table
        out = {
            "name": self.name,
            "variant": t.variant,
            "lucky": t.lucky if t.rules.lucky_count else None,
            "num_players": self.players,
            "parity": self.parity,
            "lineups": {
                lineup: {
                    "others": [o if isinstance(o, str) else o.name for o in self.others(lineup)],
                    "deals": self.deals if lineup == "heuristic" else self.harder_deals,
                    "first_seed": self.seed(lineup),
                }
                for lineup in self.lineups()
            },
        }
        if self.user:  # the figures are only as comparable as the sheet: it goes with them
            out.update(user=True, sheet=get_variant(t.variant).as_dict())
        return out


def _protocols() -> dict[str, Protocol]:
    tables = [("classic", "bonus", "classic"), ("longo", "bonus", "longo"), ("longo", "instead", "longo-instead")]
    out = {}
    for v, (variant, lucky, stem) in enumerate(tables):
        for p in range(1, 6):
            name = f"{stem}-{p}p/v{VERSION}"
            out[name] = Protocol(name, TableOptions(num_players=p, variant=variant, lucky=lucky), 5 * v + p - 1)
    return out


PROTOCOLS: dict[str, Protocol] = _protocols()
"""Every table's protocol by name, in index order: classic 1-5 players, Longo (bonus) 1-5,
Longo (instead) 1-5."""


def user_protocol(variant: str, players: int) -> Protocol:
    """The protocol ``NAME-Np/user`` of a registered variant that is not the package's own (a
    user's sheet, `qwixx_env.core.variant.resolve_variant`): the lineups, deals and dice seeds
    of ``classic-Np/v1``, on that sheet under its own lucky rule. Its figures compare agents on
    that sheet only, and its results are marked ``"user": true`` with the sheet beside them."""
    if variant in VARIANT_NAMES or variant not in variant_names():
        mine = [n for n in variant_names() if n not in VARIANT_NAMES]
        raise ValueError(f"protocol: got a user sheet {variant!r}; expected one registered here {mine} (a sheet "
                         "file given to --variant registers it); the package's own have protocols of their own")
    players = check_int("players", players, minimum=1, maximum=MAX_PLAYERS)
    base = PROTOCOLS[f"classic-{players}p/v{VERSION}"]
    table = TableOptions(num_players=players, variant=variant, lucky=get_variant(variant).lucky_rule or "bonus")
    return Protocol(f"{variant}-{players}p/user", table, base.index, user=True)


def user_protocols() -> list[Protocol]:
    """The protocols of every user's sheet registered in this process, 1 to 5 players each."""
    return [user_protocol(v, p) for v in variant_names() if v not in VARIANT_NAMES for p in range(1, MAX_PLAYERS + 1)]


def protocol(name: str | Protocol) -> Protocol:
    """A protocol by name (``"classic-2p/v1"``; without ``/vN`` the current version), or a user's
    sheet's (``"mixx-2p/user"``, or ``"mixx-2p"``; `user_protocol`)."""
    if isinstance(name, Protocol):
        return name
    if isinstance(name, str):
        full = name if "/" in name else f"{name}/v{VERSION}"
        if full in PROTOCOLS:
            return PROTOCOLS[full]
        stem, _, version = name.partition("/")
        variant, _, players = stem.rpartition("-")
        if version in ("", "user") and variant and variant not in VARIANT_NAMES and variant in variant_names() \
                and players[:-1].isdigit() and players.endswith("p"):
            return user_protocol(variant, int(players[:-1]))
    mine = [f"{v}-Np/user" for v in variant_names() if v not in VARIANT_NAMES]
    also = f", or a user sheet's {mine}" if mine else ", or NAME-Np/user for a user's sheet given to --variant"
    raise ValueError(f"protocol: got {name!r}; expected one of {list(PROTOCOLS)} (the version may be left out){also}")


def protocol_for(table: TableOptions) -> Protocol:
    """The protocol of a table: the package's, or a user sheet's (`user_protocol`)."""
    for p in PROTOCOLS.values():
        if p.table == table:
            return p
    if table.variant not in VARIANT_NAMES:
        p = user_protocol(table.variant, table.num_players)
        if p.table == table:
            return p
    raise ValueError(f"table: got {table!r}; no protocol plays it")


# ---------------------------------------------------------------------------------------------
# Agents


class CallableBot:
    """A Python callable from an observation to an action, as a bot."""

    def __init__(self, policy: Callable[[dict[str, np.ndarray]], Any], name: str):
        self.policy, self.name = policy, name

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(self.policy(observation))


class Sb3Bot:
    """An sb3-contrib ``MaskablePPO`` model's deterministic, masked choice, as a bot."""

    def __init__(self, model: Any, name: str):
        self.model, self.name = model, name

    def act(self, observation: dict[str, np.ndarray]) -> int:
        action, _ = self.model.predict(observation["observation"], action_masks=observation["action_mask"],
                                       deterministic=True)
        return int(action)


_SB3_MODELS: dict[str, Any] = {}  # path -> model, one per process (a worker loads it on first use)


def _sb3_model(path: str) -> Any:
    if path not in _SB3_MODELS:  # the train extra: checked in _sb3_spec
        import torch
        from sb3_contrib import MaskablePPO

        torch.set_num_threads(1)  # the arena's workers fill the cores
        try:
            _SB3_MODELS[path] = MaskablePPO.load(path, device="cpu")
        except (OSError, ValueError, KeyError) as err:
            raise ValueError(f"agent {path!r}: not a MaskablePPO .zip that loads: {err}") from None
    return _SB3_MODELS[path]


def _sb3_spec(path: str) -> BotSpec:
    if not os.path.isfile(path):
        raise ValueError(f"agent {path!r}: no such file (an SB3 MaskablePPO .zip)")
    absent = extras.missing("train", ["torch", "sb3_contrib"])
    if absent:  # said before any table is tried, not as a table the agent cannot play
        raise ValueError(extras.needs(f"agent {path!r}: an SB3 .zip", "train", absent))
    game = read_game(path)  # a qwixx-train run's: its name and table; None for another zip
    label = Path(path).stem if game is None else game.name
    checked: set[TableOptions] = set()  # the spaces are compared once per table, not every game

    def factory(*, table: TableOptions, seed: int | None = None) -> Sb3Bot:
        if table not in checked:
            if game is not None:  # as a numpy checkpoint is, with the table it does play
                try:
                    check_trained_table(table, game.table, game.name, path)
                except ValueError as err:
                    raise ValueError(f"{err}{_plays_protocol(game.table)}") from None
            model = _sb3_model(path)
            env: Any = raw_env(table=table)
            size = env.observation_space("player_0")["observation"].shape
            n = env.action_space("player_0").n
            if tuple(model.observation_space.shape) != tuple(size) or int(model.action_space.n) != int(n):
                raise ValueError(f"the model takes observations of shape {model.observation_space.shape} and "
                                 f"{model.action_space.n} actions; this table has {size} and {n}")
            checked.add(table)
        return Sb3Bot(_sb3_model(path), label)

    return BotSpec(label=label, factory=factory)


def agent_spec(agent: Any) -> BotSpec:
    """A `BotSpec` for any agent the module docstring lists; a `ValueError` names a bad one."""
    if isinstance(agent, os.PathLike):
        agent = os.fspath(agent)
    if isinstance(agent, str) and agent.endswith(".zip"):
        return _sb3_spec(agent)
    if isinstance(agent, (str, BotSpec, tuple)):
        spec = as_spec(agent)
        check_params(spec, "the benchmark", " (the protocol)")
        return spec
    if callable(agent):
        name = str(getattr(agent, "name", None) or getattr(agent, "__name__", None) or type(agent).__name__)

        def factory(*, table: TableOptions, seed: int | None = None) -> CallableBot:
            return CallableBot(agent, name)

        return BotSpec(label=name, factory=factory)
    raise ValueError(f"agent: got {agent!r}; expected a bot spec ('greedy', 'ppo-classic-2p', a checkpoint's path, "
                     "a run folder), an SB3 MaskablePPO .zip, a BotSpec or a callable observation -> action")


def plays(spec: BotSpec, proto: Protocol) -> str | None:
    """None if the agent plays the protocol's table: it is made for it and chooses a legal
    action on the first decision of the first deal. Otherwise why not (with what it plays)."""
    table = proto.table
    try:
        bot = make_bot(spec, table, seed=0)
        env = raw_env(table=table)
        env.reset(seed=proto.seed("heuristic"))
        observation = env.observe(env.agent_selection)
        action = bot.act(observation)
        ok = isinstance(action, (int, np.integer)) and 0 <= int(action) < len(observation["action_mask"])
        if not ok or not observation["action_mask"][int(action)]:
            return f"its first action {action!r} is not legal (legal: {np.flatnonzero(observation['action_mask'])})"
    except (TypeError, ValueError, OSError, IndexError, KeyError, AttributeError) as err:
        return f"{err}{_what_it_plays(spec)}"
    return None


def _what_it_plays(spec: BotSpec) -> str:
    """For a checkpoint or a self-play network, the protocol of the one table it plays ("" for
    any other bot)."""
    if spec.path is None and spec.name not in (*checkpoint_names(), *selfplay.shipped()):
        return ""
    try:
        return _plays_protocol(spec.default_table())
    except (OSError, ValueError):
        return ""


def _plays_protocol(table: TableOptions) -> str:
    """" (it plays <protocol>)" for a model that plays `table` only ("" if no protocol does)."""
    try:
        return f" (it plays {protocol_for(table).name})"
    except ValueError:
        return ""


# ---------------------------------------------------------------------------------------------
# Running


def run(
    agent: Any,
    table: str | Protocol | None = None,
    *,
    workers: int | None = None,
    lineups: Sequence[str] | None = None,
    limit: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Play `agent` on one protocol (`table`: a protocol or its name; default the agent's
    own table, `BotSpec.default_table`) and return its figures as JSON-ready data.

    `lineups` picks some of the protocol's (default all). `limit` plays only the first
    `limit` deals of each lineup: a quick look, marked ``"complete": false``, never a figure
    to quote. `progress(lineup, done, total)` reports table games. `workers` defaults to
    ``os.cpu_count()``; the figures do not depend on it.
    """
    spec = agent_spec(agent)
    proto = protocol(table) if table is not None else default_protocol(spec)
    why = plays(spec, proto)
    if why is not None:
        raise ValueError(f"agent {spec.label!r} does not play {proto.name}: {why}")
    return _run(spec, proto, workers=workers, lineups=lineups, limit=limit, progress=progress)


def _run(spec: BotSpec, proto: Protocol, *, workers: int | None, lineups: Sequence[str] | None, limit: int | None,
         progress: Callable[[str, int, int], None] | None) -> dict[str, Any]:
    """`run` for an agent already known to play the protocol's table."""
    chosen = _check_lineups(proto, lineups)
    if limit is not None:
        limit = check_int("limit", limit, minimum=1, accepted="an integer >= 1, or None for the whole protocol")
    started = time.perf_counter()
    out: dict[str, Any] = {
        "format": FORMAT,
        "protocol": proto.name,
        "agent": spec.label,
        "complete": limit is None and len(chosen) == len(proto.lineups()),
        "definition": proto.describe(),
        "lineups": {},
    }
    for lineup in chosen:
        full = proto.deals if lineup == "heuristic" else proto.harder_deals
        deals = full if limit is None else min(limit, full)
        report = None if progress is None else (lambda done, total, _l=lineup: progress(_l, done, total))
        result = run_arena([spec, *proto.others(lineup)], num_players=proto.players, variant=proto.table.variant,
                           lucky=proto.table.lucky, games=deals, seed=proto.seed(lineup), workers=workers,
                           progress=report)
        out["lineups"][lineup] = {"deals": deals, **figures(result, proto), "seconds": result.timing["seconds"]}
    out["headline"] = headline(out, proto)
    out["seconds"] = time.perf_counter() - started
    out["workers"] = workers or os.cpu_count() or 1
    out["machine"] = machine()
    return out


def default_protocol(agent: Any) -> Protocol:
    """The protocol of the agent's own table (`BotSpec.default_table`: a checkpoint's game,
    classic with 2 players for a scripted bot)."""
    spec = agent_spec(agent)
    try:
        return protocol_for(spec.default_table())
    except (OSError, ValueError) as err:
        raise ValueError(f"agent {spec.label!r}: {err}") from None


def _check_lineups(proto: Protocol, lineups: Sequence[str] | None) -> list[str]:
    if lineups is None:
        return list(proto.lineups())
    if isinstance(lineups, str):
        lineups = [lineups]
    bad = [x for x in lineups if x not in proto.lineups()]
    if bad or not lineups:
        raise ValueError(f"lineups: got {list(lineups)!r}; {proto.name} has {list(proto.lineups())}")
    return list(dict.fromkeys(lineups))


def run_all(
    agent: Any,
    *,
    workers: int | None = None,
    tables: Sequence[str | Protocol] | None = None,
    lineups: Sequence[str] | None = None,
    limit: int | None = None,
    progress: Callable[[str, str, int, int], None] | None = None,
) -> dict[str, Any]:
    """`run` on every protocol the agent plays (or those of `tables`); tables it does not play
    are listed under ``"skipped"`` with why. ``progress(protocol, lineup, done, total)``."""
    spec = agent_spec(agent)
    protos = [*PROTOCOLS.values(), *user_protocols()] if tables is None else [protocol(t) for t in tables]
    started = time.perf_counter()
    results, skipped = [], {}
    for proto in protos:
        why = plays(spec, proto)
        if why is not None:
            skipped[proto.name] = why
            continue
        report = None if progress is None else (lambda lineup, d, t, _p=proto.name: progress(_p, lineup, d, t))
        results.append(_run(spec, proto, workers=workers, lineups=lineups, limit=limit, progress=report))
    if not results and len(protos) == 1:
        raise ValueError(f"agent {spec.label!r} does not play {protos[0].name}: {skipped[protos[0].name]}")
    if not results:
        raise ValueError(f"agent {spec.label!r} plays none of {[p.name for p in protos]}: {skipped}")
    return {
        "format": FORMAT,
        "agent": spec.label,
        "results": results,
        "skipped": skipped,
        "seconds": time.perf_counter() - started,
        "workers": workers or os.cpu_count() or 1,
        "machine": machine(),
    }


def progress_display(quiet: bool = False) -> Callable[[str | None, int, int], None]:
    """A progress display on stderr for `run`'s ``progress`` (under a title of your own, e.g.
    the protocol and lineup): rich's bar on a terminal when rich is installed, else a line as
    each title starts; ``(None, 0, 0)`` closes it. `qwixx bench` and publishing show it."""
    state: dict[str, Any] = {"title": None}
    console = None
    if importlib.util.find_spec("rich") is not None:
        from rich.console import Console

        console = Console(stderr=True)

    def report(title: str | None, done: int, total: int) -> None:
        if quiet:
            return
        bar = state.get("bar")
        if title is None:
            if bar is not None:
                bar.stop()
            return
        if console is None or not console.is_terminal:
            if title != state["title"]:
                print(f"playing {title}: {total:,} games", file=sys.stderr, flush=True)
            state["title"] = title
            return
        if bar is None:  # started on the first report, after the arena has forked its workers
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TimeRemainingColumn(), console=console, transient=True)
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(title, total=total)
        bar.update(state["task"], description=title, completed=done, total=total)

    return report


def machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}


def figures(result: Any, proto: Protocol) -> dict[str, Any]:
    """The agent's figures (bot 0 of an `ArenaResult`) in the protocol's terms. The seatings of
    a deal share its dice, so every error is taken over deals: a standard error is that of the
    per-deal means, an interval `clustered_interval`'s."""
    seat_bots, scores = result.seat_bots, result.games.scores
    mine = seat_bots == 0
    agent_scores = scores[mine]  # game order, one seat a game: deal by deal
    score, score_se = mean_and_se(_per_deal(result, agent_scores))
    out: dict[str, Any] = {"games": int(mine.sum()), "errors": ERRORS, "score_mean": score, "score_se": score_se}
    if proto.players == 1:
        if solver.solvable(proto.table.rules):
            optimum = float(solver.load_table(proto.table.rules).root)
            out.update(optimum=optimum, regret=optimum - score, regret_se=score_se)
        return out
    shares = win_shares(scores)
    wins = float(shares[mine].sum())
    n = out["games"]
    best_other = np.where(mine, np.iinfo(np.int64).min, scores).max(axis=1)  # the agent has one seat a game
    margin, margin_se = mean_and_se(_per_deal(result, agent_scores - best_other))
    out.update(win_share=wins / n, win_interval=_deal_interval(result, shares, 0), margin_mean=margin,
               margin_se=margin_se)
    # the bots beside it, by label: their win share in these games
    out["others"] = [
        {"label": row["label"], "win_share": row["win_rate"], "win_interval": _deal_interval(result, shares, b),
         "score_mean": row["score_mean"]}
        for b, row in enumerate(result.bots) if b > 0
    ]
    return out


def _per_deal(result: Any, values: np.ndarray) -> np.ndarray:
    """Per-game values in game order -> their mean in each deal (a deal's games run together)."""
    return values.reshape(result.deals, -1).mean(axis=1)


def _deal_interval(result: Any, shares: np.ndarray, bot: int) -> list[float]:
    """Bot `bot`'s 95% win-share interval, clustered by deal: the seatings of a deal share its
    dice (`clustered_interval`). Games run deal by deal, each deal seating a bot equally often."""
    return list(clustered_interval(shares[result.seat_bots == bot].reshape(result.deals, -1)))


def headline(out: dict[str, Any], proto: Protocol) -> dict[str, Any] | None:
    """The one figure to quote: the heuristic lineup's win share (parity 1/P), solo the mean score."""
    a = out["lineups"].get("heuristic")
    if a is None:
        return None
    if proto.players == 1:
        return {"figure": "mean score, alone", "value": a["score_mean"], "se": a["score_se"], "parity": None}
    return {"figure": "win share vs heuristic", "value": a["win_share"], "interval": a["win_interval"],
            "parity": proto.parity}


# ---------------------------------------------------------------------------------------------
# Showing results


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _iv(iv: Sequence[float]) -> str:
    return f"[{100 * iv[0]:.1f}, {100 * iv[1]:.1f}]"


def _pm(mean: float, se: float | None, signed: bool = False) -> str:
    text = f"{mean:+.1f}" if signed else f"{mean:.1f}"
    return text if se is None else f"{text} ± {se:.1f}"


def results_text(results: Sequence[dict[str, Any]]) -> str:
    """Results of `run` as plain text: per protocol, a line per lineup and the headline."""
    lines = []
    for r in results:
        d = r["definition"]
        parity = "" if d["parity"] is None else f", parity {_pct(d['parity'])}"
        lines.append(f"{r['protocol']} ({d['variant']}{'' if d['lucky'] is None else ' ' + d['lucky']}, "
                     f"{d['num_players']} player{'s' if d['num_players'] > 1 else ''}{parity}): {r['agent']}"
                     + ("" if r["complete"] else "  [PARTIAL: not the whole protocol, not a figure to quote]")
                     + ("  [a user's sheet: not one of the package's protocols]" if d.get("user") else ""))
        for lineup, f in r["lineups"].items():
            if d["num_players"] == 1:
                regret = (f", regret to the optimum {f['optimum']:.2f}: {_pm(f['regret'], f['regret_se'])}"
                          if "regret" in f else "")
                lines.append(f"  alone      {f['games']:>6,} games  mean score {_pm(f['score_mean'], f['score_se'])}"
                             f"{regret}")
            else:
                lines.append(f"  {lineup:<10} {f['games']:>6,} games  win share {_pct(f['win_share']):>6} "
                             f"{_iv(f['win_interval']):<14} margin {_pm(f['margin_mean'], f['margin_se'], True):<12} "
                             f"score {_pm(f['score_mean'], f['score_se'])}")
        h = r["headline"]
        if h is not None:
            value = _pm(h["value"], h["se"]) if h["parity"] is None else f"{_pct(h['value'])} {_iv(h['interval'])}"
            lines.append(f"  headline: {h['figure']} {value}")
    return "\n".join(lines)


def leaderboard_markdown(records: Sequence[dict[str, Any]], source: str = "../benchmarks/results/leaderboard") -> str:
    """The leaderboard page (docs/leaderboard.md) from `run_all` records (one per agent):
    a section per protocol, its agents ranked by the headline figure. Only complete results
    are shown. `source` is where the page links each agent's JSON."""
    by_table: dict[str, list[tuple[dict[str, Any], str]]] = {name: [] for name in PROTOCOLS}
    for record in records:
        for r in record["results"]:
            if r["complete"] and r["protocol"] in by_table:
                by_table[r["protocol"]].append((r, record["agent"]))
    out = [
        "# Leaderboard",
        "",
        "Every scripted bot and every shipped checkpoint on the benchmark (docs/benchmark.md explains the",
        "protocols and how to enter your own agent). Each section is one protocol: the agent plays every seat",
        "in turn beside `heuristic` (the headline: its win share, with parity 1/P), then beside the `rollout`",
        "search bot (the harder lineup, fewer games), on reserved dice that no training run uses. A win share",
        "is shown with its 95% interval, margin (the agent's score minus the best other score) and score",
        "with their standard errors; solo tables show the mean score and, in classic, the regret to the exact",
        "optimum. `rollout` itself is left out as an agent: in every seat of a table's 3,000 to 4,000 games it",
        "would take hours (docs/baselines.md has its figures).",
        "",
        _errors_note(r for rows in by_table.values() for r, _ in rows),
        "",
        "This page is generated from the results files by `python benchmarks/leaderboard.py page`; each agent's",
        "row links its file. Rerun an agent with `qwixx bench AGENT --all`.",
        "",
    ]
    for name, rows in by_table.items():
        proto = PROTOCOLS[name]
        d = proto.describe()
        title = f"{d['variant']}{'' if d['lucky'] is None else ' (lucky cross ' + d['lucky'] + ')'}, " \
                f"{proto.players} player{'s' if proto.players > 1 else ''}"
        out += [f"## {name}: {title}", ""]
        if not rows:
            out += ["No results yet.", ""]
            continue
        rows.sort(key=lambda x: -(x[0]["headline"] or {"value": -1e9})["value"])
        if proto.players == 1:
            a = d["lineups"]["heuristic"]
            out += [f"Alone, {a['deals']:,} deals (dice seeds from {a['first_seed']:,}).", ""]
            exact = solver.solvable(proto.table.rules)  # the solver's optimum is beside the scores
            out.append("| agent | mean score | " + ("regret to the optimum | " if exact else "") + "games |")
            out.append("|---|---:|" + ("---:|" if exact else "") + "---:|")
            for r, agent in rows:
                f = r["lineups"]["heuristic"]
                regret = f"{_pm(f['regret'], f['regret_se'])} |" if exact else ""
                out.append(f"| [{agent}]({source}/{agent}.json) | {_pm(f['score_mean'], f['score_se'])} | {regret}"
                           f" {f['games']:,} |")
            if exact:
                optimum = next((r["lineups"]["heuristic"].get("optimum") for r, _ in rows), None)
                if optimum is not None:
                    out += ["", f"The exact optimum (expected score of optimal solo play): {optimum:.4f}."]
            out.append("")
            continue
        a, b = d["lineups"]["heuristic"], d["lineups"]["rollout"]
        out += [f"Parity {_pct(proto.parity or 0)}. Beside `heuristic`: {a['deals']:,} deals x {proto.players} seats "
                f"(dice seeds from {a['first_seed']:,}); beside `rollout`: {b['deals']:,} deals x {proto.players} "
                f"seats (from {b['first_seed']:,}).", ""]
        out.append("| agent | win share vs heuristic | margin | score | win share vs rollout | rollout's win share "
                   "| margin |")
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for r, agent in rows:
            f = r["lineups"]["heuristic"]
            cells = [f"[{agent}]({source}/{agent}.json)", f"{_pct(f['win_share'])} {_iv(f['win_interval'])}",
                     _pm(f["margin_mean"], f["margin_se"], True), _pm(f["score_mean"], f["score_se"])]
            g = r["lineups"].get("rollout")
            if g is None:
                cells += ["—", "—", "—"]
            else:
                rollout = next(o for o in g["others"] if o["label"] == "rollout")
                cells += [f"{_pct(g['win_share'])} {_iv(g['win_interval'])}",
                          f"{_pct(rollout['win_share'])} {_iv(rollout['win_interval'])}",
                          _pm(g["margin_mean"], g["margin_se"], True)]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def _errors_note(results: Iterable[dict[str, Any]]) -> str:
    """What the leaderboard's errors are: clustered by deal (`ERRORS`) or, in results written
    before, naive (every game independent, a Wilson interval)."""
    kinds = {f.get("errors") for r in results for f in r["lineups"].values()}
    clustered = "Errors and intervals are clustered by deal (the seatings of a deal share its dice)"
    naive = ("Errors and intervals treat every game as independent (a Wilson interval), though the seatings of a "
             "deal share its dice: at 4 and 5 players they are often too narrow")
    if kinds == {ERRORS}:
        return clustered + "."
    if ERRORS not in kinds:
        return naive + "; a rerun clusters them by deal."
    return f"{clustered} in results files with an `errors` entry. {naive} in the others."


def strip(result: dict[str, Any]) -> dict[str, Any]:
    """A result without what differs between machines and worker counts (for comparing)."""
    drop = {"seconds", "workers", "machine"}
    clean = {k: v for k, v in result.items() if k not in drop}
    clean["lineups"] = {k: {f: x for f, x in v.items() if f != "seconds"} for k, v in result["lineups"].items()}
    return clean


__all__ = [
    "FIRST_SEED",
    "FORMAT",
    "HARDER_OFFSET",
    "PROTOCOLS",
    "Protocol",
    "TABLE_STRIDE",
    "agent_spec",
    "default_protocol",
    "leaderboard_markdown",
    "plays",
    "progress_display",
    "protocol",
    "protocol_for",
    "results_text",
    "run",
    "run_all",
    "strip",
    "user_protocol",
    "user_protocols",
]
