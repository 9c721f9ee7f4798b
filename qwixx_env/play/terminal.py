"""The terminal game: a person plays Qwixx or Qwixx Longo against bots (`qwixx play`).

`setup(...)` checks the table (variant, lucky rule, players, the bots of the other seats, the
person's seat, seed, coach, record file) and names what is accepted when something is wrong;
`play(game_setup, stdin, stdout)` runs the game on two text streams and returns the exit
status. The command line only parses its options into `setup` (docs/play.md shows a game).

At each of the person's decisions the sheets are drawn as the env's ``render_mode="ansi"``
draws them (in colour on a terminal, unless ``NO_COLOR`` is set), then the legal options with
their short labels (`play.labels`: ``r7``, ``g12``, ``p``) and numbers. The person types a
label or a number; ``?`` shows the coach's values (`play.coach`), ``h`` the help, ``q`` saves
and leaves. Anything else is answered with what is accepted, and the prompt again. The bots'
decisions are shown as they take effect: the white action's choices together once every
seat has chosen (they are simultaneous and hidden until then), the colour action at once.

The game record (`raw_env.record()`, which `qwixx_env.replay` rebuilds) is saved at the end,
and also when the input ends, on ``q`` or on Ctrl-C mid-game: to ``--record PATH``, else to a
new file in `games_dir()`; the path is printed. Exit status: 0 when the game ends or the
input ends or the person quits, `EXIT_INTERRUPTED` (130) after Ctrl-C.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from qwixx_env import bots, extras
from qwixx_env.core.checks import check_choice, check_int, check_seed
from qwixx_env.core.options import MAX_PLAYERS, TableOptions
from qwixx_env.core.variant import CLASSIC, LUCKY_RULES, Variant, encode_action, get_variant, resolve_variant
from qwixx_env.envs.render import color_tags, tagged_rows
from qwixx_env.files import folder_problem, write_atomically
from qwixx_env.nets import NumpyPolicy, checkpoint_names
from qwixx_env.play import coach
from qwixx_env.play.labels import action_label, action_text, parse_label, row_letters
from qwixx_env.play.session import HUMAN, PlaySession
from qwixx_env.solver import table_path

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a process ended by Ctrl-C
DEFAULT_BOT = "heuristic"
COLOR_MODES = ("auto", "always", "never")

COACH_DOCS = f"{extras.DOCS}play/#what-the-coachs-numbers-mean"  # a wheel has no docs folder


def games_dir() -> Path:
    """Where game records are saved by default: ``$XDG_DATA_HOME/qwixx_env/games``, else
    ``~/.local/share/qwixx_env/games``."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "qwixx_env" / "games"


@dataclass(frozen=True)
class GameSetup:
    """A checked table for `play` (made by `setup`)."""

    variant: str
    lucky: str | None  # Longo's lucky rule; None in classic
    players: int
    seat: int  # the person's seat
    bots: tuple[str | None, ...]  # per seat: a bot name, None for the person's seat
    seed: int
    coach: bool  # show the coach's values at every decision and review the game at the end
    coach_bot: str | None  # the coach also says what this bot would play
    record: Path  # where the game record is saved


def _pretrained_tables(names: list[str]) -> dict[str, tuple[str, int, str | None]]:
    """{name: (variant, players, lucky rule)} of the pretrained bots among `names`."""
    installed = set(checkpoint_names())
    tables = {}
    for name in names:
        if name in installed and name not in tables:
            policy = NumpyPolicy.load(name)
            tables[name] = (policy.variant, policy.num_players, policy.lucky)
    return tables


