"""BenchMARL (the benchmarl extra): the Qwixx task runs IPPO and MAPPO on any table, with a
group per seat or one group of the table, no loss ever trains on a frame in which its seat does
not decide, the groupings that would quietly turn an algorithm into another are refused or
named, the evaluation is a win share against a bot with its interval, bad task options are
named, and the docs' snippet runs as written."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from test_parallel import run_snippets

import qwixx_env
from qwixx_env import qwixx_v0
from qwixx_env.core.observation import ObservationView

MISSING = "the benchmarl extra is not installed (it runs in make test-integrations: .ci/test-integrations benchmarl)"
pytest.importorskip("benchmarl", reason=MISSING)
import torch  # noqa: E402  (BenchMARL needs it: there when BenchMARL is)
from benchmarl.algorithms import IppoConfig, IqlConfig, MappoConfig, QmixConfig, VdnConfig  # noqa: E402
from benchmarl.experiment import Callback, Experiment, ExperimentConfig  # noqa: E402
from benchmarl.models import GruConfig, MlpConfig  # noqa: E402
from tensordict import TensorDict  # noqa: E402
from torchrl.envs import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import ExplorationType, set_exploration_type  # noqa: E402

from qwixx_env.core.options import table_from  # noqa: E402
from qwixx_env.integrations.benchmarl import (  # noqa: E402
    SEARCH_PATH,
    QwixxCallback,
    QwixxTask,
    evaluate,
    register_tasks,
)

ALGORITHMS = {"ippo": IppoConfig, "mappo": MappoConfig}


def algorithm_config(algorithm, groups="seat"):
    """BenchMARL's config of `algorithm`; in the table group MAPPO's critic has a head per seat
    (a critic shared by the seats is refused there)."""
    config = ALGORITHMS[algorithm].get_from_yaml()
    if groups == "table":
        config.share_param_critic = False
    return config


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def quiet_experiment(algorithm_config, options, callbacks, folder, model=None, **settings) -> Experiment:
    """An experiment of the Qwixx task with `settings` (ExperimentConfig fields), no
    evaluation, no loggers or files but its folder."""
    config = ExperimentConfig.get_from_yaml()
    for key, value in {**settings, "evaluation": False, "loggers": [], "create_json": False, "render": False,
                       "save_folder": str(folder)}.items():
        setattr(config, key, value)
    return Experiment(task=QwixxTask.QWIXX.get_task(config=options), algorithm_config=algorithm_config,
                      model_config=model or MlpConfig.get_from_yaml(), seed=0, config=config, callbacks=callbacks)


def tiny_experiment(algorithm, options, callbacks, folder, frames=240, model=None, iters=1) -> Experiment:
    """Two batches of `frames` / 2 frames from two games at a time, `iters` passes over each
    batch (`algorithm` a name of ALGORITHMS or a BenchMARL algorithm config)."""
    if isinstance(algorithm, str):
        algorithm = algorithm_config(algorithm, options.get("groups", "seat"))
    return quiet_experiment(algorithm, options, callbacks, folder, model,
                            max_n_frames=frames, on_policy_collected_frames_per_batch=frames // 2,
                            on_policy_n_envs_per_worker=2, on_policy_minibatch_size=frames // 4,
                            on_policy_n_minibatch_iters=iters)


def decides(view: ObservationView) -> bool:
    """Whether the observing seat decides, read from the observation alone as the rules say:
    every seat in the white action, the seat breaking a lucky tie, the active seat in the colour action."""
    return {"white": True, "lucky": view.pending_cross is not None, "color": view.is_active, "over": False}[view.phase]


class FrameCount(Callback):
    """Counts, per seat, the collected frames in which it decides and the frames every loss is given."""

    def __init__(self):
        super().__init__()
        self.deciding = self.waiting = self.trained = self.trained_waiting = self.trainable = 0

    def seat_decides(self, observations: torch.Tensor) -> np.ndarray:
        table = self.experiment.task.table
        return np.array([decides(ObservationView(o, table.rules, table.num_players)) for o in observations.numpy()])

    def on_batch_collected(self, batch):
        for group in self.experiment.group_map:
            observations = batch[group, "observation", "observation"]  # (games, steps, 1 seat, size)
            seen = self.seat_decides(observations.reshape(-1, observations.shape[-1]))
            self.deciding += int(seen.sum())
            self.waiting += int((~seen).sum())
            self.trainable += int(batch[group, "qwixx_trained"].sum())  # marked by QwixxCallback, called first

    def on_train_step(self, batch, group):
        seen = self.seat_decides(batch[group, "observation", "observation"][:, 0])
        self.trained += len(seen)
        self.trained_waiting += int((~seen).sum())


@pytest.mark.parametrize("num_players", [2, 3])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_no_loss_sees_a_frame_in_which_its_seat_does_not_decide(algorithm, num_players, tmp_path):
    count = FrameCount()
    experiment = tiny_experiment(algorithm, {"num_players": num_players}, [QwixxCallback(), count], tmp_path)
    experiment.run()
    assert experiment.group_map == {f"player_{s}": [f"player_{s}"] for s in range(num_players)}  # a group per seat
    assert count.waiting > 0  # the colour actions: every seat but the active one waits
    assert count.trained_waiting == 0
    # one pass over this batch's deciding frames, none older, but those whose next decision the batch cuts off
    assert count.trained == count.trainable and count.deciding - 2 * num_players * 2 <= count.trainable


def own_decision_mismatches(batch, group, gamma, lmbda):
    """Over one processed batch of `group`, for each of its seats: (the trained frames whose
    advantage is not the GAE of the seat's own decisions, the trained frames followed by a
    waiting frame). The seat's GAE: the rewards up to its next decision summed, bootstrapped
    from that decision's value, gamma and lambda once per decision."""
    seats = batch[group].shape[-1]
    wrong = across = 0
    for seat in range(seats):
        entries = {key: batch[key][..., seat, 0].numpy() for key in seat_entries(group)}
        w, a = seat_mismatches(entries, group, gamma, lmbda)
        wrong, across = wrong + w, across + a
    return wrong, across


