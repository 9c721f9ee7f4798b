"""Keeping a tournament's games: one record file per table game, and an index of them.

With ``run_arena(..., records=DIR)`` (``qwixx arena ... --records DIR``) each table game's
record — the JSON of ``env.unwrapped.record()``, which `qwixx_env.replay` rebuilds exactly and
the play page's replay viewer opens — is written into DIR as it finishes, by the process that
played it, under a name that says the game, its dice seed and who sat where::

    game000007_seed3_greedy-vs-random.json      # table game 7, dice seed 3, greedy in seat 0

A record holds the dice seed, the generator state and every decision, so it is the same for
any number of workers. At the end `index.json` lists every file with its game, deal, lineup,
the bots' labels by seat (exact, where the file name has them made safe for any file system),
each bot's seed and the final scores, and, for a variant that is not the package's own, its
sheet (`Variant.as_dict`, which `Variant.from_dict` reads back). Every file is written whole or not at all
(`qwixx_env.files.write_atomically`); DIR must be new or empty, so one tournament's records are
never mixed with another's.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qwixx_env.arena.schedule import bot_seed
from qwixx_env.core.variant import custom_sheet
from qwixx_env.files import folder_problem, write_atomically

INDEX_NAME = "index.json"
INDEX_FORMAT = "qwixx_env.arena-records/1"
_UNSAFE = re.compile(r"[^A-Za-z0-9.=+-]+")
_LABEL_CHARS = 40


def safe_label(label: str) -> str:
    """`label` as a piece of a file name: runs of anything but letters, digits and ``.=+-``
    become ``_`` (``greedy:max_skip=2`` -> ``greedy_max_skip=2``), at most 40 characters."""
    return _UNSAFE.sub("_", label).strip("_.")[:_LABEL_CHARS] or "bot"


def record_name(game: int, dice_seed: int, labels: Sequence[str]) -> str:
    """The file name of table game `game`'s record: its index (six digits or more, so names
    sort in game order), its dice seed and the bots by seat, e.g.
    ``game000007_seed3_greedy-vs-random.json``."""
    return f"game{game:06d}_seed{dice_seed}_{'-vs-'.join(safe_label(label) for label in labels)}.json"


def records_problem(folder: str | os.PathLike[str]) -> str | None:
    """Why `folder` cannot take a tournament's records, as a phrase, or None when it can: it
    must be a writable folder (or one that can be made) holding no files yet."""
    problem = folder_problem(folder, create=True)
    if problem is not None:
        return problem
    folder = Path(folder)
    if folder.is_dir():
        held = sum(1 for _ in folder.iterdir())
        if held:
            return f"already holds {held} file(s)"
    return None


def check_records_folder(folder: Any) -> Path:
    """`folder` as a Path if it can take the records (see `records_problem`), else a `ValueError`
    naming it and what is accepted. Makes nothing: `prepare` does, once the games are sure to run."""
    if not isinstance(folder, (str, os.PathLike)) or str(folder) == "":
        raise ValueError(f"records: got {folder!r}; expected a folder path (str or os.PathLike)")
    problem = records_problem(folder)
    if problem is not None:
        raise ValueError(f"records: {str(folder)!r} {problem}; expected a new or empty folder that can be written")
    return Path(folder)


def prepare(folder: Path) -> None:
    """Make the records folder (and any missing folders above it)."""
    folder.mkdir(parents=True, exist_ok=True)


def write_record(folder: Path, game: int, dice_seed: int, labels: Sequence[str], record: dict[str, Any]) -> str:
    """Write one game's record atomically into `folder`; its file name."""
    name = record_name(game, dice_seed, labels)
    write_atomically(folder / name, json.dumps(record).encode())
    return name


def write_index(folder: Path, result: Any) -> None:
    """Write `index.json` for a finished tournament (`result`: an `ArenaResult`)."""
    L = len(result.lineups)
    games = []
    for g, scores in enumerate(result.games.scores.tolist()):
        deal, j = divmod(g, L)
        labels = [result.labels[b] for b in result.lineups[j]]
        games.append({
            "file": record_name(g, result.seed + deal, labels),
            "game": g, "deal": deal, "lineup": j, "seed": result.seed + deal, "bots": labels,
            "bot_seeds": [bot_seed(result.seed, deal, j, s) for s in range(result.num_players)],
            "scores": scores,
        })
    index = {
        "format": INDEX_FORMAT,
        "variant": result.variant, "lucky": result.lucky, "num_players": result.num_players,
        "seed": result.seed, "deals": result.deals, "games": games,
    }
    sheet = custom_sheet(result.variant)
    if sheet is not None:
        index["sheet"] = sheet
    write_atomically(folder / INDEX_NAME, json.dumps(index).encode())
