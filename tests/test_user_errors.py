"""Errors a first-time user meets, worded as the others are: what went wrong, what is
accepted, what to do next."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from qwixx_env import ObservationView, bots, qwixx_v0
from qwixx_env.core.variant import CLASSIC
from qwixx_env.training.config import load_config

from conftest import tiny_checkpoint


def finished_raw_game():
    """A raw 2-player game played to its end by passing (the active player's fourth penalty)."""
    env = qwixx_v0.raw_env(num_players=2)
    env.reset(seed=0)
    while not env.terminations[env.agent_selection]:
        env.step(CLASSIC.pass_action)
    return env


def test_stepping_or_reading_a_finished_game_says_it_is_over_and_to_reset():
    env = finished_raw_game()
    with pytest.raises(ValueError, match=r"player_\d: step\(0\): the game is over; .*step\(None\).*reset\(\)"):
        env.step(0)
    for _ in env.possible_agents:  # every agent steps out
        env.step(None)
    assert env.agents == []
    with pytest.raises(RuntimeError, match=r"step\(0\): the game is over .*call reset\(\) to start a new game"):
        env.step(0)
    with pytest.raises(RuntimeError, match=r"last\(\): the game is over .*call reset\(\)"):
        env.last()
    env.reset(seed=1)  # and then it plays again
    assert env.last()[0]["action_mask"].any()


def test_a_seat_the_game_does_not_have_is_named_with_the_seats_it_has():
    env = qwixx_v0.raw_env(num_players=2)
    env.reset(seed=0)
    view = ObservationView(env.observe("player_0"), "classic", 2)
    assert set(view.marks(1)) == {"red", "yellow", "green", "blue"}
    with pytest.raises(ValueError, match=r"seat: got 2; expected a seat from 0 \(the observer\) to 1 in this "
                                         r"2-player game"):
        view.marks(2)


def test_the_gym_env_speaks_of_its_own_action_not_of_the_vector_env_underneath():
    env = gymnasium.make("qwixx_env/Qwixx-v0", illegal_action="raise").unwrapped
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError) as err:
        env.step(illegal)
    message = str(err.value)
    assert message.startswith(f"action: got {illegal}, which is not legal now; legal now: ")
    assert "game 0" not in message and "learner seat" not in message and "action_mask" in message


def test_a_key_set_twice_in_a_config_names_the_file(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text("name: a\nseed: 1\nseed: 2\n")
    with pytest.raises(ValueError) as err:
        load_config(path)
    assert "<unicode string>" not in str(err.value)
    assert str(err.value).count(str(path)) >= 2 and "line 3" in str(err.value)  # the file, and where in it


def test_loading_a_run_folder_loads_its_final_policy_or_says_where_it_will_be(tmp_path):
    run = tmp_path / "runs" / "my2p"
    run.mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=rf"{run}: a folder without final\.json; .* as {run}/final "):
        bots.load(run)
    with pytest.raises(FileNotFoundError, match=r"my3p\.json: no such file \(.*<run folder>/final"):
        bots.load(tmp_path / "runs" / "my3p")
    tiny_checkpoint(run, "final")
    assert bots.load(run).policy.source == str(run / "final.json")
