"""Ray RLlib: the MultiAgentEnv, the masking module, bots as modules, a tiny self-play run.

Skipped, with the reason, when the rllib extra (ray) is not installed.
"""

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the rllib extra is not installed: pip install -e '.[rllib]'")

import ray  # noqa: E402
import torch  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402
from ray.rllib.algorithms.algorithm import Algorithm  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner  # noqa: E402
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

from qwixx_env import bots, qwixx_v0  # noqa: E402
from qwixx_env.arena import run_arena  # noqa: E402
from qwixx_env.arena.schedule import parse_bot  # noqa: E402
from qwixx_env.core.options import TableOptions  # noqa: E402
from qwixx_env.core.rewards import illegal_return  # noqa: E402
from qwixx_env.integrations.rllib import (  # noqa: E402
    LEARNER,
    SELF,
    BotModule,
    MaskedPPOModule,
    QwixxMultiAgentEnv,
    QwixxParallelMultiAgentEnv,
    SeatMapping,
    make_vector_env,
    ppo_config,
    set_league,
    vector_env_of,
    vector_ppo_config,
)
from qwixx_env.integrations.rllib_runner import BatchedEnvRunner, runner_dice_seeds  # noqa: E402
from qwixx_env.training import main as qwixx_train  # noqa: E402
from qwixx_env.training.rllib import (  # noqa: E402
    algo_config,
    behaviour_cloning,
    config_from_dict,
    latest_checkpoint,
    load_config,
    log_line,
    make_league,
    time_each_iteration,
    train,
)

from conftest import random_legal_action  # noqa: E402


