"""Tianshou (the tianshou extra): `tianshou_env` gives one learning seat whose every transition
runs from its decision to its next, checked without Tianshou against the single-agent view;
and the docs' snippet, in which Tianshou's masked DQN learns against the heuristic bot, runs as
written, prints what the page shows, and stores the learner's own next observations."""

from __future__ import annotations

import numpy as np
import pytest
from test_parallel import run_snippets

from qwixx_env.envs.single import QwixxGymEnv
from qwixx_env.integrations.tianshou import tianshou_env

MISSING = "the tianshou extra is not installed (runs in make test-integrations)"


def test_tianshou_env_is_the_single_agent_view_with_tianshous_keys():
    # the same seed and actions through both: the same learner observations, masks and rewards
    options = dict(num_players=3, variant="longo", opponents="heuristic", learner_seat="random")
    ours, plain = tianshou_env(**options), QwixxGymEnv(**options)
    assert set(ours.observation_space.spaces) == {"obs", "mask"}
    rng = np.random.default_rng(0)
    for seed in range(3):
        obs, _ = ours.reset(seed=seed)
        want, _ = plain.reset(seed=seed)
        done = False
        while not done:
            assert ours.observation_space.contains(obs)
            assert np.array_equal(obs["obs"], want["observation"])
            assert obs["mask"].dtype == bool and np.array_equal(obs["mask"], want["action_mask"] == 1)
            assert obs["mask"].any()  # every step is a decision of the learner's
            action = int(rng.choice(np.flatnonzero(obs["mask"])))
            obs, reward, done, _, _ = ours.step(action)
            want, want_reward, _, _, _ = plain.step(action)
            assert reward == want_reward


def test_tianshou_env_takes_only_the_dict_observation():
    with pytest.raises(ValueError, match=r"observation: got 'flat'; tianshou_env gives Tianshou's dict"):
        tianshou_env(observation="flat")


@pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py
def test_docs_snippet_trains_the_learner_on_its_own_transitions(capsys):
    pytest.importorskip("tianshou", reason=MISSING)
    import torch  # Tianshou needs it: there when Tianshou is

    ns: dict = {"__name__": "__docs__"}
    out, shown = run_snippets("Tianshou", capsys, ns)
    assert shown.startswith("training: ") and "all legal: True" in shown
    assert out == shown

    buffer, n = ns["buffer"], len(ns["buffer"])
    acts, masks, done, rew = buffer.act[:n], buffer.obs.mask[:n], buffer.done[:n], buffer.rew[:n]
    assert "agent_id" not in buffer.obs.keys()  # one seat's transitions only
    # every action taken, the exploration included, is one its mask offered
    assert masks[np.arange(n), acts].all()
    # one terminal transition per game the trainer counted
    assert done.sum() == ns["result"].train_episode > 0
    # the next observation is the learner's own next one: the first of its next transition
    going = np.flatnonzero(~done[:-1])
    assert len(going) > 500
    assert all(np.array_equal(buffer.obs_next.obs[i], buffer.obs.obs[i + 1]) for i in going)
    assert buffer.obs_next.mask[going].any(axis=1).all()
    # with reward="win" the result (+1, 0 in a shared win, -1) comes on the learner's last
    # transition of each game, never on another's
    assert (rew[~done] == 0).all() and set(rew[done].tolist()) <= {-1.0, 0.0, 1.0}
    assert (rew[done] != 0).any()
    # DQN updated the network: every weight tensor moved from the seeded first ones
    env = ns["env"]
    torch.manual_seed(0)
    first = ns["Net"](state_shape=env.observation_space["obs"].shape, action_shape=env.action_space.n,
                      hidden_sizes=[64])
    assert all(not torch.equal(a, b) for a, b in zip(first.state_dict().values(), ns["net"].state_dict().values()))
