"""The batched engine `BatchedQwixx` against the AEC environment it must equal.

The differential tests play N games in one batch and, beside them, N `qwixx_v0.raw_env`
games reset with the same seeds (game i with ``seed + i``); every decision is a random legal
action drawn from the batch's masks and given to both. After every decision the seat to act,
its observation and mask, every seat's reward in every reward mode and the snapshot of every
game must be identical. A finished game restarts from its own generator, as the AEC env's
``reset()`` without a seed does, so each slot is followed through several games in a row.

The rest pins down the engine's own surface: bad actions (refused, naming the game, with the
batch untouched), `reset_games`, seeds, and `memory_per_game`.
"""

from __future__ import annotations

import numpy as np
import pytest

from qwixx_env import BatchedQwixx, qwixx_v0
from qwixx_env.core import OVER, PHASES, snapshot
from qwixx_env.core.rewards import REWARD_MODES

from conftest import random_legal_action, random_legal_actions

GAMES_PER_SLOT = 3  # consecutive games followed in every slot of the batch

CONFIGS = {
    "classic-solo": dict(num_players=1),
    "classic-2p": dict(num_players=2),
    "classic-3p-random-start": dict(num_players=3, start_player="random"),
    # A score table unlike n(n+1)/2 shows the rewards read the variant's table.
    "classic-4p-score-table": dict(
        num_players=4, score_table=[0, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
    ),
    "classic-5p-random-start": dict(num_players=5, start_player="random"),
    "longo-solo": dict(num_players=1, variant="longo"),
    "longo-bonus-2p": dict(num_players=2, variant="longo"),
    "longo-bonus-3p-random-start": dict(num_players=3, variant="longo", start_player="random"),
    "longo-bonus-5p-fixed-lucky": dict(
        num_players=5, variant="longo", lucky_numbers=[(2, 16), (3, 15), (7, 9), (8, 10), (12, 13)]
    ),
    "longo-instead-solo": dict(num_players=1, variant="longo", lucky="instead"),
    "longo-instead-2p": dict(num_players=2, variant="longo", lucky="instead"),
    "longo-instead-4p-random-start": dict(
        num_players=4, variant="longo", lucky="instead", start_player="random"
    ),
    "longo-instead-3p-fixed-lucky": dict(
        num_players=3, variant="longo", lucky="instead", lucky_numbers=[(5, 6), (6, 7), (7, 8)]
    ),
}


def reward_modes(num_players: int) -> tuple[str, ...]:
    """Every reward mode the option set allows ("win" and "margin" need an opponent)."""
    return REWARD_MODES if num_players > 1 else ("score", "score_delta")


def assert_games_match(engine: BatchedQwixx, aecs: list, where: str) -> None:
    """Game b of the batch is the AEC game b: the seat to act, what it sees, the snapshot."""
    for b, aec in enumerate(aecs):
        seat = int(engine.seats[b])
        assert aec.agent_selection == f"player_{seat}", f"{where}, game {b}: seat to act"
        seen = aec.observe(aec.agent_selection)
        np.testing.assert_array_equal(
            engine.obs[b], seen["observation"], err_msg=f"{where}, game {b}: observation"
        )
        np.testing.assert_array_equal(
            engine.masks[b], seen["action_mask"], err_msg=f"{where}, game {b}: mask"
        )
        assert snapshot(engine.variant, engine.state, b) == aec.snapshot(), f"{where}, game {b}: snapshot"


def aec_rewards(aec) -> list[int]:
    return [aec.rewards[agent] for agent in aec.possible_agents]


def play_side_by_side(options: dict, seed: int, num_games: int = 3) -> set[str]:
    """Play `GAMES_PER_SLOT` games in every slot of one autoresetting batch per reward mode
    and in one AEC game per slot and mode, asserting they agree after every decision.
    Returns the phases the batch went through (to show what was exercised)."""
    modes = reward_modes(options["num_players"])
    engines = {mode: BatchedQwixx(num_games, reward=mode, autoreset=True, **options) for mode in modes}
    aecs = {mode: [qwixx_v0.raw_env(reward=mode, **options) for _ in range(num_games)] for mode in modes}
    for mode in modes:
        engines[mode].reset(seed=seed)
        for i, aec in enumerate(aecs[mode]):
            aec.reset(seed=seed + i)
        assert_games_match(engines[mode], aecs[mode], f"{mode}, after reset")
    lead = engines[modes[0]]
    rng = np.random.default_rng(seed)
    finished = np.zeros(num_games, np.int64)
    phases = set()
    decision = 0
    while finished.min() < GAMES_PER_SLOT:
        phases.update(PHASES[p] for p in lead.state.phase)
        actions = random_legal_actions(lead.masks, rng)
        for mode in modes:
            _, _, rewards, done = engines[mode].step(actions)
            for b, aec in enumerate(aecs[mode]):
                aec.step(int(actions[b]))
                where = f"{mode}, decision {decision}, game {b} (its game {finished[b] + 1})"
                assert rewards[b].tolist() == aec_rewards(aec), f"{where}: rewards of every seat"
                assert done[b] == all(aec.terminations.values()), f"{where}: done"
                if done[b]:
                    aec.reset()  # no seed: the game's generator continues, as in the batch
            assert_games_match(engines[mode], aecs[mode], f"{mode}, decision {decision}")
        finished += lead.done
        decision += 1
    return phases


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGS))
def test_batched_games_equal_aec_games_game_after_game(name):
    options = CONFIGS[name]
    phases = play_side_by_side(options, seed=100 + len(name))
    assert {"white", "color"} <= phases
    if options.get("variant") == "longo" and options.get("lucky", "bonus") == "bonus":
        assert "lucky" in phases, "no lucky tie was broken: the lucky decision went untested"


