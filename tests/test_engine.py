"""The Engine's own methods: several seats' decisions at once (`play`), every seat's view
(`seat_views`), and a game ended by an illegal action, kept once in the State (`end_games`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qwixx_env import qwixx_v0, replay
from qwixx_env.core.engine import Engine, SeatTable
from qwixx_env.core.snapshot import state_from_snapshot
from qwixx_env.core.state import LUCKY, OVER, WHITE
from qwixx_env.core.variant import get_variant
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.scripted import GREEDY, ScriptedPolicies, greedy_action, policy_action

TABLES = [
    {"num_players": 2},
    {"num_players": 3, "reward": "score_delta"},
    {"num_players": 4, "variant": "longo", "lucky": "bonus", "reward": "score_delta"},
    {"num_players": 2, "variant": "longo", "lucky": "instead", "reward": "margin"},
]


def pick_all(masks: np.ndarray, held: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal next decision for every seat that has one and holds none."""
    acts = held.copy()
    for s in range(masks.shape[0]):
        if acts[s] < 0 and masks[s].any():
            acts[s] = rng.choice(np.flatnonzero(masks[s]))
    return acts


@pytest.mark.parametrize("options", TABLES, ids=lambda o: "-".join(map(str, o.values())))
def test_play_equals_the_decisions_one_by_one(options):
    """`play` leaves every game exactly where stepping its decisions one by one leaves it: the
    same state, masks, record, and rewards equal to the sum of the single steps' rewards."""
    rng = np.random.default_rng(1)
    P = options["num_players"]
    single, many = Engine(history=True, **options), Engine(history=True, **options)
    ties = 0
    for seed in range(6):
        single.reset(seed)
        many.reset(seed)
        held = np.full(P, -1, np.int64)
        while not many.is_over()[0]:
            _, masks = many.seat_views(0)
            acts = pick_all(masks, held, rng)
            todo, total = acts.copy(), np.zeros(P, np.int64)
            while not single.is_over()[0] and todo[single.seats[0]] >= 0:
                seat = int(single.seats[0])
                single.step(int(todo[seat]))
                todo[seat] = -1
                total += single.rewards[0]
            show = 0 if seed % 2 else None  # odd seeds: the views in the same call (the Parallel view's path)
            held = many.play(acts, show=show)[0].copy()
            if show is not None:
                views = many.seat_buffers.obs.copy(), many.seat_buffers.masks.copy()
                obs, masks = many.seat_views(0)
                assert np.array_equal(views[0], obs) and np.array_equal(views[1], masks)
            ties += int(many.state.phase[0] == LUCKY)
            assert held.tolist() == todo.tolist()  # what a lucky tie leaves for the next call
            assert many.rewards[0].tolist() == total.tolist()
            assert np.array_equal(many.masks, single.masks)
            for a, b in zip(many.state, single.state, strict=True):
                assert np.array_equal(a, b)
        assert many.record() == single.record()
    if options.get("lucky") == "bonus":
        assert ties > 0  # the held white choices were exercised


def test_seat_views_are_each_seats_own_view_and_next_decision():
    """At a new roll every seat's mask is the mask the rules give it when its white turn comes;
    in the colour action only the active seat has one; each observation is `observe(seat)`'s."""
    engine, probe = Engine(num_players=3), Engine(num_players=3)
    engine.reset(5)
    for _ in range(30):
        obs, masks = engine.seat_views(0)
        obs, masks = obs.copy(), masks.copy()
        for s in range(3):
            assert np.array_equal(obs[s], engine.observe(s)[0])
        if engine.state.phase[0] == WHITE:
            for s in range(3):
                if engine.state.pending[0, s] >= 0:  # its white choice is made: nothing left this roll
                    assert not masks[s].any()
                    continue
                probe.load(engine)
                while probe.seats[0] != s:  # the seats before s choose pass (its own mask cannot change)
                    probe.step(probe.num_actions - 1)
                assert np.array_equal(masks[s], probe.masks[0])
        else:
            turn = int(engine.seats[0])
            assert np.array_equal(masks[turn], engine.masks[0])
            assert not np.delete(masks, turn, axis=0).any()
        engine.step(int(np.flatnonzero(engine.masks[0])[0]))
        if engine.is_over()[0]:
            break


