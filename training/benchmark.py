"""The published bot's benchmark: the arena tables a run's policy plays before it is installed.

`evaluate_policy` plays the policy in the arena (`qwixx_env.arena.run_arena`, seats rotated,
every lineup dealt the same dice), by the size of its table:

- solo: alone, beside `heuristic` and `solo_optimal` on the same deals; the mean score and
  its regret against the solver's optimum (classic only);
- 2 players: head to head against each bot of `HEAD_TO_HEAD` (`rollout` on the search deals;
  `afterstate` and `solo_optimal` in classic only);
- 3+ players: a mixed table with the bots of `TABLE` (the arena's pool scheme); and, with
  search deals, a second table where `rollout` sits with the bot and the strongest of the
  others (`heuristic`, then `greedy`, ...) to fill the seats, every bot in every game.

The tables are printed (`qwixx_env.arena.report.print_report`) and returned as JSON-ready data.
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

from qwixx_env import solver
from qwixx_env.arena import run_arena
from qwixx_env.arena.report import print_report
from qwixx_env.arena.schedule import lineups
from qwixx_env.core.variant import get_variant
from qwixx_env.solver.states import check_solvable
from qwixx_env.training.evaluate import policy_factory

TARGET_GAMES = 10_000
"""The default number of deals gives the published bot at least this many games."""
SEARCH_DEALS_2P = 5_000
"""Default deals against `rollout` (2 players): 10,000 games, as against the others."""
SEARCH_DEALS_TABLE = 100
"""Default deals of the 3+ player `rollout` table (every bot in every game: 300 games at 3
players, 400 at 4)."""
SCRIPTED = ("random", "greedy", "heuristic")
TABLE = (*SCRIPTED, "solo_optimal")
"""The 3+ player mixed table's scripted bots (`solo_optimal` in classic only)."""
HEAD_TO_HEAD = ("random", "greedy", "heuristic", "afterstate", "rollout", "solo_optimal")
"""The 2-player opponents, in the order they are played."""
CLASSIC_ONLY = {  # bot -> why it sits out a Longo evaluation
    "solo_optimal": "classic only: the solver does not cover Qwixx Longo",
    "afterstate": "classic only: its win-chance networks are trained on classic",
}


def solver_covers(variant: str) -> bool:
    """Whether the solo solver (and so `solo_optimal`, the optimum and the classic-trained
    networks' bots) covers the variant named `variant`: read from the variant's data."""
    try:
        check_solvable(get_variant(variant))
    except ValueError:
        return False
    return True


def default_deals(num_players: int, opponents: int) -> int:
    """Deals giving the published bot at least `TARGET_GAMES` games: solo it plays each deal
    once; head to head twice (two seats); at a table of `opponents` + 1 bots, once per lineup
    that seats it (`qwixx_env.arena.schedule.lineups`)."""
    seats = sum(lineup.count(0) for lineup in lineups(opponents + 1, num_players)) if num_players > 1 else 1
    return math.ceil(TARGET_GAMES / seats)


def _summary(result: Any) -> dict[str, Any]:
    data = result.to_dict()
    data.pop("games")  # the per-game rows: large, and in no table
    return data