def test_one_seed_per_game_plays_each_game_as_the_aec_env_with_that_seed():
    seeds = [7, 123456, 7, 0]  # a repeated seed gives the same game twice
    engine = BatchedQwixx(len(seeds), num_players=3, variant="longo", start_player="random")
    aecs = [qwixx_v0.raw_env(num_players=3, variant="longo", start_player="random") for _ in seeds]
    engine.reset(seed=seeds)
    for aec, seed in zip(aecs, seeds):
        aec.reset(seed=seed)
    rng = np.random.default_rng(0)
    for decision in range(150):
        assert_games_match(engine, aecs, f"decision {decision}")
        assert snapshot(engine.variant, engine.state, 2) == snapshot(engine.variant, engine.state, 0)
        actions = random_legal_actions(engine.masks, rng)
        actions[2] = actions[0]  # games 0 and 2 share a seed and, given the same decisions, a game
        engine.step(actions)
        for aec, action in zip(aecs, actions):
            aec.step(int(action))
            if all(aec.terminations.values()):
                aec.reset()


def test_reset_games_restarts_a_finished_game_like_aec_reset_without_seed():
    # Without autoreset a finished game stands still, showing its final state, until
    # reset_games restarts it from its own generator.
    options = dict(num_players=3, variant="longo", start_player="random", reward="score")
    num_games = 4
    engine = BatchedQwixx(num_games, autoreset=False, **options)
    aecs = [qwixx_v0.raw_env(**options) for _ in range(num_games)]
    engine.reset(seed=40)
    for i, aec in enumerate(aecs):
        aec.reset(seed=40 + i)
    rng = np.random.default_rng(1)
    restarted = np.zeros(num_games, np.int64)
    decision = 0
    while restarted.min() < 2:
        actions = random_legal_actions(engine.masks, rng)
        live = engine.state.phase != OVER
        actions[~live] = 10_000  # no such action: a finished game ignores what it is given
        for b in np.flatnonzero(live):
            aecs[b].step(int(actions[b]))
        _, masks, rewards, done = engine.step(actions)
        where = f"decision {decision}"
        assert_games_match(engine, aecs, where)  # the finished games too: final sheets, zero masks
        for b in range(num_games):
            assert rewards[b].tolist() == (aec_rewards(aecs[b]) if live[b] else [0, 0, 0]), (
                f"{where}, game {b}"
            )
        assert np.array_equal(done, live & (engine.state.phase == OVER)), where
        assert not masks[engine.state.phase == OVER].any(), "a finished game offers no action"
        # A game that finished on the previous decision has now waited one decision: restart it.
        waited = np.flatnonzero(~live)
        if waited.size:
            final = [snapshot(engine.variant, engine.state, b) for b in waited]
            engine.reset_games(waited)
            for b in waited:
                aecs[b].reset()  # no seed: the game's generator continues
            assert [snapshot(engine.variant, engine.state, b) for b in waited] != final
            restarted[waited] += 1
            assert_games_match(engine, aecs, f"{where}, after reset_games({waited.tolist()})")
        decision += 1