def seat_entries(group):
    """The entries of a processed batch that `seat_mismatches` reads."""
    return [
        ("next", group, "observation", "decides"),
        (group, "qwixx_trained"),
        ("next", group, "reward"),
        ("next", group, "done"),
        (group, "state_value"),
        ("next", group, "state_value"),
        (group, "advantage"),
    ]


def seat_mismatches(seat, group, gamma, lmbda):
    """`own_decision_mismatches` for one seat's entries, each (envs, frames)."""
    decides_next = seat["next", group, "observation", "decides"].astype(bool)
    trained = seat[group, "qwixx_trained"]
    reward, done = seat["next", group, "reward"], seat["next", group, "done"]
    value, next_value = seat[group, "state_value"], seat["next", group, "state_value"]
    advantage = seat[group, "advantage"]
    wrong = across = 0
    frames = advantage.shape[1]
    for row in range(frames and advantage.shape[0]):
        for t in np.flatnonzero(trained[row]):
            total, u = 0.0, t
            while True:  # to the seat's next decision or the game's end
                total += reward[row, u]
                if done[row, u] or decides_next[row, u]:
                    break
                u += 1
            across += u > t
            own = total - value[row, t]
            if not done[row, u]:  # the batch's last frame: GAE has no advantage after it
                own += gamma * next_value[row, u] + (gamma * lmbda * advantage[row, u + 1] if u + 1 < frames else 0)
            wrong += not np.isclose(advantage[row, t], own, atol=1e-4)
    return wrong, across