def play_random(env, seed, steps=None):
    """Play masked random actions: (every (agent, observation, action) in order, the last
    observations, each agent's summed rewards)."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    seen, returns = [], dict.fromkeys(env.possible_agents, 0.0)
    while steps is None or len(seen) < steps:
        (agent, o), = obs.items()
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        seen.append((agent, o, action))
        obs, rewards, terminated, truncated, _ = env.step({agent: action})
        for a, r in rewards.items():
            returns[a] += r
        if terminated["__all__"]:
            break
    return seen, obs, returns


@pytest.mark.parametrize("variant", ["classic", "longo"])
@pytest.mark.parametrize("num_players", [1, 2, 3, 5])
@pytest.mark.parametrize("view", [QwixxMultiAgentEnv, QwixxParallelMultiAgentEnv])
def test_env_passes_rllibs_multi_agent_check(view, variant, num_players):
    env = view({"variant": variant, "num_players": num_players})
    check_multiagent_environments(env)
    obs, _ = env.reset(seed=3)
    # only the deciding agents observe: one in the AEC order, every seat at a roll in the Parallel view
    expected = env.possible_agents if view is QwixxParallelMultiAgentEnv else ["player_0"]
    assert list(obs) == expected
    assert all(env.observation_spaces[a].contains(o) for a, o in obs.items())


@pytest.mark.parametrize("variant", ["classic", "longo"])
def test_parallel_view_env_replays_the_parallel_game(variant):
    """Same seed, same decisions: the observations, masks and rewards of qwixx_v0.raw_parallel_env,
    to the acting agents only."""
    env = QwixxParallelMultiAgentEnv({"variant": variant, "num_players": 3, "reward": "score_delta"})
    par = qwixx_v0.raw_parallel_env(variant=variant, num_players=3, reward="score_delta")
    rng = np.random.default_rng(4)
    obs, _ = env.reset(seed=7)
    ref, _ = par.reset(seed=7)
    while True:
        assert list(obs) == par.acting_agents
        actions = {}
        for agent, o in obs.items():
            np.testing.assert_array_equal(o["observations"], ref[agent]["observation"])
            np.testing.assert_array_equal(o["action_mask"], ref[agent]["action_mask"])
            actions[agent] = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, terminated, _, _ = env.step(actions)
        ref, ref_rewards, ref_terminated, _, _ = par.step(actions)
        assert rewards == {a: float(r) for a, r in ref_rewards.items()}
        if terminated["__all__"]:
            assert all(ref_terminated.values()) and set(obs) == set(env.possible_agents)
            break


def test_parallel_view_env_refuses_a_missing_seat_and_ends_on_an_illegal_action():
    env = QwixxParallelMultiAgentEnv({"num_players": 2, "illegal_reward": -1})
    obs, _ = env.reset(seed=0)
    before = env.game.snapshot()
    with pytest.raises(ValueError, match="expected one for each acting agent"):
        env.step({"player_0": 44})
    assert env.game.snapshot() == before
    illegal = int(np.flatnonzero(obs["player_1"]["action_mask"] == 0)[0])
    _, rewards, terminated, _, _ = env.step({"player_0": 44, "player_1": illegal})
    assert terminated["__all__"] and rewards == {"player_0": 0.0, "player_1": -1.0}


@pytest.mark.parametrize("variant", ["classic", "longo"])
@pytest.mark.parametrize("reward", ["win", "score_delta"])
def test_env_replays_the_aec_game(variant, reward):
    """Same seed, same decisions: the observations, masks and rewards of qwixx_v0."""
    env = QwixxMultiAgentEnv({"variant": variant, "num_players": 3, "reward": reward})
    seen, final, returns = play_random(env, seed=11)
    aec = qwixx_v0.raw_env(variant=variant, num_players=3, reward=reward)
    aec.reset(seed=11)
    totals = dict.fromkeys(aec.possible_agents, 0)
    for agent, o, action in seen:
        assert aec.agent_selection == agent
        ref = aec.observe(agent)
        np.testing.assert_array_equal(o["observations"], ref["observation"])
        np.testing.assert_array_equal(o["action_mask"], ref["action_mask"].astype(np.float32))
        aec.step(action)
        for a, r in aec.rewards.items():
            totals[a] += r
    assert all(aec.terminations.values())
    assert returns == totals and any(totals.values())
    assert set(final) == set(aec.possible_agents) and not any(f["action_mask"].any() for f in final.values())
    for a, f in final.items():
        np.testing.assert_array_equal(f["observations"], aec.observe(a)["observation"])


def test_an_illegal_action_ends_the_game_with_a_loss():
    env = QwixxMultiAgentEnv({"num_players": 2, "illegal_reward": -1})
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["player_0"]["action_mask"] == 0)[0])
    final, rewards, terminated, _, _ = env.step({"player_0": illegal})
    assert terminated["__all__"] and rewards == {"player_0": -1.0, "player_1": 0.0}
    assert set(final) == {"player_0", "player_1"}


@pytest.mark.parametrize("view", [QwixxMultiAgentEnv, QwixxParallelMultiAgentEnv])
@pytest.mark.parametrize("reward", ["win", "score_delta", "margin"])
def test_an_illegal_ending_pays_less_than_any_legal_one_by_default_as_env_does(view, reward):
    env = view({"num_players": 2, "reward": reward})
    assert env.illegal_reward == illegal_return(reward, env.variant)
    obs, _ = env.reset(seed=4)
    paid = dict.fromkeys(env.possible_agents, 0.0)
    for _ in range(12):  # legal decisions first, so that "score_delta" has paid something already
        obs, rewards, _, _, _ = env.step({a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in obs.items()})
        for a, r in rewards.items():
            paid[a] += r
    offender = next(iter(obs))
    illegal = int(np.flatnonzero(obs[offender]["action_mask"] == 0)[0])
    actions = {a: illegal if a == offender else int(np.flatnonzero(o["action_mask"])[0]) for a, o in obs.items()}
    _, rewards, terminated, _, _ = env.step(actions)
    assert terminated["__all__"]
    assert paid[offender] + rewards[offender] == illegal_return(reward, env.variant)  # the game's return
    assert all(rewards[a] == 0 for a in rewards if a != offender)


@pytest.mark.parametrize("view", [QwixxMultiAgentEnv, QwixxParallelMultiAgentEnv])
@pytest.mark.parametrize("illegal_at", [None, 7])
def test_every_reward_is_a_float_an_illegal_ending_included(view, illegal_at):
    env = view({"num_players": 3, "variant": "longo", "reward": "score_delta"})
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=2)
    for step in range(2000):
        actions = {a: random_legal_action(o["action_mask"], rng) for a, o in obs.items()}
        if step == illegal_at:
            offender = next(iter(obs))
            actions[offender] = int(np.flatnonzero(obs[offender]["action_mask"] == 0)[0])
        obs, rewards, terminated, _, _ = env.step(actions)
        assert rewards and all(type(r) is float for r in rewards.values()), rewards
        if terminated["__all__"]:
            break
    assert terminated["__all__"]


@pytest.mark.parametrize(
    "actions, message",
    [({"player_1": 44}, "expected exactly one, for 'player_0'"), ({"player_0": 45}, "outside the action space"),
     ({"player_0": True}, "outside the action space"), ({}, "expected exactly one")],
)
def test_bad_action_dicts_are_refused_and_change_nothing(actions, message):
    env = QwixxMultiAgentEnv({"num_players": 2})
    env.reset(seed=5)
    before = env.game.snapshot()
    with pytest.raises(ValueError, match=message):
        env.step(actions)
    assert env.game.snapshot() == before and env.game.agent_selection == "player_0"


def test_step_before_reset_or_after_the_end_is_refused():
    env = QwixxMultiAgentEnv({"num_players": 1})
    with pytest.raises(ValueError, match="call reset"):
        env.step({"player_0": 44})
    play_random(env, seed=2)
    with pytest.raises(ValueError, match="call reset"):
        env.step({"player_0": 44})


def test_bad_env_config_names_the_key():
    with pytest.raises(ValueError, match="unknown key"):
        QwixxMultiAgentEnv({"players": 2})
    with pytest.raises(ValueError, match="num_players"):
        QwixxMultiAgentEnv({"num_players": 6})


def masked_batch(variant, num_players, rows=32):
    """Observations of random games, stacked as RLlib hands them to a module."""
    env = QwixxMultiAgentEnv({"variant": variant, "num_players": num_players})
    seen, _, _ = play_random(env, seed=1, steps=rows)
    obs = {k: torch.as_tensor(np.stack([o[k] for _, o, _ in seen])) for k in ("observations", "action_mask")}
    return env, {Columns.OBS: obs}


@pytest.mark.parametrize("variant", ["classic", "longo"])
def test_the_module_gives_illegal_actions_zero_probability(variant):
    env, batch = masked_batch(variant, 2)
    module = MaskedPPOModule(observation_space=env.observation_spaces["player_0"],
                             action_space=env.action_spaces["player_0"],
                             model_config={"fcnet_hiddens": [16], "vf_share_layers": False})
    mask = batch[Columns.OBS]["action_mask"] > 0
    for forward in (module.forward_inference, module.forward_exploration, module.forward_train):
        logits = forward(dict(batch))[Columns.ACTION_DIST_INPUTS]
        probs = torch.softmax(logits, -1)
        assert torch.all(probs[~mask] == 0) and torch.allclose(probs.sum(-1), torch.ones(len(probs)))
        dist = module.get_exploration_action_dist_cls().from_logits(logits)
        samples = torch.stack([dist.sample() for _ in range(200)])  # (200, rows)
        assert mask.gather(1, samples.T).all()
    assert module.compute_values(dict(batch)).shape == (len(mask),)


@pytest.mark.parametrize("name", ["heuristic", "greedy:max_skip=2", "ppo-classic-2p"])
def test_a_bot_module_plays_the_bots_actions(name):
    env, batch = masked_batch("classic", 2)
    module = BotModule(observation_space=env.observation_spaces["player_0"], action_space=env.action_spaces["player_0"],
                       model_config={"bot": name, "variant": "classic", "num_players": 2, "seed": 0})
    actions = module.forward_inference(batch)[Columns.ACTIONS]
    bot = parse_bot(name).make(variant="classic", num_players=2, seed=0)
    obs = batch[Columns.OBS]
    expected = [bot.act({"observation": v.numpy(), "action_mask": m.numpy().astype(np.int8)})
                for v, m in zip(obs["observations"], obs["action_mask"])]
    assert actions.tolist() == expected


def test_seat_mapping_puts_the_learner_in_one_seat_per_episode():
    mapping = SeatMapping(3, {"bot_heuristic": 1.0})
    for episode in ("a", "b", "c", "d"):
        seats = [mapping(f"player_{s}", episode) for s in range(3)]
        assert seats.count(LEARNER) == 1 and seats.count("bot_heuristic") == 2
        assert seats == mapping.seats(episode)  # the same every call
    learner_seats = {mapping.seats(str(i)).index(LEARNER) for i in range(40)}
    assert learner_seats == {0, 1, 2}


def test_ppo_config_steps_the_chosen_view():
    assert ppo_config(num_players=2).env is QwixxMultiAgentEnv
    assert ppo_config(num_players=2, view="parallel").env is QwixxParallelMultiAgentEnv
    with pytest.raises(ValueError, match="view"):
        ppo_config(num_players=2, view="openspiel")


def test_the_rllib_envs_and_ppo_config_take_the_table_as_one_value():
    options = dict(num_players=3, variant="longo", lucky="instead", reward="score_delta")
    table = TableOptions(**options)
    for view in (QwixxMultiAgentEnv, QwixxParallelMultiAgentEnv):
        assert view({"table": table}).table == table == view(options).table
    assert ppo_config(table=table).env_config["table"] == table == ppo_config(**options).env_config["table"]
    assert ppo_config(num_players=3, env_options={"start_player": 1}).env_config["table"].start_player == 1
    with pytest.raises(TypeError, match="not both"):
        QwixxMultiAgentEnv({"table": table, "num_players": 3})
    with pytest.raises(TypeError, match="not both"):
        ppo_config(table=table, reward="win")


def test_ppo_config_refuses_bad_opponents():
    with pytest.raises(ValueError, match="opponents.nobody"):
        ppo_config(num_players=2, opponents={"nobody": 1})
    with pytest.raises(ValueError, match="opponents.heuristic"):
        ppo_config(num_players=2, opponents={"heuristic": 0})
    with pytest.raises(ValueError, match="lucky"):
        ppo_config(num_players=2, lucky="instead")  # classic has no lucky numbers
    with pytest.raises(ValueError, match="solo game has no opponents"):
        ppo_config(num_players=1, opponents={"heuristic": 1}, reward="score")


def test_qwixx_train_engine_rllib_checks_the_config_first(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text("name: bad\niterations: 1\nopponents: {scripted: {nobody: 1}, self_play: {share: 0.5}}\n")
    assert qwixx_train(["--engine", "rllib", str(config), "--out", str(tmp_path / "run")]) == 2
    assert "opponents.scripted.nobody" in capsys.readouterr().err and not (tmp_path / "run").exists()
    assert qwixx_train(["--engine", "torch", str(config)]) == 2  # no such engine
    assert "expected 'sb3'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env-v0")  # RLlib's own, on rebuild
def test_a_tiny_self_play_run_checkpoints_resumes_exports_and_plays(tmp_path):
    cfg = config_from_dict({
        "name": "tiny", "iterations": 2, "checkpoint_every": 1, "num_players": 2,
        "evaluation": {"every": 10**9, "games": 2, "opponents": ["greedy"], "workers": 1},  # at the start and end
        "opponents": {"scripted": {"heuristic": 1}, "self_play": {"share": 0.5}}, "network": {"hidden": [32, 32]},
        "ppo": {"train_batch_size": 256, "minibatch_size": 128, "num_epochs": 1},
        "env_runners": {"num_env_runners": 0, "num_envs_per_env_runner": 4},
        "ray": {"num_cpus": 2, "object_store_mb": 100},
    })
    run = tmp_path / "run"
    try:
        first = train(cfg, run)
        assert first["iterations"] == 2 and latest_checkpoint(run).name == "iter_000002"
        with pytest.raises(ValueError, match="already holds a run"):
            train(cfg, run)
        # what a segment killed after its last checkpoint leaves: a logged iteration, a snapshot file
        with open(run / "log.jsonl", "a") as log_file:
            log_file.write(json.dumps({"iteration": 3, "env_steps": 10**6}) + "\n")
        orphan = run / "snapshots" / "snapshot_009999999999.npz"
        orphan.parent.mkdir(exist_ok=True)
        orphan.write_bytes(b"")
        resumed = train(config_from_dict({**cfg.to_dict(), "iterations": 3}), run, resume=True)
    finally:
        ray.shutdown()
    assert resumed["iterations"] == 3 and latest_checkpoint(run).name == "iter_000003"
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [line["iteration"] for line in log] == [1, 2, 3] and log[2]["env_steps"] < 10**6
    assert not orphan.exists()
    evaluated = [json.loads(line)["steps"] for line in (run / "eval.jsonl").read_text().splitlines()]
    assert evaluated == [0, log[1]["env_steps"], log[2]["env_steps"]]  # the warm start, each segment's end
    assert bots.load(run / "warm_start.json").policy.meta["steps"] == 0
    assert all(line["returns"].keys() == {"default_policy"} for line in log if line["episodes"])
    assert log[2]["env_steps"] > log[1]["env_steps"] > log[0]["env_steps"] > 0  # counters carried over
    assert all(line["sample_seconds"] > 0 and line["learn_seconds"] > 0 for line in log)  # where the time went
    bot = bots.load(run / "policy.json")
    assert bot.policy.meta["iteration"] == 3
    result = run_arena([lambda **kw: bots.load(run / "policy.json"), "heuristic"], games=4, workers=1)
    assert result.deals == 4 and sum(result.games.rolls) > 0


def test_the_shipped_rllib_config_loads():
    cfg = load_config(Path(__file__).parent.parent / "configs" / "rllib_classic_2p.yaml")
    assert cfg.name == "rllib_classic_2p" and cfg.iterations > 0


def test_the_league_benchmarks_configs_each_change_the_shipped_one_only_where_they_say():
    root = Path(__file__).parent.parent
    shipped = load_config(root / "configs" / "rllib_classic_2p.yaml").to_dict()
    changed = {}
    for path in sorted((root / "benchmarks" / "rllib_league").glob("*.yaml")):
        cfg = load_config(path).to_dict()
        changed[path.stem] = {key for key in shipped if cfg[key] != shipped[key]} - {"name"}
    assert changed == {"from_scratch": {"bc", "ppo"}, "greedy_teacher": {"bc"},
                       "faster": {"ppo", "opponents", "iterations"}}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env-v0")  # RLlib's own, on rebuild
def test_the_training_command_saves_and_resumes_a_relative_run_folder(tmp_path, monkeypatch, capsys):
    """As the docs type it: the default ``runs/<name>``, then, the folder moved, ``--out <folder>
    --resume``, from the working directory; RLlib takes only absolute paths (a relative one is
    "URI has empty scheme")."""
    monkeypatch.chdir(tmp_path)
    Path("tiny.yaml").write_text(
        "name: tiny\niterations: 1\nnetwork: {hidden: [8]}\nevaluation: null\n"
        "ppo: {train_batch_size: 64, minibatch_size: 32, num_epochs: 1}\n"
        "env_runners: {num_env_runners: 0, num_envs_per_env_runner: 1}\nray: {num_cpus: 1, object_store_mb: 100}\n")
    try:
        assert qwixx_train(["--engine", "rllib", "tiny.yaml"]) == 0, capsys.readouterr().err
        assert latest_checkpoint(Path("runs/tiny")) == Path("runs/tiny/checkpoints/iter_000001")
        # latest.json names the checkpoint inside the run folder, so a moved folder still resumes
        Path("runs/tiny").rename("runs/moved")
        args = ["--engine", "rllib", "tiny.yaml", "--out", "runs/moved", "--resume", "--iterations", "2"]
        assert qwixx_train(args) == 0, capsys.readouterr().err
        assert json.loads(Path("runs/moved/checkpoints/latest.json").read_text()) == {"checkpoint": "iter_000002"}
        algo = Algorithm.from_checkpoint(Path("runs/moved/checkpoints/iter_000002").resolve())  # as the docs show
        assert algo.iteration == 2
        algo.stop()
    finally:
        ray.shutdown()
    assert bots.load("runs/moved").policy.meta["iteration"] == 2  # the run folder, as the arena takes it


TINY_YAML = ("name: tiny\niterations: 2\nnetwork: {hidden: [8]}\nevaluation: null\n"
             "ppo: {train_batch_size: 64, minibatch_size: 32, num_epochs: 1}\n"
             "env_runners: {num_env_runners: 0, num_envs_per_env_runner: 1}\n"
             "ray: {num_cpus: 1, object_store_mb: 100}\n")


def finished_run(run):
    """What a finished 2-iteration run leaves (enough for the checks made before Ray starts)."""
    (run / "checkpoints" / "iter_000002").mkdir(parents=True)
    (run / "checkpoints" / "latest.json").write_text(json.dumps({"checkpoint": "iter_000002"}))
    (run / "warm_start.npz").write_bytes(b"the warm start")
    (run / "eval.jsonl").write_text(json.dumps({"steps": 0}) + "\n" + json.dumps({"steps": 128}) + "\n")


def test_resuming_a_finished_run_refuses_and_changes_nothing(tmp_path, capsys):
    """It used to evaluate the final policy as the warm start (step 0): warm_start.npz overwritten,
    a second steps-0 line in eval.jsonl."""
    (tmp_path / "tiny.yaml").write_text(TINY_YAML)
    run = tmp_path / "run"
    finished_run(run)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    args = ["--engine", "rllib", str(tmp_path / "tiny.yaml"), "--out", str(run), "--resume"]
    assert qwixx_train(args) == 2
    err = capsys.readouterr().err
    assert "has already trained its 2 iterations (iter_000002; iterations: 2)" in err
    assert "pass --iterations N (N > 2) to train it further" in err
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_a_start_interrupted_before_its_first_checkpoint_says_to_start_over(tmp_path, capsys, monkeypatch):
    """Its --resume hint used to fail ("holds no checkpoint")."""
    import qwixx_env.training.rllib as rllib_training

    (tmp_path / "tiny.yaml").write_text(TINY_YAML)
    run = tmp_path / "run"

    def interrupted(cfg, out, resume=False):
        out.mkdir(parents=True)
        (out / "log.jsonl").write_text(json.dumps({"iteration": 1}) + "\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(rllib_training, "start_ray", lambda cfg: None)
    monkeypatch.setattr(rllib_training, "train", interrupted)
    assert qwixx_train(["--engine", "rllib", str(tmp_path / "tiny.yaml"), "--out", str(run)]) == 130
    assert "run the same command again (without --resume) to start" in capsys.readouterr().err
    assert qwixx_train(["--engine", "rllib", str(tmp_path / "tiny.yaml"), "--out", str(run), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "holds no checkpoint (checkpoints/latest.json) (its start was interrupted before the first); run again " \
           "without --resume to start over" in err


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env-v0")  # RLlib's own, on rebuild
def test_a_start_interrupted_before_its_first_checkpoint_starts_over_when_run_again(tmp_path, capsys):
    """Run again into its folder, it used to append to the old log: iterations [1, 2, 3, 4, 1, 2]."""
    (tmp_path / "tiny.yaml").write_text(TINY_YAML.replace("iterations: 2", "iterations: 1"))
    run = tmp_path / "run"
    (run / "snapshots").mkdir(parents=True)
    (run / "snapshots" / "snapshot_000000000064.npz").write_bytes(b"")
    (run / "log.jsonl").write_text("".join(json.dumps({"iteration": i}) + "\n" for i in (1, 2, 3, 4)))
    try:
        assert qwixx_train(["--engine", "rllib", str(tmp_path / "tiny.yaml"), "--out", str(run)]) == 0
    finally:
        ray.shutdown()
    assert "starting over (removing log.jsonl, snapshots)" in capsys.readouterr().err
    assert [json.loads(line)["iteration"] for line in (run / "log.jsonl").read_text().splitlines()] == [1]
    assert not (run / "snapshots" / "snapshot_000000000064.npz").exists()


# --- the vector path: env runners on the batched engine, the league -------------------------------


def tiny(**extra):
    """A tiny vector-path run's config (small network and batches, no evaluation)."""
    return config_from_dict({
        "name": "tiny", "iterations": 2, "checkpoint_every": 1, "num_players": 2, "evaluation": None,
        "opponents": {"scripted": {"greedy": 1}, "self_play": {"snapshot_every": 100, "share": 0.5}},
        "network": {"hidden": [16]}, "ppo": {"train_batch_size": 128, "minibatch_size": 64, "num_epochs": 1},
        "env_runners": {"num_env_runners": 0, "num_envs_per_env_runner": 8}, **extra,
    })


