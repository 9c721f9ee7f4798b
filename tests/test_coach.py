"""The coach (`qwixx_env.play.coach`): each option's value from the best source for the table,
checked against that source computed independently, and the review of a game record.

Solo positions are hand-set and valued here by enumerating the options from the rules as
written (a number right of the row's crosses; the lock cell after 5 crosses; a penalty when the
active player crosses nothing) with `solver.expected_score` on each resulting sheet.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from qwixx_env import CLASSIC, bots, encode_action, qwixx_v0, replay
from qwixx_env.core import COLORS, rules
from qwixx_env.core.observation import ObservationView, state_from_observation
from qwixx_env.nets import win_chance_network
from qwixx_env.play import coach
from qwixx_env.policies.afterstate import action_values
from qwixx_env.policies.heuristic import weights_array
from qwixx_env.policies.scratch import new_scratch

from conftest import position

ROW = {c: CLASSIC.row_numbers[r] for r, c in enumerate(COLORS)}


def env_at(st, **options):
    """A raw env standing at the hand-set one-game state `st`."""
    env = qwixx_v0.raw_env(num_players=st.num_players, **options)
    env.reset(seed=0)
    env.core_state.copy_from(st)
    rules.legal_mask(env.variant, env.core_state, env._mask)
    env._after_decision()
    return env


def sheet_of(marks, locks=(), penalties=0):
    return {"marks": {c: list(marks.get(c, [])) for c in COLORS}, "locks": list(locks), "penalties": penalties}


def may_cross(sheet, color, number):
    """Rules 4 and 5: right of every cross in the row; the lock cell after 5 crosses; not in a locked row."""
    row, marks = ROW[color], sheet["marks"][color]
    if color in sheet["locks"]:
        return False
    right = row.index(number) > max((row.index(m) for m in marks), default=-1)
    return right and (number != row[-1] or len(marks) >= 5)


def crossed(sheet, color, number):
    after = copy.deepcopy(sheet)
    after["marks"][color].append(number)
    if number == ROW[color][-1]:
        after["locks"].append(color)
    return after


def with_penalty(sheet):
    return {**copy.deepcopy(sheet), "penalties": sheet["penalties"] + 1}


def color_value(table, sheet, dice, white_crossed):
    """The best colour option on `sheet` (rows locked in it are out of play): pass (a penalty
    unless the white action crossed) or a white die + the row's die."""
    best = table.expected_score(sheet if white_crossed else with_penalty(sheet))
    for color, die in zip(COLORS, dice[2:]):
        for white in dice[:2]:
            if die is not None and may_cross(sheet, color, white + die):
                best = max(best, table.expected_score(crossed(sheet, color, white + die)))
    return best


def white_values(table, sheet, dice):
    """{label: value} of every white option of the active solo player, each with the best
    colour option after it (none if the white cross locks a second row: the game ends)."""
    total = dice[0] + dice[1]
    values = {"p": color_value(table, sheet, dice, False)}
    for color in COLORS:
        if may_cross(sheet, color, total):
            after = crossed(sheet, color, total)
            ends = len(after["locks"]) >= 2
            label = f"{color[0]}{total}"
            values[label] = table.expected_score(after) if ends else color_value(table, after, dice, True)
    return values


def solo_env(sheet, dice, phase="white", white_crossed=None):
    st = position(CLASSIC, [{**sheet["marks"], "locks": sheet["locks"], "penalties": sheet["penalties"]}],
                  dice, phase=phase)
    if white_crossed is not None:
        st.pending[0, 0] = encode_action(white_crossed)  # the white action's cross, already on the sheet
    return env_at(st)


# --- solo: the solver --------------------------------------------------------------------------

SOLO_WHITE = [
    # red    [2] [3]  4  [5]  6  7 ...        green [12] 11 ...   one penalty; white 3 + 4 = 7
    (sheet_of({"red": [2, 3, 5], "green": [12]}, penalties=1), (3, 4, 2, 1, 6, 5)),
    # red has 5 crosses, blue is locked: r12 locks a second row and ends the game at once
    (sheet_of({"red": [2, 3, 4, 5, 6], "blue": [12, 11, 10, 9, 8, 2], "yellow": [4]}, locks=["blue"]),
     (6, 6, 5, 1, 3, None)),
    # three penalties: passing both actions ends the game with a fourth
    (sheet_of({"yellow": [2, 3], "green": [12, 10, 9]}, penalties=3), (1, 1, 6, 6, 6, 6)),
]


