"""One bot spec everywhere: a trained run's checkpoint (its path, its ``final.json``, its run
folder) and any bot with parameters play in the arena, in the envs' opponent pools and in a
training config's pool, checked by one function (`bots.specs.check_spec`) and shown under a
label that tells runs apart."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from test_training import tiny

from qwixx_env import QwixxVectorEnv, bots
from qwixx_env.arena import run_arena
from qwixx_env.bots.specs import BotPolicy, check_spec, opponent
from qwixx_env.cli import main as qwixx
from qwixx_env.core.options import TableOptions
from qwixx_env.nets import NumpyPolicy
from qwixx_env.training.config import config_from_dict

from conftest import tiny_checkpoint


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """Two finished runs' folders, runs/a and runs/b, each with its final policy; the working
    directory is tmp_path, so that "runs/a" reads as a user types it."""
    monkeypatch.chdir(tmp_path)
    for seed, name in enumerate(("a", "b")):
        (tmp_path / "runs" / name).mkdir(parents=True)
        tiny_checkpoint(tmp_path / "runs" / name, "final", seed=seed)
    return tmp_path / "runs"


def test_every_spelling_of_a_checkpoint_names_the_same_policy_under_its_run_and_stem(runs):
    spellings = ["runs/a/final", "runs/a/final.json", str(runs / "a" / "final"), "runs/a", str(runs / "a")]
    for text in spellings:
        spec = check_spec(text, variant="classic", num_players=2)
        assert spec.label == "a/final", text
        bot = spec.make(variant="classic", num_players=2, seed=0)
        assert bot.name == "a/final" and "a/final" in repr(bot)
    assert bots.load("runs/a").policy.source == bots.load("runs/a/final.json").policy.source


def test_the_arena_plays_checkpoint_paths_and_tells_runs_apart(runs, capsys):
    result = run_arena(["runs/a/final", str(runs / "b"), "random"], games=2, workers=1)
    assert result.labels == ["a/final", "b/final", "random"]
    assert qwixx(["arena", "runs/a/final.json", "runs/b", "greedy", "--games", "1", "--workers", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "a/final" in out and "b/final" in out


def test_an_rllib_run_folder_means_its_exported_policy_everywhere(runs, capsys):
    """An RLlib run (`qwixx_env.training.rllib`) exports its module as policy.json + policy.npz."""
    (runs / "rllib").mkdir()
    tiny_checkpoint(runs / "rllib", "policy", seed=3)
    assert bots.load("runs/rllib").policy.source == "runs/rllib/policy.json"
    assert check_spec("runs/rllib", variant="classic", num_players=2).label == "rllib/policy"
    assert qwixx(["arena", "runs/rllib", "runs/a", "--games", "1", "--workers", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "rllib/policy" in out and "a/final" in out


def test_a_folder_without_a_policy_names_both_files_looked_for(runs):
    (runs / "empty").mkdir()
    message = r"runs/empty: a folder without final\.json; nor policy\.json: .*runs/empty/final .*runs/empty/policy "
    with pytest.raises(FileNotFoundError, match=message):
        bots.load("runs/empty")
    with pytest.raises(ValueError, match=message):
        run_arena(["runs/empty", "random"], games=1, workers=1)
    assert qwixx(["arena", "runs/empty", "random", "--games", "1", "--workers", "1", "--quiet"]) == 2


def test_the_envs_take_checkpoint_paths_afterstate_and_bots_with_parameters(runs):
    specs = {"runs/a": 1, "afterstate": 1, "greedy:max_skip=1": 1, "heuristic": 1}
    env = QwixxVectorEnv(8, num_players=2, opponents=specs)
    kinds = [type(o).__name__ for o in env._pool]
    assert kinds == ["NumpyPolicy", "_Afterstate", "BotPolicy", "str"]
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        acts = [rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]]
        obs, *_ = env.step(np.array(acts))
    assert env.opponent_decisions > 0
    gym_env = gymnasium.make("qwixx_env/Qwixx-v0", opponents="runs/b/final.json")
    gym_env.reset(seed=0)
    assert isinstance(gym_env.unwrapped.vector._pool[0], NumpyPolicy)


def test_a_bot_with_parameters_plays_as_an_env_opponent_row_by_row():
    policy = opponent("rollout:threads=1,continuations=2,refine=1", variant="classic", num_players=2)
    assert isinstance(policy, BotPolicy) and repr(policy) == "rollout:threads=1,continuations=2,refine=1"
    env = QwixxVectorEnv(2, num_players=2, learner_seat=0, opponents=policy)
    obs, _ = env.reset(seed=1)
    env.step(np.array([np.flatnonzero(m)[-1] for m in obs["action_mask"]]))  # pass: the opponents move
    assert env.opponent_decisions > 0


def test_a_training_pool_takes_the_same_specs(runs):
    cfg = config_from_dict(tiny(opponents={"scripted": {"runs/a": 1, "afterstate": 1, "greedy:max_skip=1": 1}},
                                evaluation={"every": 1024, "games": 1, "opponents": ["runs/b", "greedy"]}))
    assert set(cfg.opponents.scripted) == {"runs/a", "afterstate", "greedy:max_skip=1"}


@pytest.mark.parametrize("spec, message", [
    ("nosuch", r"bot name: got 'nosuch'; expected one of \["),
    ("runs/none/final", r"runs/none/final\.json: no such file \(.*<run folder>/final"),
    ("greedy:seed=2", r"bot 'greedy:seed=2': \['seed'\] set, but "),
])
def test_a_bad_spec_is_refused_in_the_same_words_everywhere(runs, spec, message):
    with pytest.raises(ValueError, match=message):
        QwixxVectorEnv(1, opponents=spec)
    with pytest.raises(ValueError, match=message):
        gymnasium.make("qwixx_env/Qwixx-v0", opponents=spec)
    with pytest.raises(ValueError, match=message):
        run_arena([spec, "random"], games=1, workers=1)
    with pytest.raises(ValueError, match=rf"opponents\.scripted\.{spec}: .*" + message.split(": ", 1)[-1]):
        config_from_dict(tiny(opponents={"scripted": {spec: 1}}))


def test_a_checkpoint_that_plays_another_game_is_refused_as_an_opponent(runs):
    with pytest.raises(ValueError, match=r"opponents: bot 'a/final' cannot play classic with 3 player\(s\)"):
        QwixxVectorEnv(1, num_players=3, opponents="runs/a")


def test_the_default_opponent_is_stated_in_repr():
    assert "opponents='random'" in repr(QwixxVectorEnv(1))
    env = gymnasium.make("qwixx_env/Qwixx-v0")
    assert "opponents='random'" in repr(env.unwrapped) and "opponents='random'" in str(env)
    assert "opponents={'greedy': 2}" in repr(QwixxVectorEnv(1, opponents={"greedy": 2}))


def test_one_factory_makes_every_spelling_for_a_table_and_the_table_reaches_the_bot(runs):
    longo = TableOptions(num_players=3, variant="longo", lucky="instead")
    for spec in ("heuristic", ("rollout", {"threads": 1}), bots.BotSpec(label="h", name="heuristic")):
        bot = bots.make_bot(spec, longo, seed=0)
        assert (bot.variant.lucky_rule, bot.num_players) == ("instead", 3)
    assert bots.make_bot('heuristic:lucky="bonus"', longo).variant.lucky_rule == "bonus"  # its own rule wins
    assert bots.make_bot("runs/a", TableOptions(num_players=2)).name == "a/final"
    with pytest.raises(ValueError, match=r"table: got 'longo'; expected a qwixx_env.core.options.TableOptions"):
        bots.make_bot("greedy", "longo")
    with pytest.raises(ValueError, match=r"table: got a TableOptions and \['num_players'\] too"):
        bots.BotSpec(label="greedy", name="greedy").make(longo, num_players=2)
