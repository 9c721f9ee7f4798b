"""`QwixxVectorEnv`, the single-agent training view: one learning seat per game, the other seats
played inside the engine by opponents drawn from a pool.

The learner must see exactly what `qwixx_v0` shows that seat and get the same rewards. With one
game and a frozen-policy opponent that records every decision it is asked for, the whole game
(the learner's decisions and the opponents') is replayed on an AEC game beside it. The rest
checks seats, the opponent pool, autoreset, the reward modes, determinism and bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from qwixx_env import ObservationView, QwixxVectorEnv, qwixx_v0
from qwixx_env.core import OVER, rules

from conftest import random_legal_actions


class RecordingPolicy:
    """A frozen-policy opponent that plays random legal actions and keeps every call."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.calls: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = random_legal_actions(masks, self.rng)
        self.calls.append((obs.copy(), masks.copy(), actions))
        return actions


def final_views(env: QwixxVectorEnv, infos: dict, terminated: np.ndarray) -> dict[int, ObservationView]:
    """The final observation of every game that just ended, read by name."""
    if not terminated.any():
        return {}
    final = infos["final_obs"]
    return {
        int(b): ObservationView(
            {"observation": final["observation"][b], "action_mask": final["action_mask"][b]},
            env.variant, env.num_players,
        )
        for b in np.flatnonzero(terminated)
    }


# --- the learner sees what the AEC env shows its seat ----------------------------------------

DIFFERENTIAL = {
    "classic-2p-seat-1-win": dict(num_players=2, learner_seat=1, reward="win"),
    "classic-5p-seat-3-score": dict(num_players=5, learner_seat=3, reward="score"),
    "longo-bonus-3p-random-seat-score-delta": dict(
        num_players=3, variant="longo", learner_seat="random", start_player="random", reward="score_delta"
    ),
    "longo-instead-4p-random-seat-margin": dict(
        num_players=4, variant="longo", lucky="instead", learner_seat="random", reward="margin"
    ),
    "longo-bonus-2p-fixed-lucky-seat-0": dict(
        num_players=2, variant="longo", lucky_numbers=[(6, 8), (7, 9)], learner_seat=0, reward="win"
    ),
}


@pytest.mark.parametrize("name", list(DIFFERENTIAL))
def test_one_game_against_a_frozen_policy_replays_exactly_on_the_aec_env(name):
    options = dict(DIFFERENTIAL[name])
    learner_seat = options.pop("learner_seat")
    seed = 60 + len(name)
    policy = RecordingPolicy(seed)
    env = QwixxVectorEnv(1, learner_seat=learner_seat, opponents=policy, **options)
    aec = qwixx_v0.raw_env(**options)
    obs, _ = env.reset(seed=seed)
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def learner() -> str:
        return f"player_{int(env.learner[0])}"

    def replay_opponents(seat: str) -> int:
        """Play the opponents' recorded decisions on the AEC game up to the learner's (`seat`)
        turn or the end; each was asked with what the AEC env shows the seat to act. Returns
        the learner's rewards over those decisions."""
        total = 0
        while not all(aec.terminations.values()) and aec.agent_selection != seat:
            assert policy.calls, f"the AEC game waits for {aec.agent_selection}, the policy was never asked"
            seen_obs, seen_mask, action = policy.calls.pop(0)
            shown = aec.observe(aec.agent_selection)
            np.testing.assert_array_equal(seen_obs[0], shown["observation"])
            np.testing.assert_array_equal(seen_mask[0], shown["action_mask"])
            aec.step(int(action[0]))
            total += aec.rewards[seat]
        return total

    replay_opponents(learner())
    games = 0
    while games < 3:
        shown = aec.observe(learner())
        assert aec.agent_selection == learner()
        np.testing.assert_array_equal(obs["observation"][0], shown["observation"])
        np.testing.assert_array_equal(obs["action_mask"][0], shown["action_mask"])
        action = random_legal_actions(obs["action_mask"], rng)
        seat_before = learner()
        obs, rewards, terminated, truncated, infos = env.step(action)
        aec.step(int(action[0]))
        expected = aec.rewards[seat_before]
        if terminated[0]:
            # The game ended on the learner's decision or on an opponent's after it; the
            # learner of the next game may sit elsewhere.
            expected += replay_opponents(seat_before)
            assert all(aec.terminations.values())
            np.testing.assert_array_equal(
                infos["final_obs"]["observation"][0], aec.observe(seat_before)["observation"]
            )
            assert not infos["final_obs"]["action_mask"][0].any()
            assert rewards[0] == expected
            games += 1
            aec.reset()  # no seed: the game's generator continues, as in the vector env
            replay_opponents(learner())
        else:
            expected += replay_opponents(seat_before)
            assert rewards[0] == expected
        assert not truncated[0]
    assert policy.calls == [], "the policy was asked for decisions the AEC game never had"


