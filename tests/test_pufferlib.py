"""PufferLib (the pufferlib extra): `QwixxPufferEnv`, a native PufferLib env over the vector env.

PufferLib's own checks take it (its `PufferEnv` constructor, native vectorisation, `Serial`
and `Multiprocessing`); its buffers are the same arrays after every step, filled in place;
the observations and masks are the engine's for each game's learner; masked random play never
takes an illegal action; an unmasked one ends its game as `QwixxVectorEnv` ends it; and the
same seed plays the same games. `MaskedPolicy` never picks a masked action; the CPU PPO loop
(`pufferlib_ppo`) trains in a tiny run, the same seed to the same weights, on the learner's
decisions alone while counting every decision of the network; its saved policy loads and plays.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_parallel import run_snippets

from qwixx_env.core import rules

pytest.importorskip("pufferlib", reason="the pufferlib extra is not installed (runs in make test-integrations)")
import pufferlib  # noqa: E402  (there when the importorskip passed)
import pufferlib.vector  # noqa: E402
import torch  # noqa: E402  (the pufferlib extra brings it)

from qwixx_env import qwixx_v0  # noqa: E402
from qwixx_env.integrations import pufferlib_ppo  # noqa: E402
from qwixx_env.integrations.pufferlib import MaskedPolicy, QwixxPufferEnv, observation_and_mask  # noqa: E402
from qwixx_env.integrations.pufferlib_ppo import PPOConfig, train  # noqa: E402

BUFFERS = ("observations", "rewards", "terminals", "truncations", "masks")


def random_legal(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniformly random legal action per row of 0/1 masks, as PufferLib's int32 actions."""
    return np.argmax(rng.random(masks.shape) * masks, axis=1).astype(np.int32)


def engine_view(env: QwixxPufferEnv) -> tuple[np.ndarray, np.ndarray]:
    """Every game as the engine shows its learner now: (observations, legal masks)."""
    games = env.games
    masks = rules.legal_mask(games.variant, games.engine.state)  # every live game waits for its learner
    return games.engine.observe(games.learner).copy(), masks


def test_pufferlibs_own_checks_take_it():
    env = QwixxPufferEnv(16, num_players=3, variant="longo", opponents="greedy")
    assert isinstance(env, pufferlib.PufferEnv) and env.num_agents == 16
    assert env.single_observation_space.shape == (env.observation_size + env.num_actions,)
    assert env.single_action_space.n == env.num_actions == 4 * 15 + 1
    native = pufferlib.vector.make(QwixxPufferEnv, backend=pufferlib.PufferEnv, env_kwargs={"num_games": 4})
    assert isinstance(native, QwixxPufferEnv) and native.num_agents == 4
    serial = pufferlib.vector.make(QwixxPufferEnv, backend=pufferlib.vector.Serial, num_envs=2,
                                   env_kwargs={"num_games": 4, "num_players": 2})  # check_envs: the spaces agree
    obs, infos = serial.reset(seed=0)
    assert obs.shape == (8, serial.single_observation_space.shape[0]) and infos == []
    rng = np.random.default_rng(0)
    for _ in range(20):
        _, masks = observation_and_mask(obs, serial.driver_env.observation_size)
        obs, *_ = serial.step(random_legal(rng, masks))
        assert all(serial.single_observation_space.contains(row) for row in obs)


def test_the_buffers_are_the_same_arrays_after_every_step_filled_in_place():
    env = QwixxPufferEnv(32, num_players=2)
    buffers = {name: getattr(env, name) for name in BUFFERS}
    returned, _ = env.reset(seed=1)
    assert returned is buffers["observations"]
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(100):
        before = env.observations.copy()
        obs, rewards, terminals, truncations, _ = env.step(random_legal(rng, env.action_mask))
        assert obs is buffers["observations"] and rewards is buffers["rewards"]
        assert terminals is buffers["terminals"] and truncations is buffers["truncations"]
        assert all(getattr(env, name) is array for name, array in buffers.items())
        assert not np.array_equal(obs, before)  # written, not replaced
        ended += int(terminals.sum())
    assert ended > 0 and env.masks.all()  # every row is a live agent: games restart in the step they end
    # the two views of the observation buffer share its memory
    assert np.shares_memory(env.observation, env.observations) and np.shares_memory(env.action_mask, env.observations)


