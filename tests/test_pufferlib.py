"""PufferLib (the pufferlib extra): `QwixxPufferEnv`, a native PufferLib env over the vector env.

PufferLib's own checks take it (its `PufferEnv` constructor, native vectorisation, `Serial`
and `Multiprocessing`); its buffers are the same arrays after every step, filled in place;
the observations and masks are the engine's for each game's learner; masked random play never
takes an illegal action; an unmasked one ends its game as `QwixxVectorEnv` ends it; and the
same seed plays the same games.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_parallel import run_snippets

from qwixx_env.core import rules

pytest.importorskip("pufferlib", reason="the pufferlib extra is not installed (runs in make test-integrations)")
import pufferlib  # noqa: E402  (there when the importorskip passed)
import pufferlib.vector  # noqa: E402

from qwixx_env.integrations.pufferlib import QwixxPufferEnv, observation_and_mask  # noqa: E402

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
