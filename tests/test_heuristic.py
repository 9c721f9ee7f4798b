"""The `heuristic` bot: legal play everywhere, the clear choices of hand-set positions, and the
bot from observations playing exactly as its kernel on the engine state.

Sheets are drawn in comments as ``red [2][3] 4 5 ...`` ([n] crossed) and dice are written
(white, white, red, yellow, green, blue).
"""

from __future__ import annotations

import numpy as np
import pytest

from qwixx_env import BatchedQwixx, bots, qwixx_v0
from qwixx_env.core import CLASSIC, WHITE, decode_action, encode_action, rules
from qwixx_env.policies.heuristic import DEFAULT_WEIGHTS, WEIGHT_NAMES, heuristic_action, weights_array
from qwixx_env.policies.scratch import new_scratch

from conftest import play_game, position, random_legal_actions

CONFIGS = [
    dict(num_players=1, variant="classic"),
    dict(num_players=2, variant="classic"),
    dict(num_players=3, variant="classic"),
    dict(num_players=5, variant="classic"),
    dict(num_players=2, variant="longo", lucky="bonus"),
    dict(num_players=4, variant="longo", lucky="bonus"),
    dict(num_players=3, variant="longo", lucky="instead"),
]
IDS = ["-".join(map(str, c.values())) for c in CONFIGS]


def decide(st):
    """The default heuristic's decision for the seat to decide, as a mark (None is pass)."""
    mask = rules.legal_mask(CLASSIC, st)[0]
    action = int(
        heuristic_action(st, CLASSIC.tables, 0, mask, weights_array(), new_scratch(CLASSIC, st.num_players))
    )
    assert mask[action]
    return decode_action(action, CLASSIC)


def heuristic_bot(config, seed=None):
    """The heuristic bot for an environment configuration."""
    return bots.make(
        "heuristic", variant=config["variant"], num_players=config["num_players"], seed=seed,
        lucky=config.get("lucky", "bonus"),
    )


def heuristic_game(config, seed):
    """One game of heuristic bots through the raw AEC env (an illegal action would raise);
    returns every decision taken."""
    players = [heuristic_bot(config, seed=s) for s in range(config["num_players"])]
    decisions = play_game(qwixx_v0.raw_env(**config), players, seed=seed)
    for obs, action in decisions:
        assert obs["action_mask"][action] == 1
    return [action for _, action in decisions]


# --- legal play ------------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_heuristic_picks_only_legal_actions_through_the_aec_env(config):
    for game in range(3):
        assert heuristic_game(config, game)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_bot_from_observations_plays_as_the_kernel_on_the_engine_state(config):
    bot = heuristic_bot(config)
    engine = BatchedQwixx(16, **config)
    engine.reset(seed=3)
    rng = np.random.default_rng(3)
    w, tb = weights_array(), engine.variant.tables
    ws = new_scratch(engine.variant, engine.num_players)
    for _ in range(20):
        for b in range(engine.num_games):
            mask = engine.masks[b]
            expected = heuristic_action(engine.state, tb, b, mask.copy(), w, ws)
            assert bot.act({"observation": engine.obs[b], "action_mask": mask}) == expected
        engine.step(random_legal_actions(engine.masks, rng))


def test_same_seed_same_game():
    config = dict(num_players=2, variant="longo", lucky="bonus")
    assert heuristic_game(config, 11) == heuristic_game(config, 11)


# --- clear choices ---------------------------------------------------------------------------


def test_takes_a_free_lock():
    # Seat 0, ahead, on another player's roll; white 6 + 6 = 12 locks its red row:
    #   red [2][3][4][5][6] 7 8 9 10 [11]   -> [12] and the lock: 2 more crosses, no number lost
    st = position(CLASSIC, [{"red": [2, 3, 4, 5, 6, 11]}, {"yellow": [2, 3]}], (6, 6, 1, 1, 1, 1), active=1)
    st.pending[0, 1] = CLASSIC.pass_action
    st.turn[0] = 0
    assert decide(st) == ("red", 12)


def test_white_then_colour_beats_a_single_cross():
    # Active player, empty sheet, dice (1, 1, 1, 6, 6, 6): white 2 fits red or yellow, and
    # the colour 1 + red 1 = 2 fits red only. White yellow 2 then colour red 2 crosses twice
    # for nothing lost; white red 2 would leave no cheap colour cross.
    st = position(CLASSIC, [{}, {}], (1, 1, 1, 6, 6, 6))
    assert decide(st) == ("yellow", 2)
    rules.apply(CLASSIC, st, np.array([encode_action(("yellow", 2), CLASSIC)]))
    rules.apply(CLASSIC, st, np.array([CLASSIC.pass_action]))  # seat 1 passes
    assert decide(st) == ("red", 2)


def test_does_not_skip_many_numbers_early():
    # Empty sheets, another player's roll, white 3 + 4 = 7: every row would lose 5 numbers.
    st = position(CLASSIC, [{}, {}], (3, 4, 1, 1, 1, 1), active=1)
    st.pending[0, 1] = CLASSIC.pass_action
    st.turn[0] = 0
    assert st.phase[0] == WHITE
    assert decide(st) is None


def test_any_cross_beats_a_fourth_penalty():
    # Solo, three penalties, colour action with nothing crossed this roll; the only crosses
    # skip many numbers (red 10, yellow 10, green 4, blue 4), but passing ends the game.
    st = position(CLASSIC, [{"penalties": 3, "red": [2], "yellow": [2]}], (4, 4, 6, 6, 1, 1), phase="color")
    st.pending[0, 0] = CLASSIC.pass_action
    choice = decide(st)
    assert choice is not None


def test_takes_a_cheap_cross_on_its_own_roll():
    # Colour action, nothing crossed yet: red 3 next to red 2 loses nothing, a penalty -5.
    st = position(CLASSIC, [{"red": [2]}, {}], (1, 1, 2, 6, 6, 6), phase="color")
    st.pending[0, 0] = CLASSIC.pass_action
    assert decide(st) == ("red", 3)


# --- weights ---------------------------------------------------------------------------------


def test_weights_defaults_are_named_and_overridable():
    assert tuple(DEFAULT_WEIGHTS) == WEIGHT_NAMES
    w = weights_array({"fill": 0.5})
    assert w[WEIGHT_NAMES.index("fill")] == 0.5
    bot = bots.make("heuristic", weights={"win_bonus": 3})
    assert bot.weights[WEIGHT_NAMES.index("win_bonus")] == 3.0


@pytest.mark.parametrize(
    "weights", [{"nope": 1.0}, {"fill": "high"}, {"fill": float("nan")}, "abc", [1.0], 3]
)
def test_bad_weights_raise(weights):
    with pytest.raises(ValueError, match="weights"):
        bots.make("heuristic", weights=weights)
