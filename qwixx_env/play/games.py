"""The games a play server holds: one person and bots at a table, decided in order.

A `Game` renders a `play.session.PlaySession` for the page: the person sits at seat 0, a bot
from `bots.available()` at every other seat. After each of the person's decisions the bots
decide until it is the person's turn again (or the game is over), and every decision becomes
an *event* the page shows one by one. The white action is simultaneous: a bot's white-action
choice is shown as "decided" only, and all choices of a roll are revealed together when the
white action resolves, as at a real table.

A `Store` holds games (or replays) by id, at most `max_items`, dropping the oldest first, and
remembers which ids it dropped so that a request for one says why it is gone.

Every refusal is a `PlayError` with an HTTP status and a message naming the problem; a refused
request leaves the game as it was.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from qwixx_env import bots
from qwixx_env.bots.registry import plays
from qwixx_env.core.checks import check_choice, check_int, is_int
from qwixx_env.core.options import MAX_PLAYERS, TableOptions
from qwixx_env.core.variant import COLORS, LUCKY_RULES, VARIANT_NAMES
from qwixx_env.nets import NumpyPolicy, checkpoint_names
from qwixx_env.play import coach
from qwixx_env.play.session import HUMAN, PlaySession, make_bot, mark_of, seen_by

YOU = 0  # the person's seat on the page
SEED_LIMIT = 2**31  # seeds the server draws are below this, so they are short enough to read out
# The session's events the page shows, and the fields of each that the page does without.
PAGE_EVENTS = {"decision": ("locks",), "white": ("outcomes",)}
NEW_GAME_FIELDS = ("variant", "lucky", "players", "bots", "start_player", "seed")


class PlayError(Exception):
    """A refused request: `status` is the HTTP status, the message names the problem."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def all_tables() -> list[TableOptions]:
    """Every table the page can start: each variant at 1 to `MAX_PLAYERS` players, under each
    lucky rule where the variant has lucky numbers."""
    out = []
    for variant in VARIANT_NAMES:
        rules = LUCKY_RULES if TableOptions(variant=variant).rules.lucky_count else (TableOptions().lucky,)
        out += [TableOptions(num_players=p, variant=variant, lucky=r) for p in range(1, MAX_PLAYERS + 1) for r in rules]
    return out


def bot_catalogue() -> list[dict[str, Any]]:
    """Every bot a seat can take: its name, the tables it plays (``{"variant", "players",
    "lucky"}``, lucky None where the variant has no lucky numbers; from the bot's own
    `check_table`, `bots.registry.plays`) and, for a pretrained bot, the one game it plays."""
    pretrained = set(checkpoint_names())
    tables = all_tables()
    out = []
    for name in bots.available():
        entry: dict[str, Any] = {"name": name, "plays": None}
        if name in pretrained:
            policy = NumpyPolicy.load(name)
            entry["plays"] = {"variant": policy.variant, "players": policy.num_players, "lucky": policy.lucky}
        entry["tables"] = [
            {"variant": t.variant, "players": t.num_players, "lucky": t.lucky if t.rules.lucky_count else None}
            for t in tables if plays(name, t)
        ]
        out.append(entry)
    return out


def sheet_layout(variant: Any) -> dict[str, Any]:
    """What the page needs to draw a sheet of `variant` (a `Variant`): the numbers of each row in
    order, the lock cells, the crosses a lock cell needs, the penalty boxes and the score table."""
    return {
        "cells": variant.cells,
        "rows": {c: list(variant.row_numbers[r]) for r, c in enumerate(COLORS)},
        "lock_numbers": {c: list(variant.lock_numbers[r]) for r, c in enumerate(COLORS)},
        "lock_threshold": variant.lock_threshold,
        "max_penalties": variant.max_penalties,
        "penalty_points": variant.penalty_points,
        "score_table": list(variant.score_table),
    }


def check_bot_name(bot: Any) -> str | None:
    """A bot name asked about in a coach request (None: none asked), or a `PlayError` (400)."""
    if bot is None or bot in bots.available():
        return bot
    raise PlayError(400, f"bot: got {bot!r}; expected one of {bots.available()}")


def advice(env: Any, bot: str | None, seat: int | None = None) -> dict[str, Any]:
    """The coach's values of every legal option for the seat to decide (`coach.advise`), with
    what `bot` would play there; a `PlayError` (400) when the bot cannot play this game."""
    try:
        found = coach.advise(env, seat, bot=check_bot_name(bot))
    except ValueError as err:
        raise PlayError(400, f"coach: {err}") from None
    out = found.to_dict()
    for option in out["options"]:
        option["mark"] = mark_of(option["action"], env.variant)
    if found.bot_action is not None:
        out["bot_mark"] = mark_of(found.bot_action, env.variant)
    return out


@dataclass(frozen=True)
class NewGame:
    """A new game's options as the page sends them, checked (see `parse_new_game`)."""

    table: TableOptions
    bots: tuple[str, ...]  # seats 1 .. players-1
    seed: int