def test_sixteen_runners_of_256_games_each_draw_their_own_dice_and_the_same_seed_draws_them_again():
    """An int seed gives each game of the vector env a stream of its own (`dice_streams`), so no
    game of one seed replays a game of another, as ``seed + game`` did (only 271 distinct streams
    among 16 x 256 games seeded 7 + 1 ... 7 + 16)."""
    from qwixx_env.core.engine import game_seeds

    def first_rolls(config_seed):
        streams, rolls = [], []
        for worker in range(1, 17):
            env = make_vector_env({"num_envs": 256, "num_players": 2})
            env.reset(seed=config_seed + worker)
            streams += env.env.engine.state.rng.tolist()
            rolls += [tuple(d) for d in env.env.engine.state.dice.tolist()]
        return streams, rolls

    streams, rolls = first_rolls(7)
    assert len(set(streams)) == 16 * 256
    assert (streams, rolls) == first_rolls(7) and streams != first_rolls(8)[0]
    old = {int(s) for w in range(1, 17) for s in game_seeds(7 + w, 256)}
    assert len(old) == 271  # what the runners shared before


def test_every_runner_seed_restart_and_resume_deals_dice_of_its_own():
    """8 runners x 64 games, for seeds 0 and 1, each started with the run (0 steps sampled) and
    again after a restart or a resume (1,000 steps): every game its own stream, and the same
    ones again for the same seed. RLlib's own seeding, sub-env i of runner w from
    ``seed + w + i``, gives the 1,024 games of both seeds' first starts 72 streams."""
    def streams(seed, steps):
        return [s for w in range(1, 9) for s in runner_dice_seeds(seed, w, steps, 64)]

    dealt = [s for seed in (0, 1) for steps in (0, 1000) for s in streams(seed, steps)]
    assert len(set(dealt)) == len(dealt) == 2 * 2 * 8 * 64
    assert streams(0, 1000) == streams(0, 1000)
    assert len({seed + w + i for seed in (0, 1) for w in range(1, 9) for i in range(64)}) == 72


