"""Publish a finished training run as a pretrained bot:
``python -m qwixx_env.training.publish RUN_DIR --name NAME [--games N] [--search-games N] [--workers W] [--seed S]``.

1. ``RUN_DIR/final.{npz,json}`` is checked (loaded as a `NumpyPolicy`), and so are the
   options, the output folders and the name (replacing another policy needs ``--force``):
   nothing is written before all of that holds.
2. The run's policy plays in the arena (`qwixx_env.arena.run_arena`, seats rotated, every
   lineup dealt the same dice) on deals that training never evaluated on (``--seed``):

   - solo: alone, beside `heuristic` and `solo_optimal` on the same deals; the mean score
     and its regret against the solver's optimum (classic only);
   - 2 players: head to head against `random`, `greedy`, `heuristic`, `afterstate` (classic
     only), `rollout` (on ``--search-games`` deals) and `solo_optimal` (classic
     only);
   - 3+ players: a mixed table with `random`, `greedy`, `heuristic` and `solo_optimal`
     (classic only), the arena's pool scheme; and, when ``--search-games`` > 0, a second
     table on that many deals where `rollout` sits with the bot and the strongest of the
     others (`heuristic`, then `greedy`, ...) to fill the seats, every bot in every game.

   The tables are printed (`qwixx_env.arena.report.print_report`).
3. Only then is the policy copied to ``checkpoints/NAME.{npz,json}`` atomically (each file
   written to a temporary file in the target folder, synced and renamed over the target; the
   npz first, the JSON last) and loaded back by name (`qwixx_env.bots.load`);
   ``RUN_DIR/curves.png``, if there, is copied to ``docs/images/NAME-curves.png``; the
   evaluation is saved as JSON to ``benchmarks/results/pretrained/NAME.json``, and the model
   card ``checkpoints/NAME.md`` is generated from that JSON: the game, how to load the bot,
   the training config, steps, wall time and machine, the warm start, the evaluation tables
   with the command that produced them, the learning curves and its limitations.

``--checkpoints``, ``--results`` and ``--images`` change the three target folders (tests
and trial runs publish into temporary ones).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qwixx_env.files import folder_problem, write_atomically

REPO = Path(__file__).resolve().parent.parent
FORMAT = "training.publish/1"
PUBLISH_SEED = 5_000_000
"""Default first dice seed of the evaluation deals: far from a run's evaluation deals
(``seed + 10_000 ...``) and the demo's (``seed + 20_000 ...``)."""
TARGET_GAMES = 10_000
"""The default number of deals gives the published bot at least this many games."""
SEARCH_DEALS_2P = 5_000
"""Default deals against `rollout` (2 players): 10,000 games, as against the others (~3 ms a
decision on one thread: about 11 minutes on 2 workers)."""
SEARCH_DEALS_TABLE = 100
"""Default deals of the 3+ player `rollout` table (every bot in every game: 300 games at 3
players, 400 at 4)."""
SCRIPTED = ("random", "greedy", "heuristic")
TABLE = (*SCRIPTED, "solo_optimal")
"""The 3+ player mixed table's scripted bots (`solo_optimal` in classic only)."""
HEAD_TO_HEAD = ("random", "greedy", "heuristic", "afterstate", "rollout", "solo_optimal")
CLASSIC_ONLY = {  # bot -> why it sits out a Longo evaluation
    "solo_optimal": "classic only: the solver does not cover Qwixx Longo",
    "afterstate": "classic only: its win-chance networks are trained on classic",
}


# --- files ------------------------------------------------------------------------------------


def check_name(name: str) -> None:
    """A checkpoint name: letters, digits, '-', '_' (it becomes a bot name and file names),
    and not the name of a built-in bot (registering it would clash)."""
    from qwixx_env import bots
    from qwixx_env.bots import pretrained

    ok = bool(name) and name[0].isalnum() and all(c.isalnum() or c in "-_" for c in name) and name.isascii()
    if not ok:
        raise ValueError(
            f"--name: got {name!r}; expected ASCII letters, digits, '-' and '_', starting with a letter or "
            "digit (e.g. 'ppo-classic-2p')"
        )
    builtin = sorted(set(bots.available()) - set(pretrained.checkpoint_names()))
    if name in builtin:
        raise ValueError(f"--name: {name!r} is a built-in bot; choose another name (built-in: {builtin})")