@pytest.mark.parametrize("reward", ["score", "score_delta"])
def test_solo_games_are_the_aec_games_with_seed_plus_i(reward):
    env = QwixxVectorEnv(4, num_players=1, variant="longo", reward=reward)
    aecs = [qwixx_v0.raw_env(num_players=1, variant="longo", reward=reward) for _ in range(4)]
    obs, _ = env.reset(seed=9)
    for i, aec in enumerate(aecs):
        aec.reset(seed=9 + i)
    rng = np.random.default_rng(9)
    finished = 0
    while finished < 8:
        for b, aec in enumerate(aecs):
            np.testing.assert_array_equal(obs["observation"][b], aec.observe("player_0")["observation"])
            np.testing.assert_array_equal(obs["action_mask"][b], aec.observe("player_0")["action_mask"])
        actions = random_legal_actions(obs["action_mask"], rng)
        obs, rewards, terminated, _, _ = env.step(actions)
        for b, aec in enumerate(aecs):
            aec.step(int(actions[b]))
            assert rewards[b] == aec.rewards["player_0"]
            assert terminated[b] == all(aec.terminations.values())
            if terminated[b]:
                aec.reset()
        finished += int(terminated.sum())


def test_it_is_always_the_learners_turn_and_it_sees_its_own_seat():
    env = QwixxVectorEnv(
        32, num_players=4, variant="longo", start_player="random", opponents={"random": 1, "greedy": 1}
    )
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(4)
    state = env.engine.state
    for step in range(150):
        assert np.array_equal(state.turn, env.learner), f"step {step}: not the learner's turn"
        assert not (state.phase == OVER).any()
        np.testing.assert_array_equal(obs["observation"], env.layout.encode(state, env.learner))
        np.testing.assert_array_equal(obs["action_mask"], rules.legal_mask(env.variant, state))
        np.testing.assert_array_equal(env.action_masks(), obs["action_mask"].astype(bool))
        assert env.action_masks().dtype == np.bool_
        assert env.observation_space.contains(obs)
        obs, *_ = env.step(random_legal_actions(obs["action_mask"], rng))


# --- seats ----------------------------------------------------------------------------------


def active_seat(obs: np.ndarray, env: QwixxVectorEnv) -> np.ndarray:
    """(N,) how many seats clockwise from the learner the active player sits."""
    return env.layout.field(obs, "active_seat").argmax(axis=-1)


def test_a_fixed_learner_seat_is_that_seat_in_every_game():
    # Seat 0 starts every game, so the learner in seat 2 of 3 sees the active player one seat
    # clockwise from itself on its first decision of every game.
    env = QwixxVectorEnv(16, num_players=3, learner_seat=2, start_player=0, opponents="greedy")
    obs, _ = env.reset(seed=1)
    assert (active_seat(obs["observation"], env) == 1).all()
    rng = np.random.default_rng(1)
    new_games = 0
    while new_games < 20:
        obs, _, terminated, _, _ = env.step(random_legal_actions(obs["action_mask"], rng))
        assert (active_seat(obs["observation"][terminated], env) == 1).all()
        new_games += int(terminated.sum())
    assert (env.learner == 2).all()


