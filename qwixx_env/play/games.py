"""The games a play server holds: people and bots at a table, decided in order.

A `Game` renders a `play.session.PlaySession` for the page. Every seat is a person's or a
bot's (from `bots.available()`), in any mix; a table of one person and bots is the game
against bots. After each person's decision the bots decide until a person's decision is
needed again (or the game is over), and every decision becomes an *event* the page shows one
by one. The white action is simultaneous: another seat's white-action choice is shown as
"decided" only, and all choices of a roll are revealed together when the white action
resolves, as at a real table.

Each person's seat has its own secret (`Game.seat_secrets`, 128 random bits): acting as a seat
(its decisions, its coach, its view of its pending white choice) needs that seat's secret, so
a player can act only in their own seat. Game ids are 128 random bits as well.

A `Store` holds games (or replays) by id, at most `max_items`, and remembers which ids it
dropped so that a request for one says why it is gone. When it is full it drops what its
`pick_drop` names (for games `drop_finished_or_idle`: never a game being played); when nothing
may go, the new item is refused (503) and nothing changes.

Every refusal is a `PlayError` with an HTTP status and a message naming the problem; a refused
request leaves the game as it was.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from qwixx_env import bots
from qwixx_env.bots.registry import factory, plays
from qwixx_env.core.checks import check_choice, check_int, is_int
from qwixx_env.core.options import MAX_PLAYERS, TableOptions
from qwixx_env.core.variant import LUCKY_RULES, VARIANT_NAMES, get_variant, variant_names
from qwixx_env.nets import NumpyPolicy, checkpoint_names
from qwixx_env.play import coach
from qwixx_env.play.session import HUMAN, PlaySession, mark_of, public_snapshot, seen_by

SEED_LIMIT = 2**31  # seeds the server draws are below this, so they are short enough to read out
# The session's events the page shows, and the fields of each that the page does without.
PAGE_EVENTS = {"decision": ("locks",), "white": ("outcomes",)}
NEW_GAME_FIELDS = ("variant", "lucky", "players", "bots", "seats", "start_player", "seed")
SEAT_FIELDS = ("kind", "name", "bot")
BOT = "bot"  # a seat's kind: HUMAN or BOT
MAX_NAME = 24  # characters of a seat's name
DEFAULT_IDLE_LIMIT = 3600.0  # seconds without a decision after which a full store may drop a game



class PlayError(Exception):
    """A refused request: `status` is the HTTP status, the message names the problem."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def all_tables(variants: Sequence[str] = VARIANT_NAMES) -> list[TableOptions]:
    """Every table the page can start: each of `variants` (registered names; default the
    package's own) at 1 to `MAX_PLAYERS` players, under each lucky rule where the variant has
    lucky numbers."""
    out = []
    for variant in variants:
        rules = LUCKY_RULES if TableOptions(variant=variant).rules.lucky_count else (TableOptions().lucky,)
        out += [TableOptions(num_players=p, variant=variant, lucky=r) for p in range(1, MAX_PLAYERS + 1) for r in rules]
    return out


def bot_catalogue(variants: Sequence[str] = VARIANT_NAMES) -> list[dict[str, Any]]:
    """Every bot a seat can take: its name, the tables of `variants` it plays (``{"variant",
    "players", "lucky"}``, lucky None where the variant has no lucky numbers; from the bot's
    own `check_table`, `bots.registry.plays`) and, for a pretrained bot, the one game it plays."""
    pretrained = set(checkpoint_names())
    tables = all_tables(variants)
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


def variant_info(name: str) -> dict[str, Any]:
    """What the new-game form shows of a registered variant: its name, a line about its dice
    and rows, and whether it has lucky numbers (the lucky rule is asked then)."""
    v = get_variant(name)
    numbers = v.numbers
    own = "" if name in VARIANT_NAMES else ", a sheet of your own"
    return {
        "name": name,
        "about": f"{v.faces}-sided dice, {v.num_rows} rows of {numbers[0]}–{numbers[-1]}"
                 + (", lucky numbers" if v.lucky_count else "") + own,
        "lucky_numbers": bool(v.lucky_count),
    }