@pytest.mark.parametrize(("num_players", "groups"), [(2, "seat"), (3, "seat"), (3, "table")])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_ppo_advantages_run_from_each_decision_to_the_seats_next(algorithm, num_players, groups, tmp_path):
    callback = QwixxCallback()
    experiment = tiny_experiment(algorithm, {"num_players": num_players, "groups": groups}, [callback], tmp_path)
    processed = []
    process_batch = experiment.algorithm.process_batch

    def keep(group, batch):
        out = process_batch(group, batch)
        processed.append((group, out.clone()))
        return out

    experiment.algorithm.process_batch = keep
    experiment.run()
    wrong = across = trained = 0
    for group, batch in processed:
        gamma, lmbda = callback.clock[group]
        assert (gamma, lmbda) == (pytest.approx(0.99), pytest.approx(0.9))  # BenchMARL's defaults
        w, a = own_decision_mismatches(batch, group, gamma, lmbda)
        wrong, across, trained = wrong + w, across + a, trained + int(batch[group, "qwixx_trained"].sum())
    assert across > 0.2 * trained  # a third or more wait before their next decision (the colour actions)
    assert wrong == 0  # no trained frame bootstraps from a waiting frame's value


def element_gradients(experiment, group):
    """For one minibatch drawn from `group`'s buffer as BenchMARL draws it: each element (frame,
    seat) with whether its seat trains there (`qwixx_trained`), whether it decides there, and
    the size of the gradient its own terms of the loss (objective, entropy, critic) give."""
    loss = experiment.losses[group]
    sample = experiment.replay_buffers[group].sample()
    loss.reduction = "none"  # the loss of each (frame, seat), as the mean would sum it
    try:
        values = loss(sample)
    finally:
        loss.reduction = "mean"
    own = values["loss_objective"] + values["loss_entropy"] + values["loss_critic"]  # (frames, seats)
    parameters = [p for p in loss.parameters() if p.requires_grad]
    trained = sample[group, "qwixx_trained"][..., 0]
    decides = sample[group, "observation", "decides"][..., 0].bool()
    out = []
    for frame, seat in np.ndindex(*own.shape):
        grads = torch.autograd.grad(own[frame, seat], parameters, retain_graph=True, allow_unused=True)
        size = sum(float(g.abs().sum()) for g in grads if g is not None)
        out.append((bool(trained[frame, seat]), bool(decides[frame, seat]), size))
    return out


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_in_the_table_group_no_waiting_seat_gets_a_gradient(algorithm, tmp_path):
    """One group holds every seat, so a frame holds seats that wait beside the seat that decides:
    the waiting seats' terms of the loss give no gradient, even with an entropy bonus and after
    the critic has moved (two passes over each batch), while every trained one gives one."""
    config = algorithm_config(algorithm, "table")
    config.entropy_coef = 0.01
    experiment = tiny_experiment(config, {"num_players": 3, "groups": "table"}, [QwixxCallback()], tmp_path, iters=2)
    experiment.run()
    assert experiment.group_map == {"players": ["player_0", "player_1", "player_2"]}
    elements = element_gradients(experiment, "players")
    waiting = [size for trained, decides, size in elements if not decides]
    assert len(waiting) > 0.1 * len(elements)  # the colour actions: two seats of three wait
    assert all(not trained for trained, decides, _ in elements if not decides)
    assert sum(size > 0 for size in waiting) == 0  # counted: no waiting seat's term has a gradient
    assert all(size > 0 for trained, _, size in elements if trained)
    # The value targets the buffer stored were the critic's values when the batch came; the
    # critic has moved since, and without the fresh values at each draw the waiting seats pull it.
    for transform in experiment.replay_buffers["players"].transform:
        transform.fresh_values = None
    stale = [size for trained, _, size in element_gradients(experiment, "players") if not trained]
    assert sum(size > 0 for size in stale) > 0


class Losses(Callback):
    """Keeps the (objective, critic) losses of every optimizer step, group by group in order."""

    def __init__(self):
        super().__init__()
        self.steps = []

    def on_train_end(self, training_td, group):
        self.steps.extend(zip(training_td["loss_objective"].tolist(), training_td["loss_critic"].tolist()))


