"""The decided rules (RULES.md), one named test per rule, on hand-set sheets and dice.

`test_ruleN_*` are the Qwixx rules (run for both variants where the rule applies);
`test_longo_ruleN_*` are the Qwixx Longo rules. Sheets are drawn in comments as

    red     [2][3] 4  5 ...      [n] is crossed, L is the lock

and dice are written (white, white, red, yellow, green, blue), None for a die out of play.
"""

from __future__ import annotations

import numpy as np
import pytest

from qwixx_env import ObservationView
from qwixx_env.core import (
    CLASSIC,
    COLOR,
    COLORS,
    LONGO,
    LUCKY,
    OVER,
    WHITE,
    decode_action,
    encode_action,
    get_variant,
    layout_for,
    new_state,
    rules,
    seed_to_rng,
    snapshot,
    state_from_snapshot,
)
from qwixx_env.envs import qwixx_v0

from conftest import position

INSTEAD = get_variant("longo", lucky="instead")
BOTH = pytest.mark.parametrize("v", [CLASSIC, LONGO], ids=["classic", "longo"])
PASS = None


# --- fixtures: they build positions and drive them; the tests assert -----------------------


def legal(v, st):
    """The legal decisions of the seat to decide, as marks (None is pass)."""
    return {decode_action(int(a), v) for a in np.flatnonzero(rules.legal_mask(v, st)[0])}


def play(v, st, *marks):
    """Apply decisions in turn. Refuses an illegal one, so a test cannot step off the rules."""
    for mark in marks:
        action = encode_action(mark, v)
        if not rules.legal_mask(v, st)[0, action]:
            raise ValueError(f"{mark} is not legal for seat {st.turn[0]}; legal: {legal(v, st)}")
        rules.apply(v, st, np.array([action]))


def crosses(v, st, seat):
    """A seat's committed crosses, non-empty rows only, in sheet order."""
    return {c: n for c, n in snapshot(v, st)["players"][seat]["marks"].items() if n}


def first(v, color, n):
    """The first n numbers of a row as printed (what a sheet crossed from the left shows)."""
    return list(v.row_numbers[COLORS.index(color)][:n])


def whites(v, total):
    """Two white dice that sum to `total`."""
    high = min(v.faces, total - 1)
    return (high, total - high)


def lock_cell(v, color):
    """The (first) lock cell of a row: 12 / 2 in classic, 15 / 3 in Longo."""
    return v.lock_numbers[COLORS.index(color)][0]


def observations(v, st):
    """Every seat's observation vector of the current state."""
    layout = layout_for(v, st.num_players)
    return [layout.encode(st, np.array([s]))[0].copy() for s in range(st.num_players)]


def start(v, num_players, seed):
    """A fresh game through the core, as `rules.reset` starts it."""
    st = new_state(num_players)
    st.rng[0] = seed_to_rng(seed)
    rules.reset(v, st)
    return st


# --- Qwixx ----------------------------------------------------------------------------------


def test_rule1_one_to_five_players():
    for num_players in range(1, 6):
        env = qwixx_v0.raw_env(num_players=num_players)
        env.reset(seed=0)
        assert env.snapshot()["num_players"] == num_players
    for num_players in (0, 6):
        with pytest.raises(ValueError, match="num_players"):
            qwixx_v0.raw_env(num_players=num_players)


@BOTH
def test_rule1_solo_player_is_the_active_player_on_every_roll(v):
    st = start(v, 1, seed=1)
    st.lucky_numbers[0] = (15, 16)  # Longo: no lucky cross on the white sums set below
    for roll in range(4):
        st.dice[0, :2] = (1, 2)
        assert (st.roll[0], st.active[0], st.turn[0], st.phase[0]) == (roll, 0, 0, WHITE)
        play(v, st, PASS)
        assert (st.active[0], st.turn[0], st.phase[0]) == (0, 0, COLOR)
        play(v, st, PASS)
    # Crossing nothing on four rolls as the active player: four penalties end the solo game.
    assert st.penalties[0, 0] == 4 and st.phase[0] == OVER


@BOTH
def test_rule1_first_active_player_is_seat_0_by_default(v):
    for seed in range(5):
        env = qwixx_v0.raw_env(num_players=3, variant=v.name)
        env.reset(seed=seed)
        assert env.snapshot()["active_player"] == 0
        assert env.agent_selection == "player_0"


@BOTH
def test_rule1_random_start_player_is_seeded(v):
    def first_active(seed):
        env = qwixx_v0.raw_env(num_players=5, variant=v.name, start_player="random")
        env.reset(seed=seed)
        seat = env.snapshot()["active_player"]
        assert env.agent_selection == f"player_{seat}"  # the first active player decides first
        return seat

    starts = [first_active(seed) for seed in range(30)]
    assert starts == [first_active(seed) for seed in range(30)]  # same seed, same start
    assert len(set(starts)) >= 3  # and it really is drawn


def rolled_faces(v):
    """The faces each of the six dice shows over 3000 fresh games."""
    st = new_state(2, batch_size=3000)
    st.rng[:] = [seed_to_rng(i) for i in range(3000)]
    rules.reset(v, st)
    return [sorted(set(st.dice[:, die].tolist())) for die in range(6)]


def test_rule2_dice_two_white_and_four_coloured_six_sided():
    assert rolled_faces(CLASSIC) == [[1, 2, 3, 4, 5, 6]] * 6


@pytest.mark.parametrize(("variant", "players", "most"), [("classic", 2, 4 * 11 * 2 + 3 * 2 + 1),
                                                       ("longo", 5, 4 * 15 * 5 + 3 * 5 + 1)])
def test_a_game_lasts_at_most_every_cell_crossed_and_every_penalty_taken(variant, players, most):
    """Each roll the active seat crosses or takes a penalty; the bound the OpenSpiel game and the
    BenchMARL task give their length from."""
    assert get_variant(variant).max_rolls(players) == most