def test_a_random_learner_seat_is_drawn_evenly_per_game():
    env = QwixxVectorEnv(3000, num_players=3, learner_seat="random", start_player=0)
    obs, _ = env.reset(seed=2)
    # The learner in seat s sees seat 0, the starting active player, (3 - s) % 3 seats clockwise.
    counts = np.bincount(active_seat(obs["observation"], env), minlength=3)
    assert all(abs(c - 1000) < 100 for c in counts), counts
    # And it is drawn again for every new game.
    small = QwixxVectorEnv(8, num_players=3, learner_seat="random", start_player=0)
    obs, _ = small.reset(seed=2)
    rng = np.random.default_rng(2)
    seen = []
    while len(seen) < 60:
        obs, _, terminated, _, _ = small.step(random_legal_actions(obs["action_mask"], rng))
        seen += active_seat(obs["observation"][terminated], small).tolist()
    assert set(seen) == {0, 1, 2}


# --- the opponent pool ----------------------------------------------------------------------


def test_opponents_are_drawn_per_seat_with_the_pool_weights():
    policy = RecordingPolicy(0)
    env = QwixxVectorEnv(2000, num_players=3, learner_seat=0, opponents={"random": 1, "greedy": 2, policy: 1})
    env.reset(seed=3)
    drawn = env.seat_opponent[:, 1:].ravel()  # seats 1 and 2: 4000 draws, pool order as given
    shares = np.bincount(drawn, minlength=3) / drawn.size
    np.testing.assert_allclose(shares, [0.25, 0.5, 0.25], atol=0.03)
    # Each seat of each game is drawn on its own: games mix opponents.
    assert (env.seat_opponent[:, 1] != env.seat_opponent[:, 2]).mean() > 0.5


@pytest.mark.parametrize("opponents", [["random", "greedy"], {"random": 1.0, "greedy": 1.0}])
def test_a_list_of_opponents_weighs_them_equally(opponents):
    env = QwixxVectorEnv(2000, num_players=2, learner_seat=1, opponents=opponents)
    env.reset(seed=5)
    assert abs((env.seat_opponent[:, 0] == 1).mean() - 0.5) < 0.04


def test_set_opponents_keeps_seats_whose_opponent_stays_and_redraws_the_others():
    policy = RecordingPolicy(0)
    env = QwixxVectorEnv(2000, num_players=2, learner_seat=0, opponents={"random": 1, "greedy": 1})
    env.reset(seed=4)
    before = env.seat_opponent[:, 1].copy()  # 0 random, 1 greedy
    env.set_opponents({"greedy": 1, policy: 3})  # random is gone; greedy moves to index 0
    after = env.seat_opponent[:, 1]
    np.testing.assert_array_equal(after[before == 1], 0)
    redrawn = after[before == 0]
    assert abs((redrawn == 1).mean() - 0.75) < 0.05
    # New games draw from the new pool only.
    env.reset(seed=5)
    assert abs((env.seat_opponent[:, 1] == 1).mean() - 0.75) < 0.04
    with pytest.raises(ValueError, match="opponents"):
        env.set_opponents({"nobody": 1})


def test_a_frozen_policy_is_asked_only_for_its_own_seats_with_the_batch_waiting_for_it():
    calls = []

    def policy(obs, masks):
        """Pool entry 1: asked, at once, for every live game whose seat to act it plays."""
        D, A = env.layout.size, env.engine.num_actions
        state = env.engine.state
        waiting = np.flatnonzero(
            (state.phase != OVER) & (state.turn != env.learner)
            & (env.seat_opponent[np.arange(env.num_envs), state.turn] == 1)
        )
        assert obs.dtype == np.float32 and masks.dtype == np.int8
        assert obs.shape == (waiting.size, D) and masks.shape == (waiting.size, A)
        np.testing.assert_array_equal(obs, env.layout.encode(state, state.turn)[waiting])
        np.testing.assert_array_equal(masks, rules.legal_mask(env.variant, state)[waiting])
        calls.append(waiting.size)
        return random_legal_actions(masks, rng_policy)

    rng_policy = np.random.default_rng(8)
    env = QwixxVectorEnv(
        48, num_players=3, variant="longo", start_player="random", opponents={"random": 1, policy: 1}
    )
    obs, _ = env.reset(seed=8)
    rng = np.random.default_rng(8)
    finished = 0
    for _ in range(120):
        obs, _, terminated, _, _ = env.step(random_legal_actions(obs["action_mask"], rng))
        finished += terminated.sum()
    assert finished > 0 and len(calls) > 50
    assert max(calls) > 1, "the policy was never given a batch of games at once"


