"""The adapters for other libraries: the single-game `gymnasium.Env` registered as
``"qwixx_env/Qwixx-v0"`` (Gymnasium's and stable-baselines3's env checkers, illegal actions,
reproducible resets) and `Sb3VecEnv`, the stable-baselines3 `VecEnv` that sb3-contrib's
`MaskablePPO` trains on directly.
"""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from qwixx_env import ObservationView, QwixxGymEnv, QwixxVectorEnv, qwixx_v0
from qwixx_env.core import rules
from qwixx_env.envs.sb3 import Sb3VecEnv, frozen_policy

from conftest import random_legal_action, random_legal_actions

OPTION_SETS = {
    "default": {},
    "longo-3p-greedy": dict(num_players=3, variant="longo", opponents="greedy"),
    "classic-solo": dict(num_players=1),
    "longo-solo-fixed-lucky": dict(num_players=1, variant="longo", lucky_numbers=[(4, 13)]),
    "longo-instead-4p-mixed": dict(
        num_players=4, variant="longo", lucky="instead", opponents={"random": 1, "greedy": 2},
        learner_seat="random", start_player="random", reward="score_delta",
    ),
}


def first_illegal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask == 0)[0])


# --- the gymnasium.Env ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_gymnasium_make_gives_an_env_that_passes_gymnasiums_checker(name):
    env = gymnasium.make("qwixx_env/Qwixx-v0", **OPTION_SETS[name])
    assert isinstance(env.unwrapped, QwixxGymEnv)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning fails the test too
        check_env(env.unwrapped)