def test_rule3_sheet_four_rows_of_eleven_with_a_lock_and_four_penalty_boxes():
    up = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    assert [list(row) for row in CLASSIC.row_numbers] == [up, up, up[::-1], up[::-1]]
    assert CLASSIC.lock_numbers == ((12,), (12,), (2,), (2,))
    assert CLASSIC.max_penalties == 4
    # Actions follow the sheet: red 2 .. red 12, yellow 2 .. 12, green 12 .. 2, blue 12 .. 2, pass.
    marks = [decode_action(a, CLASSIC) for a in range(CLASSIC.num_actions)]
    assert marks == [(c, n) for c, row in zip(COLORS, (up, up, up[::-1], up[::-1])) for n in row] + [None]


@BOTH
def test_rule4_cross_only_right_of_every_cross_and_skipped_numbers_are_lost(v):
    # Solo, white sum 7:
    #   red     [2] 3  4 [5] 6  7  8 ...        7 lies right of 5: legal
    #   yellow   2  3  4  5  6  7 [8] ...       7 lies left of 8: lost
    #   green   [12] 11 10 [9] 8  7  6 ...      7 lies right of 9: legal
    #   blue     12 11 10  9  8  7 [6] ...      7 lies left of 6: lost
    sheet = {"red": [2, 5], "yellow": [8], "green": [12, 9], "blue": [6]}
    st = position(v, [sheet], dice=(3, 4, 3, 1, 1, 1))
    assert legal(v, st) == {("red", 7), ("green", 7), PASS}

    # Crossing red 7 skips red 6 for good; the colour dice offer red 6 (3+3) and red 7 (4+3).
    play(v, st, ("red", 7))
    assert crosses(v, st, 0)["red"] == [2, 5, 7]
    assert legal(v, st) == {("green", 4), ("green", 5), ("blue", 4), ("blue", 5), PASS}


@pytest.mark.parametrize("v, threshold, score", [(CLASSIC, 5, 28), (LONGO, 6, 36)], ids=["classic", "longo"])
def test_rule5_lock_cell_needs_enough_crosses_and_crosses_the_lock(v, threshold, score):
    assert v.lock_threshold == threshold
    lock = lock_cell(v, "red")  # red 12 (classic), red 15 (Longo)
    dice = whites(v, lock) + (1, 1, 1, 1)
    # One cross short (classic: red [2][3][4][5] 6 ... 12 L): the lock cell is not legal.
    short = position(v, [{"red": first(v, "red", threshold - 1)}], dice)
    assert legal(v, short) == {("green", lock), ("blue", lock), PASS}

    # Enough crosses (classic: red [2][3][4][5][6] 7 ... 12 L): legal, and it locks the row.
    st = position(v, [{"red": first(v, "red", threshold)}], dice)
    assert legal(v, st) == {("red", lock), ("green", lock), ("blue", lock), PASS}
    play(v, st, ("red", lock))
    snap = snapshot(v, st)
    assert snap["players"][0]["marks"]["red"] == first(v, "red", threshold) + [lock]
    assert snap["players"][0]["locks"] == ["red"]
    assert snap["locked_rows"] == ["red"]
    # threshold crosses + the lock cell + the lock itself
    assert snap["players"][0]["score"] == score == v.score_table[threshold + 2]


@BOTH
def test_rule6_every_player_may_cross_the_white_sum(v):
    # Three players, seat 1 active, white sum 8.
    #   seat 0: red [2][3] ...          seat 2: green [12] ... [6] ...  (8 lost in green)
    sheets = [{"red": [2, 3]}, {}, {"green": [12, 6]}]
    st = position(v, sheets, dice=(3, 5, 1, 1, 1, 1), active=1)
    everywhere = {("red", 8), ("yellow", 8), ("green", 8), ("blue", 8), PASS}
    assert st.turn[0] == 1 and legal(v, st) == everywhere
    play(v, st, ("yellow", 8))
    assert st.turn[0] == 2 and legal(v, st) == everywhere - {("green", 8)}
    play(v, st, ("blue", 8))
    assert st.turn[0] == 0 and legal(v, st) == everywhere
    play(v, st, ("red", 8))
    assert [crosses(v, st, s) for s in range(3)] == [
        {"red": [2, 3, 8]},
        {"yellow": [8]},
        {"green": [12, 6], "blue": [8]},
    ]
    assert (st.phase[0], st.turn[0]) == (COLOR, 1)


@BOTH
def test_rule6_white_action_is_judged_against_the_sheets_at_the_roll(v):
    # Both seats: red crossed up to the lock threshold; white sum = red's lock cell.
    # Seat 0 locks red first, yet seat 1 may still cross red's lock cell in the same action.
    lock = lock_cell(v, "red")
    ready = {"red": first(v, "red", v.lock_threshold)}
    st = position(v, [ready, ready], dice=whites(v, lock) + (1, 1, 1, 1))
    play(v, st, ("red", lock))
    assert st.turn[0] == 1 and st.phase[0] == WHITE
    assert ("red", lock) in legal(v, st)


@BOTH
def test_rule6_white_choices_stay_hidden_until_every_seat_has_decided(v):
    lock = lock_cell(v, "red")
    ready = {"red": first(v, "red", v.lock_threshold)}
    st = position(v, [ready, {}, {}], dice=whites(v, lock) + (1, 1, 1, 1))
    snap_at_roll, obs_at_roll = snapshot(v, st), observations(v, st)

    play(v, st, ("red", lock))  # seat 0 locks red ...
    assert snapshot(v, st) == snap_at_roll  # ... invisible in the snapshot
    for seen, before in zip(observations(v, st), obs_at_roll):
        np.testing.assert_array_equal(seen, before)  # ... and in every seat's observation
    play(v, st, PASS)
    assert snapshot(v, st) == snap_at_roll

    play(v, st, PASS)  # the last seat decides: every choice takes effect together
    snap = snapshot(v, st)
    assert snap["players"][0]["marks"]["red"] == ready["red"] + [lock]
    assert snap["locked_rows"] == ["red"]
    assert snap["phase"] == "color"


