"""The training pipeline: config checks, a tiny run end to end, checkpoints that survive an
interrupted save, resume, the behaviour-cloning warm start, and a package that still imports
without torch. Runs are tiny (a few thousand steps, small networks) to stay fast."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")

from qwixx_env import bots, extras, qwixx_v0
from qwixx_env.bots import sb3_zip
from qwixx_env.nets.checkpoint import WIN_CHANCE, json_and_npz, read
from qwixx_env.nets.win_chance import kernel_arrays, networks_dir
from qwixx_env.policies.value import num_features
from qwixx_env.training import checkpoint
from qwixx_env.training import main as qwixx_train
from qwixx_env.training.config import config_from_dict, load_config
from qwixx_env.training.config_yaml import config_path, shipped_configs
from qwixx_env.training.train import main
from qwixx_env.training.trainer import Trainer, segment_seed

from conftest import play_game

CONFIGS = Path(__file__).resolve().parent.parent / "configs"

# 8 games x 64 steps = 512 learner steps per rollout.
TINY = {
    "name": "tiny",
    "seed": 3,
    "variant": "classic",
    "num_players": 2,
    "reward": "win",
    "num_envs": 8,
    "total_steps": 1024,
    "checkpoint_every": 512,
    "network": {"pi": [32], "vf": [32], "activation": "tanh"},
    "ppo": {"n_steps": 64, "batch_size": 256, "n_epochs": 2},
    "opponents": {
        "scripted": {"greedy": 1, "random": 1},
        "self_play": {"snapshot_every": 512, "add_when_win_rate": 0.99, "max_snapshots": 2, "share": 0.5},
    },
    "evaluation": {"every": 1024, "games": 3, "opponents": ["random", "greedy"]},
}


def tiny(**changes) -> dict:
    data = json.loads(json.dumps(TINY))
    data.update(changes)
    return data


def quiet_run(data: dict, out: Path, *, resume: bool = False) -> dict:
    return Trainer(config_from_dict(data), out, resume=resume, progress=False).run()


# --- the config ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", sorted(p.stem for p in CONFIGS.glob("*.yaml") if not p.stem.startswith(("rllib_", "selfplay_", "jax_")))
)
def test_the_shipped_configs_load(name):
    cfg = load_config(CONFIGS / f"{name}.yaml")
    assert cfg.name and cfg.total_steps > 0


def test_a_shipped_config_is_found_by_name_and_a_wrong_name_lists_them(tmp_path, monkeypatch):
    assert shipped_configs() == sorted(p.stem for p in CONFIGS.glob("*.yaml"))  # every one ships
    assert config_path("classic_2p").read_bytes() == (CONFIGS / "classic_2p.yaml").read_bytes()
    assert load_config("classic_2p") == load_config(CONFIGS / "classic_2p.yaml")
    with pytest.raises(ValueError, match=r"config: got 'classic_2q', which is neither a file nor a shipped config; "
                                         r"expected a YAML file's path or one of \[.*'classic_2p', .*'demo'"):
        load_config("classic_2q")
    own = tmp_path / "classic_2p"  # a file of that name in the working folder is the user's
    own.write_text("name: mine\nextends: " + str(CONFIGS / "classic_2p.yaml") + "\n")
    monkeypatch.chdir(tmp_path)
    assert load_config("classic_2p").name == "mine"
    with pytest.raises(ValueError, match=r"config: no file 'missing/classic_2p.yaml'"):  # a path stays a path
        load_config("missing/classic_2p.yaml")


def test_an_rllib_config_given_to_the_ppo_trainer_says_which_engine_runs_it():
    path = CONFIGS / "rllib_classic_2p.yaml"
    with pytest.raises(ValueError, match=r"an RLlib config .*--engine rllib"):
        load_config(path)


def test_a_selfplay_config_given_to_the_ppo_trainer_says_which_engine_runs_it():
    with pytest.raises(ValueError, match=r"a self-play config .*qwixx-train --engine selfplay"):
        load_config(CONFIGS / "selfplay_classic_2p.yaml")


def test_a_jax_config_given_to_the_ppo_trainer_says_which_engine_runs_it():
    with pytest.raises(ValueError, match=r"a JAX PPO config .*qwixx-train --engine jax"):
        load_config(CONFIGS / "jax_ppo_classic_2p.yaml")


def test_qwixx_train_engine_jax_without_its_extra_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(extras, "missing", lambda extra, modules=None: ["jax", "optax"] if extra == "jax" else [])
    assert qwixx_train(["--engine", "jax", "jax_ppo_classic_2p"]) == 2
    err = capsys.readouterr().err
    assert "--engine jax needs the jax extra" in err and 'pip install "qwixx_env[jax]"' in err


def test_a_config_that_extends_another_replaces_only_the_keys_it_sets(tmp_path):
    """Top-level keys replace the base's; inside a section each key set replaces that key
    whole (the scripted weights are not merged), and the section's other keys stay."""

    (tmp_path / "base.yaml").write_text(yaml.safe_dump(tiny()))
    (tmp_path / "child.yaml").write_text(yaml.safe_dump({
        "extends": "base.yaml", "name": "child", "ppo": {"learning_rate": 5.0e-4},
        "opponents": {"scripted": {"greedy": 1}},
    }))
    base, child = load_config(tmp_path / "base.yaml"), load_config(tmp_path / "child.yaml")
    assert child.name == "child" and child.ppo.learning_rate == 5.0e-4
    assert child.opponents.scripted == {"greedy": 1}
    assert child.ppo.n_steps == base.ppo.n_steps and child.opponents.self_play == base.opponents.self_play
    assert {**child.to_dict(), "name": base.name, "ppo": base.to_dict()["ppo"],
            "opponents": base.to_dict()["opponents"]} == base.to_dict()