@pytest.mark.parametrize("sheet, dice", SOLO_WHITE)
def test_solo_white_values_are_the_expected_final_scores_by_the_solver(classic, sheet, dice):
    advice = coach.advise(solo_env(sheet, dice), seat=0)
    want = white_values(classic, sheet, dice)
    assert advice.source.name == "solver" and advice.source.unit == "points"
    assert {o.label: o.value for o in advice.options} == pytest.approx(want, abs=1e-9)
    best = max(want.values())
    assert {o.label: o.loss for o in advice.options} == pytest.approx({k: best - v for k, v in want.items()}, abs=1e-9)
    assert advice.option(advice.best_action).loss == 0.0
    assert min(o.loss for o in advice.options) == 0.0


@pytest.mark.parametrize("white_crossed", [None, ("yellow", 8)])
def test_solo_color_values_count_the_penalty_only_without_a_white_cross(classic, white_crossed):
    sheet = sheet_of({"red": [2, 4], "yellow": [3, 8]}, penalties=2)
    dice = (2, 5, 3, 1, 4, 6)
    advice = coach.advise(solo_env(sheet, dice, phase="color", white_crossed=white_crossed))
    want = {"p": classic.expected_score(sheet if white_crossed else with_penalty(sheet))}
    for color, die in zip(COLORS, dice[2:]):
        for white in dice[:2]:
            if may_cross(sheet, color, white + die):
                want[f"{color[0]}{white + die}"] = classic.expected_score(crossed(sheet, color, white + die))
    assert {o.label: o.value for o in advice.options} == pytest.approx(want, abs=1e-9)
    assert advice.phase == "color" and advice.option(advice.best_action).loss == 0.0


def test_the_optimal_bots_choice_has_no_regret(classic):
    env = qwixx_v0.raw_env(num_players=1)
    env.reset(seed=3)
    optimal = bots.make("solo_optimal", num_players=1)
    for _ in range(12):
        advice = coach.advise(env, bot="solo_optimal")
        assert advice.bot_action == optimal.act(env.observe("player_0"))
        assert advice.option(advice.bot_action).loss == pytest.approx(0.0, abs=1e-9)
        env.step(advice.bot_action)


# --- 2 to 4 players classic: the afterstate network -------------------------------------------


@pytest.mark.parametrize("num_players", [2, 3])
def test_multiplayer_classic_values_are_the_afterstate_networks_win_chances(num_players):
    env = qwixx_v0.raw_env(num_players=num_players)
    env.reset(seed=11)
    net = win_chance_network("afterstate", "classic", num_players)
    ws = new_scratch(CLASSIC, num_players, net)
    checked = 0
    while checked < 8:
        seat = int(env.core_state.turn[0])
        obs = env.observe(env.agent_selection)
        advice = coach.advise(env, seat=seat, bot="afterstate")
        # the network's ratings, computed on the position rebuilt from the observation
        st = state_from_observation(ObservationView(obs, CLASSIC, num_players))
        values = np.zeros(CLASSIC.num_actions)
        action_values(st, CLASSIC.tables, 0, obs["action_mask"], weights_array(), net, values, ws)
        legal = np.flatnonzero(obs["action_mask"])
        assert [o.action for o in advice.options] == legal.tolist()
        assert [o.value for o in advice.options] == pytest.approx(values[legal].tolist(), abs=1e-12)
        assert advice.source.name == "afterstate" and all(0.0 <= o.value <= 1.0 for o in advice.options)
        assert advice.bot_action == advice.best_action  # the afterstate bot plays the best-rated option
        env.step(advice.best_action)
        checked += 1


# --- elsewhere: the heuristic ----------------------------------------------------------------


@pytest.mark.parametrize("options", [dict(num_players=2, variant="longo"), dict(num_players=5),
                                     dict(num_players=1, variant="longo", lucky="instead"),
                                     dict(num_players=1, score_table=[2 * n for n in range(13)])])