@BOTH
def test_rule6_two_players_lock_the_same_row_and_both_get_the_lock_cross(v):
    # Classic:  seat 0 and seat 1   red [2][3][4][5][6] 7 ... 12 L,   white dice 6 + 6
    lock = lock_cell(v, "red")
    ready = {"red": first(v, "red", v.lock_threshold)}
    st = position(v, [ready, ready], dice=whites(v, lock) + (1, 1, 1, 1))
    play(v, st, ("red", lock), ("red", lock))
    snap = snapshot(v, st)
    for seat in (0, 1):
        player = snap["players"][seat]
        assert player["marks"]["red"] == ready["red"] + [lock]
        assert player["locks"] == ["red"]
        assert player["score"] == v.score_table[v.lock_threshold + 2]
    assert snap["locked_rows"] == ["red"]
    assert snap["phase"] == "color"  # one locked row: the game goes on


@BOTH
def test_rule6_two_rows_lock_in_one_white_action(v):
    # Seat 0 locks red, seat 1 locks yellow, with the same white sum: two rows end the game.
    lock = lock_cell(v, "red")
    st = position(
        v,
        [{"red": first(v, "red", v.lock_threshold)}, {"yellow": first(v, "yellow", v.lock_threshold)}],
        dice=whites(v, lock) + (1, 1, 1, 1),
    )
    play(v, st, ("red", lock), ("yellow", lock))
    snap = snapshot(v, st)
    assert snap["locked_rows"] == ["red", "yellow"]
    assert [p["locks"] for p in snap["players"]] == [["red"], ["yellow"]]
    assert snap["phase"] == "over"


@BOTH
def test_rule6_a_third_locked_row_in_the_same_white_action(v):
    # Blue is already locked (by seat 2). In one white action seats 0 and 1 lock red and
    # seat 2 locks yellow: every lock cross counts and all three rows are locked.
    lock = lock_cell(v, "red")
    t = v.lock_threshold
    blue_locked = first(v, "blue", t) + [lock_cell(v, "blue")]
    sheets = [
        {"red": first(v, "red", t)},
        {"red": first(v, "red", t)},
        {"yellow": first(v, "yellow", t), "blue": blue_locked, "locks": ["blue"]},
    ]
    st = position(v, sheets, dice=whites(v, lock) + (1, 1, 1, None))
    play(v, st, ("red", lock), ("red", lock), ("yellow", lock))
    snap = snapshot(v, st)
    assert snap["locked_rows"] == ["red", "yellow", "blue"]
    assert [p["locks"] for p in snap["players"]] == [["red"], ["red"], ["yellow", "blue"]]
    assert snap["phase"] == "over"
    assert list(rules.scores(v, st)[0]) == [v.score_table[t + 2]] * 2 + [2 * v.score_table[t + 2]]


@BOTH
def test_rule6_two_rows_lock_on_one_roll_white_then_colour(v):
    # White action: seat 1 locks red. Colour action: the active seat 0 locks yellow with
    # a white die + the yellow die. The second lock ends the game.
    lock = lock_cell(v, "yellow")
    w1, w2 = whites(v, lock)
    t = v.lock_threshold
    st = position(
        v,
        [{"yellow": first(v, "yellow", t)}, {"red": first(v, "red", t)}],
        dice=(w1, w2, 1, w1, 1, 1),  # w2 + yellow die = the yellow lock cell
    )
    play(v, st, PASS, ("red", lock))
    assert snapshot(v, st)["locked_rows"] == ["red"] and st.phase[0] == COLOR
    play(v, st, ("yellow", lock))
    snap = snapshot(v, st)
    assert snap["locked_rows"] == ["red", "yellow"]
    assert snap["phase"] == "over"


@BOTH
def test_rule6_colour_cross_must_lie_right_of_the_own_white_cross(v):
    # White dice 3 + 6 = 9; red die 4 gives red 7 (3+4) or red 10 (6+4).
    st = position(v, [{}, {}], dice=(3, 6, 4, 1, 1, 1))
    others = {("yellow", 4), ("yellow", 7), ("green", 4), ("green", 7), ("blue", 4), ("blue", 7), PASS}

    passed = st.clone()
    play(v, passed, PASS, PASS)
    assert legal(v, passed) == others | {("red", 7), ("red", 10)}

    # Having crossed red 9 in the white action, red 7 is left of it: only red 10 remains.
    play(v, st, ("red", 9), PASS)
    assert legal(v, st) == others | {("red", 10)}
    play(v, st, ("red", 10))
    assert crosses(v, st, 0) == {"red": [9, 10]}


@BOTH
def test_rule6_colour_action_is_the_active_players_alone(v):
    # Seat 1 active. Dice (1, 4 | red 2, yellow 5, green 3, blue 6): colour sums only.
    st = position(v, [{}, {}], dice=(1, 4, 2, 5, 3, 6), active=1)
    play(v, st, PASS, PASS)
    assert (st.phase[0], st.turn[0]) == (COLOR, 1)
    assert legal(v, st) == {
        ("red", 3), ("red", 6), ("yellow", 6), ("yellow", 9),
        ("green", 4), ("green", 7), ("blue", 7), ("blue", 10), PASS,
    }
    play(v, st, ("blue", 10))
    assert crosses(v, st, 1) == {"blue": [10]} and crosses(v, st, 0) == {}


@BOTH
def test_rule6_dice_of_rows_locked_in_the_white_action_leave_play(v):
    # Seat 1 locks red in the white action; the red die is out of the colour action at once
    # and is not rolled again.
    lock = lock_cell(v, "red")
    w1, w2 = whites(v, lock)
    t = v.lock_threshold
    st = position(v, [{}, {"red": first(v, "red", t)}], dice=(w1, w2, 1, 1, 1, 1))
    play(v, st, PASS, ("red", lock))
    assert st.phase[0] == COLOR
    assert snapshot(v, st)["dice"]["red"] is None and st.dice[0, 2] == 0
    assert not any(mark and mark[0] == "red" for mark in legal(v, st))
    play(v, st, PASS)  # next roll
    for _ in range(3):
        assert st.phase[0] == WHITE
        assert st.dice[0, 2] == 0 and snapshot(v, st)["dice"]["red"] is None
        others = st.dice[0, [0, 1, 3, 4, 5]]
        assert ((1 <= others) & (others <= v.faces)).all()
        play(v, st, *[PASS] * 3)


