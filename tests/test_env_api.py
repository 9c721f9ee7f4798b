"""The public face of `qwixx_v0`: PettingZoo's own checks, agents and spaces, reward modes,
seeding, the classic-game guards of `env()`, the hidden white action, game records, the
observation read back by name, and the action numbering.

Every game here is a seeded random game played through the public API.
"""

from __future__ import annotations

import functools
import json
import re

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils.env_logger import EnvLogger

import qwixx_env
from qwixx_env import COLORS, ObservationView, decode_action, encode_action, get_variant, qwixx_v0, replay
from qwixx_env.core.rewards import illegal_return

from conftest import random_legal_action, visible

VARIANTS = ("classic", "longo")
PLAYER_COUNTS = (1, 2, 3, 4, 5)
CELLS = {"classic": 11, "longo": 15}  # numbers per row: 2..12 and 2..16


def printed_rows(variant: str) -> list[list[int]]:
    """The sheet as printed: red and yellow ascend, green and blue descend."""
    up = list(range(2, CELLS[variant] + 2))
    return [up, up, up[::-1], up[::-1]]


def play_raw(game: qwixx_v0.raw_env, seed: int, policy_seed: int | None = None, reset: bool = True):
    """Play a random game to its end on the raw env; returns (actions, snapshots after each)."""
    if reset:
        game.reset(seed=seed)
    rng = np.random.default_rng(seed if policy_seed is None else policy_seed)
    actions, snaps = [], [game.snapshot()]
    while game.legal_actions():
        action = random_legal_action(game.observe(game.agent_selection)["action_mask"], rng)
        game.step(action)
        actions.append(action)
        snaps.append(game.snapshot())
    return actions, snaps


# --- PettingZoo's own tests -----------------------------------------------------------------


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_api_test(variant, num_players):
    api_test(qwixx_v0.env(num_players=num_players, variant=variant), num_cycles=300)


def test_pettingzoo_api_test_longo_lucky_instead_random_start():
    api_test(
        qwixx_v0.env(num_players=3, variant="longo", lucky="instead", start_player="random"), num_cycles=300
    )


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_seed_test(variant, num_players):
    seed_test(functools.partial(qwixx_v0.env, num_players=num_players, variant=variant), num_cycles=300)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_render_test(variant, num_players, capsys):
    render_test(functools.partial(qwixx_v0.env, num_players=num_players, variant=variant))
    assert "player_0" in capsys.readouterr().out  # human mode printed the sheets


# --- agents and spaces ----------------------------------------------------------------------


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_agents_and_spaces(variant, num_players):
    env = qwixx_v0.env(num_players=num_players, variant=variant)
    env.reset(seed=0)
    names = [f"player_{i}" for i in range(num_players)]
    assert env.possible_agents == names
    assert env.agents == names
    K = CELLS[variant]
    size = env.unwrapped.layout.size
    for agent in names:
        assert env.action_space(agent) == spaces.Discrete(4 * K + 1)
        space = env.observation_space(agent)
        assert space["observation"].shape == (size,) and space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (4 * K + 1,) and space["action_mask"].dtype == np.int8
        obs = env.observe(agent)
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
        assert space.contains(obs)


OBSERVATION_SIZES = {"classic": (144, 198, 252, 306, 360), "longo": (203, 288, 373, 458, 543)}


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_observation_sizes_are_the_documented_ones(variant, num_players):
    env = qwixx_v0.env(num_players=num_players, variant=variant)
    env.reset(seed=0)
    size = OBSERVATION_SIZES[variant][num_players - 1]
    assert env.observe("player_0")["observation"].shape == (size,)
    assert env.observation_space("player_0")["observation"].shape == (size,)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_masks_zero_for_agents_not_to_act_and_pass_offered_in_white_and_colour(variant, num_players):
    game = qwixx_v0.raw_env(num_players=num_players, variant=variant)
    game.reset(seed=num_players)
    rng = np.random.default_rng(0)
    pass_action = 4 * CELLS[variant]
    while game.legal_actions():
        for agent in game.possible_agents:
            obs = game.observe(agent)
            assert game.observation_space(agent).contains(obs)
            if agent != game.agent_selection:
                assert not obs["action_mask"].any(), agent
        mask = game.observe(game.agent_selection)["action_mask"]
        assert np.flatnonzero(mask).tolist() == game.legal_actions()
        if game.snapshot()["phase"] in ("white", "color"):
            assert mask[pass_action] == 1
        game.step(random_legal_action(game.observe(game.agent_selection)["action_mask"], rng))
    for agent in game.possible_agents:
        assert not game.observe(agent)["action_mask"].any()