def test_the_shipped_extending_configs_differ_from_their_base_only_where_they_say():
    base, margin = (
        load_config(CONFIGS / "classic_4p.yaml").to_dict(),
        load_config(CONFIGS / "classic_4p_margin.yaml"),
    )
    assert (margin.name, margin.reward, margin.reward_scale) == ("classic_4p_margin", "margin", 0.03)
    assert {**margin.to_dict(), "name": "classic_4p", "reward": "win", "reward_scale": 1.0} == base


def test_a_shipped_config_copied_elsewhere_extends_the_shipped_base_unless_a_file_lies_beside_it(tmp_path):
    copy = tmp_path / "margin.yaml"
    copy.write_text((CONFIGS / "classic_4p_margin.yaml").read_text())
    assert load_config(copy).to_dict() == load_config(CONFIGS / "classic_4p_margin.yaml").to_dict()
    (tmp_path / "classic_4p.yaml").write_text(yaml.safe_dump(tiny()))  # a file beside it wins
    assert load_config(copy).num_envs == tiny()["num_envs"]


@pytest.mark.parametrize(
    "files, message",
    [
        (
            {"a.yaml": {"extends": "missing.yaml"}},
            r"config: no file '.*missing\.yaml' \(extended by '.*a\.yaml'\)",
        ),
        (
            {"a.yaml": {"extends": "b.yaml"}, "b.yaml": {"extends": "a.yaml"}},
            r"extends: a config may not extend itself",
        ),
        ({"a.yaml": {"extends": 3}}, r"extends: got 3 in '.*a\.yaml'; expected the path of a config file"),
        ({"a.yaml": {"extends": "b.yaml", "ppo": {"lr": 1}}, "b.yaml": None}, r"ppo\.lr: unknown key"),
    ],
)
def test_a_bad_extends_is_refused_by_name(tmp_path, files, message):

    for name, data in files.items():
        (tmp_path / name).write_text(yaml.safe_dump(tiny() if data is None else data))
    with pytest.raises(ValueError, match=message):
        load_config(tmp_path / "a.yaml")


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"ppo": {"learnin_rate": 0.1}},
            r"ppo\.learnin_rate: unknown key; accepted keys here: \['learning_rate'",
        ),
        ({"colour": "red"}, r"colour: unknown key"),
        ({"ppo": {"learning_rate": -1.0}}, r"ppo\.learning_rate: got -1\.0; expected a number > 0"),
        ({"ppo": {"learning_rate": "3e-4"}}, r"ppo\.learning_rate: got '3e-4'.*write 3\.0e-4"),
        ({"ppo": {"n_steps": 64.5}}, r"ppo\.n_steps: got 64\.5; expected an integer >= 1"),
        ({"num_players": 6}, r"num_players: got 6; expected an integer >= 1 and <= 5"),
        ({"variant": "mega"}, r"variant: got 'mega'; expected one of \('classic', 'longo'\), .*a sheet file"),
        ({"network": {"pi": [32, 0]}}, r"network\.pi\[1\]: got 0; expected an integer >= 1"),
        (
            {"network": {"activation": "gelu"}},
            r"network\.activation: got 'gelu'; expected one of \['tanh', 'relu'\]",
        ),
        (
            {"opponents": {"scripted": {"expert": 1}}},
            r"opponents\.scripted\.expert: bot name: got 'expert'; expected one of",
        ),
        (
            {"opponents": {"scripted": {"greedy": 0}}},
            r"opponents\.scripted\.greedy: got 0; expected a number > 0",
        ),
        ({"evaluation": {"opponents": ["nobody"]}}, r"evaluation\.opponents\[0\]: bot name: got 'nobody'"),
        (
            {"bc": {"teacher": "heuristic", "samples": "many"}},
            r"bc\.samples: got 'many'; expected an integer >= 100",
        ),
        ({"ppo": {"batch_size": 100_000}}, r"ppo\.batch_size: got 100000; expected at most"),
        ({"num_players": 1, "reward": "win"}, r"reward: .*'win' with num_players=1"),
        ({"inputs": ["dice"]}, r"inputs\[0\]: got 'dice'; expected one of \['afterstate', 'heuristic'\]"),
        ({"inputs": "afterstate"},
         r"inputs: got 'afterstate'; expected a list of one of \['afterstate', 'heuristic'\]"),
        (
            {"inputs": ["afterstate"], "num_players": 5},
            r"inputs: 'afterstate' needs a table with a win-chance network "
            r"\(classic with 2 players, classic with 3 players, classic with 4 players\); got classic with 5",
        ),
        (
            {"inputs": ["afterstate", "afterstate"]},
            r"inputs: got \['afterstate', 'afterstate'\]; expected each name once",
        ),
        (
            {"variant": "longo", "opponents": {"scripted": {"afterstate": 1}}},
            r"opponents\.scripted\.afterstate: bot 'afterstate' cannot play longo with 2 player\(s\): .*classic with 2 "
            r"players, classic with 3 players, classic with 4 players",
        ),
        # bots that exist but cannot play the run's table are refused when the config is read
        (
            {"evaluation": {"opponents": ["greedy", "ppo-classic-4p"]}},
            r"evaluation\.opponents\[1\]: bot 'ppo-classic-4p' "
            r"cannot play classic with 2 player\(s\): "
            r"num_players: got 2",
        ),
        (
            {"variant": "longo", "evaluation": {"opponents": ["solo_optimal"]}},
            r"evaluation\.opponents\[0\]: bot 'solo_optimal' cannot play longo with 2 player\(s\)",
        ),
        ({"bc": {"teacher": "ppo-longo-2p"}}, r"bc\.teacher: bot 'ppo-longo-2p' cannot play classic"),
        (
            {"num_players": 5, "bc": {"teacher": "afterstate"}},
            r"bc\.teacher: bot 'afterstate' cannot play classic with 5 player\(s\)",
        ),
        # bots with parameters, as the arena reads them: a malformed or unknown parameter is named
        (
            {"bc": {"teacher": "rollout:leaf"}},
            r"bc\.teacher: bot 'rollout:leaf': parameter 'leaf' is not key=value",
        ),
        (
            {"bc": {"teacher": "rollout:depth=3"}},
            r"bc\.teacher: bot 'rollout:depth=3': bot 'rollout': .*\['depth'\]",
        ),
        ({"bc": {"teacher": "heuristic:weights=3"}}, r"bc\.teacher: bot 'heuristic:weights=3': "),
        (
            {"bc": {"teacher": "heuristic:variant=longo"}},
            r"bc\.teacher: bot 'heuristic:variant=longo': \['variant'\] set, but the run's config sets",
        ),
        (
            {"num_players": 5, "bc": {"teacher": "afterstate:seed=1"}},
            r"bc\.teacher: bot 'afterstate:seed=1': \['seed'\] set, but the run's config sets",
        ),
        (
            {"num_players": 5, "evaluation": {"opponents": ["afterstate:x=1"]}},
            r"evaluation\.opponents\[0\]: bot 'afterstate:x=1' cannot play classic with 5 player\(s\)",
        ),
        (
            {"evaluation": {"opponents": ["rollout:leaf=deep"]}},
            r"evaluation\.opponents\[0\]: bot 'rollout:leaf=deep': leaf: got 'deep'; expected one of",
        ),
        (
            {"evaluation": {"opponents": ["nosuch:x=1"]}},
            r"evaluation\.opponents\[0\]: bot name: got 'nosuch'; expected one of",
        ),
        ({"seed": 2**32}, r"seed: got 4294967296; expected an integer >= 0 and <= 4294967295"),
        ({"name": ""}, r"name: got ''; expected a non-empty relative name without '\.\.'"),
        ({"name": "/tmp/run"}, r"name: got '/tmp/run'"),
        ({"name": "../elsewhere"}, r"name: got '\.\./elsewhere'"),
        ({"ppo": {"learning_rate": "0.0003"}}, r"ppo\.learning_rate: got '0\.0003'.*\(it is quoted"),
    ],
)
def test_a_bad_config_names_the_key_the_value_and_what_is_accepted(change, message):
    with pytest.raises(ValueError, match=message):
        config_from_dict(tiny(**change))


