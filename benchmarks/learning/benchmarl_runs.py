"""BenchMARL's reference curves: IPPO, MAPPO and QMIX on the Qwixx task, from scratch, in self-play.

    build/venv-benchmarl/bin/python benchmarks/learning/benchmarl_mappo.py --table classic-2p --seeds 0 1 2

What the three learner scripts share (``benchmarl_ippo.py``, ``benchmarl_mappo.py``,
``benchmarl_qmix.py``, learners ``benchmarl-ippo``, ...): each runs `main` with its algorithm,
BenchMARL's own config of it (``IppoConfig.get_from_yaml()``, ...), its MLP and its experiment
defaults (``ExperimentConfig.get_from_yaml()``: batch sizes, passes, learning rate, gamma,
exploration), with only the run's length, the seed and the logging set here. Every seat is a
learner (`qwixx_env.integrations.benchmarl`, with `QwixxCallback`):

- IPPO and MAPPO in the table group (``groups="table"``): one policy shared by the seats
  (BenchMARL's ``share_policy_params``), so it is pure self-play and the policy the curve
  evaluates is the one that played every seat; MAPPO with a critic head per seat over every
  seat's observation (``share_param_critic=False``, as the table group requires).
- QMIX with a group per seat (the table group refuses off-policy algorithms): each seat its own
  Q-network and mixer, trained against the other seats' learners; the curve evaluates seat 0's
  network, and its decisions are seat 0's.

A decision is one the evaluated network chose in training (exploration included): a frame in
which its seat decides. BenchMARL counts frames, so the run is given the frames that the budget
needs at the table's decisions per frame (measured over random games first), with a margin,
and ends at the first batch at or past the budget (a `BudgetReached` raised from the callback,
after which BenchMARL prints that the experiment "failed and is closing gracefully"); each
evaluation point is taken after the first batch at or past it (`common.Curve`). ``--quick``
trains smaller batches (`QUICK_FRAMES` frames, two passes; ten optimizer steps off-policy), as
one default batch alone passes its budget. Needs the ``benchmarl`` extra (run it with
``build/venv-benchmarl/bin/python``, which ``make test-integrations`` builds).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import warnings

import common  # the learner scripts put this folder on sys.path
import numpy as np
import torch
from benchmarl.algorithms import IppoConfig, MappoConfig, QmixConfig
from benchmarl.experiment import Callback, Experiment, ExperimentConfig
from benchmarl.models import MlpConfig

from qwixx_env import qwixx_v0
from qwixx_env.core import TableOptions
from qwixx_env.integrations.benchmarl import DECIDES, QwixxCallback, QwixxTask, SeatPolicy

ALGORITHMS = {"ippo": IppoConfig, "mappo": MappoConfig, "qmix": QmixConfig}
GROUPS = {"ippo": "table", "mappo": "table", "qmix": "seat"}
"""Each algorithm's grouping: the table group where BenchMARL allows it (on-policy)."""
MARGIN = 1.1
"""Frames given to BenchMARL beyond the budget's estimate; the run stops at the budget."""
QUICK_FRAMES = 400
"""Frames per batch of a ``--quick`` run (BenchMARL's default is 6,000)."""


class BudgetReached(Exception):
    """Raised by `Points` once the budget's point is taken, to end BenchMARL's run there."""


class Points(Callback):
    """Counts the evaluated network's decisions in each collected batch and, once a batch has
    trained past the next checkpoint, takes the curve's point there."""

    def __init__(self, curve: common.Curve, group: str, targets: list[int]):
        super().__init__()
        self.curve, self.group, self.targets = curve, group, list(targets)
        self.decisions = 0

    def on_batch_collected(self, batch) -> None:
        self.decisions += int(batch.get((self.group, "observation", DECIDES)).sum())

    def on_train_end(self, training_td, group: str) -> None:
        if group != list(self.experiment.train_group_map)[-1]:
            return  # every group trains on the batch before the point
        if self.targets and self.decisions >= self.targets[0]:
            while self.targets and self.decisions >= self.targets[0]:
                self.targets.pop(0)
            self.curve.point(self.decisions, SeatPolicy(self.experiment, 0).act)
            if not self.targets:
                raise BudgetReached


def decisions_per_frame(table: TableOptions, group: str, games: int = 200) -> float:
    """The evaluated network's decisions per frame over random games of `table`'s Parallel view:
    every seat's in the table group, seat 0's with a group per seat."""
    env = qwixx_v0.parallel_env(table=table)
    rng = np.random.default_rng(0)
    frames = decisions = 0
    for game in range(games):
        observations, _ = env.reset(seed=game)
        while env.agents:
            acting = env.acting_agents
            decisions += len(acting) if group == "players" else int("player_0" in acting)
            frames += 1
            actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in observations.items()}
            observations, *_ = env.step(actions)
    return decisions / frames


