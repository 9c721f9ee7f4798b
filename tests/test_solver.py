"""The exact solo solver, its value table, and the `solo_optimal` bot.

The solver is checked against a brute-force expectimax written plainly here from the rules
(every white option, every colour option, all F^6 dice, no symmetry, no shortcut) on reduced
games: two-faced dice (rows of 3 numbers) over every sheet, three-faced dice from late
positions. The full classic table is solved once per session into a temporary cache
directory (about 20 s), and checked against the published optimum and hand-computed ends.

Sheets are drawn as in test_rules.py: ``[n]`` crossed, ``L`` the lock.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import time
import warnings
from functools import cache

import numpy as np
import pytest

import qwixx_env.bots.solo_optimal as solo_optimal_bot
import qwixx_env.solver as cli_solver
import qwixx_env.solver.table as solver_table
from qwixx_env import bots, cli, decode_action, encode_action, qwixx_v0, solver
from qwixx_env.core import COLORS, Variant, layout_for, rules, state_from_snapshot
from qwixx_env.core.variant import Row, register_variant
from qwixx_env.solver import ValueTable, load_table, table_path
from qwixx_env.solver.states import make_space

from conftest import play_game

PUBLISHED_OPTIMUM = 115.4831  # the published anchor (a C program, about 75 minutes)
SOLVED_OPTIMUM = 115.483126  # this solver's value (docs/solver.md)


def triangular(n):
    return tuple(k * (k + 1) // 2 for k in range(n + 1))


def reduced(faces, lock_threshold, **rules_):
    """A smaller Qwixx: F-faced dice, rows of 2F-1 numbers, one lock cell per row."""
    rules_.setdefault("score_table", triangular(2 * faces + 1))
    return Variant(name=f"reduced{faces}", faces=faces, lock_cells=1, lock_threshold=lock_threshold, **rules_)


# --- the brute force: the rules, plainly -----------------------------------------------------
# A row is (p, n, locked): rightmost crossed cell (-1: none), crosses, whether it is locked.


def brute_force(v):
    """value(rows, penalties): the optimal expected further points, by plain expectimax."""
    F, lock_cell, table = v.faces, v.cells - 1, v.score_table

    def may_cross(row, c):
        p, n, locked = row
        return not locked and c > p and (c < lock_cell or n >= v.lock_threshold)

    def cross(rows, r, c):
        p, n, _ = rows[r]
        crosses = 2 if c == lock_cell else 1  # the lock cell crosses the lock too
        new = (c, n + crosses, c == lock_cell)
        return rows[:r] + (new,) + rows[r + 1 :], table[n + crosses] - table[n]

    def over(rows):
        return sum(locked for _, _, locked in rows) >= v.rows_to_end

    @cache
    def value(rows, pen):
        if over(rows) or pen >= v.max_penalties:
            return 0.0
        dice = itertools.product(range(1, F + 1), repeat=6)
        return sum(best_roll(rows, pen, d) for d in dice) / F**6

    def best_roll(rows, pen, dice):
        w1, w2 = dice[:2]
        whites = [(rows, 0, False)]
        for r in range(4):
            c = v.tables.cell_of[r, w1 + w2]
            if may_cross(rows[r], c):
                whites.append((*cross(rows, r, c), True))
        best = -np.inf
        for after_white, white_points, white_crossed in whites:
            if over(after_white):
                best = max(best, white_points)  # the game ends before the colour action
                continue
            colours = [(after_white, 0)]
            for r in range(4):
                if rows[r][2] or after_white[r][2]:
                    continue  # the die of a locked row is out of play
                for w in (w1, w2):
                    c = v.tables.cell_of[r, w + dice[2 + r]]
                    if may_cross(after_white[r], c):
                        colours.append(cross(after_white, r, c))
            for after, colour_points in colours:
                if not white_crossed and after is after_white:
                    best = max(best, -v.penalty_points + value(after, pen + 1))
                else:
                    best = max(best, white_points + colour_points + value(after, pen))
        return best

    return value


def every_row(v):
    """Every row state: empty, (p, n) with n crosses ending at cell p, locked."""
    open_rows = [(p, n, False) for p in range(v.cells - 1) for n in range(1, p + 2)]
    return [(-1, 0, False), *open_rows, (v.cells - 1, 0, True)]


def table_value(table, rows, pen):
    space = table.space
    codes = [space.locked if locked else int(space.code_of[p + 1, n]) for p, n, locked in rows]
    return table.further(codes, pen)


@pytest.mark.slow
@pytest.mark.parametrize(
    "v",
    [
        reduced(2, lock_threshold=1),
        reduced(2, lock_threshold=2, max_penalties=2, score_table=(0, 1, 4, 9, 16, 25, 36)),
        reduced(2, lock_threshold=1, rows_to_end=1, penalty_points=3, score_table=(0, 2, 3, 7, 8, 20, 21)),
        reduced(2, lock_threshold=2, rows_to_end=3, max_penalties=3),
    ],
    ids=["two-faced", "squares-2-penalties", "one-lock-ends", "three-locks-end"],
)
def test_solver_equals_brute_force_on_every_sheet_of_a_two_faced_game(v):
    table = solver.solve(v)
    value = brute_force(v)
    for rows in itertools.product(every_row(v), repeat=4):
        for pen in range(v.max_penalties):
            assert table_value(table, rows, pen) == pytest.approx(value(rows, pen), abs=1e-9), (rows, pen)


@pytest.mark.slow
@pytest.mark.parametrize(
    "rows",
    [
        ((2, 2, False), (3, 1, False), (2, 1, False), (3, 3, False)),
        ((1, 1, False), (3, 2, False), (4, 0, True), (2, 3, False)),
        ((3, 1, False), (2, 2, False), (3, 2, False), (1, 2, False)),
    ],
)
def test_solver_equals_brute_force_on_late_sheets_of_a_three_faced_game(rows):
    v = reduced(3, lock_threshold=2)
    table = solver.solve(v)
    value = brute_force(v)
    for pen in range(v.max_penalties):
        assert table_value(table, rows, pen) == pytest.approx(value(rows, pen), abs=1e-9)


# --- the full classic table ------------------------------------------------------------------


def sheet(marks=None, locks=(), penalties=0):
    return {
        "marks": {c: list((marks or {}).get(c, [])) for c in COLORS},
        "locks": list(locks),
        "penalties": penalties,
    }


@pytest.mark.slow
def test_root_value_is_the_published_optimum(classic):
    assert classic.root == pytest.approx(SOLVED_OPTIMUM, abs=1e-4)
    assert abs(classic.root - PUBLISHED_OPTIMUM) < 1e-3
    assert solver.expected_score(sheet()) == pytest.approx(classic.root, abs=1e-4)


@pytest.mark.slow
def test_table_is_cached_and_loads_back_the_same(classic):
    path = table_path(classic.variant)
    assert path.exists() and path.parent == solver.cache_dir()
    # no temporary file left (the folder may also hold kernels a subprocess test compiled there)
    assert [p.name for p in path.parent.iterdir() if p.is_file()] == [path.name]
    loaded = ValueTable.load(path)
    assert loaded.root == classic.root
    np.testing.assert_array_equal(loaded.values, classic.values)
    assert load_table("classic") is classic  # kept in memory after the first load


@pytest.mark.slow
def test_a_finished_sheet_is_worth_its_score(classic):
    # red     [2][3][4][5][6] 7  8  9 10 11[12] L   locked: 6 numbers + lock = 28
    # green   [12][11][10][9][8] 7 6 5 4 3 [2] L    locked: 28
    # 1 penalty: 28 + 28 - 5 = 51, and the game is over
    done = sheet(
        {"red": [2, 3, 4, 5, 6, 12], "green": [12, 11, 10, 9, 8, 2]}, locks=["red", "green"], penalties=1
    )
    assert solver.expected_score(done) == 51
    assert solver.expected_score(sheet({"blue": [12, 10]}, penalties=4)) == 3 - 20


@pytest.mark.slow
def test_a_sheet_that_can_cross_nothing_takes_penalties_until_the_fourth(classic):
    # red     [2][3][4][5][6] 7 .. 11 [12][L]   locked: 7 crosses = 28
    # yellow  [2][3][4] 5 .. 10 [11] 12 L       4 crosses: the 12 needs 5, nothing else is left
    # green   [12][11] 10 .. 4 [3] 2 L          3 crosses: the 2 needs 5
    # blue    12 .. 4 [3] 2 L                   1 cross
    dead = {"red": [2, 3, 4, 5, 6, 12], "yellow": [2, 3, 4, 11], "green": [12, 11, 3], "blue": [3]}
    banked = 28 + 10 + 6 + 1 - 5
    assert solver.expected_score(sheet(dead, locks=["red"], penalties=1)) == pytest.approx(
        banked - 3 * 5, abs=1e-4
    )


@pytest.mark.slow
def test_a_position_decided_by_one_number(classic):
    # red     [2][3][4][5][6] 7 .. 11 [12][L]   locked: 28
    # yellow  [2][3][4][5] 6 .. 10 [11] 12 L    5 crosses: may cross 12 (and lock, ending the game)
    # green, blue: only [3], nothing left
    # Each roll the 12 is there with probability
    #   P(white sum 12) + P(exactly one white 6) * P(yellow die 6) = 1/36 + 10/36 * 1/6 = 2/27,
    # worth 6 + 7 = 13 points; otherwise a penalty.
    position = {"red": [2, 3, 4, 5, 6, 12], "yellow": [2, 3, 4, 5, 11], "green": [3], "blue": [3]}
    q = 2 / 27
    further = 0.0
    for _ in range(4 - 2):  # from 2 penalties: V_k = q*13 + (1-q)*(-5 + V_{k+1}), V_4 = 0
        further = q * 13 + (1 - q) * (-5 + further)
    banked = 28 + 15 + 1 + 1 - 10
    assert solver.expected_score(sheet(position, locks=["red"], penalties=2)) == pytest.approx(
        banked + further, abs=1e-4
    )


@pytest.mark.slow
def test_sheets_related_by_the_symmetries_are_worth_the_same(classic):
    # red <-> yellow, green <-> blue, and red/yellow <-> green/blue with mirrored numbers (14 - x)
    base = {"red": [3, 6], "yellow": [5], "green": [11, 9, 8], "blue": []}
    swapped = {"red": [5], "yellow": [3, 6], "green": [], "blue": [11, 9, 8]}
    mirrored = {"red": [3, 5, 6], "yellow": [], "green": [11, 8], "blue": [9]}
    values = [solver.expected_score(sheet(m, penalties=1)) for m in (base, swapped, mirrored)]
    assert values[0] == values[1] == values[2]


@pytest.mark.slow
def test_a_row_locked_by_another_player_is_closed(classic):
    open_ = solver.expected_score(sheet({"red": [2, 3]}))
    closed = solver.expected_score(sheet({"red": [2, 3]}), locked_rows=["green"])
    assert closed < open_


@pytest.mark.slow
def test_bad_sheets_are_refused(classic):
    with pytest.raises(ValueError, match="red has no number 13"):
        solver.expected_score(sheet({"red": [13]}))
    with pytest.raises(ValueError, match="lock"):
        solver.expected_score(sheet({"red": [2, 3]}, locks=["red"]))
    with pytest.raises(ValueError, match="purple"):
        solver.expected_score({"marks": {"purple": [2]}})
    with pytest.raises(ValueError, match=r"red marks \[2, 2\] cross a number twice"):
        solver.expected_score(sheet({"red": [2, 2]}))  # was read as another row's value
    with pytest.raises(ValueError, match=r"red crosses its lock cell 12 after 0 crosses; it needs 5 first"):
        solver.expected_score(sheet({"red": [12]}, locks=["red"]))
    for bad in (1.7, True, -1, 4.0):
        with pytest.raises(ValueError, match=r"penalties .*; expected a whole number from 0 to 4"):
            solver.expected_score({"marks": {}, "penalties": bad})


def test_longo_is_not_solved():
    with pytest.raises(ValueError, match="lucky numbers"):
        solver.load_table("longo")


# Sheets of other shapes, defined here alone: the solver's state space is built on the classic
# sheet's symmetries, so it refuses them by name, before any solve.
UP, DOWN = tuple(range(2, 13)), tuple(range(12, 1, -1))
OTHER_SHEETS = {
    "solver_three_rows": (Row("red", UP), Row("yellow", UP), Row("green", DOWN)),
    "solver_mixed_cells": (Row("red", UP, colors=("red", "yellow") * 5 + ("red",)), Row("yellow", UP),
                           Row("green", DOWN), Row("blue", DOWN)),
    "solver_all_ascending": tuple(Row(c, UP) for c in COLORS),
}
for _name, _rows in OTHER_SHEETS.items():
    register_variant(Variant(name=_name, faces=6, lock_cells=1, lock_threshold=5, score_table=triangular(12),
                             rows=_rows))


@pytest.mark.parametrize("name, problem", [
    ("solver_three_rows", r"which has 3 rows \('red', 'yellow', 'green'\)"),
    ("solver_mixed_cells", r"whose rows are crossed with the dice \{'red': \['red', 'yellow'\], 'yellow': "),
    ("solver_all_ascending", r"whose row 'green' has the numbers \[2, 3, .*, 12\], not \[12, 11, .*, 2\]"),
])
def test_a_sheet_of_another_shape_is_refused_by_the_solver_and_the_bot(name, problem, monkeypatch):
    monkeypatch.setattr(solver_table.dp, "solve_values", lambda *a: pytest.fail("a solve started"))
    covers = r"the solo solver covers the classic sheet's shape only: four rows of the numbers 2 to 12, two ascending"
    for attempt in (lambda: solver.load_table(name), lambda: solver.solve(name),
                    lambda: solver.expected_score({"marks": {}}, variant=name)):
        with pytest.raises(ValueError, match=f"{covers}.*; got '{name}', {problem}"):
            attempt()
    bot_refuses = f"variant: got '{name}'; the solo_optimal bot plays 'classic' only"
    with pytest.raises(ValueError, match=f"{bot_refuses}.*{problem}"):
        bots.make("solo_optimal", variant=name)


def test_a_mismatched_cache_file_is_solved_again(tmp_path):
    v = reduced(2, lock_threshold=1)
    path = table_path(v, tmp_path)
    other = reduced(2, lock_threshold=2)
    ValueTable(other, np.zeros((make_space(other).num_combos, 4))).save(path)  # stale rules
    with pytest.warns(UserWarning, match="solving again"):
        table = load_table(v, directory=tmp_path)
    assert table.root == pytest.approx(solver.solve(v).root, abs=1e-5)
    assert ValueTable.load(path, v).root == pytest.approx(table.root)


def test_a_first_solve_says_what_it_does_how_long_and_where_once(tmp_path, caplog):
    v = reduced(2, lock_threshold=1)
    with caplog.at_level(logging.WARNING, logger="qwixx_env"):
        load_table(v, directory=tmp_path)
        solver_table._LOADED.clear()  # as a new process: from the file, silently
        load_table(v, directory=tmp_path)
        load_table(v, directory=tmp_path / "other", progress=lambda done, total: None)  # the caller shows progress
    (record,) = [r for r in caplog.records if "solving" in r.getMessage()]  # not the kernels' notice
    assert record.name == "qwixx_env"
    assert re.search(r"solving the solo .* table once \(about \d+ to \d+ s\); cached at ", record.getMessage())
    assert record.getMessage().endswith(str(table_path(v, tmp_path)))


@pytest.mark.parametrize("damage", ["truncated", "empty", "root", "nan", "encrypted flag"])
def test_a_damaged_or_altered_cache_file_is_solved_again_not_believed(tmp_path, damage):
    v = reduced(2, lock_threshold=1)
    good = solver.solve(v)
    path = table_path(v, tmp_path)
    good.save(path)
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "encrypted flag":  # one bit of the zip's directory: zipfile raises RuntimeError
        data = bytearray(path.read_bytes())
        data[data.find(b"PK\x01\x02") + 8] |= 0x1
        path.write_bytes(bytes(data))
    else:
        values = good.values.astype(np.float32).copy()
        root = 200.0 if damage == "root" else good.root
        if damage == "nan":
            values[1, 0] = np.nan
        ValueTable(v, values, root=root).save(path)  # a consistent zip, altered contents
    with pytest.warns(UserWarning, match="solving again"):
        table = load_table(v, directory=tmp_path)
    assert table.root == pytest.approx(good.root, abs=1e-5)
    assert ValueTable.load(path, v).root == pytest.approx(good.root, abs=1e-5)  # replaced by a good one


def test_a_table_whose_rows_fall_before_they_rise_is_loaded_back_not_solved_again(tmp_path):
    # One cross costs 30 points and the lock wins them back: a sheet with a cross can gain
    # more than the table's highest entry (0), and the value check must allow that.
    v = reduced(2, lock_threshold=1, score_table=(0, -30, -30, -30, 0))
    good = load_table(v, directory=tmp_path)
    assert good.values.max() > 4 * max(v.score_table)
    solver.table._LOADED.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a "solving again" warning fails the test
        again = load_table(v, directory=tmp_path)
    assert again.solve_seconds is None  # read from the file
    assert np.array_equal(again.values, good.values)
    low, high = solver.table.further_bounds(v)
    assert (low, high) == (-v.penalty_points * v.max_penalties, 4 * 30)
    assert low <= good.values.min() and good.values.max() <= high
    for altered in (high + 1, low - 1):  # a gain or a loss this table cannot give
        values = good.values.copy()
        values[1, 0] = altered
        ValueTable(v, values, root=good.root).save(table_path(v, tmp_path))
        with pytest.raises(ValueError, match="outside"):
            ValueTable.load(table_path(v, tmp_path), v)


# --- the bot ----------------------------------------------------------------------------------


def observe(v, players, dice, phase="white", active=0, seat=0, white=None):
    """The observation dict of `seat`, to decide, in a hand-set position.

    Dice are (white, white, red, yellow, green, blue); `white` is the active player's white
    action of this roll (an action index) when the position is in the colour action.
    """
    snap = {
        "num_players": len(players),
        "players": players,
        "dice": {"white": list(dice[:2]), **dict(zip(COLORS, dice[2:]))},
        "phase": phase,
        "active_player": active,
    }
    st = state_from_snapshot(v, snap)
    st.turn[0] = seat
    if white is not None:
        st.pending[0, active] = white
    layout = layout_for(v, len(players))
    obs = layout.encode(st, np.array([seat]))[0]
    return {"observation": obs, "action_mask": rules.legal_mask(v, st)[0]}


def crossable(v, marks, color, number):
    """Rules 4 and 5 on a sheet of crossed numbers."""
    r = COLORS.index(color)
    cells = [int(v.tables.cell_of[r, x]) for x in marks[color]]
    c = int(v.tables.cell_of[r, number])
    locked = v.cells - 1 in cells
    return (
        not locked and (not cells or c > max(cells)) and (c < v.cells - 1 or len(cells) >= v.lock_threshold)
    )


def worth(table, marks, penalties):
    """The table's expected final score of a sheet of crossed numbers (locks follow the lock cells)."""
    locks = [c for r, c in enumerate(COLORS) if table.variant.lock_numbers[r][0] in marks[c]]
    return table.expected_score({"marks": marks, "locks": locks, "penalties": penalties})