def test_other_tables_get_the_heuristics_evaluation_whose_best_the_heuristic_plays(options):
    env = qwixx_v0.raw_env(**options)
    env.reset(seed=5)
    for _ in range(25):
        advice = coach.advise(env, bot="heuristic")
        assert advice.source.name == "heuristic" and advice.source.unit == "heuristic points"
        assert advice.bot_action == advice.best_action
        assert advice.option(advice.best_action).loss == 0.0 and min(o.loss for o in advice.options) >= 0.0
        env.step(advice.best_action)


# --- bad input -------------------------------------------------------------------------------


def test_a_finished_game_is_refused():
    env = qwixx_v0.raw_env(num_players=1)
    env.reset(seed=0)
    while env.legal_actions():
        env.step(env.legal_actions()[0])  # always pass: four penalties end it
    with pytest.raises(ValueError, match="the game is over"):
        coach.advise(env)
    with pytest.raises(ValueError, match="the game is over"):
        coach.bot_choice(env, "heuristic")


def test_a_seat_not_deciding_and_bad_bots_are_refused_by_name():
    env = qwixx_v0.raw_env(num_players=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="seat: got 1, but seat 0 is to decide now"):
        coach.advise(env, seat=1)
    with pytest.raises(ValueError, match=r"seat: got 2; expected a seat number from 0 to 1"):
        coach.advise(env, seat=2)
    with pytest.raises(ValueError, match=r"bot: got 'nobody'; expected one of \['afterstate'"):
        coach.advise(env, bot="nobody")
    with pytest.raises(ValueError, match="bot 'ppo-longo-2p' cannot play this game.*variant"):
        coach.advise(env, bot="ppo-longo-2p")
    with pytest.raises(ValueError, match="expected a qwixx_v0 env"):
        coach.advise(object())


# --- the review of a game record --------------------------------------------------------------


def played_record(num_players, seed, human_bot="random"):
    """A finished game: seat 0 played by `human_bot` (mistakes to find), the others by heuristic."""
    env = qwixx_v0.raw_env(num_players=num_players)
    env.reset(seed=seed)
    players = [bots.make(human_bot, num_players=num_players, seed=seed)]
    players += [bots.make("heuristic", num_players=num_players)] * (num_players - 1)
    while env.legal_actions():
        seat = int(env.core_state.turn[0])
        env.step(players[seat].act(env.observe(env.agent_selection)))
    return env.record()


@pytest.mark.parametrize("num_players", [1, 2])
def test_the_review_values_every_decision_and_names_the_three_worst(classic, num_players):
    record = played_record(num_players, seed=7, human_bot="greedy")
    rev = coach.review(record, 0)
    mine = [i for i, (seat, _) in enumerate(record["decisions"]) if seat == 0]
    assert [d.index for d in rev.decisions] == mine
    losses = {}
    for d in rev.decisions[:12]:  # each loss is the coach's at that position, shown again
        again = coach.advise(coach.position(record, d.index), seat=0)
        assert record["decisions"][d.index] == [0, d.action]
        assert again.option(d.action).loss == pytest.approx(d.loss, abs=1e-12)
        assert d.best_value - d.value == pytest.approx(d.loss) and d.loss >= 0
    losses = sorted((d.loss for d in rev.decisions), reverse=True)
    assert [d.loss for d in rev.worst] == losses[:3]
    assert rev.total_loss == pytest.approx(sum(losses))
    assert rev.source.name == ("solver" if num_players == 1 else "afterstate")
    assert losses[0] > 0  # greedy makes mistakes the coach sees


def test_position_stands_where_the_record_did():
    record = played_record(2, seed=1)
    n = len(record["decisions"])
    assert coach.position(record, n).snapshot() == record["snapshot"]
    assert coach.position(record, n).snapshot() == replay(record).snapshot()
    with pytest.raises(ValueError, match=f"index: got {n + 1}; expected a decision index from 0 to {n}"):
        coach.position(record, n + 1)


def test_a_bad_record_or_seat_is_refused():
    record = played_record(2, seed=2)
    with pytest.raises(ValueError, match="seat: got 2; expected a seat number from 0 to 1"):
        coach.review(record, 2)
    broken = {**record, "decisions": [[0, 9999]]}
    with pytest.raises(ValueError, match="record decision 0"):
        coach.review(broken, 0)
