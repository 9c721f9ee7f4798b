"""Bots act from observations only: the rebuilt state, the registry, legal actions."""

from pathlib import Path

import numpy as np
import pytest

from qwixx_env import BatchedQwixx, ObservationView, bots, qwixx_v0
from qwixx_env.bots import registry
from qwixx_env.core import layout_for, state_from_observation
from qwixx_env.core.options import TableOptions
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.scripted import greedy_action

from conftest import play_game, random_positions

CONFIGS = [
    dict(num_players=1, variant="classic"),
    dict(num_players=2, variant="classic"),
    dict(num_players=4, variant="classic"),
    dict(num_players=3, variant="longo"),
    dict(num_players=2, variant="longo", lucky="instead"),
]


def live_decisions(env):
    """Yield the observation of every decision of an AEC game; the caller steps its action
    (the finished agents' None steps are taken here)."""
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        yield obs


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_state_from_observation_round_trips_the_observation(config):
    """Encoding the rebuilt state from the observer (seat 0 there) gives the same vector."""
    layout = None
    for engine, b in random_positions(32, 60, **config):
        layout = layout or layout_for(engine.variant, engine.num_players)
        view = ObservationView(engine.obs[b], engine.variant, engine.num_players)
        rebuilt = state_from_observation(view)
        again = layout.encode(rebuilt, np.zeros(1, np.int64))[0]
        np.testing.assert_array_equal(again, engine.obs[b])


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_greedy_bot_from_observations_plays_as_the_engines_greedy_kernel(config):
    v = None
    for max_skip in (0, 2):
        bot = bots.make(
            "greedy", variant=config["variant"], num_players=config["num_players"], max_skip=max_skip
        )
        for engine, b in random_positions(16, 25, seed=max_skip, **config):
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
        for obs, action in play_game(env, players, seed=game):
            assert obs["action_mask"][action] == 1


def test_greedy_outscores_random_in_solo_classic():
    scores = {}
    for name in ("random", "greedy"):
        bot = bots.make(name, num_players=1, seed=0)
        env = qwixx_v0.env(num_players=1)
        total = 0
        for game in range(40):
            play_game(env, bot, seed=game)
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