def roll_values(table, marks, penalties, dice):
    """{(white mark, colour mark): expected final score} for every legal pair of one solo roll.

    A mark is None (pass) or (colour, number). In these positions a white cross locks at most
    one row, so the colour action always follows (a locked row is not `crossable`).
    """
    v = table.variant
    w1, w2 = dice[:2]
    values = {}
    for white in [None, *COLORS]:
        if white is not None and not crossable(v, marks, white, w1 + w2):
            continue
        after_white = {c: marks[c] + ([w1 + w2] if c == white else []) for c in COLORS}
        colours = [None] + [(c, w + dice[2 + r]) for r, c in enumerate(COLORS) for w in (w1, w2)]
        for colour in colours:
            if colour is not None and not crossable(v, after_white, *colour):
                continue
            after = {c: after_white[c] + ([colour[1]] if colour and c == colour[0] else []) for c in COLORS}
            penalty = white is None and colour is None
            white_mark = white and (white, w1 + w2)
            values[(white_mark, colour)] = worth(table, after, penalties + penalty)
    return values


@pytest.mark.slow
@pytest.mark.parametrize(
    "marks, dice",
    [
        ({"red": [2, 4], "yellow": [3], "green": [12, 10], "blue": [11]}, (3, 4, 2, 5, 1, 6)),
        ({"red": [2, 3, 5, 6, 7], "yellow": [4, 6, 7], "green": [12], "blue": []}, (6, 5, 6, 1, 3, 3)),
        ({"red": [], "yellow": [], "green": [], "blue": []}, (1, 1, 1, 6, 6, 1)),
        (
            {"red": [2, 3, 4, 5, 6, 8], "yellow": [], "green": [12, 10, 8, 7, 6], "blue": []},
            (6, 6, 6, 2, 1, 4),
        ),
    ],
)
def test_the_bot_plays_the_best_pair_of_crosses_by_the_table(classic, marks, dice):
    v = classic.variant
    marks = {c: marks.get(c, []) for c in COLORS}
    values = roll_values(classic, marks, 1, dice)
    best = max(values.values())
    bot = bots.make("solo_optimal", num_players=1)

    white = bot.act(observe(v, [{"marks": marks, "penalties": 1}], dice))
    white_mark = decode_action(white, v)
    assert max(val for (w, _), val in values.items() if w == white_mark) == pytest.approx(best, abs=1e-4)

    committed = {c: marks[c] + ([white_mark[1]] if white_mark and c == white_mark[0] else []) for c in COLORS}
    colour = bot.act(observe(v, [{"marks": committed, "penalties": 1}], dice, phase="color", white=white))
    assert values[(white_mark, decode_action(colour, v))] == pytest.approx(best, abs=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize(
    "white_dice, expected",
    [((1, 1), ("yellow", 2)), ((3, 4), None)],
    ids=["takes-a-first-number", "skips-nothing-for-a-seven"],
)
def test_on_another_players_roll_the_bot_crosses_only_what_the_table_gains(classic, white_dice, expected):
    v = classic.variant
    me = {"red": [2, 3], "yellow": [], "green": [12, 11], "blue": [12]}
    other = {"marks": {c: [] for c in COLORS}}
    options = {None: worth(classic, me, 0)}  # no penalty on another player's roll
    for c in COLORS:
        if crossable(v, me, c, sum(white_dice)):
            options[(c, sum(white_dice))] = worth(classic, {**me, c: me[c] + [sum(white_dice)]}, 0)
    assert max(options, key=options.get) == expected

    bot = bots.make("solo_optimal", num_players=2)
    obs = observe(v, [{"marks": me}, other], (*white_dice, 3, 3, 3, 3), active=1, seat=0)
    assert bot.act(obs) == encode_action(expected, v)


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [1, 3])
def test_the_bot_only_plays_legal_actions(classic, num_players):
    env = qwixx_v0.raw_env(num_players=num_players)  # raw: an illegal action raises
    players = [bots.make("solo_optimal", num_players=num_players)] + [
        bots.make("random", num_players=num_players, seed=s) for s in range(num_players - 1)
    ]
    for seed in range(20):
        play_game(env, players, seed=seed)


