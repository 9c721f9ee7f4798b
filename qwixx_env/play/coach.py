"""The coach: what every legal option of a decision is worth, and a review of a finished game.

For the seat to decide in a game, `advise` values each legal option with the best source the
project has for that table, and says which source and in what units:

======================  ================  ==========================================  =========
table                   ``source``        ``value`` of an option                      ``loss``
======================  ================  ==========================================  =========
solo classic            ``"solver"``      expected final score after it, optimal      regret
                                          play from there (`qwixx_env.solver`)        (points)
classic, 2–4 players    ``"afterstate"``  the learned chance to win after it, 0 to 1  win-chance
                                          (the `afterstate` bot's network)            loss
anything else (Longo,   ``"heuristic"``   the heuristic's evaluation of the position  heuristic
5 players, a custom                       after it (`policies.heuristic`), its own         loss
score table)                              points, not a score
======================  ================  ==========================================  =========

Every option's ``loss`` is the best option's value minus its own (0 for the best, never
negative), in the same units. A white action of the active player is valued together with
the best colour action that may follow it on the same dice (and the penalty if both pass), as
the solver and the bots see it. The coach reads only what the deciding seat may see: its
observation (other seats' white choices of this roll stay hidden), and in solo its own sheet.

>>> from qwixx_env import qwixx_v0
>>> from qwixx_env.play import coach
>>> env = qwixx_v0.raw_env(num_players=2)
>>> env.reset(seed=1)
>>> advice = coach.advise(env, bot="heuristic")   # the seat to decide (or seat=..., checked)
>>> advice.source, advice.unit                      # ('afterstate', 'win chance')
>>> [(o.label, o.value, o.loss) for o in advice.options]   # every legal option, by action
>>> advice.best_action, advice.bot_action           # the coach's best; what `heuristic` plays
>>> advice.to_dict()                                # the same as JSON-ready plain data

`advise(env, seat=None, *, bot=None) -> Advice` takes a `qwixx_v0` env (raw or wrapped) whose
game is not over; `seat` (an int), when given, must be the seat to decide. `bot`, a name from
`bots.available()` (pretrained bots by name, for the game they were trained for), adds what
that bot would play here (`Advice.bot`, `Advice.bot_action`); `bot_choice(env, bot)` is that
alone. Each is a `ValueError` naming the problem otherwise. In solo classic the first call in
a process loads the solver's value table, solving it first if no cached one exists (see
docs/solver.md); `solo_table()` does that ahead of time.

`review(record, seat) -> Review` replays a game record (`env.unwrapped.record()`, finished or
not) and values every decision of `seat` the same way: ``Review.decisions`` (one `Decision`
each, with its index in ``record["decisions"]``, the option taken, the coach's best and the
loss), ``Review.total_loss`` and ``Review.worst`` (the three largest losses, largest first;
equal losses in game order). `position(record, index)` rebuilds the game just before
decision `index`, to show that position again (``coach.advise(position(record, d.index))``
values it again).

docs/play.md, "What the coach's numbers mean", explains the numbers to a player.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from qwixx_env import bots
from qwixx_env.core.engine import Engine
from qwixx_env.core.state import COLOR, OVER, PHASES
from qwixx_env.core.variant import CLASSIC, Variant
from qwixx_env.envs import replay
from qwixx_env.envs.qwixx_v0 import raw_env
from qwixx_env.nets import AFTERSTATE_TABLES
from qwixx_env.nets.afterstate import afterstate_chances
from qwixx_env.play.labels import action_label, action_text
from qwixx_env.policies.heuristic import heuristic_values, weights_array
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.solver import ValueTable, load_table


@dataclass(frozen=True)
class Source:
    """Where a coach's numbers come from, in words a page or a terminal can show."""

    name: str  # "solver", "afterstate" or "heuristic"
    quantity: str  # what an option's value is
    unit: str  # its unit
    loss_name: str  # what an option's loss (best value minus its value) is called


SOURCES = {
    "solver": Source("solver", "expected final score after the option, with optimal play from there",
                     "points", "regret"),
    "afterstate": Source("afterstate", "chance to win after the option, as the afterstate network rates it",
                         "win chance", "win-chance loss"),
    "heuristic": Source("heuristic", "the heuristic's evaluation of the position after the option",
                        "heuristic points", "heuristic loss"),
}
"""The coach's sources by name (see the module docstring for when each is used)."""


@dataclass(frozen=True)
class Option:
    """One legal option of a decision and what the coach makes of it."""

    action: int  # the env's action index
    label: str  # its short label (`play.labels`): "r7", "p"
    text: str  # "cross red 7", "pass"
    value: float  # in the source's unit (see `Source`)
    loss: float  # the best option's value minus this one's: >= 0, 0 for the best


