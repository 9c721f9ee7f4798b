"""What the play server's tables need, prepared in one background thread when it starts.

A first game or coach request would otherwise compute inside the request: the solo solver's
value table (`solver.load_table` solves for about a minute when nothing is cached, then writes
the cache file) and the compiled kernels of the bots (numba compiles for seconds when its
cache is cold, then writes it). A `Preparation` does that work once, in the background, item
by item (a `Task` each; for ``qwixx serve`` each first in a child process, so that compiling
never holds this process's interpreter lock), keeping a status per item that ``/api/info``
reports under ``"ready"``. No request waits for it: a new game whose items are not ready is
created at once and begins when they are (`holdup` says what it waits for), and a coach request that needs
an item not ready yet is refused at once with a `NotReady` (503, with the item's progress and a
Retry-After), then works once the item is ready. So requests never compute for long and never
write a file: the cache writes happen here only.

`default_tasks(catalogue)` is what ``qwixx serve`` prepares: the game kernels of both
variants (``"tables"``), the coach, each bot offered, and the solo table. `needs_of_game` and
`needs_of_coach` say which items a request needs. `Preparation([])` prepares nothing (every
item is taken as ready, computed on first use): tests and library users that build the app
themselves start from that.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from qwixx_env import qwixx_v0
from qwixx_env.core.options import TableOptions
from qwixx_env.core.variant import CLASSIC
from qwixx_env.play import coach
from qwixx_env.play.games import NewGame, PlayError, bot_catalogue
from qwixx_env.play.session import HUMAN, PlaySession
from qwixx_env.solver import load_table

logger = logging.getLogger("qwixx_env.play")

WAITING, PREPARING, READY, FAILED = "waiting", "preparing", "ready", "failed"
RETRY_AFTER = 2  # seconds a refused request is told to wait
SOLO_TABLE = "solo table"
SOLO_BOT = "solo_optimal"
WARM_DECISIONS = 6  # a person's decisions played per table to compile what a game runs
Progress = Callable[[float], None]  # the fraction of a task done, 0 to 1


@dataclass(frozen=True)
class Task:
    """One item to prepare: `name` is what requests ask for (a bot's name, ``"tables"``,
    ``"coach"``, ``"solo table"``), `doing` says what the work is in words for a message, and
    `run(progress)` does it, calling `progress` with the fraction done."""

    name: str
    doing: str
    run: Callable[[Progress], None]


class NotReady(PlayError):
    """A request that needs an item still being prepared: 503, with every item's status."""

    def __init__(self, message: str, ready: dict[str, dict[str, Any]], retry_after: int = RETRY_AFTER):
        super().__init__(503, message)
        self.ready = ready
        self.retry_after = retry_after


