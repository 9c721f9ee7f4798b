"""Rows of different lengths and rows with score tables of their own, as data (issue 52).

One made-up sheet, "uneven_test": classic red and green rows (11 numbers, the sheet's
triangular table), a short yellow row 2 … 7 (6 numbers) and a short blue row 12 … 8 (5
numbers) scored by a table of its own. One lock cell a row (its last number), 3 crosses
before it. Drawn as `render` draws an empty sheet (a short row's lock in the same column)::

    red       2   3   4   5   6   7   8   9  10  11  12   L
    yellow    2   3   4   5   6   7                       L
    green    12  11  10   9   8   7   6   5   4   3   2   L
    blue     12  11  10   9   8                           L   (points: 0 2 5 9 14 20 27)

The rules tests build positions by hand (`state_from_snapshot`); the play tests run the
sheet through the envs, the batched engine, the heuristic bot, a record's replay and a file.
"""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test
from test_batched import play_side_by_side

from qwixx_env import BatchedQwixx, qwixx_v0, replay
from qwixx_env.bots import make_bot
from qwixx_env.core import rules
from qwixx_env.core.options import TableOptions
from qwixx_env.core.rewards import score_bounds
from qwixx_env.core.snapshot import snapshot, state_from_snapshot
from qwixx_env.core.variant import Row, Variant, decode_action, encode_action

UP = tuple(range(2, 13))
TRIANGULAR = tuple(k * (k + 1) // 2 for k in range(13))
BLUE_POINTS = (0, 2, 5, 9, 14, 20, 27)  # 0 to 6 crosses: the blue row's 5 numbers and its lock
UNEVEN = Variant(
    name="uneven_test",
    faces=6,
    lock_cells=1,
    lock_threshold=3,
    score_table=TRIANGULAR,
    rows=(
        Row("red", UP),
        Row("yellow", UP[:6]),
        Row("green", UP[::-1]),
        Row("blue", UP[::-1][:5], score_table=BLUE_POINTS),
    ),
)


def position(*, phase: str, white: list[int], dice: dict, marks=None, locks=None):
    """A hand-set 2-player position: seat 0 active with `marks` and `locks`, seat 1 empty."""
    players = [{"marks": marks or {}, "locks": locks or [], "penalties": 0}, {"marks": {}, "penalties": 0}]
    snap = {"num_players": 2, "phase": phase, "active_player": 0, "dice": {"white": white, **dice}, "players": players}
    return state_from_snapshot(UNEVEN, snap)


def legal_marks(state) -> set:
    return {decode_action(int(a), UNEVEN) for a in np.flatnonzero(rules.legal_mask(UNEVEN, state)[0])}


def missing_cells(variant: Variant) -> list[int]:
    """The actions of the cells a shorter row does not have (past its last number)."""
    K = variant.cells
    return [r * K + c for r, n in enumerate(variant.row_cells) for c in range(n, K)]


# --- the sheet as data -------------------------------------------------------------------------


def test_rows_keep_their_own_lengths_and_the_actions_give_each_the_longest_rows_cells():
    assert UNEVEN.cells == 11 and UNEVEN.row_cells == (11, 6, 11, 5)
    assert UNEVEN.num_actions == 4 * 11 + 1 and UNEVEN.lock_numbers == ((12,), (7,), (2,), (8,))
    assert UNEVEN.row_score_tables == (TRIANGULAR, TRIANGULAR, TRIANGULAR, BLUE_POINTS)
    assert encode_action(("yellow", 7), UNEVEN) == 11 + 5 and decode_action(11 + 5, UNEVEN) == ("yellow", 7)
    assert encode_action(("blue", 8), UNEVEN) == 33 + 4
    with pytest.raises(
        ValueError,
        match=r"action: got 17; the uneven_test sheet's yellow row has 6 numbers, so no "
        r"action 17 to 21",
    ):
        decode_action(17, UNEVEN)
    with pytest.raises(
        ValueError,
        match=r"mark: got number 8 for yellow; the uneven_test sheet's yellow row has 2 "
        r"to 7",
    ):
        encode_action(("yellow", 8), UNEVEN)
    # the most rolls: a cross a roll at most (33 numbers a sheet), then the penalties
    assert UNEVEN.max_rolls(2) == 33 * 2 + 3 * 2 + 1


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda: {"rows": (Row("a", UP), Row("b", (2, 3, 4), score_table=(0, 1, 2, 3)))},
            r"row b: score_table has 4 entries; its 3 numbers need at least 5",
        ),
        (
            lambda: {"rows": (Row("a", UP), Row("b", (2, 3, 4), score_table=(0, 1, "2", 3, 4)))},
            r"row b: score_table \(0, 1, '2', 3, 4\); expected a tuple of integers",
        ),
        (
            lambda: {"lock_cells": 3, "rows": (Row("a", UP), Row("b", (2, 3, 4)))},
            r"lock_cells: got 3; expected an integer from 1 to 2",
        ),
    ],
    ids=["row table too short", "row table not integers", "lock cells of a short row"],
)
def test_a_bad_row_table_or_lock_for_a_short_row_is_refused_naming_it(change, message):
    arguments = {"name": "bad", "faces": 6, "lock_cells": 1, "lock_threshold": 3, "score_table": TRIANGULAR}
    with pytest.raises(ValueError, match=message):
        Variant(**{**arguments, **change()})


