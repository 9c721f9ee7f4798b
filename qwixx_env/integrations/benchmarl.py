"""BenchMARL: Qwixx and Qwixx Longo as a BenchMARL task, for any table.

>>> from benchmarl.algorithms import IppoConfig
>>> from benchmarl.experiment import Experiment, ExperimentConfig
>>> from benchmarl.models import MlpConfig
>>> from qwixx_env.integrations.benchmarl import QwixxCallback, QwixxTask, evaluate
>>> task = QwixxTask.QWIXX.get_task(config={"num_players": 3, "variant": "longo"})
>>> experiment = Experiment(task=task, algorithm_config=IppoConfig.get_from_yaml(),
...                         model_config=MlpConfig.get_from_yaml(), seed=0,
...                         config=ExperimentConfig.get_from_yaml(), callbacks=[QwixxCallback("greedy")])
>>> experiment.run()
>>> evaluate(experiment, opponent="greedy", games=300)    # win share against the bot, 95% interval

BenchMARL's custom-task pattern: `QwixxTask`, the enum a user names, and `QwixxClass`, its
`TaskClass`. The task config holds the table options of ``qwixx_v0.env()`` (`TableOptions`:
``num_players`` 1 to 5, ``variant``, ``lucky``, ``lucky_numbers``, ``start_player``,
``reward``, ``score_table``) and ``groups``, ``"seat"`` (the default) or ``"table"``, checked
when the task is made. How it trains:

- **The env is the Parallel view** (`qwixx_v0.parallel_env`) in TorchRL's `PettingZooWrapper`:
  one frame per parallel step (a whole white action, a Longo lucky tie, a colour action).
  `DecidingSeats` adds to each seat's observation whether it decides in the coming step
  (``(group, "observation", "decides")`` in TorchRL's data, not fed to the networks): every
  seat in a white action, only the seat to decide otherwise. A seat without a decision has
  pass alone in its action mask.
- **Only a seat's own decisions train it.** Each group's replay buffer keeps, of every batch it
  is given, the frames in which one of its seats has a decision to train on
  (`DecidingFramesOnly`), and `QwixxCallback` (which every experiment on this task takes) hands
  each on-policy buffer one batch at a time. PPO's advantages (IPPO, MAPPO) run on each seat's
  own clock (`seat_clock`): from a decision to the seat's next one, the rewards between summed,
  bootstrapped from the value at that next decision, never from a waiting frame's (which no
  loss fits). A decision whose next one the batch cuts off is not trained (`trained_frames`).
  Off-policy (IQL, VDN, QMIX, MASAC), each stored transition is carried on to the seat's next
  decision (`successor_frames`, `to_next_decision`): its next observation, mask and done that
  decision's, its reward the sum.
- **``groups="seat"``: one group per seat** (``player_0``, ``player_1``, ...), each with its own
  networks; the default, as it serves every algorithm. A seat's buffer drops its waiting frames
  whole. Each group holds one seat, so a centralised critic sees that seat alone (MAPPO is
  IPPO, MASAC is ISAC) and each seat's mixer mixes its own Q-value (VDN is IQL; QMIX a
  monotone map of the seat's Q-value): the callback warns of the first two (`check_grouping`).
  BenchMARL logs each seat's own return.
- **``groups="table"``: one group** ``players`` **of every seat**, for IPPO and MAPPO. With
  BenchMARL's ``share_policy_params`` (its default) the seats share one policy, as in
  self-play; it needs no seat id, as each seat's observation is its own view of the table (its
  own sheet first, the others clockwise, the active player counted in seats from it), so the
  shared policy plays any seat. MAPPO's critic sees every seat's observation, with a head per
  seat (``share_param_critic=False``; a critic shared by the seats, one value for a zero-sum
  table, is refused). BenchMARL trains a group's frames whole, every seat in one row, and in
  one frame some seats decide while others wait: a waiting seat's row (or a decision the batch
  cuts off) gets advantage 0, so the clipped objective gives it no gradient; with pass its only
  legal action its entropy is 0 and gives none; and at each draw its value target is the
  critic's present value of it (`critic_values`), so the critic loss gives none. Off-policy
  algorithms are refused: a frame's row holds every seat, whose transitions run to different
  frames, and VDN's and QMIX's mixers would fit the group's one reward, the mean of the seats'
  zero-sum rewards (`check_grouping`). BenchMARL's logged return is that mean, 0 with two seats.
- **The score that means something** is the win share against a bot, with its 95% Wilson
  interval: `evaluate` plays the trained seats against a bot of `qwixx_env.bots` on this
  package's arena table, and `QwixxCallback(opponent)` does so at every BenchMARL evaluation,
  logs it and prints it on the console.
- **Tables by name**: a `QwixxTask` member per table of the training configs, its YAML shipped
  in `qwixx_env.integrations.benchmarl_conf` (`QwixxTask.CLASSIC_3P.get_from_yaml()`); the
  package's Hydra plugin puts them on BenchMARL's command line as ``task=qwixx/<name>``
  (`register_tasks`), run with the callback by ``python -m qwixx_env.integrations.benchmarl_run``.
- **No recurrent models**: `QwixxCallback` refuses one when the experiment is made (its
  sequences would lose the frames each seat does not train on).

Wrapping the AEC env (`qwixx_v0.env()`) in `PettingZooWrapper` yourself trains on actions the
env ignores: each frame is one seat's decision, TorchRL gives every other seat an all-ones
action mask and flags it only in ``(group, "mask")``, which BenchMARL's losses never read, so
about half of a seat's trained frames in a 2-player game are actions nothing played.

Needs the ``benchmarl`` extra (``pip install "qwixx_env[benchmarl]"``); importing `qwixx_env`
never imports this module. `docs/integrations.md` has the snippet as tested.
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, cast

import numpy as np
import torch
import yaml
from benchmarl.algorithms import Vdn  # pyright: ignore[reportMissingImports]
from benchmarl.environments import Task, TaskClass, task_config_registry  # pyright: ignore[reportMissingImports]
from benchmarl.experiment import Experiment  # pyright: ignore[reportMissingImports]
from benchmarl.experiment.callback import Callback  # pyright: ignore[reportMissingImports]
from gymnasium import spaces
from pettingzoo.utils import BaseParallelWrapper
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Composite
from torchrl.envs import EnvBase, PettingZooWrapper, Transform
from torchrl.envs.utils import ExplorationType, MarlGroupMapType, set_exploration_type
from torchrl.objectives import PPOLoss
from torchrl.objectives.value import GAE
from tqdm import tqdm

from qwixx_env.arena.play import TableConfig, play_games
from qwixx_env.arena.schedule import bot_entries
from qwixx_env.arena.stats import mean_and_se, wilson_interval, win_shares
from qwixx_env.bots import make_bot
from qwixx_env.core.checks import check_int
from qwixx_env.core.options import TableOptions, table_from
from qwixx_env.envs.parallel import ParallelQwixx
from qwixx_env.envs.qwixx_v0 import parallel_env

DECIDES = "decides"
"""The observation entry (`DecidingSeats`) that says whether a seat decides in the coming step;
``(group, "observation", "decides")`` in TorchRL's data."""