@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env-v0")  # RLlib's own
def test_the_multi_agent_runners_deal_their_own_dice_again_after_a_restart():
    """`ppo_config`'s env runners: no game of runner 1 deals what a game of runner 2 deals (RLlib
    seeds runner 1's sub-env 1 as runner 2's sub-env 0), and runner 1 restarted (RLlib syncs the
    run's step count into it before it samples) deals new dice, the same ones each time."""
    config = ppo_config(num_players=2, hidden=(8,)).env_runners(
        num_env_runners=0, num_envs_per_env_runner=4).debugging(seed=0).environment(disable_env_checking=True)

    def first_dice(worker, steps_sampled=0):
        runner = config.env_runner_cls(config=config, worker_index=worker)
        try:
            runner.set_state({NUM_ENV_STEPS_SAMPLED_LIFETIME: steps_sampled})
            runner.sample(num_timesteps=1, random_actions=True)
            return [(tuple(env.unwrapped.game.engine.state.dice.ravel().tolist()),
                     int(env.unwrapped.game.engine.state.rng[0])) for env in runner.env.envs]
        finally:
            runner.stop()

    first, second, restarted = first_dice(1), first_dice(2), first_dice(1, 1000)
    dealt = first + second + restarted
    assert len(set(dealt)) == len(dealt) == 12
    assert first_dice(1, 1000) == restarted