class Preparation:
    """The items of `tasks`, prepared in one background thread (`start`, once), each with a
    status (`status`); `require` refuses what is not ready. They are prepared in order, except
    that what a request has waited for (`holdup`) goes next, the first asked first: a new game
    against the last bot of the list begins once its own items are ready, not after every
    other bot's. Items not in `tasks` are not prepared here and count as ready.

    `in_child` (what `serve` asks for): each item is first prepared by name in a child process
    (``python -m qwixx_env.play.prepare``, which holds `default_tasks`), then run here, where
    it only loads what the child compiled and cached. Numba's compiler is mostly Python: in
    this process it would hold the interpreter lock for most of a minute per bot, and every
    request would wait its turn for it, seconds at a time. An item the child does not know,
    or every item once the child cannot go on, is prepared here."""

    def __init__(self, tasks: Sequence[Task], *, in_child: bool = False):
        names = [t.name for t in tasks]
        if len(set(names)) != len(names):
            raise ValueError(f"tasks: got the names {names}; expected each item once")
        self.tasks = list(tasks)
        self._status = {t.name: {"state": WAITING, "progress": 0.0, "doing": t.doing} for t in tasks}
        self._asked: list[str] = []  # items a request waited for, in the order first asked: prepared next
        self._lock = threading.Lock()  # guards the statuses and the one start
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self.in_child = in_child
        self._helper: Helper | None = None
        self._stopped = threading.Event()
        if not tasks:
            self._done.set()

    def start(self) -> None:
        """Start the background thread (a second call does nothing)."""
        with self._lock:
            if self._thread is None and self.tasks:
                self._thread = threading.Thread(target=self._run, name="qwixx-prepare", daemon=True)
                self._thread.start()

    def stop(self) -> None:
        """Stop preparing: no item is started after this, and the child process, if any, is
        stopped (the server does this when it stops)."""
        self._stopped.set()
        helper = self._helper
        if helper is not None:
            helper.stop()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every item is ready or failed (at most `timeout` seconds); whether so."""
        return self._done.wait(timeout)

    def status(self) -> dict[str, dict[str, Any]]:
        """Every item's ``{"state", "progress", "doing"}`` (and ``"error"`` once failed)."""
        with self._lock:
            return {name: dict(item) for name, item in self._status.items()}

    def ready(self, names: Iterable[str]) -> bool:
        """Whether every item of `names` is ready; starts the preparation if it has not started."""
        return self.holdup("", names) is None

    def holdup(self, who: str, names: Iterable[str]) -> tuple[str, bool] | None:
        """What keeps `who` (what a request asked for) from the items of `names`: the words for
        an item that failed (it never will be ready), else for the first item not ready (its
        progress), and whether it failed; None when every item is ready. Starts the
        preparation if it has not started."""
        self.start()
        names = list(names)
        with self._lock:
            self._asked += [name for name in names if name in self._status and name not in self._asked]
        status = self.status()
        waiting = [status[name] for name in names if name in status and status[name]["state"] != READY]
        failed = [item for item in waiting if item["state"] == FAILED]
        if failed:
            return (f"{who} is not available: preparing it failed ({failed[0]['error']}); the server's log "
                    "says more"), True
        if not waiting:
            return None
        item = waiting[0]
        if item["state"] == PREPARING:
            return f"{who} is getting ready ({item['doing']}: {int(100 * item['progress'])}%)", False
        return f"{who} is getting ready (waiting to start {item['doing']})", False

    def require(self, who: str, names: Iterable[str]) -> None:
        """Refuse with a `NotReady` naming `who` (what the request asked for) unless every
        item of `names` is ready; starts the preparation if it has not started."""
        held = self.holdup(who, names)
        if held is not None:
            words, failed = held
            raise NotReady(words if failed else f"{words}; try again in a moment", self.status())

    def refuse_failed(self, who: str, names: Iterable[str]) -> None:
        """Refuse with a `NotReady` naming `who` when an item of `names` failed (it will never be
        ready); an item still being prepared is not refused."""
        held = self.holdup(who, names)
        if held is not None and held[1]:
            raise NotReady(held[0], self.status())

    def _set(self, name: str, **fields: Any) -> None:
        with self._lock:
            self._status[name].update(fields)

    def _next(self) -> Task | None:
        """The next item to prepare: the first asked for that is still waiting, else the first
        waiting in order; None when none is left."""
        with self._lock:
            if self._stopped.is_set():
                return None
            waiting = {t.name: t for t in self.tasks if self._status[t.name]["state"] == WAITING}
            first = next((name for name in self._asked if name in waiting), next(iter(waiting), None))
            if first is None:
                return None
            self._status[first]["state"] = PREPARING
            return waiting[first]

    def _run(self) -> None:
        if self.in_child:
            try:
                self._helper = Helper()
            except OSError as err:
                logger.warning("play server: no child process to prepare in (%s); preparing here", err)
        while (task := self._next()) is not None:
            def report(done: float, name: str = task.name) -> None:
                self._set(name, progress=min(max(float(done), 0.0), 1.0))

            failed = self._in_child(task, report)
            if self._stopped.is_set():
                break
            if failed is not None:
                self._set(task.name, state=FAILED, error=failed)
                continue
            try:
                task.run(report if self._helper is None else lambda done: None)
            except Exception as err:  # one item's failure leaves the others to prepare
                logger.exception("play server: preparing %s failed", task.name)
                self._set(task.name, state=FAILED, error=str(err))
            else:
                self._set(task.name, state=READY, progress=1.0)
        if self._helper is not None:
            self._helper.stop()
        self._done.set()

    def _in_child(self, task: Task, report: Progress) -> str | None:
        """Have the child process prepare `task` (when there is one): the words of its error
        when it failed there, else None (then this process runs the task: it loads what the
        child cached, or computes it when the child could not)."""
        if self._helper is None:
            return None
        try:
            return self._helper.prepare(task.name, report)
        except LookupError:  # not one of the child's items
            return None
        except (OSError, EOFError, ValueError) as err:
            if not self._stopped.is_set():  # else the server stopped it
                logger.warning("play server: the preparing child process stopped (%s); preparing here", err)
            self._helper.stop()
            self._helper = None
            return None