@pytest.mark.parametrize("name", ["default", "longo-solo-fixed-lucky"])
def test_stable_baselines3s_checker_accepts_the_dict_observation_with_its_mask(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(gymnasium.make("qwixx_env/Qwixx-v0", **OPTION_SETS[name]).unwrapped)


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_a_whole_game_through_gymnasiums_wrappers(name):
    env = gymnasium.make("qwixx_env/Qwixx-v0", **OPTION_SETS[name])  # with the passive checker
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    terminated = False
    while not terminated:
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(env.unwrapped.action_masks(), obs["action_mask"].astype(bool))
        obs, reward, terminated, truncated, info = env.step(random_legal_action(obs["action_mask"], rng))
        assert not truncated and isinstance(reward, float)
    view = ObservationView(obs, env.unwrapped.vector.variant, env.unwrapped.vector.num_players)
    assert view.phase == "over" and view.legal_actions.size == 0


@pytest.mark.parametrize("action", ["illegal", -1, 10_000])
def test_an_illegal_action_ends_the_game_below_any_score(action):
    env = gymnasium.make("qwixx_env/Qwixx-v0", num_players=2, reward="score").unwrapped
    obs, _ = env.reset(seed=2)
    for step in range(3):
        obs, *_ = env.step(random_legal_action(obs["action_mask"], np.random.default_rng(step)))
    action = first_illegal(obs["action_mask"]) if action == "illegal" else action
    obs, reward, terminated, truncated, info = env.step(action)
    assert (reward, terminated, truncated, info) == (-21.0, True, False, {"illegal_action": True})  # score -20 at worst
    assert not obs["action_mask"].any()  # over: nothing legal, as after a normal end
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    obs, _ = env.reset()  # the next game starts afresh
    view = ObservationView(obs, "classic", 2)
    assert not view.crosses.any() and view.legal_actions.size > 0


def test_a_bool_action_is_illegal_even_where_its_number_is_legal():
    env = gymnasium.make("qwixx_env/Qwixx-v0", num_players=2).unwrapped
    for seed in range(60):
        obs, _ = env.reset(seed=seed)
        if obs["action_mask"][1]:
            break
    else:
        pytest.fail("no deal with action 1 legal")
    _, reward, terminated, _, info = env.step(True)
    assert (reward, terminated, info) == (-2.0, True, {"illegal_action": True})  # "win": worse than a loss


def test_with_illegal_action_raise_an_illegal_action_raises_and_changes_nothing():
    env = gymnasium.make(
        "qwixx_env/Qwixx-v0", num_players=3, variant="longo", illegal_action="raise"
    ).unwrapped
    obs, _ = env.reset(seed=3)
    state = [a.copy() for a in env.vector.engine.state]
    with pytest.raises(ValueError, match="action"):
        env.step(first_illegal(obs["action_mask"]))
    for a, b in zip(env.vector.engine.state, state):
        np.testing.assert_array_equal(a, b)
    env.step(random_legal_action(obs["action_mask"], np.random.default_rng(3)))  # the game goes on


def test_the_flat_observation_is_the_dict_observations_vector_in_a_box():
    flat = gymnasium.make("qwixx_env/Qwixx-v0", num_players=3, opponents="greedy", observation="flat")
    whole = gymnasium.make("qwixx_env/Qwixx-v0", num_players=3, opponents="greedy")
    assert isinstance(flat.observation_space, gymnasium.spaces.Box)
    assert flat.observation_space == whole.observation_space["observation"]
    check_env(flat.unwrapped, skip_render_check=True)
    obs, _ = flat.reset(seed=4)
    expected, _ = whole.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(30):
        np.testing.assert_array_equal(obs, expected["observation"])
        mask = flat.unwrapped.action_masks()
        np.testing.assert_array_equal(mask, expected["action_mask"].astype(bool))
        action = random_legal_action(mask, rng)
        obs, _, done, _, _ = flat.step(action)
        expected, *_ = whole.step(action)
        if done:
            break


@pytest.mark.parametrize("algorithm", [PPO, MaskablePPO])
def test_plain_and_maskable_ppo_train_on_the_flat_single_env(algorithm):
    env = gymnasium.make("qwixx_env/Qwixx-v0", num_players=2, opponents="greedy", observation="flat")
    model = algorithm("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu",
                      policy_kwargs={"net_arch": [16]})
    model.learn(64)
    assert model.num_timesteps >= 64


def test_illegal_action_option_is_checked():
    with pytest.raises(ValueError, match="illegal_action.*'ignore'"):
        gymnasium.make("qwixx_env/Qwixx-v0", illegal_action="ignore")
    with pytest.raises(ValueError, match=r"observation: got 'vector'; expected one of \('dict', 'flat'\)"):
        gymnasium.make("qwixx_env/Qwixx-v0", observation="vector")


def play_games(env: gymnasium.Env, seed: int, games: int, abandon_first_after: int | None = None) -> list:
    """Observations and rewards of `games` games, reset with `seed` once and then without a seed;
    the first game is abandoned by an illegal action after `abandon_first_after` decisions."""
    rng = np.random.default_rng(seed)
    out = []
    for game in range(games):
        obs, _ = env.reset(seed=seed) if game == 0 else env.reset()
        out.append(obs)
        terminated, decisions = False, 0
        while not terminated:
            if game == 0 and decisions == abandon_first_after:
                action = first_illegal(obs["action_mask"])
            else:
                action = random_legal_action(obs["action_mask"], rng)
            obs, reward, terminated, _, _ = env.step(action)
            out.append((obs, reward))
            decisions += 1
    return out


def test_reset_without_a_seed_continues_reproducibly():
    def make():
        return gymnasium.make("qwixx_env/Qwixx-v0", num_players=3, opponents=["random", "greedy"]).unwrapped

    first = play_games(make(), seed=4, games=3, abandon_first_after=6)
    again = play_games(make(), seed=4, games=3, abandon_first_after=6)
    assert len(first) == len(again)
    for x, y in zip(first, again):
        obs_x, reward_x = x if isinstance(x, tuple) else (x, None)
        obs_y, reward_y = y if isinstance(y, tuple) else (y, None)
        assert reward_x == reward_y
        for k in obs_x:
            np.testing.assert_array_equal(obs_x[k], obs_y[k])
    # Each reset without a seed starts a new game, not the seeded one again.
    starts = [x["observation"] for x in first if isinstance(x, dict)]
    assert len(starts) == 3
    assert not np.array_equal(starts[0], starts[1]) and not np.array_equal(starts[1], starts[2])


def test_reset_without_a_seed_in_the_middle_of_a_game_starts_a_new_game():
    from qwixx_env import ObservationView

    env = gymnasium.make("qwixx_env/Qwixx-v0", num_players=2, opponents="greedy").unwrapped
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    while ObservationView(obs).scores.sum() == 0:  # play on until some crosses are on the sheets
        obs, _, terminated, _, _ = env.step(random_legal_action(obs["action_mask"], rng))
        assert not terminated
    mid_game = obs
    obs, _ = env.reset()
    view = ObservationView(obs)
    assert view.scores.sum() == 0 and view.penalties.sum() == 0 and not view.locked_rows.any()
    assert not np.array_equal(obs["observation"], mid_game["observation"])


def test_solo_games_continue_as_the_aec_env_does_after_reset_without_a_seed():
    # Solo, the gymnasium.Env is the AEC game of seat 0; an abandoned game leaves the game's
    # generator where the AEC game would have left it.
    env = gymnasium.make("qwixx_env/Qwixx-v0", num_players=1, variant="longo").unwrapped
    aec = qwixx_v0.raw_env(num_players=1, variant="longo")
    rng = np.random.default_rng(5)
    for game in range(3):
        obs, _ = env.reset(seed=5) if game == 0 else env.reset()
        aec.reset(seed=5) if game == 0 else aec.reset()
        for decision in range(10_000):
            np.testing.assert_array_equal(obs["observation"], aec.observe("player_0")["observation"])
            np.testing.assert_array_equal(obs["action_mask"], aec.observe("player_0")["action_mask"])
            if game == 0 and decision == 8:
                env.step(first_illegal(obs["action_mask"]))  # abandon the game; the AEC just resets
                break
            action = random_legal_action(obs["action_mask"], rng)
            obs, reward, terminated, _, _ = env.step(action)
            aec.step(action)
            assert reward == aec.rewards["player_0"]
            if terminated:
                np.testing.assert_array_equal(obs["observation"], aec.observe("player_0")["observation"])
                assert all(aec.terminations.values())
                break


# --- stable-baselines3 ----------------------------------------------------------------------


def make_venv(num_envs: int = 8, **options) -> Sb3VecEnv:
    options = dict(num_players=2, opponents="greedy", reward="win") | options
    return Sb3VecEnv(QwixxVectorEnv(num_envs, **options))


def test_maskable_ppo_finds_the_action_masks():
    venv = make_venv(num_players=3, variant="longo")
    assert is_masking_supported(venv)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(60):
        masks = get_action_masks(venv)
        assert masks.shape == (8, venv.action_space.n) and masks.dtype == np.bool_
        np.testing.assert_array_equal(masks, venv.env.action_masks())
        # It is always a learner's turn, so the masks are the legal actions in every game now.
        np.testing.assert_array_equal(
            masks, rules.legal_mask(venv.env.variant, venv.env.engine.state).astype(bool)
        )
        assert masks.any(axis=1).all()
        actions = random_legal_actions(masks, rng)
        obs, rewards, dones, infos = venv.step(actions)
        assert obs.shape == (8, venv.env.layout.size)


def test_finished_games_carry_their_terminal_observation():
    venv = make_venv(num_envs=6)
    venv.reset()
    rng = np.random.default_rng(1)
    finished = 0
    while finished < 12:
        actions = random_legal_actions(venv.action_masks(), rng)
        obs, rewards, dones, infos = venv.step(actions)
        assert len(infos) == 6
        for i, info in enumerate(infos):
            assert ("terminal_observation" in info) == bool(dones[i])
            if dones[i]:
                final = ObservationView(info["terminal_observation"], "classic", 2)
                assert final.phase == "over"
                assert rewards[i] == np.sign(final.scores[0] - final.scores[1])
                assert info["TimeLimit.truncated"] is False
                fresh = ObservationView(obs[i], "classic", 2)  # the next game, already started
                assert not fresh.crosses.any() and fresh.phase != "over"
            else:
                assert rewards[i] == 0
        finished += int(dones.sum())


def test_seeding_the_vec_env_seeds_its_games():
    a, b, c = make_venv(), make_venv(), make_venv()
    a.seed(7)
    b.seed(7)
    c.seed(8)
    first = a.reset()
    np.testing.assert_array_equal(b.reset(), first)
    # Seed 7 is the vector env's seed 7: game i plays as qwixx_v0 reset with 7 + i.
    direct, _ = QwixxVectorEnv(8, num_players=2, opponents="greedy", reward="win").reset(seed=7)
    np.testing.assert_array_equal(first, direct["observation"])
    assert not np.array_equal(c.reset(), first)


@pytest.mark.slow
def test_a_tiny_maskable_ppo_run_learns_on_it():
    torch.set_num_threads(1)
    venv = make_venv(num_envs=16, num_players=2, variant="longo")
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(512)
    assert model.num_timesteps >= 512
    obs = venv.reset()
    masks = get_action_masks(venv)
    actions, _ = model.predict(obs, action_masks=masks, deterministic=False)
    assert masks[np.arange(16), actions].all(), "the trained policy picked a masked action"
    venv.step(actions)  # and the env accepts them


@pytest.mark.slow
def test_a_frozen_copy_of_a_maskableppo_policy_plays_as_an_opponent_and_stays_frozen():
    torch.set_num_threads(1)
    venv = Sb3VecEnv(QwixxVectorEnv(16, num_players=2, opponents="random"))
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    opponent = frozen_policy(model)
    rng = np.random.default_rng(0)
    obs = rng.random((64, venv.observation_space.shape[0]), dtype=np.float32)
    masks = (rng.random((64, venv.action_space.n)) < 0.2).astype(np.int8)
    masks[:, -1] = 1
    before = opponent(obs, masks)
    expected, _ = model.predict(obs, action_masks=masks.astype(bool), deterministic=True)
    np.testing.assert_array_equal(before, expected)  # the same forward pass as the model
    assert masks[np.arange(64), before].all()
    model.learn(512)  # training on does not move the frozen copy
    np.testing.assert_array_equal(opponent(obs, masks), before)
    env = QwixxVectorEnv(8, num_players=2, opponents={opponent: 1, "greedy": 1})
    state, _ = env.reset(seed=0)
    for _ in range(60):
        actions = np.array([np.flatnonzero(m)[0] for m in state["action_mask"]])
        state, *_ = env.step(actions)
