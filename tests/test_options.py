"""The table options checked once (`TableOptions`) and the shared validators (`core.checks`)."""

import gymnasium
import numpy as np
import pytest

from qwixx_env import BatchedQwixx, QwixxVectorEnv, bots, qwixx_v0
from qwixx_env.core.checks import check_choice, check_flag, check_int, check_number, check_seed
from qwixx_env.core.engine import Engine
from qwixx_env.core.options import TableOptions, table_from


def test_table_options_fill_in_defaults_and_normalise():
    table = TableOptions(num_players=np.int64(3), variant="longo", lucky="instead",
                         lucky_numbers=[[3, 11], (7, 9), [4, 5]], start_player="random")
    assert type(table.num_players) is int and table.num_players == 3
    assert table.reward == "win"  # the default for 2+ players
    assert table.lucky_numbers == ((3, 11), (7, 9), (4, 5))
    assert table.rules.name == "longo" and table.rules.lucky_rule == "instead"
    assert table.start_seat == -1
    assert TableOptions(num_players=1).reward == "score"
    assert TableOptions(variant="classic").lucky == "bonus"


def test_table_options_as_dict_is_what_a_record_stores():
    options = dict(num_players=2, variant="longo", lucky="bonus", lucky_numbers=[(3, 11), (7, 9)],
                   start_player=1, reward="margin", score_table=list(range(17)))
    env = qwixx_v0.raw_env(**options)
    env.reset(seed=3)
    assert env.record()["options"] == TableOptions(**options).as_dict()
    assert TableOptions(**options) == TableOptions(**TableOptions(**options).as_dict())


@pytest.mark.parametrize(
    "options, message",
    [
        ({"num_players": True}, r"num_players: got True; expected an integer from 1 to 5"),
        ({"num_players": 6}, r"num_players: got 6; expected an integer from 1 to 5"),
        ({"variant": "Classic"}, r"variant: got 'Classic'; expected one of \('classic', 'longo'\)"),
        ({"lucky": "extra"}, r"lucky: got 'extra'; expected one of \('bonus', 'instead'\)"),
        ({"lucky": "instead"}, r"lucky: got 'instead'; the 'classic' variant has no lucky numbers"),
        ({"variant": "longo", "lucky_numbers": [(3, 3), (4, 5)]}, r"lucky_numbers: got .*two different integers"),
        ({"lucky_numbers": [(3, 4), (4, 5)]}, r"lucky_numbers: got .*has no lucky numbers"),
        ({"start_player": 2}, r"start_player: got 2; expected 'random' or a seat from 0 to 1"),
        ({"start_player": False}, r"start_player: got False"),
        ({"reward": "win", "num_players": 1}, r"reward: got 'win' with num_players=1"),
        ({"score_table": [1, 2]}, r"score_table: got \[1, 2\]; expected a sequence of at least 13 integers"),
    ],
)
def test_every_constructor_refuses_a_bad_option_by_name(options, message):
    for make in (
        lambda: TableOptions(**options),
        lambda: qwixx_v0.raw_env(**options),
        lambda: qwixx_v0.env(**options),
        lambda: BatchedQwixx(4, **options),
        lambda: QwixxVectorEnv(4, **options),
    ):
        with pytest.raises(ValueError, match=message):
            make()


def test_the_engines_keep_the_options_they_were_given():
    options = dict(num_players=3, variant="longo", lucky="instead", start_player="random", reward="score_delta")
    for env in (qwixx_v0.raw_env(**options), BatchedQwixx(2, **options), QwixxVectorEnv(2, **options).engine):
        assert env.table == TableOptions(**options)


def every_table_player(**given):
    """Every object that plays a table, each built from the same `given` table arguments."""
    yield qwixx_v0.raw_env(**given)
    yield qwixx_v0.env(**given).unwrapped
    yield qwixx_v0.parallel_env(**given)
    yield Engine(**given)
    yield BatchedQwixx(2, **given)
    yield QwixxVectorEnv(2, **given)
    yield gymnasium.make("qwixx_env/Qwixx-v0", **given).unwrapped


def test_every_constructor_takes_the_table_as_one_value_or_as_its_options():
    options = dict(num_players=3, variant="longo", lucky="instead", start_player="random", reward="score_delta")
    table = TableOptions(**options)
    assert [player.table for player in every_table_player(table=table)] == [table] * 7
    assert [player.table for player in every_table_player(**options)] == [table] * 7
    assert table_from(table) is table and table_from(**options) == table and table_from() == TableOptions()