# The child's command: this same qwixx_env (its folder first on the path unless it is there
# already, as site-packages is), run as ``python -m qwixx_env.play.prepare``.
_CHILD = ("import runpy, sys\n"
          "if sys.argv[1] not in sys.path: sys.path.insert(0, sys.argv[1])\n"
          "runpy.run_module('qwixx_env.play.prepare', run_name='__main__', alter_sys=True)\n")


class Helper:
    """The child process that prepares items by name for a `Preparation` (``in_child``):
    ``python -m qwixx_env.play.prepare`` (`helper_main`), this same package, told one item's
    name a line on its stdin; it answers ``progress F`` lines, then ``ready``, ``failed
    WORDS`` or ``unknown`` on its stdout. Its other output goes to the server's stderr."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[2])  # the folder holding this qwixx_env
        self.process = subprocess.Popen([sys.executable, "-c", _CHILD, root], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)

    def prepare(self, name: str, progress: Progress) -> str | None:
        """Prepare `name` in the child: None once it is ready, the words of its error when it
        failed; a `LookupError` when the child has no such item, an `EOFError` (or `OSError`,
        `ValueError`) when the child is gone or says what it should not."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None, "made with pipes"
        stdin.write(name + "\n")
        stdin.flush()
        for line in stdout:
            word, _, rest = line.rstrip("\n").partition(" ")
            if word == "progress":
                progress(float(rest))
            elif word == READY:
                return None
            elif word == FAILED:
                return rest
            elif word == "unknown":
                raise LookupError(name)
            else:
                raise ValueError(f"the child process answered {line!r}")
        raise EOFError(f"the child process ended (exit status {self.process.wait()})")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def needs_of_game(new: NewGame) -> list[str]:
    """The items a new game needs: the game kernels and each seat's bot (solo_optimal also
    the solo table)."""
    names = ["tables", *new.bots]
    if SOLO_BOT in new.bots:
        names.insert(1, SOLO_TABLE)
    return list(dict.fromkeys(names))


def needs_of_coach(table: TableOptions, bot: str | None) -> list[str]:
    """The items the coach needs at `table` (the solo table in solo classic), and `bot`'s."""
    names = ["tables", "coach"]
    if coach.source_for(table.rules, table.num_players).name == "solver":
        names.append(SOLO_TABLE)
    if bot is not None:
        names += [SOLO_TABLE, bot] if bot == SOLO_BOT else [bot]
    return list(dict.fromkeys(names))


def _play_a_little(table: TableOptions, bot: str) -> None:
    """A few decisions of a person against `bot` at `table`, as the page's games run them."""
    session = PlaySession(table, [HUMAN, bot] if table.num_players > 1 else [HUMAN], seed=0)
    session.advance()
    for _ in range(WARM_DECISIONS):
        if session.over:
            break
        session.decide(0, session.legal()[0]["action"])
    session.record()


