"""Games kept on disk for ``qwixx serve --store DIR``: one JSON file per game, read back at start.

A game's file holds its full record (every decision, the hidden ones too: the file is the
server's, never served; None for a game still getting ready) and what resuming it needs: the
new-game request that made it (table, seats with their names and kinds, bot names, seed) and
the secret of every person's seat, so that a join link keeps working across a restart. `save`
rewrites the file whole after every decision (`files.write_atomically`: a temporary file in
DIR, fsync, rename; readable by its owner only, since it holds the seats' secrets); `load`
replays the record through a new session, the people's decisions given again and the bots
deciding as they did, and checks that it reaches the recorded game.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from qwixx_env.files import folder_problem, write_atomically
from qwixx_env.play.games import Game, PlayError, make_bots, parse_new_game

FORMAT = "qwixx_env.play-game/1"
GAME_ID = re.compile(r"[0-9a-f]{32}")


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


def load(path: Path) -> Game:
    """The game kept in `path`, resumed: a `ValueError` names the file and what is wrong with
    it (not a kept game, or its bots no longer play as recorded)."""
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"format: expected {FORMAT!r}")
        game_id = data["id"]
        if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id) or path.name != f"{game_id}.json":
            raise ValueError(f"id: got {game_id!r}; expected 32 hex digits, as the file's name")
        new = parse_new_game(data["new_game"])
        seat_secrets = {int(seat): secret for seat, secret in data["seat_secrets"].items()}
        game = Game(game_id, new, make_bots(new), seat_secrets)
        decisions = [] if data["record"] is None else data["record"]["decisions"]
        for index, (seat, action) in enumerate(decisions):
            if seat in seat_secrets and index >= game.decisions:  # the bots' decisions the session takes itself
                game.move({"seat": seat, "action": action}, seat_secrets[seat])  # in order: no page to be stale
        replayed = game.session.record(public=False)["decisions"]
        if replayed != decisions:
            first = next((i for i, (a, b) in enumerate(zip(replayed, decisions)) if a != b), len(replayed))
            raise ValueError(f"decision {first}: the game no longer plays as recorded (a bot decides otherwise)")
    except PlayError as err:
        raise ValueError(f"{path}: {err.message}") from None
    except RecursionError:  # JSON nested too deep for the parser: never a kept game
        raise ValueError(f"{path}: not a kept game (its JSON is nested too deeply to read)") from None
    except (OSError, KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{path}: not a kept game ({type(err).__name__}: {err})") from None
    return game


def load_folder(folder: Path) -> tuple[list[Game], list[str]]:
    """Every game kept in `folder`, oldest file first, and a message for each file that could
    not be resumed (it is left where it is)."""
    games, problems = [], []
    for path in sorted(folder.glob("*.json"), key=lambda p: (p.stat().st_mtime, p.name)):
        try:
            games.append(load(path))
        except ValueError as err:
            problems.append(str(err))
    return games, problems
