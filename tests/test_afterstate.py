"""The `afterstate` bot and afterstate inputs: the scratch features against the engine's own,
exact ratings of game-ending actions, the bot against its batched policy and the engine
state, clear errors, and PPO policies that read the inputs (export, numpy forward, config)."""

import json

import numpy as np
import pytest

from qwixx_env import QwixxVectorEnv, bots, qwixx_v0
from qwixx_env.bots.afterstate import (
    INPUT_SCALE,
    afterstate_chances,
    afterstate_gaps,
    afterstate_inputs,
    afterstate_policy,
)
from qwixx_env.bots.pretrained import CheckpointError, NumpyPolicy, write_policy
from qwixx_env.core import CLASSIC, encode_action, layout_for, rules
from qwixx_env.core.state import OVER, WHITE
from qwixx_env.nets import win_chance_network
from qwixx_env.policies.afterstate import action_values
from qwixx_env.policies.heuristic import FREQUENCY, ScratchSheet, _open_weights, weights_array
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.value import NUM_FEATURES, num_features, scratch_features, value_features

from conftest import play_game, position, random_layers, random_positions

COLORS = ("red", "yellow", "green", "blue")


def observation_of(st):
    """The observation and mask of the seat to decide in one-game state `st`."""
    obs = layout_for(CLASSIC, st.marks.shape[1]).encode(st, st.turn.astype(np.int64))[0]
    return {"observation": obs, "action_mask": rules.legal_mask(CLASSIC, st)[0].astype(np.int8)}


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_scratch_features_of_an_unchanged_sheet_are_the_engines_value_features(num_players):
    """With nothing crossed on the scratch sheet, the afterstate features equal
    `value_features` of the same position (the leaf network's inputs), for every seat."""
    hw = weights_array()
    open_w = np.zeros((4, CLASSIC.cells + 1))
    _open_weights(CLASSIC.tables, hw[FREQUENCY], open_w)
    checked = 0
    for engine, b in random_positions(16, 40, num_players=num_players):
        st = engine.state
        if st.phase[b] != WHITE or st.turn[b] != st.active[b]:
            continue  # a roll start
        for s in range(num_players):
            want = np.zeros(num_features(num_players))
            value_features(st, CLASSIC.tables, b, s, hw, want, new_scratch(CLASSIC, num_players))
            got = np.zeros(num_features(num_players))
            mk = st.marks[b, s].astype(np.int64)
            lk = st.locks[b, s].copy()
            closed = st.locks[b].any(axis=0)
            sheet = ScratchSheet(mk, lk, closed, np.zeros(4, np.bool_), open_w)
            scratch_features(st, CLASSIC.tables, b, s, sheet, np.int64(st.penalties[b, s]), st.active[b], hw, got)
            np.testing.assert_allclose(got, want, atol=1e-12)
            checked += 1
    assert checked > 100


def test_feature_lengths_keep_the_two_player_layout():
    assert num_features(2) == NUM_FEATURES == 36
    assert [num_features(p) for p in (3, 4, 5)] == [52, 67, 82]


def test_value_features_at_three_players_read_own_sheet_then_the_others_in_seat_order():
    """Seat 1 of a hand-set 3-player position: its own sheet, then seat 2's, then seat 0's
    (share crossed, rightmost cell, lock per row; penalties; score), the locked rows, who rolls
    (one bit per seat from seat 1 on), the heuristic's evaluation, the margin, 1."""
    from qwixx_env.policies.heuristic import position_value

    st = position(CLASSIC, [
        {"red": [2, 3], "penalties": 1},    # seat 0: 3 - 5 = -2 points
        {"green": [12, 11, 10]},            # seat 1: 6 points
        {"yellow": [5], "blue": [12, 9]},   # seat 2: 1 + 3 = 4 points
    ], (1, 2, 3, 4, 5, 6), active=2)
    x = np.zeros(num_features(3))
    value_features(st, CLASSIC.tables, 0, 1, weights_array(), x, new_scratch(CLASSIC, 3))
    K = 11
    def sheet(rows, penalties, points):  # rows: colour -> (crossed, rightmost cell index)
        out = []
        for c in COLORS:
            n, right = rows.get(c, (0, -1))
            out += [n / K, (right + 1) / K, 0.0]
        return out + [penalties / 4, points / 100]
    want = (
        sheet({"green": (3, 2)}, 0, 6)
        + sheet({"yellow": (1, 3), "blue": (2, 3)}, 0, 4)
        + sheet({"red": (2, 1)}, 1, -2)
        + [0.0] * 4
        + [0.0, 1.0, 0.0]
        + [
            position_value(st, CLASSIC.tables, 0, 1, weights_array(), new_scratch(CLASSIC, 3)) / 100,
            (6 - 4) / 50,
            1.0,
        ]
    )
    np.testing.assert_allclose(x, want, atol=1e-12)