@pytest.mark.slow
def test_the_bot_scores_the_table_value_in_seeded_solo_games(classic):
    env = qwixx_v0.env(num_players=1)
    bot = bots.make("solo_optimal", num_players=1)
    scores = []
    for seed in range(400):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            env.step(None if term or trunc else bot.act(obs))
        scores.append(reward)  # solo: the final score
    standard_error = np.std(scores) / np.sqrt(len(scores))
    assert abs(np.mean(scores) - classic.root) < 4 * standard_error  # 100,000 games: benchmarks/


@pytest.mark.parametrize("options, message", [
    ({"rebuild": "x"}, r"rebuild: got 'x'; expected true or false"),
    ({"directory": 5}, r"directory: got 5; expected the solver's cache folder"),
    ({"foo": 1}, r"got parameter\(s\) \['foo'\]; it accepts \['directory', 'rebuild'\]"),
])
def test_the_bots_table_options_are_checked_by_name_and_type(options, message, monkeypatch):
    monkeypatch.setattr(solo_optimal_bot, "load_table", lambda *a, **k: pytest.fail("a table was loaded"))
    with pytest.raises(ValueError, match=message):
        bots.make("solo_optimal", **options)


@pytest.mark.slow
def test_rebuild_solves_the_bots_table_again_once_per_process(monkeypatch, classic):
    calls = []
    monkeypatch.setattr(solo_optimal_bot, "_REBUILT", set())
    monkeypatch.setattr(solo_optimal_bot, "load_table", lambda v, **k: calls.append(k["rebuild"]) or classic)
    for _ in range(3):  # an arena makes one bot per game
        bots.make("solo_optimal", rebuild=True)
    assert calls == [True, False, False]


