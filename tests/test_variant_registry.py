"""A variant is one value: a `Variant` defined here alone, registered by name or handed to
`TableOptions`, plays through every form of the game with no change to the package.

"Short" Qwixx below is made up for the test: five-sided dice (numbers 2 to 10), the last two
numbers of a row lock cells, a lock after four crosses, three penalties end it. Which die
serves a row and the four rows' colours are still the classic ones (issue 39 item 3)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test

from qwixx_env import BatchedQwixx, qwixx_v0, replay
from qwixx_env.bots import make_bot
from qwixx_env.core.options import TableOptions
from qwixx_env.core.variant import CLASSIC, LONGO, Row, Variant, get_variant, register_variant, variant_names

SHORT = Variant(name="short_test", faces=5, lock_cells=2, lock_threshold=4,
                score_table=tuple(k * (k + 1) // 2 for k in range(12)), max_penalties=3)
MIXED_ROWS = Variant(name="mixed_rows_test", faces=3, lock_cells=1, lock_threshold=1, score_table=tuple(range(10)),
                     rows_to_end=1, rows=(Row("a", (2, 3, 4)), Row("b", (6, 5, 4), colors=("a", "b", "a"))))


def test_a_variant_given_to_the_table_is_registered_and_named():
    table = TableOptions(num_players=3, variant=SHORT)
    assert table.variant == "short_test" and table.rules == SHORT
    assert "short_test" in variant_names() and get_variant("short_test") == SHORT
    assert TableOptions(variant="short_test") == TableOptions(variant=SHORT)
    assert register_variant(SHORT) is SHORT  # the same value again: nothing changes


def test_a_taken_name_or_a_bad_one_is_refused():
    register_variant(SHORT)
    other = Variant(name="short_test", faces=4, lock_cells=1, lock_threshold=3, score_table=tuple(range(20)))
    with pytest.raises(ValueError, match="variant 'short_test' is registered already"):
        TableOptions(variant=other)
    with pytest.raises(ValueError, match="variant 'classic' is registered already"):
        register_variant(Variant(name="classic", faces=4, lock_cells=1, lock_threshold=3, score_table=tuple(range(20))))
    with pytest.raises(ValueError, match="variant name: got 'two words'"):
        register_variant(Variant(name="two words", faces=4, lock_cells=1, lock_threshold=3,
                                 score_table=tuple(range(20))))
    with pytest.raises(ValueError, match=r"variant: got 'nothing'; expected one of \('classic', 'longo'"):
        TableOptions(variant="nothing")
    assert get_variant("classic") == CLASSIC


@pytest.mark.parametrize("variant", [CLASSIC, LONGO, SHORT, MIXED_ROWS], ids=lambda v: v.name)
def test_a_variant_has_a_json_form_that_reads_back_equal(variant):
    data = json.loads(json.dumps(variant.as_dict()))
    assert Variant.from_dict(data) == variant and Variant.from_dict(data).as_dict() == data
    assert data["rows"][0] == {"name": variant.rows[0].name, "numbers": list(variant.rows[0].numbers),
                               "colors": list(variant.rows[0].colors)}


def test_the_json_form_leaves_out_what_takes_the_defaults():
    given = {"name": "short_test", "faces": 5, "lock_cells": 2, "lock_threshold": 4,
             "score_table": list(SHORT.score_table), "max_penalties": 3}
    assert Variant.from_dict(given) == SHORT
    rows = [{"name": "a", "numbers": [2, 3, 4]}, {"name": "b", "numbers": [4, 3, 2], "colors": ["a", "b", "a"]}]
    mixed = Variant.from_dict({**given, "lock_cells": 1, "lock_threshold": 1, "rows_to_end": 1, "rows": rows})
    assert mixed.cell_colors == (("a", "a", "a"), ("a", "b", "a"))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"faces": "5"}, r"faces: got '5'; expected an integer from 2 to 16"),
        ({"score_table": [0, 1.5]}, r"score_table: got \[0, 1.5\]; expected a list of integers"),
        ({"colour": "red"}, r"variant: unknown keys \['colour'\]; expected the keys \['name', 'faces'"),
        ({"rows": [{"name": "a"}]}, r"rows: got a row \{'name': 'a'\}; expected \{name, numbers, colors\}"),
        ({"rows": [{"name": "a", "numbers": "234"}]}, r"row a: numbers '234'; expected a tuple of integers"),
        ({"name": "two words"}, r"variant name: got 'two words'"),
        ({"lucky_rule": 1}, r"lucky_rule: got 1; expected null or one of \('bonus', 'instead'\)"),
    ],
)
def test_a_bad_json_form_is_refused_naming_what_is_wrong(change, message):
    with pytest.raises(ValueError, match=message):
        Variant.from_dict({**SHORT.as_dict(), **change})
    with pytest.raises(ValueError, match=r"variant: missing \['lock_threshold'\]"):
        Variant.from_dict({k: v for k, v in SHORT.as_dict().items() if k != "lock_threshold"})


@pytest.mark.parametrize("num_players", [2, 3])
def test_the_variant_plays_through_the_aec_and_parallel_envs(num_players):
    api_test(qwixx_v0.env(num_players=num_players, variant=SHORT), num_cycles=200)
    parallel_api_test(qwixx_v0.parallel_env(num_players=num_players, variant=SHORT), num_cycles=200)
    env = qwixx_v0.env(num_players=num_players, variant=SHORT)
    env.reset(seed=3)
    assert env.unwrapped.variant == SHORT and env.action_space("player_0").n == 4 * 9 + 1
    rng = np.random.default_rng(0)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    record = env.unwrapped.record()
    assert record["options"]["variant"] == "short_test"
    assert replay(record).snapshot() == env.unwrapped.snapshot()
    assert max(p["penalties"] for p in env.unwrapped.snapshot()["players"]) <= 3


def play_every_game_to_its_end(engine: BatchedQwixx, seed: int, action_seed: int, max_steps: int = 3000) -> None:
    """Random legal decisions (from `action_seed`) in every game of a batch without autoreset,
    started from `seed`, until all are over."""
    engine.reset(seed=seed)
    rng = np.random.default_rng(action_seed)
    for _ in range(max_steps):
        if engine.engine.is_over().all():
            break
        engine.step(np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in engine.masks]))
    assert engine.engine.is_over().all()


def test_the_batched_engine_and_the_heuristic_play_it():
    play_every_game_to_its_end(BatchedQwixx(16, num_players=2, variant=SHORT, autoreset=False), seed=0, action_seed=1)
    bot = make_bot("heuristic", TableOptions(num_players=2, variant=SHORT), seed=0)
    env = qwixx_v0.env(num_players=2, variant=SHORT)
    env.reset(seed=5)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(bot.act(obs)))
    assert env.unwrapped.snapshot()["phase"] == "over"


def test_a_pickled_table_carries_its_variant_to_a_fresh_process():
    data = pickle.dumps(TableOptions(num_players=2, variant=SHORT))
    code = ("import pickle, sys; t = pickle.loads(sys.stdin.buffer.read()); "
            "print(t.variant, t.rules.faces, t.rules.lock_cells)")
    done = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True)
    assert done.stdout.decode().split() == ["short_test", "5", "2"]
