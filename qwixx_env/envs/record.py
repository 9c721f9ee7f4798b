"""Game records: `raw_env.record()` exports a game as JSON, `replay(record)` rebuilds it.

A record holds the options, the seed (if one was given), the generator state the game started
from, the dice of every roll and every decision as ``[seat, action]``. Replaying restores the
generator state and repeats the decisions through the same rules, checking each roll's dice
against the record, so a record that does not match the rules is reported, not trusted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qwixx_env.envs.qwixx_v0 import RECORD_FORMAT, raw_env

_OPTION_NAMES = ("num_players", "variant", "lucky", "lucky_numbers", "start_player", "reward")


def replay(record: "dict[str, Any] | str | Path", render_mode: str | None = None) -> raw_env:
    """Rebuild the game of a record (a dict, a JSON string or a path to a JSON file).

    Returns the unwrapped environment positioned after the record's last decision, so
    ``replay(rec).snapshot() == rec["snapshot"]`` and play may continue from there.
    Raises `ValueError` if the record is malformed or its dice disagree with the replay.
    """
    rec = _load(record)
    if rec.get("format") != RECORD_FORMAT:
        raise ValueError(f"record format: got {rec.get('format')!r}; expected {RECORD_FORMAT!r}")
    options = {k: v for k, v in rec["options"].items() if k in _OPTION_NAMES}
    game = raw_env(render_mode=render_mode, **options)
    try:
        rng_state = int(rec["rng_state"], 16)
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"record rng_state: got {rec.get('rng_state')!r}; expected a hex string") from None
    game.core_state.rng[0] = rng_state
    game._rng_ready = True
    game._start_game(rec.get("seed"))
    rolls = rec.get("rolls", [])
    _check_roll(game, rolls, 0)
    for i, decision in enumerate(rec.get("decisions", [])):
        try:
            seat, action = decision
        except (TypeError, ValueError):
            raise ValueError(f"record decision {i}: got {decision!r}; expected [seat, action]") from None
        agent = f"player_{seat}"
        if agent != game.agent_selection:
            raise ValueError(
                f"record decision {i}: {agent} acts, but the replay expects {game.agent_selection}"
            )
        game.step(action)
        _check_roll(game, rolls, int(game.core_state.roll[0]))
    return game


def _check_roll(game: raw_env, rolls: list, index: int) -> None:
    if index < len(rolls) and rolls[index] != game._dice_now():
        raise ValueError(
            f"record roll {index}: dice {rolls[index]} but the replay rolled {game._dice_now()}"
        )


def _load(record: "dict[str, Any] | str | Path") -> dict[str, Any]:
    if isinstance(record, dict):
        return record
    if isinstance(record, Path) or (isinstance(record, str) and not record.lstrip().startswith("{")):
        return json.loads(Path(record).read_text())
    return json.loads(record)