def test_a_finished_game_ignores_its_action_until_restarted():
    engine = BatchedQwixx(2, num_players=2, autoreset=False)
    engine.reset(seed=3)
    rng = np.random.default_rng(3)
    while engine.state.phase[0] != OVER:
        actions = random_legal_actions(engine.masks, rng)
        actions[1] = 10_000 if engine.state.phase[1] == OVER else actions[1]
        engine.step(actions)
    final = snapshot(engine.variant, engine.state, 0)
    final_obs = engine.obs[0].copy()
    for _ in range(5):
        actions = random_legal_actions(engine.masks, rng)
        actions[0] = 10_000  # no such action: ignored, because game 0 is over
        if engine.state.phase[1] == OVER:
            actions[1] = -5
        _, masks, rewards, done = engine.step(actions)
        assert snapshot(engine.variant, engine.state, 0) == final
        np.testing.assert_array_equal(engine.obs[0], final_obs)
        assert not masks[0].any() and not rewards[0].any() and not done[0]


# --- bad input ------------------------------------------------------------------------------


def state_copy(engine: BatchedQwixx) -> list[np.ndarray]:
    return [a.copy() for a in (*engine.state, engine.obs, engine.masks)]


def assert_untouched(engine: BatchedQwixx, before: list[np.ndarray]) -> None:
    for a, b in zip((*engine.state, engine.obs, engine.masks), before):
        np.testing.assert_array_equal(a, b)


@pytest.fixture
def mid_game_pair():
    """Two engines in the same position, a few decisions into four Longo games."""
    engines = [BatchedQwixx(4, num_players=3, variant="longo") for _ in range(2)]
    rng = np.random.default_rng(11)
    for e in engines:
        e.reset(seed=11)
    for _ in range(7):
        actions = random_legal_actions(engines[0].masks, rng)
        for e in engines:
            e.step(actions)
    return engines


@pytest.mark.parametrize("shape", [(3,), (5,), (4, 1), (1, 4), ()])
def test_actions_of_the_wrong_shape_are_refused(mid_game_pair, shape):
    engine, twin = mid_game_pair
    before = state_copy(engine)
    with pytest.raises(ValueError) as err:
        engine.step(np.zeros(shape, np.int64))
    assert "actions" in str(err.value) and str(shape) in str(err.value) and "(4,)" in str(err.value)
    assert_untouched(engine, before)


@pytest.mark.parametrize("bad", ["illegal", -1, "num_actions", 10**9])
def test_an_illegal_action_names_its_game_and_changes_nothing(mid_game_pair, bad):
    engine, twin = mid_game_pair
    actions = random_legal_actions(engine.masks, np.random.default_rng(0))
    if bad == "illegal":
        bad = int(np.flatnonzero(engine.masks[2] == 0)[0])
    elif bad == "num_actions":
        bad = engine.num_actions
    actions_bad = actions.copy()
    actions_bad[2] = bad
    before = state_copy(engine)
    with pytest.raises(ValueError) as err:
        engine.step(actions_bad)
    message = str(err.value)
    assert "game 2" in message and str(bad) in message, message
    legal = np.flatnonzero(engine.masks[2]).tolist()
    assert str(legal) in message, f"the legal actions {legal} are not in {message!r}"
    # Nothing moved, not even games 0, 1 and 3 whose actions were legal, nor any generator:
    assert_untouched(engine, before)
    for _ in range(20):
        engine.step(actions)
        twin.step(actions)
        for a, b in zip(engine.state, twin.state):
            np.testing.assert_array_equal(a, b)
        actions = random_legal_actions(engine.masks, np.random.default_rng(int(engine.state.roll.sum())))


