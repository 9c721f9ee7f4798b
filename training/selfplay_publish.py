"""Publish a finished self-play run as a `selfplay-<variant>-<P>p` bot: its network and model card.

    python -m qwixx_env.training.selfplay_publish runs/selfplay_classic_2p_s1 --name selfplay-classic-2p \
        --curves benchmarks/results/selfplay/classic_2p.json \
        --bench benchmarks/results/leaderboard/selfplay-classic-2p.json

Writes ``qwixx_env/nets/data/NAME.json`` + ``.npz`` (the run's ``final`` network, with the run's
config, wall time, decisions and command in ``meta``) and ``NAME.md``, the model card: how the
bot plays, that it saw no teacher, how it was trained, its benchmark figures (from a `qwixx
bench` results file, when given: publish once, bench the installed bot, publish again with
``--bench``) and its learning curves over seeds (from `benchmarks/selfplay_curves.py`'s file).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from qwixx_env.files import write_atomically
from qwixx_env.nets.checkpoint import WIN_CHANCE, json_and_npz, read
from qwixx_env.nets.win_chance import kernel_arrays, networks_dir, write_win_chance

REPO_DOCS = "../../../docs"  # from qwixx_env/nets/data/ in a source checkout


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def card(name: str, meta: dict[str, Any], curves: dict[str, Any] | None, bench: dict[str, Any] | None) -> str:
    cfg = meta["config"]
    players, variant = cfg["num_players"], cfg["variant"]
    lines = [
        f"# {name}",
        "",
        f"A {players}-player {variant} bot that learned by self-play alone. **It saw no teacher**: no behaviour "
        "cloning, no warm start, no scripted or search bot in its inputs, features or training opponents. Its "
        "network started from random weights and played itself and its own snapshots; `random`, `greedy` and "
        "`heuristic` appear only in its evaluations, on deals no training game used.",
        "",
        "## How it plays",
        "",
        "Each legal action is crossed on a scratch copy of the bot's sheet (a white action of the active player "
        "together with its best colour follow-up) and the position after it is rated by a small network "
        f"({cfg['hidden'][0]} and {cfg['hidden'][1]} ReLU units, a sigmoid win chance). The network reads the "
        "*plain* features: for each sheet, per row the share of cells crossed, the rightmost cross, the lock and "
        "whether the row may lock; penalties and score; then the locked rows, who rolls next and the margin. "
        "Nothing the heuristic computes. Deterministic; a decision costs a few dozen forward passes, numpy only.",
        "",
        "```python",
        "from qwixx_env import bots",
        f'bot = bots.make("{name}")        # plays {variant} with {players} players only',
        "```",
        "",
        "## How it was trained",
        "",
        f"`{meta['command']}`: TD(lambda = {cfg['td_lambda']}) on afterstates, {meta['rounds']} rounds of "
        f"{cfg['games']:,} games ({meta['games']:,} games, {meta['decisions']:,} of the learner's decisions), "
        f"{_pct(cfg['explore'])} of the recorded decisions random, {_pct(cfg['snapshot_share'])} of each round's "
        "games "
        f"against a snapshot taken every {cfg['snapshot_every']} rounds; Adam at {cfg['learning_rate']}, "
        f"{cfg['epochs']} passes a round. **{meta['minutes']:.0f} minutes of wall time** on the project's 2-core "
        f"machine ({meta.get('machine', 'one thread, beside two other runs')}).",
        "",
    ]
    if bench is not None:
        result = next(r for r in bench["results"] if r["definition"]["num_players"] == players
                      and r["definition"]["variant"] == variant)
        lines += [f"## Benchmark: {result['protocol']}", "",
                  f"`qwixx bench {name} --table {result['protocol'].split('/')[0]}` (dice seeds reserved for the "
                  "benchmark; docs/benchmark.md):", "",
                  "| lineup | games | win share | 95% interval | margin | score |", "|---|---:|---:|---:|---:|---:|"]
        for lineup, r in result["lineups"].items():
            low, high = r["win_interval"]
            lines.append(f"| beside `{lineup}` | {r['games']:,} | **{_pct(r['win_share'])}** | "
                         f"[{_pct(low)}, {_pct(high)}] | {r['margin_mean']:+.1f} ± {r['margin_se']:.1f} | "
                         f"{r['score_mean']:.1f} |")
        lines.append("")
    if curves is not None:
        final = curves["final"]
        n = len(curves["runs"])
        lines += ["## Learning curves", "",
                  f"{n} runs of the same config with seeds {', '.join(str(c['seed']) for c in curves['configs'])}, "
                  f"each evaluated every {cfg['eval_every']} rounds on the same {cfg['eval_deals']:,} deals (each in "
                  f"every seat: {cfg['eval_deals'] * players:,} games an opponent) "
                  f"that no run trained on. At the end ({', '.join(f'{m:.0f}' for m in final['minutes'])} min), mean "
                  f"over runs with the 95% interval over runs:", "",
                  "| opponent | win share | 95% interval over runs |", "|---|---:|---:|"]
        for opponent in curves["opponents"]:
            row = final[opponent]
            lines.append(f"| `{opponent}` | {_pct(row['win_share'])} | [{_pct(row['low'])}, {_pct(row['high'])}] |")
        lines += ["", f"![learning curves]({REPO_DOCS}/images/{name}-curves.png)", "",
                  "The figures are in `benchmarks/results/selfplay/`; "
                  f"[self-play.md]({REPO_DOCS}/research/self-play.md) tells how they were made.",
                  ""]
    lines += ["## Files", "",
              f"`{name}.json` (what the network is: format `qwixx_env.win_chance/1`, `\"features\": \"plain\"`, "
              f"the run's config and figures in `meta`) and `{name}.npz` (the weights, float64), read with numpy "
              "alone and checked against the JSON's sha256.", ""]
    return "\n".join(lines)


def publish(run: Path, name: str, *, command: str, curves: Path | None = None, bench: Path | None = None,
            machine: str | None = None) -> Path:
    """Write the run's final network and its card under `name` in the shipped networks' folder."""
    spec, arrays = read(*json_and_npz(run / "final"), kind=WIN_CHANCE)
    if spec.get("features") != "plain" or spec["meta"].get("teacher", "?") is not None:
        raise SystemExit(f"{run}: not a self-play run's network (features plain, no teacher)")
    expected = f"selfplay-{spec['variant']}-{spec['num_players']}p"
    if name != expected:
        raise SystemExit(f"--name: got {name!r}; this run's network plays {expected}")
    meta = {**spec["meta"], "command": command, "run": run.name}
    if machine:
        meta["machine"] = machine
    out = networks_dir() / name
    write_win_chance(out, kernel_arrays(spec, arrays), variant=spec["variant"], num_players=spec["num_players"],
                     meta=meta, features="plain")
    text = card(name, meta, json.loads(curves.read_text()) if curves else None,
                json.loads(bench.read_text()) if bench else None)
    write_atomically(out.with_suffix(".md"), text.encode())
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("run", type=Path, help="a finished run's folder (its final.json)")
    ap.add_argument("--name", required=True, help="selfplay-<variant>-<P>p")
    ap.add_argument("--command", required=True, help="the command that made the run (for the card)")
    ap.add_argument("--curves", type=Path, help="benchmarks/selfplay_curves.py's results file")
    ap.add_argument("--bench", type=Path, help="a qwixx bench / leaderboard results file of the installed bot")
    ap.add_argument("--machine", help="how the machine was shared during the run (for the card)")
    a = ap.parse_args(argv)
    print(f"wrote {publish(a.run, a.name, command=a.command, curves=a.curves, bench=a.bench, machine=a.machine)}")


if __name__ == "__main__":
    main()