def sheet_layout(variant: Any) -> dict[str, Any]:
    """What the page needs to draw a sheet of `variant` (a `Variant`): the rows' names in sheet
    order, the numbers of each row in order, the colour of the die each cell is crossed with,
    the lock cells, the coloured dice (as a snapshot's ``dice`` names them, after the white
    ones), the crosses a lock cell needs, the penalty boxes and the score table."""
    names = variant.row_names
    return {
        "cells": variant.cells,
        "row_names": list(names),
        "rows": {row: list(variant.row_numbers[r]) for r, row in enumerate(names)},
        "cell_colors": {row: list(variant.cell_colors[r]) for r, row in enumerate(names)},
        "lock_numbers": {row: list(variant.lock_numbers[r]) for r, row in enumerate(names)},
        "dice_colors": list(variant.dice_colors),
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
class Seat:
    """One seat of a new table: a person's (`kind` HUMAN) or a bot's (`kind` BOT, `bot` its
    registered name), with the name the table shows for it."""

    kind: str
    name: str
    bot: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The seat as a new-game request names it (`parse_new_game` reads it back)."""
        return {"kind": self.kind, "name": self.name, **({"bot": self.bot} if self.bot is not None else {})}


@dataclass(frozen=True)
class NewGame:
    """A new game's options as the page sends them, checked (see `parse_new_game`)."""

    table: TableOptions
    seats: tuple[Seat, ...]  # one per seat of the table
    seed: int

    @property
    def bots(self) -> tuple[str, ...]:
        """The bots' names, in seat order."""
        return tuple(s.bot for s in self.seats if s.bot is not None)

    @property
    def humans(self) -> tuple[int, ...]:
        """The seats people play."""
        return tuple(i for i, s in enumerate(self.seats) if s.kind == HUMAN)

    def options(self) -> dict[str, Any]:
        """The new-game request that starts this game again (the seed included)."""
        table = self.table
        return {
            "variant": table.variant, "lucky": table.lucky, "players": table.num_players,
            "start_player": table.start_player, "seed": self.seed, "seats": [s.to_dict() for s in self.seats],
        }


def parse_new_game(body: Any, draw_seed: Callable[[], int] = lambda: secrets.randbelow(SEED_LIMIT),
                   variants: Sequence[str] | None = None) -> NewGame:
    """Check a new-game request: ``{"variant", "lucky", "players", "seats" or "bots",
    "start_player": seat or "random", "seed": int or null}``. `seats` names every seat
    (``{"kind": "human" or "bot", "name", "bot"}``, at least one person's); `bots` is the short
    form of one person at seat 0 and a bot per other seat (a list of bot names). Every field but
    those may be left out. `variants`: the variants a game may name (a server's offer; default
    every registered one). A `PlayError` (400) names the first bad field."""
    if not isinstance(body, dict):
        raise PlayError(400, f"new game: got {type(body).__name__}; expected a JSON object with {NEW_GAME_FIELDS}")
    unknown = sorted(set(body) - set(NEW_GAME_FIELDS))
    if unknown:
        raise PlayError(400, f"new game: unknown field(s) {unknown}; accepted: {list(NEW_GAME_FIELDS)}")
    try:
        offered = tuple(variant_names() if variants is None else variants)
        variant = check_choice("variant", body.get("variant", "classic"), offered)
        lucky = check_choice("lucky", body.get("lucky", "bonus"), LUCKY_RULES)
        players = check_int("players", body.get("players", 2), minimum=1, maximum=MAX_PLAYERS)
        table = TableOptions(
            num_players=players, variant=variant, lucky=lucky, start_player=body.get("start_player", 0)
        )
        seed = body.get("seed")
        seed = draw_seed() if seed is None else check_int("seed", seed, minimum=0, maximum=2**63 - 1)
    except ValueError as err:
        raise PlayError(400, f"new game: {err}") from None
    if "seats" in body and "bots" in body:
        raise PlayError(400, "new game: got both seats and bots; give seats (every seat) or bots (the seats "
                             "after yours), not both")
    if "seats" in body:
        return NewGame(table, parse_seats(body["seats"], players), seed)
    names = body.get("bots", [])
    if not isinstance(names, list) or len(names) != players - 1:
        raise PlayError(
            400, f"new game: bots: got {names!r}; expected a list of {players - 1} bot name(s), one per other seat"
        )
    known = bots.available()
    for seat, name in enumerate(names, start=1):
        if name not in known:
            raise PlayError(400, f"new game: bots[{seat - 1}] (seat {seat}): got {name!r}; expected one of {known}")
    return NewGame(table, (Seat(HUMAN, "You"), *(Seat(BOT, name, name) for name in names)), seed)


def parse_seats(value: Any, players: int) -> tuple[Seat, ...]:
    """Check the `seats` of a new-game request (one entry per seat of a table of `players`);
    a `PlayError` (400) names the first bad seat and field."""
    if not isinstance(value, list) or len(value) != players:
        raise PlayError(400, f"new game: seats: got {value!r}; expected a list of {players} seat(s), each "
                             "{kind: 'human' or 'bot', name, bot}")
    known, out = bots.available(), []
    for seat, entry in enumerate(value):
        where = f"new game: seats[{seat}]"
        if not isinstance(entry, dict):
            raise PlayError(400, f"{where}: got {entry!r}; expected a JSON object with {list(SEAT_FIELDS)}")
        unknown = sorted(set(entry) - set(SEAT_FIELDS))
        if unknown:
            raise PlayError(400, f"{where}: unknown field(s) {unknown}; accepted: {list(SEAT_FIELDS)}")
        kind, bot, name = entry.get("kind"), entry.get("bot"), entry.get("name")
        if kind not in (HUMAN, BOT):
            raise PlayError(400, f"{where}: kind: got {kind!r}; expected {HUMAN!r} or {BOT!r}")
        if kind == BOT and bot not in known:
            raise PlayError(400, f"{where}: bot: got {bot!r}; expected one of {known}")
        if kind == HUMAN and bot is not None:
            raise PlayError(400, f"{where}: bot: got {bot!r} for a person's seat; leave it out")
        if name is None:
            name = bot if kind == BOT else f"Player {seat + 1}"
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or not name.isprintable():
            raise PlayError(400, f"{where}: name: got {name!r}; expected a printable name of 1 to {MAX_NAME} "
                                 "characters")
        out.append(Seat(kind, name.strip(), bot))
    if not any(s.kind == HUMAN for s in out):
        raise PlayError(400, "new game: seats: no person's seat; a table needs at least one (the arena plays "
                             "bots against bots: qwixx arena)")
    return tuple(out)


def check_bots(new: NewGame) -> None:
    """Refuse (400) a new game whose bot cannot play its table, by the bot's own
    `check_table`, before anything is made or prepared; the message is `make_bots`'s."""
    for seat, entry in enumerate(new.seats):
        check = None if entry.bot is None else getattr(factory(entry.bot), "check_table", None)
        if check is not None:
            try:
                check(new.table)
            except ValueError as err:
                raise _cannot_play(seat, entry.bot, err) from None


def make_bots(new: NewGame) -> dict[int, Any]:
    """The bots of a new game by seat, each made for its table (a pretrained bot only for the
    game it was trained for); a `PlayError` (400) says which seat's bot cannot play it."""
    table, made = new.table, {}
    for seat, entry in enumerate(new.seats):
        if entry.bot is None:
            continue
        try:
            made[seat] = bots.make_bot(entry.bot, table, new.seed + seat)
        except ValueError as err:
            raise _cannot_play(seat, entry.bot, err) from None
    return made


def _cannot_play(seat: int, bot: str | None, err: ValueError) -> PlayError:
    return PlayError(400, f"new game: seat {seat}: {bot!r} cannot play this table: {err}")


class Game:
    """One game on the page: a `PlaySession` of the seats `new` names, the events as the page
    shows them, and a secret per person's seat (`seat_secrets`, drawn unless given: a game read
    back from disk keeps its own). Methods that change it hold its lock.

    Made without `seat_bots`, the game holds its seats and secrets only, and `begin` starts it
    (the server does so once what it needs is prepared): until then it is not `begun`, has
    no decisions and is not over, and whatever needs the game itself (a move, its record, the
    coach) is refused with a 409 saying it is getting ready."""

    def __init__(
        self, game_id: str, new: NewGame, seat_bots: dict[int, Any] | None = None,
        seat_secrets: dict[int, str] | None = None,
    ):
        self.id = game_id
        self.new = new
        self.created = time.time()
        self.last_active = time.monotonic()
        if seat_secrets is None:
            seat_secrets = {seat: secrets.token_urlsafe(16) for seat in new.humans}
        if sorted(seat_secrets) != list(new.humans):
            raise ValueError(f"seat_secrets: got seats {sorted(seat_secrets)}; expected the people's seats "
                             f"{list(new.humans)}")
        self.seat_secrets = dict(seat_secrets)
        self.events: list[dict[str, Any]] = []  # as the session tells them; `view` hides what a seat may not see
        self.lock = threading.RLock()
        self._reviews: dict[int, dict[str, Any]] = {}
        self._session: PlaySession | None = None
        if seat_bots is not None:
            self.begin(seat_bots)

    def begin(self, seat_bots: dict[int, Any]) -> None:
        """Start the game with `seat_bots` (`make_bots`): the first roll, and the bots'
        decisions up to a person's first. A game already begun is left as it is."""
        with self.lock:
            if self._session is not None:
                return
            seats = [HUMAN if s.kind == HUMAN else seat_bots[i] for i, s in enumerate(self.new.seats)]
            session = PlaySession(self.new.table, seats, self.new.seed)
            self._session = session
            self._show(session.advance())

    @property
    def begun(self) -> bool:
        """Whether the game has begun (`begin`)."""
        return self._session is not None

    @property
    def session(self) -> PlaySession:
        """The game's `PlaySession`; a `PlayError` (409) before it has begun."""
        if self._session is None:
            raise PlayError(409, f"game {self.id} is getting ready: what it needs is still being prepared, "
                                 "and it begins by itself once that is done")
        return self._session

    @property
    def env(self) -> Any:
        """The game's environment (`raw_env`)."""
        return self.session.env

    @property
    def start(self) -> dict[str, Any]:
        """The game's first roll, before any decision (a snapshot)."""
        return self.session.start

    @property
    def bots(self) -> dict[int, Any]:
        """The bots by seat (a test swaps one in)."""
        return self.session.bots

    # --- who is asking --------------------------------------------------------------------

    def seat_of(self, secret: str | None) -> int | None:
        """The seat whose secret `secret` is (None: no secret, or no seat's)."""
        if secret is None:
            return None
        given = secret.encode()
        found = None
        for seat, own in self.seat_secrets.items():  # every seat compared, in constant time each
            if secrets.compare_digest(given, own.encode()):
                found = seat
        return found

    def viewer(self, secret: str | None, what: str) -> int | None:
        """The seat a request with `secret` views the game as (None without a secret: a
        spectator's view, with every pending choice hidden); a `PlayError` (403) for a secret
        that is no seat's."""
        seat = self.seat_of(secret)
        if secret is not None and seat is None:
            raise PlayError(403, f"{what}: the seat secret given is none of game {self.id}'s seats'; open your "
                                 "own join link")
        return seat

    def own_seat(self, secret: str | None, what: str) -> int:
        """The seat `secret` belongs to; a `PlayError` (403) when none is given or it is no seat's."""
        seat = self.viewer(secret, what)
        if seat is None:
            raise PlayError(403, f"{what}: needs your seat's secret (the X-Qwixx-Seat header, from your join "
                                 f"link); people play {self._people()}")
        return seat

    def check_seat(self, secret: str | None, seat: int, what: str) -> None:
        """Refuse (403) acting as `seat` unless `secret` is that seat's: a bot's seat or a seat
        nobody has is refused by name, and so is another person's."""
        if seat not in self.seat_secrets:
            who = f"the bot {self.new.seats[seat].bot!r}" if 0 <= seat < len(self.new.seats) else "nobody"
            raise PlayError(403, f"{what}: seat {seat} is played by {who}; people play {self._people()}")
        if secret is None or self.seat_of(secret) != seat:
            given = "none was given" if secret is None else f"the one given is not seat {seat}'s"
            raise PlayError(403, f"{what}: seat {seat} ({self.new.seats[seat].name}) needs its own seat secret "
                                 f"(the X-Qwixx-Seat header, from its join link); {given}")

    def _people(self) -> str:
        return ", ".join(f"seat {s}" for s in self.new.humans)

    # --- what the page sees -------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self._session is not None and self._session.over

    @property
    def decisions(self) -> int:
        return 0 if self._session is None else self._session.decisions

    @property
    def public_decisions(self) -> int:
        """The decisions anyone may know were taken (`PlaySession.public_decisions`)."""
        return 0 if self._session is None else self._session.public_decisions

    def decisions_seen_by(self, viewer: int | None) -> int:
        """The decision count seat `viewer` is shown (and its next move names): the public
        count, and the seat's own white choice held back for its lucky decision."""
        held = self._session is not None and viewer is not None and viewer == self._session.held_seat
        return self.public_decisions + held

    def to_decide(self) -> int | None:
        """The seat to decide (None when the game is over or has not begun)."""
        return None if self._session is None else self._session.to_decide

    def idle_seconds(self) -> float:
        """Seconds since the game's last decision (or its start)."""
        return time.monotonic() - self.last_active

    def seats(self, viewer: int | None = None) -> list[dict[str, Any]]:
        """Every seat: ``seat``, ``kind`` ("you" for `viewer`'s, else "human" or "bot"), ``name``
        and, for a bot, ``bot``."""
        return [{"seat": i, **s.to_dict(), **({"kind": "you"} if i == viewer else {})}
                for i, s in enumerate(self.new.seats)]

    def options(self) -> dict[str, Any]:
        """The options the game was started with (the seed plays it again), with its bots."""
        return {**self.new.options(), "bots": list(self.new.bots)}

    def view(self, since: int = 0, viewer: int | None = None) -> dict[str, Any]:
        """The game as seat `viewer` sees it (None: as a spectator), with the events from index
        `since` on: another seat's white-action choice is hidden until the reveal, and only
        `viewer`'s own pending choice and legal options are shown."""
        mine = viewer is not None and self.to_decide() == viewer
        head = {"id": self.id, "options": self.options(), "seats": self.seats(viewer), "you": viewer,
                "sheet": sheet_layout(self.new.table.rules), "begun": self.begun}
        if not self.begun:  # no dice, no sheets yet: what the server waits for goes with it
            return {**head, "decisions": 0, "to_decide": None, "legal": [], "pending": [], "over": False,
                    "winners": [], "events_total": 0, "events_from": since, "events": []}
        return {
            **head,
            "start": self.start,
            "decisions": self.decisions_seen_by(viewer),
            "snapshot": public_snapshot(self.env.snapshot(), self.to_decide(), viewer),
            "to_decide": self.to_decide(),
            "legal": self.session.legal() if mine else [],
            "pass_penalty": viewer is not None and self.session.pass_costs_penalty(viewer),
            "pending": self.session.pending(viewer) if viewer is not None else [],
            "over": self.over,
            "winners": self.session.winners() if self.over else [],
            "events_total": len(self.events),
            "events_from": since,
            "events": [seen_by(event, -1 if viewer is None else viewer) for event in self.events[since:]],
        }

    def record(self) -> dict[str, Any]:
        """The game's record as anyone at the table may see it: during a white action it stops
        at the roll, so that no seat's hidden choice is in it (`qwixx_env.replay` rebuilds it);
        its `seat_names` name the seats in the replay viewer."""
        names = [seat["name"] for seat in self.seats()]
        return {**self.session.record(public=True), "seat_names": names}

    def advice(self, bot: str | None, secret: str | None = None) -> dict[str, Any]:
        """The coach on the decision now of the seat `secret` belongs to (a `PlayError` when
        the secret is no seat's or the decision is not that seat's)."""
        seat = self.own_seat(secret, "coach")
        env = self.session.env  # a game not begun yet: the 409 says it is getting ready
        if self.to_decide() != seat:
            raise PlayError(409, f"coach: game {self.id} is {'over' if self.over else 'not at your decision'}; "
                                 "the coach values your options on your turn")
        return advice(env, bot, seat)

    def review(self, secret: str | None = None) -> dict[str, Any]:
        """The coach's review of the decisions of the seat `secret` belongs to, once the game is over."""
        seat = self.own_seat(secret, "summary")
        if not self.over:
            raise PlayError(409, f"summary: game {self.id} is not over yet; the review comes after the game")
        if seat not in self._reviews:
            self._reviews[seat] = coach.review(self.env.record(), seat).to_dict()
        return self._reviews[seat]

    # --- a person's decision, then the bots' --------------------------------------------

    def move(self, body: Any, secret: str | None = None) -> int:
        """Apply a person's decision ``{"seat": s, "action": a, "decision": n}`` as seat `s`,
        whose secret `secret` must be (`decision`, optional, is how many decisions the page has
        seen: a stale page is refused), then let the bots decide up to a person's next
        decision. Returns the index of the first new event."""
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
            self.check_seat(secret, seat, "move")
            session = self.session  # a game not begun yet: the 409 says it is getting ready
            shown = self.decisions_seen_by(seat)  # what that seat's page is shown
            if seen is not None and seen != shown:
                raise PlayError(409, f"move: decision: got {seen}; the game has had {shown} decisions "
                                     "(reload the game)")
            if seat != self.to_decide():
                raise PlayError(409, f"move: seat {seat}: the decision now is seat {self.to_decide()}'s "
                                     f"({self.new.seats[self.to_decide() or 0].name}); wait for your turn")
            first = len(self.events)
            try:
                self._show(session.decide(seat, action))
            except ValueError as err:  # the session names the action and the legal ones
                raise PlayError(422, f"move: {err}") from None
            self.last_active = time.monotonic()
            return first

    def _show(self, events: list[dict[str, Any]]) -> None:
        """Keep the session's new events the page shows (each decision and each reveal), less
        what the page does without; the page reads rolls, locks and the end off their snapshots."""
        for event in events:
            if event["kind"] in PAGE_EVENTS:
                self.events.append({k: v for k, v in event.items() if k not in PAGE_EVENTS[event["kind"]]})


def drop_finished_or_idle(idle_limit: float) -> Callable[[Sequence[tuple[str, Game]]], str | None]:
    """A `Store`'s choice of the game to drop when it is full: the oldest finished game, else
    the game idle longest beyond `idle_limit` seconds, else none (never a game being played)."""

    def pick(held: Sequence[tuple[str, Game]]) -> str | None:
        finished = [game_id for game_id, game in held if game.over]
        if finished:
            return finished[0]
        idle = [(game.idle_seconds(), game_id) for game_id, game in held if game.idle_seconds() > idle_limit]
        return max(idle)[1] if idle else None

    return pick


def drop_oldest(held: Sequence[tuple[str, Any]]) -> str | None:
    """A `Store`'s choice when it is full: the item held longest."""
    return held[0][0] if held else None


T = TypeVar("T")


class Store(Generic[T]):
    """At most `max_items` objects by id; thread-safe. When full, `add` drops the item
    `pick_drop` names (`drop_rule` says which in messages) or, when it names none, refuses."""

    def __init__(
        self, kind: str, max_items: int,
        pick_drop: Callable[[Sequence[tuple[str, T]]], str | None] = drop_oldest,
        drop_rule: str = "drops the oldest first",
    ):
        self.kind = kind
        self.max_items = check_int("max_games", max_items, minimum=1)
        self.pick_drop = pick_drop
        self.drop_rule = drop_rule
        self._items: OrderedDict[str, T] = OrderedDict()
        self._dropped: deque[str] = deque(maxlen=10_000)  # to say "dropped", not "unknown"
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def new_id(self) -> str:
        """An id no item held or dropped has had (128 random bits, in hex)."""
        with self._lock:
            while True:
                item_id = secrets.token_hex(16)
                if item_id not in self._items and item_id not in self._dropped:
                    return item_id

    def add(self, item_id: str, item: T) -> list[str]:
        """Hold `item`; return the ids dropped to make room. A `PlayError` (503) when the
        store is full and nothing may be dropped; then nothing changes."""
        with self._lock:
            left = list(self._items.items())
            dropped = []
            while len(left) >= self.max_items:
                victim = self.pick_drop(left)
                if victim is None:
                    raise PlayError(503, f"the server holds {len(self._items)} {self.kind}s in play; finish or "
                                         f"leave one (it holds at most {self.max_items}: qwixx serve --max-games N)")
                dropped.append(victim)
                left = [(i, x) for i, x in left if i != victim]
            for old in dropped:
                del self._items[old]
                self._dropped.append(old)
            self._items[item_id] = item
            return dropped

    def get(self, item_id: str) -> T:
        with self._lock:
            if item_id in self._items:
                return self._items[item_id]
            if item_id in self._dropped:
                raise PlayError(
                    404,
                    f"{self.kind} {item_id!r} was dropped: the server holds at most {self.max_items} "
                    f"{self.kind}s and {self.drop_rule} (qwixx serve --max-games N)",
                )
        raise PlayError(404, f"unknown {self.kind} id {item_id!r}: no such {self.kind} on this server")

    def items(self) -> list[tuple[str, T]]:
        with self._lock:
            return list(self._items.items())