@pytest.mark.parametrize(
    ("name", "table", "expected"),
    [
        ("greedy", {"variant": "longo", "num_players": 5}, True),  # no check_table: every table
        ("afterstate", {"num_players": 3}, True),
        ("afterstate", {"num_players": 5}, False),  # no network ships for 5 players
        ("afterstate", {"variant": "longo"}, False),
        ("solo_optimal", {"num_players": 4}, True),  # it plays its own sheet at any table
        ("solo_optimal", {"variant": "longo", "num_players": 1}, False),  # the solver covers classic only
        ("ppo-longo-2p", {"variant": "longo", "num_players": 2}, True),
        ("ppo-longo-2p", {"variant": "longo", "num_players": 2, "lucky": "instead"}, False),
        ("ppo-classic-2p", {"num_players": 3}, False),
    ],
)
def test_plays_says_which_tables_a_bot_plays_without_making_it(name, table, expected):
    """`registry.plays` asks the bot's own `check_table`; what it refuses, making the bot refuses too."""
    table = TableOptions(**table)
    assert registry.plays(name, table) is expected
    if not expected:
        with pytest.raises(ValueError):
            bots.make_bot(name, table, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_rollout_bot_picks_only_legal_actions(config):
    P = config["num_players"]
    players = [
        bots.make("rollout", variant=config["variant"], num_players=P, seed=s, continuations=4)
        for s in range(P)
    ]
    env = qwixx_v0.raw_env(**config)
    for game in range(2):
        play_game(env, players, seed=game)  # raw_env raises on an illegal action


def test_rollout_bot_is_deterministic_for_a_seed():
    env = qwixx_v0.raw_env(num_players=2)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    a = bots.make("rollout", seed=7, continuations=16).action_values(obs)
    b = bots.make("rollout", seed=7, continuations=16).action_values(obs)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.slow
@pytest.mark.parametrize(
    "config", [dict(num_players=2, variant="classic"), dict(num_players=3, variant="longo")]
)
def test_rollout_decisions_do_not_depend_on_the_number_of_threads(config):
    """Playouts shared over 1, 2 or 3 threads give the same values (each playout's outcome
    depends on its seed alone), hence the same decisions."""
    env = qwixx_v0.raw_env(**config)
    env.reset(seed=21)
    bots_by_threads = {
        t: bots.make("rollout", seed=4, continuations=8, threads=t, **config) for t in (1, 2, 3)
    }
    for _ in range(25):
        obs = env.observe(env.agent_selection)
        values = {t: b.action_values(obs) for t, b in bots_by_threads.items()}
        for t in (2, 3):
            np.testing.assert_array_equal(values[t][0], values[1][0])
            np.testing.assert_array_equal(values[t][1], values[1][1])
        actions = {b.act(obs) for b in bots_by_threads.values()}
        assert len(actions) == 1
        env.step(actions.pop())


def test_rollout_bot_takes_the_lock_that_wins_the_game():
    """Two players, red already locked; player_0 leads and may lock yellow with the white sum,
    ending the game as the winner. Every continuation after locking is a win: value 1 + margin."""
    from qwixx_env.core import CLASSIC, encode_action, state_from_snapshot

    snap = {
        "num_players": 2, "roll": 10, "active_player": 1, "phase": "white",
        "dice": {"white": [6, 6], "red": None, "yellow": 2, "green": 3, "blue": 4},
        "players": [
            {"marks": {"red": [2, 3, 4, 5, 6, 12], "yellow": [2, 3, 4, 5, 6], "green": [], "blue": []},
             "locks": ["red"], "penalties": 0},
            {"marks": {"red": [2], "yellow": [], "green": [12], "blue": []}, "locks": [], "penalties": 0},
        ],
    }
    st = state_from_snapshot(CLASSIC, snap)
    st.turn[0] = 0  # player_0 decides its white action (player_1, the active player, chose already)
    obs = layout_for(CLASSIC, 2).encode(st, np.zeros(1, np.int64))[0]
    mask = np.zeros(45, np.int8)
    lock_yellow = encode_action(("yellow", 12), "classic")
    mask[[lock_yellow, 44]] = 1
    observation = {"observation": obs, "action_mask": mask}
    full = bots.make("rollout", seed=0, continuations=32, horizon=0)  # playouts to the end
    legal, values = full.action_values(observation)
    assert full.act(observation) == lock_yellow
    assert values[list(legal).index(lock_yellow)] > 1.0
    # Truncated playouts score a finished game exactly: the margin minus the opponent weight
    # share, plus the win bonus.
    bot = bots.make("rollout", seed=0, continuations=32)
    legal, values = bot.action_values(observation)
    assert bot.act(observation) == lock_yellow
    assert values[list(legal).index(lock_yellow)] > values[list(legal).index(44)]


def test_rollout_keeps_the_default_policys_choice_without_evidence():
    """With an unreachable confidence the search never overrules its default policy."""
    P = 2
    stubborn = bots.make("rollout", num_players=P, seed=0, continuations=4, confidence=1e9)
    heuristic = bots.make("heuristic", num_players=P)
    env = qwixx_v0.raw_env(num_players=P)
    env.reset(seed=11)
    decisions = 0
    for obs in live_decisions(env):
        assert stubborn.act(obs) == heuristic.act(obs)
        decisions += 1
        env.step(heuristic.act(obs))
    assert decisions > 20


def test_rollout_with_an_anchor_keeps_the_anchors_choice_without_evidence():
    """`anchor` replaces the default policy's choice as the one to beat: with an unreachable
    confidence the search plays the anchor's actions, which are not the heuristic's."""
    stubborn = bots.make("rollout", seed=0, continuations=4, confidence=1e9, anchor="greedy")
    greedy, heuristic = bots.make("greedy"), bots.make("heuristic")
    env = qwixx_v0.raw_env(num_players=2)
    env.reset(seed=12)
    decisions = differ = 0
    for obs in live_decisions(env):
        action = stubborn.act(obs)
        assert action == greedy.act(obs)
        differ += action != heuristic.act(obs)
        decisions += 1
        env.step(action)
    assert decisions > 20 and differ > 0


@pytest.mark.parametrize("as_path", [str, Path])
def test_rollout_anchored_on_a_checkpoint_file_beats_its_choice_and_plays_as_anchored_on_its_name(as_path):
    from qwixx_env.nets import checkpoints_dir

    path = as_path(checkpoints_dir() / "ppo-classic-2p.json")
    by_path, by_name = (bots.make("rollout", seed=5, continuations=4, threads=1, anchor=a)
                        for a in (path, "ppo-classic-2p"))
    policy, heuristic = bots.load(path), bots.make("heuristic")
    env = qwixx_v0.raw_env(num_players=2)
    env.reset(seed=13)
    decisions = differ = 0
    for obs in live_decisions(env):
        legal, _, own = by_path._search(obs)  # the choice the search must beat
        assert legal[own] == policy.act(obs)
        differ += legal[own] != heuristic.act(obs)
        action = by_path.act(obs)
        assert action == by_name.act(obs)
        decisions += 1
        env.step(action)
    assert decisions > 20 and differ > 0


def test_rollout_refuses_an_anchor_that_plays_an_illegal_action():
    bot = bots.make("rollout", seed=0, continuations=4, anchor="greedy")

    class Illegal:
        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])  # the first illegal one

    bot.anchor = Illegal()
    engine = BatchedQwixx(1, num_players=2)
    engine.reset(seed=0)
    obs = {"observation": engine.obs[0], "action_mask": engine.masks[0]}
    illegal = int(np.flatnonzero(engine.masks[0] == 0)[0])
    with pytest.raises(
        ValueError, match=rf"anchor='greedy': chose action {illegal}, which is not legal here"
    ):
        bot.act(obs)