def test_rllibs_env_runner_records_every_decision_the_vector_env_plays():
    """RLlib's own SingleAgentEnvRunner on the vector env: the decisions in the episodes it
    returns are every learner decision the engine played (none lost at a game's reset)."""
    config = vector_ppo_config(num_players=2, opponents={"greedy": 1}, hidden=(16,)).env_runners(
        num_env_runners=0, num_envs_per_env_runner=8)
    runner = SingleAgentEnvRunner(config=config)
    try:
        episodes = runner.sample(num_timesteps=1200, random_actions=False)
        env = vector_env_of(runner).env
        assert sum(1 for e in episodes if e.is_done) > 8  # games ended and restarted in every slot
        assert sum(len(e) for e in episodes) == env.learner_decisions >= 1200
        for e in episodes:  # the masks the module saw always offered a legal action but at the very end
            masks = np.asarray(e.get_observations()["action_mask"])
            assert masks[:-1].any(axis=1).all() if e.is_done else masks.any(axis=1).all()
    finally:
        runner.stop()


def _pools(algo):
    """Each env runner's pool as its env plays it: the bot specs, "policy" for a snapshot."""
    def pool(runner):
        env = vector_env_of(runner)
        return None if env is None else sorted(o if isinstance(o, str) else "policy" for o in env.env.opponents)

    return algo.env_runner_group.foreach_env_runner(pool, local_env_runner=False)