def setup(
    *,
    variant: str | None = None,
    lucky: str | None = None,
    players: int | None = None,
    bots_: list[str] | tuple[str, ...] | None = None,
    seat: int = 0,
    seed: int | None = None,
    coach: bool = False,
    coach_bot: str | None = None,
    record: str | os.PathLike[str] | None = None,
) -> GameSetup:
    """Check the table of a terminal game; a `ValueError` names the option and what it accepts.

    `bots_` names the bots of the other seats in seat order (one name: every other seat;
    default `DEFAULT_BOT`). `variant` and `lucky` default to what the pretrained bots named
    play, else classic (and Longo's lucky cross as a bonus); `players` to one more than the
    bots named, or with one pretrained bot named, the player count it was trained for. `seed`
    defaults to a fresh one (printed, so the game can be played again).
    """
    names = list(bots_) if bots_ else [DEFAULT_BOT]
    available = bots.available()
    for name in names:
        if name not in available:
            raise ValueError(f"--bots: got {name!r}; expected names from {available}")
    tables = _pretrained_tables(names)
    if variant is None:
        found = {t[0] for t in tables.values()}
        variant = found.pop() if len(found) == 1 else "classic"
    try:
        variant = resolve_variant(variant).name  # a name, a sheet file or module:attribute
    except ValueError as err:
        raise ValueError(f"--{err}" if str(err).startswith("variant:") else f"--variant: {err}") from None
    if lucky is not None:
        check_choice("--lucky", lucky, LUCKY_RULES)
        if not get_variant(variant).lucky_count:
            raise ValueError(f"--lucky: got {lucky!r}; the lucky rule is for a variant with lucky numbers "
                             f"(--variant longo); {variant} has none")
    elif get_variant(variant).lucky_count:
        found_lucky = {t[2] for t in tables.values() if t[0] == variant and t[2]}
        lucky = found_lucky.pop() if len(found_lucky) == 1 else "bonus"
    if players is None:
        found = {t[1] for t in tables.values()}
        players = found.pop() if len(names) == 1 and len(found) == 1 else len(names) + 1
    players = check_int("--players", players, minimum=1, maximum=MAX_PLAYERS)
    if len(names) == 1:
        names = names * (players - 1)
    if len(names) != players - 1:
        raise ValueError(f"--bots: got {len(names)} bots for {players} players; expected one name (for every "
                         f"other seat) or {players - 1} names (one per other seat)")
    check_int("--seat", seat, minimum=0, maximum=players - 1)
    seed = secrets.randbelow(2**31) if seed is None else seed
    check_seed(seed)
    table = _table(variant, lucky, players)
    for name in [*set(names), *([coach_bot] if coach_bot else [])]:
        _check_bot(name, table, option="--coach-bot" if name == coach_bot else "--bots")
    seats = names[:seat] + [None] + names[seat:]
    if record is None:
        problem = folder_problem(games_dir(), create=True)
        if problem:
            raise ValueError(f"the default record folder {str(games_dir())!r} {problem}; give --record PATH")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        record = games_dir() / f"qwixx-{stamp}-{variant}-{players}p-seed{seed}.json"
    else:
        record = Path(record)
        if record.is_dir():
            raise ValueError(f"--record: {str(record)!r} is a folder; expected a file path in an existing folder")
        problem = folder_problem(record.absolute().parent)
        if problem:
            raise ValueError(f"--record: {str(record)!r} is in a folder that {problem}; expected a file path "
                             "in an existing folder")
    return GameSetup(variant, lucky, players, seat, tuple(seats), seed, coach, coach_bot, record)


def _table(variant: str, lucky: str | None, players: int) -> TableOptions:
    return TableOptions(num_players=players, variant=variant, lucky=lucky or "bonus")


def _check_bot(name: str, table: TableOptions, option: str) -> None:
    """Make the bot once, so that a bot that cannot play the table is refused before the game."""
    try:
        bots.make_bot(name, table, 0)
    except ValueError as err:
        raise ValueError(f"{option}: {name!r} cannot play {table.variant} with {table.num_players} players: "
                         f"{err}") from None


# --- drawing --------------------------------------------------------------------------------

_ANSI_COLORS = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "purple": "35",
                "cyan": "36"}  # a die colour not here is drawn in the terminal's own colour