def test_a_frozen_policy_that_plays_illegally_is_refused():
    def first_illegal(obs, masks):
        return np.argmin(masks, axis=1)  # the first action each mask refuses

    env = QwixxVectorEnv(4, num_players=2, learner_seat=0, start_player=0, opponents=first_illegal)
    obs, _ = env.reset(seed=0)  # the learner, active, decides first: the opponent waits
    with pytest.raises(ValueError, match=r"returned an illegal action, \d+ for row \d+ \(masked there\)"):
        env.step(random_legal_actions(obs["action_mask"], np.random.default_rng(0)))


@pytest.mark.parametrize(
    "returns, message",
    [
        (
            lambda masks: np.full(len(masks), -1),
            r"returned an illegal action, -1 for row 0 \(outside 0\.\.44\)",
        ),  # not wrapped round
        (
            lambda masks: np.full(len(masks), 999),
            r"returned an illegal action, 999 for row 0 \(outside 0\.\.44\)",
        ),
        (
            lambda masks: np.full(len(masks), 43.5),
            r"returned float64 of shape \(\d+,\); expected \d+ whole-number actions",
        ),
    ],
)
def test_a_frozen_policy_returning_actions_out_of_range_is_refused_by_value(returns, message):
    env = QwixxVectorEnv(
        4, num_players=2, learner_seat=1, start_player=0, opponents=lambda obs, masks: returns(masks)
    )
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0)  # seat 0, the opponent, decides first


def test_a_frozen_policy_may_return_any_shape_of_whole_numbers_one_per_row():
    def as_row_of_floats(obs, masks):  # (1, n) float64 of whole numbers, as an older policy might
        return np.argmax(masks, axis=1).astype(np.float64)[None, :]

    def as_ints(obs, masks):
        return np.argmax(masks, axis=1)

    runs = []
    for policy in (as_row_of_floats, as_ints):
        env = QwixxVectorEnv(4, num_players=2, learner_seat=1, start_player=0, opponents=policy)
        obs, _ = env.reset(seed=0)
        runs.append(obs["observation"])
    np.testing.assert_array_equal(runs[0], runs[1])


def test_a_frozen_policy_that_returns_the_wrong_number_of_actions_is_refused():
    def one_too_many(obs, masks):
        return np.full(len(masks) + 1, masks.shape[1] - 1)

    env = QwixxVectorEnv(4, num_players=2, learner_seat=1, start_player=0, opponents=one_too_many)
    with pytest.raises(ValueError):
        env.reset(seed=0)  # seat 0, the opponent, decides first


def test_greedy_opponents_score_more_than_random_ones():
    env = QwixxVectorEnv(64, num_players=3, opponents={"random": 1, "greedy": 1}, reward="score")
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    scores: dict[str, list[int]] = {"random": [], "greedy": [], "learner (random legal)": []}
    while len(scores["learner (random legal)"]) < 200:
        seat_opponent, learner = env.seat_opponent.copy(), env.learner.copy()  # redrawn for new games
        obs, _, terminated, _, infos = env.step(random_legal_actions(obs["action_mask"], rng))
        for b, view in final_views(env, infos, terminated).items():
            for j, points in enumerate(view.scores):
                seat = (learner[b] + j) % 3
                kind = "learner (random legal)" if j == 0 else ("random", "greedy")[seat_opponent[b, seat]]
                scores[kind].append(points)
    mean = {kind: np.mean(s) for kind, s in scores.items()}
    assert mean["greedy"] > mean["random"] + 15, mean
    assert mean["greedy"] > mean["learner (random legal)"] + 15, mean


# --- autoreset and rewards ------------------------------------------------------------------