GROUPINGS = ("seat", "table")
"""The task's ``groups`` option: ``"seat"``, one group per seat (``player_0``, ...), or
``"table"``, one group `TABLE_GROUP` holding every seat."""

TABLE_GROUP = "players"
"""The name of the one group of ``groups="table"``."""


class DecidingSeats(BaseParallelWrapper):
    """The Parallel view with one more observation entry, ``"decides"``: 1 for the seats that
    decide in the coming step (the view's `acting_agents`), 0 for the others and once the game
    is over. (Not an info entry: BenchMARL leaves infos out of the data it trains on.)"""

    def __init__(self, env: ParallelQwixx):
        super().__init__(env)
        self.view = env
        decides = spaces.MultiBinary(1)
        self.observation_spaces = {
            agent: spaces.Dict({**cast(spaces.Dict, env.observation_space(agent)).spaces, DECIDES: decides})
            for agent in env.possible_agents
        }

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._flagged(observations), infos

    def step(self, actions):
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return self._flagged(observations), rewards, terminations, truncations, infos

    def _flagged(self, observations: dict[str, dict]) -> dict[str, dict]:
        acting = set(self.view.acting_agents)
        return {agent: {**obs, DECIDES: np.array([agent in acting], np.int8)} for agent, obs in observations.items()}


