"""The Parallel API view `qwixx_v0.parallel_env()`: PettingZoo's own parallel tests, the same
games as the AEC env (a differential test over random games of every variant and player
count), the masks of seats without a decision, and bad input.

The differential test drives a `raw_env` beside the parallel view: after each parallel step it
hands the AEC env every action of that step, each when the AEC env asks that seat, and stops
where the AEC env asks for a decision the step did not hold. At every step both must agree on
the observations, masks, rewards, terminations and snapshots.
"""

from __future__ import annotations

import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test

from qwixx_env import qwixx_v0, replay
from qwixx_env.core.state import PHASES
from qwixx_env.envs.parallel import ParallelQwixx

from conftest import random_legal_action

DOCS = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"
CONFIGS = {
    "classic": {"variant": "classic"},
    "longo-bonus": {"variant": "longo", "lucky": "bonus"},
    "longo-instead": {"variant": "longo", "lucky": "instead"},
}
PLAYER_COUNTS = (1, 2, 3, 4, 5)
REWARDS = {1: ("score", "score_delta"), 2: ("win", "score_delta", "margin", "score")}


def options_for(config: str, num_players: int, seed: int) -> dict:
    """Table options that vary with the seed: reward mode, random or fixed first seat."""
    modes = REWARDS[min(num_players, 2)]
    start = "random" if seed % 2 else seed % num_players
    return {**CONFIGS[config], "num_players": num_players, "reward": modes[seed % len(modes)], "start_player": start}


def pass_only(num_actions: int) -> np.ndarray:
    mask = np.zeros(num_actions, np.int8)
    mask[-1] = 1
    return mask


def assert_same_position(par, par_obs, aec):
    """The game state and every seat's observation vector of the parallel view and the AEC env."""
    assert all(np.array_equal(a, b) for a, b in zip(par.raw.core_state, aec.core_state))
    for agent in aec.possible_agents:
        assert np.array_equal(par_obs[agent]["observation"], aec.observe(agent)["observation"]), agent


