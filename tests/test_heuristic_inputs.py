"""The `heuristic` inputs (`qwixx_env.nets.heuristic`): each action's value to the heuristic
bot, rebuilt from the observation alone, on every table; a policy checkpoint that reads them
computes them itself, and the SB3 wrapper appends them in the order named."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qwixx_env import QwixxVectorEnv, bots, qwixx_v0
from qwixx_env.core import layout_for
from qwixx_env.nets import CheckpointError, NumpyPolicy, afterstate_inputs, heuristic_inputs, write_policy
from qwixx_env.nets.heuristic import INPUT_SCALE, heuristic_values

from conftest import play_game, random_layers


@pytest.mark.parametrize(
    "variant, lucky, players",
    [("classic", "bonus", 1), ("classic", "bonus", 3), ("longo", "bonus", 1), ("longo", "instead", 2),
     ("longo", "bonus", 5)],
)
def test_the_inputs_mark_the_heuristic_bots_choice_at_every_decision(variant, lucky, players):
    """Whole games of the heuristic bot in every seat: at each decision, the input of the bot's
    action is 0 (the best), every illegal action's is -1, every other in [-1, 0]; the raw
    values are finite exactly where the mask allows."""
    env = qwixx_v0.raw_env(num_players=players, variant=variant, lucky=lucky)
    bot = bots.make("heuristic", variant=variant, num_players=players, lucky=lucky)
    decisions = [d for seed in range(3) for d in play_game(env, bot, seed=seed)]
    for obs, action in decisions:
        legal = obs["action_mask"].astype(bool)
        x = heuristic_inputs(obs["observation"][None], variant, players, lucky)[0]
        values = heuristic_values(obs["observation"][None], variant, players, lucky)[0]
        assert (np.isfinite(values) == legal).all()
        assert x[action] == 0.0 and (x[~legal] == -1.0).all() and (x >= -1).all() and (x <= 0).all()
        assert int(np.argmax(np.where(legal, values, -np.inf))) == action
        i = np.flatnonzero(legal)
        np.testing.assert_allclose(x[i], np.maximum(INPUT_SCALE * (values[i] - values[i].max()), -1), atol=1e-6)
    assert len(decisions) > 60


def test_a_batch_is_the_rows_one_by_one_and_a_wrong_shape_is_refused():
    env = QwixxVectorEnv(24, num_players=3, variant="longo", opponents="heuristic")
    obs, _ = env.reset(seed=4)
    batch = heuristic_inputs(obs["observation"], "longo", 3)
    assert batch.shape == (24, 61) and batch.dtype == np.float32
    for i in range(24):
        np.testing.assert_array_equal(batch[i], heuristic_inputs(obs["observation"][i:i + 1], "longo", 3)[0])
    with pytest.raises(ValueError, match=r"observations: got shape \(3, 10\); expected \(n, 198\)"):
        heuristic_inputs(np.zeros((3, 10), np.float32))


def test_a_checkpoint_with_both_inputs_reads_them_in_the_order_named(tmp_path):
    rng = np.random.default_rng(0)
    D, A = 198, 45
    path = write_policy(tmp_path / "p", policy=random_layers([D + 2 * A, 8, A], "tanh", rng),
                        value=random_layers([D + 2 * A, 8, 1], "tanh", rng),
                        variant="classic", num_players=2, meta={}, inputs=["heuristic", "afterstate"])
    assert json.loads(path.read_text())["inputs"] == ["heuristic", "afterstate"]
    policy = NumpyPolicy.load(path)
    obs, _ = QwixxVectorEnv(16, opponents="heuristic").reset(seed=0)
    x = np.hstack([obs["observation"], heuristic_inputs(obs["observation"]), afterstate_inputs(obs["observation"])])
    (w1, b1, _), (w2, b2, _) = [(w, b, act) for w, b, act in policy._nets["policy"]]
    np.testing.assert_allclose(policy.logits(obs["observation"]), np.tanh(x @ w1.T + b1) @ w2.T + b2, atol=1e-5)
    # a table without a win-chance network (solo Longo) reads the heuristic inputs all the same
    D1 = layout_for("longo", 1).size
    solo = NumpyPolicy.load(write_policy(tmp_path / "solo", policy=random_layers([D1 + 61, 8, 61], "tanh", rng),
                                         value=random_layers([D1 + 61, 8, 1], "tanh", rng), variant="longo",
                                         num_players=1, lucky="instead", meta={}, inputs=["heuristic"]))
    env = qwixx_v0.raw_env(num_players=1, variant="longo", lucky="instead")
    env.reset(seed=2)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][solo(obs["observation"][None], obs["action_mask"][None])[0]]
    with pytest.raises(CheckpointError, match=r"networks.policy\[0\].in: got .*; the observation and inputs have"):
        write_policy(tmp_path / "bad", policy=random_layers([D1, 8, 61], "tanh", rng),
                     value=random_layers([D1, 8, 1], "tanh", rng), variant="longo", num_players=1, lucky="instead",
                     meta={}, inputs=["heuristic"])


def test_the_sb3_wrapper_appends_the_inputs_named_and_refuses_others():
    pytest.importorskip("stable_baselines3")
    from qwixx_env.envs.sb3 import PolicyInputs, Sb3VecEnv

    venv = PolicyInputs(Sb3VecEnv(QwixxVectorEnv(8, num_players=1, variant="longo", lucky="instead")), ["heuristic"])
    obs = venv.reset()
    assert obs.shape == (8, venv.venv.observation_space.shape[0] + 61) == (8, venv.observation_space.shape[0])
    np.testing.assert_array_equal(obs[:, -61:], heuristic_inputs(obs[:, :-61], "longo", 1, "instead"))
    assert venv.policy_inputs == ("heuristic",)
    for bad in (["dice"], [], ["heuristic", "heuristic"]):
        with pytest.raises(ValueError, match=r"inputs: got .*; expected distinct names from"):
            PolicyInputs(Sb3VecEnv(QwixxVectorEnv(2)), bad)
    with pytest.raises(ValueError, match="afterstate"):
        PolicyInputs(Sb3VecEnv(QwixxVectorEnv(2, num_players=5)), ["afterstate"])
