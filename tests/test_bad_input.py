"""Every way to hand the package bad input, and what it must answer: a `ValueError` that names
the option (or agent), the value given and what is accepted, with the game left untouched.
"""

from __future__ import annotations

import copy
import dataclasses
import json

import numpy as np
import pytest

from qwixx_env import ObservationView, decode_action, encode_action, qwixx_v0, replay
from qwixx_env.core.variant import get_variant

from conftest import visible

CONSTRUCTORS = [qwixx_v0.raw_env, qwixx_v0.env]


def assert_names(err: pytest.ExceptionInfo, *parts: str) -> None:
    message = str(err.value)
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"


def assert_names_action(err: pytest.ExceptionInfo, action: int, variant: str) -> None:
    """The message shows the action beside its mark, as "12 (yellow 3)" or "12 ('yellow', 3)"."""
    message = str(err.value)
    mark = decode_action(action, variant)
    spellings = ["pass", "None"] if mark is None else [f"{mark[0]} {mark[1]}", repr(mark)]
    assert any(f"{action} ({text})" in message or f"{action} {text}" in message for text in spellings), (
        f"action {action} with its mark {mark} not in {message!r}"
    )


# --- constructor options --------------------------------------------------------------------


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("bad", [0, 6, -1, 2.0, "2", True, None, [2]])
def test_bad_num_players(make, bad):
    with pytest.raises(ValueError) as err:
        make(num_players=bad)
    assert_names(err, "num_players", repr(bad), "1", "5")


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("bad", ["Classic", "longo2", "", None, 3, ("classic",)])
def test_bad_variant(make, bad):
    with pytest.raises(ValueError) as err:
        make(variant=bad)
    assert_names(err, "variant", repr(bad), "classic", "longo")


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("bad", ["rgb_array", "ANSI", "", 1, True])
def test_bad_render_mode(make, bad):
    with pytest.raises(ValueError) as err:
        make(render_mode=bad)
    assert_names(err, "render_mode", repr(bad), "ansi", "human")


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("bad", ["Bonus", "extra", "", 3])
def test_bad_lucky_rule_in_longo(make, bad):
    with pytest.raises(ValueError) as err:
        make(variant="longo", lucky=bad)
    assert_names(err, "lucky", repr(bad), "bonus", "instead")


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("bad", ["instead", "extra", 3])
def test_lucky_rule_other_than_the_default_in_classic(make, bad):
    with pytest.raises(ValueError) as err:
        make(variant="classic", lucky=bad)
    assert_names(err, "lucky", repr(bad), "longo")


def test_default_lucky_rule_is_accepted_in_classic():
    game = qwixx_v0.raw_env(variant="classic", lucky="bonus")
    game.reset(seed=0)
    assert all(p["lucky_numbers"] == [] for p in game.snapshot()["players"])


@pytest.mark.parametrize("make", CONSTRUCTORS)
def test_lucky_numbers_in_classic(make):
    with pytest.raises(ValueError) as err:
        make(variant="classic", lucky_numbers=[(3, 11), (7, 9)])
    assert_names(err, "lucky_numbers", repr([(3, 11), (7, 9)]), "longo")


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize(
    "bad",
    [
        [(3, 11)],  # one pair for two seats
        [(3, 11), (7, 9), (4, 5)],  # three pairs for two seats
        [],
        [(3, 3), (7, 9)],  # the two numbers of a pair must differ
        [(1, 11), (7, 9)],  # below 2
        [(3, 17), (7, 9)],  # above 16
        [(3, 11, 12), (7, 9)],
        [(3,), (7, 9)],
        [(3, "11"), (7, 9)],
        [(3.0, 11), (7, 9)],
        [(True, 11), (7, 9)],
        5,
        "ab",
    ],
)
def test_bad_lucky_numbers_in_longo(make, bad):
    with pytest.raises(ValueError) as err:
        make(num_players=2, variant="longo", lucky_numbers=bad)
    assert_names(err, "lucky_numbers", repr(bad), "2", "16")


