"""`BatchedEnvRunner`: RLlib's env runner over a whole vector env per step, as arrays.

What it records must be what RLlib's own runner records (every decision once, episodes and
their chunks continuing across calls) and what the learner needs (each action's
log-probability under the distribution it was drawn from). Skipped, with the reason, when
the rllib extra (ray) is not installed.
"""

import pickle
from collections import defaultdict

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the rllib extra is not installed: pip install -e '.[rllib]'")

import ray  # noqa: E402
import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner  # noqa: E402
from ray.tune.registry import register_env  # noqa: E402

from qwixx_env.envs.vector import QwixxVectorEnv  # noqa: E402
from qwixx_env.integrations.rllib import VECTOR_ENV, vector_env_of, vector_ppo_config  # noqa: E402
from qwixx_env.integrations.rllib_runner import BatchedEnvRunner, LeagueEnvRunner  # noqa: E402


def small_config(num_envs=8, seed=3, **options):
    options = {"num_players": 2, "opponents": {"greedy": 1, "random": 1}, **options}
    return (vector_ppo_config(hidden=(16,), **options)
            .env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs).debugging(seed=seed))


@pytest.fixture
def runner():
    runner = BatchedEnvRunner(config=small_config())
    yield runner
    runner.stop()


def by_episode(calls):
    """Episode id -> its chunks, in the order the calls returned them."""
    chunks = defaultdict(list)
    for episodes in calls:
        for e in episodes:
            chunks[e.id_].append(e)
    return chunks


def test_every_decision_the_engine_plays_is_in_exactly_one_chunk(runner):
    calls = [runner.sample(num_timesteps=150) for _ in range(5)]
    env = vector_env_of(runner).env
    assert sum(len(e) for episodes in calls for e in episodes) == env.learner_decisions >= 750
    games = by_episode(calls)
    finished = [chunks for chunks in games.values() if chunks[-1].is_done]
    assert len(finished) > 8  # games ended and restarted in the slots
    for chunks in games.values():
        assert chunks[0].t_started == 0
        assert all(not c.is_done for c in chunks[:-1])  # only a game's last chunk may end it
        for before, after in zip(chunks, chunks[1:], strict=False):
            assert after.t_started == before.t  # a chunk goes on where the last one stopped ...
            first, last = after.get_observations(0), before.get_observations(-1)
            assert all(np.array_equal(first[k], last[k]) for k in first)  # ... from the same observation
    for chunks in finished:  # a 2-player game under "win" pays -1, 0 or +1 in all
        assert sum(c.get_return() for c in chunks) in (-1.0, 0.0, 1.0)
        final = chunks[-1].get_observations(-1)["action_mask"]
        assert not final.any()  # the final observation offers no action
    for episodes in calls:
        for e in episodes:
            masks = e.get_observations(slice(0, len(e)))["action_mask"]
            assert masks[np.arange(len(e)), e.get_actions()].all()  # every action was legal where it was taken


@pytest.mark.parametrize("table", [
    {},
    {"num_players": 1, "reward": "score"},
    {"num_players": 3, "reward": "score_delta", "opponents": {"heuristic": 1, "random": 1}},
    {"num_players": 2, "variant": "longo", "lucky": "bonus", "reward": "margin"},
    {"num_players": 5, "variant": "longo", "lucky": "instead"},
])
def test_the_batched_runner_records_what_rllibs_own_runner_records(table):
    """Same weights, same seed, greedy actions: the two runners see and do the same, chunk for
    chunk, whatever the table and the reward. (RLlib's sampling as `LeagueEnvRunner` runs it,
    which deals the games' dice as `BatchedEnvRunner` does.)"""
    config = small_config(num_envs=4, **table)
    stock, batched = LeagueEnvRunner(config=config), BatchedEnvRunner(config=config)
    try:
        batched.set_state(stock.get_state())

        def record(runner):
            calls = [runner.sample(num_timesteps=120, explore=False) for _ in range(3)]
            return sorted(
                (e.t_started, e.is_terminated, tuple(e.get_actions().tolist()),
                 tuple(np.round(e.get_rewards(), 6).tolist()),
                 e.get_observations()["observations"].tobytes())
                for episodes in calls for e in episodes
            )

        ours, theirs = record(batched), record(stock)
    finally:
        stock.stop()
        batched.stop()
    assert len(ours) == len(theirs) > 12 and ours == theirs


def test_an_explored_action_comes_with_its_log_probability(runner):
    episodes = runner.sample(num_timesteps=200)
    for e in episodes:
        logits = torch.from_numpy(np.asarray(e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS)))
        logp = np.asarray(e.get_extra_model_outputs(Columns.ACTION_LOGP))
        expected = torch.log_softmax(logits, -1)[torch.arange(len(e)), torch.from_numpy(e.get_actions()).long()]
        np.testing.assert_allclose(logp, expected.numpy(), rtol=1e-5, atol=1e-5)
    assert len({int(a) for e in episodes for a in e.get_actions()}) > 5  # drawn, not always the same


