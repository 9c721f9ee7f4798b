"""Game records opened in the replay viewer: checked, then laid out as one frame per position.

A record is the JSON of ``env.unwrapped.record()`` (`qwixx_env.envs.record`). `check_record`
refuses anything else with a message naming the problem (a missing or unknown field, a wrong
type, a decision the rules refuse, dice the replay does not roll); only a dict is ever passed
on, so a request can never make the server read a file. `Replay` holds the frames: the
position before each decision (every white-action choice shown, as the game is over for the
viewer) and the position after the last.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qwixx_env.core.checks import check_seed
from qwixx_env.core.variant import variant_names
from qwixx_env.envs.qwixx_v0 import RECORD_FORMAT, raw_env
from qwixx_env.envs.record import replay
from qwixx_env.play.games import PlayError, advice, sheet_layout
from qwixx_env.play.session import WHITE_PHASES, mark_of

REQUIRED = ("format", "options", "rng_state", "rolls", "decisions")
OPTIONAL = ("sheet", "seed", "snapshot", "seat_names")  # seat_names: how the viewer names each seat
SHOWN = 60  # characters of a bad value a message quotes


def shown(value: Any) -> str:
    """`value` as a message quotes it: its repr, cut short (a request body may be large)."""
    text = repr(value)
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}... (a {type(value).__name__})"


def _of_kind(kind: type, words: str) -> Callable[[str, Any], Any]:
    def check(name: str, value: Any) -> Any:
        if not isinstance(value, kind):
            raise ValueError(f"{name}: got {shown(value)}; expected {words}")
        return value
    return check


def _format(name: str, value: Any) -> str:
    if value != RECORD_FORMAT:
        raise ValueError(f"{name}: got {shown(value)}; expected {RECORD_FORMAT!r}")
    return value


def _sheet(name: str, value: Any) -> dict[str, Any]:
    """A record's sheet (a variant not the package's own) is viewed only where the server
    knows that variant already (``qwixx serve --variant FILE``): a request never registers one,
    so it never makes the server compile kernels for a sheet of its choosing. `replay` then
    checks that the record's sheet is the one known here."""
    known = variant_names()
    if not (isinstance(value, dict) and value.get("name") in known):
        got = value.get("name") if isinstance(value, dict) else value
        raise ValueError(f"{name}: a sheet named {shown(got)}, which this server does not know; expected one of "
                         f"{list(known)} (start the server with --variant FILE to view its games)")
    return value


def _names(name: str, value: Any) -> list[str]:
    if not (isinstance(value, list) and all(isinstance(n, str) and n for n in value)):
        raise ValueError(f"{name}: got {shown(value)}; expected a list of non-empty names, one per seat")
    return value


# Every field a record may have and its check, in one place: the field's own shape here; how
# the fields fit together (options, dice, decisions, snapshot) is the rules' to say (`replay`).
# A seed is what the game was reset with (None: none given), any whole number >= 0 as
# `raw_env.reset` takes it; the dice come from rng_state, so the seed is not replayed.
FIELDS: dict[str, Callable[[str, Any], Any]] = {
    "format": _format,
    "options": _of_kind(dict, "a JSON object (the table's options)"),
    "rng_state": _of_kind(str, "a 64-bit hex string"),
    "rolls": _of_kind(list, "a list (the dice of each roll)"),
    "decisions": _of_kind(list, "a list of [seat, action] pairs"),
    "sheet": _sheet,
    "seed": lambda name, value: check_seed(value, name),
    "snapshot": _of_kind(dict, "a JSON object (the position after the last decision)"),
    "seat_names": _names,
}