@BOTH
def test_rule8_a_row_locked_by_the_last_colour_cross_shows_its_die_out_of_play(v):
    # Seat 1 locks red in the white action; the active seat 0 then locks yellow with white
    # die w2 + the yellow die, the second lock, which ends the game: no roll follows, and
    # the yellow die is out of play (null) in the final snapshot as the red one is (classic):
    #   seat 0  yellow  x x x x x . . . . . [ ]   <- yellow lock with w2 + yellow die
    #   seat 1  red     x x x x x . . . . . [ ]   <- red lock with the white sum
    lock = lock_cell(v, "yellow")
    w1, w2 = whites(v, lock)
    t = v.lock_threshold
    st = position(v, [{"yellow": first(v, "yellow", t)}, {"red": first(v, "red", t)}], dice=(w1, w2, 1, w1, 1, 1))
    play(v, st, PASS, ("red", lock), ("yellow", lock))
    snap = snapshot(v, st)
    assert snap["phase"] == "over" and snap["locked_rows"] == ["red", "yellow"]
    assert snap["dice"] == {"white": [w1, w2], "red": None, "yellow": None, "green": 1, "blue": 1}


@BOTH
def test_rule7_active_player_who_chooses_to_cross_nothing_takes_a_penalty(v):
    st = position(v, [{}, {}], dice=(1, 2, 3, 3, 3, 3))
    assert legal(v, st) != {PASS}  # crosses were there to take
    play(v, st, PASS, PASS)
    assert legal(v, st) != {PASS}
    play(v, st, PASS)
    assert list(st.penalties[0]) == [1, 0]


@BOTH
def test_rule7_active_player_who_cannot_cross_takes_a_penalty(v):
    # White sum 7, colour sums 6 and 7:
    #   red    ... 10 [11] 12       yellow ... 10 [11] 12
    #   green  ... 5 [4] 3 2        blue   ... 5 [4] 3 2       nothing legal anywhere
    stuck = {"red": [11], "yellow": [11], "green": [4], "blue": [4]}
    st = position(v, [stuck, {}], dice=(3, 4, 3, 3, 3, 3))
    assert legal(v, st) == {PASS}
    play(v, st, PASS, PASS)
    assert legal(v, st) == {PASS}
    play(v, st, PASS)
    assert list(st.penalties[0]) == [1, 0]


@BOTH
def test_rule7_other_players_never_take_penalties(v):
    # Seat 1 has three penalties and crosses nothing; a fourth would end the game.
    st = position(v, [{}, {"penalties": 3}, {}], dice=(1, 2, 3, 3, 3, 3))
    play(v, st, ("red", 3), PASS, PASS, PASS)
    assert list(st.penalties[0]) == [0, 3, 0]
    assert st.phase[0] == WHITE and st.active[0] == 1


@BOTH
def test_rule7_a_white_cross_by_the_active_player_avoids_the_penalty(v):
    st = position(v, [{}, {}], dice=(1, 2, 3, 3, 3, 3))
    play(v, st, ("red", 3), PASS, PASS)
    assert list(st.penalties[0]) == [0, 0]


@BOTH
def test_rule7_a_colour_cross_by_the_active_player_avoids_the_penalty(v):
    st = position(v, [{}, {}], dice=(1, 2, 3, 3, 3, 3))
    play(v, st, PASS, PASS, ("yellow", 5))
    assert list(st.penalties[0]) == [0, 0]


@BOTH
def test_rule8_a_locked_row_is_closed_for_every_player(v):
    # Seat 1 locked red earlier; seat 0 has red [2] and the white sum is 7; its red die is out.
    t = v.lock_threshold
    red_locked = first(v, "red", t) + [lock_cell(v, "red")]
    st = position(v, [{"red": [2]}, {"red": red_locked, "locks": ["red"]}], dice=(3, 4, None, 1, 1, 1))
    assert legal(v, st) == {("yellow", 7), ("green", 7), ("blue", 7), PASS}
    play(v, st, PASS)
    assert legal(v, st) == {("yellow", 7), ("green", 7), ("blue", 7), PASS}
    play(v, st, PASS)
    assert legal(v, st) == {
        ("yellow", 4), ("yellow", 5), ("green", 4), ("green", 5), ("blue", 4), ("blue", 5), PASS,
    }
    play(v, st, PASS)  # the next roll leaves the red die out
    assert st.dice[0, 2] == 0 and snapshot(v, st)["dice"]["red"] is None


@BOTH
def test_rule8_a_row_locked_in_the_colour_action_loses_its_die_for_the_next_roll(v):
    lock = lock_cell(v, "green")  # green 2 (classic), green 3 (Longo)
    st = position(v, [{"green": first(v, "green", v.lock_threshold)}, {}], dice=(1, 5, 1, 1, lock - 1, 1))
    play(v, st, PASS, PASS, ("green", lock))
    snap = snapshot(v, st)
    assert snap["locked_rows"] == ["green"] and snap["phase"] == "white"
    assert st.dice[0, 4] == 0 and snap["dice"]["green"] is None


@BOTH
def test_rule9_game_ends_when_a_second_row_is_locked(v):
    # Green is locked already; the active player locks yellow in the colour action.
    t = v.lock_threshold
    lock = lock_cell(v, "yellow")
    w1, w2 = whites(v, lock)
    green_locked = first(v, "green", t) + [lock_cell(v, "green")]
    sheets = [{"yellow": first(v, "yellow", t)}, {"green": green_locked, "locks": ["green"]}]
    st = position(v, sheets, dice=(w1, w2, 1, w1, None, 1))
    play(v, st, PASS, PASS)
    play(v, st, ("yellow", lock))
    snap = snapshot(v, st)
    assert snap["locked_rows"] == ["yellow", "green"]
    assert snap["phase"] == "over" and bool(rules.is_over(st)[0])
    assert snap["roll"] == 0  # no further roll
    assert not rules.legal_mask(v, st).any()