def test_a_table_and_its_options_at_once_are_refused():
    with pytest.raises(TypeError, match=r"table=TableOptions\(...\) or as its options, not both"):
        table_from(TableOptions(), num_players=3)
    with pytest.raises(TypeError, match=r"table: got 'classic'; expected a TableOptions"):
        table_from("classic")
    with pytest.raises(TypeError, match=r"unknown table option\(s\) \['players'\]; accepted: table .*'num_players'"):
        table_from(players=3)
    for make in (lambda **k: qwixx_v0.raw_env(**k), lambda **k: BatchedQwixx(2, **k),
                 lambda **k: QwixxVectorEnv(2, **k), lambda **k: Engine(**k)):
        with pytest.raises(TypeError, match="not both"):
            make(table=TableOptions(), reward="score")
        with pytest.raises(TypeError, match=r"unknown table option\(s\) \['players'\]"):
            make(players=3)


def test_the_options_are_keywords_only_as_pettingzoo_envs_take_them():
    # only the number of games is positional; an option by position is Python's TypeError, naming it
    makers = (lambda: qwixx_v0.raw_env(3), lambda: BatchedQwixx(2, 3), lambda: QwixxVectorEnv(2, 3, "longo"),
              lambda: qwixx_v0.env(3), lambda: qwixx_v0.parallel_env("longo"), lambda: qwixx_v0.raw_parallel_env(2))
    for make in makers:
        with pytest.raises(TypeError, match=r"positional arguments? but \d (were|was) given"):
            make()


def test_what_plays_a_table_has_the_variant_and_what_is_data_its_name():
    table = TableOptions(variant="longo", lucky="instead")
    for player in every_table_player(table=table):
        assert player.variant == table.rules and player.variant.name == "longo", player
    assert table.variant == "longo" and table.as_dict()["variant"] == "longo"
    env = qwixx_v0.raw_env(table=table)
    env.reset(seed=1)
    assert env.record()["options"]["variant"] == "longo"


def test_bots_make_checks_the_table_options_with_the_same_words():
    with pytest.raises(ValueError, match=r"num_players: got 2\.0; expected an integer from 1 to 5"):
        bots.make("greedy", num_players=2.0)
    with pytest.raises(ValueError, match=r"variant: got 'longo '"):
        bots.make("greedy", variant="longo ")


def test_check_int_refuses_bools_floats_and_values_out_of_bounds():
    assert check_int("n", np.int32(4), minimum=1) == 4 and type(check_int("n", np.int32(4))) is int
    for bad in (True, np.bool_(False), 2.0, "2", None):
        with pytest.raises(ValueError, match=r"^n: got .*; expected an integer"):
            check_int("n", bad)
    with pytest.raises(ValueError, match=r"^n: got 0; expected a positive integer$"):
        check_int("n", 0, minimum=1)
    with pytest.raises(ValueError, match=r"^n: got 9; expected an integer from 0 to 8$"):
        check_int("n", 9, minimum=0, maximum=8)
    with pytest.raises(ValueError, match=r"^n: got -1; expected a seat$"):
        check_int("n", -1, minimum=0, accepted="a seat")


def test_check_number_choice_seed_and_flag():
    assert check_number("x", np.float32(0.5), minimum=0) == 0.5
    for bad in (float("nan"), float("inf"), True, "1"):
        with pytest.raises(ValueError, match=r"^x: got .*; expected a number"):
            check_number("x", bad)
    assert check_choice("mode", "win", ("win", "score")) == "win"
    for bad in ("Win", ["win"], {"win": 1}, True):
        with pytest.raises(ValueError, match=r"^mode: got .*; expected one of \('win', 'score'\)"):
            check_choice("mode", bad, ("win", "score"))
    assert check_seed(None) is None and check_seed(np.uint8(3)) == 3
    with pytest.raises(ValueError, match=r"^seed: got -1; expected None or a non-negative integer$"):
        check_seed(-1)
    assert check_flag("f", np.bool_(True)) is True
    with pytest.raises(ValueError, match=r"^f: got 1; expected true or false$"):
        check_flag("f", 1)