def read_run(run_dir: Path) -> tuple[Any, dict[str, Any]]:
    """The run's final policy (checked as loading checks it) and its JSON description."""
    from qwixx_env.bots.pretrained import NumpyPolicy

    if not run_dir.is_dir():
        raise FileNotFoundError(f"RUN_DIR {run_dir}: not a folder (expected a training run, runs/<name>)")
    for file in ("final.json", "final.npz"):
        if not (run_dir / file).is_file():
            raise FileNotFoundError(
                f"{run_dir / file}: not found; RUN_DIR must be a finished training run "
                "(training/train.py writes final.json and final.npz when it ends)"
            )
    policy = NumpyPolicy.load(run_dir / "final.json")
    return policy, json.loads((run_dir / "final.json").read_text())


def check_replace(spec: dict[str, Any], name: str, checkpoints: Path, *, force: bool) -> None:
    """Refuse to replace another policy already published as `name` unless `force`."""
    json_path = checkpoints / f"{name}.json"
    if json_path.exists() and not force:
        try:
            old = json.loads(json_path.read_text())["weights"]["sha256"]
        except (OSError, ValueError, KeyError, TypeError):
            old = None
        if old != spec["weights"]["sha256"]:
            raise ValueError(
                f"--name: {json_path} already holds another policy; pass --force to replace it, or another --name"
            )


def check_folders(**folders: Path) -> None:
    """Each output folder exists as a writable folder or can be made (`files.folder_problem`)."""
    for option, folder in folders.items():
        problem = folder_problem(folder, create=True)
        if problem:
            raise ValueError(f"--{option}: {folder} {problem}; expected a folder to write into")


def install(
    run_dir: Path, spec: dict[str, Any], name: str, checkpoints: Path, images: Path, *, force: bool
) -> dict[str, Any]:
    """Copy the run's final policy (`spec`: its JSON, checked by `read_run`) to
    ``checkpoints/NAME.*`` (npz first, JSON last) and its curves to ``images/NAME-curves.png``;
    load it back. Returns the paths and the loaded policy."""
    from qwixx_env import bots
    from qwixx_env.bots import pretrained

    check_replace(spec, name, checkpoints, force=force)
    checkpoints.mkdir(parents=True, exist_ok=True)
    json_path, npz_path = checkpoints / f"{name}.json", checkpoints / f"{name}.npz"
    npz_data, json_data = (run_dir / "final.npz").read_bytes(), (run_dir / "final.json").read_bytes()
    try:
        same_json = json.loads(json_data) == spec
    except ValueError:
        same_json = False
    if hashlib.sha256(npz_data).hexdigest() != spec["weights"]["sha256"] or not same_json:
        raise ValueError(f"{run_dir}: final.npz or final.json changed since it was read; publish again")
    write_atomically(npz_path, npz_data)
    write_atomically(json_path, json_data)
    installed = checkpoints.resolve() == pretrained.checkpoints_dir().resolve()
    # By name where it is the installed folder (as users will load it), else by path.
    bot = bots.load(name if installed else json_path)
    curves = None
    if (run_dir / "curves.png").is_file():
        images.mkdir(parents=True, exist_ok=True)
        curves = images / f"{name}-curves.png"
        write_atomically(curves, (run_dir / "curves.png").read_bytes())
    return {"json": json_path, "npz": npz_path, "curves": curves, "policy": bot.policy, "by_name": installed}


# --- evaluation -------------------------------------------------------------------------------


def default_deals(num_players: int, opponents: int) -> int:
    """Deals giving the published bot at least `TARGET_GAMES` games: solo it plays each deal
    once; head to head twice (two seats); at a table of `opponents` + 1 bots, once per lineup
    that seats it (`qwixx_env.arena.schedule.lineups`)."""
    from qwixx_env.arena.schedule import lineups

    seats = sum(lineup.count(0) for lineup in lineups(opponents + 1, num_players)) if num_players > 1 else 1
    return math.ceil(TARGET_GAMES / seats)