def test_a_wrong_reward_is_named_once_and_the_longo_teacher_is_told_the_lucky_rule():
    with pytest.raises(ValueError) as err:
        config_from_dict(tiny(num_players=1, reward="win"))
    assert str(err.value).startswith("reward: got 'win'") and "reward: reward" not in str(err.value)
    cfg = config_from_dict(tiny(variant="longo", lucky="instead"))
    assert bots.make_bot("heuristic", cfg.table).variant.lucky_rule == "instead"
    assert (
        bots.make_bot("greedy", cfg.table).variant.name == "longo"
    )  # greedy does not take the rule, and is made all the same
    # a teacher or evaluation opponent may carry parameters, as on the arena's command line
    classic = config_from_dict(tiny(bc={"teacher": "rollout:leaf=afterstate,continuations=8"},
                                    evaluation={"opponents": ["greedy:max_skip=1"]}))
    teacher = bots.make_bot(classic.bc.teacher, classic.table)
    assert (teacher.leaf, teacher.continuations) == ("afterstate", 8)
    assert bots.make_bot("greedy:max_skip=1", classic.table).max_skip == 1


def test_names_of_nested_run_folders_are_accepted():
    for name in ("sweep/lr-3e-4", "my run", "café"):
        assert config_from_dict(tiny(name=name)).name == name


def test_a_resumed_segment_seed_stays_within_32_bits():
    top = 2**32 - 1
    config_from_dict(tiny(seed=top))  # the largest seed accepted (numpy's global seeding takes 32 bits) ...
    assert all(0 <= segment_seed(top, k) < 2**32 for k in range(10_000))  # ... resumes any number of times
    assert segment_seed(5, 0) == 5 and segment_seed(5, 2) == 5 + 2 * 1_000_003