def test_buffers_handed_in_are_the_ones_written():
    """PufferLib's Serial hands each env views of its own buffers: the env writes into those."""
    serial = pufferlib.vector.make(QwixxPufferEnv, backend=pufferlib.vector.Serial, num_envs=2,
                                   env_kwargs={"num_games": 3})
    obs, _ = serial.reset(seed=2)
    first, second = serial.envs
    assert np.shares_memory(first.observations, serial.observations) and first.observations.base is not None
    assert np.array_equal(obs[:3], first.observations) and np.array_equal(obs[3:], second.observations)


def test_the_observations_and_masks_are_the_engines_for_each_learner():
    env = QwixxPufferEnv(24, num_players=3, variant="longo", lucky="instead", opponents={"greedy": 1, "random": 1})
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(60):
        obs, masks = engine_view(env)
        assert np.array_equal(env.observation, obs)
        assert np.array_equal(env.action_mask, masks) and np.array_equal(env.action_mask, env.games.action_masks())
        env.step(random_legal(rng, env.action_mask))


def test_masked_random_play_never_takes_an_illegal_action():
    env = QwixxPufferEnv(64, num_players=2, opponents="greedy")
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    games = 0
    for _ in range(300):
        actions = random_legal(rng, env.action_mask)
        assert env.action_mask[np.arange(64), actions].all()
        _, rewards, terminals, _, infos = env.step(actions)
        assert set(np.unique(rewards[terminals])) <= {-1.0, 0.0, 1.0} and not rewards[~terminals].any()
        for info in infos:
            assert info["illegal_actions"] == 0
            games += info["games"]
    assert games > 100


def test_an_unmasked_action_ends_its_game_as_the_vector_env_does():
    env = QwixxPufferEnv(4, num_players=2)
    env.reset(seed=5)
    actions = random_legal(np.random.default_rng(5), env.action_mask)
    actions[2] = np.flatnonzero(env.action_mask[2] == 0)[0]  # one the mask does not offer
    _, rewards, terminals, _, infos = env.step(actions)
    assert terminals[2] and rewards[2] == -2.0  # the "win" reward's illegal ending
    assert infos[0]["illegal_actions"] == 1 and infos[0]["games"] == int(terminals.sum())


def test_the_same_seed_plays_the_same_games_and_workers_play_different_ones():
    def play(seed: int) -> list[np.ndarray]:
        env = QwixxPufferEnv(8, num_players=2, opponents="heuristic", learner_seat="random")
        env.reset(seed=seed)
        rng, seen = np.random.default_rng(0), []
        for _ in range(40):
            env.step(random_legal(rng, env.action_mask))
            seen += [env.observations.copy(), env.rewards.copy()]
        return seen

    assert all(np.array_equal(a, b) for a, b in zip(play(7), play(7)))
    assert not all(np.array_equal(a, b) for a, b in zip(play(7), play(8)))
    # the constructor's seed (PufferLib passes one) serves a first reset given none
    given, told = QwixxPufferEnv(8, seed=1), QwixxPufferEnv(8)
    given.reset()
    told.reset(seed=1)
    assert np.array_equal(given.observations, told.observations)
    # game b of reset(seed) is game seed * num_games + b: PufferLib's workers, seeded 0, 1, ..., differ
    wide = QwixxPufferEnv(16)
    wide.reset(seed=0)
    assert np.array_equal(told.games.engine.state.rng, wide.games.engine.state.rng[8:])
    assert np.array_equal(told.games.engine.state.dice, wide.games.engine.state.dice[8:])