@pytest.mark.slow
def test_a_restarted_env_runner_and_a_restored_algorithm_play_the_current_league(tmp_path):
    """RLlib restarts a runner whose process died, and rebuilds an algorithm from a checkpoint;
    both used to start from the config's pool (the league lived only in the old runners' envs)."""
    import os
    import signal

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=100 * 2**20)
    try:
        config = (vector_ppo_config(num_players=2, opponents={"greedy": 1}, hidden=(16,))
                  .env_runners(num_env_runners=1, num_envs_per_env_runner=4)
                  .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1))
        algo = config.build_algo()
        snapshot = bots.load("ppo-classic-2p").policy
        algo.env_runner_group.foreach_env_runner(lambda r: set_league(r, {"heuristic": 1, "snap": 1},
                                                                      {"snap": snapshot}))
        league = ["heuristic", "policy"]
        assert _pools(algo) == [league]
        [pid] = algo.env_runner_group.foreach_env_runner(lambda r: os.getpid(), local_env_runner=False)
        os.kill(pid, signal.SIGKILL)
        # each iteration RLlib probes the dead runner; Ray restarts it meanwhile, and once back the
        # runner is synced with the driver's runner, then samples. How many iterations that takes
        # depends on the machine's load (30 were too few at load 12): wait for it, bounded.
        new_pid = until(lambda: restarted(algo, pid), "the killed env runner to be back and healthy")
        assert new_pid != pid and _pools(algo) == [league]
        saved = algo.save_to_path(tmp_path / "checkpoint")
        algo.stop()
        restored = Algorithm.from_checkpoint(saved)
        try:
            assert _pools(restored) == [league]
        finally:
            restored.stop()
    finally:
        ray.shutdown()


RLLIB_DEADLINE = 900  # seconds a slow test waits for what it needs from Ray (a restart, a sample)


def until(step, what, seconds=RLLIB_DEADLINE):
    """Call `step` (one training iteration and a look) until it returns something other than
    None, and return that; fail naming `what` after `seconds`."""
    import time

    deadline = time.monotonic() + seconds
    while (found := step()) is None:
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
    return found


