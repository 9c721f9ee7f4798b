"""The model card of a published bot: markdown generated from its saved evaluation record,
every number taken from that record (`qwixx_env.training.publish` writes both)."""

from __future__ import annotations

from typing import Any

from qwixx_env.arena.stats import Z95
from qwixx_env.core.variant import get_variant
from qwixx_env.nets import AFTERSTATE_TABLES
from qwixx_env.nets.win_chance import network_name
from qwixx_env.training.config_yaml import shipped_configs


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
        f"Produced by `{record['command']}` (dice seeds from {ev['seed']:,} on, "
        "other deals than the run's evaluations; "
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
            lines.append("`rollout` (Monte Carlo search, far slower per decision than the others) "
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
            f"Does `{name}` win more often than every scripted opponent? "
            f"**{'Yes' if ev['beats_every_scripted'] else 'No'}**"
            f": {pct(me['win_rate'])} against {pct(best['win_rate'])} for its closest rival, `{best['label']}`, "
            f"at the same table ({intervals})."
        )
    for bot, why in ev["skipped"].items():
        lines.append(f"Not played: `{bot}` ({why}).")
    return lines


def _apart(a: list[float], b: list[float]) -> str:
    """'above', 'below' or 'overlap': interval `a` against interval `b`."""
    return "above" if a[0] > b[1] else "below" if a[1] < b[0] else "overlap"


def _score_interval(mean: float, se: float | None) -> list[float]:
    half = 0.0 if se is None else Z95 * se
    return [mean - half, mean + half]