def test_the_command_line_reports_a_folder_as_config_and_a_file_as_out_and_exits_2(tmp_path, capsys):
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(tiny()))
    assert main([str(tmp_path), "--out", str(tmp_path / "run")]) == 2
    assert "is a folder; expected a YAML file" in capsys.readouterr().err
    (tmp_path / "a_file").write_text("not a run")
    assert main([str(good), "--out", str(tmp_path / "a_file"), "--no-progress"]) == 2
    assert "is a file; expected a run folder" in capsys.readouterr().err
    (tmp_path / "latin1.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    assert main([str(tmp_path / "latin1.yaml")]) == 2
    assert "latin1.yaml': not UTF-8 text" in capsys.readouterr().err


def test_a_missing_required_key_and_a_solo_config_with_opponents_are_refused():
    data = tiny()
    del data["total_steps"]
    with pytest.raises(ValueError, match="total_steps: missing"):
        config_from_dict(data)
    with pytest.raises(ValueError, match="opponents: a solo game"):
        config_from_dict(tiny(num_players=1, reward="score"))


@pytest.mark.parametrize("text, key", [
    ("name: x\ntotal_steps: 10\ntotal_steps: 20\n", "'total_steps'"),
    ("name: x\nppo: {gamma: 0.9, gamma: 0.99}\n", "'gamma'"),
])
def test_a_key_set_twice_in_a_config_is_refused_naming_it(tmp_path, text, key):
    path = tmp_path / "twice.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"(?s)twice.yaml': not valid YAML: .*the key {key} is set twice"):
        load_config(path)


def test_qwixx_train_without_the_train_extra_says_what_to_install(monkeypatch, capsys):
    import importlib.util

    from qwixx_env import training

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in ("torch", "yaml") else real(name, *a)
    )
    assert training.main(["configs/demo.yaml"]) == 2
    err = capsys.readouterr().err
    assert (
        "qwixx-train needs the train extra (PyYAML, torch are not installed)" in err
        and 'pip install "qwixx_env[train]"' in err and "download.pytorch.org/whl/cpu" in err
    )


def test_help_and_list_need_no_extra_and_show_prints_a_config_that_loads_back(monkeypatch, capsys, tmp_path):
    import importlib.util

    from qwixx_env import training

    real = importlib.util.find_spec
    monkeypatch.setattr(  # no torch, no SB3: the train extra is missing
        importlib.util, "find_spec", lambda name, *a: None if name in ("torch", "sb3_contrib") else real(name, *a)
    )
    with pytest.raises(SystemExit) as done:
        training.main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and all(o in out for o in ("--engine", "--list", "--show", "--steps", training.DOCS))
    assert training.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == shipped_configs()
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)  # every config says what it is
    # --show: the whole config, extends: resolved; a copy of it loads as the shipped one and trains alone
    assert training.main(["--show", "longo_instead_3p"]) == 0
    shown = capsys.readouterr().out
    assert "extends" not in shown.replace("extends: resolved", "")
    (tmp_path / "mine.yaml").write_text(shown)
    assert load_config(tmp_path / "mine.yaml") == load_config("longo_instead_3p")
    assert training.main(["--show", "nope"]) == 2
    assert "neither a file nor a shipped config" in capsys.readouterr().err


def test_a_missing_config_is_an_error_that_points_to_the_list(capsys):
    with pytest.raises(SystemExit):
        main([])
    err = capsys.readouterr().err
    assert "the config is required" in err and "qwixx-train --list" in err


def test_the_command_line_reports_a_bad_config_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntotal_steps: 10\nppo: {gama: 0.9}\n")
    assert main([str(bad), "--out", str(tmp_path / "run")]) == 2
    assert "ppo.gama: unknown key" in capsys.readouterr().err


# --- a tiny run, resumed ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A 1024-step run, then resumed to 2048: every artefact of a finished run."""
    out = tmp_path_factory.mktemp("run")
    first = quiet_run(tiny(), out)
    second = quiet_run(tiny(total_steps=2048), out, resume=True)
    return out, first, second


@pytest.mark.slow
def test_a_run_writes_checkpoint_evaluations_curves_and_the_final_policy(run):
    out, first, second = run
    assert first["steps"] == 1024 and second["steps"] == 2048
    found = checkpoint.latest(out)
    assert found == out / "checkpoint"
    state = checkpoint.read_state(found)
    assert state["steps"] == 2048 and state["config"]["name"] == "tiny"
    assert (found / "model.zip").is_file()
    # the zip says its run and table itself (`qwixx bench` labels and checks it by them)
    assert sb3_zip.MEMBER in zipfile.ZipFile(found / "model.zip").namelist()  # read before state.json
    assert sb3_zip.read_game(found / "model.zip") == sb3_zip.ZipGame("tiny", config_from_dict(tiny()).table)
    assert [e["name"] for e in state["pool"]] == ["snapshot@1024", "snapshot@1536"]  # max_snapshots 2
    for e in state["pool"]:
        assert (found / "snapshots" / f"{e['file']}.npz").is_file()
    records = [json.loads(line) for line in (out / "eval.jsonl").read_text().splitlines()]
    assert [r["steps"] for r in records] == [0, 1024, 2048]
    for r in records:
        for name in ("random", "greedy"):
            low, high = r["opponents"][name]["win_interval"]
            rate = r["opponents"][name]["win_rate"]
            assert 0 <= low <= rate + 1e-12 and rate <= high <= 1
    assert "snapshot" in records[-1]  # measured against the newest snapshot too
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list((out / "tb").rglob("events.out.tfevents.*"))
    meta = json.loads((out / "final.json").read_text())["meta"]
    assert meta["steps"] == 2048 and meta["config"]["name"] == "tiny" and meta["machine"]["cpu_count"]