@pytest.mark.parametrize("others, share", [((56, 0), 0.5), ((56, 56), 1 / 3), ((55, 0), 1.0), ((58, 0), 0.0)])
def test_a_game_ending_action_at_three_players_is_rated_by_its_share_of_the_win(others, share):
    """Seat 0 (not rolling) locks yellow with white 6 + 6, the second locked row: it ends the
    game with 56 points. Against 56 and 0 it shares the win with one seat (1/2), against 56
    and 56 with two (1/3); alone on top it wins (1), below it loses (0)."""
    def sheet(points):  # green from 12 down: 10 crosses = 55; blue 12: 1 more, 12 and 11: 3
        green = [12, 11, 10, 9, 8, 7, 6, 5, 4, 3][: 10 if points >= 55 else 0]
        blue = {0: [], 55: [], 56: [12], 58: [12, 11]}[points]
        return {"green": green, "blue": blue}

    st = position(
        CLASSIC,
        [
            {"red": [2, 3, 4, 5, 6, 12], "yellow": [2, 3, 4, 5, 6], "locks": ["red"]},
            sheet(others[0]),
            sheet(others[1]),
        ],
        (6, 6, 1, 2, 3, 4),
        active=1,
        turn=0,
    )
    assert [int(v) for v in rules.scores(CLASSIC, st)[0]] == [28 + 15, *others]  # before the lock
    values = np.zeros(45)
    net = win_chance_network("afterstate", "classic", 3)
    action_values(st, CLASSIC.tables, 0, rules.legal_mask(CLASSIC, st)[0], weights_array(), net, values,
                  new_scratch(CLASSIC, 3, net))
    assert values[encode_action(("yellow", 12), CLASSIC)] == pytest.approx(share, abs=1e-12)


def test_an_action_that_ends_the_game_is_rated_exactly():
    """Seat 0 leads with red locked; white 6 + 6 locks yellow and ends the game: rated 1.0.
    The trailing seat's own lock (if it had one) would be rated 0."""
    st = position(
        CLASSIC,
        [{"red": [2, 3, 4, 5, 6, 12], "yellow": [2, 3, 4, 5, 6], "locks": ["red"]},
         {"red": [2], "green": [12]}],
        (6, 6, 1, 2, 3, 4), active=1, turn=0,
    )
    mask = rules.legal_mask(CLASSIC, st)[0]
    values = np.zeros(45)
    net = win_chance_network("afterstate", "classic", 2)
    action_values(st, CLASSIC.tables, 0, mask, weights_array(), net, values, new_scratch(CLASSIC, 2, net))
    lock_yellow = encode_action(("yellow", 12), CLASSIC)
    assert values[lock_yellow] == 1.0
    assert 0 < values[CLASSIC.pass_action] < 1.0
    assert bots.make("afterstate").act(observation_of(st)) == lock_yellow
    # The same roll when behind (the other seat has crossed far more): the lock would end the
    # game lost, exactly 0.
    behind = position(
        CLASSIC,
        [{"red": [2, 3, 4, 5, 6, 12], "yellow": [2, 3, 4, 5, 6], "locks": ["red"]},
         {"green": [12, 11, 10, 9, 8, 7, 6, 5], "blue": [12, 11, 10, 9, 8, 7, 6, 5]}],
        (6, 6, 1, 2, 3, 4), active=1, turn=0,
    )
    action_values(
        behind,
        CLASSIC.tables,
        0,
        rules.legal_mask(CLASSIC, behind)[0],
        weights_array(),
        net,
        values,
        new_scratch(CLASSIC, 2, net),
    )
    assert values[lock_yellow] == 0.0
    assert bots.make("afterstate").act(observation_of(behind)) != lock_yellow


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_bot_policy_and_inputs_agree_and_pick_legal_actions(num_players):
    """Over AEC games the bot's action is legal and is the batched policy's, and the inputs
    mark it with 0 (the best) and illegal actions with -1."""
    env = qwixx_v0.env(num_players=num_players)
    bot = bots.make("afterstate", num_players=num_players)
    for seed in range(3):
        for obs, action in play_game(env, bot, seed=seed):
            assert obs["action_mask"][action]
            batch, mask = obs["observation"][None], obs["action_mask"][None]
            assert afterstate_policy(batch, mask, num_players=num_players)[0] == action
            gaps = afterstate_inputs(batch, num_players=num_players)[0]
            assert gaps[action] == 0.0
            assert (gaps[mask[0] == 0] == -1.0).all()
            assert ((gaps >= -1.0) & (gaps <= 0.0)).all()