@BOTH
def test_rule9_a_white_action_that_ends_the_game_skips_the_colour_action_and_its_penalty(v):
    # Green is locked already; seat 1 locks red in the white action while the active seat 0
    # crosses nothing. The game ends there: no colour action, so no penalty for seat 0.
    t = v.lock_threshold
    lock = lock_cell(v, "red")
    green_locked = first(v, "green", t) + [lock_cell(v, "green")]
    sheets = [{}, {"red": first(v, "red", t), "green": green_locked, "locks": ["green"]}]
    st = position(v, sheets, dice=whites(v, lock) + (1, 1, None, 1))
    play(v, st, PASS, ("red", lock))
    snap = snapshot(v, st)
    assert snap["phase"] == "over"
    assert snap["locked_rows"] == ["red", "green"]
    assert [p["penalties"] for p in snap["players"]] == [0, 0]
    assert not rules.legal_mask(v, st).any()


@BOTH
def test_rule9_game_ends_at_a_fourth_penalty(v):
    st = position(v, [{"penalties": 3}, {}], dice=(1, 2, 3, 3, 3, 3))
    play(v, st, PASS, PASS, PASS)
    snap = snapshot(v, st)
    assert snap["phase"] == "over" and snap["roll"] == 0
    assert [p["penalties"] for p in snap["players"]] == [4, 0]
    assert snap["players"][0]["score"] == -20


def test_rule10_score_table_classic():
    expected = [0, 1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66, 78]
    got = []
    for n in range(13):
        # n crosses in red; the twelfth is the lock (all 11 numbers, then the lock).
        sheet = {"red": first(CLASSIC, "red", min(n, 11)), "locks": ["red"] if n == 12 else []}
        got.append(int(rules.scores(CLASSIC, position(CLASSIC, [sheet], (1,) * 6))[0, 0]))
    assert got == expected


def test_rule10_the_lock_cross_counts_and_each_penalty_costs_five():
    #   red     [2][3][4] 5 ...                     3 crosses    6
    #   yellow  [2][3][4][5] 6 ...                  4 crosses   10
    #   green   [12][11][10][9][8] 7 ... [2] [L]     7 crosses   28
    #   blue                                         0 crosses    0
    #   penalties  X X                                         -10   = 34
    sheet = {
        "red": [2, 3, 4], "yellow": [2, 3, 4, 5], "green": [12, 11, 10, 9, 8, 2],
        "locks": ["green"], "penalties": 2,
    }
    st = position(CLASSIC, [sheet, {}], (1, 1, 1, 1, None, 1))
    assert list(rules.scores(CLASSIC, st)[0]) == [34, 0]
    assert snapshot(CLASSIC, st)["players"][0]["score"] == 34


@pytest.mark.parametrize(
    "seat1_red, rewards",
    [([2], {"player_0": 0, "player_1": 0, "player_2": -1}),  # 1 point each: a shared win
     ([2, 3], {"player_0": -1, "player_1": 1, "player_2": -1})],  # 3 points: seat 1 alone
    ids=["tie", "sole-winner"],
)
def test_rule10_the_highest_total_wins_and_equal_totals_share_the_win(seat1_red, rewards):
    # Seat 0 (21 points, 3 penalties) passes its colour action: the 4th penalty ends the game
    # at 21 - 20 = 1 point.
    env = qwixx_v0.raw_env(num_players=3, reward="win")
    env.reset(seed=0)
    sheets = [{"red": first(CLASSIC, "red", 6), "penalties": 3}, {"red": seat1_red}, {}]
    # The env is placed in a hand-set colour action of seat 0 (pass is legal in every phase).
    env.core_state.copy_from(position(CLASSIC, sheets, (1, 1, 1, 1, 1, 1), phase="color"))
    env.step(encode_action(PASS))
    assert env.snapshot()["phase"] == "over"
    assert [p["score"] for p in env.snapshot()["players"]] == [1, sum(range(1, len(seat1_red) + 1)), 0]
    assert env.rewards == rewards


@BOTH
def test_rule11_next_active_player_is_the_next_seat_clockwise(v):
    # Four players, seat 2 active: white decisions 2, 3, 0, 1; colour 2; then seat 3, then 0.
    st = position(v, [{}, {}, {}, {}], dice=(1, 2, 3, 3, 3, 3), active=2)
    for active in (2, 3, 0):
        assert (st.active[0], st.phase[0]) == (active, WHITE)
        order = []
        while st.phase[0] == WHITE:
            order.append(int(st.turn[0]))
            play(v, st, PASS)
        assert order == [(active + k) % 4 for k in range(4)]
        assert (st.phase[0], st.turn[0]) == (COLOR, active)
        play(v, st, PASS)


# --- Qwixx Longo ----------------------------------------------------------------------------


def test_longo_rule1_all_six_dice_are_eight_sided():
    assert rolled_faces(LONGO) == [[1, 2, 3, 4, 5, 6, 7, 8]] * 6


def test_longo_rule2_rows_of_fifteen_numbers():
    up = list(range(2, 17))
    assert len(up) == 15 and LONGO.cells == 15
    assert [list(row) for row in LONGO.row_numbers] == [up, up, up[::-1], up[::-1]]
    assert LONGO.num_actions == 4 * 15 + 1
    st = position(LONGO, [{"red": [16]}, {"green": [16, 2], "locks": ["green"]}], (1,) * 6)
    assert crosses(LONGO, st, 0) == {"red": [16]} and crosses(LONGO, st, 1) == {"green": [16, 2]}


def test_longo_rule3_the_last_two_numbers_are_lock_cells_needing_six_crosses():
    assert LONGO.lock_numbers == ((15, 16), (15, 16), (3, 2), (3, 2))
    for color, number in [("red", 15), ("red", 16), ("yellow", 15), ("yellow", 16),
                          ("green", 3), ("green", 2), ("blue", 3), ("blue", 2)]:
        dice = whites(LONGO, number) + (1, 1, 1, 1)
        five = position(LONGO, [{color: first(LONGO, color, 5)}], dice)
        assert (color, number) not in legal(LONGO, five), (color, number)
        six = position(LONGO, [{color: first(LONGO, color, 6)}], dice)
        assert (color, number) in legal(LONGO, six), (color, number)
        play(LONGO, six, (color, number))
        snap = snapshot(LONGO, six)
        assert snap["locked_rows"] == [color] and snap["players"][0]["locks"] == [color]
        assert snap["players"][0]["score"] == 36  # 6 + the lock cell + the lock = 8 crosses


