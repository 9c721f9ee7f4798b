"""Publish a finished training run as a pretrained bot:
``python -m qwixx_env.training.publish RUN_DIR --name NAME [--workers W] [--limit DEALS] [--arena]``.

1. ``RUN_DIR/final.{npz,json}`` is checked (loaded as a `NumpyPolicy`), and so are the
   options, the output folders and the name (replacing another policy needs ``--force``):
   nothing is written before all of that holds.
2. The run's policy plays its table's benchmark protocol (`qwixx_env.benchmark`: beside
   `heuristic`, then beside `rollout`; solo alone, and `heuristic` alone on the same deals
   for reference), the same games as ``qwixx bench``; its figures are held against the
   strength a published bot must reach (`model_card.strength`). ``--limit`` plays only the
   first deals of each lineup (a trial: the card says it is partial). ``--arena`` adds the
   wider arena evaluation (`qwixx_env.training.benchmark`: every scripted bot, ``--games``
   deals from ``--seed``, ``--search-games`` against `rollout`), far slower.
3. Only then is the policy copied to ``checkpoints/NAME.{npz,json}`` atomically (each file
   written to a temporary file in the target folder, synced and renamed over the target; the
   npz first, the JSON last) and loaded back by name (`qwixx_env.bots.load`);
   ``RUN_DIR/curves.png``, if there, is copied to ``docs/images/NAME-curves.png``; the
   record is saved as JSON to ``benchmarks/results/pretrained/NAME.json``, a complete
   benchmark also as the leaderboard's ``benchmarks/results/leaderboard/NAME.json``, and the
   model card ``checkpoints/NAME.md`` is generated from the record: the game, how to load the
   bot, the training command, config, steps, wall time and machine, the warm start, the
   benchmark figures against the targets, the learning curves and its limitations.

Those folders are the repository's in a checkout; from an installed wheel they are
``published/checkpoints/`` and so on under the current folder (`target_folders`), and the bot
loads by its path (``bots.load("published/checkpoints/NAME")``).
``--checkpoints``, ``--results``, ``--leaderboard`` and ``--images`` change them (tests and
trial runs publish into temporary ones).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qwixx_env import benchmark as bench
from qwixx_env.core.checks import check_int
from qwixx_env.core.options import TableOptions
from qwixx_env.core.rewards import check_reward
from qwixx_env.files import write_atomically
from qwixx_env.training.benchmark import (
    CLASSIC_ONLY,
    SEARCH_DEALS_2P,
    SEARCH_DEALS_TABLE,
    TABLE,
    default_deals,
    evaluate_policy,
    solver_covers,
)
from qwixx_env.training.install import check_folders, check_name, check_replace, install, read_run
from qwixx_env.training.model_card import model_card, strength

REPO = Path(__file__).resolve().parent.parent  # the checkout: training/ sits at its top
# Where a published bot's files go, in a checkout (the repository's folders) and from an
# installed wheel (folders under ./published/, never the installed package's own).
CHECKOUT_FOLDERS = {
    "checkpoints": Path("checkpoints"), "results": Path("benchmarks/results/pretrained"),
    "leaderboard": Path("benchmarks/results/leaderboard"), "images": Path("docs/images"),
}
WHEEL_FOLDERS = {name: Path("published") / name for name in CHECKOUT_FOLDERS}


def target_folders(**given: str | os.PathLike[str] | None) -> dict[str, Path]:
    """The folders a publish writes (`CHECKOUT_FOLDERS` keys): each given one as given, the rest
    the repository's in a checkout and ``published/<kind>/`` under the current folder from an
    installed wheel."""
    checkout = (REPO / "pyproject.toml").is_file() and (REPO / "checkpoints").is_dir()
    folders = {name: REPO / CHECKOUT_FOLDERS[name] if checkout else WHEEL_FOLDERS[name] for name in CHECKOUT_FOLDERS}
    for name, folder in given.items():
        if folder is not None:
            folders[name] = Path(folder)
    return folders
FORMAT = "training.publish/2"
PUBLISH_SEED = 5_000_000
"""Default first dice seed of the ``--arena`` evaluation's deals: far from a run's evaluation
deals (``seed + 10_000 ...``) and the demo's (``seed + 20_000 ...``)."""