def play_both(options: dict, seed: int) -> dict[str, int]:
    """One random game on `raw_parallel_env` and `raw_env` side by side (see the module doc);
    returns how many steps of each kind it made."""
    par = qwixx_v0.raw_parallel_env(**options)
    aec = qwixx_v0.raw_env(**options)
    obs, infos = par.reset(seed=seed)
    aec.reset(seed=seed)
    assert set(obs) == set(infos) == set(aec.possible_agents)
    assert_same_position(par, obs, aec)
    rng = np.random.default_rng(seed)
    kinds = {"white": 0, "lucky": 0, "color": 0, "held": 0}
    held: dict[str, tuple[int, np.ndarray]] = {}  # actions the AEC env has not asked for yet
    while par.agents:
        acting = par.acting_agents
        phase = PHASES[aec.core_state.phase[0]]
        kinds[phase] += 1
        if phase == "white":
            assert acting == par.agents and not held  # every seat at once, at a new roll
        else:
            assert acting == [aec.agent_selection]  # a lucky tie or the colour action: one seat
        actions = {}
        for agent in par.agents:
            mask = obs[agent]["action_mask"]
            if agent in acting:
                actions[agent] = random_legal_action(mask, rng)
                held[agent] = (actions[agent], mask)
            else:
                assert np.array_equal(mask, pass_only(aec.num_actions))
                if rng.random() < 0.5:
                    actions[agent] = aec.num_actions - 1  # pass, or left out: the same
        live = par.agents
        obs, rewards, terminations, truncations, infos = par.step(actions)
        assert set(obs) == set(rewards) == set(terminations) == set(truncations) == set(infos) == set(live)
        aec_rewards = dict.fromkeys(live, 0)
        while aec.legal_actions() and aec.agent_selection in held:
            action, mask = held.pop(aec.agent_selection)
            assert np.array_equal(aec.observe(aec.agent_selection)["action_mask"], mask)
            aec.step(action)
            for agent in live:
                aec_rewards[agent] += aec.rewards[agent]
        kinds["held"] += bool(held)  # a tie before later seats' white choices reach the AEC env
        assert rewards == aec_rewards
        assert terminations == {a: aec.terminations[a] for a in live}
        assert truncations == {a: aec.truncations[a] for a in live} == dict.fromkeys(live, False)
        assert infos == {a: aec.infos[a] for a in live}
        assert_same_position(par, obs, aec)
        if aec.legal_actions():
            # the AEC env now asks for a decision the next parallel step holds
            assert aec.agent_selection in par.acting_agents and aec.agent_selection not in held
            to_decide = aec.agent_selection
            assert np.array_equal(obs[to_decide]["action_mask"], aec.observe(to_decide)["action_mask"])
        else:
            assert all(terminations.values()) and par.agents == [] and not held
            for agent in live:
                assert not obs[agent]["action_mask"].any()
    assert not held
    assert par.snapshot() == aec.snapshot()
    return kinds


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("config", CONFIGS)
def test_same_games_as_the_aec_env(config, num_players):
    kinds = {"white": 0, "lucky": 0, "color": 0, "held": 0}
    for seed in range(3):
        for kind, n in play_both(options_for(config, num_players, seed), seed).items():
            kinds[kind] += n
    assert kinds["white"] > 0 and kinds["color"] > 0
    if config == "longo-bonus":
        assert kinds["lucky"] > 0, "no lucky tie came up: the tie step went untested"
        if num_players > 1:
            assert kinds["held"] > 0, "no tie came before another seat's white choice: that case went untested"
    else:
        assert kinds["lucky"] == kinds["held"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
def test_same_games_as_the_aec_env_many_seeds(config):
    for num_players in PLAYER_COUNTS:
        for seed in range(3, 13):
            play_both(options_for(config, num_players, seed), seed)


# --- PettingZoo's own tests -------------------------------------------------------------------


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("config", CONFIGS)
def test_pettingzoo_parallel_api_and_seed_tests(config, num_players):
    make = lambda: qwixx_v0.parallel_env(num_players=num_players, **CONFIGS[config])  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the api test warns where an agent misses a dict entry
        parallel_api_test(make(), num_cycles=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its random actions are mostly illegal: env() ends the game
        parallel_seed_test(make)


def test_the_same_seed_and_actions_give_the_same_game():
    def game(seed):
        env = qwixx_v0.parallel_env(num_players=3, variant="longo")
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        trace = []
        while env.agents:
            actions = {a: random_legal_action(obs[a]["action_mask"], rng) for a in env.acting_agents}
            obs, rewards, *_ = env.step(actions)
            trace.append((env.snapshot(), rewards))
        return trace

    assert game(5) == game(5)
    assert game(5) != game(6)


# --- the API's pieces ---------------------------------------------------------------------------


def test_spaces_metadata_and_agents_are_the_aec_envs():
    par = qwixx_v0.parallel_env(num_players=3, variant="longo")
    aec = qwixx_v0.raw_env(num_players=3, variant="longo")
    assert isinstance(par, ParallelQwixx) and par.unwrapped is par
    assert par.metadata["name"] == "qwixx_v0" == str(par)
    assert par.metadata["render_modes"] == ["ansi", "human"]
    assert par.possible_agents == aec.possible_agents
    for agent in par.possible_agents:
        assert par.observation_space(agent) is par.observation_space(agent)
        assert par.action_space(agent) is par.action_space(agent)
        assert par.observation_space(agent) == aec.observation_space(agent)
        assert par.action_space(agent) == aec.action_space(agent)
    par.reset(seed=0)
    assert par.agents == par.possible_agents and par.num_agents == 3 and par.max_num_agents == 3


def test_options_are_checked_as_env_checks_them():
    with pytest.raises(ValueError, match="num_players"):
        qwixx_v0.parallel_env(num_players=6)
    with pytest.raises(ValueError, match="render_mode"):
        qwixx_v0.parallel_env(render_mode="rgb_array")


def test_state_is_not_offered_as_the_aec_env_has_none():
    par = qwixx_v0.parallel_env()
    par.reset(seed=0)
    with pytest.raises(NotImplementedError):
        par.state()


def test_ansi_render_names_every_seat_in_the_white_action_then_the_active_seat():
    par = qwixx_v0.parallel_env(num_players=3, render_mode="ansi")
    obs, _ = par.reset(seed=3)
    assert "to decide: player_0, player_1, player_2" in par.render()
    par.step({a: 44 for a in par.acting_agents})  # everyone passes the white action
    assert par.acting_agents == ["player_0"]
    text = par.render()
    assert "colour action | to decide: player_0\n" in text and "player_0 (active)" in text
    par.close()


def test_human_render_prints_once_a_step(capsys):
    par = qwixx_v0.parallel_env(num_players=2, render_mode="human")
    par.reset(seed=0)
    assert capsys.readouterr().out.count("Qwixx (classic)") == 1
    par.step({"player_0": 44, "player_1": 44})
    assert par.render() is None
    assert capsys.readouterr().out.count("Qwixx (classic)") == 2


def test_calls_before_reset_say_to_reset_first():
    par = qwixx_v0.parallel_env()
    for call in (lambda: par.step({}), par.render):
        with pytest.raises(RuntimeError, match="reset"):
            call()


def test_step_after_the_end_says_the_game_is_over():
    par = qwixx_v0.parallel_env(num_players=2)
    obs, _ = par.reset(seed=1)
    rng = np.random.default_rng(1)
    while par.agents:
        obs, *_ = par.step({a: random_legal_action(obs[a]["action_mask"], rng) for a in par.acting_agents})
    assert par.acting_agents == []
    with pytest.raises(ValueError, match="game is over; call reset"):
        par.step({"player_0": 44})


def test_a_pickled_view_is_a_new_table_with_the_same_options():
    par = qwixx_v0.raw_parallel_env(num_players=3, variant="longo", lucky="instead", reward="margin")
    par.reset(seed=0)
    copy = pickle.loads(pickle.dumps(par))
    with pytest.raises(RuntimeError, match="reset"):
        copy.step({})
    assert copy.reset(seed=7)[0].keys() == par.reset(seed=7)[0].keys()
    assert copy.snapshot() == par.snapshot() and copy.raw.options == par.raw.options
    assert type(copy.aec) is type(par.aec)


def test_record_replays_to_the_same_position():
    par = qwixx_v0.parallel_env(num_players=3, variant="longo", lucky_numbers=[(4, 8), (5, 9), (6, 10)])
    obs, _ = par.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(12):
        obs, *_ = par.step({a: random_legal_action(obs[a]["action_mask"], rng) for a in par.acting_agents})
    assert replay(par.record()).snapshot() == par.snapshot()


# --- bad input: a ValueError naming the agent and what is accepted; nothing changes ----------------


def position(par):
    """Everything the view shows, to compare before and after a refused step."""
    return par.snapshot(), par.record(), par.acting_agents, par.agents, {
        a: {k: v.tolist() for k, v in par.raw.observe(a).items()} for a in par.possible_agents
    }


def white_roll(make, seed=0):
    """A parallel env at its first white action, and the legal actions of each seat."""
    par = make(num_players=3, variant="classic")
    obs, _ = par.reset(seed=seed)
    return par, obs


@pytest.mark.parametrize("make", [qwixx_v0.parallel_env, qwixx_v0.raw_parallel_env])
@pytest.mark.parametrize(
    "actions, message",
    [
        ({"player_0": 44, "player_1": 44}, r"no action for player_2; this step needs one from player_0, player_1, "
         r"player_2 \(the white action, every seat at once\)"),
        ({"player_0": 44, "player_1": 44, "player_2": 44, "player_9": 44},
         r"no agent 'player_9' in this game; the agents are player_0, player_1, player_2"),
        ({"player_0": 44, "player_1": "pass", "player_2": 44},
         r"player_1: action 'pass' is not an integer action; legal now: \[.*44 \(pass\)\]"),
        ({"player_0": 44, "player_1": 45, "player_2": 44},
         r"player_1: action 45 is outside the action space 0..44; legal now: \[.*44 \(pass\)\]"),
        ([44, 44, 44], "actions must be a dict of agent -> action, got list"),
    ],
)
def test_bad_action_dicts_raise_and_change_nothing(make, actions, message):
    par, _ = white_roll(make)
    before = position(par)
    with pytest.raises(ValueError, match=message):
        par.step(actions)
    assert position(par) == before
    par.step({a: 44 for a in par.acting_agents})  # the game goes on


def illegal_white_action(obs, agent):
    return int(np.flatnonzero(obs[agent]["action_mask"] == 0)[0])


def test_raw_view_refuses_an_illegal_action_naming_the_agent_and_its_legal_actions():
    par, obs = white_roll(qwixx_v0.raw_parallel_env)
    bad = illegal_white_action(obs, "player_2")
    legal = ", ".join(str(a) for a in np.flatnonzero(obs["player_2"]["action_mask"]))
    before = position(par)
    with pytest.raises(ValueError, match=rf"player_2: action {bad} \(\w+ \d+\) is illegal in the white phase") as err:
        par.step({"player_0": 44, "player_1": 44, "player_2": bad})
    assert str(err.value).count("(") == len(legal.split(", ")) + 1  # every legal action, named
    assert position(par) == before


def test_raw_view_refuses_a_seat_without_a_decision_sending_anything_but_pass():
    par, obs = white_roll(qwixx_v0.raw_parallel_env)
    par.step({a: 44 for a in par.acting_agents})
    assert par.acting_agents == ["player_0"]
    before = position(par)
    with pytest.raises(ValueError, match=r"player_1: action 0 .* legal now: \[44 \(pass\)\] \(player_1 has no "
                                         r"decision this step: send pass or leave it out\)"):
        par.step({"player_0": 44, "player_1": 0})
    assert position(par) == before


@pytest.mark.parametrize("offender", ["player_0", "player_2"])
def test_env_view_ends_the_game_on_an_illegal_action_as_env_does(offender):
    """The parallel view under env() and env() itself, same seed, same decisions up to the bad one."""
    par, obs = white_roll(qwixx_v0.parallel_env, seed=4)
    actions = {a: 44 for a in par.acting_agents}
    actions[offender] = illegal_white_action(obs, offender)
    aec = qwixx_v0.env(num_players=3, variant="classic")
    aec.reset(seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obs, rewards, terminations, truncations, infos = par.step(actions)
        while aec.agent_selection != offender:
            aec.step(actions[aec.agent_selection])
        aec.step(actions[offender])
    assert rewards == aec.rewards and rewards[offender] < 0
    assert terminations == aec.terminations and truncations == aec.truncations
    assert all(terminations.values()) and par.agents == [] and par.acting_agents == []
    assert not any(o["action_mask"].any() for o in obs.values())


def test_env_view_ends_the_game_when_a_seat_without_a_decision_sends_more_than_pass():
    par, _ = white_roll(qwixx_v0.parallel_env)
    par.step({a: 44 for a in par.acting_agents})
    assert par.acting_agents == ["player_0"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, rewards, terminations, *_ = par.step({"player_0": 44, "player_2": 3})
    assert rewards["player_2"] < 0 and rewards["player_0"] == rewards["player_1"] == 0
    assert all(terminations.values()) and par.agents == []


def test_only_the_first_illegal_action_in_seat_order_from_the_active_seat_counts():
    par, obs = white_roll(qwixx_v0.parallel_env, seed=4)
    actions = {a: illegal_white_action(obs, a) for a in par.acting_agents}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, rewards, *_ = par.step(actions)
    assert rewards["player_0"] < 0 and rewards["player_1"] == rewards["player_2"] == 0


# --- the docs ---------------------------------------------------------------------------------------


def run_snippets(section: str, capsys, namespace: dict | None = None) -> tuple[str, str]:
    """Run the ```python blocks of one `## section` of docs/integrations.md; returns what they
    print and what the page says they print (its blocks after "prints"). Given a `namespace`,
    the blocks run in it, so that a test can look at what they made."""
    body = DOCS.read_text().split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", body, re.S)
    assert blocks, f"no python snippet under '## {section}'"
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. TorchRL's note on the PettingZoo release it tested
        for block in blocks:
            scope = {"__name__": "__docs__"} if namespace is None else namespace
            exec(compile(block, f"{DOCS.name}: {section}", "exec"), scope)
    shown = "".join(re.findall(r"prints[^`]*```\n(.*?)```", body, re.S))
    return capsys.readouterr().out, shown


def test_docs_snippets_run_as_written_and_print_what_the_docs_show(capsys):
    out, shown = run_snippets("PettingZoo's Parallel API", capsys)
    assert out == shown


@pytest.mark.parametrize("mode", ["win", "score_delta", "margin"])
def test_every_reward_is_a_float_in_both_views_an_illegal_ending_included(mode):
    """Not int 0 beside float -2.0: every reward the AEC env and the Parallel view hand out, at
    reset, each step and an illegal ending, is a Python float."""
    rng = np.random.default_rng(0)
    for seed in range(4):
        options = dict(num_players=3, variant="longo" if seed % 2 else "classic", reward=mode)
        aec = qwixx_v0.env(**options)
        aec.reset(seed=seed)
        illegal_at = rng.integers(5, 30) if seed < 2 else None  # two games end on an illegal action
        for step, agent in enumerate(aec.agent_iter()):
            _, reward, done, truncated, _ = aec.last()
            assert type(reward) is float and all(type(r) is float for r in aec.rewards.values())
            if done or truncated:
                aec.step(None)
                continue
            mask = aec.observe(agent)["action_mask"]
            aec.step(int(np.flatnonzero(mask == 0)[0]) if step == illegal_at else random_legal_action(mask, rng))
        par = qwixx_v0.parallel_env(**options)
        obs, _ = par.reset(seed=seed)
        for step in range(1000):
            actions = {a: random_legal_action(obs[a]["action_mask"], rng) for a in par.acting_agents}
            if step == illegal_at:
                actions[par.acting_agents[0]] = illegal_white_action(obs, par.acting_agents[0])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obs, rewards, terminations, truncations, _ = par.step(actions)
            assert rewards and all(type(r) is float for r in rewards.values()), rewards
            if not par.agents:
                break
        assert not par.agents
