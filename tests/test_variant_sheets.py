"""A sheet is data: variants with three rows, or with cells of mixed colours, defined in this
file alone, play through every form of the game with no change to the package (issue 39).

Two made-up members of the Qwixx family:

- "three_rows_test": red and yellow ascending, blue descending, each crossed with its own
  die (three coloured dice); one locked row ends it.
- "mixed_test": four rows of the classic numbers whose cells take turns in four colours, as
  on the sheets of Qwixx "Mixx": a cell is crossed in the colour action with a white die and
  the die of *its* colour, and a row that locks takes the die of its lock cell out of play.

The rules tests build positions by hand (`state_from_snapshot`) and read the legal actions
from the rules; the play tests use PettingZoo's `api_test` and `parallel_api_test`, the
differential helpers of the batched and Parallel tests (same games as the AEC env, decision
by decision), the heuristic bot and a record's replay.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test
from test_batched import play_side_by_side
from test_parallel import play_both
from test_variant_registry import play_every_game_to_its_end

from qwixx_env import BatchedQwixx, QwixxVectorEnv, qwixx_v0, replay
from qwixx_env.bots import make_bot
from qwixx_env.core import CLASSIC, layout_for, new_state, observation, rules
from qwixx_env.core.options import TableOptions
from qwixx_env.core.snapshot import snapshot, state_from_snapshot
from qwixx_env.core.state import COLOR
from qwixx_env.core.variant import Row, Variant, decode_action, encode_action, variant_names

UP = tuple(range(2, 13))
DOWN = UP[::-1]
TRIANGULAR = tuple(k * (k + 1) // 2 for k in range(13))
COLOURS = ("red", "yellow", "green", "blue")

THREE_ROWS = Variant(
    name="three_rows_test", faces=6, lock_cells=1, lock_threshold=5, score_table=TRIANGULAR, rows_to_end=1,
    rows=(Row("red", UP), Row("yellow", UP), Row("blue", DOWN)),
)
MIXED = Variant(
    name="mixed_test", faces=6, lock_cells=1, lock_threshold=5, score_table=TRIANGULAR,
    rows=tuple(
        Row(name, numbers, colors=tuple(COLOURS[(i + shift) % 4] for i in range(11)))
        for name, numbers, shift in (("one", UP, 0), ("two", UP, 1), ("three", DOWN, 2), ("four", DOWN, 3))
    ),
)
# Handed to a table as values (which registers them under their names when a test runs, not
# at import, so the other tests' lists of variant names are the package's own).
VARIANTS = {"three_rows_test": THREE_ROWS, "mixed_test": MIXED}


def position(variant: Variant, *, phase: str, white: list[int], dice: dict, marks=None, locks=None,
             num_players: int = 2):
    """A hand-set position: seat 0 active with `marks` and `locks`, the other seats empty."""
    players = [{"marks": marks or {}, "locks": locks or [], "penalties": 0}]
    players += [{"marks": {}, "penalties": 0} for _ in range(num_players - 1)]
    snap = {"num_players": num_players, "phase": phase, "active_player": 0,
            "dice": {"white": white, **dice}, "players": players}
    return state_from_snapshot(variant, snap)


def legal_marks(variant: Variant, state) -> set:
    return {decode_action(int(a), variant) for a in np.flatnonzero(rules.legal_mask(variant, state)[0])}


# --- the sheet as data -------------------------------------------------------------------


def test_the_sheet_its_dice_and_its_action_space_come_from_the_rows():
    assert THREE_ROWS.row_names == ("red", "yellow", "blue") and THREE_ROWS.dice_colors == ("red", "yellow", "blue")
    assert THREE_ROWS.num_actions == 3 * 11 + 1 and THREE_ROWS.pass_action == 33
    assert MIXED.dice_colors == COLOURS and MIXED.die_names == ("white", "white", *COLOURS)
    assert MIXED.cell_colors[1][:3] == ("yellow", "green", "blue")
    assert encode_action(("two", 4), MIXED) == 11 + 2 and decode_action(11 + 2, MIXED) == ("two", 4)
    with pytest.raises(ValueError, match=r"mark: got row 'red'; expected one of \('one', 'two', 'three', 'four'\)"):
        encode_action(("red", 4), MIXED)
    env = qwixx_v0.env(num_players=2, variant=THREE_ROWS)
    env.reset(seed=0)
    view = env.unwrapped.layout
    assert view.shapes["crosses"] == (2, 3, 11) and view.shapes["dice"] == (5, 6)
    assert view.shapes["locked_rows"] == (3,) and view.shapes["pending_cross"] == (3, 11)
    assert set(env.unwrapped.snapshot()["dice"]) == {"white", "red", "yellow", "blue"}


@pytest.mark.parametrize(
    "rows, message",
    [
        ((Row("a", UP), Row("b", UP[:10])), r"row b: 10 numbers; every row needs 11"),
        ((Row("a", UP), Row("a", DOWN)), r"rows: names \['a', 'a'\]; expected each row to have a name of its own"),
        ((Row("a", (2, 3, 13)),), r"row a: numbers \(2, 3, 13\); expected 3 different sums of two 6-sided dice"),
        ((Row("a", (2, 3, 3)),), r"row a: numbers \(2, 3, 3\); expected 3 different sums"),
        ((Row("white", UP),), r"'white' names the two white dice"),
        ((("a", UP),), r"rows: got .*; expected a tuple of qwixx_env.core.variant.Row"),
    ],
)
def test_a_bad_sheet_is_refused_naming_what_is_wrong(rows, message):
    with pytest.raises(ValueError, match=message):
        Variant(name="bad", faces=6, lock_cells=1, lock_threshold=1, score_table=TRIANGULAR, rows=rows)


def test_a_row_needs_one_colour_per_cell():
    with pytest.raises(ValueError, match=r"row a: 2 colors for 11 numbers; expected one per cell"):
        Row("a", UP, colors=("red", "blue"))


# --- a state of another sheet is refused ---------------------------------------------------

FIVE_ROWS = Variant(
    name="five_rows_test", faces=6, lock_cells=1, lock_threshold=5, score_table=TRIANGULAR,
    max_penalties=3, rows_to_end=3,
    rows=(*(Row(c, UP if r < 2 else DOWN) for r, c in enumerate(COLOURS)), Row("purple", UP)),
)
ENTRY_POINTS = {
    "reset": lambda v, st: rules.reset(v, st),
    "legal_mask": lambda v, st: rules.legal_mask(v, st),
    "apply": lambda v, st: rules.apply(v, st, np.zeros(st.batch_size, np.int64)),
    "encode": lambda v, st: layout_for(v, st.num_players).encode(st, st.turn),
    "scores": lambda v, st: rules.scores(v, st),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_state_built_for_another_sheet_is_refused_naming_both_shapes(entry):
    # The README's core snippet without `variant=`: a state of the classic four rows and
    # dice, played on a sheet of five. The kernels would read and write past its arrays.
    st = new_state(num_players=2, batch_size=1024)
    with pytest.raises(ValueError, match=(
            r"state: its sheets have 4 rows and 4 coloured dice \(marks \(1024, 2, 4\), dice \(1024, 6\)\); "
            r"the five_rows_test sheet has 5 rows of 11 cells and 5 coloured dice: "
            r"build the state with new_state\(2, 1024, variant=...\)")):
        ENTRY_POINTS[entry](FIVE_ROWS, st)
    with pytest.raises(ValueError, match=r"state: its sheets have 3 rows and 3 coloured dice"):
        ENTRY_POINTS[entry](CLASSIC, new_state(2, 8, variant=THREE_ROWS))  # fewer rows than the sheet's


def test_a_state_field_of_another_shape_or_dtype_is_refused():
    st = new_state(2, 4, variant=THREE_ROWS)
    st = st._replace(penalties=st.penalties.astype(np.int64))
    with pytest.raises(ValueError, match=r"state.penalties: got \(4, 2\) int64; expected \(4, 2\) int8"):
        rules.scores(THREE_ROWS, st)
    st = new_state(2, 4, variant=THREE_ROWS)
    with pytest.raises(ValueError, match=r"out: got \(4, 3\) int64; expected a \(4, 2\) int64 array"):
        rules.scores(THREE_ROWS, st, out=np.zeros((4, 3), np.int64))
    with pytest.raises(ValueError, match=r"games: got indices from 0 to 4; expected 0 to 3"):
        rules.reset(THREE_ROWS, st, games=np.array([0, 4]))
    with pytest.raises(ValueError, match=r"actions: got actions from 0 to 34; expected 0 to 33 \(33 is pass\)"):
        rules.apply(THREE_ROWS, st, np.array([0, 0, 0, 34]))
    with pytest.raises(ValueError, match=r"seats: got \(4,\) int64; expected \(4,\) seats from 0 to 1"):
        layout_for(THREE_ROWS, 2).encode(st, np.array([0, 0, 0, 2]))
    frozen = st.marks.copy()
    frozen.flags.writeable = False  # numba would not compile apply's writes into it, naming no field
    with pytest.raises(ValueError, match=r"state.marks: a read-only array; the rules write the state in place"):
        rules.apply(THREE_ROWS, st._replace(marks=frozen), np.full(4, THREE_ROWS.pass_action))
    out = np.zeros((4, 2), np.int64)
    out.flags.writeable = False
    with pytest.raises(ValueError, match=r"out: a read-only \(4, 2\) int64 array; expected a writeable one"):
        rules.scores(THREE_ROWS, st, out=out)


def documented_shapes(text: str, pattern: str, **sizes: int) -> dict[str, tuple[int, ...]]:
    """The observation fields' shapes as a table in `text` writes them (``(P, R, K)``, ``(2 + D, F)``),
    worked out for these `sizes`."""
    shapes = {}
    for m in re.finditer(pattern, text, re.MULTILINE):
        words = [w.strip().replace("2F", "2 * F") for w in m["shape"].strip("()").split(",")]
        shapes[m["name"]] = tuple(eval(w, {}, sizes) for w in words if w)  # noqa: S307 (the docs' own words)
    return shapes


def test_the_observation_tables_give_the_shapes_the_layout_has():
    # Five rows, five coloured dice and three penalty boxes, unlike classic's four of each.
    layout = layout_for(FIVE_ROWS, 2)
    sizes = {"P": 2, "R": 5, "K": 11, "D": 5, "F": 6, "M": 3}
    module = documented_shapes(observation.__doc__ or "", r"^(?P<name>[a-z_]+) +(?P<shape>\([^)]*\))", **sizes)
    docs = (Path(__file__).parents[1] / "docs" / "environment.md").read_text()
    page = documented_shapes(docs, r"^\| `(?P<name>[a-z_]+)` \| (?P<shape>\([^)]*\))", **sizes)
    expected = {name: shape for name, shape in layout.shapes.items() if name != "lucky_numbers"}
    # lucky_numbers is (P, 0) on a sheet without them, as the tables say in words
    assert {n: s for n, s in module.items() if n != "lucky_numbers"} == expected
    assert {n: s for n, s in page.items() if n != "lucky_numbers"} == expected
    # A sheet with lucky numbers: classic's with six-sided dice, not Longo's eight (P, 2F-1)
    lucky = dataclasses.replace(CLASSIC, name="lucky_six_test", lucky_count=2, lucky_rule="bonus")
    sizes, want = {"P": 2, "R": 4, "K": 11, "D": 4, "F": 6, "M": 4}, layout_for(lucky, 2).shapes["lucky_numbers"]
    for text, pattern in ((docs, r"^\| `(?P<name>lucky_numbers)` \| (?P<shape>\([^)]*\))"),
                          (observation.__doc__ or "", r"^(?P<name>lucky_numbers) +(?P<shape>\([^)]*\))")):
        assert documented_shapes(text, pattern, **sizes) == {"lucky_numbers": want}


# --- the rules on a mixed sheet (hand-set dice and sheets) --------------------------------


def test_mixed_rule_a_cell_is_crossed_with_the_die_of_its_own_colour():
    # White 1 and 2; red 3, yellow 4, green 5, blue 6. The colour sums: white + red 4 or 5,
    # white + yellow 5 or 6, white + green 6 or 7, white + blue 7 or 8.
    state = position(MIXED, phase="color", white=[1, 2], dice={"red": 3, "yellow": 4, "green": 5, "blue": 6})
    legal = legal_marks(MIXED, state) - {None}
    expected = set()
    for row in MIXED.rows:
        for number, colour in zip(row.numbers, row.colors):
            die = {"red": 3, "yellow": 4, "green": 5, "blue": 6}[colour]
            if number - die in (1, 2):
                expected.add((row.name, number))
    assert legal == expected and len(expected) > 4
    # Row "one" reads red, yellow, green, blue, red, ... from 2, so its 5 is blue: the sum 5
    # (white 1 + yellow 4, or white 2 + red 3) is not in a colour that reaches it. Row "two"
    # starts a colour later, so its 5 is red: white 2 + red 3.
    assert ("one", 5) not in legal and ("two", 5) in legal
    assert not any(row == "one" for row, _ in legal)  # no colour sum meets its own colour in row one


def test_mixed_rule_the_white_action_crosses_the_white_sum_in_any_colour():
    state = position(MIXED, phase="white", white=[3, 4], dice={"red": 1, "yellow": 1, "green": 1, "blue": 1})
    assert legal_marks(MIXED, state) == {None, ("one", 7), ("two", 7), ("three", 7), ("four", 7)}


def test_mixed_rule_a_locked_row_takes_the_die_of_its_lock_cell_out_of_play():
    # Seat 0 has five crosses in row "one" and crosses its lock cell, the green 12, in the
    # white action (white 6 and 6); the green die leaves play, though other rows use it.
    lock_colour = MIXED.rows[0].colors[-1]
    assert lock_colour == "green"
    five = {"one": [2, 3, 4, 5, 6]}
    state = position(MIXED, phase="white", white=[6, 6], dice={c: 2 for c in COLOURS}, marks=five)
    engine_actions = [encode_action(("one", 12), MIXED), MIXED.pass_action]  # seat 0 locks, seat 1 passes
    for action in engine_actions:
        assert rules.legal_mask(MIXED, state)[0, action]
        rules.apply(MIXED, state, np.array([action]))
    snap = snapshot(MIXED, state)
    assert snap["locked_rows"] == ["one"] and snap["phase"] == "color"
    assert snap["dice"][lock_colour] is None  # out of play at once (rule 8)
    assert all(snap["dice"][c] == 2 for c in COLOURS if c != lock_colour)  # the row's other colours stay
    # The colour action: nothing in the locked row, though its other cells' dice are in play.
    assert all(mark is None or mark[0] != "one" for mark in legal_marks(MIXED, state))


def test_three_rows_rule_one_locked_row_ends_this_sheet():
    five = {"blue": [12, 11, 10, 9, 8]}
    state = position(THREE_ROWS, phase="color", white=[1, 1], dice={"red": 5, "yellow": 5, "blue": 1}, marks=five)
    lock = encode_action(("blue", 2), THREE_ROWS)
    assert rules.legal_mask(THREE_ROWS, state)[0, lock]
    rules.apply(THREE_ROWS, state, np.array([lock]))
    snap = snapshot(THREE_ROWS, state)
    assert snap["phase"] == "over" and snap["locked_rows"] == ["blue"]
    assert snap["players"][0]["score"] == TRIANGULAR[7]  # six crosses and the lock


# --- every form of the game plays it -------------------------------------------------------


@pytest.mark.parametrize("name", list(VARIANTS))
def test_it_passes_the_pettingzoo_api_tests(name):
    api_test(qwixx_v0.env(num_players=3, variant=VARIANTS[name]), num_cycles=300)
    assert name in variant_names()  # registered by the table: now it is named
    api_test(qwixx_v0.env(num_players=2, variant=name), num_cycles=100)
    parallel_api_test(qwixx_v0.parallel_env(num_players=2, variant=VARIANTS[name]), num_cycles=300)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_batched_engine_plays_the_aec_envs_games(name):
    phases = play_side_by_side({"num_players": 3, "variant": VARIANTS[name]}, seed=11, num_games=2)
    assert {"white", "color"} <= phases


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_parallel_view_plays_the_aec_envs_games(name):
    for seed in range(3):
        kinds = play_both({"num_players": 3, "variant": VARIANTS[name], "reward": "score"}, seed)
        assert kinds["white"] and kinds["color"]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_heuristic_plays_it_to_the_end_and_the_record_replays(name):
    table = TableOptions(num_players=3, variant=VARIANTS[name])
    bots = [make_bot("heuristic", table, seed=s) for s in range(3)]
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


def test_the_batched_engine_runs_many_games_of_it_to_the_end():
    engine = BatchedQwixx(64, num_players=2, variant=MIXED, autoreset=False)
    play_every_game_to_its_end(engine, seed=0, action_seed=2)
    locked = [snapshot(MIXED, engine.state, b)["locked_rows"] for b in range(64)]
    assert any(locked), "no game locked a row: the lock rule went untested"


@pytest.mark.parametrize("name", ["classic", "longo"])
def test_the_masks_fast_path_for_own_dice_sheets_equals_the_general_enumeration(name):
    # A sheet whose row r is crossed with die r alone takes a fast path in the legal mask;
    # the same tables with the flag off take the enumeration of (row, die) pairs every other
    # sheet uses. Over the positions of random batched games they must agree.
    engine = BatchedQwixx(256, num_players=3, variant=name)
    engine.reset(seed=4)
    tables = engine.variant.tables
    assert tables.own_dice and not MIXED.tables.own_dice
    general = tables._replace(own_dice=False)
    rng = np.random.default_rng(5)
    colour_positions = 0
    for _ in range(60):
        fast, slow = rules.legal_mask(engine.variant, engine.state), np.empty_like(engine.masks)
        rules.mask_batch(engine.state, general, slow)
        np.testing.assert_array_equal(fast, slow)
        colour_positions += int((engine.state.phase == COLOR).sum())
        engine.step(np.array([rng.choice(np.flatnonzero(m)) for m in engine.masks]))
    assert colour_positions > 1000


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_vector_env_plays_it_against_the_scripted_bots(name):
    env = QwixxVectorEnv(16, num_players=3, variant=VARIANTS[name], opponents={"heuristic": 1, "greedy": 1})
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(200):
        masks = obs["action_mask"]
        assert masks.any(axis=1).all()  # the learner always has a decision (pass at least)
        obs, _, terminated, truncated, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        assert not truncated.any()
        finished += int(terminated.sum())
    assert finished >= 16  # about 30 learner decisions a game: many games played to their end