def restarted(algo, pid):
    """One iteration, then the pid of the only env runner if it is healthy and not `pid`'s."""
    import os

    algo.train()
    if algo.env_runner_group.num_healthy_remote_workers() != 1:
        return None
    [now] = algo.env_runner_group.foreach_env_runner(lambda r: os.getpid(), local_env_runner=False)
    return None if now == pid else now


def sampled_steps(result):
    """The learner decisions sampled so far, from an iteration's result; None for an iteration
    that sampled nothing (its runners returned no episode in time), whose result has no
    ``env_runners`` key at all."""
    steps = result.get("env_runners", {}).get("num_env_steps_sampled_lifetime")
    return None if steps is None else int(steps)


def test_the_log_times_each_iteration_on_its_own(monkeypatch):
    """An iteration whose sampling takes a second more, then a plain one: the plain one's
    `sample_seconds` is its own. RLlib's moving average (weight 0.01) logged it as 0.99 of the slow one's."""
    import time

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, object_store_memory=80 * 2**20)
    try:
        algo = algo_config(tiny()).build_algo()
        sample, calls = algo.env_runner.sample, []

        def slow_once(*args, **kwargs):
            calls.append(1)
            if len(calls) == 1:
                time.sleep(1.0)
            return sample(*args, **kwargs)

        monkeypatch.setattr(algo.env_runner, "sample", slow_once)
        try:
            time_each_iteration(algo)
            lines = []
            for _ in range(2):
                tick = time.perf_counter()
                lines.append(log_line(algo.train(), time.perf_counter() - tick))
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    slow, plain = lines
    assert slow["sample_seconds"] >= 1.0 and plain["sample_seconds"] < slow["sample_seconds"] - 0.5, lines
    # `seconds` is logged to 0.01 s and the timers to 0.0001 s: their sum may pass it by the rounding
    parts = [(line["sample_seconds"], line["learn_seconds"], line["seconds"]) for line in lines]
    assert all(0 < sample + learn <= seconds + 0.005 for sample, learn, seconds in parts), parts


@pytest.mark.slow
def test_the_warm_start_clones_the_teacher_into_the_learner_and_every_env_runner(tmp_path):
    """The same routine as the SB3 path's (`training.bc.fit`), on RLlib's module."""
    cfg = tiny(bc={"teacher": "heuristic", "samples": 3000, "epochs": 3, "batch_size": 128, "learning_rate": 3e-3})
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=80 * 2**20)
    try:
        algo = algo_config(cfg).build_algo()
        try:
            figures = behaviour_cloning(algo, cfg, cfg.bc, tmp_path)
            learned = algo.learner_group.get_weights()[cfg.module_id]
            sampling = algo.env_runner.module.get_state(inference_only=True)
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    assert figures["agreement"] > figures["agreement_chance"] + 0.25, figures
    assert figures["agreement"] > figures["agreement_before"] + 0.2, figures
    assert json.loads((tmp_path / "bc.json").read_text())["agreement"] == figures["agreement"]
    for name, weights in sampling.items():  # the runner samples with the cloned actor
        np.testing.assert_array_equal(np.asarray(weights), np.asarray(learned[name]))


def test_rllib_config_takes_the_ppo_configs_opponent_pool_and_refuses_the_old_form():
    cfg = tiny()
    assert cfg.env == "vector" and cfg.opponents.scripted == {"greedy": 1.0}
    assert algo_config(cfg).env == "qwixx-vector-v0"
    assert algo_config(cfg).env_runner_cls is BatchedEnvRunner  # the default runner ...
    stock = config_from_dict({**cfg.to_dict(), "env_runners": {"num_env_runners": 0, "runner": "rllib"}})
    assert issubclass(algo_config(stock).env_runner_cls, SingleAgentEnvRunner)  # ... or RLlib's own sampling
    with pytest.raises(ValueError, match="env_runners.runner"):
        config_from_dict({**cfg.to_dict(), "env_runners": {"runner": "fast"}})
    with pytest.raises(ValueError, match=r"opponents: got \{'self': 3, 'heuristic': 1\}; expected opponents.scripted "
                                         r"\(bot spec -> weight\) and/or opponents.self_play"):
        config_from_dict({**tiny().to_dict(), "opponents": {"self": 3, "heuristic": 1}})  # 0.1's form
    opponents = {"scripted": {"heuristic": 1}, "self_play": {"share": 0.75}}  # the same pool in the pool form
    pool = config_from_dict({**tiny().to_dict(), "opponents": opponents})
    assert pool.opponents.scripted == {"heuristic": 1} and pool.opponents.self_play.share == 0.75
    multi = config_from_dict({**pool.to_dict(), "env": "multi_agent"})
    assert multi.seat_weights() == {SELF: 0.75, "heuristic": 0.25}
    assert algo_config(multi).env is QwixxMultiAgentEnv
    with pytest.raises(ValueError, match="opponents.scripted.nobody"):
        config_from_dict({**tiny().to_dict(), "opponents": {"scripted": {"nobody": 1}}})
    with pytest.raises(ValueError, match="env: got 'gym'"):
        config_from_dict({**tiny().to_dict(), "env": "gym"})