def evaluate_policy(
    policy: Any,
    name: str,
    *,
    games: int,
    search_games: int,
    seed: int,
    workers: int,
    console: Any = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Play the policy in the arena as the module docstring says; JSON-ready results."""
    learner = policy_factory(policy, name)
    players, variant, lucky = policy.num_players, policy.variant, policy.lucky or "bonus"
    options = dict(num_players=players, variant=variant, lucky=lucky, seed=seed, workers=workers)
    out: dict[str, Any] = {
        "seed": seed,
        "workers": workers,
        "games": games,
        "search_games": search_games,
        "skipped": {},
    }
    started = time.perf_counter()

    def play(bots: list[Any], deals: int, title: str) -> Any:
        if console is not None:
            console.rule(title)
        with _progress(console if progress else None, title) as report:
            result = run_arena(bots, games=deals, progress=report, **options)
        if console is not None:
            print_report(result, console)
        return result

    def skip(bot: str) -> bool:
        if bot in CLASSIC_ONLY and not solver_covers(variant):
            out["skipped"][bot] = CLASSIC_ONLY[bot]
            return True
        if bot == "rollout" and search_games == 0:
            out["skipped"][bot] = "`--search-games 0`"
            return True
        return False

    if players == 1:
        out["kind"] = "solo"
        others = [b for b in ("heuristic", "solo_optimal") if not skip(b)]
        result = play([learner, *others], games, f"{name} alone, beside {', '.join(others)}")
        out["bots"] = [_score_row(row) for row in result.bots]
        out["optimum"] = None
        if solver_covers(variant):
            me = out["bots"][0]
            out["optimum"] = solver.load_table(variant).root
            out["regret"] = out["optimum"] - me["score_mean"]
            out["regret_se"] = me["score_se"]
            if "solo_optimal" in others:  # the same deals: the paired difference is sharper
                gap = result.bot_scores(1 + others.index("solo_optimal")) - result.bot_scores(0)
                out["paired_gap"] = {
                    "mean": float(gap.mean()),
                    "se": float(gap.std(ddof=1) / math.sqrt(len(gap))) if len(gap) > 1 else None,
                    "games": len(gap),
                }
        out["arenas"] = [_summary(result)]
    elif players == 2:
        out["kind"] = "head_to_head"
        out["opponents"], out["arenas"] = [], []
        for bot in HEAD_TO_HEAD:
            if skip(bot):
                continue
            deals = search_games if bot == "rollout" else games
            result = play([learner, bot], deals, f"{name} vs {bot}")
            me, them = result.bots
            out["opponents"].append(
                {
                    "opponent": bot,
                    "deals": deals,
                    "games": me["games"],
                    "win_rate": me["win_rate"],
                    "win_interval": me["win_interval"],
                    "score_mean": me["score_mean"],
                    "score_se": me["score_se"],
                    "opponent_win_rate": them["win_rate"],
                    "opponent_score_mean": them["score_mean"],
                    "opponent_score_se": them["score_se"],
                    "seconds": result.timing["seconds"],
                    "games_per_second": result.timing["games_per_second"],
                }
            )
            out["arenas"].append(_summary(result))
    else:
        out["kind"] = "table"
        table = [b for b in TABLE if not skip(b)]
        out["deals"] = games
        result = play([learner, *table], games, f"{name} at a {players}-player table with {', '.join(table)}")
        out["bots"] = _table_rows(result)
        out["equal_share"] = 1 / players
        out["arenas"] = [_summary(result)]
        beats = _beats_all(out["bots"])
        if not skip("rollout"):
            fill = [b for b in ("heuristic", "greedy", "random") if b in table][: players - 2]
            search = ["rollout", *fill]
            result = play([learner, *search], search_games,
                          f"{name} at a {players}-player table with {', '.join(search)}")
            out["search_table"] = {"deals": search_games, "bots": _table_rows(result)}
            out["arenas"].append(_summary(result))
            beats = beats and _beats_all(out["search_table"]["bots"])
        out["beats_every_scripted"] = beats
    out["seconds"] = time.perf_counter() - started
    out["table_games"] = sum(a["table_games"] for a in out["arenas"])
    return out


def _table_rows(result: Any) -> list[dict[str, Any]]:
    return [
        {
            **_score_row(row),
            "win_rate": row["win_rate"],
            "win_interval": row["win_interval"],
            "rating": None if row["rating"] is None else {k: row["rating"][k] for k in ("mu", "sigma")},
        }
        for row in result.bots
    ]


def _beats_all(rows: list[dict[str, Any]]) -> bool:
    """Does the first bot of a table win more often than every other?"""
    return all(rows[0]["win_rate"] > b["win_rate"] for b in rows[1:])


def _score_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "label": row["label"],
        "games": row["games"],
        "score_mean": row["score_mean"],
        "score_se": row["score_se"],
    }


@contextlib.contextmanager
def _progress(console: Any, title: str):
    """A progress callback for `run_arena` drawing a rich bar (None: no bar). The bar (and its
    refresh thread) starts on the first report, after the arena has forked its workers."""
    if console is None:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    state: dict[str, Any] = {}

    def report(done: int, total: int) -> None:
        if "bar" not in state:
            bar = Progress(
                TextColumn(title),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(title, total=total)
        state["bar"].update(state["task"], completed=done, total=total)

    try:
        yield report
    finally:
        if "bar" in state:
            state["bar"].stop()