def _bot_tables(entry: dict[str, Any]) -> list[TableOptions]:
    """The tables a catalogue entry's bot is prepared for: a pretrained bot's one game, else
    two-player classic and Longo (those it cannot play are skipped)."""
    plays = entry.get("plays")
    if plays:
        lucky = {"lucky": plays["lucky"]} if plays.get("lucky") else {}
        return [TableOptions(num_players=plays["players"], variant=plays["variant"], **lucky)]
    return [TableOptions(num_players=2, variant="classic"), TableOptions(num_players=2, variant="longo")]


def _kernels(tables: list[TableOptions], bot: str) -> Callable[[Progress], None]:
    def run(progress: Progress) -> None:
        for done, table in enumerate(tables):
            try:
                _play_a_little(table, bot)
            except ValueError:  # a bot that cannot play this table: nothing of it to compile
                pass
            progress((done + 1) / len(tables))
    return run


def _game_kernels(progress: Progress) -> None:
    tables = [TableOptions(num_players=1), TableOptions(num_players=2),
              TableOptions(num_players=2, variant="longo", lucky="instead")]
    _kernels(tables, "random")(progress)


def _coach_kernels(progress: Progress) -> None:
    tables = [TableOptions(num_players=2), TableOptions(num_players=2, variant="longo")]
    for done, table in enumerate(tables):
        env = qwixx_v0.raw_env(table=table)
        env.reset(seed=0)
        coach.advise(env)
        progress((done + 1) / len(tables))


def _solo_table(progress: Progress) -> None:
    load_table(CLASSIC, progress=lambda done, total: progress(done / max(total, 1)))
    env = qwixx_v0.raw_env(num_players=1)  # the solo coach's kernels: it plays an option ahead
    env.reset(seed=0)
    for _ in range(WARM_DECISIONS):
        env.step(coach.advise(env).best_action)


def default_tasks(catalogue: list[dict[str, Any]]) -> list[Task]:
    """What ``qwixx serve`` prepares, quickest and most needed first: the game kernels, the
    coach, every bot of `catalogue` (`games.bot_catalogue()`), then the solo table (the
    longest when not cached) and the solo_optimal bot that reads it."""
    tasks = [Task("tables", "compiling the game's kernels", _game_kernels),
             Task("coach", "compiling the coach's kernels", _coach_kernels)]
    later = []
    for entry in catalogue:
        name = entry["name"]
        task = Task(name, f"compiling the {name} bot's kernels", _kernels(_bot_tables(entry), name))
        (later if name == SOLO_BOT else tasks).append(task)
    return [*tasks, Task(SOLO_TABLE, "solving the solo table", _solo_table), *later]


def helper_main(lines: Iterable[str], protocol: IO[str]) -> None:
    """The child process of `Helper`: prepare each item of `default_tasks` named by a line of
    `lines`, telling `protocol` its progress and then ``ready``, ``failed WORDS`` or ``unknown``."""
    tasks = {t.name: t for t in default_tasks(bot_catalogue())}

    def report(done: float) -> None:
        protocol.write(f"progress {float(done)}\n")
        protocol.flush()  # the server shows the progress as it comes

    for line in lines:
        task = tasks.get(line.strip())
        if task is None:
            protocol.write("unknown\n")
        else:
            try:
                task.run(report)
            except Exception as err:  # the server marks the item failed, with these words
                traceback.print_exc()
                protocol.write(f"{FAILED} {' '.join(str(err).split()) or type(err).__name__}\n")
            else:
                protocol.write(f"{READY}\n")
        protocol.flush()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C reaches the server's process group: the server stops this
    answers = os.fdopen(os.dup(1), "w")  # the answers' own copy of stdout: nothing else may write there
    os.dup2(2, 1)
    sys.stdout = sys.stderr  # what the work prints goes to the server's stderr
    helper_main(sys.stdin, answers)
