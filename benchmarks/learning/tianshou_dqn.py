"""Tianshou DQN's reference curve: Tianshou's off-policy trainer on `tianshou_env`, self-play.

    build/venv-tianshou/bin/python benchmarks/learning/tianshou_dqn.py --table classic-2p --seeds 0 1 2

Tianshou's `DQN` (its defaults: gamma 0.99, double DQN, MSE loss) with the settings of
Tianshou's own DQN quick start (`SETTINGS`: a 4-layer 128-unit `Net`, Adam at 1e-3, 3-step
returns, the target network renewed every 320 updates, epsilon 0.1 in training, 10 training
envs collecting 10 steps at a time, one gradient step per 10 collected, a 20,000-transition
buffer, batches of 64), trained by ``run_training`` on `qwixx_env.integrations.tianshou.tianshou_env`:
one learning seat (drawn per game), every transition from its decision to its next. The other
seats are a frozen copy of the learner, renewed every `SNAPSHOT_EVERY` decisions (self-play;
the first copy is the initial network). A decision is one learner step of the training envs;
at each point the network's masked greedy choice is evaluated (`common.Curve`). Needs the
``tianshou`` extra (``KEEP=1 ONE=1 .ci/test-integrations tianshou``).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from tianshou.algorithm import DQN  # noqa: E402
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.data import Batch, Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv  # noqa: E402
from tianshou.trainer import OffPolicyTrainerParams  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402

from qwixx_env.integrations.tianshou import tianshou_env  # noqa: E402

LEARNER = "tianshou-dqn"
SNAPSHOT_EVERY = 20_000
SETTINGS = dict(
    hidden_sizes=[128, 128, 128, 128],
    lr=1e-3,
    n_step=3,
    target_update_freq=320,
    eps_training=0.1,
    training_envs=10,
    collect_steps=10,
    gradient_steps_per_sample=0.1,
    buffer_size=20_000,
    batch_size=64,
)


def has_nan(value) -> bool:
    """Whether `value` (an array or a Tianshou `Batch` of them) holds a NaN, read in place."""
    if isinstance(value, Batch):
        return any(has_nan(v) for v in value.values())
    array = np.asarray(value)
    return array.dtype.kind in "fc" and bool(np.isnan(array).any())


class Buffer(VectorReplayBuffer):
    """Tianshou's `VectorReplayBuffer` with its NaN check made cheap, the check unchanged.

    Tianshou's trainer checks the whole buffer for NaNs after every collect (`hasnull`), and its
    check copies the buffer first (``self[:]``, a deep copy) and then runs pandas' `isnull` over
    every field: with a full 20,000-transition buffer that was most of the run's time (measured
    with cProfile: 89 of 130 s of a 20,000-decision run). This reads the stored fields in place.
    """

    FIELDS = ("obs", "act", "rew", "terminated", "truncated", "done", "obs_next")

    def hasnull(self) -> bool:
        for field in self.FIELDS:
            try:
                value = getattr(self, field)
            except AttributeError:  # not stored yet (an empty buffer)
                continue
            if has_nan(value):
                return True
        return False


def greedy(net: Net, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The net's legal action of highest value for each row."""
    with torch.no_grad():
        q = net(torch.as_tensor(observations, dtype=torch.float32))[0]
    q[torch.as_tensor(masks) == 0] = -torch.inf
    return q.argmax(dim=1).numpy()


class Frozen:
    """A frozen copy of the learner's net as the envs' opponent policy, renewed in place."""

    def __init__(self, net: Net):
        self.net = copy.deepcopy(net).eval()

    def renew(self, net: Net) -> None:
        self.net.load_state_dict(net.state_dict())

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return greedy(self.net, observations, masks)


def curve(args, seed: int) -> common.Curve:
    table = common.table_options(args.table)
    s = SETTINGS
    torch.manual_seed(seed)
    np.random.seed(seed)  # noqa: NPY002 (Tianshou's epsilon-greedy and replay sampling draw from NumPy's global generator)
    probe = tianshou_env(table=table)
    net = Net(
        state_shape=probe.observation_space["obs"].shape,
        action_shape=probe.action_space.n,
        hidden_sizes=s["hidden_sizes"],
    )
    frozen = Frozen(net)
    learner = DQN(
        policy=DiscreteQLearningPolicy(model=net, action_space=probe.action_space, eps_training=s["eps_training"]),
        optim=AdamOptimizerFactory(lr=s["lr"]),
        n_step_return_horizon=s["n_step"],
        target_update_freq=s["target_update_freq"],
    )
    envs = DummyVectorEnv([lambda: tianshou_env(table=table, opponents=frozen)] * s["training_envs"])
    envs.seed(seed)
    collector = Collector(
        learner, envs, Buffer(s["buffer_size"], buffer_num=s["training_envs"]), exploration_noise=True
    )
    out = common.Curve(
        LEARNER,
        library="tianshou",
        algorithm="DQN",
        table=args.table,
        seed=seed,
        trained_against="a frozen copy of itself",
        deals=args.deals,
    )
    decisions, renewed = 0, 0
    for point in common.checkpoints(args.decisions, args.points):
        while decisions < point:
            stretch = min(point, renewed + SNAPSHOT_EVERY) - decisions
            result = learner.run_training(
                OffPolicyTrainerParams(
                    training_collector=collector,
                    max_epochs=1,
                    epoch_num_steps=stretch,
                    collection_step_num_env_steps=s["collect_steps"],
                    update_step_num_gradient_steps_per_sample=s["gradient_steps_per_sample"],
                    batch_size=s["batch_size"],
                    show_progress=False,
                    verbose=False,
                )
            )
            decisions += result.train_step
            if decisions - renewed >= SNAPSHOT_EVERY:
                frozen.renew(net)
                renewed = decisions
        net.eval()
        out.point(decisions, lambda obs: int(greedy(net, obs["observation"][None], obs["action_mask"][None])[0]))
        net.train()
    return out


def main() -> None:
    args = common.arguments(LEARNER, "Tianshou DQN (its quick start's settings) on tianshou_env, self-play")
    torch.set_num_threads(1)
    curves = [curve(args, seed) for seed in args.seeds]
    if not args.quick:
        path = common.write(
            curves,
            budget=args.decisions,
            versions=common.versions("tianshou", "torch"),
            notes=(
                "Tianshou's DQN (gamma 0.99, double) with its quick start's settings: Net 4x128, Adam 1e-3, 3-step "
                "returns, target every 320 updates, epsilon 0.1, 10 envs collecting 10 steps, 0.1 gradient steps per "
                f"sample, buffer 20,000, batch 64; on tianshou_env (one learning seat, drawn per game). Self-play: the "
                f"other seats are a frozen copy of the learner renewed every {SNAPSHOT_EVERY:,} decisions."
            ),
        )
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
