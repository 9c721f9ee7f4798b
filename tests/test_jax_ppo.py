"""PPO self-play on the JAX game (`qwixx_env.training.jax_ppo`): a tiny run trains, its updates
change the network, and the checkpoint it exports plays through `qwixx_env.bots.load` with numpy;
snapshots of the learner play the other seats of some games and only the learner's decisions train."""

import json

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
eqx = pytest.importorskip("equinox")
pytest.importorskip("optax")
pytest.importorskip("yaml")

from qwixx_env import bots, qwixx_v0  # noqa: E402
from qwixx_env.jax import Qwixx  # noqa: E402
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
    assert cfg.num_snapshots == 4 and config_from_dict(TINY).num_snapshots == 0  # a config without them: self-play
    with pytest.raises(ValueError, match="unknown keys \\['bogus'\\]"):
        config_from_dict({**TINY, "bogus": 1})
    with pytest.raises(ValueError, match="num_minibatches: got 3"):
        JaxPPOConfig(name="x", num_envs=8, num_steps=16, num_minibatches=3)
    with pytest.raises(ValueError, match="eval_opponents"):
        JaxPPOConfig(name="x", eval_opponents=("nobody",))
    with pytest.raises(ValueError, match="num_snapshots: got -1; expected an integer of at least 0"):
        JaxPPOConfig(name="x", num_snapshots=-1)
    with pytest.raises(ValueError, match="snapshot_every: got 0; expected an integer of at least 1"):
        JaxPPOConfig(name="x", snapshot_every=0)
    for share in (1.5, -0.1, "half", True):
        with pytest.raises(ValueError, match="snapshot_share: got .*; expected a number from 0.0 to 1.0"):
            config_from_dict({**TINY, "snapshot_share": share})


def test_a_tiny_run_exports_a_bot_that_plays(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in {**TINY, "num_snapshots": 2}.items()))
    out = tmp_path / "run"
    assert qwixx_train(["--engine", "jax", str(config), "--out", str(out)]) == 0
    curve = json.loads((out / "curve.json").read_text())
    assert [row["updates"] for row in curve] == [2, 4]
    assert set(curve[-1]["eval"]["opponents"]) == {"random", "greedy"}
    assert all(np.isfinite(row["value_loss"]) and row["entropy"] > 0 for row in curve)
    assert sum(row["games_finished_last_update"] for row in curve) > 0  # 8 x 16 decisions an update end games
    # snapshots by default: some decisions are a snapshot's, played but not trained on
    assert [row["decisions"] for row in curve] == [256, 512]
    assert 0 < curve[0]["learner_decisions"] < curve[1]["learner_decisions"] < 512
    policy = NumpyPolicy.load(out / "final.json")
    assert policy.meta["trainer"] == "qwixx_env.training.jax_ppo" and policy.meta["updates"] == 4
    cfg = config_from_dict(TINY)
    first = make_run(cfg).start(jax.random.PRNGKey(cfg.seed)).agent  # the run's network before any update
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


def tiny(**fields):
    """A tiny config: 8 games of 2-player classic, 16 decisions each an update."""
    return config_from_dict({**TINY, **fields})


def test_without_snapshots_the_run_is_the_self_play_of_before():
    # recorded from the PPO before snapshots (commit 79be442, jax 0.10.2): the same key gives
    # the same games, decision for decision, and the same network (to float error: XLA's
    # threading changes the last bits of the sums, not the sampled actions)
    ppo = make_run(tiny(num_snapshots=0))
    runner = ppo.start(jax.random.PRNGKey(0))
    assert runner.snapshots is None
    runner, metrics = ppo.run(runner, 3)
    games = runner.games
    assert np.asarray(jax.vmap(Qwixx(num_players=2).scores)(games)).tolist() == [
        [3, 1], [7, 12], [0, 0], [2, 1], [3, 4], [0, 10], [-2, 3], [24, -2]
    ]  # fmt: skip
    assert np.asarray(games.roll).tolist() == [1, 16, 0, 1, 2, 16, 16, 16]
    assert int(np.asarray(games.marks).sum()) == 13427
    assert np.asarray(metrics["games_finished"]).tolist() == [0, 0, 4]
    assert np.asarray(metrics["learner_decisions"]).tolist() == [128, 128, 128]  # every decision trains
    sums = [float(np.asarray(x, np.float64).sum()) for x in jax.tree.leaves(runner.agent)]
    np.testing.assert_allclose(
        sums,
        [2.528917801, -0.199019761, 0.008030197, -1.808318236, 4.742072325, -0.133539670, -0.145086092, 0.021566138],
        rtol=1e-6,
        atol=1e-7,
    )
    np.testing.assert_allclose(np.asarray(metrics["entropy"]), [1.3534296, 0.6605306, 0.4423841], rtol=1e-6)


