"""Playing the table games of a tournament, in one process or in a pool of workers.

A `Table` holds one `qwixx_v0.raw_env` and plays table game g from nothing but g: the env
is reset with seed ``seed + deal`` and each seat's bot is made fresh with `bot_seed`. So a
game's result never depends on the worker that plays it or on the games played before it,
and `play_games` returns the same arrays for any number of workers. With `TableConfig.records`
set, each game's record is written there by the process that played it (`arena.records`).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qwixx_env.arena.records import write_record
from qwixx_env.arena.schedule import bot_seed
from qwixx_env.bots import BotSpec, make_bot
from qwixx_env.core.options import TableOptions
from qwixx_env.envs.qwixx_v0 import raw_env


@dataclass
class TableConfig:
    """Everything a worker needs to play any table game of a tournament."""

    entries: list[BotSpec]
    lineups: list[tuple[int, ...]]
    table: TableOptions  # every game's, and the table each bot is made for
    seed: int
    records: Path | None = None  # a folder: each game's record is written there (`arena.records`)


@dataclass
class GameArrays:
    """Results of table games 0..G-1 in game order."""

    scores: np.ndarray  # (G, P) final scores by seat
    penalties: np.ndarray  # (G, P)
    rolls: np.ndarray  # (G,) rolls the game lasted


class Table:
    """One environment and the bot entries: plays table games by index.

    The env is raw (`qwixx_v0.raw_env`), so a bot's illegal action raises at once.
    """

    def __init__(self, config: TableConfig):
        self.config = config
        self.env = raw_env(table=config.table)
        self._seat_of = self.env.agent_name_mapping

    def play(self, game: int) -> tuple[list[int], list[int], int]:
        """Play table game `game`; its scores and penalties by seat, and its number of rolls.
        With `TableConfig.records` set, its record is written into that folder first."""
        c = self.config
        deal, j = divmod(game, len(c.lineups))
        players = [make_bot(c.entries[b], c.table, bot_seed(c.seed, deal, j, s)) for s, b in enumerate(c.lineups[j])]
        env, seat_of = self.env, self._seat_of
        env.reset(seed=c.seed + deal)
        agent = env.agent_selection
        while not env.terminations[agent]:
            env.step(players[seat_of[agent]].act(env.observe(agent)))
            agent = env.agent_selection
        if c.records is not None:
            write_record(c.records, game, c.seed + deal, [c.entries[b].label for b in c.lineups[j]], env.record())
        snap = env.snapshot()
        seats = snap["players"]
        return [p["score"] for p in seats], [p["penalties"] for p in seats], snap["roll"] + 1

    def play_range(self, start: int, stop: int) -> list[tuple[list[int], list[int], int]]:
        return [self.play(g) for g in range(start, stop)]


_worker_table: Table | None = None


def _init_worker(config: TableConfig) -> None:
    global _worker_table
    _worker_table = Table(config)


def _play_chunk(bounds: tuple[int, int]) -> list[tuple[list[int], list[int], int]]:
    if _worker_table is None:
        raise RuntimeError("_play_chunk runs in a worker that _init_worker set up (the pool's initializer)")
    return _worker_table.play_range(*bounds)


def play_games(
    config: TableConfig,
    num_games: int,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> GameArrays:
    """Play table games 0..num_games-1 on `workers` processes; results in game order.

    With several workers this process plays game 0 first, alone, so that the kernels compile
    once (see the comment below). `progress(done, total)` is called once the workers are up,
    then as chunks of games finish.
    """
    chunk = max(1, min(200, -(-num_games // (workers * 16))))
    table = Table(config)
    results: list[tuple[list[int], list[int], int]] = []
    if workers > 1:
        # The first game is played here, before any worker starts: it compiles every kernel the
        # games need (or loads them from the disk cache) once, and the workers inherit them
        # (forked) or load what it cached (spawned). On a cold cache, workers started first
        # would each compile them all: the CPU time of the compile times the workers.
        results.append(table.play(0))
    bounds = [(a, min(a + chunk, num_games)) for a in range(len(results), num_games, chunk)]
    if workers == 1 or not bounds:
        if progress:
            progress(len(results), num_games)
        for b in bounds:
            results.extend(table.play_range(*b))
            if progress:
                progress(len(results), num_games)
    else:
        # fork where the platform has it: bot factories and bots registered in __main__ then
        # reach the workers without being pickled.
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        with context.Pool(workers, initializer=_init_worker, initargs=(config,)) as pool:
            if progress:  # only now: a progress display may start a thread, and forks come first
                progress(len(results), num_games)
            for part in pool.imap(_play_chunk, bounds):
                results.extend(part)
                if progress:
                    progress(len(results), num_games)
    P = config.table.num_players
    scores = np.array([r[0] for r in results], np.int64).reshape(num_games, P)
    penalties = np.array([r[1] for r in results], np.int64).reshape(num_games, P)
    rolls = np.array([r[2] for r in results], np.int64)
    return GameArrays(scores, penalties, rolls)