def test_a_finished_game_returns_its_final_observation_and_restarts_at_once():
    env = QwixxVectorEnv(16, num_players=2, variant="longo", opponents="greedy", reward="win")
    obs, infos = env.reset(seed=6)
    assert infos == {}
    rng = np.random.default_rng(6)
    finished = quiet_steps = 0
    while finished < 40:
        obs, rewards, terminated, truncated, infos = env.step(random_legal_actions(obs["action_mask"], rng))
        assert not truncated.any()
        assert not rewards[~terminated].any(), "a reward before the end in 'win' mode"
        if not terminated.any():
            assert "final_obs" not in infos and "_final_obs" not in infos
            quiet_steps += 1
            continue
        np.testing.assert_array_equal(infos["_final_obs"], terminated)
        for b, view in final_views(env, infos, terminated).items():
            assert view.phase == "over" and view.legal_actions.size == 0
            own, best_other = view.scores[0], view.scores[1:].max()
            assert rewards[b] == np.sign(own - best_other)
            fresh = ObservationView({k: v[b] for k, v in obs.items()}, env.variant, 2)
            assert fresh.phase in ("white", "lucky") and fresh.legal_actions.size > 0
            assert not fresh.crosses.any() and not fresh.locks.any() and not fresh.penalties.any()
            assert (fresh.scores == 0).all()
        finished += int(terminated.sum())
    assert quiet_steps > 0


def play_until(env: QwixxVectorEnv, games: int, seed: int):
    """Random legal learner decisions until `games` games finished; yields each step."""
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    finished = 0
    while finished < games:
        obs, rewards, terminated, truncated, infos = env.step(random_legal_actions(obs["action_mask"], rng))
        yield rewards, terminated, infos
        finished += int(terminated.sum())


@pytest.mark.parametrize("reward", ["score", "win", "margin"])
def test_terminal_reward_modes_read_off_the_final_scores(reward):
    env = QwixxVectorEnv(24, num_players=3, opponents=["random", "greedy"], reward=reward)
    outcomes = set()
    for rewards, terminated, infos in play_until(env, 60, seed=12):
        assert not rewards[~terminated].any(), f"a reward before the end in {reward!r} mode"
        for b, view in final_views(env, infos, terminated).items():
            own, best_other = int(view.scores[0]), int(view.scores[1:].max())
            expected = {"score": own, "win": np.sign(own - best_other), "margin": own - best_other}[reward]
            assert rewards[b] == expected, (b, view.scores)
            outcomes.add(np.sign(own - best_other))
    assert {-1, 1} <= outcomes


def test_score_delta_rewards_sum_to_the_final_score():
    env = QwixxVectorEnv(24, num_players=2, variant="longo", opponents="greedy", reward="score_delta")
    running = np.zeros(24)
    checked = 0
    for rewards, terminated, infos in play_until(env, 60, seed=13):
        running += rewards
        for b, view in final_views(env, infos, terminated).items():
            assert running[b] == view.scores[0]
            running[b] = 0
            checked += 1
    assert checked >= 60


def test_solo_rewards_the_final_score_by_default():
    env = QwixxVectorEnv(8, num_players=1)
    assert env.reward_mode == "score"
    for rewards, terminated, infos in play_until(env, 10, seed=14):
        for b, view in final_views(env, infos, terminated).items():
            assert rewards[b] == view.scores[0]


# --- determinism ----------------------------------------------------------------------------


def trajectory(seed: int, steps: int = 150) -> list:
    policy = RecordingPolicy(seed)
    env = QwixxVectorEnv(
        12, num_players=3, variant="longo", start_player="random",
        opponents={"random": 1, "greedy": 1, policy: 1}, reward="score_delta",
    )
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = [obs]
    for _ in range(steps):
        obs, rewards, terminated, truncated, infos = env.step(random_legal_actions(obs["action_mask"], rng))
        out.append((obs, rewards, terminated, infos.get("final_obs")))
    return out


def assert_same(a, b) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        np.testing.assert_array_equal(a, b)


