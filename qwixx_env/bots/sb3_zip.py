"""The game an SB3 ``.zip`` model was trained on, and its run's name, kept inside the zip.

A MaskablePPO ``.zip`` holds the network and the sizes of its spaces, not the game: a model
trained on Longo with the lucky cross as a bonus reads a Longo-instead table's observation
just as well. `qwixx-train` therefore writes the run's name and table into every model it
saves, as one more member of the archive (`MEMBER`, JSON; SB3 loads past it), and
`qwixx_env.benchmark` reads it back to refuse a table the model was not trained on, as it
refuses a numpy checkpoint's (`qwixx_env.bots.pretrained.check_trained_table`), and to label
the model by its run.

>>> write_game("runs/my2p/checkpoint/model.zip", "my2p", TableOptions(num_players=2))
>>> read_game("runs/my2p/checkpoint/model.zip")    # ZipGame(name='my2p', table=TableOptions(...))

A zip that a `qwixx-train` run saved before the member existed is a ``model.zip`` beside its
checkpoint's ``state.json`` (`qwixx_env.training.checkpoint`), whose config says the same;
`read_game` falls back on it. Any other zip says nothing: `read_game` gives None.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from qwixx_env.core.options import TableOptions

MEMBER = "qwixx_env.json"
FORMAT = "qwixx_env.sb3_zip/1"
MODEL, STATE = "model.zip", "state.json"
"""A `qwixx-train` checkpoint's model and, beside it, its state file (`qwixx_env.training.checkpoint`)."""


@dataclass(frozen=True)
class ZipGame:
    """What a model was trained on: its run's `name` and the `table` (variant, players, lucky rule)."""

    name: str
    table: TableOptions


def write_game(path: str | os.PathLike[str], name: str, table: TableOptions) -> None:
    """Add the run's `name` and `table` to the SB3 ``.zip`` at `path` (see the module docstring)."""
    game = {"format": FORMAT, "name": name, "variant": table.variant, "num_players": table.num_players,
            "lucky": table.lucky}
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(MEMBER, json.dumps(game, indent=1) + "\n")


def read_game(path: str | os.PathLike[str]) -> ZipGame | None:
    """The game of the SB3 ``.zip`` at `path`: its own `MEMBER`, else (a `qwixx-train`
    checkpoint's ``model.zip``) the config in the ``state.json`` beside it, else None. A member
    or state file that is there but unreadable is a `ValueError` naming the file."""
    try:
        with zipfile.ZipFile(path) as archive:
            text = archive.read(MEMBER).decode() if MEMBER in archive.namelist() else None
    except (OSError, zipfile.BadZipFile) as err:
        raise ValueError(f"agent {os.fspath(path)!r}: not a readable .zip ({err})") from None
    where, key = f"{os.fspath(path)}:{MEMBER}", None
    if text is None:
        state = Path(path).with_name(STATE)
        if Path(path).name != MODEL or not state.is_file():
            return None
        where, key, text = str(state), "config", state.read_text(encoding="utf-8")
    try:
        game = json.loads(text)
        game = game if key is None else game[key]
        table = TableOptions(variant=game["variant"], num_players=game["num_players"], lucky=game["lucky"])
        return ZipGame(str(game["name"]), table)
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{where}: does not say a model's game ({type(err).__name__}: {err})") from None
