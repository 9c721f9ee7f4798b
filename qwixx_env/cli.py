"""The `qwixx` command line.

``qwixx solve``: solve solo Qwixx exactly (or load the cached table) and print the optimal
expected score with the time taken::

    qwixx solve                        # cached table if there is one, else solve and cache it
    qwixx solve --rebuild              # solve from nothing again
    qwixx solve --cache-dir DIR        # another cache directory (default: see qwixx_env.solver)
    qwixx solve --sheet '{"marks": {"red": [2, 3, 5]}, "penalties": 1}'
                                       # also: what is this solo sheet worth?

A progress bar shows on stderr while solving when `rich` is installed (the ``arena`` extra) and
stderr is a terminal; otherwise the progress is printed there as plain lines.

``qwixx arena``: a tournament between bots (see `qwixx_env.arena` and docs/arena.md)::

    qwixx arena random greedy --games 1000            # 2-player classic, every ordered pair
    qwixx arena greedy:max_skip=1 greedy:max_skip=3 random --players 3 --variant longo
    qwixx arena greedy heuristic --json out.json --png out.png --workers 2 --seed 7
    qwixx arena ppo-classic-3p heuristic rollout   # 3 players: the checkpoint's game
    qwixx arena runs/my2p/final random greedy heuristic   # your trained policy (or its run folder, runs/my2p)
    qwixx arena random heuristic --variant mixx.toml      # a sheet of your own (docs/environment.md)

It prints a table (plain text, or rich's with the ``arena`` extra), and with ``--json`` / ``--png``
writes the full result and a plot (``--png`` needs matplotlib: the ``arena`` extra);
``--records DIR`` keeps every game's record (for ``qwixx serve``'s replay viewer).

``qwixx bench``: score an agent on the benchmark's fixed protocols (`qwixx_env.benchmark`,
docs/benchmark.md)::

    qwixx bench ppo-classic-2p                     # its own table: classic-2p/v1
    qwixx bench heuristic --table longo-instead-3p --workers 2
    qwixx bench runs/my2p --all --json my2p.json   # every table the agent plays
    qwixx bench model.zip --table classic-2p       # an SB3 MaskablePPO model (the train extra)
    qwixx bench heuristic --variant mixx.toml --table mixx-3p   # a sheet of your own: mixx-3p/user

``qwixx play``: play against bots in the terminal, with a coach (see `qwixx_env.play.terminal`
and docs/play.md)::

    qwixx play                                     # 2-player classic against heuristic
    qwixx play --bots ppo-classic-2p --coach       # the coach's values at every decision
    qwixx play --variant longo --lucky instead --players 3 --bots heuristic,afterstate
    qwixx play --players 1 --seed 7 --record game.json

``qwixx serve``: the play page, a local web server (needs the ``play`` extra; docs/play.md)::

    qwixx serve                          # http://127.0.0.1:8000/
    qwixx serve --port 8080 --open       # another port, and open the page in the browser
    qwixx serve --max-games 20           # hold at most 20 games (finished or idle ones dropped first)
    qwixx serve --store games/           # keep every game in games/; resumed after a restart
    qwixx serve --variant mixx.toml      # also offer a sheet of your own on the page
    qwixx serve --host 0.0.0.0           # a table for friends on the home network: prints the
                                         # address with its token (http://192.168.1.5:8000/?token=...)
    qwixx serve --host 0.0.0.0 --allow-host qwixx.lan   # also answer to this name

Every ``--variant`` takes ``classic``, ``longo``, a sheet file of your own (``.json`` or
``.toml``, `qwixx_env.core.variant.Variant.from_file`) or ``module:attribute``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import qwixx_env
from qwixx_env import benchmark, extras
from qwixx_env.arena import run_arena
from qwixx_env.arena.records import INDEX_NAME, records_problem
from qwixx_env.arena.report import print_report, save_png
from qwixx_env.arena.schedule import parse_bot
from qwixx_env.core.variant import VARIANT_NAMES, Variant, resolve_variant
from qwixx_env.files import folder_problem, write_atomically
from qwixx_env.nets import NumpyPolicy, checkpoint_names
from qwixx_env.play import saved, terminal
from qwixx_env.solver import load_table, table_path
from qwixx_env.solver.states import check_sheet, check_solvable


def _plain_progress(doing: str, things: str) -> Callable[[int, int], None]:
    """Progress as a line per tenth of the work on stderr (``solving: 1,000 / 9,000 sheets``),
    where rich's bar is not shown: without rich or a terminal."""
    shown = [-1]

    def report(done: int, total: int) -> None:
        tenth = 10 * done // total if total else 0
        if tenth != shown[0]:
            shown[0] = tenth
            print(f"{doing}: {done:,} / {total:,} {things}", file=sys.stderr, flush=True)

    return report