def make_env(
    table: TableOptions, seed: int | None = None, device: Any = "cpu", groups: str = "seat"
) -> PettingZooWrapper:
    """The task's TorchRL env: `DecidingSeats` over ``qwixx_v0.parallel_env(table=table)``,
    categorical actions, each seat's action mask at ``(group, "action_mask")``; with
    ``groups="seat"`` one group per seat, with ``groups="table"`` one group `TABLE_GROUP` of
    every seat."""
    if groups not in GROUPINGS:
        raise ValueError(f"groups: got {groups!r}; expected one of {GROUPINGS}")
    env = parallel_env(table=table)
    if groups == "table":
        group_map: MarlGroupMapType | dict[str, list[str]] = {TABLE_GROUP: list(env.possible_agents)}
    else:
        group_map = MarlGroupMapType.ONE_GROUP_PER_AGENT
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PettingZoo in TorchRL is tested")  # it runs on this package's release
        return PettingZooWrapper(
            DecidingSeats(env),
            group_map=group_map,
            categorical_actions=True,
            seed=seed,
            device=device,
        )


class DecidingFramesOnly(Transform):
    """A replay-buffer transform: of each batch stored for `group` it keeps the frames in which
    one of its seats has a decision to train on, so that no loss ever sees a waiting seat's action.

    It needs `QwixxCallback` in the experiment, and says so at the first batch otherwise:
    BenchMARL's on-policy buffer holds one batch because each batch overwrites the last, and a
    batch made shorter would leave frames of older policies behind; the callback empties it first.

    In a group of several seats (``groups="table"``, PPO only) a kept frame can hold a seat that
    waits, or whose decision's return the batch cuts off: that seat's row of the frame trains
    nothing. Its advantage is set to 0 when the batch is stored, so the clipped objective gives
    it no gradient, and at each draw its value target is set to the critic's present value of
    it (`fresh_values`, which the callback sets), so the critic loss gives it none either.
    """

    def __init__(self, group: str):
        super().__init__()
        self.group = group
        self.callback_ready = False  # set by QwixxCallback.on_setup
        self.fresh_values: Callable[[TensorDictBase], torch.Tensor] | None = None  # set by QwixxCallback.on_setup

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        trained = tensordict.get((self.group, TRAINED), None)
        if self.fresh_values is None or trained is None or trained.all():
            return tensordict  # drawn as stored
        # (target - value)^2 with the target the value the loss is about to compute: no gradient
        target = (self.group, "value_target")
        stored = tensordict.get(target)
        tensordict.set(target, torch.where(trained, stored, self.fresh_values(tensordict).to(stored.device)))
        return tensordict

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        if not self.callback_ready:
            raise RuntimeError(
                "the Qwixx task trains each seat only on the frames in which it decides, which needs "
                "qwixx_env.integrations.benchmarl.QwixxCallback() in the Experiment's callbacks (on the "
                "command line: python -m qwixx_env.integrations.benchmarl_run, BenchMARL's run.py with it)"
            )
        if tensordict.ndim != 1:
            raise ValueError(
                f"{self.group}: got a batch of shape {tuple(tensordict.shape)}; this task trains on single frames "
                "(a recurrent model's sequences cannot drop the frames in which a seat waits): use a model "
                "without memory, such as MlpConfig"
            )
        frames = tensordict.shape[0]
        successor = tensordict.get((self.group, SUCCESSOR), None)  # set by QwixxCallback off-policy
        if successor is not None:
            tensordict = to_next_decision(tensordict, successor.reshape(frames))
        trained = tensordict.get((self.group, TRAINED), None)  # set by QwixxCallback
        if trained is None:
            trained = tensordict.get((self.group, "observation", DECIDES))
        trained = trained.bool()  # (frames, seats, 1)
        keep = trained.reshape(frames, -1).any(-1)
        tensordict = cast(TensorDictBase, tensordict[keep])
        advantage = tensordict.get((self.group, "advantage"), None)  # on-policy
        if advantage is not None:
            tensordict.set((self.group, "advantage"), torch.where(trained[keep], advantage, 0.0))
        return tensordict


def critic_values(loss: PPOLoss, tensordict: TensorDictBase) -> torch.Tensor:
    """The values that `loss`'s critic (a TorchRL PPO loss's, with its present parameters) gives
    the frames of `tensordict`, at the loss's value key, computed as the loss computes them (on
    the critic's device: BenchMARL draws from the buffer's device and trains on its own)."""
    params = loss.critic_network_params
    device = next(iter(params.values(True, True))).device
    with torch.no_grad(), params.to_module(loss.critic_network):
        return loss.critic_network(tensordict.clone(False).to(device)).get(loss.tensor_keys.value)


SUCCESSOR = "qwixx_successor"
"""The batch entry ``(group, "qwixx_successor")`` that `QwixxCallback` writes for an off-policy
batch: for each frame, the index (in the batch flattened, as BenchMARL stores it) of the frame
whose next observation is the seat's next decision or the game's end; -1 past the batch."""