def check_record(record: Any) -> dict[str, Any]:
    """`record` if it is a game record the rules replay to its own snapshot; else a
    `PlayError` (400) naming the problem: the fields of `REQUIRED` and `OPTIONAL` only, each
    as `FIELDS` checks it (``record seed: got 'zzz'; expected None or a non-negative
    integer``), then the rules' replay of it (`qwixx_env.replay`), and a name per seat."""
    if not isinstance(record, dict):
        raise PlayError(400, f"record: got {type(record).__name__}; expected a JSON object (a game record)")
    missing = [f for f in REQUIRED if f not in record]
    unknown = sorted(set(record) - set(REQUIRED) - set(OPTIONAL))
    if missing or unknown:
        problem = f"missing field(s) {missing}" if missing else f"unknown field(s) {unknown}"
        raise PlayError(400, f"record: {problem}; a record has {list(REQUIRED)} and optionally {list(OPTIONAL)}")
    try:
        for name, check in FIELDS.items():
            if name in record:
                check(f"record {name}", record[name])
        players = len(replay(record).possible_agents)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as err:
        text = str(err)
        raise PlayError(400, text if text.startswith("record") else f"record: {text}") from None
    names = record.get("seat_names")
    if names is not None and len(names) != players:
        raise PlayError(400, f"record seat_names: got {shown(names)}; expected {players} non-empty names, one per "
                             "seat")
    return record


def _start(record: dict[str, Any], decisions: int, rolls: int) -> raw_env:
    """The game of `record` after its first `decisions` decisions (which reach `rolls` rolls)."""
    part = {k: v for k, v in record.items() if k != "snapshot"}
    part.update(decisions=record["decisions"][:decisions], rolls=record["rolls"][:rolls])
    return replay(part)


class Replay:
    """A checked record and its frames (see the module docstring)."""

    def __init__(self, replay_id: str, record: Any):
        self.id = replay_id
        self.record = check_record(record)
        env = _start(self.record, 0, 1)
        self.options = env.options
        self.table = env.table  # what the coach needs prepared for this record
        self._sheet = sheet_layout(env.variant)
        self.frames: list[dict[str, Any]] = []
        pending: list[dict[str, Any]] = []
        for seat, action in self.record["decisions"]:
            self.frames.append(self._frame(env, pending, {"seat": seat, "action": action}))
            snap = env.snapshot()
            env.step(action)
            if snap["phase"] in WHITE_PHASES:
                pending = [*pending, {"seat": seat, "action": action, "mark": mark_of(action, env.variant)}]
            after = env.snapshot()
            if after["roll"] != snap["roll"] or after["phase"] not in WHITE_PHASES:
                pending = []
        self.frames.append(self._frame(env, pending, None))

    @staticmethod
    def _frame(env: raw_env, pending: list[dict[str, Any]], decision: dict[str, Any] | None) -> dict[str, Any]:
        snap = env.snapshot()
        if decision is not None:
            decision["mark"] = mark_of(decision["action"], env.variant)
        legal = [{"action": a, "mark": mark_of(a, env.variant)} for a in env.legal_actions()]
        over = snap["phase"] == "over"
        return {
            "snapshot": snap,
            "to_decide": None if over else env.agent_name_mapping[env.agent_selection],
            "legal": legal,
            "pending": list(pending),
            "decision": decision,
        }

    def position(self, step: Any) -> raw_env:
        """The game before decision `step` (0 .. number of decisions), rebuilt by replaying."""
        last = len(self.frames) - 1
        if not (isinstance(step, int) and not isinstance(step, bool) and 0 <= step <= last):
            raise PlayError(400, f"step: got {step!r}; expected 0 to {last} (this record's positions)")
        return _start(self.record, step, self.frames[step]["snapshot"]["roll"] + 1)

    def advice(self, step: Any, bot: str | None) -> dict[str, Any]:
        """The coach on the decision at position `step` (a `PlayError` where there is none)."""
        env = self.position(step)
        if self.frames[step]["to_decide"] is None:
            raise PlayError(409, f"coach: position {step} is the end of the record; there is no decision to value")
        return advice(env, bot)

    def view(self) -> dict[str, Any]:
        """The replay as the viewer shows it: its options, sheet layout, frames and the seats'
        names (None where the record has none)."""
        return {"id": self.id, "options": self.options, "sheet": self._sheet, "frames": self.frames,
                "seat_names": self.record.get("seat_names")}