def test_lucky_numbers_accept_numpy_integers():
    game = qwixx_v0.raw_env(num_players=2, variant="longo", lucky_numbers=np.array([[3, 11], [16, 2]]))
    game.reset(seed=0)
    assert [p["lucky_numbers"] for p in game.snapshot()["players"]] == [[3, 11], [16, 2]]


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("bad", [-1, 3, "first", "Random", 1.0, True, None])
def test_bad_start_player(make, bad):
    with pytest.raises(ValueError) as err:
        make(num_players=3, start_player=bad)
    assert_names(err, "start_player", repr(bad), "random", "2")


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("bad", ["wins", "Win", "", "delta", 1])
def test_bad_reward(make, bad):
    with pytest.raises(ValueError) as err:
        make(reward=bad)
    assert_names(err, "reward", repr(bad), "win", "score", "score_delta", "margin")


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("bad", ["win", "margin"])
def test_solo_game_has_no_win_or_margin_reward(make, bad):
    with pytest.raises(ValueError) as err:
        make(num_players=1, reward=bad)
    assert_names(err, "reward", repr(bad), "score", "score_delta")


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize(
    "variant, bad",
    [
        ("classic", list(range(12))),  # 0..12 crosses (the lock included) need 13 entries
        ("longo", list(range(16))),  # 0..16 crosses need 17 entries
        ("classic", [0.5] * 13),
        ("classic", [True] * 13),
        ("classic", ["1"] * 13),
        ("classic", 5),
        ("classic", "0123456789abc"),
    ],
)
def test_bad_score_table(make, variant, bad):
    with pytest.raises(ValueError) as err:
        make(variant=variant, score_table=bad)
    assert_names(err, "score_table", repr(bad))


@pytest.mark.parametrize(
    "field, bad",
    [
        ("faces", 1),
        ("faces", 17),  # 33 cells: more than a row's int32 bitmask holds
        ("faces", 6.0),
        ("lock_cells", 0),
        ("lock_cells", 11),  # a row of 11 numbers needs one that is not a lock cell
        ("lock_threshold", -1),
        ("lucky_count", -1),
        ("lucky_count", 3),  # a sheet carries two
        ("penalty_points", -5),
        ("penalty_points", True),
        ("max_penalties", 0),
        ("max_penalties", 128),
        ("rows_to_end", 5),
    ],
)
def test_a_variant_with_an_impossible_rule_is_refused_naming_the_field(field, bad):
    with pytest.raises(ValueError) as err:
        dataclasses.replace(get_variant("classic"), **{field: bad})
    assert_names(err, field, repr(bad), "expected an integer")


def test_a_variant_with_one_lucky_number_is_refused():
    with pytest.raises(ValueError, match=r"lucky_count: got 1; expected 0 \(no lucky numbers\) or 2"):
        dataclasses.replace(get_variant("longo"), lucky_count=1)


# --- actions on the raw env -----------------------------------------------------------------


def everything_visible(game: qwixx_v0.raw_env) -> dict:
    return {
        **visible(game),
        "rewards": dict(game.rewards),
        "cumulative": dict(game._cumulative_rewards),
        "terminations": dict(game.terminations),
        "truncations": dict(game.truncations),
        "legal": game.legal_actions(),
        "record": game.record(),
    }


def game_in_phase(phase: str, **opts) -> qwixx_v0.raw_env:
    """A seeded game played by a fixed policy until the given phase comes up."""
    for seed in range(200):
        game = qwixx_v0.raw_env(**opts)
        game.reset(seed=seed)
        for _ in range(60):
            if game.snapshot()["phase"] == phase:
                return game
            if not game.legal_actions():
                break
            game.step(game.legal_actions()[-1 if seed % 2 else 0])
    raise AssertionError(f"no {phase} phase found")


def play_to_end(game: qwixx_v0.raw_env) -> None:
    rng = np.random.default_rng(0)
    while game.legal_actions():
        game.step(int(rng.choice(game.legal_actions())))
    assert game.snapshot()["phase"] == "over"


PHASE_GAMES = [
    ("white", dict(num_players=3, variant="classic")),
    ("color", dict(num_players=3, variant="classic")),
    ("white", dict(num_players=2, variant="longo", lucky="instead")),
    ("color", dict(num_players=1, variant="longo")),
    ("lucky", dict(num_players=2, variant="longo", lucky_numbers=[(7, 8), (6, 9)])),
]


