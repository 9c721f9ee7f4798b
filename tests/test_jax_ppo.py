"""PPO self-play on the JAX game (`qwixx_env.training.jax_ppo`): a tiny run trains, its updates
change the network, and the checkpoint it exports plays through `qwixx_env.bots.load` with numpy."""

import json

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("equinox")
pytest.importorskip("optax")
pytest.importorskip("yaml")

from qwixx_env import bots, qwixx_v0  # noqa: E402
from qwixx_env.nets import NumpyPolicy  # noqa: E402
from qwixx_env.training import main as qwixx_train  # noqa: E402
from qwixx_env.training.jax_ppo import (  # noqa: E402
    JaxPPOConfig,
    config_from_dict,
    load_config,
    make_run,
    write_checkpoint,
)

TINY = {
    "name": "tiny",
    "num_envs": 8,
    "num_steps": 16,
    "total_decisions": 512,
    "hidden": [16],
    "eval_every": 2,
    "eval_games": 4,
    "num_minibatches": 2,
    "update_epochs": 2,
}


def test_the_shipped_config_loads_and_bad_values_are_named():
    cfg = load_config("jax_ppo_classic_2p")
    assert cfg.num_players == 2 and cfg.num_updates > 0
    with pytest.raises(ValueError, match="unknown keys \\['bogus'\\]"):
        config_from_dict({**TINY, "bogus": 1})
    with pytest.raises(ValueError, match="num_minibatches: got 3"):
        JaxPPOConfig(name="x", num_envs=8, num_steps=16, num_minibatches=3)
    with pytest.raises(ValueError, match="eval_opponents"):
        JaxPPOConfig(name="x", eval_opponents=("nobody",))


def test_a_tiny_run_exports_a_bot_that_plays(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in TINY.items()))
    out = tmp_path / "run"
    assert qwixx_train(["--engine", "jax", str(config), "--out", str(out)]) == 0
    curve = json.loads((out / "curve.json").read_text())
    assert [row["updates"] for row in curve] == [2, 4]
    assert set(curve[-1]["eval"]["opponents"]) == {"random", "greedy"}
    assert all(np.isfinite(row["value_loss"]) and row["entropy"] > 0 for row in curve)
    assert sum(row["games_finished_last_update"] for row in curve) > 0  # 8 x 16 decisions an update end games
    policy = NumpyPolicy.load(out / "final.json")
    assert policy.meta["trainer"] == "qwixx_env.training.jax_ppo" and policy.meta["updates"] == 4
    cfg = config_from_dict(TINY)
    first = make_run(cfg)[0](jax.random.PRNGKey(cfg.seed)).agent  # the run's network before any update
    obs = np.random.default_rng(0).random((5, policy.observation_size), np.float32)
    initial = write_checkpoint(first, tmp_path / "initial", cfg, {})  # the export is the network, to float error
    np.testing.assert_allclose(NumpyPolicy.load(initial).logits(obs), jax.vmap(first.policy)(obs), rtol=1e-5, atol=1e-6)
    assert not np.allclose(policy.logits(obs), NumpyPolicy.load(initial).logits(obs), atol=1e-4)  # it trained
    bot = bots.load(out / "final.json")
    env = qwixx_v0.env(num_players=2)
    env.reset(seed=1)
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else bot.act(observation))
    end = env.unwrapped.snapshot()
    assert end["phase"] == "over" and "illegal_end" not in end  # a whole game of legal decisions