def test_snapshot_seats_carry_no_weight_in_the_loss():
    cfg = tiny(num_snapshots=2, snapshot_share=0.5)
    ppo = make_run(cfg)
    runner = ppo.start(jax.random.PRNGKey(3))
    snaps = runner.snapshots
    assert snaps is not None
    after, steps = jax.jit(ppo.rollout)(runner)
    learn, seat, done = (np.asarray(x) for x in (steps.learn, steps.seat, steps.done))
    learner, opponent = np.asarray(snaps.learner), np.asarray(snaps.opponent)
    assert (opponent >= 0).any() and (opponent < 0).any()  # both kinds of game in this batch
    # a game's first game (before any restart): the learner decides in its seat, or in every
    # seat of a self-play game; the snapshot decides in the other seats
    first = np.cumsum(done, axis=0) - done == 0  # (T, B): no restart yet
    expected = (opponent < 0)[None, :] | (seat == learner[None, :])
    np.testing.assert_array_equal(learn[first], expected[first])
    snapshot_rows = int((~learn).sum())
    assert snapshot_rows > 0 and int(learn.sum()) + snapshot_rows == cfg.num_envs * cfg.num_steps

    # the loss over all rows is the plain PPO loss over the learner's rows alone, however
    # the snapshot's rows are scrambled
    flat = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), steps)
    rng = np.random.default_rng(0)
    n = len(learn.reshape(-1))
    adv = jnp.asarray(rng.normal(size=n), jnp.float32)
    target = jnp.asarray(rng.normal(size=n), jnp.float32)
    agent = after.agent
    total, aux = ppo.loss(agent, flat, adv, target)
    keep = np.flatnonzero(learn.reshape(-1))
    alone = make_run(tiny(num_snapshots=0)).loss(agent, jax.tree.map(lambda x: x[keep], flat), adv[keep], target[keep])
    np.testing.assert_allclose(total, alone[0], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(aux), np.asarray(alone[1]), rtol=1e-5, atol=1e-7)
    theirs = ~learn.reshape(-1)
    scrambled = flat._replace(
        logp=jnp.where(theirs, -80.0, flat.logp),  # a ratio of e**80 if it counted
        value=jnp.where(theirs, 50.0, flat.value),
    )
    grad = jax.grad(lambda a, *rest: ppo.loss(a, *rest)[0])
    g_plain = grad(agent, flat, adv, target)
    g_scrambled = grad(agent, scrambled, jnp.where(theirs, 1e3, adv), jnp.where(theirs, -1e3, target))
    for x, y in zip(jax.tree.leaves(g_plain), jax.tree.leaves(g_scrambled)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-7)
        assert np.isfinite(np.asarray(y)).all()


def always_pass(agent):
    """`agent` with a pass logit far above every other: it passes wherever passing is legal."""
    bias = agent.policy.layers[-1].bias
    return eqx.tree_at(lambda a: a.policy.layers[-1].bias, agent, bias.at[..., -1].set(1e3))


def test_snapshots_are_the_learner_of_past_updates_and_play_their_games():
    cfg = tiny(num_snapshots=2, snapshot_every=1, snapshot_share=1.0)
    ppo = make_run(cfg)
    runner = ppo.start(jax.random.PRNGKey(0))
    first = runner.agent
    assert runner.snapshots is not None
    for leaf, stacked in zip(jax.tree.leaves(first), jax.tree.leaves(runner.snapshots.pool)):
        np.testing.assert_array_equal(stacked, np.stack([leaf, leaf]))  # the pool starts as the first network
    one, _ = ppo.run(runner, 1)
    two, _ = ppo.run(one, 1)
    three, _ = ppo.run(two, 1)
    snaps = three.snapshots
    assert snaps is not None
    assert int(snaps.oldest) == 1 and int(snaps.updates) == 3
    # round robin: update 3 replaced update 1's snapshot in slot 0; slot 1 keeps update 2's
    for now, after2, after3 in zip(*(jax.tree.leaves(x) for x in (snaps.pool, two.agent, three.agent))):
        np.testing.assert_array_equal(now[0], after3)
        np.testing.assert_array_equal(now[1], after2)
    assert not np.array_equal(jax.tree.leaves(two.agent)[0], jax.tree.leaves(three.agent)[0])

    # every game against a snapshot: the learner's seat plays the learner, the others the pool
    pass_action = Qwixx(num_players=2).num_actions - 1
    rollout = jax.jit(ppo.rollout)
    for passer in ("learner", "snapshots"):
        if passer == "learner":
            runner = three._replace(agent=always_pass(three.agent))
        else:
            pool = always_pass(snaps.pool)
            runner = three._replace(snapshots=snaps._replace(pool=pool))
        _, steps = rollout(runner)
        learn, action, mask = (np.asarray(x) for x in (steps.learn, steps.action, steps.mask))
        choice = mask[..., :-1].any(axis=-1)  # a cross was legal: the unperturbed network crosses sometimes
        passed = action == pass_action
        mine, theirs = (learn, ~learn) if passer == "learner" else (~learn, learn)
        assert passed[mine].all()  # the perturbed side always passes
        assert not passed[theirs & choice].all()  # the other side plays its own network
