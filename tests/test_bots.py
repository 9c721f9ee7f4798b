"""Bots act from observations only: the rebuilt state, the registry, legal actions."""

import numpy as np
import pytest

from qwixx_env import BatchedQwixx, ObservationView, bots, qwixx_v0
from qwixx_env.core import layout_for, state_from_observation
from qwixx_env.core.policies import greedy_action

CONFIGS = [
    dict(num_players=1, variant="classic"),
    dict(num_players=2, variant="classic"),
    dict(num_players=4, variant="classic"),
    dict(num_players=3, variant="longo"),
    dict(num_players=2, variant="longo", lucky="instead"),
]


def random_positions(config, steps=60, games=32, seed=0):
    """Yield (engine, b) for many positions reached by random legal play."""
    engine = BatchedQwixx(games, **config)
    engine.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        for b in range(games):
            yield engine, b
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in engine.masks])
        engine.step(actions)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_state_from_observation_round_trips_the_observation(config):
    """Encoding the rebuilt state from the observer (seat 0 there) gives the same vector."""
    layout = None
    for engine, b in random_positions(config):
        layout = layout or layout_for(engine.variant, engine.num_players)
        view = ObservationView(engine.obs[b], engine.variant, engine.num_players)
        rebuilt = state_from_observation(view)
        again = layout.encode(rebuilt, np.zeros(1, np.int64))[0]
        np.testing.assert_array_equal(again, engine.obs[b])


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_greedy_bot_from_observations_plays_as_the_engines_greedy_kernel(config):
    v = None
    for max_skip in (0, 2):
        bot = bots.make("greedy", variant=config["variant"], num_players=config["num_players"], max_skip=max_skip)
        for engine, b in random_positions(config, steps=25, games=16, seed=max_skip):
            v = engine.variant
            mask = engine.masks[b]
            expected = greedy_action(engine.state, v.tables, b, mask.copy(), max_skip, 2)
            assert bot.act({"observation": engine.obs[b], "action_mask": mask}) == expected


@pytest.mark.parametrize("name", ["random", "greedy"])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_bots_pick_only_legal_actions_through_the_aec_env(name, config):
    P = config["num_players"]
    players = [bots.make(name, variant=config["variant"], num_players=P, seed=s) for s in range(P)]
    env = qwixx_v0.raw_env(**config)  # raw: an illegal action would raise
    for game in range(5):
        env.reset(seed=game)
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            action = None if terminated or truncated else players[env.agent_name_mapping[agent]].act(obs)
            if action is not None:
                assert obs["action_mask"][action] == 1
            env.step(action)


def test_greedy_outscores_random_in_solo_classic():
    scores = {}
    for name in ("random", "greedy"):
        bot = bots.make(name, num_players=1, seed=0)
        env = qwixx_v0.env(num_players=1)
        total = 0
        for game in range(40):
            env.reset(seed=game)
            for _ in env.agent_iter():
                obs, _, terminated, truncated, _ = env.last()
                env.step(None if terminated or truncated else bot.act(obs))
            total += env.unwrapped.snapshot()["players"][0]["score"]
        scores[name] = total / 40
    assert scores["greedy"] > scores["random"] + 40


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        (dict(name="nope"), "'nope'"),
        (dict(name="greedy", variant="mega"), "'mega'"),
        (dict(name="greedy", num_players=6), "6"),
        (dict(name="greedy", max_skip=-1), "max_skip"),
        (dict(name="random", colour="red"), "colour"),
    ],
)
def test_make_rejects_bad_input_with_a_clear_message(kwargs, needle):
    name = kwargs.pop("name")
    with pytest.raises(ValueError, match=needle):
        bots.make(name, **kwargs)


def test_available_lists_the_registered_bots():
    assert {"random", "greedy", "solo_optimal"} <= set(bots.available())