def publish(
    run_dir: str | os.PathLike[str],
    name: str,
    *,
    limit: int | None = None,
    arena: bool = False,
    games: int | None = None,
    search_games: int | None = None,
    workers: int = 2,
    seed: int = PUBLISH_SEED,
    checkpoints: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
    leaderboard: str | os.PathLike[str] | None = None,
    images: str | os.PathLike[str] | None = None,
    force: bool = False,
    notes: list[str] | None = None,
    command: str | None = None,
    console: Any = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Publish `run_dir` as `name` (see the module docstring); returns the saved record.
    `notes`: lines for the card's limitations (what was tried where a target is missed)."""
    run_dir = Path(run_dir)
    folders = target_folders(checkpoints=checkpoints, results=results, leaderboard=leaderboard, images=images)
    checkpoints, results, leaderboard, images = (folders[k] for k in CHECKOUT_FOLDERS)
    say: Callable[[str], None] = (
        (lambda line: console.print(line, soft_wrap=True, markup=False, highlight=False))
        if console is not None
        else (lambda line: None)
    )
    check_name(name)
    for option, value, low in (
        ("--limit", limit, 1),
        ("--games", games, 1),
        ("--search-games", search_games, 0),
        ("--workers", workers, 1),
        ("--seed", seed, 0),
    ):
        if value is not None:
            check_int(option, value, minimum=low, accepted=f"an integer >= {low}")
    policy, spec = read_run(run_dir)  # checked before anything is written
    meta = spec["meta"]
    config = meta.get("config") or {}
    players = spec["num_players"]
    protocol = bench.default_protocol(run_dir / "final.json")
    if arena:
        if games is None:
            table = [b for b in TABLE if b not in CLASSIC_ONLY or solver_covers(spec["variant"])]
            games = default_deals(players, len(table) if players > 2 else 1)
        if search_games is None:
            search_games = SEARCH_DEALS_2P if players == 2 else SEARCH_DEALS_TABLE if players > 2 else 0
        _check_seed(seed, games, search_games, config)
    check_folders(checkpoints=checkpoints, results=results, leaderboard=leaderboard, images=images)
    check_replace(spec, name, checkpoints, force=force)

    # The run's own policy is benchmarked (and evaluated); the checkpoint, its results and its
    # card are written together afterwards, so an interrupted run leaves the published files as
    # they were.
    if console is not None:
        console.rule(f"{name} on {protocol.name}")
    display = bench.progress_display(quiet=not progress)

    def report(lineup: str, done: int, total: int) -> None:
        display(f"{protocol.name} beside {lineup}", done, total)

    try:
        benchmark = _named(bench.run(run_dir / "final.json", protocol, workers=workers, limit=limit,
                                     progress=report), name)
        reference = None
        if players == 1:  # the scripted baseline alone on the same deals
            reference = bench.run("heuristic", protocol, workers=workers, limit=limit, progress=report)
    finally:
        display(None, 0, 0)
    say(bench.results_text([benchmark] + ([reference] if reference else [])))
    evaluation = None
    if arena:
        evaluation = evaluate_policy(
            policy,
            name,
            games=games or 1,
            search_games=search_games or 0,
            seed=seed,
            workers=workers,
            console=console,
            progress=progress,
        )
    paths = install(run_dir, spec, name, checkpoints, images, force=force)  # checks the run is unchanged first
    say(
        f"installed {paths['json']} + {paths['npz'].name}"
        + (f"; curves {paths['curves']}" if paths["curves"] else "")
        + f"; loads {'by name' if paths['by_name'] else 'from its path'}"
    )
    reward = config.get("reward")
    try:
        reward = check_reward(reward, players)
    except ValueError:
        pass
    record = {
        "format": FORMAT,
        "name": name,
        "command": command or f"python -m qwixx_env.training.publish {shlex.quote(str(run_dir))} --name {name}",
        "published": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "source": _shown(run_dir),
        "checkpoint": {
            "json": _shown(paths["json"]),
            "variant": spec["variant"],
            "lucky": spec["lucky"],
            "num_players": players,
            "observation_size": spec["observation_size"],
            "num_actions": spec["num_actions"],
            "networks": spec["networks"],
            "sha256": spec["weights"]["sha256"],
            "bytes": spec["weights"]["bytes"],
        },
        "training": {
            "name": meta.get("name"),
            "config": config,
            "reward": reward,
            "steps": meta.get("steps"),
            "wall_time": meta.get("wall_time"),
            "machine": meta.get("machine"),
            "bc": meta.get("bc"),
            "last_eval": meta.get("last_eval"),
        },
        "results": _shown(results / f"{name}.json"),
        "curves": None if paths["curves"] is None else _shown(paths["curves"]),
        "curves_link": None
        if paths["curves"] is None
        else Path(os.path.relpath(paths["curves"], checkpoints)).as_posix(),
        "benchmark": benchmark,
        "reference": None if reference is None else {"agent": "heuristic", **reference["lineups"]["heuristic"]},
        "strength": strength(benchmark, reference),
        "evaluation": evaluation,
        "notes": list(notes or []),
    }
    results.mkdir(parents=True, exist_ok=True)
    write_atomically(
        results / f"{name}.json", (json.dumps(record, indent=1, allow_nan=False) + "\n").encode()
    )
    if benchmark["complete"]:
        entry = leaderboard_entry(benchmark, paths["json"])
        leaderboard.mkdir(parents=True, exist_ok=True)
        write_atomically(leaderboard / f"{name}.json", (json.dumps(entry, indent=1, allow_nan=False) + "\n").encode())
        say(f"wrote {leaderboard / (name + '.json')}")
    card = model_card(record)
    write_atomically(checkpoints / f"{name}.md", card.encode())
    say(f"wrote {checkpoints / (name + '.md')} and {results / (name + '.json')}")
    return record


def refresh(
    name: str,
    *,
    checkpoints: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
    leaderboard: str | os.PathLike[str] | None = None,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """Add a published bot's benchmark figures to its record and card without playing a game:
    the result is read from the leaderboard's ``NAME.json`` (`benchmarks/leaderboard.py run`
    or a publish wrote it), checked to be the bot's own complete protocol, and held against the
    targets (solo Longo: against `heuristic`'s result in the leaderboard's ``heuristic.json``).
    An older record's arena evaluation stays, shown after the benchmark; `notes`, if given,
    replace the record's."""
    folders = target_folders(checkpoints=checkpoints, results=results, leaderboard=leaderboard)
    checkpoints, results, leaderboard = folders["checkpoints"], folders["results"], folders["leaderboard"]
    paths = {"record": results / f"{name}.json", "leaderboard entry": leaderboard / f"{name}.json"}
    for what, path in paths.items():
        if not path.is_file():
            raise FileNotFoundError(f"--refresh {name}: no {what} {path}")
    record = json.loads(paths["record"].read_text())
    entry = json.loads(paths["leaderboard entry"].read_text())
    c = record["checkpoint"]
    proto = bench.protocol_for(TableOptions(num_players=c["num_players"], variant=c["variant"],
                                            lucky=c["lucky"] or "bonus"))
    found = [r for r in entry.get("results", []) if r.get("protocol") == proto.name and r.get("complete")]
    if not found:
        raise ValueError(f"--refresh {name}: {paths['leaderboard entry']} holds no complete {proto.name} result; "
                         f"run `python benchmarks/leaderboard.py run {name}` first")
    benchmark = _named(found[0], name)
    reference = None
    if proto.players == 1 and proto.table.variant != "classic":
        heuristic = json.loads((leaderboard / "heuristic.json").read_text())
        reference = next(r for r in heuristic["results"] if r["protocol"] == proto.name and r["complete"])
    record.update(
        format=FORMAT,
        benchmark=benchmark,
        reference=None if reference is None else {"agent": "heuristic", **reference["lineups"]["heuristic"]},
        strength=strength(benchmark, reference),
    )
    if notes is not None:
        record["notes"] = list(notes)
    write_atomically(paths["record"], (json.dumps(record, indent=1, allow_nan=False) + "\n").encode())
    write_atomically(checkpoints / f"{name}.md", model_card(record).encode())
    return record


def _named(result: dict[str, Any], name: str) -> dict[str, Any]:
    """A benchmark result of the run's policy, under the name it is published as."""
    return {**result, "agent": name}


def leaderboard_entry(result: dict[str, Any], agent: str | Path) -> dict[str, Any]:
    """The leaderboard's record of a published bot (the form of `benchmark.run_all`'s): its one
    protocol's result, and the tables it does not play with why (`agent`: its checkpoint's
    path; a name installed in this process is not yet a registered bot)."""
    spec = bench.agent_spec(agent)
    skipped = {}
    for proto in bench.PROTOCOLS.values():
        if proto.name != result["protocol"]:
            skipped[proto.name] = bench.plays(spec, proto) or "not benchmarked at publishing"
    return {
        "format": bench.FORMAT,
        "agent": result["agent"],
        "results": [result],
        "skipped": skipped,
        "seconds": result["seconds"],
        "workers": result["workers"],
        "machine": result["machine"],
    }


def _shown(path: Path) -> str:
    """A path as the record shows it: relative to the repository when inside it."""
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


def _check_seed(seed: int, games: int, search_games: int, config: dict[str, Any]) -> None:
    """The evaluation's deals (dice seeds ``seed ... seed + deals - 1``) must not be the ones
    the run evaluated on during training (``config seed + 10_000 ...``)."""
    ev = config.get("evaluation")
    if not ev or "seed" not in config:
        return
    first, count = int(config["seed"]) + 10_000, int(ev.get("games", 0))
    last = seed + max(games, search_games) - 1
    if seed <= first + count - 1 and first <= last:
        raise ValueError(
            f"--seed: {seed} deals dice seeds {seed}..{last}, which overlap the run's training evaluation deals "
            f"{first}..{first + count - 1}; choose another --seed (default {PUBLISH_SEED})"
        )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m qwixx_env.training.publish",
                                     description=(__doc__ or "").partition("\n")[0])  # None under -OO
    parser.add_argument(
        "run_dir", metavar="RUN_DIR", nargs="?", help="a finished training run (holds final.json, final.npz)"
    )
    parser.add_argument("--name", help="the bot's name, e.g. ppo-classic-2p")
    parser.add_argument("--refresh", nargs="+", metavar="NAME",
                        help="instead of publishing: add these published bots' leaderboard results to their "
                        "records and cards (no games played)")
    parser.add_argument("--workers", type=int, default=2, help="arena processes (default 2)")
    parser.add_argument("--limit", type=int, metavar="DEALS",
                        help="only the first DEALS deals of each benchmark lineup: a trial, its card marked partial")
    parser.add_argument("--arena", action="store_true",
                        help="also the wider arena evaluation against every scripted bot (slow)")
    parser.add_argument(
        "--games",
        type=int,
        help="--arena: deals per arena (default: enough for 10,000 games of the bot: "
        "10,000 solo, 5,000 with 2 players)",
    )
    parser.add_argument(
        "--search-games",
        type=int,
        help="--arena: deals against the rollout search bot (default 5,000 with 2 "
        "players, 100 with 3+ (a second table); 0: rollout not played; solo: unused)",
    )
    parser.add_argument(
        "--seed", type=int, default=PUBLISH_SEED, help=f"--arena: first dice seed (default {PUBLISH_SEED})"
    )
    for flag, what in (("checkpoints", "the checkpoint and card"), ("results", "the publishing record"),
                       ("leaderboard", "the leaderboard's JSON"), ("images", "the learning curves")):
        parser.add_argument(f"--{flag}", help=f"folder of {what} (default {CHECKOUT_FOLDERS[flag]}/ in a checkout, "
                            f"{WHEEL_FOLDERS[flag]}/ from a wheel)")
    parser.add_argument(
        "--force", action="store_true", help="replace a published checkpoint of another policy"
    )
    parser.add_argument("--note", action="append", metavar="TEXT",
                        help="a line for the card's limitations, e.g. what was tried where a target is missed "
                        "(repeatable; with --refresh it replaces the record's notes)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.refresh:
        if args.run_dir is not None or args.name is not None:
            parser.error("--refresh takes published bots' names, not RUN_DIR or --name")
        return args
    if args.run_dir is None or args.name is None:
        parser.error("RUN_DIR and --name are required (or --refresh NAME ...)")
    if not args.arena:
        given = [o for o, v in (("--games", args.games), ("--search-games", args.search_games)) if v is not None]
        if given or args.seed != PUBLISH_SEED:
            parser.error(f"{', '.join(given) or '--seed'} set the --arena evaluation; add --arena "
                         "(the benchmark's deals are fixed by its protocol)")
    return args


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    console = Console()
    if args.refresh:
        try:
            for name in args.refresh:
                record = refresh(name, checkpoints=args.checkpoints, results=args.results,
                                 leaderboard=args.leaderboard, notes=args.note)
                console.print(f"refreshed {name}: {record['benchmark']['protocol']} in its record and card")
        except (ValueError, FileNotFoundError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        return 0
    try:
        record = publish(
            args.run_dir,
            args.name,
            limit=args.limit,
            arena=args.arena,
            games=args.games,
            search_games=args.search_games,
            workers=args.workers,
            seed=args.seed,
            checkpoints=args.checkpoints,
            results=args.results,
            leaderboard=args.leaderboard,
            images=args.images,
            force=args.force,
            notes=args.note,
            command=shlex.join(["python", "-m", "qwixx_env.training.publish", *argv]),
            console=console,
            progress=not args.no_progress,
        )
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    b = record["benchmark"]
    games = sum(x["games"] for x in b["lineups"].values())
    console.print(f"published {record['name']}: {games:,} benchmark games in {b['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