_CROSSED = r"\[(\d+\S*|L)\]"


def use_color(stream: IO[str], mode: str = "auto") -> bool:
    """Whether to draw in colour: ``always``, ``never``, or (``auto``) on a terminal that is
    not ``TERM=dumb`` and without ``NO_COLOR`` set (https://no-color.org)."""
    check_choice("--color", mode, COLOR_MODES)
    if mode != "auto":
        return mode == "always"
    return _is_tty(stream) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def colorize(text: str, variant: Variant = CLASSIC) -> str:
    """The ansi render of a `variant` game with each row in its colour and crossed numbers in
    reverse video; a row whose cells show their colours (`render.tagged_rows`) has each cell in
    its own."""
    names = sorted(variant.row_names, key=len, reverse=True)
    row_line = re.compile(r"^  (" + "|".join(re.escape(n) for n in names) + ") ")
    tagged = dict(zip(variant.row_names, tagged_rows(variant)))
    tags = {t: c for c, t in color_tags(variant).items()}
    tagged_cell = re.compile(r"(\[?\d+)(" + "|".join(re.escape(t) for t in sorted(tags, key=len, reverse=True))
                             + r")\]?(?=[\s\[-]|$)")
    lines = []
    for line in text.split("\n"):
        m = row_line.match(line)
        if m and tagged[m.group(1)]:
            cells = tagged_cell.sub(lambda c: _in_color(re.sub(_CROSSED, _reverse, c.group(0)), tags[c.group(2)]),
                                    line[m.end():])
            line = line[: m.end()] + re.sub(r"\[L\]", _reverse, cells)
        elif m:
            line = _in_color(re.sub(_CROSSED, _reverse, line), m.group(1))
        lines.append(line)
    return "\n".join(lines)


def _reverse(crossed: re.Match[str]) -> str:
    return f"\033[7m{crossed.group(0)}\033[27m"


def _in_color(text: str, color: str) -> str:
    code = _ANSI_COLORS.get(color)
    return text if code is None else f"\033[{code}m{text}\033[0m"