def test_non_integer_actions_are_refused(mid_game_pair):
    # The AEC env refuses an action of 1.5 ("not an integer action"); the batch must not
    # quietly round it down to action 1.
    engine, _ = mid_game_pair
    actions = random_legal_actions(engine.masks, np.random.default_rng(0)).astype(np.float64)
    actions[1] += 0.5
    before = state_copy(engine)
    with pytest.raises(ValueError) as err:
        engine.step(actions)
    assert "actions" in str(err.value)
    assert_untouched(engine, before)


@pytest.mark.parametrize(
    "option, bad",
    [
        ("num_envs", 0),
        ("num_envs", -2),
        ("num_envs", 2.0),
        ("num_envs", True),
        ("num_players", 0),
        ("num_players", 6),
        ("variant", "Longo"),
        ("lucky", "both"),
        ("reward", "wins"),
        ("start_player", 2),
        ("start_player", "last"),
        ("lucky_numbers", [(3, 4), (5, 6)]),  # classic has no lucky numbers
        ("score_table", [0, 1, 3]),
    ],
)
def test_bad_options_are_refused_by_name(option, bad):
    options = dict(num_envs=2, num_players=2)
    options[option] = bad
    with pytest.raises(ValueError) as err:
        BatchedQwixx(**options)
    message = str(err.value)
    assert option in message and repr(bad) in message, message


def test_the_number_of_games_is_num_envs_alone():
    engine = BatchedQwixx(num_envs=3, num_players=2)
    assert engine.num_envs == engine.num_games == 3 == BatchedQwixx(3).num_envs
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'num_envs'"):
        BatchedQwixx(num_games=3)  # 0.1's name for it
    with pytest.raises(TypeError, match=r"unknown table option\(s\) \['num_games'\]"):
        BatchedQwixx(3, num_games=3)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'num_envs'"):
        BatchedQwixx()


def test_win_and_margin_need_an_opponent():
    for mode in ("win", "margin"):
        with pytest.raises(ValueError, match="reward.*num_players=1"):
            BatchedQwixx(2, num_players=1, reward=mode)


@pytest.mark.parametrize("bad", [-1, [1, 2], [1, 2, -3], [1, 2, 3.0], "012"])
def test_bad_seeds_are_refused_by_name(bad):
    engine = BatchedQwixx(3, num_players=2)
    with pytest.raises(ValueError) as err:
        engine.reset(seed=bad)
    assert "seed" in str(err.value) and repr(bad) in str(err.value)


# --- seeds ----------------------------------------------------------------------------------


def play(engine: BatchedQwixx, seed, decisions: int, policy_seed: int = 0) -> list:
    """A trajectory: obs, masks and rewards after reset and after every random legal decision."""
    obs, masks = engine.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    out = [(obs.copy(), masks.copy())]
    for _ in range(decisions):
        obs, masks, rewards, done = engine.step(random_legal_actions(engine.masks, rng))
        out.append((obs.copy(), masks.copy(), rewards.copy(), done.copy()))
    return out


def assert_same_trajectory(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)


def test_same_seed_same_games():
    options = dict(num_envs=6, num_players=4, variant="longo", lucky="instead", start_player="random")
    first = play(BatchedQwixx(**options), seed=5, decisions=400)
    again = play(BatchedQwixx(**options), seed=5, decisions=400)
    assert_same_trajectory(first, again)
    assert any(step[3].any() for step in first[1:]), "no game finished: autoreset went untested"


def test_game_i_of_seed_s_is_game_0_of_seed_s_plus_i():
    wide = BatchedQwixx(3, num_players=2, variant="longo")
    narrow = BatchedQwixx(1, num_players=2, variant="longo")
    wide.reset(seed=20)
    narrow.reset(seed=22)
    rng = np.random.default_rng(0)
    for _ in range(300):
        assert snapshot(wide.variant, wide.state, 2) == snapshot(narrow.variant, narrow.state, 0)
        np.testing.assert_array_equal(wide.obs[2], narrow.obs[0])
        actions = random_legal_actions(wide.masks, rng)
        wide.step(actions)
        narrow.step(actions[2:])