def losses_of(algorithm, groups, folder):
    """The losses of every optimizer step of a tiny run on 2 seats."""
    losses = Losses()
    folder.mkdir()
    experiment = tiny_experiment(
        algorithm, {"num_players": 2, "groups": groups}, [QwixxCallback(), losses], folder, frames=120
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MAPPO with a group per seat is IPPO, and says so
        experiment.run()
    return losses.steps


def test_mappo_differs_from_ippo_in_the_table_group_and_equals_it_with_a_group_per_seat(tmp_path):
    seat = {name: losses_of(name, "seat", tmp_path / f"{name}-seat") for name in ALGORITHMS}
    table = {name: losses_of(name, "table", tmp_path / f"{name}-table") for name in ALGORITHMS}
    assert len(seat["ippo"]) == len(seat["mappo"]) > 0
    assert seat["mappo"] == seat["ippo"]  # one seat per group: the centralised critic sees that seat alone
    assert len(table["mappo"]) == len(table["ippo"]) > 0
    assert all(m[1] != i[1] for m, i in zip(table["mappo"], table["ippo"]))  # a critic over every seat


@pytest.mark.parametrize(
    ("algorithm", "named"),
    [
        (IqlConfig, "off-policy"),
        (VdnConfig, "mixers would fit the table's one reward"),
        (QmixConfig, "groups='seat'"),
        (MappoConfig, "share_param_critic=False"),  # BenchMARL's default critic, shared by the seats
    ],
)
def test_the_table_group_refuses_what_it_would_quietly_turn_into_something_else(algorithm, named, tmp_path):
    with pytest.raises(ValueError, match=named):
        quiet_experiment(algorithm.get_from_yaml(), {"num_players": 2, "groups": "table"}, [QwixxCallback()], tmp_path)


@pytest.mark.parametrize(("algorithm", "named"), [(MappoConfig, "MAPPO is IPPO"), (VdnConfig, "VDN is IQL")])
def test_a_group_per_seat_says_which_algorithm_it_reduces_to(algorithm, named, tmp_path):
    with pytest.warns(UserWarning, match=named):
        quiet_experiment(algorithm.get_from_yaml(), {"num_players": 2}, [QwixxCallback()], tmp_path)


def test_in_the_table_group_each_seat_plays_its_own_row_of_the_policy(tmp_path):
    """Without shared policy parameters each seat has networks of its own: the evaluation's bot
    for seat s takes the group's action for seat s."""
    from qwixx_env.integrations.benchmarl import SeatPolicy

    experiment = quiet_experiment(
        algorithm_config("ippo", "table"),
        {"num_players": 3, "groups": "table"},
        [QwixxCallback()],
        tmp_path,
        share_policy_params=False,
    )
    env = qwixx_v0.parallel_env(num_players=3)
    observations, _ = env.reset(seed=5)
    rows = TensorDict(
        {
            "observation": TensorDict(
                {"observation": torch.as_tensor(np.stack([observations[a]["observation"] for a in env.agents]))}, [3]
            ),
            "action_mask": torch.as_tensor(np.stack([observations[a]["action_mask"] for a in env.agents])).bool(),
        },
        [3],
    )
    with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
        chosen = experiment.group_policies["players"](TensorDict({"players": rows}, []))["players", "action"].tolist()
    assert len(set(chosen)) > 1  # the seats' rows choose differently: reading another seat's row would show
    assert [SeatPolicy(experiment, s).act(observations[f"player_{s}"]) for s in range(3)] == chosen
    result = evaluate(experiment, opponent="random", games=3)
    assert 0.0 <= result.win_share <= 1.0


OFF_POLICY = {"iql": IqlConfig, "vdn": VdnConfig, "qmix": QmixConfig}


def tiny_off_policy_experiment(algorithm, options, callbacks, folder) -> Experiment:
    """Two batches of 60 frames from two games at a time, two optimizer steps of 16 frames each."""
    return quiet_experiment(OFF_POLICY[algorithm].get_from_yaml(), options, callbacks, folder,
                            max_n_frames=120, off_policy_collected_frames_per_batch=60, off_policy_n_envs_per_worker=2,
                            off_policy_n_optimizer_steps=2, off_policy_train_batch_size=16,
                            off_policy_memory_size=1000)


class WaitingNext(Callback):
    """Counts the collected deciding frames whose next frame is one in which their seat waits."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def on_batch_collected(self, batch):
        for group in self.experiment.group_map:
            decides = batch[group, "observation", "decides"].bool()
            waits_next = ~batch["next", group, "observation", "decides"].bool() & ~batch["next", group, "done"]
            self.count += int((decides & waits_next).sum())


@pytest.mark.parametrize("num_players", [2, 3])
@pytest.mark.parametrize("algorithm", OFF_POLICY)
def test_off_policy_transitions_run_from_each_decision_to_the_seats_next(algorithm, num_players, tmp_path):
    waiting = WaitingNext()
    experiment = tiny_off_policy_experiment(algorithm, {"num_players": num_players}, [QwixxCallback(), waiting],
                                            tmp_path)
    experiment.run()
    assert waiting.count > 0  # collected: decisions followed by a frame in which the seat waits
    for group in experiment.group_map:
        stored = experiment.replay_buffers[group][:]
        assert len(stored) > 0
        assert stored[group, "observation", "decides"].all()  # only the seat's decisions
        # stored: each transition's next frame is the seat's next decision or the game's end
        assert (stored["next", group, "observation", "decides"].bool() | stored["next", group, "done"]).all()


def test_a_transition_is_carried_to_its_successor_with_the_rewards_between_summed():
    from qwixx_env.integrations.benchmarl import successor_frames, to_next_decision

    decides_next = torch.tensor([[0, 0, 1, 0], [1, 0, 0, 0]]).bool()  # 2 games (envs) of 4 frames
    done_next = torch.tensor([[0, 0, 0, 0], [0, 0, 1, 0]]).bool()
    successor = successor_frames(decides_next, done_next)
    assert successor.tolist() == [[2, 2, 2, -1], [4, 6, 6, -1]]
    frames = TensorDict({"next": {"reward": torch.arange(8.0), "obs": torch.arange(10, 18)}}, [8])
    carried = to_next_decision(frames, successor.reshape(8))
    assert carried["next", "obs"].tolist() == [12, 12, 12, 13, 14, 16, 16, 17]
    assert carried["next", "reward"].tolist() == [3, 3, 2, 3, 4, 11, 6, 7]  # 0+1+2, 1+2, 2; 5+6


def test_a_decision_whose_next_lies_beyond_the_batch_is_not_trained():
    from qwixx_env.integrations.benchmarl import trained_frames

    decides = torch.tensor([[1, 0, 1, 1, 0, 0]]).bool()
    decides_next = torch.tensor([[0, 1, 1, 0, 0, 0]]).bool()
    done_next = torch.tensor([[0, 0, 0, 0, 0, 0]]).bool()
    assert trained_frames(decides, decides_next, done_next).tolist() == [[True, False, True, False, False, False]]
    done_next[0, 4] = True  # the game ends: the decision at frame 3 has its whole return in the batch
    assert trained_frames(decides, decides_next, done_next).tolist() == [[True, False, True, True, False, False]]


def test_over_the_aec_env_a_waiting_seat_gets_an_all_ones_mask_that_benchmarl_would_train_on():
    """Why the task is not the AEC env in PettingZooWrapper: a seat that does not decide is
    flagged only in (group, "mask"), and its action mask allows every action."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL says it was tested with another PettingZoo release
        env = PettingZooWrapper(qwixx_v0.env(num_players=2), use_mask=True, seed=0)
    torch.manual_seed(0)
    rollout = env.rollout(200, break_when_any_done=False)
    for group in ("player_0", "player_1"):
        waiting = ~rollout[group, "mask"][:, 0]
        assert rollout[group, "action_mask"][waiting].all()  # every action "legal"
        assert 0.3 < waiting.float().mean() < 0.7  # about half of each seat's frames


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    experiment = tiny_experiment("ippo", {"num_players": 2}, [QwixxCallback()], tmp_path_factory.mktemp("ippo"))
    experiment.run()
    return experiment


def test_the_evaluation_is_a_win_share_against_the_bot_with_its_interval(trained):
    result = evaluate(trained, opponent="random", games=12, seed=3)
    low, high = result.interval
    assert result.opponent == "random" and result.games == 12
    assert 0.0 <= low <= result.win_share <= high <= 1.0
    assert evaluate(trained, opponent="random", games=12, seed=3) == result  # the same games again
    with pytest.raises(ValueError, match="'smartest'"):
        evaluate(trained, opponent="smartest", games=4)
    with pytest.raises(ValueError, match="games"):
        evaluate(trained, games=0)


def test_solo_has_a_mean_score_and_no_win_share(tmp_path):
    experiment = tiny_experiment("ippo", {"num_players": 1}, [QwixxCallback()], tmp_path, frames=80)
    experiment.run()
    result = evaluate(experiment, opponent="greedy", games=3)
    assert result.win_share is None and result.interval is None and result.games == 3
    assert result.score_se is not None and result.score_mean > -20  # solo: at most 4 penalties of -5


@pytest.mark.parametrize(("config", "error", "named"), [
    ({"num_players": 6}, ValueError, "num_players"),
    ({"variant": "mega"}, ValueError, "variant"),
    ({"num_players": 2, "players": 3}, TypeError, "'players'"),
    ({"groups": "pairs"}, ValueError, "groups"),
    ({"lucky_numbers": [(3, 11), (7, 9)]}, ValueError, "lucky_numbers"),  # classic has none
    ([("num_players", 2)], TypeError, "dict of table options"),
])
def test_bad_task_options_are_named_when_the_task_is_made(config, error, named):
    with pytest.raises(error, match=named):
        QwixxTask.QWIXX.get_task(config=config)


def test_the_task_keeps_every_table_option_with_its_defaults_filled_in():
    task = QwixxTask.QWIXX.get_task(config={"num_players": 3, "variant": "longo", "lucky": "instead"})
    assert task.config == {"num_players": 3, "variant": "longo", "lucky": "instead", "lucky_numbers": None,
                           "start_player": 0, "reward": "win", "score_table": None, "groups": "seat"}
    assert QwixxTask.QWIXX.get_task().table.num_players == 2  # no config: the default table


@pytest.mark.parametrize("task", list(QwixxTask), ids=lambda task: task.name)
def test_each_task_loads_its_shipped_yaml_by_name(task):
    loaded = task.get_from_yaml()
    name = task.name.lower()
    if name == "qwixx":
        expected = table_from()  # the default table
    else:
        variant, _, players = name.rpartition("_")
        variant, _, lucky = variant.partition("_")
        expected = table_from(num_players=int(players[0]), variant=variant, lucky=lucky or "bonus")
    assert loaded.table == expected and loaded.name == task.name
    assert task.get_task().config == loaded.config  # no config: the member's YAML


def test_get_from_yaml_reads_a_file_of_table_options(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("num_players: 4\nvariant: longo\n")
    assert QwixxTask.QWIXX.get_from_yaml(str(path)).table == table_from(num_players=4, variant="longo")
    path.write_text("num_players: 7\n")
    with pytest.raises(ValueError, match="num_players"):
        QwixxTask.QWIXX.get_from_yaml(str(path))


def test_benchmarls_hydra_config_names_the_task():
    """What BenchMARL's `python -m benchmarl.run algorithm=ippo task=qwixx/longo_3p` composes and
    loads with the package's YAML on the search path (`SEARCH_PATH`), the task through BenchMARL's
    registry (`register_tasks`)."""
    from benchmarl.hydra_config import load_task_config_from_hydra
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    register_tasks()
    GlobalHydra.instance().clear()
    with initialize_config_module(config_module="benchmarl.conf", version_base=None):
        cfg = compose(config_name="config", overrides=[SEARCH_PATH, "algorithm=ippo", "task=qwixx/longo_3p",
                                                       "task.lucky=instead", "task.groups=table"])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "TaskConfig python dataclass not found")  # this package checks the options
        task = load_task_config_from_hydra(cfg.task, "qwixx/longo_3p")
    assert task.table == table_from(num_players=3, variant="longo", lucky="instead") and task.groups == "table"


TINY_RUN = ["experiment.max_n_frames=80", "experiment.on_policy_collected_frames_per_batch=40",
            "experiment.on_policy_n_envs_per_worker=2", "experiment.on_policy_minibatch_size=20",
            "experiment.on_policy_n_minibatch_iters=1", "experiment.evaluation_interval=40",
            "experiment.evaluation_episodes=1", "experiment.loggers=[csv]", "experiment.render=false",
            "experiment.sampling_device=cpu", "experiment.train_device=cpu", "experiment.buffer_device=cpu"]


def run_command_line(module, arguments, folder):
    """`python -m module arguments...` in `folder`, importing the qwixx_env these tests import."""
    here = str(Path(qwixx_env.__file__).parents[1])  # this tree, or the venv's site-packages in CI
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", module, *arguments], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_command_line_trains_the_named_task_and_prints_the_win_share(tmp_path):
    """`python -m qwixx_env.integrations.benchmarl_run task=qwixx/<table>`: BenchMARL's run.py with
    QwixxCallback and the package's YAML on Hydra's search path."""
    run = run_command_line("qwixx_env.integrations.benchmarl_run",
                           ["algorithm=ippo", "task=qwixx/classic_2p", *TINY_RUN, "+qwixx.games=4"], tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "qwixx eval at 40 frames: win share against greedy " in run.stdout + run.stderr
    assert "qwixx eval at 80 frames: win share against greedy " in run.stdout + run.stderr


def test_the_yaml_files_ship_with_the_package():
    """pyproject.toml lists the folder's YAML files as package data."""
    text = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert '"qwixx_env.integrations.benchmarl_conf" = ["task/qwixx/*.yaml"]' in text


def test_without_the_callback_the_first_batch_says_what_the_task_needs(tmp_path):
    experiment = tiny_experiment("ippo", {"num_players": 2}, [], tmp_path, frames=40)
    with pytest.raises(RuntimeError, match="QwixxCallback"):
        experiment.run()


def test_a_recurrent_model_is_refused_when_the_experiment_is_made(tmp_path):
    with pytest.raises(ValueError, match="GruConfig.*has memory.*MlpConfig"):
        tiny_experiment("ippo", {"num_players": 2}, [QwixxCallback()], tmp_path, model=GruConfig.get_from_yaml())


def test_advantages_on_minibatches_are_refused_when_the_experiment_is_made(tmp_path):
    experiment = tiny_experiment("ippo", {"num_players": 2}, [], tmp_path)  # no callback: nothing checked
    algorithm = IppoConfig.get_from_yaml()
    algorithm.minibatch_advantage = True
    with pytest.raises(ValueError, match="minibatch_advantage=False"):
        Experiment(task=experiment.task, algorithm_config=algorithm, model_config=MlpConfig.get_from_yaml(),
                   seed=0, config=experiment.config, callbacks=[QwixxCallback()])


def test_each_evaluation_prints_the_win_share_on_the_console(tmp_path, capsys):
    callback = QwixxCallback(opponent="random", games=4)
    experiment = tiny_experiment("ippo", {"num_players": 2}, [callback], tmp_path, frames=80)
    experiment.config.evaluation = True
    experiment.config.evaluation_interval = 40
    experiment.config.evaluation_episodes = 1
    experiment.config.create_json = True  # BenchMARL evaluates only with a logger or its json
    experiment.run()
    out = capsys.readouterr().out
    assert len(callback.results) == 2
    for frames, result in callback.results:
        low, high = result.interval
        line = (f"qwixx eval at {frames} frames: win share against random {result.win_share:.3f} "
                f"[{low:.3f}, {high:.3f}] in 4 games")
        assert line in out


def test_docs_snippet_runs_as_written(capsys):
    out, shown = run_snippets("BenchMARL", capsys)
    assert " frames: win share " in shown and "against heuristic: win share " in shown
    for line in shown.splitlines():
        assert line in out  # between TorchRL's own log lines