# --- rewards --------------------------------------------------------------------------------


def returns_through_last(env, seed: int):
    """Total reward each agent receives through `last()` in a seeded random game, the final
    snapshot, and the per-step reward dicts of the raw env."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total = dict.fromkeys(env.possible_agents, 0)
    per_step = []
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        total[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        env.step(random_legal_action(obs["action_mask"], rng))
        per_step.append(dict(env.unwrapped.rewards))
    return total, env.unwrapped.snapshot(), per_step


def win_value(scores: list[int], seat: int) -> int:
    best_other = max(s for i, s in enumerate(scores) if i != seat)
    return 1 if scores[seat] > best_other else (0 if scores[seat] == best_other else -1)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("num_players", (2, 3, 4, 5))
@pytest.mark.parametrize("variant", VARIANTS)
def test_win_reward_is_terminal_and_matches_final_scores(variant, num_players, seed):
    env = qwixx_v0.env(num_players=num_players, variant=variant, reward="win")
    total, snap, per_step = returns_through_last(env, seed)
    scores = [p["score"] for p in snap["players"]]
    assert snap["phase"] == "over"
    assert total == {f"player_{i}": win_value(scores, i) for i in range(num_players)}
    assert all(v == 0 for step in per_step[:-1] for v in step.values())  # terminal only


@pytest.mark.slow
def test_win_reward_shared_top_score_gives_zero():
    """Find seeded games that end in a tie for the top and check the 0 for the sharers."""
    found = 0
    for seed in range(400):
        env = qwixx_v0.env(num_players=2, reward="win")
        total, snap, _ = returns_through_last(env, seed)
        scores = [p["score"] for p in snap["players"]]
        if scores[0] == scores[1]:
            assert total == {"player_0": 0, "player_1": 0}
            found += 1
    assert found > 0, "no tied game among 400 seeds; widen the search"


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_score_reward_is_the_final_score(variant, num_players, seed):
    env = qwixx_v0.env(num_players=num_players, variant=variant, reward="score")
    total, snap, per_step = returns_through_last(env, seed)
    assert total == {f"player_{i}": p["score"] for i, p in enumerate(snap["players"])}
    assert all(v == 0 for step in per_step[:-1] for v in step.values())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_score_delta_reward_is_dense_and_sums_to_the_final_score(variant, num_players, seed):
    game = qwixx_v0.raw_env(num_players=num_players, variant=variant, reward="score_delta")
    game.reset(seed=seed)
    rng = np.random.default_rng(seed)
    summed = dict.fromkeys(game.possible_agents, 0)
    nonzero_before_end = False
    while game.legal_actions():
        before = [p["score"] for p in game.snapshot()["players"]]
        game.step(random_legal_action(game.observe(game.agent_selection)["action_mask"], rng))
        after = game.snapshot()
        for i, agent in enumerate(game.possible_agents):
            assert game.rewards[agent] == after["players"][i]["score"] - before[i]
            summed[agent] += game.rewards[agent]
        nonzero_before_end |= after["phase"] != "over" and any(game.rewards.values())
    assert summed == {f"player_{i}": p["score"] for i, p in enumerate(game.snapshot()["players"])}
    assert nonzero_before_end
    # the same totals reach the agents through last()
    total, snap, _ = returns_through_last(
        qwixx_v0.env(num_players=num_players, variant=variant, reward="score_delta"), seed
    )
    assert total == {f"player_{i}": p["score"] for i, p in enumerate(snap["players"])}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("num_players", (2, 3, 4, 5))
@pytest.mark.parametrize("variant", VARIANTS)
def test_margin_reward_is_own_score_minus_best_other(variant, num_players, seed):
    env = qwixx_v0.env(num_players=num_players, variant=variant, reward="margin")
    total, snap, per_step = returns_through_last(env, seed)
    scores = [p["score"] for p in snap["players"]]
    expected = {
        f"player_{i}": scores[i] - max(s for j, s in enumerate(scores) if j != i) for i in range(num_players)
    }
    assert total == expected
    assert all(v == 0 for step in per_step[:-1] for v in step.values())


@pytest.mark.parametrize("variant", VARIANTS)
def test_default_reward_is_win_with_two_or_more_players(variant):
    for num_players in (2, 3, 4, 5):
        default, snap, _ = returns_through_last(qwixx_v0.env(num_players=num_players, variant=variant), 7)
        scores = [p["score"] for p in snap["players"]]
        assert default == {f"player_{i}": win_value(scores, i) for i in range(num_players)}


@pytest.mark.parametrize("variant", VARIANTS)
def test_default_reward_is_score_solo(variant):
    for seed in range(3):
        default, snap, _ = returns_through_last(qwixx_v0.env(num_players=1, variant=variant), seed)
        assert default == {"player_0": snap["players"][0]["score"]}


# --- snapshot -------------------------------------------------------------------------------


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_snapshot_is_json_and_has_the_documented_keys(variant, num_players):
    game = qwixx_v0.raw_env(num_players=num_players, variant=variant)
    _, snaps = play_raw(game, seed=3)
    for snap in snaps:
        assert json.loads(json.dumps(snap)) == snap
        assert set(snap) == {
            "variant", "num_players", "roll", "active_player", "phase", "dice", "locked_rows", "players"
        }
        assert snap["variant"] == variant and snap["num_players"] == num_players
        assert set(snap["dice"]) == {"white", *COLORS} and len(snap["dice"]["white"]) == 2
        assert len(snap["players"]) == num_players
        for player in snap["players"]:
            assert set(player) == {"marks", "locks", "penalties", "lucky_numbers", "score"}
            assert set(player["marks"]) == set(COLORS)
            assert len(player["lucky_numbers"]) == (2 if variant == "longo" else 0)
    assert snaps[-1]["phase"] == "over"


@pytest.mark.parametrize("start_player", (0, 1, 2))
def test_start_player_is_the_first_active_seat(start_player):
    env = qwixx_v0.env(num_players=3, start_player=start_player)
    env.reset(seed=0)
    assert env.unwrapped.snapshot()["active_player"] == start_player
    assert env.agent_selection == f"player_{start_player}"


def test_random_start_player_is_seeded_and_varies():
    starts = []
    for seed in range(30):
        a, b = (qwixx_v0.raw_env(num_players=4, start_player="random") for _ in range(2))
        a.reset(seed=seed)
        b.reset(seed=seed)
        assert a.snapshot() == b.snapshot()
        starts.append(a.snapshot()["active_player"])
        assert a.agent_selection == f"player_{starts[-1]}"
    assert len(set(starts)) > 1


def test_fixed_lucky_numbers_are_on_the_sheets():
    game = qwixx_v0.raw_env(num_players=2, variant="longo", lucky_numbers=[(3, 11), (7, 9)])
    game.reset(seed=0)
    assert [p["lucky_numbers"] for p in game.snapshot()["players"]] == [[3, 11], [7, 9]]


def test_drawn_lucky_numbers_are_two_different_numbers_and_vary_by_seed():
    drawn = set()
    for seed in range(20):
        game = qwixx_v0.raw_env(num_players=3, variant="longo")
        game.reset(seed=seed)
        for player in game.snapshot()["players"]:
            a, b = player["lucky_numbers"]
            assert a != b and 2 <= a <= 16 and 2 <= b <= 16
            drawn.add((a, b))
    assert len(drawn) > 10


@pytest.mark.parametrize("variant", VARIANTS)
def test_score_table_replaces_the_points_per_row_and_travels_in_the_record(variant):
    table = [3 * n * n + 1 for n in range(CELLS[variant] + 2)]
    game = qwixx_v0.raw_env(num_players=3, variant=variant, score_table=table)
    _, snaps = play_raw(game, seed=6)
    for snap in snaps:
        for player in snap["players"]:
            rows = sum(table[len(player["marks"][c]) + (c in player["locks"])] for c in COLORS)
            assert player["score"] == rows - 5 * player["penalties"]
    early = qwixx_v0.raw_env(num_players=3, variant=variant, score_table=table)
    early.reset(seed=6)
    for _ in range(12):
        early.step(early.legal_actions()[0])
    assert early.record()["options"]["score_table"] == table
    assert replay(early.record()).snapshot() == early.snapshot()


# --- seeding --------------------------------------------------------------------------------


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_seed_and_same_decisions_reproduce_the_game(variant, num_players):
    opts = dict(num_players=num_players, variant=variant, start_player="random")
    first = play_raw(qwixx_v0.raw_env(**opts), seed=11)
    again = play_raw(qwixx_v0.raw_env(**opts), seed=11)
    assert first == again
    # the same env, reset with the same seed after a game, plays it again
    game = qwixx_v0.raw_env(**opts)
    play_raw(game, seed=5)
    assert play_raw(game, seed=11) == first


def test_different_seeds_give_different_games():
    first_rolls = set()
    for seed in range(10):
        game = qwixx_v0.raw_env()
        game.reset(seed=seed)
        first_rolls.add(json.dumps(game.snapshot()["dice"]))
    assert len(first_rolls) > 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_unseeded_resets_continue_the_seeded_generator(variant):
    def three_games():
        game = qwixx_v0.raw_env(num_players=3, variant=variant)
        games = [play_raw(game, seed=21, policy_seed=1)]
        for policy_seed in (2, 3):
            game.reset()
            games.append(play_raw(game, seed=None, policy_seed=policy_seed, reset=False))
        return games

    a, b = three_games(), three_games()
    assert a == b  # reproducible from the one seed
    seeded, unseeded_1, unseeded_2 = (snaps for _, snaps in a)
    assert unseeded_1 != unseeded_2
    assert unseeded_1 != seeded


def test_unseeded_reset_on_a_fresh_env_plays_a_game():
    game = qwixx_v0.raw_env()
    game.reset()
    actions, snaps = play_raw(game, seed=None, policy_seed=0, reset=False)
    assert snaps[-1]["phase"] == "over" and actions


# --- render ---------------------------------------------------------------------------------


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_ansi_render_shows_every_sheet_the_dice_and_whose_decision(variant, num_players):
    game = qwixx_v0.raw_env(num_players=num_players, variant=variant, render_mode="ansi")
    game.reset(seed=2)
    rng = np.random.default_rng(2)
    while True:
        text = game.render()
        snap = game.snapshot()
        assert isinstance(text, str)
        for i, player in enumerate(snap["players"]):
            assert f"player_{i}" in text
            assert f"score {player['score']}" in text
        for color in COLORS:
            assert color in text
        w1, w2 = snap["dice"]["white"]
        assert f"white {w1} {w2}" in text
        if not game.legal_actions():
            assert "to decide" not in text
            break
        assert f"to decide: {game.agent_selection}" in text
        game.step(random_legal_action(game.observe(game.agent_selection)["action_mask"], rng))


def test_human_render_prints_the_ansi_picture(capsys):
    ansi = qwixx_v0.raw_env(num_players=2, render_mode="ansi")
    human = qwixx_v0.raw_env(num_players=2, render_mode="human")
    ansi.reset(seed=4)
    human.reset(seed=4)
    capsys.readouterr()
    assert human.render() is None
    assert capsys.readouterr().out.strip() == ansi.render().strip()
    action = ansi.legal_actions()[0]
    ansi.step(action)
    human.step(action)  # human mode prints after each step
    assert capsys.readouterr().out.strip() == ansi.render().strip()


# --- the wrapped env (PettingZoo's classic-game guards) -------------------------------------


def test_env_unwrapped_is_the_raw_env():
    env = qwixx_v0.env(num_players=3, variant="longo")
    assert isinstance(env.unwrapped, qwixx_v0.raw_env)
    env.reset(seed=0)
    assert env.unwrapped.snapshot()["num_players"] == 3
    assert env.agent_selection == env.unwrapped.agent_selection


@pytest.mark.parametrize(
    "call",
    [
        lambda env: env.step(0),
        lambda env: env.observe("player_0"),
        lambda env: env.render(),
        lambda env: env.last(),
        lambda env: env.agent_iter(),
    ],
    ids=["step", "observe", "render", "last", "agent_iter"],
)
def test_calls_before_reset_raise(call):
    env = qwixx_v0.env(render_mode="ansi")
    with pytest.raises(AssertionError, match="reset"):
        call(env)


@pytest.mark.parametrize(
    "call, name",
    [(lambda env: env.last(), "last()"), (lambda env: env.observe("player_1"), "observe('player_1')"),
     (lambda env: env.step(4), "step(4)")],
)
def test_the_raw_env_before_reset_says_to_call_reset(call, name):
    """The raw env (no PettingZoo order wrapper) names the call and says to reset, where it
    used to fail with a bare AttributeError on agent_selection; state is untouched."""
    env = qwixx_v0.raw_env()
    with pytest.raises(RuntimeError, match=re.escape(f"{name}: there is no game yet; call reset() first")):
        call(env)
    env.reset(seed=0)
    assert env.last()[0]["action_mask"].any()


@pytest.mark.parametrize(
    "name", ["agents", "rewards", "terminations", "truncations", "infos", "agent_selection"]
)
def test_reading_game_attributes_before_reset_raises_attribute_error(name):
    env = qwixx_v0.env()
    with pytest.raises(AttributeError):
        getattr(env, name)
    env.reset(seed=0)
    getattr(env, name)


def test_agent_iter_needs_a_step_between_agents():
    env = qwixx_v0.env()
    env.reset(seed=0)
    it = env.agent_iter()
    next(it)
    with pytest.raises(AssertionError, match="step"):
        next(it)


@pytest.mark.parametrize("num_players", (1, 2, 3, 5))
@pytest.mark.parametrize("variant", VARIANTS)
def test_illegal_action_ends_the_game_with_less_than_any_score_for_the_offender(variant, num_players):
    env = qwixx_v0.env(num_players=num_players, variant=variant, reward="score")
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(7):  # a few legal decisions first
        env.step(random_legal_action(env.observe(env.agent_selection)["action_mask"], rng))
    offender = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(offender)["action_mask"] == 0)[0])
    EnvLogger.flush()
    env.step(illegal)
    assert any("Illegal move" in msg for msg in EnvLogger.mqueue)
    worst = float(illegal_return("score", get_variant(variant)))  # one below the lowest possible score
    assert worst < -20
    assert env.rewards == {a: (worst if a == offender else 0) for a in env.possible_agents}
    assert all(env.terminations.values()) and all(env.truncations.values())
    seen = {}
    for agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        assert termination and truncation
        seen[agent] = reward
        env.step(None)
    assert seen == {a: (worst if a == offender else 0) for a in env.possible_agents}
    assert env.agents == []


def test_after_an_illegal_end_no_agent_sees_a_legal_action():
    env = qwixx_v0.env(num_players=3)
    env.reset(seed=2)
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    env.step(illegal)
    assert env.unwrapped.legal_actions() == []
    for agent in env.agent_iter():
        obs, *_ = env.last()
        assert not obs["action_mask"].any(), agent
        env.step(None)


@pytest.mark.parametrize("flag", [True, np.True_])
def test_a_bool_is_no_action_even_where_its_number_is_legal(flag):
    """`Discrete.contains(True)` holds, but a bool is refused as outside the space whether or
    not action int(flag) is legal, as the raw env refuses it."""
    for seed in range(40):
        env = qwixx_v0.env(num_players=2)
        env.reset(seed=seed)
        if env.observe(env.agent_selection)["action_mask"][int(flag)]:
            break
    else:
        pytest.fail("no deal with the action legal")
    before = env.unwrapped.snapshot()
    with pytest.raises(AssertionError, match="not in action space"):
        env.step(flag)
    assert env.unwrapped.snapshot() == before and not any(env.terminations.values())


def test_raw_render_before_reset_says_to_reset_first():
    with pytest.raises(RuntimeError, match=r"reset\(\) first"):
        qwixx_v0.raw_env(render_mode="ansi").render()


@pytest.mark.parametrize("action", [-1, 45, 1000, 2.5, None])
def test_action_outside_the_action_space_fails_an_assertion(action):
    env = qwixx_v0.env(num_players=2, variant="classic")
    env.reset(seed=0)
    before = env.unwrapped.snapshot()
    with pytest.raises(AssertionError):
        env.step(action)
    assert env.unwrapped.snapshot() == before
    assert not any(env.terminations.values())


def test_wrapped_env_plays_a_legal_game_to_the_end():
    env = qwixx_v0.env(num_players=4, variant="longo")
    env.reset(seed=9)
    rng = np.random.default_rng(9)
    for _ in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else random_legal_action(obs["action_mask"], rng))
    assert env.agents == []
    assert env.unwrapped.snapshot()["phase"] == "over"


# --- the white action is simultaneous -------------------------------------------------------


def replay_prefix(opts: dict, seed: int, actions: list[int]) -> qwixx_v0.raw_env:
    game = qwixx_v0.raw_env(**opts)
    game.reset(seed=seed)
    for action in actions:
        game.step(action)
    return game


@pytest.mark.parametrize(
    "opts",
    [
        dict(num_players=2, variant="classic"),
        dict(num_players=3, variant="classic"),
        dict(num_players=5, variant="classic"),
        dict(num_players=3, variant="longo", lucky="instead"),
        dict(num_players=4, variant="longo", lucky="bonus"),
    ],
    ids=lambda o: f"{o['variant']}-{o['num_players']}-{o.get('lucky', '')}",
)
def test_white_choice_is_hidden_until_every_seat_decided(opts):
    """At every roll of a seeded game, replaying each legal white choice of the first seat to
    decide gives the same snapshot, observations and masks for all, until the action resolves."""
    seed = 17
    rng = np.random.default_rng(seed)
    game = qwixx_v0.raw_env(**opts)
    game.reset(seed=seed)
    history: list[int] = []
    compared = 0
    while game.legal_actions():
        snap = game.snapshot()
        first_white = snap["phase"] == "white" and game.agent_selection == f"player_{snap['active_player']}"
        if first_white and len(game.legal_actions()) > 1:
            seat = snap["active_player"]
            before = visible(game)
            views = []
            for choice in game.legal_actions():
                branch = replay_prefix(opts, seed, history + [choice])
                if branch.snapshot()["phase"] == "lucky":
                    continue  # the chooser breaks its own lucky tie next (it may see its choice)
                after = visible(branch)
                assert after["snapshot"] == before["snapshot"]
                assert after["obs"] == before["obs"]
                views.append(after)
                # the choice appears once every other seat has passed
                while branch.snapshot()["phase"] in ("white", "lucky"):
                    branch.step(branch.legal_actions()[-1])  # pass, or the last lucky option
                crossed = {
                    (color, n)
                    for color, numbers in branch.snapshot()["players"][seat]["marks"].items()
                    for n in numbers
                } - {(color, n) for color, numbers in snap["players"][seat]["marks"].items() for n in numbers}
                mark = decode_action(choice, opts["variant"])
                if mark is not None:
                    assert mark in crossed
                elif opts.get("lucky") != "bonus":  # a bonus lucky cross may come with a pass
                    assert not crossed
            assert all(v == views[0] for v in views)
            compared += len(views)
        action = random_legal_action(game.observe(game.agent_selection)["action_mask"], rng)
        game.step(action)
        history.append(action)
    assert compared >= 10


def test_white_choice_is_hidden_even_when_it_decides_a_lucky_tie():
    """Longo, lucky="bonus": whether a seat's lucky cross ties between rows depends on its own
    white choice, and the tie is broken right after that choice (the turn structure), so that
    a tie-break is happening is public. Which cross the seat chose is not: among choices that
    lead to the same phase, the other seat's snapshot, observation and turn are identical."""
    opts = dict(num_players=2, variant="longo", lucky_numbers=[(7, 8), (6, 9)])
    for seed in range(50):
        rng = np.random.default_rng(seed)
        game = qwixx_v0.raw_env(**opts)
        game.reset(seed=seed)
        history: list[int] = []
        while game.legal_actions():
            snap = game.snapshot()
            if snap["phase"] == "white" and game.agent_selection == f"player_{snap['active_player']}":
                branches = [replay_prefix(opts, seed, history + [a]) for a in game.legal_actions()]
                phases = {b.snapshot()["phase"] for b in branches}
                if phases == {"white", "lucky"}:
                    other = f"player_{1 - snap['active_player']}"
                    for phase in phases:
                        seen = [
                            (b.snapshot(), b.agent_selection, b.observe(other)["observation"].tobytes())
                            for b in branches
                            if b.snapshot()["phase"] == phase
                        ]
                        assert all(s == seen[0] for s in seen), (
                            f"seed {seed}, decisions {history}: white choices leading to the "
                            f"{phase} phase look different to {other}"
                        )
                    return
            action = random_legal_action(game.observe(game.agent_selection)["action_mask"], rng)
            game.step(action)
            history.append(action)
    raise AssertionError("no white choice that decides a lucky tie in 50 seeded games")


