"""An illegal action never pays better than a legal ending, in every reward mode and the same
in the AEC env (`env()`), the Gymnasium env and the vector env (``illegal_action="terminate"``)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from qwixx_env import QwixxVectorEnv, qwixx_v0
from qwixx_env.core.rewards import illegal_return
from qwixx_env.core.variant import CLASSIC

PASS = CLASSIC.pass_action
WORST_SCORE, BEST_SCORE = -4 * 5, 4 * 78  # every penalty and no cross; four full rows with their locks
WORST_LEGAL = {"win": -1, "score": WORST_SCORE, "score_delta": WORST_SCORE, "margin": WORST_SCORE - BEST_SCORE}
PENALTIES = 3  # the offender passes as active player until it stands at -15, then plays illegally


def always_pass(observations, masks):
    return np.full(len(observations), PASS)


def first_illegal(mask) -> int:
    return int(np.flatnonzero(mask == 0)[0])


def aec_return(mode, **options) -> float:
    """Seat 0's summed rewards in a 2-player game where everyone passes until seat 0 has taken
    `PENALTIES` penalties, then seat 0 plays an illegal action."""
    env = qwixx_v0.env(num_players=2, reward=mode, **options)
    env.reset(seed=5)
    total = 0.0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        if agent == "player_0":
            total += reward
        if terminated or truncated:
            env.step(None)
            continue
        over_the_limit = env.unwrapped.core_state.penalties[0, 0] >= PENALTIES
        env.step(first_illegal(obs["action_mask"]) if agent == "player_0" and over_the_limit else PASS)
    return total


def gym_return(mode, **options) -> float:
    env = gymnasium.make("qwixx_env/Qwixx-v0", num_players=2, reward=mode, learner_seat=0,
                         opponents=always_pass, **options).unwrapped
    obs, _ = env.reset(seed=5)
    total, terminated = 0.0, False
    while not terminated:
        penalties = env.vector.engine.state.penalties[0, 0]
        obs, reward, terminated, _, info = env.step(first_illegal(obs["action_mask"]) if penalties >= PENALTIES
                                                     else PASS)
        total += reward
    assert info == {"illegal_action": True}
    return total


def vector_return(mode, **options) -> float:
    env = QwixxVectorEnv(1, num_players=2, reward=mode, learner_seat=0, opponents=always_pass,
                         illegal_action="terminate", **options)
    obs, _ = env.reset(seed=5)
    total, done = 0.0, False
    while not done:
        penalties = env.engine.state.penalties[0, 0]
        action = first_illegal(obs["action_mask"][0]) if penalties >= PENALTIES else PASS
        obs, rewards, terminated, _, infos = env.step(np.array([action]))
        total, done = total + float(rewards[0]), bool(terminated[0])
    assert infos["illegal_action"][0]
    return total


@pytest.mark.parametrize("mode", ["win", "score", "score_delta", "margin"])
def test_an_illegal_ending_is_worse_than_any_legal_one_and_the_same_in_every_env(mode):
    returns = {"aec": aec_return(mode), "gym": gym_return(mode), "vector": vector_return(mode)}
    assert returns == dict.fromkeys(returns, float(illegal_return(mode, CLASSIC)))
    assert returns["aec"] < WORST_LEGAL[mode]


@pytest.mark.parametrize("mode", ["win", "score_delta"])
def test_illegal_reward_sets_the_offenders_return_in_every_env(mode):
    returns = [f(mode, illegal_reward=-7.5) for f in (aec_return, gym_return, vector_return)]
    assert returns == [-7.5] * 3


@pytest.mark.parametrize("bad", [float("nan"), "low", True])
def test_illegal_reward_is_checked(bad):
    with pytest.raises(ValueError, match=r"illegal_reward: got .*finite number"):
        qwixx_v0.env(illegal_reward=bad)
    with pytest.raises(ValueError, match=r"illegal_reward: got .*finite number"):
        QwixxVectorEnv(1, illegal_reward=bad)


def test_the_vector_env_terminates_by_default_as_every_env_does():
    env = QwixxVectorEnv(2, num_players=2)
    obs, _ = env.reset(seed=0)
    _, rewards, terminated, _, infos = env.step(np.array([first_illegal(m) for m in obs["action_mask"]]))
    assert terminated.all() and infos["illegal_action"].all()
    assert (rewards == -2.0).all()  # "win": worse than a loss


def test_the_vector_env_with_illegal_action_raise_raises_and_says_how_to_terminate():
    env = QwixxVectorEnv(2, num_players=2, illegal_action="raise")
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="illegal_action='terminate'"):
        env.step(np.array([first_illegal(m) for m in obs["action_mask"]]))
