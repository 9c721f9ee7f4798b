"""Game records: `raw_env.record()` exports a game as JSON, `replay(record)` rebuilds it.

A record holds the options, the seed (if one was given), the generator state the game started
from, the dice of every roll and every decision as ``[seat, action]``; for a variant that is not
the package's own, the whole sheet too (``"sheet"``, `Variant.as_dict`), registered by the
replay where it is not yet (records kept before they carried it replay where their variant is
registered). Replaying restores the
generator state and repeats the decisions through the same rules, checking each roll's dice
against the record, so a record that does not match the rules is reported, not trusted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from qwixx_env.core.checks import check_seed
from qwixx_env.core.rewards import check_illegal_reward
from qwixx_env.core.state import OVER
from qwixx_env.core.variant import VARIANT_NAMES, register_sheet, variant_names
from qwixx_env.envs.qwixx_v0 import RECORD_FORMAT, raw_env

_OPTION_NAMES = ("num_players", "variant", "lucky", "lucky_numbers", "start_player", "reward", "score_table")
_T = TypeVar("_T")


def replay(record: dict[str, Any] | str | Path, render_mode: str | None = None) -> raw_env:
    """Rebuild the game of a record (a dict, a JSON string or a path to a JSON file).

    Returns the unwrapped environment positioned after the record's last decision, so
    ``replay(rec).snapshot() == rec["snapshot"]`` and play may continue from there.
    Raises `ValueError` if the record is malformed, if its dice disagree with the replay
    (every roll the record lists must be one the replay reaches), or if the replay ends
    elsewhere than the record's `snapshot` says.
    """
    rec = _load(record)
    if not isinstance(rec, dict) or rec.get("format") != RECORD_FORMAT:
        got = rec.get("format") if isinstance(rec, dict) else rec
        raise ValueError(f"record format: got {got!r}; expected a dict with format {RECORD_FORMAT!r}")
    options = _field(rec, "options", dict)
    if "sheet" in rec:
        try:
            register_sheet(rec["sheet"], options.get("variant"), "the record")
        except ValueError as err:
            raise ValueError(f"record sheet: {err}") from None
    elif isinstance(options.get("variant"), str) and options["variant"] not in variant_names():
        raise ValueError(f"record options: variant {options['variant']!r} is not registered in this process and the "
                         "record carries no sheet (kept before records carried theirs); register_variant it first")
    rolls, decisions = _field(rec, "rolls", list, []), _field(rec, "decisions", list, [])
    game = raw_env(render_mode=render_mode, **{k: v for k, v in options.items() if k in _OPTION_NAMES})
    rng_state = rec.get("rng_state")
    try:
        if not isinstance(rng_state, (str, bytes, bytearray)):  # what int(x, 16) reads
            raise TypeError(rng_state)
        start = int(rng_state, 16)
        np.uint64(start)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"record rng_state: got {rng_state!r}; expected a 64-bit hex string") from None
    seed = check_seed(rec.get("seed"), "record seed")  # what it says, not what rolls: rng_state does
    game.reset_from_generator(start, seed)
    _check_roll(game, rolls, 0)
    for i, decision in enumerate(decisions):
        if not (isinstance(decision, list) and len(decision) == 2 and type(decision[0]) is int):
            raise ValueError(f"record decision {i}: got {decision!r}; expected [seat, action]")
        seat, action = decision
        roll_before = int(game.core_state.roll[0])
        agent = f"player_{seat}"
        if agent != game.agent_selection:
            raise ValueError(
                f"record decision {i}: {agent} acts, but the replay expects {game.agent_selection}"
            )
        try:
            game.step(action)
        except ValueError as err:
            raise ValueError(f"record decision {i}: {err}") from None
        if game.core_state.roll[0] != roll_before:  # dice as rolled, before any row locks
            _check_roll(game, rolls, int(game.core_state.roll[0]))
    end = rec.get("illegal_end")
    if end is not None:
        seat, action = (end.get("seat"), end.get("action")) if isinstance(end, dict) else (None, None)
        if not (type(seat) is int and 0 <= seat < game.num_agents) or not (action is None or type(action) is int):
            raise ValueError(f"record illegal_end: got {end!r}; expected {{'seat': a seat, 'action': an action}}")
        if game.core_state.phase[0] == OVER:
            raise ValueError("record illegal_end: the record's decisions already end the game")
        illegal_reward = check_illegal_reward(None, game.reward_mode, game.variant)
        game.end_on_illegal(f"player_{seat}", illegal_reward, action)
    reached = int(game.core_state.roll[0]) + 1
    if len(rolls) > reached:
        raise ValueError(
            f"record rolls: got {len(rolls)}; the replay of its decisions reaches {reached} roll(s)"
        )
    if "snapshot" in rec and not _same_position(rec["snapshot"], game.snapshot()):
        unsure = "" if "sheet" in rec or game.table.variant in VARIANT_NAMES else (
            f", or the variant {game.table.variant!r} registered here is not the one it was played with (a record "
            "kept before records carried their sheet)")
        raise ValueError(
            f"record snapshot: differs from the position its decisions replay to (the record was changed{unsure})"
        )
    return game


def _same_position(recorded: Any, replayed: dict[str, Any]) -> bool:
    """Whether a record's snapshot is the replayed one. A die out of play is null in the replay;
    records kept before a game-ending lock in the colour action showed that die's last face,
    and they still match (the face of a die out of play says nothing about the game)."""
    if recorded == replayed:
        return True
    dice = recorded.get("dice") if isinstance(recorded, dict) else None
    if not isinstance(dice, dict) or set(dice) != set(replayed["dice"]):
        return False
    shown = {k: None if now is None else dice[k] for k, now in replayed["dice"].items()}
    return {**recorded, "dice": shown} == replayed


def _check_roll(game: raw_env, rolls: list, index: int) -> None:
    if index < len(rolls) and rolls[index] != game.engine.dice():
        raise ValueError(
            f"record roll {index}: dice {rolls[index]} but the replay rolled {game.engine.dice()}"
        )


def _field(rec: dict[str, Any], name: str, kind: type[_T], default: Any = None) -> _T:
    """`rec[name]` (`default` when absent) if it is a `kind`; a `ValueError` naming it otherwise."""
    value = rec.get(name, default)
    if not isinstance(value, kind):
        raise ValueError(f"record {name}: got {value!r}; expected a {kind.__name__}")
    return value


def _load(record: dict[str, Any] | str | Path) -> dict[str, Any]:
    if isinstance(record, dict):
        return record
    if isinstance(record, Path) or (isinstance(record, str) and not record.lstrip().startswith("{")):
        return json.loads(Path(record).read_text())
    return json.loads(record)