def test_gaps_scale_clip_and_handle_rows_without_a_legal_action():
    chances = np.array([[0.50, -1.0, 0.49, 0.30, 0.0], [-1.0, -1.0, -1.0, -1.0, -1.0]])
    gaps = afterstate_gaps(chances)
    np.testing.assert_allclose(gaps[0], [0.0, -1.0, -INPUT_SCALE * 0.01, -1.0, -1.0], atol=1e-6)
    assert (gaps[1] == -1.0).all()
    assert gaps.dtype == np.float32


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_chances_of_the_observation_equal_those_of_the_engine_state(num_players):
    """The rebuilt state (observer as seat 0) rates every action as the true state does."""
    net, hw = win_chance_network("afterstate", "classic", num_players), weights_array()
    engine_values = np.zeros(45)
    ws = new_scratch(CLASSIC, num_players, net)
    rows, want = [], []
    for engine, b in random_positions(8, 30, seed=3, num_players=num_players):
        action_values(engine.state, CLASSIC.tables, b, engine.masks[b], hw, net, engine_values, ws)
        rows.append(engine.obs[b].copy())
        want.append(np.where(engine.masks[b] == 1, engine_values, -1.0))
    np.testing.assert_allclose(afterstate_chances(np.array(rows), num_players=num_players), np.array(want),
                               atol=1e-12)


def test_chances_do_not_depend_on_what_was_rated_before():
    """`afterstate_chances` keeps its work arrays between calls (one set per thread and
    table): a batch rates the same after other batches, and in another thread, as at first."""
    import threading

    rows = [engine.obs[b].copy() for engine, b in random_positions(6, 30, seed=5, num_players=2)]
    first, other = np.array(rows[::2]), np.array(rows[1::2])
    fresh = {}
    thread = threading.Thread(target=lambda: fresh.update(chances=afterstate_chances(first)))
    thread.start()
    thread.join()
    before = afterstate_chances(first)
    afterstate_chances(other)
    afterstate_chances(np.repeat(other[:1], 3, axis=0))
    np.testing.assert_array_equal(afterstate_chances(first), before)
    np.testing.assert_array_equal(fresh["chances"], before)
    assert (before >= 0).any(axis=1).all()
    # one set of work arrays per thread: the same object again here, another in a new thread
    from qwixx_env.nets.heuristic import work_arrays as _work_arrays

    net = win_chance_network("afterstate", "classic", 2)
    mine, theirs = _work_arrays(CLASSIC, 2, net), []
    assert _work_arrays(CLASSIC, 2, net) is mine
    thread = threading.Thread(target=lambda: theirs.append(_work_arrays(CLASSIC, 2, net)))
    thread.start()
    thread.join()
    assert all(a is not b for a, b in zip(mine, theirs[0]))


@pytest.mark.parametrize("kwargs", [dict(num_players=5), dict(variant="longo"), dict(num_players=1)])
def test_other_tables_are_refused_by_name(kwargs):
    with pytest.raises(
        ValueError,
        match=r"afterstate: got variant=.*a win-chance network is trained for "
        r"classic with 2 players, classic with 3 players, classic with 4 players "
        r"only",
    ):
        bots.make("afterstate", **kwargs)


def test_inputs_of_a_wrong_shape_are_refused():
    with pytest.raises(ValueError, match=r"observations: got shape \(3, 10\); expected \(n, 198\)"):
        afterstate_inputs(np.zeros((3, 10), np.float32))


@pytest.mark.slow
def test_afterstate_beats_heuristic_head_to_head():
    """Same dice, seats swapped: over 400 games the learned ratings win more than half."""
    from qwixx_env.arena import run_arena

    result = run_arena(["afterstate", "heuristic"], num_players=2, games=200, seed=11, workers=1)
    assert result.bots[0]["label"] == "afterstate"
    assert result.bots[0]["win_rate"] > 0.5


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [3, 4])
def test_afterstate_wins_more_than_its_share_against_heuristics(num_players):
    """Its seat in turn, 1,500 games against P - 1 heuristics: more than 1/P of the wins, by
    two standard errors."""
    from qwixx_env.training.afterstate import match

    rate, se = match(win_chance_network("afterstate", "classic", num_players), 1500, 5, threads=1,
                     num_players=num_players)
    assert rate > 1 / num_players + 2 * se