def _solve(args: argparse.Namespace) -> int:
    try:
        variant = _variant_option(args.variant)
        path = table_path(_solvable_variant(variant), args.cache_dir)
    except ValueError as err:
        print(f"qwixx solve: {err}", file=sys.stderr)
        return 2
    args.variant = variant.name  # registered now: the solver and the messages name it
    sheet, locked = None, ()
    if args.sheet is not None:  # read before solving: a typo should not cost a solve
        try:
            sheet = json.loads(args.sheet)
        except ValueError as err:
            print(f"qwixx solve: --sheet: not JSON ({err})", file=sys.stderr)
            return 2
        if isinstance(sheet, dict):
            locked = sheet.pop("locked_rows", ())
        try:
            check_sheet(sheet, locked, args.variant)
        except ValueError as err:
            print(f"qwixx solve: --sheet: {err}", file=sys.stderr)
            return 2
    cached = path.exists() and not args.rebuild
    start = time.perf_counter()
    try:
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        except ImportError:
            console = None
        else:
            console = Console(stderr=True)
        if console is None or not console.is_terminal:  # lines on stderr; stdout holds the results only
            table = load_table(args.variant, directory=args.cache_dir, rebuild=args.rebuild,
                               progress=_plain_progress("solving", "sheets"))
        else:  # the bar on stderr: rich's live display would leave a blank line on stdout
            columns = (TextColumn("solving"), BarColumn(), MofNCompleteColumn(), TextColumn("sheets"),
                       TimeElapsedColumn())
            with Progress(*columns, console=console, transient=True) as bar:
                task = bar.add_task("solve", total=None)
                table = load_table(
                    args.variant,
                    directory=args.cache_dir,
                    rebuild=args.rebuild,
                    progress=lambda done, total: bar.update(task, completed=done, total=total),
                )
    except ValueError as err:  # a cache folder it cannot write to, found before solving
        print(f"qwixx solve: {err}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    print(f"optimal expected solo score ({args.variant}): {table.root:.4f}")
    if cached and table.solve_seconds is None:
        print(f"loaded from {path} in {seconds:.2f} s (qwixx solve --rebuild solves it again)")
    else:
        size = path.stat().st_size / 2**20
        print(f"solved in {table.solve_seconds:.1f} s; table saved to {path} ({size:.1f} MiB)")
    if sheet is not None:  # a checked sheet: check_sheet refused anything but an object
        try:
            value = table.expected_score(sheet, locked)
        except (ValueError, TypeError) as err:
            print(f"qwixx solve: --sheet: {err}", file=sys.stderr)
            return 2
        print(f"this sheet's optimal expected final score: {value:.4f}")
    return 0


def _arena(args: argparse.Namespace) -> int:
    def fail(message: str) -> int:
        print(f"qwixx arena: {message}", file=sys.stderr)
        return 2

    try:
        variant, players = _table_for(args)
    except ValueError as err:
        return fail(str(err))
    for flag, path in (("--json", args.json), ("--png", args.png)):
        problem = _output_problem(path)
        if problem:
            return fail(f"{flag}: {path!r} {problem}; expected a file path in an existing folder")
    absent = extras.missing("arena", ["matplotlib"]) if args.png else []
    if absent:  # before the games, not after them
        print(extras.needs("qwixx arena --png", "arena", absent), file=sys.stderr)
        return 2
    problem = None if args.records is None else records_problem(args.records)
    if problem:
        return fail(f"--records: {args.records!r} {problem}; expected a new or empty folder")
    report, stop = _arena_progress(args.quiet)
    try:
        result = run_arena(args.bots, num_players=players, variant=variant, lucky=args.lucky, games=args.games,
                           seed=args.seed, workers=args.workers, records=args.records, progress=report)
    except ValueError as err:
        return fail(str(err))
    finally:
        stop()
    print_report(result)
    if args.json:  # atomically: an interrupted write leaves the old file or none, never a part
        write_atomically(Path(args.json), json.dumps(result.to_dict()).encode())
    if args.png:
        save_png(result, args.png)
    if args.records:
        print(f"{len(result.games.rolls):,} game records in {args.records} (listed in its {INDEX_NAME})")
    return 0


def _arena_progress(quiet: bool) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """The arena's progress on stderr, so that stdout holds the results only, and what ends it:
    rich's bar on a terminal where rich is installed, else a line per tenth of the games;
    nothing when `quiet`."""
    if quiet:
        return (lambda done, total: None), (lambda: None)
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    except ImportError:
        return _plain_progress("playing", "games"), (lambda: None)
    console = Console(stderr=True)
    if not console.is_terminal:
        return _plain_progress("playing", "games"), (lambda: None)
    columns = (TextColumn("playing"), BarColumn(), MofNCompleteColumn(), TextColumn("games"), TimeRemainingColumn())
    bar = Progress(*columns, console=console, transient=True)
    task = bar.add_task("arena", total=None)

    def report(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)
        if not bar.live.is_started:  # on the first report, after the workers are forked (its refresh is a thread)
            bar.start()

    return report, bar.stop


def _bench(args: argparse.Namespace) -> int:
    def fail(message: str) -> int:
        print(f"qwixx bench: {message}", file=sys.stderr)
        return 2

    if args.all and args.table:
        return fail("give --table or --all, not both")
    problem = _output_problem(args.json)
    if problem:
        return fail(f"--json: {args.json!r} {problem}; expected a file path in an existing folder")
    if args.workers is not None and args.workers < 1:
        return fail(f"--workers: got {args.workers}; expected an integer >= 1")
    progress = benchmark.progress_display(args.quiet)
    started = time.perf_counter()
    try:
        sheet = None if args.variant is None else _variant_option(args.variant).name  # registered: its protocols
        tables = None if args.all else [args.table or _bench_table(args.agent, sheet)]
        record = benchmark.run_all(args.agent, workers=args.workers, tables=tables, limit=args.limit,
                                   progress=lambda p, lineup, d, t: progress(f"{p} {lineup}", d, t))
        results = record["results"]
    except ValueError as err:
        return fail(str(err))
    finally:
        progress(None, 0, 0)
    print(benchmark.results_text(results))
    for name, why in record["skipped"].items():
        print(f"skipped {name}: {why}")
    print(f"{record['agent']}: {len(results)} table(s) in {time.perf_counter() - started:.1f} s "
          f"with {record['workers']} worker(s)")
    if args.json:
        write_atomically(Path(args.json), (json.dumps(record, indent=1, allow_nan=False) + "\n").encode())
    return 0


def _bench_table(agent: str, sheet: str | None) -> benchmark.Protocol:
    """`qwixx bench`'s table when none is given: the agent's own; with ``--variant``, that
    sheet's protocol at the agent's player count where it plays that sheet, else 2 players."""
    if sheet is None:
        return benchmark.default_protocol(agent)
    try:
        table = benchmark.agent_spec(agent).default_table()
    except (OSError, ValueError):
        table = None
    players = table.num_players if table is not None and table.variant == sheet else 2
    return benchmark.protocol(f"{sheet}-{players}p")


def _play(args: argparse.Namespace) -> int:
    try:
        game = terminal.setup(
            variant=args.variant, lucky=args.lucky, players=args.players,
            bots_=[b.strip() for b in args.bots.split(",")] if args.bots else None,
            seat=args.seat, seed=args.seed, coach=args.coach, coach_bot=args.coach_bot, record=args.record,
        )
        color = terminal.use_color(sys.stdout, args.color)
    except ValueError as err:
        print(f"qwixx play: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # while the bots load: no game yet, nothing to save
        return terminal.EXIT_INTERRUPTED
    return terminal.play(game, sys.stdin, sys.stdout, color=color)


def _serve(args: argparse.Namespace) -> int:
    def fail(message: str) -> int:
        print(f"qwixx serve: {message}", file=sys.stderr)
        return 2

    if not 1 <= args.port <= 65535:
        return fail(f"--port: got {args.port}; expected 1 to 65535")
    if args.max_games < 1:
        return fail(f"--max-games: got {args.max_games}; expected a positive integer")
    if args.store is not None:
        try:
            saved.check_folder(args.store)
        except ValueError as err:
            return fail(str(err))
    absent = extras.missing("play")  # checked before the server module needs it
    if absent:
        print(extras.needs("qwixx serve", "play", absent), file=sys.stderr)
        return 2
    from qwixx_env.play.server import serve

    try:
        sheets = [_variant_option(given).name for given in args.variant]  # registered before any game resumes
    except ValueError as err:
        return fail(str(err))
    try:
        serve(host=args.host, port=args.port, open_page=args.open, max_games=args.max_games, store=args.store,
              token=args.token, allow_hosts=args.allow_host, variants=list(dict.fromkeys([*VARIANT_NAMES, *sheets])))
    except ValueError as err:  # a bad --token, refused before the server starts
        return fail(f"--{err}")
    except KeyboardInterrupt:  # Ctrl-C, raised again by uvicorn once it has shut down
        kept = "" if args.store is None else f"; its games are kept in {args.store}, resumed at the next start"
        print(f"qwixx serve: stopped{kept}")
        return terminal.EXIT_INTERRUPTED
    return 0


def _output_problem(path: str | None) -> str | None:
    """Why an output file cannot be written there (checked before any game is played), or None."""
    if path is None:
        return None
    if os.path.isdir(path):
        return "is a folder"
    folder = os.path.dirname(os.path.abspath(path))
    problem = folder_problem(folder)
    return None if problem is None else f"is in {folder!r}, which {problem}"


def _table_for(args: argparse.Namespace) -> tuple[str, int]:
    """The arena's (variant, players): as given, else what the pretrained bots among
    `args.bots` play (they must agree), else classic with 2 players."""
    installed = set(checkpoint_names())
    plays = {}
    for text in args.bots:
        entry = parse_bot(text)
        source = entry.path or (entry.name if entry.name in installed else None)
        if source is not None and entry.label not in plays:
            try:
                policy = NumpyPolicy.load(source)
            except OSError as err:  # a checkpoint file that is not there
                raise ValueError(f"bot {entry.label!r}: {err}") from None
            plays[entry.label] = (policy.variant, policy.num_players)
    chosen = []
    variant = None if args.variant is None else _variant_option(args.variant).name
    for option, given, index, default in (("--variant", variant, 0, "classic"), ("--players", args.players, 1, 2)):
        if given is not None:
            chosen.append(given)
            continue
        found = {p[index] for p in plays.values()}
        if len(found) > 1:
            raise ValueError(f"{option}: the checkpoints play different games ({plays}); give {option}")
        chosen.append(found.pop() if found else default)
    return chosen[0], chosen[1]


def _solvable_variant(v: Variant) -> Variant:
    """`v`, or a `ValueError` where the solo solver does not cover it."""
    check_solvable(v)
    return v


def _variant_option(given: str) -> Variant:
    """The variant of a ``--variant`` option (a name, a sheet file or module:attribute),
    registered for this process; a `ValueError` names the option."""
    try:
        return resolve_variant(given)
    except ValueError as err:
        text = str(err)
        raise ValueError(f"--{text}" if text.startswith("variant:") else f"--variant: {text}") from None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `qwixx` console script; returns the exit status."""
    parser = argparse.ArgumentParser(prog="qwixx", description="Qwixx and Qwixx Longo tools.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {qwixx_env.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    solve = commands.add_parser(
        "solve",
        help="solve solo Qwixx exactly and print the optimal expected score",
        description="Solve solo Qwixx exactly (or load the cached value table) and print the "
        "optimal expected score and the time taken.",
    )
    solve.add_argument("--variant", default="classic", metavar="VARIANT",
                       help="classic, or a sheet of its shape (a sheet file, .json or .toml, or module:attribute)")
    solve.add_argument("--rebuild", action="store_true", help="solve again even if the table is cached")
    solve.add_argument(
        "--cache-dir", default=None,
        help="cache directory (default: $QWIXX_ENV_CACHE, else $XDG_CACHE_HOME/qwixx_env or ~/.cache/qwixx_env)",
    )
    solve.add_argument(
        "--sheet",
        default=None,
        help='a solo sheet as JSON, e.g. \'{"marks": {"red": [2, 3]}, "locks": [], "penalties": 1}\' '
        '(optionally "locked_rows"); prints its optimal expected final score',
    )
    arena = commands.add_parser(
        "arena",
        help="play a tournament between bots and report win rates, scores and ratings",
        description="Play a tournament between bots: every bot in every seat equally often, the "
        "same dice for every lineup of a deal. Prints a table; --json and --png save the result.",
    )
    arena.add_argument(
        "bots", nargs="+",
        help="bot specs: names with optional parameters (random greedy:max_skip=2), installed checkpoints, or a "
        "checkpoint's path or run folder (runs/my2p/final, runs/my2p)",
    )
    arena.add_argument(
        "--players", type=int, default=None,
        help="seats at the table, 1 to 5 (default: what the checkpoints named play, else 2)",
    )
    arena.add_argument(
        "--variant", default=None, metavar="VARIANT",
        help="classic, longo, a sheet file (.json or .toml) or module:attribute "
        "(default: what the checkpoints named play, else classic)",
    )
    arena.add_argument("--lucky", default=None, choices=("bonus", "instead"), help="Longo's lucky rule (default bonus)")
    arena.add_argument("--games", type=int, default=100, help="deals; each is played by every lineup (default 100)")
    arena.add_argument("--seed", type=int, default=0, help="deal i uses dice seed SEED + i (default 0)")
    arena.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    arena.add_argument("--json", default=None, metavar="PATH", help="write the full result as JSON")
    arena.add_argument("--png", default=None, metavar="PATH", help="plot score distributions and the rating ladder")
    arena.add_argument("--quiet", action="store_true",
                       help="no progress on stderr (a bar on a terminal with rich, else a line per tenth of the games)")
    arena.add_argument(
        "--records", default=None, metavar="DIR",
        help="keep every game's record in DIR (new or empty), named by game, seed and bots, with an index.json",
    )
    bench = commands.add_parser(
        "bench",
        help="score an agent on the benchmark: fixed lineups, reserved dice, named protocols",
        description=f"Score an agent on the benchmark ({extras.DOCS}benchmark/): the agent in every seat in turn "
        "beside heuristic, then beside rollout; fixed reserved dice; figures with 95% intervals.",
    )
    bench.add_argument("agent", help="a bot spec, an installed checkpoint, a checkpoint file, a run folder, "
                       "or an SB3 MaskablePPO .zip")
    bench.add_argument("--table", default=None, metavar="PROTOCOL",
                       help="e.g. classic-2p, longo-instead-4p/v1 (default: the agent's own table; "
                       "classic-2p for a scripted bot)")
    bench.add_argument("--all", action="store_true", help="every table the agent plays")
    bench.add_argument("--variant", default=None, metavar="SHEET",
                       help="a sheet of your own (a .json or .toml file, or module:attribute): its protocols "
                       "NAME-Np/user join the tables (default table: NAME-2p, or the agent's player count)")
    bench.add_argument("--workers", type=int, default=None, help="processes (default: all cores); "
                       "the figures do not depend on it")
    bench.add_argument("--json", default=None, metavar="PATH", help="write the results as JSON")
    bench.add_argument("--limit", type=int, default=None, metavar="DEALS",
                       help="only the first DEALS deals of each lineup: a quick look, not a figure to quote")
    bench.add_argument("--quiet", action="store_true", help="no progress display")
    play = commands.add_parser(
        "play",
        help="play Qwixx against bots in the terminal, with a coach",
        description="Play Qwixx or Qwixx Longo against bots in the terminal: type an option's label "
        "(r7, g12, p) or number, ? for the coach's values. The game record is saved at the end, "
        f"and when the input ends or on Ctrl-C. See {extras.DOCS}play/.",
    )
    play.add_argument("--variant", default=None, metavar="VARIANT",
                      help="classic, longo, a sheet file (.json or .toml) or module:attribute "
                      "(default: what the pretrained bots named play, else classic)")
    play.add_argument("--lucky", default=None, choices=("bonus", "instead"),
                      help="Longo's lucky rule (default bonus)")
    play.add_argument("--players", type=int, default=None,
                      help="seats at the table, 1 to 5 (default: one more than the bots named, or a "
                      "pretrained bot's player count)")
    play.add_argument("--bots", default=None, metavar="NAME[,NAME...]",
                      help="the other seats' bots in seat order, or one for all (default heuristic); "
                      "names from `qwixx arena`'s list, pretrained bots for their own game")
    play.add_argument("--seat", type=int, default=0, help="your seat (default 0: you start)")
    play.add_argument("--seed", type=int, default=None, help="the dice (default: a fresh seed, printed)")
    play.add_argument("--coach", action="store_true",
                      help="show the coach's values at every decision and review your game at the end")
    play.add_argument("--coach-bot", default=None, metavar="NAME", help="the coach also says what this bot would play")
    play.add_argument("--record", default=None, metavar="PATH",
                      help="save the game record here (default: a new file in $XDG_DATA_HOME/qwixx_env/games "
                      "or ~/.local/share/qwixx_env/games)")
    play.add_argument("--color", default="auto", choices=("auto", "always", "never"),
                      help="colour the sheets (auto: on a terminal, unless NO_COLOR is set)")
    serve = commands.add_parser(
        "serve",
        help="play against the bots in the browser: start the local play page",
        description=f"Start the play page's local server and print its address ({extras.DOCS}play/).",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--open", action="store_true", help="open the page in the default browser")
    serve.add_argument(
        "--max-games", type=int, default=100,
        help="games held at once; when full a finished or idle game is dropped, never one in play (default 100)",
    )
    serve.add_argument("--token", default=None, metavar="TOKEN",
                       help="the secret every request needs (default: a random one when bound beyond loopback, "
                       "none on loopback); printed in the page's address")
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                       help="another name the server is reached at (checked against the Host header); repeatable")
    serve.add_argument("--variant", action="append", default=[], metavar="SHEET",
                       help="also offer this variant on the page: a sheet file (.json or .toml) or "
                       "module:attribute; repeatable")
    serve.add_argument("--store", metavar="DIR", default=None,
                       help="keep every game in DIR (written after each decision) and resume the games kept "
                       "there at start; without it nothing is written")
    args = parser.parse_args(argv)
    return {"arena": _arena, "bench": _bench, "play": _play, "serve": _serve, "solve": _solve}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
