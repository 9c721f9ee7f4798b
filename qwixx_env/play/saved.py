"""Games kept on disk for ``qwixx serve --store DIR``: one JSON file per game, read back at start.

A game's file holds its full record (every decision, the hidden ones too: the file is the
server's, never served; None for a game still getting ready) and what resuming it needs: the
new-game request that made it (table, seats with their names and kinds, bot names, seed) and
the secret of every person's seat, so that a join link keeps working across a restart. `save`
rewrites the file whole after every decision (`files.write_atomically`: a temporary file in
DIR, fsync, rename; readable by its owner only, since it holds the seats' secrets); `load`
replays the record through a new session, the people's decisions given again and the bots
deciding as they did, and checks that it reaches the recorded game.

The folder may hold what the server did not write there, so at start `tidy` makes it private
(0700) and removes the temporary files of saves killed midway, and `load_folder` reads only
regular files of the server's own user within `MAX_FILE` bytes (a symbolic link is never
followed, a named pipe never waited on) and checks every field it uses: whatever it cannot use
is named and left as it is, and the other games are resumed.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from qwixx_env.files import folder_problem, write_atomically
from qwixx_env.play.games import Game, NewGame, PlayError, make_bots, parse_new_game
from qwixx_env.play.replays import shown

FORMAT = "qwixx_env.play-game/1"
GAME_ID = re.compile(r"[0-9a-f]{32}")
SECRET = re.compile(r"[A-Za-z0-9_-]{16,}")  # as `Game` draws them (token_urlsafe); never "", which any page sends
STALE = re.compile(r"\.[0-9a-f]{32}\.json\.[a-z0-9_]+\.tmp")  # what `write_atomically` leaves when killed
MAX_FILE = 2**20  # bytes of a game's file; a finished 5-player game's is far smaller
_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # no link, no wait on a pipe
_NOT_REGULAR = (
    (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISDIR, "a folder"),
    (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
)


class Unusable(ValueError):
    """What makes a kept file unusable, said as its message: the file itself or a field."""


def check_folder(folder: str | Path) -> Path:
    """`folder` as a Path when games can be kept there; a `ValueError` says why not."""
    problem = folder_problem(folder)
    if problem is not None:
        raise ValueError(f"--store: got {str(folder)!r}, which {problem}; expected a folder the server may write "
                         "games into (create it first)")
    return Path(folder)


def game_file(folder: Path, game_id: str) -> Path:
    """Where game `game_id` is kept in `folder`."""
    return folder / f"{game_id}.json"


def save(game: Game, folder: Path) -> None:
    """Write `game` (its record and what resuming it needs) to its file in `folder`, whole."""
    data = {
        "format": FORMAT,
        "id": game.id,
        "new_game": game.new.options(),
        "seat_secrets": {str(seat): secret for seat, secret in game.seat_secrets.items()},
        "record": game.session.record(public=False) if game.begun else None,  # None: not begun yet
    }
    write_atomically(game_file(folder, game.id), json.dumps(data).encode(), mode=0o600)  # it holds the seats' secrets


def forget(folder: Path, game_id: str) -> None:
    """Remove game `game_id`'s file from `folder` (a game the server dropped)."""
    game_file(folder, game_id).unlink(missing_ok=True)


def tidy(folder: Path) -> list[str]:
    """Make `folder` private (0700: its files' names are the game ids, a spectator's way in)
    and remove the temporary files of this server's saves killed midway; a message for what
    could not be done. Called at start, before the server saves anything there."""
    problems = []
    mode = stat.S_IMODE(folder.stat().st_mode)
    if os.name == "posix" and mode & 0o077:
        try:
            os.chmod(folder, mode & 0o700)
        except OSError as err:
            problems.append(f"{folder}: mode {mode:04o}, and it could not be made private (0700: {err.strerror}); "
                            "other users can see which games it keeps")
    for path in folder.iterdir():
        if STALE.fullmatch(path.name):
            problem = _file_problem(path.lstat())
            if problem is None:
                path.unlink(missing_ok=True)
            else:
                problems.append(f"{path}: left as it is: {problem}")
    return problems


def _file_problem(info: os.stat_result) -> str | None:
    """Why a file of this `lstat` or `fstat` is not one the store reads, or None when it is:
    a regular file of the server's own user, at most `MAX_FILE` bytes."""
    if not stat.S_ISREG(info.st_mode):
        kind = next((words for is_kind, words in _NOT_REGULAR if is_kind(info.st_mode)), "not a regular file")
        return f"{kind}; the store reads only the regular files it writes"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return f"owned by user {info.st_uid}, not by the server's ({os.geteuid()}); the store reads only its own files"
    if info.st_size > MAX_FILE:
        return f"{info.st_size} bytes, over the limit of {MAX_FILE} bytes for a game's file"
    return None