def _is_tty(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _format_number(unit: str, x: float, value: bool = False) -> str:
    """A value or a loss as the terminal shows it: a win chance in percent (a loss in
    percentage points), points with two decimals."""
    if unit == "win chance":
        return f"{100 * x:.1f}" + ("%" if value else "")
    return f"{x:.2f}"


# Per coach source: the column titles of an option's value and loss, and a line that says what they are.
_HEADERS = {
    "solver": ("exp. score", "regret"), "afterstate": ("win chance", "loss"), "heuristic": ("heuristic", "loss"),
}
_EXPLAINED = {
    "solver": "the solver's expected final score after the option, playing perfectly from there; regret: "
    "points given away against the best option",
    "afterstate": "the afterstate network's chance to win after the option; loss: percentage points of win "
    "chance given away against the best option",
    "heuristic": "the heuristic bot's evaluation of the position after the option, in its own points, not a "
    "score; loss: how far below the best option",
}


# --- the game -------------------------------------------------------------------------------


def _wrap(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, width=96, initial_indent=indent, subsequent_indent=indent + " ")


_PHASE_WORDS = {"white": "white action", "lucky": "lucky cross", "color": "colour action"}


def _format_loss(source: coach.Source, loss: float) -> str:
    """A loss in words: "2.31 points", "5.7 percentage points" (of win chance)."""
    if source.unit == "win chance":
        return f"{100 * loss:.1f} percentage points"
    return f"{loss:.2f} {source.unit}"


class _EndOfInput(Exception):
    """The person's input ended (or they typed q)."""


class TerminalGame:
    """One game on two text streams; `run` plays it (see the module docstring)."""

    def __init__(self, game: GameSetup, stdin: IO[str], stdout: IO[str], color: bool = False):
        self.setup, self.stdin, self.stdout, self.color = game, stdin, stdout, color
        seats = [HUMAN if name is None else name for name in game.bots]
        self.session = PlaySession(_table(game.variant, game.lucky, game.players), seats, game.seed)
        self.env = self.session.env
        self.variant = self.env.variant
        self._told = 0  # the session's events before this index are on the screen

    # -- output helpers
    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def who(self, seat: int) -> str:
        return "you" if seat == self.setup.seat else f"player_{seat} ({self.setup.bots[seat]})"

    def table(self) -> str:
        text = self.env.render()
        if text is None:  # raw_env returns None only in render_mode="human", which the session never sets
            raise RuntimeError(f"table: the game was built with render_mode={self.env.render_mode!r}")
        for s, name in enumerate(self.setup.bots):
            tag = "you" if name is None else name
            text = re.sub(rf"^player_{s}\b", f"player_{s} [{tag}]", text, count=1, flags=re.M)
        return colorize(text, self.variant) if self.color else text

    # -- the loop
    def run(self) -> int:
        s = self.setup
        names = ", ".join(f"player_{i} = {name or 'you'}" for i, name in enumerate(s.bots))
        lucky = f", lucky rule {s.lucky}" if s.lucky else ""
        self.say(f"Qwixx {s.variant}{lucky}, {s.players} player(s): {names}. Seed {s.seed} "
                 f"(qwixx play --seed {s.seed} with the same options plays these dice again).")
        label, words = self.example()
        self.say(f"Type an option's label ({label} = {words}, p = pass) or its number; ? coach, h help, "
                 "q save and quit.")
        try:
            self.session.advance()
            self.tell()
            while not self.session.over:
                self.session.decide(self.setup.seat, self.ask())
                self.tell()
            self.finish()
        except _EndOfInput:
            self.tell()
            path = self.save()
            self.say(f"\nGame left at roll {self.env.snapshot()['roll'] + 1}; the record so far is saved to {path}")
            return 0
        except KeyboardInterrupt:
            self.tell()  # what the bots did before Ctrl-C, as it would have been shown
            path = self.save()
            self.say(f"\nInterrupted; the record so far is saved to {path}")
            return EXIT_INTERRUPTED
        return 0

    def tell(self) -> None:
        """Show the session's events not yet shown: each white action once revealed (every
        seat's crosses), each colour action; a white-action choice alone shows nothing."""
        events = self.session.events
        while self._told < len(events):  # counted one by one, so that Ctrl-C midway shows nothing twice
            event = events[self._told]
            self._told += 1
            if event["kind"] == "white":
                news = "; ".join(f"{self.who(o['seat'])} {self.words(o['seat'], o['crosses'], o['locks'])}"
                                 for o in event["outcomes"])
                self.say(f"White action (sum {event['white_sum']}): {news}.")
            elif event["kind"] == "decision" and event["phase"] == "color":
                seat, mark = event["seat"], event["mark"]
                penalties = event["snapshot"]["players"][seat]["penalties"] if event["penalty"] else None
                words = self.words(seat, [mark] if mark else [], event["locks"], penalties)
                self.say(f"Colour action: {self.who(seat)} {words}.")

    def words(self, seat: int, crosses: list[dict[str, Any]], locks: list[str], penalties: int | None = None) -> str:
        """What a seat did, in words: its crosses (a lucky one so marked), the rows it locked and
        a penalty it took (`penalties`: its count after it)."""
        me = seat == self.setup.seat
        marks = [f"{m['row']} {m['number']}" + (" (lucky)" if m.get("lucky") else "") for m in crosses]
        words = f"cross{'' if me else 'es'} {' and '.join(marks)}" if marks else ("pass" if me else "passes")
        if locks:
            words += f" and lock{'' if me else 's'} {' and '.join(locks)}"
        if penalties is not None:
            words += f", with a penalty ({penalties} of {self.variant.max_penalties})"
        return words

    def ask(self) -> int:
        env, v = self.env, self.variant
        legal = env.legal_actions()
        self.say()
        self.say(self.table())
        self.say(self.phase_line())
        advice = None
        if self.setup.coach:
            advice = self.advice()
        self.say(self.options_text(legal, advice))
        while True:
            self.stdout.write("Your choice: ")
            self.stdout.flush()
            line = self.stdin.readline()
            if not line:
                raise _EndOfInput
            if not _is_tty(self.stdin):
                self.stdout.write(line if line.endswith("\n") else line + "\n")  # a transcript shows what was typed
            text = line.strip()
            if text in ("q", "quit"):
                raise _EndOfInput
            if text in ("h", "help"):
                self.say(self.help_text(legal))
                continue
            if text == "?":
                advice = advice or self.advice()
                self.say(self.coach_text(advice))
                continue
            if text.isdigit() and text.isascii() and 1 <= int(text) <= len(legal):
                return legal[int(text) - 1]
            try:
                action = parse_label(text, v)
            except ValueError:
                self.say(f"{text!r} is not an option. {self.accepted(legal)}")
                continue
            if action in legal:
                return action
            self.say(f"{action_label(action, v)} ({action_text(action, v)}) is not legal now. {self.accepted(legal)}")

    def advice(self) -> coach.Advice:
        self.table_notice()
        return coach.advise(self.env, self.setup.seat, bot=self.setup.coach_bot)

    def table_notice(self) -> None:
        """Say so before the solo coach first solves the solver's table (it is then cached)."""
        v = self.variant
        if coach.source_for(v, self.setup.players).name == "solver" and not table_path(v).exists():
            self.say("The coach solves solo Qwixx first (once; the table is then cached): a minute or two...")

    def accepted(self, legal: list[int]) -> str:
        labels = ", ".join(action_label(a, self.variant) for a in legal)
        return f"Type one of {labels}, or a number from 1 to {len(legal)}; ? coach, h help, q save and quit."

    def phase_line(self) -> str:
        snap = self.env.snapshot()
        white = snap["dice"]["white"]
        roll = f"Roll {snap['roll'] + 1}"  # counted from 1, as the sheets' header and the play page count them
        if snap["phase"] == "white":
            roller = snap["active_player"]
            active = "your roll" if roller == self.setup.seat else f"{self.who(roller)} rolled"
            line = (f"{roll}, {active}. Your white action: cross the white sum {white[0]} + {white[1]} = "
                    f"{sum(white)} in one row, or pass.")
            if sum(white) in snap["players"][self.setup.seat]["lucky_numbers"]:
                line += f" {sum(white)} is one of your lucky numbers: " + (
                    "you also cross the next number of your row with the fewest crosses."
                    if self.variant.lucky_rule == "bonus"
                    else "instead of it you may cross the next number of a row with the fewest crosses.")
            return _wrap(line, indent="")
        if snap["phase"] == "lucky":
            return (f"{roll}. Your lucky cross: your rows with the fewest crosses tie; choose the one whose next "
                    "number you cross.")
        penalty = self.session.pass_costs_penalty(self.setup.seat)
        cost = " Passing now costs a penalty (you crossed nothing in the white action)." if penalty else ""
        return f"{roll}. Your colour action: a white die + a coloured die, in that colour's row, or pass.{cost}"

    def options_text(self, legal: list[int], advice: coach.Advice | None) -> str:
        v = self.variant
        if advice is None:
            lines = ["Your options:"]
        else:
            value, loss = _HEADERS[advice.source.name]
            lines = [f"{'Your options:':<27}{value:>10}  {loss:>7}"]
        for i, a in enumerate(legal, 1):
            line = f"  {i:>2}  {action_label(a, v):<4} {action_text(a, v):<16}"
            if advice is not None:
                line += self.coach_columns(advice, advice.option(a))
            lines.append(line.rstrip())
        if advice is not None:
            lines.append(_wrap(f"(coach: {_EXPLAINED[advice.source.name]})"))
        return "\n".join(lines)

    def coach_columns(self, advice: coach.Advice, o: coach.Option) -> str:
        """An option's value and loss, as the columns of `options_text`, and the coach bot's choice."""
        unit = advice.source.unit
        loss = "best" if o.action == advice.best_action else _format_number(unit, o.loss)
        text = f"{_format_number(unit, o.value, value=True):>10}  {loss:>7}"
        return text + (f"  <- {advice.bot}" if o.action == advice.bot_action else "")

    def coach_text(self, advice: coach.Advice) -> str:
        value, loss = _HEADERS[advice.source.name]
        lines = [f"Coach ({advice.source.name}), best first:", f"{'':<27}{value:>10}  {loss:>7}"]
        for o in sorted(advice.options, key=lambda o: (o.loss, o.action)):
            lines.append(f"      {o.label:<4} {o.text:<16}{self.coach_columns(advice, o)}")
        lines.append(_wrap(f"({_EXPLAINED[advice.source.name]})"))
        if advice.bot is not None and advice.bot_action is not None:  # set together (coach.Advice)
            lines.append(f"  {advice.bot} would play {action_label(advice.bot_action, self.variant)}.")
        return "\n".join(lines)

    def example(self) -> tuple[str, str]:
        """A cross to show labels by, as its label and in words: ``("r7", "red 7")`` in classic."""
        row, numbers = self.variant.row_names[0], self.variant.row_numbers[0]
        number = 7 if 7 in numbers else numbers[0]
        return action_label(encode_action((row, number), self.variant), self.variant), f"{row} {number}"

    def help_text(self, legal: list[int]) -> str:
        letters = ", ".join(f"{letter} {row}" for row, letter in row_letters(self.variant).items())
        return (
            f"Each option has a label: the row's letter ({letters}) and the number "
            f"to cross, or p to pass; '{self.example()[1]}' works too, and so does the option's number in the list.\n"
            f"? shows what the coach makes of each option ({COACH_DOCS} explains the numbers).\n"
            "q (or end of input, or Ctrl-C) saves the game so far and leaves. " + self.accepted(legal)
        )

    def save(self) -> Path:
        path = self.setup.record
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(self.session.record(public=False), indent=1).encode())
        return path

    def finish(self) -> None:
        self.say()
        self.say(self.table())
        scores, winners = self.session.scores(), self.session.winners()
        line = ", ".join(f"{self.who(s)} {x}" for s, x in enumerate(scores))
        if len(scores) == 1:
            result = ""
        elif winners == [self.setup.seat]:
            result = " You win!"
        elif self.setup.seat in winners:
            result = " You share the win."
        else:
            result = f" Winner{'s' if len(winners) > 1 else ''}: {' and '.join(self.who(s) for s in winners)}."
        self.say(f"Game over. Final scores: {line}.{result}")
        path = self.save()
        self.say(f"The game record is saved to {path} (qwixx_env.replay rebuilds it).")
        if self.setup.coach:
            self.table_notice()
            self.say(self.review_text(coach.review(self.env.record(), self.setup.seat)))

    def review_text(self, rev: coach.Review) -> str:
        src = rev.source
        lines = [_wrap(f"Coach's review ({src.name}): {len(rev.decisions)} decisions of yours, total "
                       f"{src.loss_name} {_format_loss(src, rev.total_loss)}.", indent="")]
        if rev.worst:
            lines.append("Your costliest decisions (the decision number is its index in the record):")
        for d in rev.worst:
            lines.append(_wrap(f"decision {d.index}, roll {d.roll + 1}, {_PHASE_WORDS[d.phase]}: you played {d.label}, "
                               f"the best was {d.best_label}; {src.loss_name} {_format_loss(src, d.loss)}"))
        return "\n".join(lines)


def play(game: GameSetup, stdin: IO[str], stdout: IO[str], color: bool = False) -> int:
    """Play one terminal game (see the module docstring); returns the exit status."""
    return TerminalGame(game, stdin, stdout, color).run()