def test_episodes_travel_packed_and_arrive_the_same(runner):
    """Between processes (Ray pickles what a remote runner returns) a call's episodes go as one
    array per column and come back as the same episodes."""
    runner.sample(num_timesteps=60)
    episodes = runner.sample(num_timesteps=240)  # chunks that go on and games that ended
    back = pickle.loads(pickle.dumps(episodes, protocol=5))
    assert type(back) is list and len(back) == len(episodes) > 8
    assert any(e.is_done for e in back) and any(not e.is_done for e in back)
    for a, b in zip(episodes, back, strict=True):
        assert (a.id_, a.t_started, a.t, a.is_terminated, a.is_truncated) == (b.id_, b.t_started, b.t, b.is_terminated,
                                                                           b.is_truncated)
        for key in ("observations", "action_mask"):
            np.testing.assert_array_equal(a.get_observations()[key], b.get_observations()[key])
        np.testing.assert_array_equal(a.get_actions(), b.get_actions())
        np.testing.assert_array_equal(a.get_rewards(), b.get_rewards())
        for key in a.extra_model_outputs:
            np.testing.assert_array_equal(a.get_extra_model_outputs(key), b.get_extra_model_outputs(key))
        assert b.observation_space == a.observation_space and b.action_space == a.action_space
        b.validate()
    assert pickle.loads(pickle.dumps(runner.sample(num_timesteps=0))) == []


def test_sampling_by_episodes_returns_whole_games_from_fresh_ones(runner):
    runner.sample(num_timesteps=40)  # games under way ...
    episodes = runner.sample(num_episodes=5)  # ... are not continued: sampling by episodes starts afresh
    assert len(episodes) >= 5 and all(e.is_terminated and e.t_started == 0 for e in episodes)
    random = runner.sample(num_timesteps=100, random_actions=True)
    for e in random:
        masks = e.get_observations(slice(0, len(e)))["action_mask"]
        assert masks[np.arange(len(e)), e.get_actions()].all()


def test_the_same_seed_samples_the_same_games():
    def games(seed):
        runner = BatchedEnvRunner(config=small_config(seed=seed))
        try:
            return [(e.get_actions().tolist(), e.get_rewards().tolist()) for e in runner.sample(num_timesteps=100)]
        finally:
            runner.stop()

    assert games(5) == games(5) != games(6)


def test_ppo_trains_through_the_batched_runner():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=80 * 2**20)
    try:
        algo = small_config(num_envs=16).training(train_batch_size_per_learner=256, minibatch_size=128,
                                                  num_epochs=1).build_algo()
        try:
            before = [p.detach().clone() for p in algo.get_module().parameters()]
            algo.train()
            result = algo.train()  # 32 decisions per game slot by now: games have ended
            after = list(algo.get_module().parameters())
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    assert isinstance(algo.env_runner, BatchedEnvRunner)
    learner = result["learners"]["default_policy"]
    assert np.isfinite(learner["policy_loss"]) and np.isfinite(learner["vf_loss"])
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 512
    assert -1 <= result["env_runners"]["episode_return_mean"] <= 1 and result["env_runners"]["num_episodes"] > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))


def test_the_batched_runner_refuses_what_it_does_not_run():
    with pytest.raises(ValueError, match="env_to_module_connector"):
        BatchedEnvRunner(config=small_config().env_runners(env_to_module_connector=lambda env, spaces, device: []))
    register_env("qwixx-same-step-test", lambda cfg: QwixxVectorEnv(cfg.get("num_envs", 1)))
    config = small_config().environment("qwixx-same-step-test", env_config={})
    with pytest.raises(ValueError, match="autoreset_mode"):
        BatchedEnvRunner(config=config)
    with pytest.raises(ValueError, match="env_runner: got 'fast'"):
        vector_ppo_config(num_players=2, env_runner="fast")
    assert small_config(env_runner="rllib").env_runner_cls is LeagueEnvRunner  # RLlib's sampling, with the league
    assert small_config().env == VECTOR_ENV


def test_an_rllib_without_a_private_name_the_runner_uses_is_named_with_the_ray_version():
    import inspect

    from qwixx_env.integrations import rllib_private

    rllib_private.check_runner_class()  # the installed RLlib has them all
    renamed = type("Renamed", (SingleAgentEnvRunner,), {"_try_env_step": None})
    with pytest.raises(rllib_private.RLlibMismatch, match=rf"Renamed\._try_env_step, which ray {ray.__version__}"):
        rllib_private.check_runner_class(renamed)

    def log(self, length, ret):  # one parameter fewer
        pass

    changed = type("Changed", (SingleAgentEnvRunner,), {"_log_episode_metrics": log})
    assert "sec" not in inspect.signature(changed._log_episode_metrics).parameters
    with pytest.raises(rllib_private.RLlibMismatch, match=r"_log_episode_metrics with the parameter\(s\) \['sec'\]"):
        rllib_private.check_runner_class(changed)
    with pytest.raises(rllib_private.RLlibMismatch, match=r"attribute object\._needs_initial_reset"):
        rllib_private.check_runner(object())  # type: ignore[arg-type]


def test_an_rllib_without_a_private_name_still_imports_and_runs_its_own_runner(monkeypatch):
    """The error's way out, ``env_runner='rllib'``, must be reachable: the integration imports,
    RLlib's own runner samples, and only building the batched runner fails."""
    import subprocess
    import sys

    from qwixx_env.integrations import rllib_private

    moved = "rllib_private.METHODS['_moved_in_a_later_rllib'] = ()"
    script = f"from qwixx_env.integrations import rllib_private; {moved}; import qwixx_env.integrations.rllib"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.setitem(rllib_private.METHODS, "_moved_in_a_later_rllib", ())
    with pytest.raises(rllib_private.RLlibMismatch, match=r"_moved_in_a_later_rllib.*env_runner='rllib'"):
        BatchedEnvRunner(config=small_config())
    stock = LeagueEnvRunner(config=small_config(env_runner="rllib"))
    try:
        assert sum(len(e) for e in stock.sample(num_timesteps=16)) >= 16
    finally:
        stock.stop()


def test_a_custom_learner_connector_is_refused_when_the_runner_is_built():
    config = small_config().training(learner_connector=lambda obs_space, act_space: [])
    with pytest.raises(ValueError, match="config sets learner_connector"):
        BatchedEnvRunner(config=config)