def test_multiprocessing_plays_what_serial_plays():
    kwargs = {"num_games": 4, "num_players": 2, "opponents": "greedy"}
    serial = pufferlib.vector.make(QwixxPufferEnv, backend=pufferlib.vector.Serial, num_envs=2, env_kwargs=kwargs)
    workers = pufferlib.vector.make(QwixxPufferEnv, backend=pufferlib.vector.Multiprocessing, num_envs=2,
                                    num_workers=2, overwork=True, env_kwargs=kwargs)
    try:
        a, _ = serial.reset(seed=9)
        b, _ = workers.reset(seed=9)
        rng = np.random.default_rng(9)
        for _ in range(30):
            assert np.array_equal(a, b)
            actions = random_legal(rng, observation_and_mask(a, serial.driver_env.observation_size)[1])
            a, ra, *_ = serial.step(actions)
            b, rb, *_ = workers.step(actions)
            assert np.array_equal(ra, rb)
    finally:
        workers.close()


def test_options_are_the_vector_envs_and_autoreset_mode_is_refused():
    with pytest.raises(ValueError, match="num_players"):
        QwixxPufferEnv(4, num_players=9)
    with pytest.raises(ValueError, match="autoreset_mode: got 'next_step'; QwixxPufferEnv restarts a game"):
        QwixxPufferEnv(4, autoreset_mode="next_step")


def test_docs_snippet_runs_as_written_and_prints_what_the_docs_show(capsys):
    out, shown = run_snippets("PufferLib", capsys)
    assert out == shown


# --- MaskedPolicy and the CPU PPO loop (qwixx_env.integrations.pufferlib_ppo) ----------------

TINY = dict(steps=1500, games=8, rollout=16, minibatches=2, epochs=2, log_every=0)


def weights(policy: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in policy.parameters()]


def test_the_policy_never_picks_a_masked_action_and_its_entropy_is_over_the_legal_ones():
    env = QwixxPufferEnv(64, num_players=3, variant="longo", opponents="greedy")
    env.reset(seed=10)
    policy = MaskedPolicy.for_env(env, hidden=(32,))
    with torch.no_grad():  # every action strongly preferred, the masked ones most of all
        policy.actor.bias.copy_(torch.linspace(50.0, 100.0, env.num_actions))
    generator, rng = torch.Generator().manual_seed(0), np.random.default_rng(10)
    for _ in range(40):
        rows = torch.from_numpy(env.observations.copy())
        sampled, log_prob, _, value = policy.get_action_and_value(rows, generator=generator)
        chosen = policy.act(env.observation, env.action_mask)
        assert env.action_mask[np.arange(64), sampled.numpy()].all() and env.action_mask[np.arange(64), chosen].all()
        assert torch.isfinite(log_prob).all() and value.shape == (64,)
        env.step(random_legal(rng, env.action_mask))
    with torch.no_grad():  # a flat actor: uniform over the legal actions, whose count gives the entropy
        policy.actor.weight.zero_()
        policy.actor.bias.zero_()
    _, _, entropy, _ = policy.get_action_and_value(torch.from_numpy(env.observations.copy()))
    assert torch.allclose(entropy, torch.from_numpy(np.log(env.action_mask.sum(1))).float(), atol=1e-5)
    with pytest.raises(ValueError, match="rows: got 198 values a row; expected"):
        policy(torch.zeros((1, 198)))


def test_the_policys_act_plays_an_opponent_inside_the_env():
    """`act` is a frozen batched policy: the env checks every action it returns against the mask."""
    env = QwixxPufferEnv(16, num_players=3)
    policy = MaskedPolicy.for_env(env, hidden=(16,))
    env.games.set_opponents(policy.act)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    for _ in range(100):
        env.step(random_legal(rng, env.action_mask))
    # two other seats decide in every roll's white action, the learner at most twice a roll
    assert env.games.opponent_decisions > env.games.learner_decisions == 100 * 16