@pytest.mark.parametrize("phase, opts", PHASE_GAMES, ids=lambda x: x if isinstance(x, str) else x["variant"])
def test_illegal_action_raises_names_it_and_leaves_the_game_untouched(phase, opts):
    game = game_in_phase(phase, **opts)
    agent = game.agent_selection
    legal = game.legal_actions()
    variant = opts["variant"]
    illegal = [a for a in range(game.action_space(agent).n) if a not in legal]
    assert illegal
    for action in illegal[:: max(1, len(illegal) // 6)]:
        before = everything_visible(game)
        with pytest.raises(ValueError) as err:
            game.step(action)
        assert_names(err, agent, "illegal", phase)
        for a in [action, *legal]:
            assert_names_action(err, a, variant)
        assert everything_visible(game) == before
    play_to_end(game)


def test_pass_is_illegal_while_breaking_a_lucky_tie():
    game = game_in_phase("lucky", num_players=2, variant="longo", lucky_numbers=[(7, 8), (6, 9)])
    pass_action = game.action_space(game.agent_selection).n - 1
    assert pass_action not in game.legal_actions()
    before = everything_visible(game)
    with pytest.raises(ValueError) as err:
        game.step(pass_action)
    assert_names(err, game.agent_selection, "lucky")
    assert_names_action(err, pass_action, "longo")
    assert everything_visible(game) == before


OUT_OF_RANGE = [(a, [str(a), "44"]) for a in (-1, 45, 46, 1000, -45)]
NOT_INTEGERS = [
    (a, [repr(a), "integer"]) for a in (None, 3.0, "3", True, False, [3], np.array([3]), np.float32(44))
]


@pytest.mark.parametrize("action, named", OUT_OF_RANGE + NOT_INTEGERS, ids=repr)
def test_action_outside_the_space_raises_and_leaves_the_game_untouched(action, named):
    game = game_in_phase("white", num_players=2, variant="classic")
    before = everything_visible(game)
    with pytest.raises(ValueError) as err:
        game.step(action)
    assert_names(err, game.agent_selection, *named)
    for a in before["legal"]:
        assert_names_action(err, a, "classic")
    assert everything_visible(game) == before
    play_to_end(game)


@pytest.mark.parametrize("kind", [int, np.int64, np.int8, np.array])
def test_integer_like_actions_are_accepted(kind):
    game = game_in_phase("white", num_players=2, variant="classic")
    game.step(kind(44))  # pass
    assert game.agent_selection == "player_1"


def test_action_after_the_game_ended_raises():
    game = qwixx_v0.raw_env(num_players=2)
    game.reset(seed=0)
    play_to_end(game)
    with pytest.raises(ValueError):
        game.step(44)


# --- seeds ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, [1], -(2**70)])
def test_bad_seed(bad):
    game = qwixx_v0.raw_env()
    with pytest.raises(ValueError) as err:
        game.reset(seed=bad)
    assert_names(err, "seed", repr(bad))


def test_numpy_and_large_seeds_are_accepted():
    a, b = qwixx_v0.raw_env(), qwixx_v0.raw_env()
    a.reset(seed=np.int64(12))
    b.reset(seed=12)
    assert a.snapshot() == b.snapshot()
    a.reset(seed=2**80)
    assert a.snapshot()["phase"] == "white"


def test_wrapped_env_rejects_a_bad_seed():
    env = qwixx_v0.env()
    with pytest.raises(ValueError) as err:
        env.reset(seed=-5)
    assert_names(err, "seed", "-5")


# --- action translation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "variant, bad, named",
    [
        ("classic", ("purple", 5), "'purple'"),
        ("classic", ("Red", 5), "'Red'"),
        ("classic", ("red", 1), "1"),
        ("classic", ("red", 13), "13"),
        ("classic", ("green", 16), "16"),
        ("longo", ("red", 17), "17"),
        ("longo", ("blue", 1), "1"),
        ("classic", ("red", 5.0), "5.0"),
        ("classic", ("red", "5"), "'5'"),
        ("classic", "red", "'red'"),
        ("classic", ("red",), "('red',)"),
        ("classic", ("red", 5, 6), "('red', 5, 6)"),
        ("classic", 5, "5"),
    ],
)
def test_encode_action_rejects_marks_not_on_the_sheet(variant, bad, named):
    with pytest.raises(ValueError) as err:
        encode_action(bad, variant)
    assert_names(err, "mark", named)


@pytest.mark.parametrize(
    "variant, bad",
    [("classic", -1), ("classic", 45), ("longo", 61), ("longo", -1), ("classic", 2.0), ("classic", True),
     ("classic", "3"), ("classic", None)],
)
def test_decode_action_rejects_actions_outside_the_space(variant, bad):
    with pytest.raises(ValueError) as err:
        decode_action(bad, variant)
    assert_names(err, "action", repr(bad), "44" if variant == "classic" else "60")


@pytest.mark.parametrize("call", [encode_action, decode_action])
def test_action_translation_rejects_an_unknown_variant(call):
    with pytest.raises(ValueError) as err:
        call(None if call is encode_action else 0, "longer")
    assert_names(err, "variant", "'longer'")


# --- replaying records ----------------------------------------------------------------------


@pytest.fixture
def record() -> dict:
    game = qwixx_v0.raw_env(num_players=3, variant="longo")
    game.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(20):
        game.step(int(rng.choice(game.legal_actions())))
    return game.record()


def test_unchanged_record_replays(record):
    assert replay(record).snapshot() == record["snapshot"]


def test_changed_first_dice_are_reported(record):
    record["rolls"][0][0] = record["rolls"][0][0] % 8 + 1
    with pytest.raises(ValueError) as err:
        replay(record)
    assert_names(err, "roll 0", "dice")


def test_changed_later_dice_are_reported(record):
    assert len(record["rolls"]) > 3
    record["rolls"][3][5] = record["rolls"][3][5] % 8 + 1
    with pytest.raises(ValueError) as err:
        replay(json.dumps(record))
    assert_names(err, "roll 3", "dice")


def test_an_extra_roll_or_a_changed_snapshot_is_reported(record):
    extra = {**record, "rolls": record["rolls"] + [record["rolls"][-1]]}
    with pytest.raises(ValueError) as err:
        replay(extra)
    assert_names(err, "record rolls", f"got {len(record['rolls']) + 1}")
    changed = json.loads(json.dumps(record))
    changed["snapshot"]["players"][0]["score"] += 1
    with pytest.raises(ValueError) as err:
        replay(changed)
    assert_names(err, "record snapshot", "changed")


def test_a_record_kept_before_dice_out_of_play_ended_null_still_replays():
    """A game that ends on a lock in the colour action: records kept before its final snapshot
    showed that die as null held the die's last face; they replay, and a live die changed does
    not."""
    from qwixx_env import bots

    bot = bots.make("greedy")
    for seed in range(100):
        game = qwixx_v0.raw_env(num_players=2)
        game.reset(seed=seed)
        while game.agents:
            agent = game.agent_selection
            done = game.terminations[agent] or game.truncations[agent]
            game.step(None if done else bot.act(game.observe(agent)))
        rec = game.record()
        colours = [c for c, d in rec["snapshot"]["dice"].items() if c != "white" and d is None]
        faces = dict(zip(("red", "yellow", "green", "blue"), (int(d) for d in game.core_state.dice[0][2:])))
        gone = [c for c in colours if faces[c] > 0]
        if gone:
            break
    else:
        pytest.fail("no game of 100 ended on a lock in the colour action")
    old = json.loads(json.dumps(rec))
    old["snapshot"]["dice"][gone[0]] = faces[gone[0]]
    assert replay(old).snapshot() == rec["snapshot"]
    live = json.loads(json.dumps(rec))
    live["snapshot"]["dice"]["white"][0] = live["snapshot"]["dice"]["white"][0] % 6 + 1
    with pytest.raises(ValueError) as err:
        replay(live)
    assert_names(err, "record snapshot", "changed")


def test_decision_by_the_wrong_seat_is_reported(record):
    seat, action = record["decisions"][4]
    record["decisions"][4] = [(seat + 1) % 3, action]
    with pytest.raises(ValueError) as err:
        replay(record)
    assert_names(err, "decision 4", f"player_{(seat + 1) % 3}", f"player_{seat}")


def test_illegal_recorded_decision_is_reported(record):
    seat, _ = record["decisions"][0]
    game = qwixx_v0.raw_env(num_players=3, variant="longo")
    game.reset(seed=5)
    illegal = next(a for a in range(61) if a not in game.legal_actions())
    record["decisions"][0] = [seat, illegal]
    with pytest.raises(ValueError) as err:
        replay(record)
    assert_names(err, f"player_{seat}", str(illegal))


def test_decision_after_the_game_ended_is_reported():
    game = qwixx_v0.raw_env(num_players=2)
    game.reset(seed=3)
    play_to_end(game)
    record = game.record()
    record["decisions"].append([int(game.snapshot()["active_player"]), 44])
    with pytest.raises(ValueError):
        replay(record)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda r: r.update(format="qwixx_env.record/2"),
        lambda r: r.pop("format"),
        lambda r: r.pop("rng_state"),
        lambda r: r.update(rng_state="not hex"),
        lambda r: r.update(rng_state=12345),
        lambda r: r["decisions"].__setitem__(0, [0]),
        lambda r: r["decisions"].__setitem__(0, [0, 1, 2]),
        lambda r: r["decisions"].__setitem__(0, 7),
        lambda r: r["decisions"].__setitem__(0, [9, 60]),
        lambda r: r["decisions"].__setitem__(0, [0, "pass"]),
        lambda r: r["options"].update(num_players=9),
        lambda r: r["options"].update(variant="classic"),
        lambda r: r.pop("options"),
        lambda r: r.update(options="longo"),
        lambda r: r.update(decisions=5),
        lambda r: r.update(rolls=5),
    ],
    ids=[
        "format", "no-format", "no-rng-state", "rng-state-text", "rng-state-int", "decision-short",
        "decision-long", "decision-not-a-pair", "seat-out-of-range", "action-text", "bad-option",
        "other-variant", "no-options", "options-not-a-dict", "decisions-not-a-list", "rolls-not-a-list",
    ],
)
def test_malformed_record_raises_value_error(record, tamper):
    bad = copy.deepcopy(record)
    tamper(bad)
    with pytest.raises(ValueError):
        replay(bad)