@dataclass(frozen=True)
class Advice:
    """The coach's values for one decision: every legal option, its source, and (if asked)
    what a bot would play."""

    seat: int  # the seat deciding
    roll: int  # the roll (0 = the first)
    phase: str  # "white", "lucky" or "color"
    source: Source
    options: tuple[Option, ...]  # every legal option, by action index
    best_action: int  # the highest value (the earliest action among equals)
    bot: str | None = None  # the bot asked about
    bot_action: int | None = None  # what it plays here

    def option(self, action: int) -> Option:
        """The option of an action; `ValueError` if it is not a legal option here."""
        for o in self.options:
            if o.action == action:
                return o
        raise ValueError(f"action: got {action!r}; the legal options are {[o.action for o in self.options]}")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: every field, the source as a dict, labels for the actions."""
        d = asdict(self)
        d["options"] = [asdict(o) for o in self.options]
        d["best_label"] = next(o.label for o in self.options if o.action == self.best_action)
        d["bot_label"] = None if self.bot_action is None else self.option(self.bot_action).label
        return d


@dataclass(frozen=True)
class Decision:
    """One reviewed decision of a game record."""

    index: int  # its index in record["decisions"] (`position(record, index)` shows it again)
    roll: int
    phase: str
    action: int  # what was played
    label: str
    value: float  # its value, in the source's unit
    best_action: int  # the coach's best there
    best_label: str
    best_value: float
    loss: float  # best_value - value


@dataclass(frozen=True)
class Review:
    """Every decision of one seat in a game record, valued by the coach."""

    seat: int
    source: Source
    decisions: tuple[Decision, ...]  # in game order
    total_loss: float  # the sum of their losses, in the source's unit
    worst: tuple[Decision, ...]  # the three largest losses (fewer if fewer decisions), largest first

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- which source, and its values --------------------------------------------------------------


def source_for(variant: Variant, num_players: int) -> Source:
    """The coach's source for a table: the solver in solo classic, the afterstate network in
    classic at the player counts it ships for, else the heuristic. Classic means the standard
    rules: under another score table neither the cached solver table nor the networks apply."""
    if variant == CLASSIC and num_players == 1:
        return SOURCES["solver"]
    if variant == CLASSIC and (variant.name, num_players) in AFTERSTATE_TABLES:
        return SOURCES["afterstate"]
    return SOURCES["heuristic"]


def solo_table(variant: Variant = CLASSIC) -> ValueTable:
    """The solver's value table the solo coach reads: loaded from the cache, or solved and
    cached first (`solver.load_table`); call it ahead of a first solo game to take that wait
    out of the game."""
    return load_table(variant)


def _game(env: Any) -> raw_env:
    game = getattr(env, "unwrapped", env)
    if not isinstance(game, raw_env):
        raise ValueError(f"env: got {type(env).__name__}; expected a qwixx_v0 env (raw or wrapped)")
    if not hasattr(game, "agents"):
        raise ValueError("env: no game yet; call reset() first")
    return game


def _deciding_seat(game: raw_env, seat: int | None) -> int:
    """The seat to decide, checked against `seat` when given."""
    st = game.core_state
    if st.phase[0] == OVER:
        raise ValueError("env: the game is over; there is no decision to value (review(record, seat) "
                         "values a finished game's decisions)")
    deciding = int(st.turn[0])
    if seat is not None:
        P = st.num_players
        if type(seat) is not int or not 0 <= seat < P:
            raise ValueError(f"seat: got {seat!r}; expected a seat number from 0 to {P - 1}")
        if seat != deciding:
            raise ValueError(f"seat: got {seat}, but seat {deciding} is to decide now "
                             f"({PHASES[int(st.phase[0])]} action of roll {int(st.roll[0])})")
    return deciding


def _solver_values(game: raw_env, seat: int, legal: list[int]) -> list[float]:
    """Solo: each option's expected final score: the option played on a copy of the game (an
    `Engine` of its table), then the sheet valued by the solver; in the white action, the best
    colour option after it (or the game's end, if the white cross ends it)."""
    table = solo_table(game.variant)
    after, then = Engine(game.engine.table), Engine(game.engine.table)  # the copies options are played on

    def worth(engine: Engine) -> float:
        snap = engine.snapshot()
        return table.expected_score(snap["players"][0], snap["locked_rows"])

    def played(work: Engine, start: Engine, action: int) -> Engine:
        work.load(start)
        work.step(action)
        return work

    values = []
    for action in legal:
        played(after, game.engine, action)
        if after.state.phase[0] == COLOR:  # the white action resolved: the colour option follows
            values.append(max(worth(played(then, after, c)) for c in after.legal_actions()))
        else:
            values.append(worth(after))
    return values


def _afterstate_values(game: raw_env, seat: int, legal: list[int]) -> list[float]:
    obs = game.observe(game.possible_agents[seat])["observation"]
    chances = afterstate_chances(obs[None], game.variant.name, game.core_state.num_players)[0]
    return [float(chances[a]) for a in legal]


def _heuristic_values(game: raw_env, seat: int, legal: list[int]) -> list[float]:
    P = game.core_state.num_players
    st, mask = bots.decision_state(game.observe(game.possible_agents[seat]), game.variant, P)
    values = np.zeros(game.variant.num_actions, np.float64)
    heuristic_values(st, game.variant.tables, 0, mask, weights_array(), new_scratch(game.variant, P), values)
    return [float(values[a]) for a in legal]


_VALUES = {"solver": _solver_values, "afterstate": _afterstate_values, "heuristic": _heuristic_values}


def advise(env: Any, seat: int | None = None, *, bot: str | None = None) -> Advice:
    """The coach's values of every legal option of the seat to decide (see the module
    docstring). A `ValueError` when the game is over, `seat` is not the seat to decide, or
    `bot` is not a bot for this game."""
    game = _game(env)
    seat = _deciding_seat(game, seat)
    bot_action = None if bot is None else bot_choice(game, bot)  # a bad name fails before the work
    source = source_for(game.variant, game.core_state.num_players)
    legal = game.legal_actions()
    values = _VALUES[source.name](game, seat, legal)
    best = max(values)
    v = game.variant
    options = tuple(Option(a, action_label(a, v), action_text(a, v), x, best - x) for a, x in zip(legal, values))
    st = game.core_state
    return Advice(
        seat=seat,
        roll=int(st.roll[0]),
        phase=PHASES[int(st.phase[0])],
        source=source,
        options=options,
        best_action=legal[values.index(best)],
        bot=bot,
        bot_action=bot_action,
    )


# --- what a bot would play -------------------------------------------------------------------

_BOTS = threading.local()  # each thread its own bots: they keep work arrays between decisions


def _bot_for(game: raw_env, name: str) -> bots.Bot:
    if not isinstance(name, str) or name not in bots.available():
        raise ValueError(f"bot: got {name!r}; expected one of {bots.available()}")
    v, P = game.variant, game.core_state.num_players
    lucky = v.lucky_rule if v.lucky_count else None
    key = (name, v, P)
    cache = _BOTS.__dict__.setdefault("bots", {})
    if key not in cache:
        try:
            cache[key] = bots.make(name, variant=v.name, num_players=P, lucky=lucky, seed=0)
        except ValueError as err:
            raise ValueError(f"bot {name!r} cannot play this game ({v.name}, {P} player(s)): {err}") from None
    return cache[key]


def bot_choice(env: Any, bot: str) -> int:
    """The action bot `bot` (a name from `bots.available()`) would play for the seat to decide."""
    game = _game(env)
    seat = _deciding_seat(game, None)
    player = _bot_for(game, bot)
    return int(player.act(game.observe(game.possible_agents[seat])))


# --- a game record, reviewed ---------------------------------------------------------------


def _start_of(record: Any) -> tuple[dict[str, Any], raw_env]:
    """The record, checked by a whole replay, and a game at its start."""
    final = replay(record)  # a ValueError for a record that is not one, or that the rules refuse
    rec = final.record()  # the same game as a plain dict (the record may be a path or a string)
    start = {k: rec[k] for k in ("format", "options", "seed", "rng_state")}
    return rec, replay({**start, "rolls": rec["rolls"][:1], "decisions": []})


def position(record: Any, index: int) -> raw_env:
    """The game of `record` just before its decision `index` (0 .. the number of decisions:
    the last is the position after every decision)."""
    rec, game = _start_of(record)
    n = len(rec["decisions"])
    if type(index) is not int or not 0 <= index <= n:
        raise ValueError(f"index: got {index!r}; expected a decision index from 0 to {n}")
    for _, action in rec["decisions"][:index]:
        game.step(action)
    return game


def review(record: Any, seat: int) -> Review:
    """Every decision of `seat` in a game record (a dict, JSON text or a path), valued by the
    coach; see the module docstring. A `ValueError` for a record the replay refuses or a seat
    not at its table."""
    rec, game = _start_of(record)
    P = game.core_state.num_players
    if type(seat) is not int or not 0 <= seat < P:
        raise ValueError(f"seat: got {seat!r}; expected a seat number from 0 to {P - 1}")
    source = source_for(game.variant, P)
    reviewed = []
    for index, (who, action) in enumerate(rec["decisions"]):
        if who == seat:
            advice = advise(game, seat)
            best = advice.option(advice.best_action)
            taken = advice.option(action)
            reviewed.append(Decision(index, advice.roll, advice.phase, action, taken.label, taken.value,
                                     best.action, best.label, best.value, taken.loss))
        game.step(action)
    worst = sorted(reviewed, key=lambda d: (-d.loss, d.index))[:3]
    return Review(seat, source, tuple(reviewed), float(sum(d.loss for d in reviewed)), tuple(worst))