def test_same_seed_same_actions_same_trajectory():
    first, again = trajectory(21), trajectory(21)
    assert_same(first, again)
    assert any(step[3] is not None for step in first[1:]), "no game finished: autoreset went untested"


def test_an_unseeded_reset_goes_on_from_the_seeded_generators():
    """Gymnasium: reset() without a seed does not reseed an env that has a generator, so a
    seeded reset then an unseeded one is the same pair of starts in every process."""
    def two_starts():
        env = QwixxVectorEnv(6, num_players=3, opponents={"random": 1, "greedy": 1})
        first, _ = env.reset(seed=4)
        first = {k: v.copy() for k, v in first.items()}
        second, _ = env.reset()
        return first, {k: v.copy() for k, v in second.items()}, env.learner.copy()

    (a1, a2, seats_a), (b1, b2, seats_b) = two_starts(), two_starts()
    assert_same((a1, a2, seats_a), (b1, b2, seats_b))
    assert not np.array_equal(a1["observation"], a2["observation"])  # a new deal, not a replay


def test_different_seeds_different_games():
    a, b = QwixxVectorEnv(8, num_players=2), QwixxVectorEnv(8, num_players=2)
    obs_a, _ = a.reset(seed=0)
    obs_b, _ = b.reset(seed=1)
    assert not np.array_equal(obs_a["observation"], obs_b["observation"])


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "4"])
def test_a_bad_num_envs_is_refused_under_its_own_name(bad):
    with pytest.raises(ValueError, match=rf"^num_envs: got {bad!r}; expected a positive integer"):
        QwixxVectorEnv(bad)


@pytest.mark.parametrize(
    "option, bad, shown",
    [
        ("learner_seat", 3, "3"),
        ("learner_seat", -1, "-1"),
        ("learner_seat", "first", "'first'"),
        ("learner_seat", True, "True"),
        ("opponents", "smart", "'smart'"),
        ("opponents", 42, "42"),
        ("opponents", ["random", "smart"], "'smart'"),
        ("greedy_max_skip", -1, "-1"),
        ("greedy_max_skip", 1.5, "1.5"),
        ("num_players", 6, "6"),
        ("reward", "wins", "'wins'"),
        ("variant", "longer", "'longer'"),
    ],
)
def test_bad_options_are_refused_by_name(option, bad, shown):
    options = dict(num_envs=2, num_players=3)
    options[option] = bad
    with pytest.raises(ValueError) as err:
        QwixxVectorEnv(**options)
    message = str(err.value)
    assert option in message and shown in message, message


@pytest.mark.parametrize(
    "bad",
    [{}, [], {"random": 0}, {"greedy": -1.0}, {"random": "1"}, {"random": float("inf")}, {"random": True}],
)
def test_an_empty_pool_or_a_bad_weight_is_refused(bad):
    with pytest.raises(ValueError, match="opponents"):
        QwixxVectorEnv(2, opponents=bad)


def test_numpy_numbers_are_weights_too():
    env = QwixxVectorEnv(2, opponents={"random": np.int64(2), "greedy": np.float32(1.0)})
    np.testing.assert_allclose(env._pool_weights, [2 / 3, 1 / 3])


def test_step_before_reset_is_refused():
    env = QwixxVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, np.int64))


@pytest.fixture
def env_mid_game():
    env = QwixxVectorEnv(4, num_players=3, variant="longo", opponents=["random", "greedy"], illegal_action="raise")
    obs, _ = env.reset(seed=30)
    rng = np.random.default_rng(30)
    for _ in range(5):
        obs, *_ = env.step(random_legal_actions(obs["action_mask"], rng))
    return env, obs


def state_copy(env: QwixxVectorEnv) -> list[np.ndarray]:
    return [a.copy() for a in (*env.engine.state, env.policy_rng, env.learner, env.seat_opponent)]