def _read(path: Path) -> bytes:
    """The bytes of `path`, a file the store reads (`_file_problem`: looked at before it is
    opened and again once open, in case it was replaced between), at most `MAX_FILE` of them;
    else an `Unusable` saying why."""
    problem = _file_problem(path.lstat())
    if problem is None:
        with os.fdopen(os.open(path, _OPEN), "rb") as f:
            problem = _file_problem(os.fstat(f.fileno()))
            data = b"" if problem else f.read(MAX_FILE + 1)
        if len(data) > MAX_FILE:  # grew since it was looked at
            problem = f"over the limit of {MAX_FILE} bytes for a game's file"
    if problem:
        raise Unusable(f"skipped: {problem}")
    return data


def _fields(data: Any, file_name: str) -> tuple[str, NewGame, dict[int, str], list[list[int]]]:
    """What `load` uses of a kept file's JSON, each field checked: an `Unusable` names the first
    one that is not as `save` writes it. Returns the id, the new-game request, the secret of
    each person's seat and the decisions of the record ([] for a game not begun)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else data
        raise Unusable(f"not resumed: format: got {shown(got)}; expected a JSON object of format {FORMAT!r}")
    game_id = data.get("id")
    if not (isinstance(game_id, str) and GAME_ID.fullmatch(game_id) and file_name == f"{game_id}.json"):
        raise Unusable(f"not resumed: id: got {shown(game_id)}; expected 32 hex digits, as the file's name")
    try:
        new = parse_new_game(data.get("new_game"))
    except PlayError as err:
        raise Unusable(f"not resumed: new_game: {err.message.removeprefix('new game: ')}") from None
    seat_secrets = _seat_secrets(data.get("seat_secrets"), new.humans)
    if seat_secrets is None:
        raise Unusable(f"not resumed: seat_secrets: got {shown(data.get('seat_secrets'))}; expected an object of "
                       f"each person's seat {[str(seat) for seat in new.humans]} to its secret (16 or more of "
                       "A-Z a-z 0-9 _ -)")
    decisions = _decisions(data.get("record"))
    if decisions is None:
        raise Unusable(f"not resumed: record: got {shown(data.get('record'))}; expected null (a game getting "
                       "ready) or a game record whose decisions are [seat, action] pairs of integers")
    return game_id, new, seat_secrets, decisions


def _seat_secrets(value: Any, humans: tuple[int, ...]) -> dict[int, str] | None:
    """`value`, a kept ``seat_secrets``, as each seat in `humans` to its secret; None unless
    it is as `save` writes it (seat numbers as strings, every person's seat once)."""
    if not isinstance(value, dict):
        return None
    seats = {
        int(seat): secret for seat, secret in value.items()
        if seat.isascii() and seat.isdigit() and len(seat) < 3 and isinstance(secret, str) and SECRET.fullmatch(secret)
    }
    return seats if len(seats) == len(value) and sorted(seats) == list(humans) else None


def _decisions(record: Any) -> list[list[int]] | None:
    """The decisions of `record`, a kept ``record`` ([] when it is None: a game not begun);
    None unless they are [seat, action] pairs of integers."""
    decisions = [] if record is None else record.get("decisions") if isinstance(record, dict) else None
    if isinstance(decisions, list) and all(
        isinstance(pair, list) and len(pair) == 2 and all(type(n) is int for n in pair) for pair in decisions
    ):
        return decisions
    return None


def load(path: Path) -> Game:
    """The game kept in `path`, resumed: a `ValueError` names the file and what is wrong with
    it (a file the store does not read, a field not as `save` writes it, or bots that no longer
    play as recorded)."""
    try:
        game_id, new, seat_secrets, decisions = _fields(json.loads(_read(path)), path.name)
        game = Game(game_id, new, make_bots(new), seat_secrets)
        for index, (seat, action) in enumerate(decisions):
            if seat in seat_secrets and index >= game.decisions:  # the bots' decisions the session takes itself
                game.move({"seat": seat, "action": action}, seat_secrets[seat])  # in order: no page to be stale
        replayed = game.session.record(public=False)["decisions"]
        if replayed != decisions:
            first = next((i for i, (a, b) in enumerate(zip(replayed, decisions)) if a != b), len(replayed))
            raise ValueError(f"decision {first}: the game no longer plays as recorded (a bot decides otherwise)")
    except Unusable as err:
        raise ValueError(f"{path}: {err}") from None
    except PlayError as err:
        raise ValueError(f"{path}: not resumed: {err.message}") from None
    except RecursionError:  # JSON nested too deep for the parser: never a kept game
        raise ValueError(f"{path}: not a kept game (its JSON is nested too deeply to read)") from None
    except (OSError, KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{path}: not a kept game ({type(err).__name__}: {err})") from None
    return game


def load_folder(folder: Path) -> tuple[list[Game], list[str]]:
    """Every game kept in `folder`, oldest file first, and a message for each file that could
    not be resumed (it is left where it is)."""
    games, problems = [], []
    for path in sorted(folder.glob("*.json"), key=lambda p: (_modified(p), p.name)):
        try:
            games.append(load(path))
        except ValueError as err:
            problems.append(str(err))
    return games, problems


def _modified(path: Path) -> float:
    """When the entry `path` (never what it links to) last changed; 0 when it is gone since it
    was listed (`load` then says so)."""
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0