# --- game records ---------------------------------------------------------------------------


RECORD_OPTIONS = [
    dict(variant="classic"),
    dict(variant="classic", start_player="random", reward="score_delta"),
    dict(variant="longo"),
    dict(variant="longo", lucky="instead", start_player="random"),
    dict(variant="longo", lucky="bonus", fixed_lucky=True, reward="score"),
]


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("extra", RECORD_OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_record_replays_to_the_same_game(extra, num_players, tmp_path):
    opts = dict(extra, num_players=num_players)
    if opts.pop("fixed_lucky", False):
        opts["lucky_numbers"] = [(2 + s, 16 - s) for s in range(num_players)]
    game = qwixx_v0.raw_env(**opts)
    seed = 100 + num_players
    game.reset(seed=seed)
    rng = np.random.default_rng(seed)
    middle, mid_record, mid_snapshot, actions = None, None, None, []
    while game.legal_actions():
        if len(actions) == 6:
            middle, mid_record, mid_snapshot = len(actions), game.record(), game.snapshot()
        action = random_legal_action(game.observe(game.agent_selection)["action_mask"], rng)
        game.step(action)
        actions.append(action)
    record = game.record()
    assert json.loads(json.dumps(record)) == record
    assert replay(record).snapshot() == game.snapshot()
    assert replay(json.dumps(record)).snapshot() == game.snapshot()
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    assert replay(path).snapshot() == game.snapshot()
    assert replay(str(path)).snapshot() == game.snapshot()
    # a record taken mid-game replays to that position and plays on to the same end (a record
    # made during a white action may stop at the roll, leaving out choices not yet revealed)
    assert middle is not None
    again = replay(json.dumps(mid_record))
    assert again.snapshot() == mid_snapshot
    kept = len(mid_record["decisions"])
    assert kept <= middle
    assert [action for _, action in mid_record["decisions"]] == actions[:kept]
    for action in actions[kept:]:
        again.step(action)
    assert again.snapshot() == game.snapshot()


@pytest.mark.slow
def test_record_replays_when_a_row_locks_in_the_white_action():
    """The die of a row locked in the white action leaves play at once (rule 8); the record
    keeps the dice as rolled, and the replay must accept them."""
    for seed in range(300):
        game = qwixx_v0.raw_env(num_players=2)
        game.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while game.legal_actions():
            before = game.snapshot()
            game.step(random_legal_action(game.observe(game.agent_selection)["action_mask"], rng))
            after = game.snapshot()
            if after["phase"] == "color" and after["locked_rows"] != before["locked_rows"]:
                assert replay(game.record()).snapshot() == after
                return
    raise AssertionError("no row locked in a white action in 300 seeded games")


def test_record_of_an_unseeded_game_replays():
    game = qwixx_v0.raw_env(num_players=3, variant="longo")
    play_raw(game, seed=8)
    game.reset()  # continues the generator; the record carries its state
    play_raw(game, seed=None, policy_seed=4, reset=False)
    assert replay(game.record()).snapshot() == game.snapshot()


def test_replayed_game_continues_with_the_same_dice():
    game = qwixx_v0.raw_env(num_players=2)
    game.reset(seed=31)
    actions = []
    for _ in range(9):
        actions.append(game.legal_actions()[-1])
        game.step(actions[-1])
    record = game.record()
    copy = replay(record)
    for action in actions[len(record["decisions"]) :]:  # choices a mid-white-action record leaves out
        copy.step(action)
    while game.legal_actions():
        assert copy.legal_actions() == game.legal_actions()
        action = game.legal_actions()[0]
        game.step(action)
        copy.step(action)
        assert copy.snapshot() == game.snapshot()
    assert copy.record()["rolls"] == game.record()["rolls"]


# --- ObservationView reads the game back ----------------------------------------------------


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_observation_view_reads_back_the_snapshot(variant, num_players):
    game = qwixx_v0.raw_env(num_players=num_players, variant=variant)
    game.reset(seed=40 + num_players)
    rng = np.random.default_rng(num_players)
    checked = 0
    pending, at_roll = {}, game.snapshot()  # this roll's white choices; the sheets at the roll
    pass_action = 4 * CELLS[variant]
    while True:
        snap = game.snapshot()
        if snap["phase"] == "white" and snap["roll"] != at_roll["roll"]:
            pending, at_roll = {}, snap
        active = snap["active_player"]
        active_crossed = snap["phase"] == "color" and any(
            len(snap["players"][active]["marks"][c]) > len(at_roll["players"][active]["marks"][c])
            for c in COLORS
        )
        for seat, agent in enumerate(game.possible_agents):
            obs = game.observe(agent)
            view = ObservationView(obs, variant=variant, num_players=num_players)
            for rel in range(num_players):
                player = snap["players"][(seat + rel) % num_players]
                assert view.marks(rel) == player["marks"]
                assert view.penalties[rel] == player["penalties"]
                assert view.scores[rel] == player["score"]
                assert sorted(view.lucky_numbers[rel]) == sorted(player["lucky_numbers"])
                assert [c for c, locked in zip(COLORS, view.locks[rel]) if locked] == player["locks"]
            assert view.dice == snap["dice"]
            assert view.white_sum == sum(snap["dice"]["white"])
            assert [c for c, locked in zip(COLORS, view.locked_rows) if locked] == snap["locked_rows"]
            assert view.phase == snap["phase"]
            assert view.active_seat == (snap["active_player"] - seat) % num_players
            assert view.is_active == (snap["active_player"] == seat)
            assert view.active_crossed == active_crossed  # every seat sees it
            breaking_tie = snap["phase"] == "lucky" and agent == game.agent_selection
            own_choice = pending.get(seat) if breaking_tie and pending.get(seat) != pass_action else None
            assert view.pending_cross == own_choice
            expected_legal = game.legal_actions() if agent == game.agent_selection else []
            assert view.legal_actions.tolist() == expected_legal
            same = ObservationView(obs["observation"], variant=variant, num_players=num_players)
            assert same.marks(0) == view.marks(0)
            checked += 1
        if not game.legal_actions():
            break
        action = random_legal_action(game.observe(game.agent_selection)["action_mask"], rng)
        if snap["phase"] == "white":
            pending[game.agent_name_mapping[game.agent_selection]] = action
        game.step(action)
    assert snap["phase"] == "over" and checked > num_players * 10


# --- action numbering -----------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_action_decodes_to_its_printed_number_and_encodes_back(variant):
    K = CELLS[variant]
    rows = printed_rows(variant)
    for action in range(4 * K + 1):
        mark = decode_action(action, variant)
        if action == 4 * K:
            assert mark is None
        else:
            row, cell = divmod(action, K)
            assert mark == (COLORS[row], rows[row][cell])
        assert encode_action(mark, variant) == action
        assert decode_action(np.int64(action), variant) == mark


def test_encode_action_examples_from_the_docs():
    assert encode_action(("green", 9), "classic") == 2 * 11 + 3
    assert encode_action(None, "classic") == 44
    assert encode_action(None, "longo") == 60
    assert encode_action(("red", 16), "longo") == 14
    assert qwixx_env.get_variant("longo").num_actions == 61
