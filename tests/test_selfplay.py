"""Teacher-free self-play (`qwixx_env.training.selfplay`) and its bots: the plain features from
hand-set sheets, a config that refuses a teacher, a tiny run that learns, resume, and the
shipped `selfplay-*` networks as bots."""

import json

import numpy as np
import pytest

from qwixx_env import bots, qwixx_v0
from qwixx_env.core import CLASSIC
from qwixx_env.nets import CheckpointError, write_win_chance
from qwixx_env.nets.checkpoint import WIN_CHANCE, json_and_npz, read
from qwixx_env.nets.win_chance import networks_dir
from qwixx_env.policies.heuristic import weights_array
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.value import NO_HEURISTIC, plain_num_features, value_features

from conftest import play_game, position

torch = pytest.importorskip("torch")
pytest.importorskip("yaml")

from qwixx_env.training import selfplay  # noqa: E402  (needs the train extra, skipped above without it)

COLORS = ("red", "yellow", "green", "blue")
K = 11


def plain_net(players):
    """A network of the plain layout's width (what sizes a Scratch's features)."""
    width = plain_num_features(players)
    return np.zeros((width, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(1)


def plain_sheet(rows, penalties, points):
    """The plain features of one sheet: rows maps a colour to (crosses, rightmost cell index)."""
    out = []
    for c in COLORS:
        n, right = rows.get(c, (0, -1))
        out += [n / K, (right + 1) / K, 0.0, 1.0 if n >= 5 else 0.0]
    return out + [penalties / 4, points / 100]


def test_plain_features_of_a_hand_set_three_player_position():
    """Seat 1's view: its sheet, seat 2's, seat 0's (share crossed, rightmost cell, lock, may
    lock, per row; penalties; score), the locked rows, who rolls next (one bit per seat from
    seat 1), the margin over the best other score and 1: nothing from the heuristic."""
    st = position(CLASSIC, [
        {"red": [2, 3], "penalties": 1},            # seat 0: 3 - 5 = -2 points
        {"green": [12, 11, 10, 9, 8]},              # seat 1: 15 points, may lock green
        {"yellow": [5], "blue": [12, 9]},           # seat 2: 1 + 3 = 4 points
    ], (1, 2, 3, 4, 5, 6), active=2)
    x = np.zeros(plain_num_features(3))
    value_features(st, CLASSIC.tables, 0, 1, NO_HEURISTIC, x, new_scratch(CLASSIC, 3, plain_net(3)))
    want = (
        plain_sheet({"green": (5, 4)}, 0, 15)
        + plain_sheet({"yellow": (1, 3), "blue": (2, 3)}, 0, 4)
        + plain_sheet({"red": (2, 1)}, 1, -2)
        + [0.0] * 4
        + [0.0, 1.0, 0.0]
        + [(15 - 4) / 50, 1.0]
    )
    np.testing.assert_allclose(x, want, atol=1e-12)
    assert plain_num_features(2) == 43 and plain_num_features(3) == len(want)


def test_the_plain_features_do_not_read_the_heuristics_weights():
    st = position(CLASSIC, [{"red": [2, 3, 4]}, {"blue": [12]}], (1, 2, 3, 4, 5, 6))
    x = np.zeros(plain_num_features(2))
    value_features(st, CLASSIC.tables, 0, 0, NO_HEURISTIC, x, new_scratch(CLASSIC, 2, plain_net(2)))
    heuristic = np.zeros(36)
    value_features(st, CLASSIC.tables, 0, 0, weights_array(), heuristic, new_scratch(CLASSIC, 2))
    assert x.shape == (43,) and heuristic[-3] != 0  # the heuristic's layout has its evaluation; plain has none
    np.testing.assert_allclose(x[:16], plain_sheet({"red": (3, 2)}, 0, 6)[:16])


# --- the config -----------------------------------------------------------------------------------


@pytest.mark.parametrize("key, value", [
    ("bc", {"teacher": "heuristic", "epochs": 10}),
    ("warm_start", "rollout"),
    ("inputs", ["afterstate"]),
    ("teacher", "heuristic"),
])
def test_the_config_refuses_a_teacher_by_name(key, value):
    with pytest.raises(ValueError, match=rf"{key}: .*the self-play learner takes no teacher"):
        selfplay.config_from_dict({"name": "x", key: value})


def test_the_config_refuses_scripted_opponents_and_unknown_keys():
    with pytest.raises(ValueError, match=r"opponents: got \{'scripted': \{'heuristic': 1\}\}; the self-play learner's "
                                         r"opponents are itself and its snapshots"):
        selfplay.config_from_dict({"name": "x", "opponents": {"scripted": {"heuristic": 1}}})
    with pytest.raises(ValueError, match=r"unknown keys \['total_steps'\]"):
        selfplay.config_from_dict({"name": "x", "total_steps": 5})
    with pytest.raises(ValueError, match=r"eval_opponents: got \('rollout',\); expected scripted bots"):
        selfplay.config_from_dict({"name": "x", "eval_opponents": ["rollout"]})
    with pytest.raises(ValueError, match=r"td_lambda: got 1.5; expected a number from 0.0 to 1.0"):
        selfplay.config_from_dict({"name": "x", "td_lambda": 1.5})
    # one deal has no standard error: the run would end on a NaN its final file cannot hold
    with pytest.raises(ValueError, match=r"eval_deals: got 1; expected an integer of at least 2"):
        selfplay.config_from_dict({"name": "x", "eval_deals": 1})


def test_the_shipped_selfplay_configs_load_and_name_no_teacher():
    from qwixx_env.training.config_yaml import shipped_configs

    names = [n for n in shipped_configs() if n.startswith("selfplay_")]
    assert "selfplay_classic_2p" in names
    for name in names:
        cfg = selfplay.load_config(name)
        assert cfg.name == name and set(cfg.eval_opponents) <= {"random", "greedy", "heuristic"}
        # the one experiment that starts from a pretrained policy says so in its name
        assert (cfg.start_policy is None) == ("from_ppo" not in name)


def test_a_start_policy_is_a_pretrained_network_of_the_runs_table():
    for bot in ("heuristic", "rollout", "greedy"):
        with pytest.raises(ValueError, match=rf"start_policy: got '{bot}'; expected a pretrained policy checkpoint"):
            selfplay.config_from_dict({"name": "x", "start_policy": bot})
    with pytest.raises(ValueError, match=r"start_policy: got 'ppo-classic-3p', a policy for classic with 3 player"):
        selfplay.start_policy("ppo-classic-3p", "classic", 2)


def test_the_start_rounds_record_the_policys_games_labelled_with_who_won():
    """ppo-classic-2p in every seat of 6 games: every roll start of both seats is recorded,
    labelled with its seat's win share, and the decisions are the policy's."""
    width = plain_num_features(2)
    data = selfplay.play_policy_part("classic", 2, "ppo-classic-2p", np.arange(40, 46), width)
    assert data["x"].shape[1] == width and len(data["x"]) == len(data["y"]) > 6 * 2 * 10
    assert set(np.unique(data["y"])) <= {0.0, 0.5, 1.0}
    # a game's rows of both seats: the two labels sum to one (a win and a loss, or two halves)
    assert abs(float(data["y"].mean()) - 0.5) < 1e-6
    assert data["decisions"] > 6 * 40 and data["scores"].shape == (6, 2)


def test_a_bad_config_is_one_line_and_exit_status_2(tmp_path, capsys):
    from qwixx_env import training

    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nbc: {teacher: heuristic}\n")
    assert training.main(["--engine", "selfplay", str(path)]) == 2
    assert "the self-play learner takes no teacher" in capsys.readouterr().out


# --- a tiny run ----------------------------------------------------------------------------------


def tiny(tmp_path, **over):
    data = {"name": "tiny", "games": 300, "rounds": 3, "eval_every": 3, "eval_deals": 60, "threads": 1,
            "hidden": [64, 32], "eval_opponents": ["random", "greedy"], "learning_rate": 3e-3, **over}
    return selfplay.config_from_dict(data)


def test_a_tiny_run_learns_from_random_weights(tmp_path):
    """Three rounds of 300 games from random weights: the learner wins more against `random`
    and `greedy` and scores more against `random` on the evaluation deals (which no round
    plays)."""
    result = selfplay.SelfPlayRun(tiny(tmp_path), tmp_path / "run", say=lambda line: None).run()
    curve = json.loads((tmp_path / "run" / "curve.json").read_text())
    first, last = curve[0], curve[-1]
    assert first["round"] == 0 and last["round"] == 3 and result["teacher"] is None
    assert last["random"]["win_share"] > first["random"]["win_share"] + 0.15
    assert last["random"]["score"] > first["random"]["score"] + 10
    assert last["greedy"]["win_share"] > first["greedy"]["win_share"] + 0.08
    spec, _ = read(*json_and_npz(tmp_path / "run" / "final"), kind=WIN_CHANCE)
    assert spec["features"] == "plain" and spec["meta"]["teacher"] is None


def test_a_run_resumes_where_it_stopped_and_refuses_to_overwrite(tmp_path):
    import dataclasses

    cfg = tiny(tmp_path, games=40, rounds=1, eval_deals=10, eval_opponents=["random"])
    selfplay.SelfPlayRun(cfg, tmp_path / "run", say=lambda line: None).run()
    with pytest.raises(FileExistsError, match="pass --resume"):
        selfplay.SelfPlayRun(cfg, tmp_path / "run", say=lambda line: None).run()
    other = dataclasses.replace(cfg, learning_rate=1e-4)
    with pytest.raises(ValueError, match=r"was run with other \['learning_rate'\]"):
        selfplay.SelfPlayRun(other, tmp_path / "run", resume=True, say=lambda line: None).run()
    selfplay.SelfPlayRun(cfg, tmp_path / "run", resume=True, say=lambda line: None).run()  # done: nothing more
    rows = (tmp_path / "run" / "log.jsonl").read_text().splitlines()
    assert [json.loads(r)["round"] for r in rows] == [1]
    # how long and where a run plays may change: one more round, on two threads
    more = dataclasses.replace(cfg, rounds=2, threads=2)
    selfplay.SelfPlayRun(more, tmp_path / "run", resume=True, say=lambda line: None).run()
    rows = (tmp_path / "run" / "log.jsonl").read_text().splitlines()
    assert [json.loads(r)["round"] for r in rows] == [1, 2]


def test_the_games_of_a_round_do_not_depend_on_how_they_are_cut(tmp_path):
    """One thread, three threads or two Ray runners: the same seed plays the same games and
    learns the same network (a run may resume with another number of runners)."""
    arrays = []
    for name, over in (("one", {"threads": 1}), ("three", {"threads": 3})):
        cfg = tiny(tmp_path, games=50, rounds=2, eval_deals=10, eval_opponents=["random"], **over)
        selfplay.SelfPlayRun(cfg, tmp_path / name, say=lambda line: None).run()
        arrays.append(np.load(tmp_path / name / "final.npz"))
    for key in arrays[0].files:
        np.testing.assert_array_equal(arrays[0][key], arrays[1][key])


@pytest.mark.slow
def test_ray_runners_play_the_rounds_the_threads_play(tmp_path):
    """The league at scale (`runners:`): two Ray actors play each round's games and the
    evaluations; the network, the curve and the decisions equal one process's."""
    pytest.importorskip("ray")
    base = tiny(tmp_path, games=50, rounds=2, eval_deals=10, eval_opponents=["random"])
    runners = selfplay.config_from_dict({**base.to_dict(), "runners": 2})
    out = {}
    for name, cfg in (("threads", base), ("runners", runners)):
        out[name] = selfplay.SelfPlayRun(cfg, tmp_path / name, say=lambda line: None).run()
    assert out["runners"]["decisions"] == out["threads"]["decisions"] > 0
    assert out["runners"]["final_evaluation"]["random"] == out["threads"]["final_evaluation"]["random"]
    a, b = np.load(tmp_path / "threads" / "final.npz"), np.load(tmp_path / "runners" / "final.npz")
    for key in a.files:
        np.testing.assert_array_equal(a[key], b[key])


def test_runners_and_ray_address_are_checked():
    with pytest.raises(ValueError, match=r"runners: got -1; expected an integer from 0"):
        selfplay.config_from_dict({"name": "x", "runners": -1})
    with pytest.raises(ValueError, match=r"ray_address: got 'auto'; expected null when runners is 0"):
        selfplay.config_from_dict({"name": "x", "ray_address": "auto"})


# --- the network files and the bots --------------------------------------------------------------


def test_a_plain_network_file_reads_back_and_a_wrong_layout_is_refused(tmp_path):
    rng = np.random.default_rng(0)
    net = (rng.normal(size=(43, 4)), rng.normal(size=4), rng.normal(size=(4, 2)), rng.normal(size=2),
           rng.normal(size=(2, 1)), rng.normal(size=1))
    path = write_win_chance(tmp_path / "p", net, variant="classic", num_players=2, meta={}, features="plain")
    spec, _ = read(*json_and_npz(path), kind=WIN_CHANCE)
    assert spec["features"] == "plain" and spec["num_features"] == 43
    data = json.loads(path.read_text())
    data["features"] = "fancy"
    path.write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match=r"features: got 'fancy'; expected one of \['heuristic', 'plain'\]"):
        read(*json_and_npz(path), kind=WIN_CHANCE)


SHIPPED = sorted(p.stem for p in networks_dir().glob("selfplay-*.json"))


def test_the_two_player_selfplay_network_ships():
    assert "selfplay-classic-2p" in SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_each_shipped_selfplay_network_is_a_bot_that_saw_no_teacher(name):
    spec = json.loads((networks_dir() / f"{name}.json").read_text())
    assert spec["features"] == "plain" and spec["meta"]["teacher"] is None
    assert (networks_dir() / f"{name}.md").is_file(), f"{name}: no model card"
    bot = bots.make(name)
    env = qwixx_v0.env(num_players=spec["num_players"], variant=spec["variant"])
    decisions = play_game(env, bot, seed=3)
    assert len(decisions) > 10 and all(obs["action_mask"][a] for obs, a in decisions)


def test_a_selfplay_bot_refuses_another_table():
    with pytest.raises(ValueError, match=r"num_players: got 3; selfplay-classic-2p plays num_players=2 only"):
        bots.make("selfplay-classic-2p", num_players=3)


def test_a_selfplay_network_refuses_rules_it_did_not_learn_under(tmp_path):
    """A Longo network learned with the lucky cross as a bonus refuses 'instead'; any network
    refuses a score table other than its sheet's."""
    from qwixx_env.bots.selfplay import SelfPlayNetwork
    from qwixx_env.core.options import TableOptions

    width = plain_num_features(2, 4)
    net = (np.zeros((width, 4)), np.zeros(4), np.zeros((4, 2)), np.zeros(2), np.zeros((2, 1)), np.zeros(1))
    write_win_chance(tmp_path / "selfplay-longo-2p", net, variant="longo", num_players=2, meta={}, features="plain")
    network = SelfPlayNetwork(tmp_path / "selfplay-longo-2p")
    network.check_table(TableOptions(variant="longo", num_players=2))
    with pytest.raises(ValueError, match=r"lucky: got 'instead'; selfplay-longo-2p plays lucky='bonus' only"):
        network.check_table(TableOptions(variant="longo", num_players=2, lucky="instead"))
    table = TableOptions(variant="longo", num_players=2, score_table=tuple(range(0, 30)))
    with pytest.raises(ValueError, match=r"score_table: got .*plays the sheet's own score table only"):
        network.check_table(table)
    assert network.arrays() is network.arrays()  # read once


def test_a_selfplay_run_folder_is_a_bot_spec_for_the_arena_and_the_bench(tmp_path):
    """`qwixx arena runs/sp heuristic`, `qwixx bench runs/sp`: the run's final network plays
    as a self-play bot (its table the network's), where a policy checkpoint's path plays PPO."""
    from qwixx_env.arena import run_arena
    from qwixx_env.bots.selfplay import SelfPlayBot
    from qwixx_env.bots.specs import as_spec, make_bot
    from qwixx_env.core.options import TableOptions

    width = plain_num_features(2)
    rng = np.random.default_rng(0)
    net = (rng.normal(size=(width, 8)), np.zeros(8), rng.normal(size=(8, 4)), np.zeros(4), rng.normal(size=(4, 1)),
           np.zeros(1))
    (tmp_path / "sp").mkdir()
    write_win_chance(tmp_path / "sp" / "final", net, variant="classic", num_players=2, meta={}, features="plain")
    spec = as_spec(str(tmp_path / "sp"))
    assert spec.label == "sp/final" and spec.default_table() == TableOptions(num_players=2)
    assert isinstance(make_bot(spec, TableOptions(num_players=2), seed=0), SelfPlayBot)
    with pytest.raises(ValueError, match=r"num_players: got 3; final plays num_players=2 only"):
        make_bot(spec, TableOptions(num_players=3), seed=0)
    result = run_arena([str(tmp_path / "sp"), "random"], num_players=2, games=4, seed=1, workers=1)
    assert result.bots[0]["games"] == 8  # each of the 4 deals in both seats


def test_a_run_folder_rewritten_in_this_process_plays_its_new_network(tmp_path):
    """A run still training writes its final network anew after each segment: a bot made from
    the folder afterwards plays the new weights, not the ones this process read first."""
    from qwixx_env.bots.selfplay import network
    from qwixx_env.bots.specs import make_bot
    from qwixx_env.core.options import TableOptions

    width = plain_num_features(2)
    (tmp_path / "sp").mkdir()
    firsts = []
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        net = (rng.normal(size=(width, 8)), np.zeros(8), rng.normal(size=(8, 4)), np.zeros(4),
               rng.normal(size=(4, 1)), np.zeros(1))
        write_win_chance(tmp_path / "sp" / "final", net, variant="classic", num_players=2, meta={}, features="plain")
        make_bot(str(tmp_path / "sp"), TableOptions(num_players=2), seed=0)
        firsts.append(network(tmp_path / "sp" / "final").arrays()[0])
        assert np.allclose(firsts[-1], net[0])
    assert not np.allclose(firsts[0], firsts[1])