def successor_frames(decides_next: torch.Tensor, done_next: torch.Tensor) -> torch.Tensor:
    """For each frame of a batch (envs, frames, ...), the flattened index ``env * frames + u`` of
    the first frame u >= t after which the seat decides or the game ends; -1 if none in the batch."""
    ends = (decides_next.bool() | done_next.bool()).reshape(decides_next.shape[0], decides_next.shape[1])
    envs, frames = ends.shape
    found = torch.full((envs,), -1, dtype=torch.int64)
    index = torch.empty((envs, frames), dtype=torch.int64)
    offsets = torch.arange(envs, dtype=torch.int64) * frames
    for t in range(frames - 1, -1, -1):
        found = torch.where(ends[:, t], offsets + t, found)
        index[:, t] = found
    return index.reshape(decides_next.shape)


def to_next_decision(tensordict: TensorDictBase, successor: torch.Tensor) -> TensorDictBase:
    """Each frame's transition carried on to `successor` (a frame index per frame, as
    `successor_frames` gives; -1 leaves the frame as it is): every ``"next"`` entry taken from
    that frame, the rewards summed from this frame to that one."""
    frames = torch.arange(tensordict.shape[0])
    reaches = successor >= 0
    target = torch.where(reaches, successor, frames)
    following = cast(TensorDictBase, tensordict.get("next"))
    carried = cast(TensorDictBase, following[target])
    for key in following.keys(include_nested=True, leaves_only=True):
        name = key if isinstance(key, str) else key[-1]
        if name == "reward":
            reward = following.get(key)
            total = reward.cumsum(0)
            carried.set(key, total[target] - total + reward)  # the rewards of frames t..target
    out = tensordict.clone(recurse=False)
    out.set("next", carried)
    return out


TRAINED = "qwixx_trained"
"""The batch entry ``(group, "qwixx_trained")`` that `QwixxCallback` writes for an on-policy batch:
the seat's deciding frames whose return to the seat's next decision (or the game's end) lies in
the batch, the frames `DecidingFramesOnly` keeps."""