def test_the_shared_table_only_needs_to_cover_the_rows_that_use_it():
    # row a has its own table; the shared one scores row b alone (3 numbers: 0 to 4 crosses)
    v = Variant(
        name="short_shared",
        faces=6,
        lock_cells=1,
        lock_threshold=1,
        score_table=(0, 1, 3, 6, 10),
        rows=(Row("a", UP, score_table=TRIANGULAR), Row("b", (2, 3, 4))),
    )
    assert v.row_score_tables == (TRIANGULAR, (0, 1, 3, 6, 10))
    with pytest.raises(ValueError, match=r"score_table: got 4 entries; the short_shared sheet needs at least 5"):
        Variant(name="short_shared", faces=6, lock_cells=1, lock_threshold=1, score_table=(0, 1, 3, 6), rows=v.rows)


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_a_sheet_with_uneven_rows_and_a_rows_table_reads_back_from_its_file_equal(tmp_path, suffix):
    path = UNEVEN.to_file(tmp_path / f"uneven{suffix}")
    assert "score_table = [0, 2, 5, 9, 14, 20, 27]" in path.read_text() or suffix == ".json"
    assert Variant.from_file(path) == UNEVEN
    assert "score_table" not in UNEVEN.as_dict()["rows"][0]  # a row on the shared table writes none


# --- the rules on the short rows (hand-set dice and sheets) -------------------------------------


def test_short_row_rule_its_last_number_is_its_lock_cell_and_needs_the_crosses_first():
    # White 3 and 4: the white sum 7, which is yellow's last number (its lock cell). With two
    # crosses in yellow it may not be crossed; red 7 and green 7 may.
    two = position(
        phase="white", white=[3, 4], dice={"red": 1, "yellow": 1, "green": 1, "blue": 1}, marks={"yellow": [2, 3]}
    )
    assert legal_marks(two) == {None, ("red", 7), ("green", 7)}
    # With three crosses, yellow 7 is legal; crossing it crosses the lock, locks the row and
    # takes the yellow die out of play: 4 crosses and the lock score TRIANGULAR[5].
    three = position(
        phase="white", white=[3, 4], dice={"red": 1, "yellow": 1, "green": 1, "blue": 1}, marks={"yellow": [2, 3, 4]}
    )
    lock = encode_action(("yellow", 7), UNEVEN)
    assert ("yellow", 7) in legal_marks(three)
    for action in (lock, UNEVEN.pass_action):  # seat 0 crosses, seat 1 passes
        rules.apply(UNEVEN, three, np.array([action]))
    snap = snapshot(UNEVEN, three)
    assert snap["locked_rows"] == ["yellow"] and snap["dice"]["yellow"] is None
    assert snap["players"][0]["locks"] == ["yellow"] and snap["players"][0]["score"] == TRIANGULAR[5]


def test_short_row_rule_nothing_right_of_its_last_number_is_ever_legal():
    # Every cell a short row lacks stays out of every mask, over many random games.
    engine = BatchedQwixx(128, num_players=3, variant=UNEVEN, autoreset=True)
    engine.reset(seed=3)
    rng = np.random.default_rng(4)
    missing = missing_cells(UNEVEN)
    locked_short = 0
    for _ in range(300):
        assert not engine.masks[:, missing].any()
        locked_short += int(engine.state.locks[:, :, [1, 3]].any(axis=(1, 2)).sum())
        engine.step(np.array([rng.choice(np.flatnonzero(m)) for m in engine.masks]))
    assert locked_short > 0, "no short row was locked: their lock rule went untested"