def test_rollout_gives_a_stochastic_anchor_its_own_stream_drawn_from_its_seed():
    """A `random` anchor does not replay the stream a `random` bot of the rollout's seed
    draws, and the same seed gives the same anchor."""
    env = qwixx_v0.raw_env(num_players=2)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    def draws(bot):
        return [bot.act(obs) for _ in range(40)]
    anchors = [bots.make("rollout", seed=s, continuations=4, anchor="random").anchor for s in (7, 7)]
    assert draws(anchors[0]) == draws(anchors[1])
    assert draws(bots.make("rollout", seed=7, continuations=4, anchor="random").anchor) != draws(
        bots.make("random", seed=7))


@pytest.mark.parametrize("anchor, match", [
    ("minimax", "not a bot name .*'greedy'.* nor a checkpoint file's path"),
    ("best.npz", "no such file"),
    ("ppo-classic-3p", "plays num_players=3 only"),
    ("rollout", "another bot"),
    (3, "another bot"),
    ("missing/bot.json", "no such file"),
])
def test_rollout_refuses_a_bad_anchor(anchor, match):
    with pytest.raises(ValueError, match=f"anchor: got {anchor!r}.*{match}"):
        bots.make("rollout", anchor=anchor)


@pytest.mark.parametrize("param, value", [("continuations", 1), ("confidence", -0.5), ("horizon", -1),
                                          ("finalists", 1.5), ("refine", 0), ("margin_weight", float("nan")),
                                          ("policy", "minimax"), ("threads", 0), ("threads", 1.5)])
def test_rollout_rejects_bad_parameters(param, value):
    with pytest.raises(ValueError, match=param):
        bots.make("rollout", **{param: value})


@pytest.mark.slow
def test_rollout_outscores_greedy_in_solo_classic():
    means = {}
    for name, params in (("greedy", {}), ("rollout", {"continuations": 32})):
        bot = bots.make(name, num_players=1, seed=1, **params)
        env = qwixx_v0.raw_env(num_players=1)
        total = 0
        for game in range(12):
            play_game(env, bot, seed=100 + game)
            total += env.snapshot()["players"][0]["score"]
        means[name] = total / 12
    assert means["rollout"] > means["greedy"] + 5


# --- the rollout bot's learned leaf (policies.value) -------------------------------------------------


def _network_chances(engine, b):
    """The shipped network's win chance for each seat of game b of a 2-player engine."""
    from qwixx_env.nets import win_chance_network
    from qwixx_env.policies.heuristic import weights_array
    from qwixx_env.policies.value import NUM_FEATURES, value_features, win_chance

    net = win_chance_network("value", "classic", 2)
    feats, chances = [], []
    for s in range(2):
        x = np.zeros(NUM_FEATURES)
        value_features(
            engine.state, engine.variant.tables, b, s, weights_array(), x, new_scratch("classic", 2)
        )
        h = x
        for k in (1, 2):  # the same network in numpy
            h = np.maximum(h @ net[2 * k - 2] + net[2 * k - 1], 0.0)
        numpy_chance = 1 / (1 + np.exp(-(h @ net[4] + net[5])[0]))
        chance = win_chance(x, net, np.zeros(net[0].shape[1]), np.zeros(net[2].shape[1]))
        assert chance == pytest.approx(numpy_chance, abs=1e-12)
        feats.append(x)
        chances.append(chance)
    return feats, chances