def test_record_that_is_not_json_raises_value_error():
    with pytest.raises(ValueError):
        replay('{"format": "qwixx_env.record/1", ')


# --- observations ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 197, 199, 396])
def test_observation_view_rejects_a_vector_of_the_wrong_size(size):
    with pytest.raises(ValueError) as err:
        ObservationView(np.zeros(size, np.float32), variant="classic", num_players=2)
    assert_names(err, "obs", f"({size},)", "198")


def test_observation_view_rejects_a_batch_and_a_dict_of_the_wrong_size():
    with pytest.raises(ValueError) as err:
        ObservationView(np.zeros((1, 198), np.float32), variant="classic", num_players=2)
    assert_names(err, "obs", "(1, 198)")
    with pytest.raises(ValueError):
        ObservationView({"observation": np.zeros(100), "action_mask": np.zeros(45)}, "classic", 2)


def test_observation_view_rejects_an_observation_of_another_game():
    game = qwixx_v0.raw_env(num_players=2, variant="classic")
    game.reset(seed=0)
    obs = game.observe("player_0")
    ObservationView(obs, "classic", 2)
    for variant, players in [("classic", 3), ("longo", 2), ("classic", 1)]:
        with pytest.raises(ValueError):
            ObservationView(obs, variant, players)


def test_observation_view_unknown_field_and_missing_mask():
    view = ObservationView(np.zeros(198, np.float32), "classic", 2)
    with pytest.raises(KeyError):
        _ = view["nothing"]
    with pytest.raises(ValueError):
        _ = view.legal_actions


# --- the benchmark scripts' options ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "script, args, message",
    [
        ("baselines.py", ["greedy", "--deals", "3"], "--deals: got 3; expected an integer >= 5"),
        ("baselines.py", ["ladder", "--variant", "mega"], "invalid choice: 'mega'"),
        ("rollout_speed.py", ["--games", "0"], "--games: got 0; expected an integer >= 1"),
        ("rollout_speed.py", ["--param", "horizon"], "--param: got 'horizon'; expected name=value"),
        ("aec_speed.py", ["--cpu", "99"], "--cpu: got 99; expected one of this process's cores"),
        (
            "tune_heuristic.py",
            ["measure", "--weights", "fill"],
            "--weights: got 'fill'; expected name=number",
        ),
        ("solver_speed.py", ["--bot", "nosuchbot"], "--bot: got 'nosuchbot'; expected one of"),
    ],
)
def test_a_benchmark_script_refuses_a_bad_option_with_exit_2_and_no_traceback(script, args, message):
    import subprocess
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / script
    done = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
