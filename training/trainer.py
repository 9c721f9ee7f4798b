"""One PPO self-play training run, driven by a config (`qwixx_env.training.config`).

1. Optionally a behaviour-cloning warm start (`qwixx_env.training.bc`) from a teacher bot.
2. sb3-contrib's ``MaskablePPO`` on `Sb3VecEnv(QwixxVectorEnv(...))`, the learner's seat drawn
   per game, the other seats played by the opponent pool (`qwixx_env.training.pool`): scripted
   bots and frozen numpy snapshots of the learner, one added every ``snapshot_every`` steps and
   whenever an evaluation shows the learner beating the pool.
3. Every ``evaluation.every`` steps (and at the start and end) the learner is exported to
   numpy and played in the arena against the ladder (`qwixx_env.training.evaluate`); the
   results go to TensorBoard and ``eval.jsonl``.
4. Every ``checkpoint_every`` steps (and at the end) an atomic checkpoint
   (`qwixx_env.training.checkpoint`); a resumed run continues from the latest one.
5. At the end ``curves.png`` and the final policy, ``final.{npz,json}``, loadable without
   torch by ``qwixx_env.bots.load``.

The run folder holds ``config.yaml``, ``tb/`` (TensorBoard: ``ppo_1`` from SB3, ``eval`` and
``bc`` from here), ``eval.jsonl``, ``snapshots/``, ``checkpoint/``, ``curves.png`` and
``final.*``. `qwixx_env.training.train` is its command line.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import yaml

from qwixx_env import QwixxVectorEnv
from qwixx_env.bots import make_bot
from qwixx_env.bots.sb3_zip import write_game
from qwixx_env.envs.sb3 import PolicyInputs, Sb3VecEnv
from qwixx_env.files import write_atomically
from qwixx_env.nets import NumpyPolicy, with_inputs
from qwixx_env.training import bc, checkpoint
from qwixx_env.training.config import BCConfig, EvaluationConfig, TrainConfig, config_from_dict
from qwixx_env.training.curves import plot_curves
from qwixx_env.training.evaluate import evaluate, policy_factory, summary
from qwixx_env.training.export import export_policy
from qwixx_env.training.pool import OpponentPool, check_entries
from qwixx_env.training.ppo import ppo_options, scaled_rewards
from qwixx_env.training.progress import RunOutput

DEVICE = "cpu"  # the networks are small and the games are the cost: a GPU would wait on the CPU
# What `--resume` reads from a checkpoint's state.json (every checkpoint writes them).
STATE_FIELDS = ("steps", "segment", "config", "pool", "eval_history", "last", "bc", "wall_time")
# Keys that may differ between a checkpoint's config and the one it is resumed with.
RESUMABLE_CHANGES = ("total_steps", "evaluation", "checkpoint_every", "torch_threads")


class Trainer:
    """One training run (see the module docstring). `run()` does it all and returns a
    summary. Lines and the progress bar go to `console` (a rich Console) if given, else to
    stdout."""

    def __init__(self, cfg: TrainConfig, out: str | Path, *, resume: bool = False, progress: bool = True,
                 console: Any = None):
        self.cfg, self.out, self.resume = cfg, Path(out), resume
        self.output = RunOutput(console, progress)
        self.history: list[dict[str, Any]] = []
        self.last = {"eval": -1, "snapshot": 0, "checkpoint": 0}
        self.bc_stats: dict[str, Any] | None = None
        self.segment = 0  # how many times this run has been (re)started before
        self.wall_before = 0.0  # wall time of earlier segments
        self.seconds = {"eval": 0.0, "checkpoint": 0.0, "bc": 0.0, "ppo": 0.0}
        self.ppo_steps = 0  # steps trained in this segment

    # --- the run ----------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        import torch
        from sb3_contrib import MaskablePPO
        from torch.utils.tensorboard import SummaryWriter

        cfg, out = self.cfg, self.out
        torch.set_num_threads(cfg.torch_threads)
        self.started = time.perf_counter()
        found = checkpoint.latest(out)
        if self.resume and found is None:
            raise ValueError(f"--resume: no checkpoint in {out}; start the run without --resume")
        if not self.resume and found is not None:
            raise ValueError(f"--out: {out} already holds a run with a checkpoint; pass --resume or another --out")
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out: {out} is a file; expected a run folder (new or holding a run)")
        state = None
        if found is not None:  # resuming: the checks above refuse a checkpoint without --resume
            state = checkpoint.read_state(found, STATE_FIELDS)
            self._check_resumable(state)  # before anything in the folder is written
            check_entries(state["pool"], found / checkpoint.SNAPSHOTS)
            if int(state["steps"]) >= cfg.total_steps and (out / "final.json").is_file():
                return self._nothing_to_train(state)
        out.mkdir(parents=True, exist_ok=True)
        write_atomically(out / "config.yaml", yaml.safe_dump(cfg.to_dict(), sort_keys=False).encode())
        self.env = QwixxVectorEnv(cfg.num_envs, table=cfg.table, learner_seat="random")
        venv = Sb3VecEnv(self.env)
        if cfg.inputs:
            venv = PolicyInputs(venv, cfg.inputs)
        if cfg.reward_scale != 1.0:
            venv = scaled_rewards(venv, cfg.reward_scale)
        opponents = cfg.opponents
        self.pool = OpponentPool(
            opponents.scripted if opponents else {}, opponents.self_play if opponents else None, out / "snapshots",
        )
        self.tb = SummaryWriter(str(out / "tb" / "eval"))
        self.output.say(f"training on {DEVICE} (torch {torch.__version__}, {torch.get_num_threads()} thread(s); the "
                        "networks are small and the games are the cost, so a GPU would not help)")
        if found is not None and state is not None:
            self.segment = state["segment"] + 1
            # force_reset: start the env afresh (its last observation is not in the checkpoint)
            self.model = MaskablePPO.load(found / checkpoint.MODEL, env=venv, device=DEVICE, force_reset=True,
                                          tensorboard_log=str(out / "tb"))
            self.model.set_random_seed(segment_seed(cfg.seed, self.segment))
            self._restore(state, found)
            self.output.say(f"resumed {out} at {self.steps:,} steps ({found.name})")
        else:
            self.model = MaskablePPO("MlpPolicy", venv, seed=cfg.seed, device=DEVICE, verbose=0,
                                     tensorboard_log=str(out / "tb"), **ppo_options(cfg))
            self._write_history()
            if cfg.bc is not None:
                self._behaviour_cloning(cfg.bc)
            if self.pool.self_play is not None and not self.pool.scripted:
                self.pool.add(self.model, 0, self._meta(0))  # pure self-play starts against itself
            if cfg.evaluation is not None:
                self._evaluate(0, cfg.evaluation)
        self._set_opponents()
        remaining = cfg.total_steps - self.steps
        if remaining > 0:
            self._learn(remaining)
        return self._finish()

    @property
    def steps(self) -> int:
        return int(self.model.num_timesteps)

    @property
    def wall_time(self) -> float:
        return self.wall_before + time.perf_counter() - self.started

    def _learn(self, remaining: int) -> None:
        from stable_baselines3.common.callbacks import BaseCallback

        trainer = self

        class Hooks(BaseCallback):
            """Evaluations, snapshots and checkpoints between rollouts (the model is
            consistent there); the progress bar on every step."""

            def _on_rollout_start(self) -> None:
                trainer._between_rollouts(self.model.num_timesteps)

            def _on_step(self) -> bool:
                trainer.output.advance(self.model.num_timesteps)
                return True

        start = self.steps
        self.output.open(self.cfg.name, self.cfg.total_steps, start)
        began = time.perf_counter()
        busy_before = self.seconds["eval"] + self.seconds["checkpoint"]
        try:
            self.model.learn(remaining, callback=Hooks(), tb_log_name="ppo", reset_num_timesteps=not self.resume,
                             progress_bar=False)
        finally:
            self.output.close()
        busy = self.seconds["eval"] + self.seconds["checkpoint"] - busy_before
        self.seconds["ppo"] += time.perf_counter() - began - busy
        self.ppo_steps = self.steps - start

    def _between_rollouts(self, steps: int) -> None:
        cfg, last, ev = self.cfg, self.last, self.cfg.evaluation
        changed = False
        if ev is not None and steps // ev.every > last["eval"] // ev.every:
            changed = self._evaluate(steps, ev)
        sp = self.pool.self_play
        if sp is not None and steps - last["snapshot"] >= sp.snapshot_every:
            self._add_snapshot(steps, "schedule")
            changed = True
        if changed:
            self._set_opponents()
        if steps // cfg.checkpoint_every > last["checkpoint"] // cfg.checkpoint_every:
            self._checkpoint(steps)

    def _finish(self) -> dict[str, Any]:
        steps, out = self.steps, self.out
        if self.cfg.evaluation is not None and self.last["eval"] != steps:
            self._evaluate(steps, self.cfg.evaluation)
        if self.last["checkpoint"] != steps or checkpoint.latest(out) is None:
            self._checkpoint(steps)
        final = export_policy(self.model, out / "final", meta=self._meta(steps))
        curves = plot_curves(self.history, out / "curves.png", f"{self.cfg.name}: {self.cfg.variant}, "
                             f"{self.cfg.num_players} player(s)") if self.history else None
        self.tb.close()
        summary = {
            "run": str(out),
            "steps": steps,
            "wall_time": self.wall_time,
            "seconds": dict(self.seconds),
            "ppo_steps_per_second": self.ppo_steps / self.seconds["ppo"] if self.seconds["ppo"] else None,
            "bc": self.bc_stats,
            "last_eval": self.history[-1] if self.history else None,
            "final": str(final),
            "curves": str(curves) if curves else None,
        }
        self.output.say(f"done: {steps:,} steps in {self.wall_time / 60:.1f} min; final policy {final}")
        return summary

    def _nothing_to_train(self, state: dict[str, Any]) -> dict[str, Any]:
        """A finished run resumed without more steps: say so and change nothing (no checkpoint,
        no export, no wall time added); the summary is the run's as it stands."""
        steps = int(state["steps"])
        self.output.say(
            f"nothing to train: {self.out} is done at {steps:,} steps (total_steps {self.cfg.total_steps:,}); "
            f"its policy is {self.out / 'final'}. Pass --steps N (N > {steps:,}) to train it further"
        )
        history = state["eval_history"]
        curves = self.out / "curves.png"
        return {
            "run": str(self.out),
            "steps": steps,
            "wall_time": float(state["wall_time"]),
            "seconds": state.get("seconds"),
            "ppo_steps_per_second": None,
            "bc": state["bc"],
            "last_eval": history[-1] if history else None,
            "final": str(self.out / "final.json"),
            "curves": str(curves) if curves.is_file() else None,
            "nothing_to_train": True,
        }

    # --- parts -----------------------------------------------------------------------------

    def _behaviour_cloning(self, b: BCConfig) -> None:
        cfg, say = self.cfg, self.output.say
        began = time.perf_counter()
        teacher = make_bot(b.teacher, cfg.table, cfg.seed)
        say(f"behaviour cloning: collecting {b.samples:,} decisions of {b.teacher!r}")
        self.output.open(f"BC: {b.teacher}", b.samples, unit="decisions")
        try:
            demos, stats = bc.collect(cfg, teacher, b.samples, seed=cfg.seed + 7, num_envs=cfg.num_envs,
                                      on_progress=self.output.advance)
        finally:
            self.output.close()
        # what the policy reads: the observation and the extra inputs
        demos.observations = with_inputs(demos.observations, cfg.inputs, cfg.variant, cfg.num_players, cfg.lucky)
        say(f"  {stats['samples']:,} samples from {stats['games']:,} games in {stats['seconds']:.1f} s "
            f"({stats['samples_per_second']:,.0f}/s); teacher's mean return {stats['teacher_return']:.3f}")

        def on_epoch(fig: dict[str, float]) -> None:
            for key in ("policy_loss", "value_loss", "agreement"):
                self.tb.add_scalar(f"bc/{key}", fig[key], int(fig["epoch"]))
            say(f"  epoch {int(fig['epoch'])}: agreement {fig['agreement']:.1%}, "
                f"policy loss {fig['policy_loss']:.3f}, value loss {fig['value_loss']:.3f}")

        fit = bc.clone(self.model, demos, epochs=b.epochs, batch_size=b.batch_size, learning_rate=b.learning_rate,
                       vf_coef=cfg.ppo.vf_coef, seed=cfg.seed, on_epoch=on_epoch)
        self.seconds["bc"] = time.perf_counter() - began
        self.bc_stats = {"teacher": b.teacher, **stats, **fit, "total_seconds": self.seconds["bc"]}
        write_atomically(self.out / "bc.json", (json.dumps(self.bc_stats, indent=1) + "\n").encode())
        say(f"  agreement with {b.teacher!r}: {fit['agreement']:.1%} (before {fit['agreement_before']:.1%}, "
            f"chance {fit['agreement_chance']:.1%}); {self.seconds['bc']:.0f} s in all")

    def _evaluate(self, steps: int, ev: EvaluationConfig) -> bool:
        """Evaluate the learner as `ev` says; record it; add a snapshot if it beats the pool.
        Returns whether the pool changed."""
        cfg, say = self.cfg, self.output.say
        began = time.perf_counter()
        (self.out / "eval").mkdir(exist_ok=True)
        learner = policy_factory(NumpyPolicy.load(export_policy(self.model, self.out / "eval" / "learner",
                                                                meta=self._meta(steps))))
        def play(opponents: dict[str, Any]) -> dict[str, Any]:
            return evaluate(learner, opponents, num_players=cfg.num_players, variant=cfg.variant, lucky=cfg.lucky,
                            games=ev.games, seed=cfg.seed + 10_000, workers=ev.workers)

        record: dict[str, Any] = {"steps": steps}
        record.update(play({name: name for name in cfg.eval_opponents}))
        newest = self.pool.newest
        if newest is not None and newest.steps < steps:
            vs = play({newest.name: policy_factory(newest.policy, newest.name)})
            record["snapshot"] = vs["opponents"]
        added = None
        if self.pool.beaten_by(record):
            added = self._add_snapshot(steps, "beats the pool").name
        record["snapshot_added"] = added
        record["wall_time"] = self.wall_time
        self.seconds["eval"] += time.perf_counter() - began
        record["seconds"] = time.perf_counter() - began
        self.history.append(record)
        self._write_history()
        self._log_eval(record)
        self.last["eval"] = steps
        say(f"eval @ {steps:,}: {summary(record)}"
            + (f" | vs {next(iter(record['snapshot']))} {next(iter(record['snapshot'].values()))['win_rate']:.0%}"
               if "snapshot" in record else "")
            + (f" -> {added} joins the pool" if added else ""))
        return added is not None

    def _add_snapshot(self, steps: int, why: str):
        snapshot = self.pool.add(self.model, steps, self._meta(steps))
        self.last["snapshot"] = steps
        self.output.say(f"snapshot {snapshot.name} ({why}); pool: {self.pool.describe()}")
        return snapshot

    def _set_opponents(self) -> None:
        if self.cfg.num_players > 1:
            self.env.set_opponents(self.pool.opponents())

    def _checkpoint(self, steps: int) -> None:
        began = time.perf_counter()
        self.last["checkpoint"] = steps

        def files(folder: Path) -> None:
            self.model.save(folder / checkpoint.MODEL)
            write_game(folder / checkpoint.MODEL, self.cfg.name, self.cfg.table)  # for `qwixx bench`
            self.pool.copy_files(folder / checkpoint.SNAPSHOTS)

        checkpoint.save(self.out, self._state(steps), files)
        self.seconds["checkpoint"] += time.perf_counter() - began

    def _state(self, steps: int) -> dict[str, Any]:
        return {
            "format": "training.checkpoint/1",
            "steps": steps,
            "wall_time": self.wall_time,
            "segment": self.segment,
            "seeds": {"config": self.cfg.seed, "segment_seed": segment_seed(self.cfg.seed, self.segment)},
            "config": self.cfg.to_dict(),
            "pool": self.pool.entries(),
            "last": dict(self.last),
            "eval_history": self.history,
            "bc": self.bc_stats,
            "seconds": self.seconds,
            "machine": machine(),
        }

    def _restore(self, state: dict[str, Any], folder: Path) -> None:
        if int(state["steps"]) != self.steps:
            raise ValueError(f"checkpoint {folder}: state.json says {state['steps']} steps, model.zip {self.steps}")
        self.pool.restore(state["pool"], folder / checkpoint.SNAPSHOTS)
        self.history = state["eval_history"]
        self.last = state["last"]
        self.bc_stats = state["bc"]
        self.wall_before = float(state["wall_time"])
        self._write_history()  # evaluations after the checkpoint belong to the lost segment

    def _write_history(self) -> None:
        """eval.jsonl, a record per line, rewritten whole and atomically: a kill never leaves
        a half-written line."""
        write_atomically(self.out / "eval.jsonl", "".join(json.dumps(r) + "\n" for r in self.history).encode())

    def _check_resumable(self, state: dict[str, Any]) -> None:
        try:
            saved = config_from_dict(state["config"]).to_dict()
        except ValueError as err:
            raise ValueError(f"--resume: the checkpoint's saved config is not valid here: {err}") from None
        now = self.cfg.to_dict()
        changed = sorted(k for k in now if k not in RESUMABLE_CHANGES and now[k] != saved.get(k))
        if changed:
            raise ValueError(
                f"--resume: the config differs from the checkpoint's in {changed}; resume with the same config "
                f"(only {list(RESUMABLE_CHANGES)} may change)"
            )

    def _meta(self, steps: int) -> dict[str, Any]:
        return {
            "name": self.cfg.name,
            "config": self.cfg.to_dict(),
            "steps": steps,
            "wall_time": self.wall_time,
            "machine": machine(),
            "bc": self.bc_stats,
            "last_eval": self.history[-1] if self.history else None,
        }

    def _log_eval(self, record: dict[str, Any]) -> None:
        steps = record["steps"]
        if "solo" in record:
            self.tb.add_scalar("eval/score_mean", record["solo"]["score_mean"], steps)
        for group in ("opponents", "snapshot"):
            for label, r in record.get(group, {}).items():
                tag = "snapshot" if group == "snapshot" else label
                self.tb.add_scalar(f"eval/{tag}/win_rate", r["win_rate"], steps)
                self.tb.add_scalar(f"eval/{tag}/score_mean", r["score_mean"], steps)
        self.tb.add_scalar("pool/snapshots", len(self.pool.snapshots), steps)
        self.tb.flush()


def machine() -> dict[str, Any]:
    """Where the run happens (stored with checkpoints and the exported policy)."""
    import torch

    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def segment_seed(seed: int, segment: int) -> int:
    """The seed of a run's `segment`-th part (0: the start; each `--resume` the next one),
    within the 32 bits that numpy's global seeding accepts."""
    return (seed + 1_000_003 * segment) % 2**32