@pytest.mark.slow
def test_a_solo_run_clones_the_optimal_policy_and_is_measured_by_its_mean_score(tmp_path):
    data = tiny(
        num_players=1, reward="score_delta", reward_scale=0.02, opponents=None, total_steps=512,
        evaluation={"every": 512, "games": 4},
        bc={"teacher": "solo_optimal", "samples": 500, "epochs": 1, "batch_size": 128},
    )
    summary = quiet_run(data, tmp_path)
    assert summary["bc"]["samples"] >= 500 and 0 < summary["bc"]["agreement"] <= 1
    records = [json.loads(line) for line in (tmp_path / "eval.jsonl").read_text().splitlines()]
    assert [r["steps"] for r in records] == [0, 512]
    assert all(r["solo"]["games"] == 4 and "opponents" not in r for r in records)
    assert bots.load(tmp_path / "final").num_players == 1


@pytest.mark.slow
def test_the_final_policy_plays_as_a_bot_without_torch_objects(run):
    out, _, _ = run
    bot = bots.load(out / "final", num_players=2)
    env = qwixx_v0.env(num_players=2)
    play_game(env, bot, seed=0)
    assert env.unwrapped.snapshot()["roll"] > 0


@pytest.mark.slow
def test_the_same_config_and_seed_train_the_same_weights_and_another_seed_does_not(tmp_path):
    def weights(out, **changes):
        quiet_run(tiny(evaluation=None, **changes), out)
        with np.load(out / "final.npz") as z:
            return {k: z[k] for k in z.files}

    first, again, other = weights(tmp_path / "a"), weights(tmp_path / "b"), weights(tmp_path / "c", seed=4)
    assert first.keys() == again.keys() and all(np.array_equal(first[k], again[k]) for k in first)
    assert not all(np.array_equal(first[k], other[k]) for k in first)


@pytest.mark.slow
def test_resuming_a_finished_run_says_there_is_nothing_to_train_and_changes_nothing(run, capsys):
    out, _, second = run
    files = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    summary = quiet_run(tiny(total_steps=2048), out, resume=True)
    said = capsys.readouterr().out
    assert said.startswith(f"nothing to train: {out} is done at 2,048 steps (total_steps 2,048)") and "--steps" in said
    assert summary["nothing_to_train"] and summary["steps"] == 2048 and summary["final"] == second["final"]
    assert summary["wall_time"] == checkpoint.read_state(out / "checkpoint")["wall_time"]  # nothing added
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == files  # nothing written


@pytest.mark.slow
def test_resume_refuses_a_changed_game_and_a_run_without_checkpoint(run, tmp_path):
    out, _, _ = run
    with pytest.raises(ValueError, match=r"differs from the checkpoint's in \['network'\]"):
        quiet_run(tiny(total_steps=4096, network={"pi": [16], "vf": [32]}), out, resume=True)
    with pytest.raises(ValueError, match=r"differs from the checkpoint's in \['name'\]"):
        before = (out / "config.yaml").read_bytes()
        quiet_run(tiny(name="another", total_steps=4096), out, resume=True)
    assert (out / "config.yaml").read_bytes() == before  # a refused resume writes nothing
    with pytest.raises(ValueError, match="no checkpoint"):
        quiet_run(tiny(), tmp_path / "empty", resume=True)
    with pytest.raises(ValueError, match="already holds a run"):
        quiet_run(tiny(), out)


def damage(folder: Path, how: str) -> None:
    state_path = folder / "state.json"
    if how == "not json":
        state_path.write_text("{")
    elif how == "no pool":
        state = json.loads(state_path.read_text())
        del state["pool"]
        state_path.write_text(json.dumps(state))
    elif how == "file outside":  # a tampered entry naming a file beyond the checkpoint
        state = json.loads(state_path.read_text())
        state["pool"][0]["file"] = "../../elsewhere"
        state_path.write_text(json.dumps(state))
    else:  # a snapshot file gone
        next((folder / "snapshots").glob("*.npz")).unlink()


@pytest.mark.slow
@pytest.mark.parametrize("how, message", [
    ("file outside", r"pool: got .*'\.\./\.\./elsewhere'.*expected a list of snapshot entries"),
    ("not json", r"state.json: not a readable state file"),
    ("no pool", r"state.json: missing the fields \['pool'\]"),
    ("snapshot gone", r"the pool's snapshot file snapshot_\d+\.npz is missing"),
])
def test_resume_from_a_damaged_checkpoint_names_the_damage_and_writes_nothing(run, tmp_path, how, message):
    out = tmp_path / "run"
    shutil.copytree(run[0], out)
    damage(out / "checkpoint", how)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match=message):
        quiet_run(tiny(total_steps=4096), out, resume=True)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