def test_value_features_mirror_between_seats_and_the_chances_add_up():
    """Seat 0's own block is seat 1's opponent block; over positions of random play the two
    seats' win chances add up to about 1 (the network learned a zero-sum quantity)."""
    gaps = []
    for engine, b in random_positions(8, 40, seed=5, num_players=2, variant="classic"):
        (x0, x1), (c0, c1) = _network_chances(engine, b)
        np.testing.assert_array_equal(x0[:14], x1[14:28])
        np.testing.assert_array_equal(x0[14:28], x1[:14])
        np.testing.assert_array_equal(x0[28:32], x1[28:32])  # the locked rows
        assert x0[32] + x1[32] == 1.0  # exactly one of them rolls
        gaps.append(abs(c0 + c1 - 1))
    assert np.mean(gaps) < 0.05


def test_value_network_sees_a_won_position():
    """Late in the game, far ahead: the leader's win chance is high, the trailer's low."""
    from qwixx_env.core import CLASSIC, state_from_snapshot

    snap = {
        "num_players": 2,
        "roll": 30,
        "active_player": 0,
        "phase": "white",
        "dice": {"white": [1, 2], "red": 3, "yellow": 4, "green": 5, "blue": 6},
        "players": [
            {
                "marks": {
                    "red": [2, 3, 4, 5, 6, 7, 8, 9],
                    "yellow": [2, 3, 4, 5, 6, 7],
                    "green": [12, 11, 10, 9],
                    "blue": [12, 11],
                },
                "locks": [],
                "penalties": 0,
            },
            {"marks": {"red": [10], "yellow": [], "green": [3], "blue": [4]}, "locks": [], "penalties": 3},
        ],
    }
    engine = BatchedQwixx(1, num_players=2)
    engine.reset(seed=0)
    st = state_from_snapshot(CLASSIC, snap)
    for name in st._fields:
        getattr(engine.state, name)[:] = getattr(st, name)
    _, (leader, trailer) = _network_chances(engine, 0)
    assert leader > 0.95 and trailer < 0.05


@pytest.mark.parametrize("kwargs, match", [
    (dict(leaf="minimax"), "leaf"),
    (dict(leaf="network", variant="longo"), "network"),
    (dict(leaf="network", num_players=3), "network"),
    (dict(leaf="afterstate", variant="longo"), "afterstate network ships for classic with 2 players"),
    (dict(leaf="afterstate", num_players=5), "'afterstate' for classic with 5 player"),
])
def test_rollout_leaf_choices(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bots.make("rollout", **kwargs)


def test_rollout_default_leaf_is_the_network_where_one_ships():
    assert bots.make("rollout", num_players=2).leaf == "network"
    assert bots.make("rollout", num_players=1).leaf == "heuristic"
    assert bots.make("rollout", num_players=2, variant="longo").leaf == "heuristic"


@pytest.mark.parametrize("num_players", [2, 3])
def test_rollout_with_the_afterstate_leaf_reads_its_tables_network_and_plays_legal_games(num_players):
    from qwixx_env.nets import win_chance_network
    from qwixx_env.policies.value import num_features

    bot = bots.make("rollout", num_players=num_players, leaf="afterstate", continuations=4, threads=1, seed=1)
    assert bot._net is win_chance_network("afterstate", "classic", num_players)
    assert bot._net[0].shape[0] == num_features(num_players)  # the leaf's features are the table's
    players = [bot] + [bots.make("random", num_players=num_players, seed=s) for s in range(1, num_players)]
    env = qwixx_v0.raw_env(num_players=num_players)  # raw: an illegal action would raise
    play_game(env, players, seed=3)
    assert env.unwrapped.snapshot()["roll"] > 5


@pytest.mark.parametrize("seed", [-1, 1.5, "a", True])
def test_a_bad_seed_is_refused_by_name(seed):
    for name in ("random", "heuristic", "ppo-classic-2p"):
        with pytest.raises(ValueError, match=rf"seed: got {seed!r}; expected None or a non-negative integer"):
            bots.make(name, seed=seed)


def test_load_refuses_a_player_count_that_is_not_an_integer_as_make_does():
    with pytest.raises(ValueError, match=r"num_players: got 2.0"):
        bots.load("ppo-classic-2p", num_players=2.0)