def test_longo_rule3_crossing_15_locks_the_row_and_16_is_gone():
    #   red  [2][3][4][5][6][7] 8 ... 14 [15] 16 [L]
    st = position(LONGO, [{"red": first(LONGO, "red", 6)}], dice=(8, 7, 1, 1, 1, 1))
    play(LONGO, st, ("red", 15))
    assert crosses(LONGO, st, 0) == {"red": [2, 3, 4, 5, 6, 7, 15]}
    assert snapshot(LONGO, st)["players"][0]["locks"] == ["red"]
    # Colour action with white 8 and white 7: red 16 would need the red die, now out of play,
    # and the row is closed anyway; next roll, white 8 + 8 = 16 still offers no red 16.
    assert not any(mark and mark[0] == "red" for mark in legal(LONGO, st))
    play(LONGO, st, PASS)
    st.dice[0, :2] = (8, 8)
    assert ("red", 16) not in legal(LONGO, st)
    assert st.dice[0, 2] == 0


def test_longo_rule4_lucky_numbers_are_two_different_numbers_from_2_to_16_drawn_per_game():
    st = new_state(5, batch_size=1000)
    st.rng[:] = [seed_to_rng(i) for i in range(1000)]
    rules.reset(LONGO, st)
    lucky = st.lucky_numbers.reshape(-1, 2)
    assert (lucky[:, 0] != lucky[:, 1]).all()
    assert sorted(set(lucky.ravel().tolist())) == list(range(2, 17))

    env = qwixx_v0.raw_env(num_players=2, variant="longo")
    drawn = []
    for seed in (3, 3, None):  # same seed twice, then the next game of the same generator
        env.reset(seed=seed)
        drawn.append([p["lucky_numbers"] for p in env.snapshot()["players"]])
    assert drawn[0] == drawn[1]
    assert drawn[2] != drawn[0]
    assert all(len(pair) == 2 for pair in drawn[0])


def test_longo_rule4_fixed_lucky_numbers_are_respected():
    env = qwixx_v0.raw_env(num_players=2, variant="longo", lucky_numbers=[(3, 11), (7, 9)])
    for seed in range(5):
        env.reset(seed=seed)
        assert [p["lucky_numbers"] for p in env.snapshot()["players"]] == [[3, 11], [7, 9]]
    with pytest.raises(ValueError, match="lucky_numbers"):
        qwixx_v0.raw_env(num_players=2, variant="classic", lucky_numbers=[(3, 11), (7, 9)])


def test_longo_rule4_lucky_numbers_are_public():
    env = qwixx_v0.raw_env(num_players=2, variant="longo", lucky_numbers=[(3, 11), (7, 9)])
    env.reset(seed=0)
    seen_by_1 = ObservationView(env.observe("player_1"), variant="longo", num_players=2)
    assert seen_by_1.lucky_numbers == [[7, 9], [3, 11]]  # its own first, then seat 0's


def test_longo_rule5_lucky_cross_goes_to_the_one_row_with_fewest_crosses():
    # Seat 0, lucky 3 and 11; white sum 11. After its own cross red 11:
    #   red    [2][3] 4 ... [11] ...        3 crosses
    #   yellow [2][3][4] 5 ...              3
    #   green  [16][15][14] 13 ...          3
    #   blue   [16] 15 ...                  1   <- fewest: the lucky cross is blue 15
    sheets = [
        {"red": [2, 3], "yellow": [2, 3, 4], "green": [16, 15, 14], "blue": [16], "lucky": [3, 11]},
        {"lucky": [5, 6]},
    ]
    st = position(LONGO, sheets, dice=(5, 6, 1, 1, 1, 1))
    # In the bonus rule the white mask holds only the white-sum crosses.
    assert legal(LONGO, st) == {("red", 11), ("yellow", 11), ("green", 11), ("blue", 11), PASS}
    play(LONGO, st, ("red", 11))
    assert (st.phase[0], st.turn[0]) == (WHITE, 1)  # automatic: no lucky decision
    play(LONGO, st, PASS)
    assert crosses(LONGO, st, 0) == {
        "red": [2, 3, 11], "yellow": [2, 3, 4], "green": [16, 15, 14], "blue": [16, 15],
    }
    assert crosses(LONGO, st, 1) == {}  # 11 is not one of seat 1's lucky numbers
    assert st.phase[0] == COLOR


def test_longo_rule5_crosses_are_counted_after_the_players_own_white_cross():
    #   red    [2] 3 ...           1 cross (2 after crossing red 11)
    #   yellow [2][3] 4 ...        2
    #   green  [16][15][14] ...    3
    #   blue   [16][15][14] ...    3
    sheet = {"red": [2], "yellow": [2, 3], "green": [16, 15, 14], "blue": [16, 15, 14], "lucky": [3, 11]}
    st = position(LONGO, [sheet, {}], dice=(5, 6, 1, 1, 1, 1))

    passed = st.clone()  # no white cross: red alone has the fewest, next number red 3
    play(LONGO, passed, PASS)
    assert (passed.phase[0], passed.turn[0]) == (WHITE, 1)
    play(LONGO, passed, PASS)
    assert crosses(LONGO, passed, 0)["red"] == [2, 3]

    # With red 11 crossed, red (2) ties yellow (2); red's next number is now 12.
    play(LONGO, st, ("red", 11))
    assert (st.phase[0], st.turn[0]) == (LUCKY, 0)
    assert legal(LONGO, st) == {("red", 12), ("yellow", 4)}


def test_longo_rule5_a_tie_gives_the_same_seat_a_lucky_decision_right_after_its_white_one():
    # Seat 1 (not active), lucky 4 and 11, white sum 11; red and yellow tie with no crosses.
    #   red    2 3 ...       yellow 2 3 ...       green [16] 15 ...     blue [16] 15 ...
    sheets = [{}, {"green": [16], "blue": [16], "lucky": [4, 11]}, {}]
    st = position(LONGO, sheets, dice=(5, 6, 1, 1, 1, 1))
    snap_at_roll = snapshot(LONGO, st)
    play(LONGO, st, PASS, ("green", 11))
    assert (st.phase[0], st.turn[0]) == (LUCKY, 1)
    assert legal(LONGO, st) == {("red", 2), ("yellow", 2)}  # pass is not a choice
    # Its white cross is still hidden (only the lucky decision itself is public).
    assert snapshot(LONGO, st)["players"] == snap_at_roll["players"]
    play(LONGO, st, ("yellow", 2))
    assert (st.phase[0], st.turn[0]) == (WHITE, 2)
    play(LONGO, st, PASS)
    assert crosses(LONGO, st, 1) == {"yellow": [2], "green": [16, 11], "blue": [16]}
    assert (st.phase[0], st.turn[0]) == (COLOR, 0)