def strength(benchmark: dict[str, Any], reference: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The strength a published bot is held to, on its table's benchmark result: a list of
    ``{"target", "met", "detail", "goal"}`` (``goal`` True for the aim every table has, to beat
    `rollout`, False for the bar it must clear; ``met`` None where there is no bar). `reference`:
    `heuristic`'s benchmark result on the same solo protocol (the solo bar).

    - 2 players: beats `heuristic` head to head: its win share's 95% interval above 50%;
    - 3 to 5 players: wins more often than `heuristic` in the heuristic lineup, the 95%
      intervals apart;
    - solo Longo: a mean score above `heuristic`'s on the same deals, the 95% intervals apart
      (solo classic: the regret to the exact optimum, no bar);
    - the goal, 2 to 5 players: beats `rollout` on the harder lineup, the intervals apart.
    """
    d = benchmark["definition"]
    players, lineups = d["num_players"], benchmark["lineups"]
    out: list[dict[str, Any]] = []
    me = lineups.get("heuristic")
    if me is None:
        return out
    if players == 1:
        if "regret" in me:
            out.append({"target": "the exact optimum (no bar: the solver's score is the reference)", "met": None,
                        "goal": False, "detail": f"regret {me['regret']:.2f} ± {me['regret_se'] or 0:.2f} points "
                        f"to the optimum {me['optimum']:.2f}"})
        elif reference is not None:
            h = reference["lineups"]["heuristic"] if "lineups" in reference else reference
            mine, theirs = _score_interval(me["score_mean"], me["score_se"]), _score_interval(h["score_mean"],
                                                                                              h["score_se"])
            out.append({"target": "a mean score above `heuristic`'s on the same deals, 95% intervals apart",
                        "met": _apart(mine, theirs) == "above", "goal": False,
                        "detail": f"{score(me['score_mean'], me['score_se'])} against `heuristic`'s "
                        f"{score(h['score_mean'], h['score_se'])} ({_apart_words(_apart(mine, theirs))})"})
        return out
    if players == 2:
        lo = me["win_interval"][0]
        out.append({"target": "beats `heuristic` head to head: the 95% interval of its win share above 50%",
                    "met": lo > 0.5, "goal": False,
                    "detail": f"{pct(me['win_share'])} {interval(me['win_interval'])}"})
    else:
        # each `heuristic` seat beside it is a bot of its own in the arena (heuristic, heuristic#2, ...):
        # the bar is the one that wins most
        h = max((o for o in me["others"] if _base(o["label"]) == "heuristic"), key=lambda o: o["win_share"])
        side = _apart(me["win_interval"], h["win_interval"])
        out.append({"target": "wins more often than `heuristic` beside it (each of its seats), 95% intervals apart",
                    "met": side == "above", "goal": False,
                    "detail": f"{pct(me['win_share'])} {interval(me['win_interval'])} against "
                    f"{pct(h['win_share'])} {interval(h['win_interval'])} for the best `heuristic` seat, "
                    f"`{h['label']}` ({_apart_words(side)})"})
    hard = lineups.get("rollout")
    if hard is not None:
        r = next(o for o in hard["others"] if o["label"] == "rollout")
        side = _apart(hard["win_interval"], r["win_interval"])
        out.append({"target": "the goal: wins more often than `rollout` beside it, 95% intervals apart",
                    "met": side == "above", "goal": True,
                    "detail": f"{pct(hard['win_share'])} {interval(hard['win_interval'])} against `rollout`'s "
                    f"{pct(r['win_share'])} {interval(r['win_interval'])} ({_apart_words(side)})"})
    return out


def _apart_words(side: str) -> str:
    return {"above": "the intervals apart", "below": "the intervals apart, the other ahead",
            "overlap": "the intervals overlap"}[side]


def _beside(f: dict[str, Any]) -> str:
    """A lineup by the bots beside the agent, each once: "beside `rollout`, `heuristic`"."""
    return "beside " + ", ".join(f"`{label}`" for label in dict.fromkeys(_base(o["label"]) for o in f["others"]))


def _base(label: str) -> str:
    """A bot's label without the arena's copy number (``heuristic#2`` -> ``heuristic``)."""
    return label.split("#")[0]


def benchmark_section(record: dict[str, Any]) -> list[str]:
    """The card's benchmark figures: its table's protocol, each lineup, and the targets."""
    name, b = record["name"], record["benchmark"]
    d = b["definition"]
    players = d["num_players"]
    games = sum(f["games"] for f in b["lineups"].values())
    lines = [
        f"Its table's protocol, **`{b['protocol']}`** ([docs/benchmark.md](../docs/benchmark.md)): the same "
        f"games as `qwixx bench {name}` ({plural(games, 'game')} of `{name}` in {duration(b['seconds'])} on "
        f"{plural(b['workers'], 'worker')}; reserved dice that no training run plays).",
        "",
    ]
    if not b["complete"]:
        lines += ["**PARTIAL**: only the first deals of each lineup were played (`--limit`): not a figure to quote.",
                  ""]
    if players == 1:
        f = b["lineups"]["heuristic"]
        rows = [[f"`{name}`", f"{f['games']:,}", score(f["score_mean"], f["score_se"])]]
        ref = record.get("reference")
        if ref:
            rows.append([f"`{ref['agent']}`", f"{ref['games']:,}", score(ref["score_mean"], ref["score_se"])])
        if "optimum" in f:
            rows.append(["optimum (exact solver)", "—", f"{f['optimum']:.2f}"])
        lines += ["Alone, on the protocol's deals:", "",
                  table(["agent", "games", "mean score ± s.e."], rows), ""]
    else:
        rows = []
        for f in b["lineups"].values():
            rows.append([_beside(f), f"{f['games']:,}", pct(f["win_share"]), interval(f["win_interval"]),
                         score(f["margin_mean"], f["margin_se"]), score(f["score_mean"], f["score_se"])])
        lines += [
            f"`{name}` in every seat in turn; parity (an equal share of wins) is {pct(d['parity'])}. The margin is "
            "its score minus the best other score.",
            "",
            table(["lineup", "games", "win share", "95% interval", "margin ± s.e.", "score ± s.e."], rows),
            "",
            "The bots beside it, in the same games:",
            "",
            table(["lineup", "bot", "win share", "95% interval", "score"],
                  [[_beside(f), f"`{o['label']}`", pct(o["win_share"]), interval(o["win_interval"]),
                    f"{o['score_mean']:.2f}"] for f in b["lineups"].values() for o in f["others"]]),
            "",
        ]
    h = b["headline"]
    if h is not None:
        value = score(h["value"], h["se"]) if h["parity"] is None else f"{pct(h['value'])} {interval(h['interval'])}"
        lines += [f"Headline ({h['figure']}): **{value}**" + ("" if h["parity"] is None else
                                                             f", parity {pct(h['parity'])}."), ""]
    checks = record.get("strength") or []
    if checks:
        lines += ["The strength a published bot is held to:", ""]
        for c in checks:
            mark = "" if c["met"] is None else "**met**; " if c["met"] else "**not met**; "
            lines.append(f"- {c['target']}: {mark}{c['detail']}.")
        lines.append("")
    return lines


def limitations(record: dict[str, Any]) -> list[str]:
    """Honest lines computed from the benchmark and the evaluation."""
    c = record["checkpoint"]
    out = [
        f"It reads the {c['variant']} observation for {plural(c['num_players'], 'player')} only, and plays "
        "deterministically (the same position always gets the same move)."
    ]
    for check in record.get("strength") or []:
        if check["met"] is False:
            verb = "falls short of the goal:" if check["goal"] else "misses the bar:"
            out.append(f"It {verb} {check['target'].removeprefix('the goal: ')}: {check['detail']}.")
    b = record.get("benchmark")
    if b is not None and not b["complete"]:
        out.append("Its benchmark is partial (`--limit`): the figures above are not the protocol's.")
    if record.get("evaluation"):
        out += _evaluation_limits(record["evaluation"])
    return out + list(record.get("notes") or [])


def _evaluation_limits(ev: dict[str, Any]) -> list[str]:
    """The limitations the ``--arena`` evaluation shows."""
    out: list[str] = []
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
    parts = [f"the observation ({checkpoint['observation_size']} numbers)"]
    A = checkpoint["num_actions"]
    for name in config.get("inputs") or []:
        if name == "afterstate":
            table = (checkpoint["variant"], checkpoint["num_players"])
            network = network_name("afterstate", *table) if table in AFTERSTATE_TABLES else "?"
            parts.append(f"the `afterstate` rating of each of the {A} actions "
                         f"(network `qwixx_env/nets/data/{network}`)")
        elif name == "heuristic":
            parts.append(f"the `heuristic` bot's rating of each of the {A} actions (`qwixx_env.nets.heuristic`)")
    return " and ".join(parts)


def model_card(record: dict[str, Any]) -> str:
    """The markdown model card, every number from `record` (the saved evaluation JSON)."""
    import yaml

    name, c, t = record["name"], record["checkpoint"], record["training"]
    players = c["num_players"]
    config = t.get("config") or {}
    machine = t.get("machine") or {}
    nets = "; ".join(
        f"{net}: "
        + " → ".join([str(layers[0]["in"])] + [str(layer["out"]) for layer in layers])
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
        f"A PPO policy for **{game}**, trained with MaskablePPO by `qwixx-train` and exported to numpy "
        "(`qwixx_env.policy/1`): no torch needed to play it. Generated by "
        f"`python -m qwixx_env.training.publish` from `{record['results']}`; do not edit by hand.",
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
        + (f" --variant {c['variant']} --lucky {c['lucky']}" if get_variant(c["variant"]).lucky_count else "")
        + "`. As a batched policy (e.g. a frozen opponent):"
        f' `NumpyPolicy.load("{name}")`; see [docs/pretrained.md](../docs/pretrained.md).',
        "",
        *(["## Benchmark", "", *benchmark_section(record)] if record.get("benchmark") else []),
        *(["## Evaluation", "", *(["The wider arena evaluation (`publish --arena`), on deals of its own.", ""]
                                  if record.get("benchmark") else []),
           *evaluation_section(record), ""] if record.get("evaluation") else []),
        "## Limitations",
        "",
        *(f"- {line}" for line in limitations(record)),
        "",
        "## Training",
        "",
    ]
    if t.get("name") and t["name"] in shipped_configs():
        lines += [f"Trained by `qwixx-train {t['name']}` (the shipped config `{t['name']}.yaml`, "
                  f"dice seed {config.get('seed', 'unrecorded')}): the same command trains it again.", ""]
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