def test_play_refuses_an_illegal_or_misplaced_action_and_changes_nothing():
    engine = Engine(num_players=2, history=True)
    engine.reset(3)
    before = engine.state.clone()
    record = engine.record()
    _, masks = engine.seat_views(0)
    illegal = int(np.flatnonzero(masks[1] == 0)[0])
    with pytest.raises(ValueError, match=rf"game 0, seat 1 got action {illegal}; legal for its next decision"):
        engine.play([engine.num_actions - 1, illegal])
    with pytest.raises(ValueError, match=r"expected \(1, 2\)"):
        engine.play([1, 2, 3])
    with pytest.raises(ValueError, match="whole number"):
        engine.play([0.5, -1])
    for a, b in zip(engine.state, before, strict=True):
        assert np.array_equal(a, b)
    assert engine.record() == record
    engine.play([engine.num_actions - 1, engine.num_actions - 1])  # both pass: the colour action is next
    assert engine.state.phase[0] != WHITE
    with pytest.raises(ValueError, match="nothing to decide in this roll"):  # a seat with no decision left
        engine.play(np.array([-1, 0]) if engine.seats[0] == 0 else np.array([0, -1]))


# --- game over, once, in the State ----------------------------------------------------------------


def illegal_game(seed: int = 2):
    """env() after player_x's illegal action, and that action."""
    env = qwixx_v0.env(num_players=3)
    env.reset(seed=seed)
    for _ in range(4):
        env.step(int(np.flatnonzero(env.unwrapped.observe(env.agent_selection)["action_mask"])[0]))
    offender = env.agent_selection
    bad = int(np.flatnonzero(env.unwrapped.observe(offender)["action_mask"] == 0)[0])
    env.step(bad)  # PettingZoo's logger warns
    return env, offender, bad


def test_an_illegal_ending_is_the_states_terminal_phase_everywhere():
    env, offender, bad = illegal_game()
    raw = env.unwrapped
    seat = raw.agent_name_mapping[offender]
    assert all(env.terminations.values())
    assert raw.engine.is_over().tolist() == [True]
    assert raw.core_state.phase[0] == OVER and raw.core_state.illegal_end[0] == seat
    snap = raw.snapshot()
    assert snap["phase"] == "over" and snap["illegal_end"] == {"seat": seat}
    assert not raw.engine.masks.any() and raw.legal_actions() == []
    record = raw.record()
    assert record["illegal_end"] == {"seat": seat, "action": bad}
    again = replay(json.loads(json.dumps(record)))  # the ending replays too
    assert again.snapshot() == snap and again.engine.is_over()[0]
    rebuilt = state_from_snapshot(get_variant("classic"), snap)
    assert rebuilt.phase[0] == OVER and rebuilt.illegal_end[0] == seat


def test_a_game_ended_by_the_rules_has_no_illegal_end_and_a_restart_clears_it():
    env, offender, _ = illegal_game()
    raw = env.unwrapped
    env.reset(seed=2)
    assert raw.core_state.illegal_end[0] == -1 and "illegal_end" not in raw.snapshot()
    assert "illegal_end" not in raw.record()
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1]))
    assert raw.snapshot()["phase"] == "over" and "illegal_end" not in raw.snapshot()


def test_the_parallel_view_reads_an_illegal_ending_from_the_state():
    par = qwixx_v0.parallel_env(num_players=2)
    observations, _ = par.reset(seed=4)
    bad = {a: int(np.flatnonzero(o["action_mask"] == 0)[0]) for a, o in observations.items()}
    _, rewards, terminations, _, _ = par.step(bad)
    assert all(terminations.values()) and par.agents == [] and par.acting_agents == []
    assert par.snapshot()["phase"] == "over" and par.snapshot()["illegal_end"]["seat"] in (0, 1)
    assert par.raw.engine.is_over()[0]


def test_end_games_names_a_bad_seat():
    engine = Engine(num_players=2)
    engine.reset(0)
    with pytest.raises(ValueError, match="seats: got"):
        engine.end_games([0], [2])
    with pytest.raises(ValueError, match="games: got index 1"):
        engine.end_games([1], [0])
    assert not engine.is_over()[0]


def test_apply_games_then_settle_equals_step_for_those_games():
    """A subset of games played by `apply_games` and settled ends where `step` leaves them,
    with the same rewards, done flags and masks; the games not named do not move."""
    stepped, some = Engine(num_players=3, batch_size=4), Engine(num_players=3, batch_size=4)
    stepped.reset(7)
    some.reset(7)
    rng = np.random.default_rng(7)
    for _ in range(60):
        acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in stepped.masks])
        untouched = some.state.marks[[0, 2]].copy(), some.state.roll[[0, 2]].copy()
        some.apply_games([1, 3], acts[[1, 3]])
        assert np.array_equal(some.state.marks[[0, 2]], untouched[0])
        assert np.array_equal(some.state.roll[[0, 2]], untouched[1])
        some.apply_games([0, 2], acts[[0, 2]])
        some.settle(0)
        stepped.step(acts)
        some.observe_games(np.arange(4), some.seats)
        for a, b in zip(some.state, stepped.state, strict=True):
            assert np.array_equal(a, b)
        assert np.array_equal(some.rewards, stepped.rewards) and np.array_equal(some.done, stepped.done)
        assert np.array_equal(some.masks, stepped.masks)
        for b in np.flatnonzero(stepped.done).tolist():  # settle writes a finished game's observation
            assert np.array_equal(some.obs[b], stepped.observe(0)[b])
        if stepped.is_over().all():
            break