@pytest.mark.parametrize("bad", ["illegal", -1, "num_actions"])
def test_an_illegal_learner_action_names_its_game_and_changes_nothing(env_mid_game, bad):
    env, obs = env_mid_game
    actions = random_legal_actions(obs["action_mask"], np.random.default_rng(0))
    actions[3] = {
        "illegal": int(np.argmin(obs["action_mask"][3])),
        "num_actions": env.engine.num_actions,
    }.get(bad, bad)
    before = state_copy(env)
    with pytest.raises(ValueError) as err:
        env.step(actions)
    assert "game 3" in str(err.value) and str(actions[3]) in str(err.value), str(err.value)
    for a, b in zip(state_copy(env), before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape", [(3,), (5,), (2, 3)])
def test_learner_actions_of_the_wrong_shape_are_refused(env_mid_game, shape):
    env, _ = env_mid_game
    before = state_copy(env)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(shape, np.int64))
    for a, b in zip(state_copy(env), before):
        np.testing.assert_array_equal(a, b)


def test_non_integer_learner_actions_are_refused(env_mid_game):
    # The AEC env refuses an action of 1.5; the training view must not round it down.
    env, obs = env_mid_game
    actions = random_legal_actions(obs["action_mask"], np.random.default_rng(0)).astype(np.float64)
    actions[0] += 0.5
    before = state_copy(env)
    with pytest.raises(ValueError):
        env.step(actions)
    for a, b in zip(state_copy(env), before):
        np.testing.assert_array_equal(a, b)


def test_heuristic_opponents_run_in_the_engine_and_play_as_the_heuristic_bot():
    """The compiled heuristic policy plays the opponents' seats exactly as the `heuristic` bot
    would from their observations."""
    from qwixx_env import bots
    from qwixx_env.core import layout_for

    env = QwixxVectorEnv(16, num_players=3, learner_seat=0, opponents="heuristic")
    obs, _ = env.reset(seed=5)
    bot = bots.make("heuristic", num_players=3)
    layout = layout_for(env.variant, 3)
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(40):
        # Copy the state before the step, then replay the opponents with the bot class.
        actions = random_legal_actions(obs["action_mask"], rng)
        twin = env.engine.state.clone()
        obs, *_ = env.step(actions)
        rules.apply(env.variant, twin, actions)
        for b in range(16):
            while twin.phase[b] != OVER and twin.turn[b] != 0:
                seat = int(twin.turn[b])
                game = twin.game(b)
                o = layout.encode(game, np.array([seat]))[0]
                mask = rules.legal_mask(env.variant, game)[0]
                action = bot.act({"observation": o, "action_mask": mask})
                sub = twin.game(b)
                rules.apply(env.variant, sub, np.array([action]))
                for field, value in zip(twin, sub):
                    field[b] = value[0]
                checked += 1
        live = twin.phase != OVER
        np.testing.assert_array_equal(twin.marks[live], env.engine.state.marks[live])
    assert checked > 100


def test_an_installed_checkpoint_named_as_opponent_plays_as_its_numpy_policy():
    from qwixx_env.bots.pretrained import NumpyPolicy

    def play(opponents):
        env = QwixxVectorEnv(8, num_players=2, variant="longo", learner_seat=0, opponents=opponents)
        obs, _ = env.reset(seed=11)
        rng, seen = np.random.default_rng(11), []
        for _ in range(30):
            actions = random_legal_actions(obs["action_mask"], rng)
            obs, *_ = env.step(actions)
            seen.append(obs["observation"].copy())
        return env, np.array(seen)

    named, by_name = play("ppo-longo-2p")
    _, by_policy = play(NumpyPolicy.load("ppo-longo-2p"))
    np.testing.assert_array_equal(by_name, by_policy)
    assert named.opponent_decisions > 0
    loaded = named._pool[0]
    named.set_opponents({"ppo-longo-2p": 1, "random": 1})  # loaded once: the seats keep it
    assert named._pool[0] is loaded
    with pytest.raises(
        ValueError,
        match=r"opponents: bot 'ppo-longo-2p' cannot play classic with 2 player\(s\): variant: got 'classic'; "
        r"checkpoint 'ppo-longo-2p' .* plays variant='longo' only",
    ):
        QwixxVectorEnv(2, num_players=2, opponents="ppo-longo-2p")
    with pytest.raises(ValueError, match=r"got 'ppo-nothing'; expected .*an installed checkpoint's name"):
        QwixxVectorEnv(2, num_players=2, opponents=["greedy", "ppo-nothing"])


