"""The arena: tournaments between bots, with honest statistics.

>>> from qwixx_env.arena import run_arena
>>> result = run_arena(["random", "greedy:max_skip=1", ("greedy", {"max_skip": 3})],
...                    num_players=2, games=100, seed=0)
>>> result.bots[0]["win_rate"], result.head_to_head["win_rate"]
>>> result.to_dict()          # everything as JSON-ready data (`qwixx arena --json`)
>>> run_arena(["greedy", "random"], games=10, records="arena-games")  # every game's record kept

`run_arena` seats the bots in rotating lineups (`schedule.lineups`: every bot in every seat
equally often), plays each *deal* (dice seed ``seed + deal``) once with every lineup — common
random numbers, so lineups of one deal differ by decisions, not luck — on a pool of worker
processes, and summarises: win rates with 95% Wilson intervals (shared wins as fractions),
mean score ± standard error, penalties, rolls, a head-to-head matrix (2 players) and
openskill ratings. With `records` each game's record is kept as a file (`arena.records`), for
`qwixx_env.replay` and the play page's replay viewer. `qwixx arena` is the command line for
it; `docs/arena.md` explains the schemes and the statistics.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env.arena.play import GameArrays, Table, TableConfig, play_games
from qwixx_env.arena.records import check_records_folder, prepare, record_name, write_index
from qwixx_env.arena.schedule import bot_entries, bot_seed, lineups, parse_bot
from qwixx_env.arena.stats import Z95, mean_and_se, openskill_ratings, ranks, wilson_interval, win_shares
from qwixx_env.bots import make_bot
from qwixx_env.core.checks import check_int
from qwixx_env.core.compile import preparing
from qwixx_env.core.options import TableOptions, check_variant
from qwixx_env.core.variant import Variant

RESULT_FORMAT = "qwixx_env.arena/1"


@dataclass
class ArenaResult:
    """A finished tournament: the raw games and their summary (see `to_dict`)."""

    labels: list[str]
    lineups: list[tuple[int, ...]]
    variant: str
    lucky: str
    num_players: int
    deals: int
    seed: int
    games: GameArrays
    bots: list[dict[str, Any]]
    head_to_head: dict[str, Any] | None
    timing: dict[str, float]
    records: Path | None = None  # the folder holding every game's record, when kept

    def record_path(self, game: int) -> Path:
        """The record file of table game `game` (when `records` was given to `run_arena`)."""
        if self.records is None:
            raise ValueError("record_path: this tournament kept no records (run_arena(..., records=DIR) keeps them)")
        game = check_int("game", game, minimum=0, maximum=len(self.games.rolls) - 1)
        deal, j = divmod(game, len(self.lineups))
        return self.records / record_name(game, self.seed + deal, [self.labels[b] for b in self.lineups[j]])

    @property
    def seat_bots(self) -> np.ndarray:
        """(G, P): the bot index in each seat of each table game."""
        table = np.array(self.lineups, np.int64)
        return table[np.arange(len(self.games.rolls)) % len(self.lineups)]

    def bot_scores(self, bot: int) -> np.ndarray:
        """Every final score of `bot`, in game order then seat order."""
        return self.games.scores[self.seat_bots == bot]

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data. Everything but ``timing`` is the same for any
        number of workers."""
        g = self.games
        return {
            "format": RESULT_FORMAT,
            "variant": self.variant,
            "lucky": self.lucky,
            "num_players": self.num_players,
            "seed": self.seed,
            "deals": self.deals,
            "table_games": int(len(g.rolls)),
            "lineups": [[self.labels[b] for b in lineup] for lineup in self.lineups],
            "bots": self.bots,
            "head_to_head": self.head_to_head,
            "rating_model": "openskill PlackettLuce (defaults), one-player teams ranked by score",
            "games": {
                "columns": ["deal", "lineup", "rolls", "scores", "penalties"],
                "rows": [
                    [i // len(self.lineups), i % len(self.lineups), int(r), s, p]
                    for i, (r, s, p) in enumerate(zip(g.rolls.tolist(), g.scores.tolist(), g.penalties.tolist()))
                ],
            },
            "timing": self.timing,
        }


def run_arena(
    bots: Sequence[Any],
    *,
    num_players: int = 2,
    variant: str | Variant = "classic",
    lucky: str | None = None,
    games: int = 100,
    seed: int = 0,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    records: str | os.PathLike[str] | None = None,
) -> ArenaResult:
    """Run a tournament and summarise it.

    `bots`: bot specs (``"greedy:max_skip=2"``, an installed checkpoint's name, a checkpoint's
    path or run folder such as ``"runs/my2p"``; `qwixx_env.bots.specs`), ``(name, params)`` pairs, or factories
    ``factory(*, table, seed)`` (the table a `TableOptions`); `qwixx_env.bots.make_bot` makes each for every game.
    `games` is the number of deals; each deal is played by every lineup, so there are
    ``games * len(lineups)`` table games. `lucky` is Longo's lucky rule.
    `workers` defaults to ``os.cpu_count()``. `progress(done, total)` reports table games.
    `records`: a new or empty folder (made if missing) to keep every table game's record in,
    plus an ``index.json`` of them (`qwixx_env.arena.records`); `ArenaResult.record_path(g)`.

    Every option and every bot (made once for this variant and player count) is checked
    first: bad input raises `ValueError` before any game is played.
    """
    entries = bot_entries(bots)
    games = check_int("games", games, minimum=1, accepted="an integer >= 1")
    seed = check_int("seed", seed, minimum=0)
    if workers is None:
        workers = os.cpu_count() or 1
    workers = check_int("workers", workers, minimum=1, accepted="an integer >= 1")
    folder = None if records is None else check_records_folder(records)
    lucky = "bonus" if lucky is None else lucky
    # the game options, checked; num_players a plain int (a numpy integer too: the result is plain JSON)
    table = TableOptions(num_players=num_players, variant=check_variant(variant), lucky=lucky)
    num_players = table.num_players
    # On a cold kernel cache the checks and the first game compile: the notice names the bots.
    with preparing(f"the numba kernels of the table and of {', '.join(e.label for e in entries)}"):
        for e in entries:
            try:
                bot = make_bot(e, table, seed=0)
            except (TypeError, ValueError, OSError) as err:  # OSError: a checkpoint file that is not there
                raise ValueError(f"bot {e.label!r}: {err}") from err
            if not callable(getattr(bot, "act", None)):
                raise ValueError(f"bot {e.label!r}: made {bot!r}, which has no act(observation) method")
        seats = lineups(len(entries), num_players)
        config = TableConfig(entries, seats, table, int(seed), records=folder)
        total = int(games) * len(seats)
        workers = max(1, min(workers, total))
        if folder is not None:
            prepare(folder)
        start = time.perf_counter()
        arrays = play_games(config, total, workers, progress)
        seconds = time.perf_counter() - start
    labels = [e.label for e in entries]
    result = ArenaResult(
        labels=labels,
        lineups=seats,
        variant=table.variant,  # the name, also when a Variant was given (its JSON form goes in the index)
        lucky=lucky,
        num_players=num_players,
        deals=int(games),
        seed=int(seed),
        games=arrays,
        bots=[],
        head_to_head=None,
        timing={"seconds": seconds, "games_per_second": total / seconds, "workers": workers},
        records=folder,
    )
    result.bots = _bot_summaries(result)
    result.head_to_head = _head_to_head(result) if num_players == 2 else None
    if folder is not None:
        write_index(folder, result)
    return result


def _bot_summaries(result: ArenaResult) -> list[dict[str, Any]]:
    g, seat_bots = result.games, result.seat_bots
    shares = win_shares(g.scores)
    ratings = openskill_ratings(result.labels, seat_bots, g.scores)
    rows = []
    for b, label in enumerate(result.labels):
        at = seat_bots == b
        n = int(at.sum())
        score, score_se = mean_and_se(g.scores[at])
        row: dict[str, Any] = {"label": label, "games": n}
        if result.num_players > 1:
            wins = float(shares[at].sum())
            row.update(wins=wins, win_rate=wins / n, win_interval=list(wilson_interval(wins, n)))
        else:
            row.update(wins=None, win_rate=None, win_interval=None)
        row.update(
            score_mean=score,
            score_se=score_se,
            score_sd=float(g.scores[at].std(ddof=1)) if n > 1 else None,
            penalties_mean=float(g.penalties[at].mean()),
            rolls_mean=float(np.broadcast_to(g.rolls[:, None], at.shape)[at].mean()),
            rating=None if ratings is None else ratings[b],
        )
        rows.append(row)
    return rows


def _head_to_head(result: ArenaResult) -> dict[str, Any]:
    """2 players: row bot's win share against the column bot over their games together."""
    k = len(result.labels)
    seat_bots, shares = result.seat_bots, win_shares(result.games.scores)
    rate: list[list[float | None]] = [[None] * k for _ in range(k)]
    count = [[0] * k for _ in range(k)]
    interval: list[list[list[float] | None]] = [[None] * k for _ in range(k)]
    for i in range(k):
        for j in range(k):
            wins, n = 0.0, 0
            for seat in range(2):
                games = (seat_bots[:, seat] == i) & (seat_bots[:, 1 - seat] == j)
                wins += float(shares[games, seat].sum())
                n += int(games.sum())
            if n:
                rate[i][j], count[i][j], interval[i][j] = wins / n, n, list(wilson_interval(wins, n))
    return {"bots": list(result.labels), "win_rate": rate, "games": count, "interval": interval}


__all__ = [
    "ArenaResult",
    "RESULT_FORMAT",
    "Table",
    "TableConfig",
    "Z95",
    "bot_entries",
    "bot_seed",
    "lineups",
    "mean_and_se",
    "openskill_ratings",
    "parse_bot",
    "ranks",
    "run_arena",
    "win_shares",
    "wilson_interval",
]