def test_longo_rule5_no_qualifying_row_means_no_lucky_cross():
    # Seat 0 (active), lucky 3 and 11, white sum 11. Blue is locked (by seat 1); every other
    # row's next number is a lock cell it lacks the six crosses for:
    #   red     ... [14] 15 16        yellow ... [14] 15 16        green ... [4] 3 2
    t = LONGO.lock_threshold
    blue_locked = first(LONGO, "blue", t) + [3]
    sheets = [
        {"red": [14], "yellow": [14], "green": [4], "lucky": [3, 11]},
        {"blue": blue_locked, "locks": ["blue"], "lucky": [2, 4]},
    ]
    st = position(LONGO, sheets, dice=(5, 6, 1, 1, 1, None))
    assert legal(LONGO, st) == {PASS}
    play(LONGO, st, PASS)
    assert (st.phase[0], st.turn[0]) == (WHITE, 1)
    play(LONGO, st, PASS)
    assert crosses(LONGO, st, 0) == {"red": [14], "yellow": [14], "green": [4]}
    assert legal(LONGO, st) == {PASS}
    play(LONGO, st, PASS)
    assert list(st.penalties[0]) == [1, 0]  # it crossed nothing at all


def test_longo_rule5_a_row_the_player_locks_with_its_own_white_cross_takes_no_lucky_cross():
    # Seat 0, lucky 3 and 15, white sum 15 (8 + 7). Red has the fewest crosses:
    #   red    [2]..[7] 8 ... 15 16    6 crosses: red 15 (a lock cell) may be crossed
    #   yellow [2]..[10] 11 ...        9        green, blue: 10 each
    sheet = {"red": first(LONGO, "red", 6), "yellow": first(LONGO, "yellow", 9),
             "green": first(LONGO, "green", 10), "blue": first(LONGO, "blue", 10), "lucky": [3, 15]}
    st = position(LONGO, [sheet, {"lucky": [5, 6]}], dice=(8, 7, 1, 1, 1, 1))

    passed = st.clone()  # without a white cross red, the fewest row, takes the lucky cross: red 8
    play(LONGO, passed, PASS, PASS)
    assert crosses(LONGO, passed, 0)["red"] == first(LONGO, "red", 7)

    # Crossing red 15 locks red: it no longer takes part, so the lucky cross is yellow's next, 11.
    play(LONGO, st, ("red", 15), PASS)
    snap = snapshot(LONGO, st)
    assert snap["players"][0]["marks"]["red"] == first(LONGO, "red", 6) + [15]
    assert snap["players"][0]["locks"] == ["red"] and snap["locked_rows"] == ["red"]
    assert snap["players"][0]["marks"]["yellow"] == first(LONGO, "yellow", 9) + [11]


def test_longo_rule5_a_lucky_cross_into_a_row_another_player_locks_in_the_same_white_action_stands():
    # White sum 15. Seat 0 (lucky 3 and 15) passes its white cross; red is its fewest row
    # (red [2][3], next 4). Seat 1 locks red with red 15 in the same white action. The lucky
    # cross is judged against the sheets at the roll, so seat 0's red 4 stands.
    sheets = [
        {"red": [2, 3], "yellow": first(LONGO, "yellow", 4), "green": first(LONGO, "green", 4),
         "blue": first(LONGO, "blue", 4), "lucky": [3, 15]},
        {"red": first(LONGO, "red", 6), "lucky": [5, 6]},
    ]
    st = position(LONGO, sheets, dice=(8, 7, 1, 1, 1, 1))
    play(LONGO, st, PASS, ("red", 15))
    snap = snapshot(LONGO, st)
    assert snap["players"][0]["marks"]["red"] == [2, 3, 4]
    assert snap["players"][1]["marks"]["red"] == first(LONGO, "red", 6) + [15]
    assert snap["players"][1]["locks"] == ["red"] and snap["locked_rows"] == ["red"]
    assert snap["phase"] == "color" and snap["dice"]["red"] is None


def test_a_hand_set_position_must_agree_with_itself():
    sheets = [{"red": first(CLASSIC, "red", 5) + [12], "locks": ["red"]}, {}]
    st = position(CLASSIC, sheets, dice=(3, 4, 6, 1, 1, 1))  # a locked row's die is out of play
    assert st.dice[0, 2] == 0 and snapshot(CLASSIC, st)["dice"]["red"] is None
    snap = snapshot(CLASSIC, position(CLASSIC, [{}, {}], dice=(3, 4, 1, 1, 1, 1)))
    with pytest.raises(ValueError, match=r"locked_rows: got \['red'\]; the players' locks lock \[\]"):
        state_from_snapshot(CLASSIC, {**snap, "locked_rows": ["red"]})  # no sheet holds the lock
    with pytest.raises(
        ValueError, match=r"dice.red: got None; expected 1 to 6 \(classic\), as the red row is open"
    ):
        state_from_snapshot(CLASSIC, {**snap, "dice": {**snap["dice"], "red": None}})
    with pytest.raises(ValueError, match=r"dice.white: got 7; expected 1 to 6"):
        state_from_snapshot(CLASSIC, {**snap, "dice": {**snap["dice"], "white": [7, 1]}})
    with pytest.raises(ValueError, match=r"players: got 2 sheets; num_players is 3"):
        state_from_snapshot(CLASSIC, {**snap, "num_players": 3})
    assert snapshot(CLASSIC, state_from_snapshot(CLASSIC, snap)) == snap  # a snapshot round-trips