def parse_new_game(body: Any, draw_seed: Callable[[], int] = lambda: secrets.randbelow(SEED_LIMIT)) -> NewGame:
    """Check a new-game request: ``{"variant", "lucky", "players", "bots": [name per other seat],
    "start_player": seat or "random", "seed": int or null}``; every field but `bots` (when there
    are other seats) may be left out. A `PlayError` (400) names the first bad field."""
    if not isinstance(body, dict):
        raise PlayError(400, f"new game: got {type(body).__name__}; expected a JSON object with {NEW_GAME_FIELDS}")
    unknown = sorted(set(body) - set(NEW_GAME_FIELDS))
    if unknown:
        raise PlayError(400, f"new game: unknown field(s) {unknown}; accepted: {list(NEW_GAME_FIELDS)}")
    try:
        variant = check_choice("variant", body.get("variant", "classic"), VARIANT_NAMES)
        lucky = check_choice("lucky", body.get("lucky", "bonus"), LUCKY_RULES)
        players = check_int("players", body.get("players", 2), minimum=1, maximum=MAX_PLAYERS)
        table = TableOptions(
            num_players=players, variant=variant, lucky=lucky, start_player=body.get("start_player", 0)
        )
        seed = body.get("seed")
        seed = draw_seed() if seed is None else check_int("seed", seed, minimum=0, maximum=2**63 - 1)
    except ValueError as err:
        raise PlayError(400, f"new game: {err}") from None
    names = body.get("bots", [])
    if not isinstance(names, list) or len(names) != players - 1:
        raise PlayError(
            400, f"new game: bots: got {names!r}; expected a list of {players - 1} bot name(s), one per other seat"
        )
    known = bots.available()
    for seat, name in enumerate(names, start=1):
        if name not in known:
            raise PlayError(400, f"new game: bots[{seat - 1}] (seat {seat}): got {name!r}; expected one of {known}")
    return NewGame(table, tuple(names), seed)


def make_bots(new: NewGame) -> dict[int, Any]:
    """The bots of a new game by seat, each made for its table (a pretrained bot only for the
    game it was trained for); a `PlayError` (400) says which seat's bot cannot play it."""
    table, made = new.table, {}
    for seat, name in enumerate(new.bots, start=1):
        try:
            made[seat] = make_bot(name, table, new.seed + seat)
        except ValueError as err:
            raise PlayError(
                400, f"new game: bots[{seat - 1}] (seat {seat}): {name!r} cannot play this table: {err}"
            ) from None
    return made