def experiment_config(decisions: int, per_frame: float, quick: bool) -> ExperimentConfig:
    """BenchMARL's experiment defaults, long enough for `decisions` at `per_frame` decisions a
    frame (whole batches, `MARGIN` more), with no logging, files or evaluation of its own;
    `quick`: batches of `QUICK_FRAMES` frames, two passes over each (on-policy) or ten
    optimizer steps (off-policy)."""
    config = ExperimentConfig.get_from_yaml()
    if quick:
        config.on_policy_collected_frames_per_batch = config.off_policy_collected_frames_per_batch = QUICK_FRAMES
        config.on_policy_minibatch_size = QUICK_FRAMES // 2
        config.on_policy_n_minibatch_iters = 2
        config.off_policy_n_optimizer_steps = 10
    batch = max(config.on_policy_collected_frames_per_batch, config.off_policy_collected_frames_per_batch)
    config.max_n_frames = batch * math.ceil(MARGIN * decisions / per_frame / batch)
    config.evaluation = False
    config.loggers = []
    config.create_json = False
    config.render = False
    config.checkpoint_interval = 0
    return config


def run(algorithm: str, table_name: str, seed: int, args: argparse.Namespace) -> common.Curve:
    """One seed's curve (see the module doc)."""
    learner = f"benchmarl-{algorithm}"
    groups = GROUPS[algorithm]
    group = "players" if groups == "table" else "player_0"
    table = common.table_options(table_name)
    against = "itself (one policy in every seat)" if groups == "table" else "the other seats' learners (a network each)"
    curve = common.Curve(
        learner,
        library="benchmarl",
        algorithm=algorithm.upper(),
        table=table_name,
        seed=seed,
        trained_against=against,
        deals=args.deals,
    )
    config = experiment_config(args.decisions, decisions_per_frame(table, group), args.quick)
    algorithm_config = ALGORITHMS[algorithm].get_from_yaml()
    if algorithm == "mappo":
        algorithm_config.share_param_critic = False  # a critic head per seat: the table group requires it
    with tempfile.TemporaryDirectory(prefix=f"{learner}-") as folder:
        config.save_folder = folder
        task = QwixxTask.QWIXX.get_task(config={**table.as_dict(), "groups": groups})
        points = Points(curve, group, common.checkpoints(args.decisions, args.points)[1:])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TorchRL's note on the PettingZoo release it tested, and the like
            experiment = Experiment(
                task=task,
                algorithm_config=algorithm_config,
                model_config=MlpConfig.get_from_yaml(),
                seed=seed,
                config=config,
                callbacks=[QwixxCallback(), points],
            )
            curve.point(0, SeatPolicy(experiment, 0).act)
            try:
                experiment.run()
            except BudgetReached:
                pass
    if points.targets:  # BenchMARL's frames ran out first: the last point where the run ended
        curve.point(points.decisions, SeatPolicy(experiment, 0).act)
    return curve


def main(algorithm: str) -> None:
    """The learner script of `algorithm` (a key of `ALGORITHMS`): its command line, its runs, its file."""
    args = common.arguments(
        f"benchmarl-{algorithm}",
        f"BenchMARL's {algorithm.upper()} on the Qwixx task with "
        "BenchMARL's default settings, from scratch, every seat a learner",
    )
    torch.set_num_threads(1)  # one core a run, as the other runners (two runs share this 2-core machine)
    curves = [run(algorithm, args.table, seed, args) for seed in args.seeds]
    if not args.quick:
        grouping = (
            "one group of every seat sharing one policy (groups='table')"
            if GROUPS[algorithm] == "table"
            else "a group per seat (groups='seat'), seat 0's network evaluated"
        )
        critic = ", share_param_critic=False" if algorithm == "mappo" else ""
        path = common.write(
            curves,
            budget=args.decisions,
            versions=common.versions("benchmarl", "torchrl", "torch"),
            notes=f"BenchMARL's {ALGORITHMS[algorithm].__name__}.get_from_yaml(){critic}, MlpConfig and "
            f"ExperimentConfig defaults (only max_n_frames, the seed and logging set), {grouping}; "
            "every seat a learner; a decision is a frame in which the evaluated network's seat decides; "
            "each point after the first collected batch at or past it",
        )
        print(f"wrote {path}")