def test_the_bot_refuses_longo():
    with pytest.raises(ValueError, match="classic"):
        bots.make("solo_optimal", variant="longo")


# --- the command line -------------------------------------------------------------------------


@pytest.mark.slow
def test_qwixx_solve_prints_the_value_and_a_sheet_value(classic, capsys):
    assert cli.main(["solve", "--sheet", '{"marks": {"red": [2]}, "penalties": 0}']) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"optimal expected solo score (classic): {classic.root:.4f}\n")  # no blank line first
    assert f"{solver.expected_score(sheet({'red': [2]})):.4f}" in out


def test_qwixx_solve_refuses_a_file_as_cache_dir_before_solving(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(solver_table, "solve", lambda *a, **k: pytest.fail("solved before refusing"))
    (tmp_path / "a_file").write_text("")
    assert cli.main(["solve", "--cache-dir", str(tmp_path / "a_file")]) == 2
    assert "qwixx solve: directory: " in (err := capsys.readouterr().err) and "a_file' is not a folder" in err
    with pytest.raises(ValueError, match=r"directory: .*a_file' is not a folder; expected a folder to keep"):
        load_table(reduced(2, lock_threshold=1), directory=tmp_path / "a_file")


@pytest.mark.slow
@pytest.mark.parametrize("text, message", [
    ('{"markz": {"red": [2]}}', r"sheet: got field\(s\) \['markz'\]; expected some of \['marks'"),
    ("[1]", r"sheet: got \[1\]; expected an object like one player of a snapshot"),
    ('{"locked_rows": 5}', r"sheet: locked_rows 5; expected a list of row names"),
    ('{"marks": {"red": 2}}', r"sheet: marks \{'red': 2\}; expected an object of rows to lists"),
    ('{"locks": "red"}', r"sheet: locks 'red'; expected a list of row names"),
    ('{"marks": {"red": [2.0]}}', r"sheet: red has no number 2.0"),
    ("{marks", r"--sheet: not JSON"),
])
def test_qwixx_solve_names_what_is_wrong_with_a_sheet(classic, capsys, monkeypatch, text, message):
    if "2.0" not in text:  # the shape is checked before the table is even loaded
        monkeypatch.setattr(cli_solver, "load_table", lambda *a, **k: pytest.fail("loaded before refusing"))
    assert cli.main(["solve", "--sheet", text]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_qwixx_solve_refuses_longo(capsys):
    assert cli.main(["solve", "--variant", "longo"]) == 2
    assert "lucky numbers" in capsys.readouterr().err


def test_concurrent_first_callers_share_one_solve(tmp_path, monkeypatch):
    """Three threads asking for a table nobody has solved: one solves (slowly here), the
    others wait for it and get the same table; one file is written."""
    solves = []
    real_solve = solver_table.solve

    def slow_solve(*args, **kwargs):
        solves.append(1)
        time.sleep(0.3)  # long enough for every caller to be waiting
        return real_solve(*args, **kwargs)

    monkeypatch.setattr(solver_table, "solve", slow_solve)
    v = reduced(2, lock_threshold=1)
    got = []
    callers = [threading.Thread(target=lambda: got.append(load_table(v, directory=tmp_path))) for _ in range(3)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(timeout=60)
    assert len(solves) == 1 and len(got) == 3 and all(table is got[0] for table in got)
    assert [p.name for p in tmp_path.iterdir()] == [table_path(v, tmp_path).name]