class Game:
    """One game on the page: a `PlaySession` with the person at seat `YOU`, and the events as
    the page shows them. Methods that change it hold its lock."""

    def __init__(self, game_id: str, new: NewGame, seat_bots: dict[int, Any]):
        self.id = game_id
        self.new = new
        self.created = time.time()
        seats = [HUMAN if s == YOU else seat_bots[s] for s in range(new.table.num_players)]
        self.session = PlaySession(new.table, seats, new.seed)
        self.env = self.session.env
        self.start = self.session.start
        self.bots = self.session.bots  # by seat; a test swaps one in
        self.events: list[dict[str, Any]] = []
        self.lock = threading.RLock()
        self._review: dict[str, Any] | None = None
        self._show(self.session.advance())

    # --- what the page sees -------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self.session.over

    @property
    def decisions(self) -> int:
        return self.session.decisions

    def to_decide(self) -> int | None:
        return self.session.to_decide

    def seats(self) -> list[dict[str, Any]]:
        return [
            {"seat": s, "kind": "you"} if s == YOU else {"seat": s, "kind": "bot", "bot": self.new.bots[s - 1]}
            for s in range(self.new.table.num_players)
        ]

    def options(self) -> dict[str, Any]:
        """The options the game was started with (the seed plays it again)."""
        table = self.new.table
        return {
            "variant": table.variant, "lucky": table.lucky, "players": table.num_players,
            "start_player": table.start_player, "seed": self.new.seed, "bots": list(self.new.bots),
        }

    def view(self, since: int = 0) -> dict[str, Any]:
        """The game as the page shows it, with the events from index `since` on."""
        mine = self.to_decide() == YOU
        return {
            "id": self.id,
            "options": self.options(),
            "seats": self.seats(),
            "you": YOU,
            "sheet": sheet_layout(self.env.variant),
            "start": self.start,
            "decisions": self.decisions,
            "snapshot": self.env.snapshot(),
            "to_decide": self.to_decide(),
            "legal": self.session.legal() if mine else [],
            "pass_penalty": self.session.pass_costs_penalty(YOU),
            "pending": self.session.pending(YOU),
            "over": self.over,
            "winners": self.session.winners() if self.over else [],
            "events_total": len(self.events),
            "events": self.events[since:],
        }

    def record(self) -> dict[str, Any]:
        """The game's record as the person may see it: during a white action it stops at the
        roll, so that no bot's hidden choice is in it (`qwixx_env.replay` rebuilds it); its
        `seat_names` name the seats in the replay viewer."""
        names = ["You" if seat["kind"] == "you" else seat["bot"] for seat in self.seats()]
        return {**self.session.record(public=True), "seat_names": names}

    def advice(self, bot: str | None) -> dict[str, Any]:
        """The coach on the person's decision now (a `PlayError` when it is not theirs)."""
        if self.to_decide() != YOU:
            raise PlayError(409, f"coach: game {self.id} is {'over' if self.over else 'not at your decision'}; "
                                 "the coach values your options on your turn")
        return advice(self.env, bot, YOU)

    def review(self) -> dict[str, Any]:
        """The coach's review of the person's decisions, once the game is over."""
        if not self.over:
            raise PlayError(409, f"summary: game {self.id} is not over yet; the review comes after the game")
        if self._review is None:
            self._review = coach.review(self.env.record(), YOU).to_dict()
        return self._review

    # --- the person's decision, then the bots' ------------------------------------------

    def move(self, body: Any) -> int:
        """Apply the person's decision ``{"seat": 0, "action": a, "decision": n}`` (`decision`,
        optional, is how many decisions the page has seen: a stale page is refused), then let
        the bots decide up to the person's next turn. Returns the index of the first new event."""
        if not isinstance(body, dict):
            raise PlayError(400, f"move: got {type(body).__name__}; expected a JSON object {{seat, action}}")
        unknown = sorted(set(body) - {"seat", "action", "decision"})
        if unknown:
            raise PlayError(400, f"move: unknown field(s) {unknown}; accepted: ['seat', 'action', 'decision']")
        for name in ("seat", "action"):
            if not is_int(body.get(name)):
                raise PlayError(400, f"move: {name}: got {body.get(name)!r}; expected an integer")
        seat, action, seen = body["seat"], body["action"], body.get("decision")
        if seen is not None and not is_int(seen):
            raise PlayError(400, f"move: decision: got {seen!r}; expected the number of decisions the page has seen")
        with self.lock:
            if self.over:
                raise PlayError(409, f"game {self.id} is over (final scores {self.session.scores()}); "
                                     "start a new game")
            if seat != YOU:
                who = f"the bot {self.new.bots[seat - 1]!r}" if 0 < seat < len(self.new.bots) + 1 else "nobody"
                raise PlayError(403, f"move: seat {seat} is played by {who}; you play seat {YOU}")
            if seen is not None and seen != self.decisions:
                raise PlayError(
                    409, f"move: decision: got {seen}; the game has had {self.decisions} decisions (reload the game)"
                )
            first = len(self.events)
            try:
                self._show(self.session.decide(YOU, action))
            except ValueError as err:  # the session names the action and the legal ones
                raise PlayError(422, f"move: {err}") from None
            return first

    def _show(self, events: list[dict[str, Any]]) -> None:
        """Add the session's new events as the page shows them: each decision (another seat's
        white-action choice hidden) and each reveal; the page reads rolls, locks and the end
        off their snapshots."""
        for event in events:
            if event["kind"] in PAGE_EVENTS:
                shown = seen_by(event, YOU)
                self.events.append({k: v for k, v in shown.items() if k not in PAGE_EVENTS[event["kind"]]})


T = TypeVar("T")


class Store(Generic[T]):
    """At most `max_items` objects by id, the oldest dropped first; thread-safe."""

    def __init__(self, kind: str, max_items: int):
        self.kind = kind
        self.max_items = check_int("max_games", max_items, minimum=1)
        self._items: OrderedDict[str, T] = OrderedDict()
        self._dropped: deque[str] = deque(maxlen=10_000)  # to say "dropped", not "unknown"
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def new_id(self) -> str:
        """An id no item held or dropped has had (8 hex digits)."""
        with self._lock:
            while True:
                item_id = secrets.token_hex(4)
                if item_id not in self._items and item_id not in self._dropped:
                    return item_id

    def add(self, item_id: str, item: T) -> list[str]:
        """Hold `item`; return the ids dropped to make room."""
        with self._lock:
            self._items[item_id] = item
            dropped = []
            while len(self._items) > self.max_items:
                old, _ = self._items.popitem(last=False)
                self._dropped.append(old)
                dropped.append(old)
            return dropped

    def get(self, item_id: str) -> T:
        with self._lock:
            if item_id in self._items:
                return self._items[item_id]
            if item_id in self._dropped:
                raise PlayError(
                    404,
                    f"{self.kind} {item_id!r} was dropped: the server holds at most {self.max_items} "
                    f"{self.kind}s and drops the oldest first (qwixx serve --max-games N)",
                )
        raise PlayError(404, f"unknown {self.kind} id {item_id!r}: no such {self.kind} on this server")

    def items(self) -> list[tuple[str, T]]:
        with self._lock:
            return list(self._items.items())
