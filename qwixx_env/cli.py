"""The `qwixx` command line.

``qwixx solve``: solve solo Qwixx exactly (or load the cached table) and print the optimal
expected score with the time taken::

    qwixx solve                        # cached table if there is one, else solve and cache it
    qwixx solve --rebuild              # solve from nothing again (about 15 s on two cores)
    qwixx solve --cache-dir DIR        # another cache directory (default: see qwixx_env.solver)
    qwixx solve --sheet '{"marks": {"red": [2, 3, 5]}, "penalties": 1}'
                                       # also: what is this solo sheet worth?

A progress bar shows while solving when `rich` is installed (the ``demo`` extra); without it
the progress is printed as plain lines.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Callable

from qwixx_env.core.variant import VARIANT_NAMES


def _plain_progress() -> Callable[[int, int], None]:
    """Progress as a line per tenth of the sheets, for terminals without rich."""
    shown = [-1]

    def report(done: int, total: int) -> None:
        tenth = 10 * done // total
        if tenth != shown[0]:
            shown[0] = tenth
            print(f"solving: {done:,} / {total:,} sheets", file=sys.stderr, flush=True)

    return report


def _solve(args: argparse.Namespace) -> int:
    from qwixx_env.solver import load_table, table_path

    try:
        path = table_path(_variant(args.variant), args.cache_dir)
    except ValueError as err:
        print(f"qwixx solve: {err}", file=sys.stderr)
        return 2
    cached = path.exists() and not args.rebuild
    start = time.perf_counter()
    try:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        table = load_table(args.variant, directory=args.cache_dir, rebuild=args.rebuild, progress=_plain_progress())
    else:
        columns = (TextColumn("solving"), BarColumn(), MofNCompleteColumn(), TextColumn("sheets"), TimeElapsedColumn())
        with Progress(*columns, transient=True) as bar:
            task = bar.add_task("solve", total=None)
            table = load_table(
                args.variant,
                directory=args.cache_dir,
                rebuild=args.rebuild,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    seconds = time.perf_counter() - start
    print(f"optimal expected solo score ({args.variant}): {table.root:.4f}")
    if cached and table.solve_seconds is None:
        print(f"loaded from {path} in {seconds:.2f} s (qwixx solve --rebuild solves it again)")
    else:
        size = path.stat().st_size / 2**20
        print(f"solved in {table.solve_seconds:.1f} s; table saved to {path} ({size:.1f} MiB)")
    if args.sheet is not None:
        try:
            sheet = json.loads(args.sheet)
            value = table.expected_score(sheet, sheet.get("locked_rows", ()))
        except (ValueError, AttributeError, TypeError) as err:
            print(f"qwixx solve: --sheet: {err}", file=sys.stderr)
            return 2
        print(f"this sheet's optimal expected final score: {value:.4f}")
    return 0


def _variant(name: str):
    from qwixx_env.core.variant import get_variant
    from qwixx_env.solver.states import check_variant

    v = get_variant(name)
    check_variant(v)
    return v


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `qwixx` console script; returns the exit status."""
    parser = argparse.ArgumentParser(prog="qwixx", description="Qwixx and Qwixx Longo tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    solve = commands.add_parser(
        "solve",
        help="solve solo Qwixx exactly and print the optimal expected score",
        description="Solve solo Qwixx exactly (or load the cached value table) and print the "
        "optimal expected score and the time taken.",
    )
    solve.add_argument("--variant", default="classic", choices=VARIANT_NAMES, help="only classic is solvable")
    solve.add_argument("--rebuild", action="store_true", help="solve again even if the table is cached")
    solve.add_argument("--cache-dir", default=None, help="cache directory (default: $QWIXX_ENV_CACHE or ~/.cache/qwixx_env)")
    solve.add_argument(
        "--sheet",
        default=None,
        help='a solo sheet as JSON, e.g. \'{"marks": {"red": [2, 3]}, "locks": [], "penalties": 1}\' '
        '(optionally "locked_rows"); prints its optimal expected final score',
    )
    args = parser.parse_args(argv)
    return _solve(args)


if __name__ == "__main__":
    sys.exit(main())