# --- policies that read the inputs ------------------------------------------------------------


def test_a_checkpoint_with_afterstate_inputs_computes_them_itself(tmp_path):
    rng = np.random.default_rng(0)
    D, A = 198, 45
    path = write_policy(tmp_path / "p", policy=random_layers([D + A, 8, A], "tanh", rng),
                        value=random_layers([D + A, 8, 1], "tanh", rng),
                        variant="classic", num_players=2, meta={}, inputs=["afterstate"])
    assert json.loads(path.read_text())["inputs"] == ["afterstate"]
    policy = NumpyPolicy.load(path)
    env = QwixxVectorEnv(16, opponents="heuristic")
    obs, _ = env.reset(seed=0)
    x = np.hstack([obs["observation"], afterstate_inputs(obs["observation"])])
    h = np.tanh(x @ policy._nets["policy"][0][0].T + policy._nets["policy"][0][1])
    want = h @ policy._nets["policy"][1][0].T + policy._nets["policy"][1][1]
    np.testing.assert_allclose(policy.logits(obs["observation"]), want, atol=1e-5)
    assert obs["action_mask"][np.arange(16), policy(obs["observation"], obs["action_mask"])].all()


@pytest.mark.parametrize(
    "change, message",
    [
        (
            dict(inputs=["dice"]),
            r"inputs: got \['dice'\]; expected a list of distinct names from \['afterstate', 'heuristic'\]",
        ),
        (dict(inputs="afterstate"), r"inputs: got 'afterstate'; expected a list"),
        (dict(inputs=[]), r"networks.policy\[0\].in: got 243; the observation has 198"),
    ],
)
def test_wrong_inputs_are_refused_by_name(tmp_path, change, message):
    rng = np.random.default_rng(0)
    path = write_policy(tmp_path / "p", policy=random_layers([243, 8, 45], "tanh", rng),
                        value=random_layers([243, 8, 1], "tanh", rng),
                        variant="classic", num_players=2, meta={}, inputs=["afterstate"])
    spec = json.loads(path.read_text())
    spec.update(change)
    path.write_text(json.dumps(spec))
    with pytest.raises(CheckpointError, match=message):
        NumpyPolicy.load(path)


def test_afterstate_inputs_need_a_table_with_a_network(tmp_path):
    rng = np.random.default_rng(0)
    D = layout_for("classic", 5).size
    with pytest.raises(
        ValueError,
        match=r"inputs: 'afterstate' is for classic with 2 players, classic with 3 "
        r"players, classic with 4 players; got classic with 5",
    ):
        write_policy(tmp_path / "p", policy=random_layers([D + 45, 8, 45], "tanh", rng),
                     value=random_layers([D + 45, 8, 1], "tanh", rng),
                     variant="classic", num_players=5, meta={}, inputs=["afterstate"])


@pytest.mark.parametrize("num_players", [2, 3])
def test_a_reused_scratch_gives_the_same_ratings_and_decisions_as_a_fresh_one(num_players):
    """The look-ahead kernels write into the caller's `Scratch` instead of allocating; nothing
    left in it by an earlier decision (here: garbage in every array) changes the next one."""
    from qwixx_env.policies.heuristic import heuristic_action

    net, hw = win_chance_network("afterstate", "classic", num_players), weights_array()
    dirty = new_scratch(CLASSIC, num_players, net)
    fresh_values, dirty_values = np.zeros(45), np.zeros(45)
    checked = 0
    for engine, b in random_positions(6, 30, seed=5, num_players=num_players):
        st, tb, mask = engine.state, CLASSIC.tables, engine.masks[b]
        if st.phase[b] == OVER:
            continue
        for array in dirty:
            array[...] = 7 if array.dtype != np.bool_ else True
        action_values(st, tb, b, mask, hw, net, fresh_values, new_scratch(CLASSIC, num_players, net))
        action_values(st, tb, b, mask, hw, net, dirty_values, dirty)
        np.testing.assert_array_equal(dirty_values, fresh_values)
        for array in dirty:
            array[...] = 7 if array.dtype != np.bool_ else True
        assert heuristic_action(st, tb, b, mask, hw, dirty) == heuristic_action(
            st, tb, b, mask, hw, new_scratch(CLASSIC, num_players))
        checked += 1
    assert checked > 100