def test_longo_rule5_the_lucky_cross_counts_for_the_active_players_penalty():
    # Active seat 0, lucky 3 and 11, white sum 11, passes both actions; red (empty) is the
    # one fewest row, so the lucky cross is red 2, and there is no penalty.
    sheet = {"yellow": [2], "green": [16], "blue": [16], "lucky": [3, 11]}
    st = position(LONGO, [sheet, {}], dice=(5, 6, 1, 1, 1, 1))
    play(LONGO, st, PASS, PASS)
    assert crosses(LONGO, st, 0)["red"] == [2]
    play(LONGO, st, PASS)
    assert list(st.penalties[0]) == [0, 0]


def test_longo_rule5_a_lucky_cross_into_a_lock_cell_needs_six_crosses():
    # Both seats: lucky 3 and 11, white sum 11, both pass their white cross.
    #   seat 0 red [2][3][4][5][6] ... [14] 15 16    6 crosses: the lucky cross is red 15 (lock)
    #   seat 1 red [2][3][4][5]    ... [14] 15 16    5 crosses: red does not qualify, so the
    #          lucky cross goes to the next fewest row, yellow (7 crosses): yellow 9
    high = {"green": first(LONGO, "green", 8), "blue": first(LONGO, "blue", 8), "lucky": [3, 11]}
    sheets = [
        {"red": [2, 3, 4, 5, 6, 14], "yellow": first(LONGO, "yellow", 7), **high},
        {"red": [2, 3, 4, 5, 14], "yellow": first(LONGO, "yellow", 7), **high},
    ]
    st = position(LONGO, sheets, dice=(5, 6, 1, 1, 1, 1))
    play(LONGO, st, PASS, PASS)
    snap = snapshot(LONGO, st)
    assert snap["players"][0]["marks"]["red"] == [2, 3, 4, 5, 6, 14, 15]
    assert snap["players"][0]["locks"] == ["red"]
    assert snap["players"][1]["marks"]["red"] == [2, 3, 4, 5, 14]
    assert snap["players"][1]["marks"]["yellow"] == first(LONGO, "yellow", 8)
    assert snap["locked_rows"] == ["red"] and snap["phase"] == "color"


def test_longo_rule6_instead_offers_the_lucky_cross_in_place_of_the_white_sum():
    # Same sheet as the bonus test: the fewest row is blue, whose next number is 15.
    sheets = [
        {"red": [2, 3], "yellow": [2, 3, 4], "green": [16, 15, 14], "blue": [16], "lucky": [3, 11]},
        {"lucky": [5, 6]},
    ]
    st = position(INSTEAD, sheets, dice=(5, 6, 1, 1, 1, 1))
    white_sum = {("red", 11), ("yellow", 11), ("green", 11), ("blue", 11), PASS}
    assert legal(INSTEAD, st) == white_sum | {("blue", 15)}

    took_lucky = st.clone()
    play(INSTEAD, took_lucky, ("blue", 15))
    assert (took_lucky.phase[0], took_lucky.turn[0]) == (WHITE, 1)
    assert legal(INSTEAD, took_lucky) == white_sum  # seat 1: 11 is not lucky for it
    play(INSTEAD, took_lucky, PASS)
    assert crosses(INSTEAD, took_lucky, 0)["blue"] == [16, 15]
    assert crosses(INSTEAD, took_lucky, 0)["red"] == [2, 3]

    # Taking the white sum instead brings no extra cross.
    play(INSTEAD, st, ("red", 11), PASS)
    assert crosses(INSTEAD, st, 0) == {
        "red": [2, 3, 11], "yellow": [2, 3, 4], "green": [16, 15, 14], "blue": [16],
    }


def test_longo_rule6_instead_offers_every_tied_row_and_no_lucky_decision():
    sheet = {"green": [16], "blue": [16], "lucky": [4, 11]}
    st = position(INSTEAD, [sheet, {}], dice=(5, 6, 1, 1, 1, 1))
    assert legal(INSTEAD, st) == {
        ("red", 11), ("yellow", 11), ("green", 11), ("blue", 11), ("red", 2), ("yellow", 2), PASS,
    }
    play(INSTEAD, st, ("yellow", 2))
    assert (st.phase[0], st.turn[0]) == (WHITE, 1)
    play(INSTEAD, st, PASS, PASS)
    assert crosses(INSTEAD, st, 0) == {"yellow": [2], "green": [16], "blue": [16]}
    assert list(st.penalties[0]) == [0, 0]  # the lucky cross was the active player's white cross


def test_longo_rule7_score_table_up_to_sixteen_crosses():
    assert list(LONGO.score_table) == [n * (n + 1) // 2 for n in range(17)]
    assert LONGO.score_table[16] == 136
    #   red     [2][3] ... [14][15] 16 [L]   15 crosses  120
    #   yellow  [2][3][4] 5 ...               3 crosses    6
    #   penalty X                                          -5   = 121
    sheet = {"red": list(range(2, 16)), "locks": ["red"], "yellow": [2, 3, 4], "penalties": 1}
    st = position(LONGO, [sheet], (1, 1, None, 1, 1, 1))
    assert int(rules.scores(LONGO, st)[0, 0]) == 121


def test_longo_rule7_the_score_table_is_a_rule_parameter():
    linear = LONGO.with_score_table(range(17))  # n crosses score n points
    sheet = {"red": list(range(2, 16)), "locks": ["red"], "yellow": [2, 3, 4], "penalties": 1}
    st = position(linear, [sheet], (1, 1, None, 1, 1, 1))
    assert int(rules.scores(linear, st)[0, 0]) == 15 + 3 - 5
    assert snapshot(linear, st)["players"][0]["score"] == 13


def test_a_longo_position_without_lucky_numbers_observes_none_and_its_true_scores():
    """A hand-set Longo sheet need not carry lucky numbers (0: none); the observation then
    shows none, and nothing spills into the fields beside them (the scores)."""
    st = position(LONGO, [{"red": [2, 3]}, {}], (1, 2, 1, 1, 1, 1))
    view = ObservationView(layout_for(LONGO, 2).encode(st, np.array([0]))[0], LONGO, 2)
    assert view.lucky_numbers == [[], []]
    assert view.scores.tolist() == rules.scores(LONGO, st)[0].tolist() == [3, 0]