# --- interrupted checkpoints -----------------------------------------------------------------


@pytest.mark.slow
def test_a_run_killed_while_saving_resumes_from_the_previous_complete_checkpoint(tmp_path, monkeypatch):
    saves = []
    real_sync = checkpoint._sync_tree

    def dies_on_second_save(folder):
        saves.append(folder)
        if len(saves) == 2:
            raise KeyboardInterrupt("killed mid-save")
        real_sync(folder)

    monkeypatch.setattr(checkpoint, "_sync_tree", dies_on_second_save)
    data = tiny(total_steps=2048, evaluation=None)
    with pytest.raises(KeyboardInterrupt):
        quiet_run(data, tmp_path)
    found = checkpoint.latest(tmp_path)
    assert found == tmp_path / "checkpoint" and checkpoint.read_state(found)["steps"] == 512
    assert (tmp_path / "checkpoint.tmp").exists()  # the half-written one, never trusted
    monkeypatch.setattr(checkpoint, "_sync_tree", real_sync)
    summary = quiet_run(data, tmp_path, resume=True)
    assert summary["steps"] == 2048
    assert checkpoint.read_state(checkpoint.latest(tmp_path))["steps"] == 2048
    assert not (tmp_path / "checkpoint.tmp").exists()


def test_a_kill_between_the_two_renames_leaves_the_old_checkpoint_found(tmp_path, monkeypatch):
    def files(steps):
        return lambda folder: (folder / checkpoint.MODEL).write_text(f"model at {steps}")

    checkpoint.save(tmp_path, {"steps": 1}, files(1))
    real_replace = checkpoint.os.replace
    calls = []

    def second_rename_fails(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt("killed between the renames")
        real_replace(src, dst)

    monkeypatch.setattr(checkpoint.os, "replace", second_rename_fails)
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save(tmp_path, {"steps": 2}, files(2))
    monkeypatch.setattr(checkpoint.os, "replace", real_replace)
    assert not (tmp_path / "checkpoint").exists()
    found = checkpoint.latest(tmp_path)
    assert found == tmp_path / "checkpoint.old" and checkpoint.read_state(found) == {"steps": 1}
    checkpoint.save(tmp_path, {"steps": 3}, files(3))  # the next save recovers
    assert checkpoint.read_state(checkpoint.latest(tmp_path)) == {"steps": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]


# --- behaviour cloning -------------------------------------------------------------------------


@pytest.mark.slow
def test_behaviour_cloning_agrees_with_the_teacher_far_above_chance():
    from sb3_contrib import MaskablePPO

    from qwixx_env import QwixxVectorEnv
    from qwixx_env.envs.sb3 import Sb3VecEnv
    from qwixx_env.training import bc
    from qwixx_env.training.ppo import ppo_options

    cfg = config_from_dict(tiny(network={"pi": [64], "vf": [64]}))
    demos, stats = bc.collect(cfg, bots.make_bot("heuristic", cfg.table, 0), 4000, seed=0, num_envs=32)
    assert len(demos) >= 4000 and stats["samples_per_second"] > 0
    assert np.isfinite(demos.returns).all() and set(np.unique(demos.returns.round(6))) != {0.0}
    assert demos.masks[np.arange(len(demos)), demos.actions].all()  # the teacher plays legally
    venv = Sb3VecEnv(QwixxVectorEnv(8, num_players=2))
    model = MaskablePPO("MlpPolicy", venv, seed=0, device="cpu", **ppo_options(cfg))
    fit = bc.clone(model, demos, epochs=4, batch_size=128, learning_rate=3e-3, vf_coef=0.5, seed=0)
    assert fit["agreement"] > fit["agreement_chance"] + 0.25, fit
    assert fit["agreement"] > fit["agreement_before"] + 0.2, fit


# --- the package without torch -----------------------------------------------------------------


@pytest.mark.slow
def test_the_package_and_its_bots_import_without_torch():
    script = textwrap.dedent(
        """
        import sys

        class NoTorch:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "stable_baselines3", "sb3_contrib"):
                    raise ImportError(f"{name} is blocked")
                return None

        sys.meta_path.insert(0, NoTorch())
        import qwixx_env, qwixx_env.bots
        bot = qwixx_env.bots.make("heuristic")
        assert "torch" not in sys.modules
        print("ok", type(bot).__name__)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok HeuristicBot"


def test_value_leaf_training_writes_a_network_the_rollout_bot_reads(tmp_path):
    """A tiny run of training/value_leaf.py: the positions are labelled with a win share, the
    network is written atomically in the file format `win_chance_network` reads, and it predicts
    the held-out games better than a coin."""
    from qwixx_env.training import value_leaf

    x, y, game = value_leaf.collect(200, seed=0, explore=0.05)
    assert x.shape[1] == value_leaf.NUM_FEATURES and len(x) == len(y) == len(game) > 200 * 10
    assert set(np.unique(y)) <= {0.0, 0.5, 1.0}
    # every game gives both seats' sides of each position: their shares add up to 1
    np.testing.assert_array_equal(y[0::2] + y[1::2], np.ones(len(y) // 2))
    out = tmp_path / "value"
    value_leaf.main(["--games", "300", "--epochs", "2", "--seed", "0", "--out", str(out)])
    spec, arrays = read(*json_and_npz(out), kind=WIN_CHANCE)
    shapes = dict(zip(("w1", "b1", "w2", "b2", "w3", "b3"), (a.shape for a in kernel_arrays(spec, arrays))))
    report = spec["meta"]
    assert shapes["w1"] == (value_leaf.NUM_FEATURES, value_leaf.HIDDEN[0]) and shapes["w3"] == (
        value_leaf.HIDDEN[1],
        1,
    )
    assert report["held_out_log_loss"] < report["coin_log_loss"]
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


@pytest.mark.slow
def test_a_run_with_afterstate_inputs_exports_a_policy_that_computes_them(tmp_path):
    """Warm start from `afterstate`, the `afterstate` bot in the pool, afterstate inputs: the
    final numpy policy records the inputs and picks the torch model's actions from plain
    observations."""
    from sb3_contrib import MaskablePPO

    from qwixx_env import QwixxVectorEnv
    from qwixx_env.bots.afterstate import afterstate_inputs
    from qwixx_env.bots.pretrained import NumpyPolicy

    data = tiny(inputs=["afterstate"], opponents={"scripted": {"afterstate": 1, "greedy": 1}},
                bc={"teacher": "afterstate", "samples": 600, "epochs": 2, "batch_size": 128},
                evaluation={"every": 1024, "games": 2, "opponents": ["afterstate"]})
    quiet_run(data, tmp_path / "run")
    policy = NumpyPolicy.load(tmp_path / "run" / "final")
    assert policy.inputs == ("afterstate",)
    assert (
        json.loads((tmp_path / "run" / "final.json").read_text())["networks"]["policy"][0]["in"] == 198 + 45
    )
    model = MaskablePPO.load(tmp_path / "run" / "checkpoint" / checkpoint.MODEL, device="cpu")
    env = QwixxVectorEnv(32, opponents="heuristic")
    obs, _ = env.reset(seed=1)
    wide = np.hstack([obs["observation"], afterstate_inputs(obs["observation"])])
    expected, _ = model.predict(wide, action_masks=obs["action_mask"].astype(bool), deterministic=True)
    np.testing.assert_array_equal(policy(obs["observation"], obs["action_mask"]), expected)


def test_afterstate_value_iteration_writes_a_network_the_bot_reads(tmp_path):
    """Two tiny rounds of training/afterstate.py: the same seed collects the same positions,
    and the written network has the last round's shape and beats a coin on held-out games."""
    from qwixx_env.training import afterstate

    leaf = networks_dir() / "value-classic-2p"
    start = afterstate.read_network(leaf)
    a = afterstate.collect(start, 40, seed=5, explore=0.05)
    b = afterstate.collect(start, 40, seed=5, explore=0.05)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    out = tmp_path / "net"
    afterstate.main(["--start", str(leaf), "--games", "60,300",
                     "--hidden", "8x4,32x16", "--epochs", "1,4", "--seed", "3", "--eval-games", "0",
                     "--out", str(out)])
    net = afterstate.read_network(out)
    assert net[0].shape == (num_features(2), 32) and net[2].shape == (32, 16)
    rounds = json.loads((tmp_path / "net.json").read_text())["meta"]["rounds"]
    assert [r["games"] for r in rounds] == [60, 300]
    assert rounds[-1]["held_out_log_loss"] < rounds[-1]["coin_log_loss"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_value_iteration_at_three_players_records_the_seats_it_should():
    """Self-play records every seat with the 3-player features; against heuristics only the
    policy's seat ((game + 1) % 3) is recorded, and its labels are win shares."""
    from qwixx_env.training import afterstate

    net = afterstate.read_network(networks_dir() / "afterstate-classic-3p")
    x, share, game, seat = afterstate.collect(net, 30, seed=2, explore=0.0, threads=1, num_players=3)
    assert x.shape[1] == num_features(3) == 52 and set(seat) == {0, 1, 2}
    x, share, game, seat = afterstate.collect(net, 30, seed=2, explore=0.0, threads=1, opponent="heuristic",
                                              num_players=3)
    assert (seat == (game + 1) % 3).all() and set(np.unique(share)) <= {0.0, 0.5, 1.0, 1 / 3}


def _constant_net(p: float) -> tuple[np.ndarray, ...]:
    """A network that rates every position p."""

    z = np.log(p / (1 - p))
    return (np.zeros((num_features(2), 2)), np.zeros(2), np.zeros((2, 2)), np.zeros(2), np.zeros((2, 1)),
            np.array([z]))


def test_td_labels_blend_the_next_value_with_the_next_target_along_each_seat():
    from qwixx_env.training.afterstate import td_labels

    net = _constant_net(0.25)
    x = np.zeros((7, 36))
    # game 0: seats 0 and 1 interleaved over 3 rolls (seat 0 won); game 1: seat 1 alone, 1 roll (lost)
    game = np.array([0, 0, 0, 0, 0, 0, 1])
    seat = np.array([0, 1, 0, 1, 0, 1, 1])
    share = np.array([1, 0, 1, 0, 1, 0, 0], np.float32)
    np.testing.assert_array_equal(td_labels(net, x, share, game, seat, 1.0), share)
    np.testing.assert_allclose(td_labels(net, x, share, game, seat, 0.0), [0.25, 0.25, 0.25, 0.25, 1, 0, 0])
    half = td_labels(net, x, share, game, seat, 0.5)
    # seat 0: last 1; before it 0.5*0.25 + 0.5*1 = 0.625; first 0.5*0.25 + 0.5*0.625 = 0.4375
    np.testing.assert_allclose(half[[0, 2, 4]], [0.4375, 0.625, 1.0])
    np.testing.assert_allclose(half[[1, 3, 5]], [0.1875, 0.125, 0.0])
    assert half[6] == 0.0
    with pytest.raises(ValueError, match=r"td_lambda: got 1\.5; expected a number in \[0, 1\]"):
        td_labels(net, x, share, game, seat, 1.5)


@pytest.mark.slow
def test_best_response_collection_records_only_the_policy_seat(tmp_path):
    """--opponent heuristic: the policy takes one seat of each game (alternating) and only its
    side is recorded; a bad opponent or lambda is refused by name; each round reports its
    games against heuristic."""
    from qwixx_env.training import afterstate

    net = afterstate.read_network(networks_dir() / "afterstate-classic-2p")
    x, y, game, seat = afterstate.collect(net, 30, seed=2, explore=0.0, threads=1, opponent="heuristic")
    assert len(x) > 30 * 10
    np.testing.assert_array_equal(seat, 1 - game % 2)  # game i: the heuristic sits in seat i % 2
    assert set(np.unique(y)) <= {0.0, 0.5, 1.0}
    with pytest.raises(ValueError, match="opponent: got 'rollout'; expected one of self, heuristic"):
        afterstate.collect(net, 4, seed=2, explore=0.0, opponent="rollout")
    rate, se = afterstate.match(net, 40, seed=1, threads=2)
    assert 0.0 <= rate <= 1.0 and se > 0
    assert afterstate.match(net, 40, seed=1, threads=2) == (rate, se)  # the same dice, the same games
    with pytest.raises(SystemExit, match="--td-lambda: got -0.5"):
        afterstate.main(["--td-lambda", "-0.5", "--out", str(tmp_path / "n.npz")])
    out = tmp_path / "br"
    afterstate.main(["--games", "80", "--hidden", "8x4", "--epochs", "1", "--opponent", "heuristic",
                     "--td-lambda", "0.7", "--eval-games", "20", "--threads", "1", "--out", str(out)])
    (report,) = json.loads((tmp_path / "br.json").read_text())["meta"]["rounds"]
    assert (
        report["opponent"] == "heuristic" and report["td_lambda"] == 0.7 and report["heuristic_games"] == 20
    )
    assert 0.0 <= report["heuristic_win_rate"] <= 1.0


def test_the_train_extra_qwixx_train_checks_is_the_one_pyproject_declares():
    import re

    import tomllib

    from qwixx_env import extras

    declared = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    names = {
        re.split(r"[<>=!~ ]", spec)[0].lower()
        for spec in declared["project"]["optional-dependencies"]["train"]
    }
    assert {p.lower() for p in extras.EXTRAS["train"].values()} == names


@pytest.mark.slow
def test_a_run_with_heuristic_inputs_exports_a_policy_that_computes_them(tmp_path):
    """Heuristic inputs on a Longo table with the lucky cross instead of the white cross (no
    win-chance network there), under the reward-scaling wrapper: the final numpy policy records
    the inputs once, computes them under
    its own lucky rule, and picks the torch model's actions from plain observations."""
    from sb3_contrib import MaskablePPO

    from qwixx_env import QwixxVectorEnv
    from qwixx_env.bots.pretrained import NumpyPolicy
    from qwixx_env.nets import heuristic_inputs

    data = tiny(inputs=["heuristic"], variant="longo", lucky="instead", reward_scale=0.5,  # a wrapper outside it
                bc={"teacher": "heuristic", "samples": 600, "epochs": 2, "batch_size": 128})
    quiet_run(data, tmp_path / "run")
    policy = NumpyPolicy.load(tmp_path / "run" / "final")
    assert policy.inputs == ("heuristic",) and policy.lucky == "instead"
    spec = json.loads((tmp_path / "run" / "final.json").read_text())
    assert spec["networks"]["policy"][0]["in"] == policy.observation_size + 61
    model = MaskablePPO.load(tmp_path / "run" / "checkpoint" / checkpoint.MODEL, device="cpu")
    env = QwixxVectorEnv(32, variant="longo", lucky="instead", opponents="heuristic")
    obs, _ = env.reset(seed=1)
    wide = np.hstack([obs["observation"], heuristic_inputs(obs["observation"], "longo", 2, "instead")])
    expected, _ = model.predict(wide, action_masks=obs["action_mask"].astype(bool), deterministic=True)
    np.testing.assert_array_equal(policy(obs["observation"], obs["action_mask"]), expected)
