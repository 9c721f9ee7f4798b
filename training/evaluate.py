"""Evaluation of an exported learner in the arena (`qwixx_env.arena.run_arena`).

With P players the learner sits with P-1 copies of one opponent, seats rotated and every
lineup dealt the same dice; its win rate (shared wins count as fractions) comes with a 95%
Wilson interval, and both sides' mean scores are reported. Solo, the learner plays alone
and its mean score is the measure. The deals are fixed by `seed`, so successive evaluations
of one run are dealt the same dice.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from qwixx_env.arena import run_arena
from qwixx_env.bots import pretrained

LEARNER = "learner"


class PolicyFactory(functools.partial[pretrained.PretrainedBot]):
    """`PretrainedBot` with its policy bound, named: the arena calls it as every bot factory,
    ``factory(*, table, seed)``, and a partial keeps the bot's keyword signature."""

    name: str  # the arena's label


def policy_factory(policy: pretrained.NumpyPolicy, label: str = LEARNER) -> PolicyFactory:
    """A bot factory (``factory(*, table, seed)``, as the arena calls it) playing an exported
    policy, reported under `label`; the one policy serves every seat and game (it is deterministic)."""
    factory = PolicyFactory(pretrained.PretrainedBot, policy)
    factory.name = label
    return factory


def evaluate(
    learner: Callable[..., Any],
    opponents: dict[str, Any],
    *,
    num_players: int,
    variant: str,
    lucky: str,
    games: int,
    seed: int,
    workers: int = 1,
) -> dict[str, Any]:
    """Arena results of `learner` (a bot factory) against each of `opponents` (label -> a
    bot name or factory), or alone when solo. Returns ``{"seconds", "solo": {...}}`` or
    ``{"seconds", "opponents": {label: {...}}}`` with JSON-ready numbers."""
    start = time.perf_counter()
    arena = functools.partial(run_arena, num_players=num_players, variant=variant, lucky=lucky, games=games,
                              seed=seed, workers=workers)
    out: dict[str, Any] = {}
    if num_players == 1:
        row = arena([learner]).bots[0]
        out["solo"] = {"games": row["games"], "score_mean": row["score_mean"], "score_se": row["score_se"]}
    else:
        out["opponents"] = {}
        for label, opponent in opponents.items():
            result = arena([learner] + [opponent] * (num_players - 1))
            me, others = result.bots[0], result.bots[1:]
            out["opponents"][label] = {
                "games": me["games"],
                "win_rate": me["win_rate"],
                "win_interval": me["win_interval"],
                "score_mean": me["score_mean"],
                "score_se": me["score_se"],
                "opponent_score_mean": sum(o["score_mean"] * o["games"] for o in others)
                / sum(o["games"] for o in others),
            }
    out["seconds"] = time.perf_counter() - start
    return out


def summary(record: dict[str, Any]) -> str:
    """One line for the console: win rate [interval] and mean score per opponent."""
    if "solo" in record:
        s = record["solo"]
        return f"mean score {s['score_mean']:.1f} ± {s['score_se']:.1f} ({s['games']} games)"
    parts = []
    for label, r in record["opponents"].items():
        lo, hi = r["win_interval"]
        scores = f"{r['score_mean']:.0f}:{r['opponent_score_mean']:.0f}"
        parts.append(f"{label} {r['win_rate']:.0%} [{lo:.0%}, {hi:.0%}] {scores}")
    return " | ".join(parts)