def seat_clock(
    decides_next: torch.Tensor, done_next: torch.Tensor, gamma: float, lmbda: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE's discount and lambda for each frame of one seat, on the seat's own clock: 1 and 1 for
    a frame after which the seat waits (the game not over), `gamma` and `lmbda` otherwise.

    With these, GAE's recursion over every frame gives at each of the seat's decisions exactly the
    GAE of the seat's own decisions: the rewards up to its next decision summed, bootstrapped from
    the value at that decision (the values of the waiting frames between cancel out). Any shape:
    `decides_next` (the ``"decides"`` entry of the next observation) and `done_next` alike."""
    waits = (decides_next == 0) & ~done_next.bool()
    one = torch.ones((), dtype=torch.float32, device=waits.device)
    return torch.where(waits, one, gamma), torch.where(waits, one, lmbda)


def trained_frames(decides: torch.Tensor, decides_next: torch.Tensor, done_next: torch.Tensor) -> torch.Tensor:
    """Of a batch's frames (time on dim 1), the seat's deciding frames whose next decision, or the
    game's end, lies in the batch: the last deciding frame of a game cut by the batch's end, the
    seat waiting from there on, would bootstrap from a waiting frame's value, never fitted."""
    decides, decides_next, done_next = decides.bool(), decides_next.bool(), done_next.bool()
    # reached[t]: from frame t on, the seat decides again or the game ends within the batch
    reached = torch.zeros_like(decides)
    ahead = torch.zeros_like(decides.select(1, 0))
    for t in range(decides.shape[1] - 1, -1, -1):
        ahead = decides_next.select(1, t) | done_next.select(1, t) | (ahead & ~done_next.select(1, t))
        reached.select(1, t).copy_(ahead)
    return decides & reached


class QwixxClass(TaskClass):
    """The BenchMARL task of one table; `config` holds its table options and ``groups`` (one of
    `GROUPINGS`, default ``"seat"``; see the module doc).

    A bad option is a `ValueError` (a bad value) or `TypeError` (an unknown name) when the task
    is made, before any experiment starts.
    """

    def __init__(self, name: str, config: Mapping[str, Any] | None):
        if config is None:
            config = {}
        if not isinstance(config, Mapping):
            raise TypeError(f"config: got {config!r}; expected a dict of table options and 'groups'")
        options = dict(config)
        groups = options.pop("groups", "seat")
        if not isinstance(groups, str) or groups not in GROUPINGS:
            raise ValueError(
                f"groups: got {groups!r}; expected 'seat' (a group per seat) or 'table' (one group of every seat)"
            )
        self.groups = groups
        self.table = table_from(**options)
        super().__init__(name=name, config={**self.table.as_dict(), "groups": groups})  # defaults filled in

    def get_env_fun(
        self, num_envs: int, continuous_actions: bool, seed: int | None, device: Any
    ) -> Callable[[], EnvBase]:
        # BenchMARL makes every env of a batch with this one function: each gets the next seed,
        # or they would all roll the same dice.
        seeds = itertools.repeat(None) if seed is None else itertools.count(seed)
        table, groups = self.table, self.groups
        return lambda: make_env(table, next(seeds), device, groups)

    def supports_continuous_actions(self) -> bool:
        return False

    def supports_discrete_actions(self) -> bool:
        return True

    def max_steps(self, env: EnvBase) -> int:
        # a roll is at most a white action, a lucky tie per seat and a colour action
        P = self.table.num_players
        return self.table.rules.max_rolls(P) * (P + 2)

    def has_render(self, env: EnvBase) -> bool:
        return False  # render() gives text, not the frames BenchMARL records

    def group_map(self, env: EnvBase) -> dict[str, list[str]]:
        return _group_map(env)

    def observation_spec(self, env: EnvBase) -> Composite:
        spec = _only(env, "observation")
        for group in _group_map(env):
            del spec[group, "observation", DECIDES]  # the loss's filter reads it; the networks do not
        return spec

    def action_mask_spec(self, env: EnvBase) -> Composite | None:
        return _only(env, "action_mask")

    def info_spec(self, env: EnvBase) -> Composite | None:
        return None  # the env's infos are empty

    def state_spec(self, env: EnvBase) -> Composite | None:
        return None  # every seat's observation already shows every sheet

    def action_spec(self, env: EnvBase) -> Composite:
        return env.full_action_spec

    def get_replay_buffer_transforms(self, env: EnvBase, group: str) -> list[Transform]:
        return [DecidingFramesOnly(group)]

    @staticmethod
    def env_name() -> str:
        return "qwixx"

    @staticmethod
    def log_info(batch: TensorDictBase) -> dict[str, float]:
        """The share of collected frames each seat decides in: the frames that train it."""
        return {
            f"collection/{group}/deciding_frames": batch.get((group, "observation", DECIDES)).float().mean().item()
            for group in batch.keys()
            if (group, "observation", DECIDES) in batch.keys(include_nested=True)
        }


def _group_map(env: EnvBase) -> dict[str, list[str]]:
    """The `PettingZooWrapper`'s groups, {"player_0": ["player_0"], ...}, through BenchMARL's
    transforms (a `TransformedEnv` hands on its env's attributes)."""
    return cast("dict[str, list[str]]", env.group_map)


def _only(env: EnvBase, key: str) -> Composite:
    """The env's observation spec with only `key` left in each group."""
    spec = env.observation_spec.clone()
    for group in _group_map(env):
        for name in list(spec[group].keys()):
            if name != key:
                del spec[group][name]
    return spec


class QwixxTask(Task):
    """The Qwixx tasks of BenchMARL, one member per table of the shipped configs:
    ``QwixxTask.QWIXX`` (the default table, 2-player classic), ``CLASSIC_1P`` to ``CLASSIC_5P``,
    ``LONGO_1P`` to ``LONGO_5P`` and ``LONGO_INSTEAD_1P`` to ``LONGO_INSTEAD_5P``, as the
    training configs name them. ``QwixxTask.LONGO_3P.get_from_yaml()`` (or ``get_task()``) reads
    the member's ``task/qwixx/<name>.yaml`` from this package (`benchmarl_conf`);
    ``get_task(config={...table options})`` takes any table; BenchMARL's command line names them
    as ``task=qwixx/<name>`` (see `register_tasks`)."""

    QWIXX = None
    CLASSIC_1P = None
    CLASSIC_2P = None
    CLASSIC_3P = None
    CLASSIC_4P = None
    CLASSIC_5P = None
    LONGO_1P = None
    LONGO_2P = None
    LONGO_3P = None
    LONGO_4P = None
    LONGO_5P = None
    LONGO_INSTEAD_1P = None
    LONGO_INSTEAD_2P = None
    LONGO_INSTEAD_3P = None
    LONGO_INSTEAD_4P = None
    LONGO_INSTEAD_5P = None

    @staticmethod
    def associated_class() -> type[QwixxClass]:
        return QwixxClass

    def get_task(self, config: Mapping[str, Any] | None = None) -> QwixxClass:
        if config is None:
            return self.get_from_yaml()
        return QwixxClass(name=self.name, config=config)

    def get_from_yaml(self, path: str | None = None) -> QwixxClass:
        """The task with the table options of `path`, a YAML file, or by default of this member's
        file in this package (BenchMARL's own tasks read theirs from BenchMARL's folder)."""
        if path is None:
            text = (resources.files(CONFIG_PACKAGE) / "task" / "qwixx" / f"{self.name.lower()}.yaml").read_text()
        else:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        config = yaml.safe_load(text)
        return QwixxClass(name=self.name, config={} if config is None else config)


CONFIG_PACKAGE = "qwixx_env.integrations.benchmarl_conf"
"""The package holding ``task/qwixx/<name>.yaml`` for each `QwixxTask` member."""
SEARCH_PATH = f"hydra.searchpath=[pkg://{CONFIG_PACKAGE}]"
"""The Hydra override that puts those files on a Hydra app's config search path (BenchMARL's
command line: ``python -m benchmarl.run ... task=qwixx/classic_2p`` with it)."""


def register_tasks() -> None:
    """Adds each `QwixxTask` member to BenchMARL's task registry as ``qwixx/<name>``, the name
    its command line takes (``python -m benchmarl.run algorithm=ippo task=qwixx/classic_2p``).
    `qwixx_env.integrations.benchmarl_run` calls it and puts the YAML files on Hydra's search
    path (`SEARCH_PATH`)."""
    tasks = cast("Iterable[QwixxTask]", QwixxTask)  # an Enum (pyright sees BenchMARL's Task as unknown)
    task_config_registry.update({f"{QwixxClass.env_name()}/{task.name.lower()}": task for task in tasks})


class SeatPolicy:
    """The trained policy of one seat as a bot of `qwixx_env.bots`: ``act(observation)`` takes
    the env's observation dict and returns the policy's most likely legal action. With one group
    per seat it is the seat's group's policy; in the table group, the group's policy for that
    seat's row (the seat's own networks, or the ones the seats share)."""

    def __init__(self, experiment: Experiment, seat: int):
        task = cast(QwixxClass, experiment.task)
        self.seat, self.players = seat, task.table.num_players
        self.table_group = task.groups == "table"
        self.group = TABLE_GROUP if self.table_group else f"player_{seat}"
        self.module = experiment.group_policies[self.group]
        self.name = f"trained player_{seat}"

    def act(self, observation: Mapping[str, np.ndarray]) -> int:
        # a row per seat of the group; only this seat's row is read
        rows, row = (self.players, self.seat) if self.table_group else (1, 0)
        vector = torch.as_tensor(observation["observation"]).expand(rows, -1)
        seat = TensorDict(
            {
                "observation": TensorDict({"observation": vector}, [rows]),
                "action_mask": torch.as_tensor(observation["action_mask"], dtype=torch.bool).expand(rows, -1),
            },
            [rows],
        )
        with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
            out = self.module(TensorDict({self.group: seat}, []))
        return int(out.get((self.group, "action"))[row])


@dataclass(frozen=True)
class Evaluation:
    """The trained seats against `opponent` over `games` games (see `evaluate`)."""

    opponent: str
    games: int
    win_share: float | None
    """The trained seat's share of the wins (a k-way tie for the top score gives 1/k); None solo."""
    interval: tuple[float, float] | None
    """The 95% Wilson interval of `win_share`; None solo."""
    score_mean: float
    score_se: float | None
    """The trained seat's mean final score and its standard error."""


def evaluate(experiment: Experiment, opponent: Any = "greedy", games: int = 100, seed: int = 0) -> Evaluation:
    """Play `games` games of the experiment's table: one seat the trained policy of that seat's
    group (its most likely legal action), every other seat `opponent` (a bot spec, as the arena
    takes: ``"greedy"``, ``"heuristic"``, a checkpoint...). The trained seat moves round the
    table game by game, and each deal of the dice (seed ``seed + game // P``) is played from
    every seat in turn, as the arena plays its lineups; each bot is seeded as the arena seeds it.
    """
    task = experiment.task
    if not isinstance(task, QwixxClass):
        raise TypeError(f"experiment: its task is {task!r}; expected a Qwixx task (QwixxTask.QWIXX.get_task(...))")
    games = check_int("games", games, minimum=1, accepted="an integer >= 1")
    seed = check_int("seed", seed, minimum=0)
    table, P = task.table, task.table.num_players
    seats = [lambda *, table, seed, s=s: SeatPolicy(experiment, s) for s in range(P)]
    entries = bot_entries([*seats, opponent])
    try:
        make_bot(entries[-1], table, seed=0)  # a bad spec fails here, before any game
    except (TypeError, ValueError, OSError) as error:
        raise ValueError(f"opponent {entries[-1].label!r}: {error}") from error
    # lineup j: the trained policy of seat j in seat j, the opponent (entry P) everywhere else
    lineups = [tuple(j if s == j else P for s in range(P)) for j in range(P)]
    scores = play_games(TableConfig(entries, lineups, table, seed), games).scores
    trained = np.arange(games) % P
    own = scores[np.arange(games), trained]
    score_mean, score_se = mean_and_se(own)
    if P == 1:
        return Evaluation(entries[-1].label, games, None, None, score_mean, score_se)
    wins = float(win_shares(scores)[np.arange(games), trained].sum())
    return Evaluation(entries[-1].label, games, wins / games, wilson_interval(wins, games), score_mean, score_se)


def console_line(frames: int, result: Evaluation) -> str:
    """What `QwixxCallback` prints at each evaluation: the win share against the bot with its 95%
    interval (solo: the mean score and its standard error)."""
    if result.win_share is None or result.interval is None:
        se = "" if result.score_se is None else f" +- {result.score_se:.1f}"
        return f"qwixx eval at {frames} frames: mean score {result.score_mean:.1f}{se} in {result.games} games"
    low, high = result.interval
    return (
        f"qwixx eval at {frames} frames: win share against {result.opponent} {result.win_share:.3f} "
        f"[{low:.3f}, {high:.3f}] in {result.games} games"
    )


def check_grouping(experiment: Experiment) -> None:
    """Refuses, with the reason, an algorithm that the task's grouping would silently reduce to
    something else, and warns where BenchMARL's algorithm runs as its independent version:

    - the table group (``groups="table"``) with an off-policy algorithm (IQL, VDN, QMIX, MASAC,
      ...): its replay buffer keeps a frame whole, every seat in one row, while each seat's
      transition must run to the seat's own next decision, a different frame for each seat; and
      VDN's and QMIX's mixers would fit the table's one reward, the mean of the seats' zero-sum
      rewards (0 with two seats). Refused: use one group per seat.
    - the table group with a centralised critic shared by the seats (MAPPO's
      ``share_param_critic=True``, its default): that critic gives one value for the whole
      table, while the seats' returns differ (one seat's win is the others' loss). Refused: use
      ``share_param_critic=False``, a critic head per seat over every seat's observation.
    - one group per seat, 2 seats or more, with a centralised critic (MAPPO, MASAC, MADDPG) or
      VDN: each group holds one seat, so the critic sees that seat alone (MAPPO is IPPO) and
      VDN's sum has one term (VDN is IQL). A `UserWarning`; QMIX's mixer over one seat is a
      monotone map of that seat's Q-value, conditioned on the observation.
    """
    task = cast(QwixxClass, experiment.task)
    algorithm = experiment.algorithm
    name = type(experiment.algorithm_config).__name__
    if task.groups == "table":
        if not experiment.on_policy:
            raise ValueError(
                f"algorithm_config: {name} with the task's groups='table'; the table group serves the on-policy "
                "algorithms (IPPO, MAPPO) only: an off-policy replay buffer keeps each frame whole, every seat in "
                "one row, while each seat's transition runs to its own next decision, a different frame for each "
                "seat, and VDN's and QMIX's mixers would fit the table's one reward, the mean of the seats' "
                "zero-sum rewards (0 with two seats). Use groups='seat' (each seat its own networks and mixer)"
            )
        if algorithm.has_centralized_critic and getattr(algorithm, "share_param_critic", False):
            raise ValueError(
                f"algorithm_config: {name} with share_param_critic=True and the task's groups='table'; a "
                "centralised critic shared by the seats gives one value for the whole table, while the seats' "
                "returns differ (one seat's win is the others' loss). Use share_param_critic=False: a critic "
                "head per seat over every seat's observation"
            )
    elif task.table.num_players > 1:
        if algorithm.has_centralized_critic:
            warnings.warn(
                f"{name} with the task's groups='seat': each group is one seat, so the centralised critic sees "
                "that seat alone and the algorithm is its independent version (MAPPO is IPPO); groups='table' "
                "(on-policy) gives MAPPO a critic over every seat",
                stacklevel=2,
            )
        if isinstance(algorithm, Vdn):
            warnings.warn(
                f"{name} with the task's groups='seat': each group is one seat, so VDN's sum has one term and "
                "VDN is IQL",
                stacklevel=2,
            )


class QwixxCallback(Callback):
    """The callback every experiment on the Qwixx task takes: it lets each seat train on its own
    decisions only (see `DecidingFramesOnly`), and with an `opponent` it plays the trained seats
    against that bot at each of BenchMARL's evaluations (`evaluate`, `games` games from `seed`),
    logs the win share as ``eval/win_share`` with its interval (``eval/win_share_low``,
    ``eval/win_share_high``), prints it on the console (`console_line`; ``console=False`` keeps
    it off) and keeps it in `results` as (frames collected, `Evaluation`) pairs. A recurrent model
    is refused when the experiment is made (see `DecidingFramesOnly`).

    BenchMARL evaluates every ``evaluation_interval`` frames when ``evaluation`` is on and it
    has a logger or writes its json (``loggers``, ``create_json``)."""

    def __init__(self, opponent: Any = None, games: int = 100, seed: int = 0, console: bool = True):
        super().__init__()
        self.opponent, self.games, self.seed, self.console = opponent, games, seed, console
        self.results: list[tuple[int, Evaluation]] = []
        self.clock: dict[str, tuple[float, float]] = {}  # each group's GAE gamma and lambda, as configured

    def on_setup(self) -> None:
        experiment = self.experiment
        if not isinstance(experiment.task, QwixxClass):
            raise TypeError(f"QwixxCallback: the experiment's task is {experiment.task!r}; expected a Qwixx task")
        check_grouping(experiment)
        for group, buffer in experiment.replay_buffers.items():
            loss = experiment.algorithm.get_loss_and_updater(group)[0]
            for transform in buffer.transform:
                if isinstance(transform, DecidingFramesOnly):
                    transform.callback_ready = True
                    if experiment.on_policy and len(experiment.group_map[group]) > 1:
                        transform.fresh_values = functools.partial(critic_values, loss)
        if getattr(experiment.algorithm, "minibatch_advantage", False):
            raise ValueError(
                "algorithm_config: minibatch_advantage=True; the Qwixx task computes each seat's advantages "
                "over the whole batch, on the seat's own clock: use minibatch_advantage=False"
            )
        if experiment.algorithm.has_rnn:
            raise ValueError(
                f"model_config: {type(experiment.model_config).__name__} (or the critic's, "
                f"{type(experiment.critic_model_config).__name__}) has memory; the Qwixx task trains each seat "
                "on the frames in which it decides only, cut out of the collected sequences, and a recurrent "
                "model needs them whole: use a model without memory, such as MlpConfig"
            )

    def on_batch_collected(self, batch: TensorDictBase) -> None:
        experiment = self.experiment
        if experiment.on_policy:
            for buffer in experiment.replay_buffers.values():  # each batch alone: batches differ in length
                buffer.empty()
        # Each seat's transitions from its decision to its next: the frames that have their whole
        # return in the batch; PPO's GAE on the seat's own clock; off-policy, the successor frames.
        for group in experiment.train_group_map:
            decides_next = batch.get(("next", group, "observation", DECIDES))  # (envs, frames, 1 seat, 1)
            done_next = batch.get(("next", group, "done"))
            decides = batch.get((group, "observation", DECIDES))
            batch.set((group, TRAINED), trained_frames(decides, decides_next, done_next))
            if not experiment.on_policy:
                batch.set((group, SUCCESSOR), successor_frames(decides_next, done_next))
                continue
            estimator = experiment.algorithm.get_loss_and_updater(group)[0].value_estimator
            if isinstance(estimator, GAE):
                gamma, lmbda = self.clock.setdefault(
                    group, (float(estimator.gamma.flatten()[0]), float(estimator.lmbda.flatten()[0]))
                )
                estimator.gamma, estimator.lmbda = seat_clock(decides_next, done_next, gamma, lmbda)

    def on_evaluation_end(self, rollouts: list[TensorDictBase]) -> None:
        if self.opponent is None:
            return
        experiment = self.experiment
        result = evaluate(experiment, self.opponent, self.games, self.seed)
        self.results.append((experiment.total_frames, result))
        if result.win_share is not None and result.interval is not None:
            low, high = result.interval
            experiment.logger.log(
                {"eval/win_share": result.win_share, "eval/win_share_low": low, "eval/win_share_high": high},
                step=experiment.n_iters_performed,
            )
        if self.console:  # beside BenchMARL's progress bar, whose "mean return" is about 0 in self-play
            tqdm.write(console_line(experiment.total_frames, result))