def test_a_tiny_run_trains_and_the_same_seed_trains_the_same_weights():
    seen: list[list[torch.Tensor]] = []
    policy, progress = train(PPOConfig(seed=3, **TINY),
                             on_iteration=lambda p, pol: seen.append(weights(pol)) if p.iteration == 0 else None)
    assert progress.iteration >= 2 and progress.games > 0
    losses = (progress.policy_loss, progress.value_loss, progress.entropy, progress.approx_kl)
    assert all(np.isfinite(losses)) and progress.entropy > 0
    assert any(not torch.equal(a, b) for a, b in zip(seen[0], weights(policy)))  # the update moved them
    again, repeated = train(PPOConfig(seed=3, **TINY))
    assert all(torch.equal(a, b) for a, b in zip(weights(policy), weights(again)))
    assert dataclasses.replace(repeated, seconds=0.0) == dataclasses.replace(progress, seconds=0.0)
    other, _ = train(PPOConfig(seed=4, **TINY))
    assert not all(torch.equal(a, b) for a, b in zip(weights(policy), weights(other)))


def test_only_the_learners_decisions_train_and_every_decision_of_the_network_is_counted(monkeypatch):
    """Self-play: the network plays the other seats inside the env, and those decisions count
    in the budget but are never trained on; each row is always at its learner's decision, so
    the transitions trained on are exactly the learner decisions the env played."""
    asked, network = [], pufferlib_ppo.self_play_opponent

    def counting(policy, generator):
        opponent = network(policy, generator)

        def play(observations, masks):
            asked.append(len(observations))
            return opponent(observations, masks)

        return play

    monkeypatch.setattr(pufferlib_ppo, "self_play_opponent", counting)
    _, progress = train(PPOConfig(table="classic-3p", seed=5, **TINY))
    rollouts = progress.iteration * TINY["games"] * TINY["rollout"]
    assert progress.samples == progress.learner_decisions == rollouts
    assert sum(asked) == progress.decisions - progress.learner_decisions > progress.learner_decisions  # 2 other seats
    assert progress.decisions >= TINY["steps"]
    # against a bot the network plays only the learning seat
    asked.clear()
    _, against = train(PPOConfig(opponents="heuristic", seed=5, **TINY))
    assert asked == [] and against.decisions == against.learner_decisions == against.samples


def test_the_saved_policy_loads_and_plays_a_whole_game(tmp_path, capsys):
    path = tmp_path / "policy.pt"
    trained = pufferlib_ppo.main(["--steps", "600", "--games", "4", "--rollout", "16", "--minibatches", "2",
                                  "--hidden", "32", "32", "--save", str(path)])
    out = capsys.readouterr().out
    assert out.startswith("iteration 1: ") and out.endswith(f"saved {path}\n")
    policy = MaskedPolicy.load(path)
    assert policy.hidden == (32, 32) and policy.metadata["config"]["table"] == "classic-2p"
    assert policy.metadata["progress"]["decisions"] == trained.decisions
    assert not list(tmp_path.glob(".*.tmp"))  # written beside and renamed over
    env = qwixx_v0.env(num_players=2)
    env.reset(seed=0)
    decisions = 0
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = policy.act_one(observation)
        assert observation["action_mask"][action] == 1
        env.step(action)
        decisions += 1
    assert decisions > 10 and not env.agents  # played to the end, every seat by the policy


def test_bad_settings_and_files_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="table: got 'classic'; expected VARIANT-Np"):
        PPOConfig(table="classic")
    with pytest.raises(ValueError, match="table: 'classic-9p': num_players"):
        PPOConfig(table="classic-9p")
    with pytest.raises(ValueError, match="steps: got 0; expected"):
        PPOConfig(steps=0)
    with pytest.raises(ValueError, match="gamma: got 1.5; expected"):
        PPOConfig(gamma=1.5)
    with pytest.raises(ValueError, match="hidden: got"):
        MaskedPolicy(10, 4, hidden=())
    (tmp_path / "other.pt").write_bytes(b"not a policy")
    with pytest.raises(ValueError, match="cannot read .* as a saved MaskedPolicy"):
        MaskedPolicy.load(tmp_path / "other.pt")
