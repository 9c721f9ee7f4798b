"""The self-play league of an RLlib run on the vector path, and its evaluation in the arena.

The driver keeps the opponent pool of the SB3 path (`qwixx_env.training.pool.OpponentPool`:
the config's scripted bots by weight and the newest snapshots of the learner). A snapshot is
the learner module exported to numpy on the driver (``<run>/snapshots/``); the pool, with
every snapshot's arrays, is then broadcast to every env runner through Ray
(`foreach_env_runner` and `RLlibVectorEnv.set_league`), so no file is shared between
machines. Snapshots come every ``self_play.snapshot_every`` learner decisions and whenever an
evaluation shows the learner beating the pool (``add_when_win_rate``); an evaluation (every
``evaluation.every`` decisions and at the end) plays the exported learner against the ladder
in the arena, as `qwixx_env.training.evaluate` does for the SB3 path, into ``eval.jsonl``; the
first, at step 0, plays the warm start and keeps it (``<run>/warm_start.json``).
Checkpoints carry the pool (`save`, `restore`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ray.rllib.core import DEFAULT_MODULE_ID

from qwixx_env.bots.specs import check_spec, opponent
from qwixx_env.integrations.rllib import export_module, learned_module, set_league
from qwixx_env.nets import NumpyPolicy
from qwixx_env.training.config import EvaluationConfig, OpponentsConfig, eval_opponents
from qwixx_env.training.evaluate import evaluate, policy_factory, summary
from qwixx_env.training.pool import OpponentPool, check_entries

LEAGUE = "league"  # a checkpoint's folder of the pool: league.json and the snapshots' files
WARM_START = "warm_start"  # <run>/warm_start.json: the learner as the first evaluation played it (step 0)


def shipped_policies(scripted: Mapping[str, float], table: Any) -> dict[str, Any]:
    """{spec: policy} of the scripted bots given as a checkpoint's path, loaded here on the
    driver: they travel to the env runners through Ray with the pool, so a runner's machine
    needs no copy of the file (bots by name are in the package on every machine)."""
    return {spec: opponent(spec, table) for spec in scripted if check_spec(spec, table, who="the run's config").path}


class League:
    """The opponent pool of one run on the vector path (see the module docstring): `table` the
    run's `TableOptions`, `opponents` its `OpponentsConfig`, `evaluation` its
    `EvaluationConfig` (None: none), `run` its folder, `seed` the evaluation deals' seed,
    `shipped` the scripted bots given by a checkpoint's path, loaded (`shipped_policies`)."""

    def __init__(self, table: Any, opponents: OpponentsConfig, evaluation: EvaluationConfig | None, run: Path,
                 seed: int, meta: dict[str, Any], shipped: Mapping[str, Any]):
        self.table, self.evaluation, self.run, self.seed, self.meta = table, evaluation, run, seed, meta
        self.pool = OpponentPool(opponents.scripted, opponents.self_play, run / "snapshots")
        self.shipped = dict(shipped)
        self.last = {"snapshot": 0, "eval": -1}

    def start(self, algo: Any) -> None:
        """Before the first iteration: pure self-play starts against the learner itself; the
        pool goes to every env runner."""
        if self.pool.self_play is not None and not self.pool.scripted and not self.pool.snapshots:
            self.snapshot(algo, 0, "start")
        self.broadcast(algo)

    def after_iteration(self, algo: Any, steps: int) -> dict[str, Any] | None:
        """After an iteration at `steps` learner decisions: the scheduled snapshot and
        evaluation, the pool broadcast if it changed. Returns the evaluation record, if any."""
        changed, record = False, None
        sp = self.pool.self_play
        if sp is not None and steps - self.last["snapshot"] >= sp.snapshot_every:
            self.snapshot(algo, steps, "schedule")
            changed = True
        if self.evaluation is not None and steps - self.last["eval"] >= self.evaluation.every:
            record = self.evaluate(algo, steps)
            changed |= record["snapshot_added"] is not None
        if changed:
            self.broadcast(algo)
        return record

    def snapshot(self, algo: Any, steps: int, why: str) -> str:
        """Export the learner into the pool as the snapshot at `steps`; returns its name."""
        self.pool.folder.mkdir(parents=True, exist_ok=True)
        path = self._export(algo, self.pool.file(steps), steps)
        snapshot = self.pool.insert(steps, path)
        self.last["snapshot"] = steps
        print(f"snapshot {snapshot.name} ({why}); pool: {self.pool.describe()}", flush=True)
        return snapshot.name

    def broadcast(self, algo: Any) -> None:
        """Send the pool (names and weights, and every snapshot's policy) to every env runner."""
        names: dict[Any, str] = {s.policy: s.name for s in self.pool.snapshots}
        weights = {names.get(o, str(o)): w for o, w in self.pool.opponents().items()}
        snapshots = {**self.shipped, **{s.name: s.policy for s in self.pool.snapshots}}
        algo.env_runner_group.foreach_env_runner(lambda runner: set_league(runner, weights, snapshots))

    def evaluate(self, algo: Any, steps: int) -> dict[str, Any]:
        """The learner against the evaluation's bots (and the newest snapshot) in the arena;
        a snapshot added if it beats the pool; the record appended to ``eval.jsonl``."""
        ev = self.evaluation
        assert ev is not None, "evaluate needs an evaluation config"
        (self.run / "eval").mkdir(parents=True, exist_ok=True)
        # the policy at step 0 (the warm start's, before any PPO) is kept, for an arena beside the final one
        path = self.run / WARM_START if steps == 0 else self.run / "eval" / "learner"
        learner = policy_factory(NumpyPolicy.load(self._export(algo, path, steps)))

        def play(opponents: dict[str, Any]) -> dict[str, Any]:
            return evaluate(learner, opponents, num_players=self.table.num_players, variant=self.table.variant,
                            lucky=self.table.lucky, games=ev.games, seed=self.seed + 10_000, workers=ev.workers)

        record: dict[str, Any] = {"steps": steps}
        record.update(play({name: name for name in eval_opponents(ev, self.table.num_players)}))
        newest = self.pool.newest
        if newest is not None and newest.steps < steps:
            record["snapshot"] = play({newest.name: policy_factory(newest.policy, newest.name)})["opponents"]
        record["snapshot_added"] = self.snapshot(algo, steps, "beats the pool") if self.pool.beaten_by(record) else None
        self.last["eval"] = steps
        with open(self.run / "eval.jsonl", "a") as log:
            log.write(json.dumps(record) + "\n")
        print(f"eval @ {steps:,}: {summary(record)}", flush=True)
        return record

    def _export(self, algo: Any, path: Path, steps: int) -> Path:
        return export_module(learned_module(algo, DEFAULT_MODULE_ID), path, variant=self.table.variant,
                             num_players=self.table.num_players, lucky=self.table.lucky,
                             meta={**self.meta, "steps": steps})

    # --- checkpoints -----------------------------------------------------------------------------

    def save(self, checkpoint: Path) -> None:
        """Write the pool and the schedule into an RLlib checkpoint folder (``league/``)."""
        folder = checkpoint / LEAGUE
        self.pool.copy_files(folder)
        (folder / "league.json").write_text(json.dumps({"pool": self.pool.entries(), "last": self.last}))

    def restore(self, checkpoint: Path) -> None:
        """Put back the pool and the schedule `save` wrote into `checkpoint`."""
        folder = checkpoint / LEAGUE
        try:
            state = json.loads((folder / "league.json").read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"--resume: {checkpoint} has no readable {LEAGUE}/league.json ({err})") from None
        check_entries(state.get("pool"), folder)
        self.pool.restore(state["pool"], folder)
        self.last = {"snapshot": int(state["last"]["snapshot"]), "eval": int(state["last"]["eval"])}
        self.pool.drop_files_after(self.last["snapshot"])  # a killed segment's, taken after the checkpoint