def _summary(result: Any) -> dict[str, Any]:
    data = result.to_dict()
    data.pop("games")  # the per-game rows: large, and in no table
    return data


def evaluate_policy(
    policy: Any,
    name: str,
    *,
    games: int,
    search_games: int,
    seed: int,
    workers: int,
    console: Any = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Play the policy in the arena as the module docstring says; JSON-ready results."""
    from qwixx_env.arena import run_arena
    from qwixx_env.arena.report import print_report
    from qwixx_env.training.evaluate import policy_factory

    learner = policy_factory(policy, name)
    players, variant, lucky = policy.num_players, policy.variant, policy.lucky or "bonus"
    options = dict(num_players=players, variant=variant, lucky=lucky, seed=seed, workers=workers)
    out: dict[str, Any] = {
        "seed": seed,
        "workers": workers,
        "games": games,
        "search_games": search_games,
        "skipped": {},
    }
    started = time.perf_counter()

    def play(bots: list[Any], deals: int, title: str) -> Any:
        if console is not None:
            console.rule(title)
        with _progress(console if progress else None, title) as report:
            result = run_arena(bots, games=deals, progress=report, **options)
        if console is not None:
            print_report(result, console)
        return result

    def skip(bot: str) -> bool:
        if bot in CLASSIC_ONLY and variant != "classic":
            out["skipped"][bot] = CLASSIC_ONLY[bot]
            return True
        if bot == "rollout" and search_games == 0:
            out["skipped"][bot] = "`--search-games 0`"
            return True
        return False

    if players == 1:
        out["kind"] = "solo"
        others = [b for b in ("heuristic", "solo_optimal") if not skip(b)]
        result = play([learner, *others], games, f"{name} alone, beside {', '.join(others)}")
        out["bots"] = [_score_row(row) for row in result.bots]
        out["optimum"] = None
        if variant == "classic":
            from qwixx_env import solver

            me = out["bots"][0]
            out["optimum"] = solver.load_table(variant).root
            out["regret"] = out["optimum"] - me["score_mean"]
            out["regret_se"] = me["score_se"]
            if "solo_optimal" in others:  # the same deals: the paired difference is sharper
                gap = result.bot_scores(1 + others.index("solo_optimal")) - result.bot_scores(0)
                out["paired_gap"] = {
                    "mean": float(gap.mean()),
                    "se": float(gap.std(ddof=1) / math.sqrt(len(gap))) if len(gap) > 1 else None,
                    "games": len(gap),
                }
        out["arenas"] = [_summary(result)]
    elif players == 2:
        out["kind"] = "head_to_head"
        out["opponents"], out["arenas"] = [], []
        for bot in HEAD_TO_HEAD:
            if skip(bot):
                continue
            deals = search_games if bot == "rollout" else games
            result = play([learner, bot], deals, f"{name} vs {bot}")
            me, them = result.bots
            out["opponents"].append(
                {
                    "opponent": bot,
                    "deals": deals,
                    "games": me["games"],
                    "win_rate": me["win_rate"],
                    "win_interval": me["win_interval"],
                    "score_mean": me["score_mean"],
                    "score_se": me["score_se"],
                    "opponent_win_rate": them["win_rate"],
                    "opponent_score_mean": them["score_mean"],
                    "opponent_score_se": them["score_se"],
                    "seconds": result.timing["seconds"],
                    "games_per_second": result.timing["games_per_second"],
                }
            )
            out["arenas"].append(_summary(result))
    else:
        out["kind"] = "table"
        table = [b for b in TABLE if not skip(b)]
        out["deals"] = games
        result = play([learner, *table], games, f"{name} at a {players}-player table with {', '.join(table)}")
        out["bots"] = _table_rows(result)
        out["equal_share"] = 1 / players
        out["arenas"] = [_summary(result)]
        beats = _beats_all(out["bots"])
        if not skip("rollout"):
            fill = [b for b in ("heuristic", "greedy", "random") if b in table][: players - 2]
            search = ["rollout", *fill]
            result = play([learner, *search], search_games,
                          f"{name} at a {players}-player table with {', '.join(search)}")
            out["search_table"] = {"deals": search_games, "bots": _table_rows(result)}
            out["arenas"].append(_summary(result))
            beats = beats and _beats_all(out["search_table"]["bots"])
        out["beats_every_scripted"] = beats
    out["seconds"] = time.perf_counter() - started
    out["table_games"] = sum(a["table_games"] for a in out["arenas"])
    return out


def _table_rows(result: Any) -> list[dict[str, Any]]:
    return [
        {
            **_score_row(row),
            "win_rate": row["win_rate"],
            "win_interval": row["win_interval"],
            "rating": None if row["rating"] is None else {k: row["rating"][k] for k in ("mu", "sigma")},
        }
        for row in result.bots
    ]


def _beats_all(rows: list[dict[str, Any]]) -> bool:
    """Does the first bot of a table win more often than every other?"""
    return all(rows[0]["win_rate"] > b["win_rate"] for b in rows[1:])


def _score_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "label": row["label"],
        "games": row["games"],
        "score_mean": row["score_mean"],
        "score_se": row["score_se"],
    }


@contextlib.contextmanager
def _progress(console: Any, title: str):
    """A progress callback for `run_arena` drawing a rich bar (None: no bar). The bar (and its
    refresh thread) starts on the first report, after the arena has forked its workers."""
    if console is None:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    state: dict[str, Any] = {}

    def report(done: int, total: int) -> None:
        if "bar" not in state:
            bar = Progress(
                TextColumn(title),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(title, total=total)
        state["bar"].update(state["task"], completed=done, total=total)

    try:
        yield report
    finally:
        if "bar" in state:
            state["bar"].stop()


# --- the model card -----------------------------------------------------------------------------


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def interval(iv: list[float]) -> str:
    return f"[{pct(iv[0])}, {pct(iv[1])}]"


def score(mean: float, se: float | None) -> str:
    return f"{mean:.2f}" + ("" if se is None else f" ± {se:.2f}")


def duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    minutes, s = divmod(round(seconds), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours} h {m} min" if hours else f"{m} min {s} s" if m else f"{s} s"


def table(header: list[str], rows: list[list[str]], right: int = 1) -> str:
    """A markdown table, columns from `right` on right-aligned."""
    align = ["---" if i < right else "---:" for i in range(len(header))]
    lines = [header, align, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def _tables(ev: dict[str, Any]) -> list[tuple[list[dict[str, Any]], int]]:
    """(rows, deals) of each table of a 3+ player evaluation: the mixed one, then `rollout`'s."""
    search = ev.get("search_table")
    return [(ev["bots"], ev["deals"])] + ([(search["bots"], search["deals"])] if search else [])


def _table_line(b: dict[str, Any]) -> list[str]:
    return [
        f"`{b['label']}`",
        f"{b['games']:,}",
        pct(b["win_rate"]),
        interval(b["win_interval"]),
        score(b["score_mean"], b["score_se"]),
        "—" if b["rating"] is None else f"{b['rating']['mu']:.1f} ± {b['rating']['sigma']:.1f}",
    ]


def verdict(row: dict[str, Any]) -> str:
    """'beats', 'loses to' or 'level with' an opponent, by the 95% interval of the win rate."""
    lo, hi = row["win_interval"]
    return "beats" if lo > 0.5 else "loses to" if hi < 0.5 else "level with"


def evaluation_section(record: dict[str, Any]) -> list[str]:
    name, ev = record["name"], record["evaluation"]
    lines = [
        f"Produced by `{record['command']}` (dice seeds from {ev['seed']:,} on, other deals than the run's evaluations; "
        f"{plural(ev['table_games'], 'game')} in {duration(ev['seconds'])} on {plural(ev['workers'], 'worker')}).",
        "",
    ]
    if ev["kind"] == "solo":
        rows = []
        for b in ev["bots"]:
            regret = "—" if ev["optimum"] is None else f"{ev['optimum'] - b['score_mean']:.2f}"
            rows.append([f"`{b['label']}`", f"{b['games']:,}", score(b["score_mean"], b["score_se"]), regret])
        if ev["optimum"] is not None:
            rows.append(["optimum (exact solver)", "—", f"{ev['optimum']:.2f}", "0.00"])
        lines += [
            f"Solo, every bot on the same {plural(ev['games'], 'deal')}:",
            "",
            table(["bot", "games", "mean score ± s.e.", "regret (optimum − mean)"], rows),
            "",
        ]
        if ev["optimum"] is not None:
            lines.append(
                f"Regret of `{name}`: **{ev['regret']:.2f}"
                + ("" if ev["regret_se"] is None else f" ± {ev['regret_se']:.2f}")
                + "** points "
                f"({pct(ev['regret'] / ev['optimum'])} of the optimum {ev['optimum']:.2f})."
            )
        if ev.get("paired_gap"):
            g = ev["paired_gap"]
            lines.append(
                f"On the same deals `solo_optimal` scores {g['mean']:.2f}"
                + (f" ± {g['se']:.2f}" if g["se"] is not None else "")
                + " points more (paired)."
            )
    elif ev["kind"] == "head_to_head":
        rows = [
            [
                f"`{o['opponent']}`",
                f"{o['deals']:,}",
                f"{o['games']:,}",
                pct(o["win_rate"]),
                interval(o["win_interval"]),
                score(o["score_mean"], o["score_se"]),
                score(o["opponent_score_mean"], o["opponent_score_se"]),
                verdict(o),
            ]
            for o in ev["opponents"]
        ]
        lines += [
            "Head to head, 2 players: each deal played twice, seats swapped; a shared win counts half.",
            "",
            table(
                [
                    "opponent",
                    "deals",
                    "games",
                    f"`{name}` win rate",
                    "95% interval",
                    f"`{name}` score ± s.e.",
                    "opponent score ± s.e.",
                    "verdict",
                ],
                rows,
            ),
            "",
        ]
        if any(o["opponent"] == "rollout" for o in ev["opponents"]):
            deals = (f"the same {plural(ev['games'], 'deal')} (`--search-games`, `--games`)"
                     if ev["search_games"] == ev["games"] else
                     f"{plural(ev['search_games'], 'deal')} (`--search-games`), the others on "
                     f"{plural(ev['games'], 'deal')} (`--games`)")
            lines.append("`rollout` (Monte Carlo search, ~3 ms a decision on one thread in 2-player classic) "
                         f"is played on {deals}.")
    else:
        players = record["checkpoint"]["num_players"]
        tables = list(zip(_tables(ev), ("A", "The search bot's")))
        for (bots_, deals), article in tables:
            lines += [
                f"{article} {players}-player table of {len(bots_)} bots, every lineup of the arena's pool scheme "
                f"(every bot in every seat equally often) on each of {plural(deals, 'deal')}; an equal share of "
                f"wins is {pct(ev['equal_share'])}.",
                "",
                table(["bot", "games", "win rate", "95% interval", "score ± s.e.", "rating μ ± σ"],
                      [_table_line(b) for b in bots_]),
                "",
            ]
        others = [(b, bots_[0]) for (bots_, _), _ in tables for b in bots_[1:]]
        best, me = max(others, key=lambda pair: pair[0]["win_rate"] - pair[1]["win_rate"])
        if me["win_interval"][0] > best["win_interval"][1]:
            intervals = "the 95% intervals do not overlap"
        elif me["win_interval"][1] < best["win_interval"][0]:
            intervals = f"the 95% intervals do not overlap: `{best['label']}` wins more often"
        else:
            intervals = "the 95% intervals overlap"
        lines.append(
            f"Does `{name}` win more often than every scripted opponent? **{'Yes' if ev['beats_every_scripted'] else 'No'}**"
            f": {pct(me['win_rate'])} against {pct(best['win_rate'])} for its closest rival, `{best['label']}`, "
            f"at the same table ({intervals})."
        )
    for bot, why in ev["skipped"].items():
        lines.append(f"Not played: `{bot}` ({why}).")
    return lines


def limitations(record: dict[str, Any]) -> list[str]:
    """Honest lines computed from the evaluation."""
    ev, c = record["evaluation"], record["checkpoint"]
    out = [
        f"It reads the {c['variant']} observation for {plural(c['num_players'], 'player')} only, and plays "
        "deterministically (the same position always gets the same move)."
    ]
    if ev["kind"] == "solo":
        me = ev["bots"][0]
        if ev["optimum"] is not None:
            out.append(
                f"It scores {ev['regret']:.2f} points a game below the optimal solo policy on average."
            )
        for b in ev["bots"][1:]:
            diff = me["score_mean"] - b["score_mean"]
            if b["label"] != "solo_optimal" and diff < 0:
                out.append(
                    f"It scores less than `{b['label']}` ({me['score_mean']:.2f} against {b['score_mean']:.2f})."
                )
    elif ev["kind"] == "head_to_head":
        for o in ev["opponents"]:
            v = verdict(o)
            if v == "loses to":
                out.append(
                    f"It loses to `{o['opponent']}`: {pct(o['win_rate'])} of the games, 95% interval "
                    f"{interval(o['win_interval'])}."
                )
            elif v == "level with":
                out.append(
                    f"It is not shown to beat `{o['opponent']}`: {pct(o['win_rate'])}, 95% interval "
                    f"{interval(o['win_interval'])} contains 50%."
                )
        if all(verdict(o) == "beats" for o in ev["opponents"]):
            out.append("It beats every opponent measured; stronger play than theirs is not measured here.")
        rollout = [o for o in ev["opponents"] if o["opponent"] == "rollout"]
        if rollout and rollout[0]["games"] < max(o["games"] for o in ev["opponents"]):
            out.append(
                f"Against `rollout` only {rollout[0]['games']:,} games were played (a wider interval)."
            )
    else:
        for rows, _ in _tables(ev):
            me = rows[0]
            for b in rows[1:]:
                if b["win_rate"] >= me["win_rate"]:
                    out.append(
                        f"It does not win more often than `{b['label']}` at its table ({pct(me['win_rate'])} "
                        f"against {pct(b['win_rate'])})."
                    )
                elif me["win_interval"][0] <= b["win_interval"][1]:
                    out.append(
                        f"Its lead over `{b['label']}` at its table ({pct(me['win_rate'])} against "
                        f"{pct(b['win_rate'])}) is within the noise: the 95% intervals overlap."
                    )
            if me["win_rate"] < ev["equal_share"]:
                out.append(f"It wins less than an equal share ({pct(ev['equal_share'])}) at a table with "
                           + ", ".join(f"`{b['label']}`" for b in rows[1:]) + ".")
        if ev.get("search_table"):
            out.append(f"The `rollout` table has only {ev['search_table']['bots'][0]['games']:,} games "
                       "(a wider interval).")
        out.append(
            "Measured at these mixed tables only; tables of other bots (or of copies of itself) may differ."
        )
    if ev["skipped"]:
        out.append("Not measured against " + ", ".join(f"`{b}`" for b in ev["skipped"]) + ".")
    return out


def _inputs(checkpoint: dict[str, Any], config: dict[str, Any]) -> str:
    """What the networks read, in words (the card's `inputs` row)."""
    seen = f"the observation ({checkpoint['observation_size']} numbers)"
    if "afterstate" not in (config.get("inputs") or []):
        return seen
    from qwixx_env.bots.afterstate import NETWORKS

    network = NETWORKS.get((checkpoint["variant"], checkpoint["num_players"]), "?")
    return (f"{seen} and the `afterstate` rating of each of the {checkpoint['num_actions']} actions "
            f"(network `qwixx_env/bots/data/{network}`)")


def model_card(record: dict[str, Any]) -> str:
    """The markdown model card, every number from `record` (the saved evaluation JSON)."""
    import yaml

    name, c, t = record["name"], record["checkpoint"], record["training"]
    players = c["num_players"]
    config = t.get("config") or {}
    machine = t.get("machine") or {}
    nets = "; ".join(
        f"{net}: "
        + " → ".join([str(layers[0]["in"])] + [str(l["out"]) for l in layers])
        + f" ({layers[0]['activation'] or 'linear'})"
        for net, layers in c["networks"].items()
    )
    game = f"Qwixx {'Longo' if c['variant'] == 'longo' else 'classic'}, {players} player{'s' if players > 1 else ''}"
    about = [
        ["variant", f"`{c['variant']}`"],
        ["players", str(players)],
        ["lucky rule", f"`{c['lucky']}`" if c["lucky"] else "— (classic has no lucky numbers)"],
        [
            "reward mode",
            f"`{t['reward']}`"
            + (f" × {config['reward_scale']}" if config.get("reward_scale", 1.0) != 1.0 else ""),
        ],
        ["inputs", _inputs(c, config)],
        ["networks", nets],
        ["weights", f"`{name}.npz`, {c['bytes']:,} bytes, sha256 `{c['sha256'][:16]}…`"],
        ["training steps", "unknown" if t["steps"] is None else f"{t['steps']:,}"],
        [
            "wall time",
            "unknown" if t["wall_time"] is None else f"{duration(t['wall_time'])} ({t['wall_time']:,.0f} s)",
        ],
        ["machine", ", ".join(f"{k} {v}" for k, v in machine.items()) if machine else "unknown"],
        ["source run", f"`{record['source']}`"],
    ]
    lines = [
        f"# {name}",
        "",
        f"A PPO policy for **{game}**, trained with MaskablePPO by `training/train.py` and exported to numpy "
        f"(`qwixx_env.policy/1`): no torch needed to play it. Generated by `training/publish.py` from "
        f"`{record['results']}`; do not edit by hand.",
        "",
        table(["", ""], about, right=2),
        "",
        "## Loading",
        "",
        "```python",
        "from qwixx_env import bots",
        "",
        f'bot = bots.load("{name}")',
        f'bot = bots.make("{name}", variant="{c["variant"]}", num_players={players})  # the same, as a registered bot',
        "action = bot.act(obs)                               # an AEC observation dict",
        "```",
        "",
        f"In the arena: `qwixx arena {name} heuristic --players {players}"
        + (f" --variant longo --lucky {c['lucky']}" if c["variant"] == "longo" else "")
        + "`. As a batched policy (e.g. a frozen opponent):"
        f' `NumpyPolicy.load("{name}")`; see [docs/pretrained.md](../docs/pretrained.md).',
        "",
        "## Evaluation",
        "",
        *evaluation_section(record),
        "",
        "## Limitations",
        "",
        *(f"- {line}" for line in limitations(record)),
        "",
        "## Training",
        "",
    ]
    bc = t.get("bc")
    if bc:
        lines += [
            f"Behaviour-cloning warm start from `{bc['teacher']}`: {bc['samples']:,} decisions from "
            f"{bc.get('games', 0):,} games; agreement with the teacher on held-out decisions "
            f"**{pct(bc['agreement'])}** (before cloning {pct(bc['agreement_before'])}, by chance "
            f"{pct(bc['agreement_chance'])}).",
            "",
        ]
    else:
        lines += ["No warm start: PPO from random weights.", ""]
    warm = f", the warm start's {duration(bc['total_seconds'])} included" if bc and bc.get("total_seconds") else ""
    lines += [
        f"{'unknown' if t['steps'] is None else format(t['steps'], ',')} PPO steps (learner decisions); the run "
        f"took {'an unknown time' if t['wall_time'] is None else duration(t['wall_time'])} of wall time{warm}. "
        "The config as run:",
        "",
    ]
    lines += [
        "```yaml",
        yaml.safe_dump(config, sort_keys=False).rstrip() if config else "# not recorded",
        "```",
        "",
    ]
    lines += ["## Learning curves", ""]
    if record.get("curves_link"):
        lines += [
            f"![learning curves of {name}]({record['curves_link']})",
            "",
            "Win rate (95% interval) and mean score at each of the run's evaluations, against steps and "
            "wall time (the run's own evaluation deals, fewer games than above).",
            "",
        ]
    else:
        lines += ["The run left no `curves.png`.", ""]
    return "\n".join(lines)


# --- the whole -----------------------------------------------------------------------------------


def publish(
    run_dir: str | os.PathLike[str],
    name: str,
    *,
    games: int | None = None,
    search_games: int | None = None,
    workers: int = 2,
    seed: int = PUBLISH_SEED,
    checkpoints: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
    images: str | os.PathLike[str] | None = None,
    force: bool = False,
    command: str | None = None,
    console: Any = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Publish `run_dir` as `name` (see the module docstring); returns the saved record."""
    from qwixx_env.core.rewards import check_reward

    run_dir = Path(run_dir)
    checkpoints = Path(checkpoints) if checkpoints is not None else REPO / "checkpoints"
    results = Path(results) if results is not None else REPO / "benchmarks" / "results" / "pretrained"
    images = Path(images) if images is not None else REPO / "docs" / "images"
    say: Callable[[str], None] = console.print if console is not None else (lambda line: None)
    check_name(name)
    for option, value, low in (
        ("--games", games, 1),
        ("--search-games", search_games, 0),
        ("--workers", workers, 1),
        ("--seed", seed, 0),
    ):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
            raise ValueError(f"{option}: got {value!r}; expected an integer >= {low}")
    policy, spec = read_run(run_dir)  # checked before anything is written
    meta = spec["meta"]
    config = meta.get("config") or {}
    players = spec["num_players"]
    if games is None:
        table = [b for b in TABLE if b not in CLASSIC_ONLY or spec["variant"] == "classic"]
        games = default_deals(players, len(table) if players > 2 else 1)
    if search_games is None:
        search_games = SEARCH_DEALS_2P if players == 2 else SEARCH_DEALS_TABLE if players > 2 else 0
    _check_seed(seed, games, search_games, config)
    check_folders(checkpoints=checkpoints, results=results, images=images)
    check_replace(spec, name, checkpoints, force=force)

    # The run's own policy is evaluated; the checkpoint, its results and its card are written
    # together afterwards, so an interrupted evaluation leaves the published files as they were.
    evaluation = evaluate_policy(
        policy,
        name,
        games=games,
        search_games=search_games,
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
        "evaluation": evaluation,
    }
    results.mkdir(parents=True, exist_ok=True)
    write_atomically(
        results / f"{name}.json", (json.dumps(record, indent=1, allow_nan=False) + "\n").encode()
    )
    card = model_card(record)
    write_atomically(checkpoints / f"{name}.md", card.encode())
    say(f"wrote {checkpoints / (name + '.md')} and {results / (name + '.json')}")
    return record


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
    parser = argparse.ArgumentParser(prog="python -m qwixx_env.training.publish", description=__doc__.splitlines()[0])
    parser.add_argument(
        "run_dir", metavar="RUN_DIR", help="a finished training run (holds final.json, final.npz)"
    )
    parser.add_argument("--name", required=True, help="the bot's name, e.g. ppo-classic-2p")
    parser.add_argument(
        "--games",
        type=int,
        help="deals per arena (default: enough for 10,000 games of the bot: "
        "10,000 solo, 5,000 with 2 players)",
    )
    parser.add_argument(
        "--search-games",
        type=int,
        help="deals against the rollout search bot (default 5,000 with 2 "
        "players, 100 with 3+ (a second table); 0: rollout not played; solo: unused)",
    )
    parser.add_argument("--workers", type=int, default=2, help="arena processes (default 2)")
    parser.add_argument(
        "--seed", type=int, default=PUBLISH_SEED, help=f"first dice seed (default {PUBLISH_SEED})"
    )
    parser.add_argument(
        "--checkpoints", help="target folder of the checkpoint and card (default checkpoints/)"
    )
    parser.add_argument(
        "--results", help="folder of the evaluation JSON (default benchmarks/results/pretrained/)"
    )
    parser.add_argument("--images", help="folder of the learning curves (default docs/images/)")
    parser.add_argument(
        "--force", action="store_true", help="replace a published checkpoint of another policy"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    console = Console()
    try:
        record = publish(
            args.run_dir,
            args.name,
            games=args.games,
            search_games=args.search_games,
            workers=args.workers,
            seed=args.seed,
            checkpoints=args.checkpoints,
            results=args.results,
            images=args.images,
            force=args.force,
            command=shlex.join(["python", "-m", "qwixx_env.training.publish", *argv]),
            console=console,
            progress=not args.no_progress,
        )
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    ev = record["evaluation"]
    console.print(f"published {record['name']}: {ev['table_games']:,} games in {ev['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