def test_different_seeds_different_games():
    a, b = BatchedQwixx(8, num_players=2), BatchedQwixx(8, num_players=2)
    a.reset(seed=0)
    b.reset(seed=1000)
    for i in range(8):
        assert not np.array_equal(a.state.dice[i], b.state.dice[i]), f"game {i}: same first roll"
    # Within one batch too, every game has its own dice.
    rolls = {tuple(d) for d in a.state.dice}
    assert len(rolls) == 8
    # And two new batches reset without a seed draw fresh entropy.
    fresh = [BatchedQwixx(8, num_players=2) for _ in range(2)]
    for engine in fresh:
        engine.reset()
    assert not np.array_equal(fresh[0].state.rng, fresh[1].state.rng)


# --- memory ---------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [dict(num_players=1), dict(num_players=5, variant="longo")])
def test_memory_per_game_is_every_per_game_array(options):
    engine = BatchedQwixx(7, **options)
    claimed = engine.memory_per_game()
    assert claimed > 0
    # Every array of the engine with the batch axis first: the state, the observation, mask
    # and reward buffers and the engine's own per-game scratch (the core engine's buffers).
    arrays = {id(a): a for a in [*engine.engine.state, *engine.engine.buffers]}
    arrays.update((id(v), v) for v in vars(engine).values() if isinstance(v, np.ndarray) and v.shape[:1] == (7,))
    held = list(arrays.values())
    assert claimed == sum(a.nbytes for a in held) // 7
    assert claimed >= engine.obs.nbytes // 7 + engine.masks.nbytes // 7 + engine.rewards.nbytes // 7
    # Per game means per game: a bigger batch costs the same per game.
    assert BatchedQwixx(1000, **options).memory_per_game() == claimed


def test_reset_games_refuses_an_index_outside_the_batch_before_writing():
    engine = BatchedQwixx(2)
    engine.reset(seed=0)
    before = [a.copy() for a in engine.state]
    for bad, shown in (([1000], "index 1000"), ([-3], "index -3"), ([2.7], r"\[2\.7\]")):
        with pytest.raises(ValueError, match=rf"games: got {shown}"):
            engine.reset_games(bad)
    assert all(np.array_equal(a, b) for a, b in zip(engine.state, before))


@pytest.mark.parametrize("bad", [True, 1.5, "7", [True, 0]])
def test_a_seed_that_is_not_whole_numbers_is_refused_by_value(bad):
    with pytest.raises(ValueError, match=r"seed: got"):
        BatchedQwixx(2).reset(seed=bad)


def test_an_unseeded_reset_goes_on_from_each_games_generator():
    def starts():
        engine = BatchedQwixx(4, num_players=2)
        engine.reset(seed=9)
        first = engine.obs.copy()
        engine.reset()
        return first, engine.obs.copy(), engine.state.rng.copy()

    (a1, a2, rng_a), (b1, b2, rng_b) = starts(), starts()
    assert np.array_equal(a1, b1) and np.array_equal(a2, b2) and np.array_equal(rng_a, rng_b)
    assert not np.array_equal(a1, a2)


def test_boolean_actions_are_refused_as_a_value_error():
    engine = BatchedQwixx(2)
    engine.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions: got booleans"):
        engine.step([True, False])


def test_a_negative_score_table_keeps_every_observation_inside_the_space():
    table = [0] + [-k for k in range(1, 13)]
    env = qwixx_v0.raw_env(num_players=2, score_table=table)
    space = env.observation_space(env.possible_agents[0])["observation"]
    rng = np.random.default_rng(0)
    lowest = 0.0
    for game in range(5):
        env.reset(seed=game)
        while not all(env.terminations.values()):
            obs = env.observe(env.agent_selection)
            assert space.contains(obs["observation"])
            lowest = min(lowest, float(obs["observation"].min()))
            env.step(random_legal_action(obs["action_mask"], rng))
    assert lowest < -0.2  # below what penalties alone can reach: the table's negative rows did show