@pytest.mark.parametrize("reward", ["win", "score_delta"])
def test_the_vector_path_pays_an_illegal_ending_less_than_any_legal_one(reward):
    env = make_vector_env({"num_players": 2, "reward": reward, "opponents": {"greedy": 1}, "num_envs": 2})
    assert env.env.illegal_reward == illegal_return(reward, env.env.variant)
    obs, _ = env.reset(seed=0)
    masked = obs["action_mask"].argmin(axis=1)  # a forbidden action in every game
    obs, rewards, terminated, _, infos = env.step(masked)
    assert terminated.all() and infos["illegal_action"].all()
    assert (rewards == illegal_return(reward, env.env.variant)).all()
    with pytest.raises(ValueError, match="env_config: got unknown key"):
        make_vector_env({"num_player": 2})


@pytest.mark.slow
def test_the_league_broadcasts_snapshots_to_env_runners_on_two_nodes(tmp_path):
    """A simulated two-node Ray cluster (one CPU each, one env runner each): both runners
    sample, and the learner's snapshots reach both as opponents."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 80 * 2**20})
    cluster.add_node(num_cpus=1, object_store_memory=80 * 2**20)
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        cfg = tiny(env_runners={"num_env_runners": 2, "num_envs_per_env_runner": 8})
        algo = algo_config(cfg).build_algo()
        league = make_league(cfg, tmp_path, {})  # no opponent given by path
        def look():
            return algo.env_runner_group.foreach_env_runner(
                lambda runner: (ray.get_runtime_context().get_node_id(), vector_env_of(runner).env.learner_decisions,
                                sorted(str(o) for o in vector_env_of(runner).env.opponents)),
                local_env_runner=False,
            )

        def two_snapshots_and_both_sampled():
            steps = sampled_steps(algo.train())
            if steps is not None:  # a snapshot per sampled iteration (snapshot_every is below a batch)
                league.after_iteration(algo, steps)
            seen = look()
            sampled = len(seen) == 2 and all(decisions > 0 for _, decisions, _ in seen)
            return seen if len(league.pool.snapshots) >= 2 and sampled else None

        try:
            league.start(algo)
            seen = until(two_snapshots_and_both_sampled, "two sampled iterations with both env runners sampling")
        finally:

            algo.stop()
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert len({node for node, _, _ in seen}) == 2
    assert all(decisions > 0 for _, decisions, _ in seen)
    snapshots = [s.name for s in league.pool.snapshots]
    assert len(snapshots) >= 2  # one per sampled iteration (snapshot_every is below a batch)
    for _, _, opponents in seen:
        assert "greedy" in opponents and sum("NumpyPolicy('snapshot_" in o for o in opponents) == len(snapshots)



@pytest.mark.slow
def test_sigterm_stops_the_run_and_the_ray_it_started(tmp_path):
    """`qwixx-train --engine rllib` shuts down the Ray it started on SIGTERM as on Ctrl-C: no
    Ray process of its outlives it (they ignored SIGTERM and stayed when it was killed)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "tiny.yaml").write_text(
        "name: tiny\niterations: 1000\nnetwork: {hidden: [8]}\nevaluation: null\n"
        "ppo: {train_batch_size: 64, minibatch_size: 32, num_epochs: 1}\n"
        "env_runners: {num_env_runners: 0, num_envs_per_env_runner: 1, num_cpus_per_env_runner: 1}\n"
        "ray: {num_cpus: 1, object_store_mb: 100, runtime_env: {env_vars: {QWIXX_TEST: '1'}}}\n")
    proc = subprocess.Popen([sys.executable, "-m", "qwixx_env.training.rllib", "tiny.yaml"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def descendants(pid):
        children = []
        for task in Path(f"/proc/{pid}/task").glob("*"):
            for child in (task / "children").read_text().split():
                children += [int(child), *descendants(int(child))]
        return children

    try:
        assert proc.stdout is not None
        lines = []
        while not any('"iteration": 1' in line for line in lines):  # Ray is up and the run under way
            lines.append(proc.stdout.readline())
            assert lines[-1], "".join(lines) + proc.stderr.read()  # it ended before its first iteration
        ray_processes = descendants(proc.pid)
        assert ray_processes  # the Ray it started: its processes are the driver's children
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 130
        said = proc.stderr.read()  # before or after the run's first checkpoint: either says so
        assert "interrupted" in said and "Ray shut down" in said, said
        time.sleep(2)
        alive = [p for p in ray_processes if Path(f"/proc/{p}").exists()
                 and Path(f"/proc/{p}/stat").read_text().split()[2] != "Z"]
        assert not alive, [Path(f"/proc/{p}/cmdline").read_text() for p in alive]
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)


def test_a_scripted_opponent_given_by_path_is_loaded_on_the_driver_and_sent_with_the_config(tmp_path):
    """A runner on another machine has no copy of the file: the env config carries the policy."""
    from qwixx_env.nets import NumpyPolicy
    from qwixx_env.training.league import shipped_policies

    path = str(Path(__file__).parent.parent / "checkpoints" / "ppo-classic-2p.json")
    cfg = tiny()
    cfg = config_from_dict({**cfg.to_dict(), "opponents": {"scripted": {path: 1, "greedy": 1}}})
    shipped = shipped_policies(cfg.opponents.scripted, cfg.table)
    assert list(shipped) == [path] and isinstance(shipped[path], NumpyPolicy)
    opponents = algo_config(cfg).env_config["opponents"]
    assert "greedy" in opponents and path not in opponents
    assert [type(o) for o in opponents if not isinstance(o, str)] == [NumpyPolicy]