def test_apply_games_refuses_a_bad_game_or_action_and_changes_nothing():
    engine = Engine(num_players=2, batch_size=3)
    engine.reset(3)
    before = [a.copy() for a in engine.state]
    illegal = int(np.flatnonzero(engine.masks[1] == 0)[0])
    legal = int(np.flatnonzero(engine.masks[0])[0])
    with pytest.raises(ValueError, match=f"game 1 .* got action {illegal}"):
        engine.apply_games([0, 1], [legal, illegal])
    with pytest.raises(ValueError, match="game 2 twice"):
        engine.apply_games([2, 0, 2], [legal, legal, legal])
    with pytest.raises(ValueError, match="games: got index 3"):
        engine.apply_games([3], [legal])
    engine.end_games([2], [0])
    with pytest.raises(ValueError, match="game 2 .*the game is over"):
        engine.apply_games([2], [legal])
    for a, b in zip(engine.state, before, strict=True):
        assert np.array_equal(a[:2], b[:2])


def test_observe_games_writes_only_the_named_rows_as_the_named_seats_see_them():
    engine = Engine(num_players=3, batch_size=4)
    engine.reset(5)
    full = engine.observe(2).copy()
    engine.buffers.obs[...] = -1
    engine.buffers.masks[...] = 9
    obs, masks = engine.observe_games([1, 3], 2)
    assert np.array_equal(obs[[1, 3]], full[[1, 3]]) and (obs[[0, 2]] == -1).all()
    assert (masks[[0, 2]] == 9).all() and masks[[1, 3]].max() == 1
    with pytest.raises(ValueError, match="seats: got"):
        engine.observe_games([0], [3])


def test_play_table_plays_each_seat_by_its_entry_until_the_callers_turn():
    """Greedy entries decide exactly as the greedy policy does; an entry of kind -1 stops the
    game for the caller (``waiting``); the caller's seat is never played."""
    B, P = 6, 3
    engine, twin = Engine(num_players=P, batch_size=B), Engine(num_players=P, batch_size=B)
    caller = np.array([0, 1, 2, 0, 1, 2], np.int64)
    entries = np.zeros((B, P), np.int64)
    entries[5] = 1  # game 5: every seat is the caller's other policy
    policies = ScriptedPolicies(2, 2, np.zeros(1), np.zeros(B, np.uint64))
    table = SeatTable(caller, entries, np.array([GREEDY, -1], np.int64), np.full(B, -1, np.int64), policies,
                      new_scratch(engine.variant, P))
    tables = engine.variant.tables
    for seed in range(4):
        engine.reset(seed)
        twin.reset(seed)
        decisions = engine.play_table(table, policy_action)
        played = 0
        for b in range(5):
            while twin.state.phase[b] != OVER and twin.seats[b] != caller[b]:
                twin.observe_games([b], 0)
                twin.apply_games([b], [greedy_action(twin.state, tables, b, twin.masks[b], 2, 2)])
                played += 1
        assert decisions == played > 0
        for a, b in zip(engine.state, twin.state, strict=True):
            assert np.array_equal(a, b)
        assert table.waiting[:5].tolist() == [-1] * 5
        assert table.waiting[5] == (1 if engine.seats[5] != 2 else -1)
    with pytest.raises(RuntimeError, match="history"):
        Engine(num_players=P, batch_size=B, history=True).play_table(table, policy_action)


def test_play_table_refuses_a_table_of_the_wrong_shape_or_range():
    engine = Engine(num_players=2, batch_size=2)
    engine.reset(0)
    policies = ScriptedPolicies(2, 2, np.zeros(1), np.zeros(2, np.uint64))

    def table(caller=(0, 0), entries=((0, 0), (0, 0)), kinds=(GREEDY,)):
        return SeatTable(np.array(caller, np.int64), np.array(entries, np.int64), np.array(kinds, np.int64),
                         np.full(2, -1, np.int64), policies, new_scratch(engine.variant, 2))

    before = engine.state.marks.copy()
    for bad, match in [(table(caller=(0, 2)), "table.caller"), (table(entries=((0, 1), (0, 0))), "table.entries"),
                       (table(caller=(0, 0, 0)), "table.caller"), (table(kinds=()), "table.kinds")]:
        with pytest.raises(ValueError, match=match):
            engine.play_table(bad, policy_action)
    assert np.array_equal(engine.state.marks, before)