def record_as_rllib(env: QwixxVectorEnv, steps: int) -> list[list[tuple[int, float]]]:
    """Step `env` with each game's lowest legal action and record as RLlib 2.60's vector env
    runner does (`SingleAgentEnvRunner._sample`): an observation after a terminal step opens a
    new episode (a reset, no decision), any other adds a step. Returns, per game slot, the
    (recorded decisions, summed reward) of every finished episode."""
    obs, _ = env.reset(seed=3)
    episodes: list[list[tuple[int, float]]] = [[] for _ in range(env.num_envs)]
    length, reward = np.zeros(env.num_envs, np.int64), np.zeros(env.num_envs)
    opened = np.ones(env.num_envs, bool)  # the episode of the slot has its reset observation
    for _ in range(steps):
        obs, rewards, terminated, _, _ = env.step(obs["action_mask"].argmax(axis=1))
        for b in range(env.num_envs):
            if not opened[b]:
                opened[b] = True  # the new game's first observation
                continue
            length[b] += 1
            reward[b] += rewards[b]
            if terminated[b]:
                episodes[b].append((int(length[b]), float(reward[b])))
                length[b], reward[b], opened[b] = 0, 0.0, False
    return episodes


def test_next_step_autoreset_records_every_decision_of_every_game_as_rllib_does():
    """Same step (the default) restarts a game inside its terminal step, so a recorder that
    expects the next-step reset takes the new game's first observation for a reset and loses
    its opening decision; next step loses none, and plays the same games (a fixed seat and one
    opponent: the draws between games do not change them)."""
    same = QwixxVectorEnv(8, num_players=2, learner_seat=0, opponents="greedy", reward="score_delta")
    nxt = QwixxVectorEnv(8, num_players=2, learner_seat=0, opponents="greedy", reward="score_delta",
                         autoreset_mode=AutoresetMode.NEXT_STEP)
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert nxt.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    recorded = record_as_rllib(nxt, 300)
    assert sum(n for slot in recorded for n, _ in slot) <= nxt.learner_decisions
    assert nxt.learner_decisions - sum(n for slot in recorded for n, _ in slot) < 8 * 60  # unfinished games only
    lost = record_as_rllib(same, 300)
    assert sum(len(slot) for slot in recorded) > 8 * 3, "too few games finished to tell"
    for slot_next, slot_same in zip(recorded, lost):
        games = min(len(slot_next), len(slot_same))
        # the first game of a slot is recorded whole either way; every later one loses a decision in same step
        assert slot_next[0] == slot_same[0]
        assert [n for n, _ in slot_next[1:games]] == [n + 1 for n, _ in slot_same[1:games]]


def test_next_step_autoreset_shows_the_final_observation_then_the_new_game_with_no_reward():
    env = QwixxVectorEnv(4, num_players=2, opponents="random", reward="win", autoreset_mode="NextStep")
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    while True:
        obs, rewards, terminated, _, infos = env.step(random_legal_actions(obs["action_mask"], rng))
        if terminated.any():
            break
    assert "final_obs" not in infos
    for b in np.flatnonzero(terminated):
        view = ObservationView({k: v[b] for k, v in obs.items()}, env.variant, 2)
        assert view.phase == "over" and not obs["action_mask"][b].any()
    decisions = env.learner_decisions
    actions = random_legal_actions(np.where(terminated[:, None], 1, obs["action_mask"]), rng)
    obs, rewards, again, _, _ = env.step(actions)  # the ended games' actions are ignored
    assert env.learner_decisions == decisions + int((~terminated).sum())
    for b in np.flatnonzero(terminated):
        assert rewards[b] == 0 and not again[b]
        fresh = ObservationView({k: v[b] for k, v in obs.items()}, env.variant, 2)
        assert fresh.legal_actions.size > 0 and not fresh.crosses.any()
    with pytest.raises(ValueError, match="autoreset_mode: got 'disabled'"):
        QwixxVectorEnv(2, autoreset_mode="disabled")
