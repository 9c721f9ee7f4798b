"""One play session: a table, its seats (people or bots), and the game told as events.

The play page's server (`play.games`) and the terminal game (`play.terminal`) both render a
`PlaySession`. It holds the unwrapped AEC env (`qwixx_v0.raw_env`) of one game, the bot of
every bot seat, and the events of the game so far. `advance` lets the bots decide until a
person's decision is needed (or the game is over); `decide(seat, action)` applies a person's
decision, checked, then advances. Both return the new events, which `events` keeps in order.

Every event is JSON-ready plain data with a ``kind``:

``roll``      a new roll: ``roll``, ``active`` (the seat that rolled), ``dice``, ``white_sum``
``decision``  a decision as it is taken: ``seat``, ``roll``, ``phase`` (white, lucky or color),
              ``action``, ``mark`` (row, number and label; None for a pass), then ``snapshot``
              and ``to_decide`` after it. A colour action adds ``penalty`` (the pass cost one)
              and ``locks`` (the rows its cross locked). In Longo, a white choice whose lucky
              cross ties between rows is told with that seat's next decision, the row, as one
              event: ``lucky`` (``action``, ``mark``) is the lucky decision.
``white``     the white action revealed, once every seat has chosen: ``white_sum``,
              ``choices`` (each white and lucky decision: seat, action, mark) and ``outcomes``
              (per seat: ``crosses``, each mark with ``lucky`` true for a lucky cross, and
              ``locks``), then ``snapshot`` and ``to_decide``.
``over``      the game is over: ``scores`` and ``winners``.

The white action is simultaneous: a white-action decision changes nothing on the table until
the reveal, and nobody else may see it before. `seen_by(event, viewer)` is an event as seat
`viewer` may see it (another seat's white-action decision without its action), and
`record(public=True)` stops at the roll during a white action, so that neither gives a
choice away. Nor does a Longo lucky tie, which only a white choice can cause: the other seats
see one white decision per seat (the lucky one told with it), the white phase where the
seat is breaking the tie (`public_snapshot`), and `public_decisions`, which does not count a
white choice held back for its lucky decision.

>>> from qwixx_env.core.options import TableOptions
>>> from qwixx_env.play.session import HUMAN, PlaySession
>>> session = PlaySession(TableOptions(num_players=2), [HUMAN, "greedy"], seed=4)
>>> session.advance()                      # [{'kind': 'roll', ...}]: seat 0, a person, decides first
>>> events = session.decide(0, 44)         # pass; greedy's white choice, the reveal, ...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qwixx_env.bots import Bot, make_bot
from qwixx_env.core.checks import check_int, is_int
from qwixx_env.core.options import TableOptions
from qwixx_env.core.state import OVER
from qwixx_env.core.variant import Variant, decode_action, encode_action
from qwixx_env.envs.qwixx_v0 import raw_env
from qwixx_env.envs.record import replay
from qwixx_env.play.labels import action_label

HUMAN = "human"  # a seat a person plays (any other seat is a bot's)
WHITE_PHASES = ("white", "lucky")  # the simultaneous part of a roll: choices stay hidden until it resolves


def mark_of(action: int, variant: Variant) -> dict[str, Any] | None:
    """An action as events name it: row, number and short label (``r7``), or None for pass."""
    mark = decode_action(action, variant)
    if mark is None:
        return None
    color, number = mark
    return {"row": color, "number": int(number), "label": action_label(action, variant)}


def _cross_mark(action: int, variant: Variant) -> dict[str, Any]:
    """`mark_of` for an action that crosses a number (a pass here is a bug)."""
    mark = mark_of(action, variant)
    if mark is None:
        raise ValueError(f"action {action}: got a pass where a cross was expected")
    return mark


def crosses(snap: dict[str, Any], seat: int) -> int:
    """How many numbers `seat` has crossed on its sheet in snapshot `snap`."""
    return sum(len(numbers) for numbers in snap["players"][seat]["marks"].values())


def gained(before: dict[str, Any], after: dict[str, Any], seat: int) -> tuple[list[tuple[str, int]], list[str]]:
    """What `seat`'s sheet gained from snapshot `before` to `after`: the crosses as (row,
    number), row by row, and the rows it locked."""
    b, a = before["players"][seat], after["players"][seat]
    new = [(row, n) for row, numbers in a["marks"].items() for n in numbers if n not in b["marks"][row]]
    return new, [c for c in a["locks"] if c not in b["locks"]]


def seen_by(event: dict[str, Any], viewer: int) -> dict[str, Any]:
    """`event` as seat `viewer` may see it: another seat's white-action decision says only
    that the seat has chosen (``hidden``, no action or mark, a white decision even where it
    broke a lucky tie); the reveal shows them all."""
    if event["kind"] == "decision" and event["phase"] in WHITE_PHASES and event["seat"] != viewer:
        hidden = {k: v for k, v in event.items() if k != "lucky"}
        snapshot = public_snapshot(event["snapshot"], event["to_decide"], viewer)
        return {**hidden, "phase": "white", "action": None, "mark": None, "hidden": True, "snapshot": snapshot}
    return event


def public_snapshot(snapshot: dict[str, Any], to_decide: int | None, viewer: int | None) -> dict[str, Any]:
    """`snapshot` as seat `viewer` (None: a spectator) may see it: while another seat breaks a
    Longo lucky tie its phase reads ``white`` (that seat is still in its white action, as far as
    the others can know: the tie comes of its hidden white choice)."""
    if snapshot["phase"] == "lucky" and to_decide != viewer:
        return {**snapshot, "phase": "white"}
    return snapshot


class PlaySession:
    """One game at a table of people and bots, told as events (see the module docstring).

    `seats` has one entry per seat of `table`: `HUMAN`, a registered bot's name (made by
    `make_bot` with seed ``seed + seat``) or a made bot (anything with ``act(observation)``).
    `seed` deals the dice: the same seed and the same decisions give the same game.
    """

    def __init__(self, table: TableOptions, seats: Sequence[str | Bot], seed: int):
        if not isinstance(table, TableOptions):
            raise TypeError(f"table: got {table!r}; expected a TableOptions")
        seed = check_int("seed", seed, minimum=0)
        if isinstance(seats, str) or len(seats) != table.num_players:
            raise ValueError(f"seats: got {seats!r}; expected {table.num_players} seats (the table's "
                             f"num_players), each {HUMAN!r}, a bot name or a bot")
        self.table, self.seed = table, seed
        self.bots: dict[int, Bot] = {}
        for seat, who in enumerate(seats):
            if isinstance(who, str) and who != HUMAN:
                self.bots[seat] = make_bot(who, table, seed + seat)
            elif not isinstance(who, str):
                if not callable(getattr(who, "act", None)):
                    raise ValueError(f"seats[{seat}]: got {who!r}; expected {HUMAN!r}, a bot name or a bot "
                                     "(an object with act(observation))")
                self.bots[seat] = who
        self.humans = tuple(s for s in range(table.num_players) if s not in self.bots)
        self.env = raw_env(table=table)
        self.env.reset(seed=seed)
        self.variant = self.env.variant
        self.start = self.env.snapshot()  # the first roll, before any decision
        self.events: list[dict[str, Any]] = []
        self.decisions = 0
        self._told = 0  # the events before this index were returned by advance or decide
        self._roll_start = self.start  # the white action's reveal is told against the sheets at its roll
        self._white: list[tuple[int, str, int]] = []  # this roll's white and lucky decisions: seat, phase, action
        self._held: dict[str, Any] | None = None  # a white choice's event, told with its seat's lucky decision
        self._folded = 0  # lucky decisions told inside their white choice's event
        self._rolled(self.start)

    # --- where the game stands ------------------------------------------------------------

    @property
    def over(self) -> bool:
        """Whether the game is over."""
        return int(self.env.core_state.phase[0]) == OVER

    @property
    def to_decide(self) -> int | None:
        """The seat whose decision is next; None when the game is over."""
        return None if self.over else self.env.agent_name_mapping[self.env.agent_selection]

    @property
    def public_decisions(self) -> int:
        """The decisions every seat may know were taken: one per decision event, so a lucky
        decision told with its white choice is not counted apart, nor a white choice held
        back until its seat's lucky decision (`decisions` counts every one)."""
        return self.decisions - self._folded - (self._held is not None)

    @property
    def held_seat(self) -> int | None:
        """The seat whose white choice is held back until its lucky decision, if any."""
        return None if self._held is None else self._held["seat"]

    def scores(self) -> list[int]:
        """Every seat's score now, in seat order."""
        return [p["score"] for p in self.env.snapshot()["players"]]

    def winners(self) -> list[int]:
        """The seats with the highest score (several on a tie)."""
        scores = self.scores()
        return [s for s, x in enumerate(scores) if x == max(scores)]

    def legal(self) -> list[dict[str, Any]]:
        """The legal options of the seat to decide, each ``{"action", "mark"}`` (empty when over)."""
        return [{"action": a, "mark": mark_of(a, self.variant)} for a in self.env.legal_actions()]

    def pending(self, seat: int) -> list[dict[str, Any]]:
        """`seat`'s own choices in the white action under way (seat, action, mark each)."""
        return [self._choice(s, a) for s, _, a in self._white if s == seat]

    def pass_costs_penalty(self, seat: int) -> bool:
        """Whether passing now costs `seat` a penalty: it is the active player's colour action
        and that player has crossed nothing in this roll's white action."""
        snap = self.env.snapshot()
        return (snap["phase"] == "color" and self.to_decide == seat
                and crosses(snap, seat) == crosses(self._roll_start, seat))

    def record(self, public: bool = True) -> dict[str, Any]:
        """The game's record (`qwixx_env.replay` rebuilds it). `public`: during a white action
        it stops at the roll, so that no seat's hidden choice is in it; else the full history."""
        rec = self.env.record()
        if public and self._white and not self.over:
            rec["decisions"] = rec["decisions"][: -len(self._white)]
            del rec["snapshot"]
            rec = replay(rec).record()
        return rec

    # --- decisions ------------------------------------------------------------------------

    def advance(self) -> list[dict[str, Any]]:
        """Let the bots decide until a person's decision is needed or the game is over;
        returns the new events (the game's first roll too, on the first call)."""
        first = self._told
        while not self.over and self.to_decide in self.bots:
            seat = self.to_decide
            action = self.bots[seat].act(self.env.observe(self.env.agent_selection))
            self._step(seat, int(action))
        self._told = len(self.events)
        return self.events[first:]

    def decide(self, seat: int, action: int) -> list[dict[str, Any]]:
        """Apply a person's decision at `seat`, then `advance`; returns the new events. A
        `ValueError` names a bad seat or action (and what is accepted), the game unchanged."""
        if self.over:
            raise ValueError(f"seat {seat!r}: the game is over (final scores {self.scores()}); no decision is taken")
        if not is_int(seat) or not 0 <= seat < self.table.num_players:
            raise ValueError(f"seat: got {seat!r}; expected a seat from 0 to {self.table.num_players - 1}")
        if seat in self.bots:
            raise ValueError(f"seat: got {seat}; it is a bot's seat; people play seat(s) {list(self.humans)}")
        if seat != self.to_decide:
            raise ValueError(f"seat: got {seat}; the decision now is seat {self.to_decide}'s")
        legal = self.env.legal_actions()
        if not is_int(action) or action not in legal:
            shown = f"{action} {self.words(action)}" if is_int(action) else repr(action)
            raise ValueError(f"action {shown} is not legal now; legal: "
                             + ", ".join(f"{a} {self.words(a)}" for a in legal))
        self._step(int(seat), int(action))
        return self.advance()

    def words(self, action: int) -> str:
        """An action in words, in brackets, for messages: ``(red 7)``, ``(pass)``, or that it
        is outside the action space."""
        if not 0 <= action < self.env.num_actions:
            return f"(outside the action space 0..{self.env.num_actions - 1})"
        mark = mark_of(action, self.variant)
        return "(pass)" if mark is None else f"({mark['row']} {mark['number']})"

    # --- telling the game -----------------------------------------------------------------

    def _step(self, seat: int, action: int) -> None:
        """Apply one decision and tell it: the decision, the reveal when it ends the white
        action, the next roll or the end of the game."""
        before = self.env.snapshot()
        phase, roll = before["phase"], before["roll"]
        self.env.step(action)
        self.decisions += 1
        after = self.env.snapshot()
        event: dict[str, Any] = {
            "kind": "decision", "seat": seat, "roll": roll, "phase": phase,
            "action": action, "mark": mark_of(action, self.variant),
        }
        if phase in WHITE_PHASES:
            self._white.append((seat, phase, action))
        elif phase == "color":
            event["penalty"] = after["players"][seat]["penalties"] > before["players"][seat]["penalties"]
            event["locks"] = gained(before, after, seat)[1]
        event.update(snapshot=after, to_decide=self.to_decide)
        if phase == "white" and after["phase"] == "lucky" and self.to_decide == seat:
            self._held = event  # its lucky cross ties: told with the row the seat picks next
            return
        if phase == "lucky" and self._held is not None and self._held["seat"] == seat:
            event = {**self._held, "lucky": {"action": action, "mark": event["mark"]},
                     "snapshot": after, "to_decide": self.to_decide}
            self._held = None
            self._folded += 1
        self.events.append(event)
        if phase in WHITE_PHASES and (after["roll"] != roll or after["phase"] not in WHITE_PHASES):
            self.events.append(self._reveal(after))
            self._white = []
        if self.over:
            self.events.append({"kind": "over", "scores": self.scores(), "winners": self.winners()})
        elif after["roll"] != roll:
            self._rolled(after)

    def _reveal(self, after: dict[str, Any]) -> dict[str, Any]:
        """The white action's event: every choice, and what each sheet gained since the roll."""
        total = sum(self._roll_start["dice"]["white"])
        outcomes = []
        for seat in range(self.table.num_players):
            # a seat's cross of the white sum is the one its white-phase choice names; any other is lucky
            white = [a for s, p, a in self._white if s == seat and p == "white"]
            new, locks = gained(self._roll_start, after, seat)
            actions = [encode_action(cross, self.variant) for cross in new]
            marks = [{**_cross_mark(a, self.variant), "lucky": not (n == total and a in white)}
                     for a, (_, n) in zip(actions, new)]
            outcomes.append({"seat": seat, "crosses": marks, "locks": locks})
        return {
            "kind": "white", "roll": self._roll_start["roll"], "white_sum": total,
            "choices": [self._choice(s, a) for s, _, a in self._white], "outcomes": outcomes,
            "snapshot": after, "to_decide": self.to_decide,
        }

    def _rolled(self, snap: dict[str, Any]) -> None:
        self._roll_start = snap
        self.events.append({"kind": "roll", "roll": snap["roll"], "active": snap["active_player"],
                            "dice": snap["dice"], "white_sum": sum(snap["dice"]["white"])})

    def _choice(self, seat: int, action: int) -> dict[str, Any]:
        return {"seat": seat, "action": action, "mark": mark_of(action, self.variant)}