def test_short_row_rule_the_lucky_cross_reads_the_short_rows_own_lock_cell():
    # Lucky numbers on a sheet with a 4-number yellow row (2 3 4 5; 5 is its lock cell) and 4
    # crosses needed before a lock cell. Seat 0 has 2 3 4 in yellow, 5 crosses in each other
    # row; white 3 + 4 = 7 is its lucky number. Yellow has the fewest crosses, but its next
    # number is its lock cell, which 3 crosses may not cross: yellow does not qualify, and the
    # three others tie for the lucky cross (seat 0 breaks the tie: their next numbers, 7).
    lucky = Variant(
        name="uneven_lucky_test",
        faces=6,
        lock_cells=1,
        lock_threshold=4,
        score_table=TRIANGULAR,
        lucky_count=2,
        lucky_rule="bonus",
        rows=(Row("red", UP), Row("yellow", (2, 3, 4, 5)), Row("green", UP[::-1]), Row("blue", UP[::-1])),
    )
    marks = {"red": [2, 3, 4, 5, 6], "yellow": [2, 3, 4], "green": [12, 11, 10, 9, 8], "blue": [12, 11, 10, 9, 8]}
    players = [
        {"marks": marks, "penalties": 0, "lucky_numbers": [7, 9]},
        {"marks": {}, "penalties": 0, "lucky_numbers": [2, 3]},
    ]
    state = state_from_snapshot(
        lucky,
        {
            "num_players": 2,
            "phase": "white",
            "active_player": 0,
            "players": players,
            "dice": {"white": [3, 4], "red": 1, "yellow": 1, "green": 1, "blue": 1},
        },
    )
    rules.apply(lucky, state, np.array([lucky.pass_action]))  # seat 0's white choice: pass
    assert snapshot(lucky, state)["phase"] == "lucky"
    legal = {decode_action(int(a), lucky) for a in np.flatnonzero(rules.legal_mask(lucky, state)[0])}
    assert legal == {("red", 7), ("green", 7), ("blue", 7)}


def test_row_table_rule_each_row_is_scored_by_its_own_table():
    # red 2 3 4 (the shared table: 6 points), blue 12 11 10 (its own table: 9 points).
    marks = {"red": [2, 3, 4], "blue": [12, 11, 10]}
    state = position(phase="color", white=[4, 4], dice={"red": 6, "yellow": 6, "green": 6, "blue": 4}, marks=marks)
    assert rules.scores(UNEVEN, state)[0, 0] == TRIANGULAR[3] + BLUE_POINTS[3] == 15
    # The colour action: white 4 + blue 4 = 8, blue's lock cell, after 3 crosses: 4 crosses
    # and the lock in blue, BLUE_POINTS[5], beside red's 6.
    lock = encode_action(("blue", 8), UNEVEN)
    assert ("blue", 8) in legal_marks(state)
    rules.apply(UNEVEN, state, np.array([lock]))
    snap = snapshot(UNEVEN, state)
    assert snap["locked_rows"] == ["blue"] and snap["players"][0]["score"] == TRIANGULAR[3] + BLUE_POINTS[5] == 26


def test_the_observation_scores_and_bounds_read_each_rows_table():
    env = qwixx_v0.env(num_players=2, variant=UNEVEN, reward="score")
    env.reset(seed=0)
    layout = env.unwrapped.layout
    # the observation's bound: each row's table's highest entry (78 three times, 27 in blue)
    assert layout.high[layout.slices["scores"]] == pytest.approx([(3 * 78 + 27) / 100] * 2)
    # the highest final score: red and green 78, yellow 28 (its 6 numbers and the lock), blue 27
    assert score_bounds(UNEVEN) == (-20, 78 + 28 + 78 + 27)
    for _ in range(40):  # the scores field is each seat's score through the rows' tables
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        if env.unwrapped.snapshot()["phase"] == "over":
            break
    points = rules.scores(UNEVEN, env.unwrapped.core_state)[0]
    assert env.unwrapped.observe("player_0")["observation"][layout.slices["scores"]] == pytest.approx(points / 100)


def test_the_text_render_puts_a_short_rows_lock_in_the_long_rows_column():
    env = qwixx_v0.env(num_players=1, variant=UNEVEN, render_mode="ansi")
    env.reset(seed=0)
    lines = {line.split()[0]: line for line in env.render().splitlines() if line.strip().endswith("L")}
    assert lines["yellow"].split()[1:] == ["2", "3", "4", "5", "6", "7", "L"]
    assert {len(lines[row]) for row in ("red", "yellow", "green", "blue")} == {len(lines["red"])}


# --- every form of the game plays it -------------------------------------------------------------


def test_it_passes_the_pettingzoo_api_tests():
    api_test(qwixx_v0.env(num_players=3, variant=UNEVEN), num_cycles=300)


def test_the_batched_engine_plays_the_aec_envs_games():
    phases = play_side_by_side({"num_players": 3, "variant": UNEVEN}, seed=5, num_games=2)
    assert {"white", "color"} <= phases


def test_the_heuristic_plays_it_to_the_end_and_the_record_replays():
    table = TableOptions(num_players=2, variant=UNEVEN)
    bots = [make_bot("heuristic", table, seed=s) for s in range(2)]
    env = qwixx_v0.env(table=table)
    for game in range(3):
        env.reset(seed=game)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else int(bots[env.unwrapped.agent_name_mapping[agent]].act(obs))
            assert action is None or obs["action_mask"][action], f"game {game}: {agent} played an illegal action"
            env.step(action)
        snap = env.unwrapped.snapshot()
        assert snap["phase"] == "over" and "illegal_end" not in snap
        assert replay(env.unwrapped.record()).snapshot() == snap
