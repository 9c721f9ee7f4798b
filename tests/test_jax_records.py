"""Records of JAX-played games (`qwixx_env.jax.records`) replayed in the core: batches of games
played by random and scripted policies inside one `jit`, every decision's mask, observation and
rewards compared with the core's as it replays the records, the final scores, the records the
core keeps of the same games, and `qwixx_env.replay`'s snapshots.

QWIXX_JAX_RECORD_GAMES (default 192) sets the games of the classic table (the Longo table plays
half as many): the CI run is a few hundred; a run with thousands prints the same summary."""

import os

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from qwixx_env import replay  # noqa: E402
from qwixx_env.core.engine import Engine  # noqa: E402
from qwixx_env.core.options import TableOptions  # noqa: E402
from qwixx_env.core.state import COLOR, LUCKY  # noqa: E402
from qwixx_env.jax import Qwixx, concat_traces, records, seed_states, trace  # noqa: E402

GAMES = int(os.environ.get("QWIXX_JAX_RECORD_GAMES", "192"))
POLICIES = ("random", "first legal", "greedy")  # game b plays POLICIES[b % 3] in every seat


def choose(env, state, mask, key, kind):
    """One game's action: at random among the legal ones (kind 0); the first legal one (1); or
    greedily (2): the cross that skips the fewest cells, if it skips at most two, else pass,
    unless passing costs the active seat a penalty (a lucky tie has no pass: the best cross)."""
    R, K, A = env.variant.num_rows, env.variant.cells, env.num_actions
    randomly = jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf))
    row, cell = jnp.divmod(jnp.arange(R * K), K)
    marks = state.marks[state.turn][row]
    skips = jnp.where(mask[:-1], cell - (31 - jax.lax.clz(marks)) - 1, 1 << 20)  # clz(0) = 32: an empty row
    best = jnp.argmin(skips)
    a = state.active
    crossed = ((state.pending[a] >= 0) & (state.pending[a] < R * K)) | (state.pending_lucky[a] >= 0)
    penalty = (state.phase == COLOR) & ~crossed & mask[:-1].any()
    greedy = jnp.where((skips[best] <= 2) | penalty | (state.phase == LUCKY), best, A - 1)
    return jnp.stack([randomly, jnp.argmax(mask), greedy])[kind].astype(jnp.int32)


def play_jax(env, seeds, chunk=128):
    """Play the games of `seeds` in JAX, a `lax.scan` of `chunk` decisions at a time until all
    are over; returns (start words, traces, last states, and each step's masks, observations of
    the seat to decide and rewards, (T, B, ...))."""
    B = len(seeds)
    kinds = jnp.arange(B) % len(POLICIES)
    start = jnp.asarray(seed_states(seeds))

    @jax.jit
    def run(state, keys):
        def turn(state, key):
            mask = jax.vmap(env.legal_action_mask)(state)
            obs = jax.vmap(env.observe)(state, state.turn)
            action = jax.vmap(lambda s, m, k, c: choose(env, s, m, k, c))(state, mask, jax.random.split(key, B), kinds)
            after = jax.vmap(env.step)(state, action)
            return after, (jax.vmap(trace)(state, action, after), mask, obs, after.rewards)

        return jax.lax.scan(turn, state, keys)

    state = jax.jit(jax.vmap(env.init_rng))(start)
    key, parts = jax.random.PRNGKey(B), []
    while not bool(jax.vmap(env.terminated)(state).all()):
        key, sub = jax.random.split(key)
        state, part = run(state, jax.random.split(sub, chunk))
        parts.append(part)
    traces = concat_traces([p[0] for p in parts])
    masks, obs, rewards = (np.concatenate([np.asarray(p[i]) for p in parts]) for i in (1, 2, 3))
    return start, traces, state, masks, obs, rewards


def replay_in_core(table, seeds, recs, masks, obs, rewards):
    """Replay the records' decisions in a batched core `Engine`, comparing each decision's mask,
    observation and rewards with the JAX game's; returns (decisions, mismatched decisions, the
    engine)."""
    B = len(seeds)
    core = Engine(table, B, observe_turn=True, history=True)
    core.reset(seed=list(seeds))
    decisions = mismatched = 0
    first_bad = None
    for t in range(masks.shape[0]):
        live = ~core.is_over()
        if not live.any():
            break
        actions = np.zeros(B, np.int64)
        for b in np.flatnonzero(live).tolist():
            seat, actions[b] = recs[b]["decisions"][t]
            assert seat == core.seats[b], (
                f"game {b}, decision {t}: the record's seat {seat}, the core's {core.seats[b]}"
            )
        bad = (masks[t] != core.masks.astype(bool)).any(axis=1) | (obs[t] != core.obs).any(axis=1)
        core.step(actions)
        bad |= (rewards[t] != core.rewards).any(axis=1)
        decisions += int(live.sum())
        mismatched += int((bad & live).sum())
        if first_bad is None and (bad & live).any():
            first_bad = (t, int(np.flatnonzero(bad & live)[0]))
    assert core.is_over().all()
    assert mismatched == 0, f"{mismatched} of {decisions} decisions differ; the first: step, game {first_bad}"
    return decisions, mismatched, core


@pytest.mark.parametrize(
    "table, games",
    [
        (TableOptions(num_players=2), GAMES),
        (TableOptions(num_players=3, variant="longo", reward="score_delta", start_player="random"), GAMES // 2),
    ],
    ids=["classic-2p", "longo-3p"],
)
def test_jax_games_replay_in_the_core_decision_for_decision(table, games):
    env = Qwixx(table)
    seeds = list(range(1000, 1000 + games))
    start, traces, last, masks, obs, rewards = play_jax(env, seeds)
    recs = records(env, start, traces, last, seeds=seeds)
    decisions, mismatched, core = replay_in_core(table, seeds, recs, masks, obs, rewards)
    np.testing.assert_array_equal(np.asarray(jax.vmap(env.scores)(last)), core.scores())
    for b, rec in enumerate(recs):
        assert rec == core.record(b), f"game {b}: the JAX record is not the one the core keeps"
        assert replay(rec).snapshot() == rec["snapshot"]
    kinds = np.arange(games) % len(POLICIES)
    lengths = np.array([len(r["decisions"]) for r in recs])
    assert all(lengths[kinds == k].min() > 20 for k in range(len(POLICIES)))  # real games, every policy
    print(
        f"\n{table.variant} {table.num_players}p: {games} games, {decisions} decisions, {mismatched} mismatches; "
        "decisions per game by policy: "
        + ", ".join(f"{p} {lengths[kinds == k].mean():.0f}" for k, p in enumerate(POLICIES))
    )


def test_a_game_ended_by_an_illegal_action_replays_to_its_ending():
    env = Qwixx(num_players=2)
    step = jax.jit(env.step)
    state = env.init_seed(3)
    steps = []
    for action in (env.num_actions - 1, env.num_actions - 1):  # both pass the white action
        after = step(state, action)
        steps.append(trace(state, action, after))
        state = after
    illegal = int(np.flatnonzero(~np.asarray(jax.jit(env.legal_action_mask)(state)))[0])
    after = step(state, illegal)
    steps.append(trace(state, illegal, after))
    rec = records(
        env,
        seed_states(3),
        concat_traces([jax.tree.map(lambda x: np.asarray(x)[None], s) for s in steps]),
        after,
        seeds=3,
    )
    assert rec["decisions"] == [[0, env.num_actions - 1], [1, env.num_actions - 1]]
    assert rec["illegal_end"] == {"seat": 0, "action": illegal}
    assert rec["snapshot"]["illegal_end"] == {"seat": 0}
    assert replay(rec).snapshot() == rec["snapshot"]


def test_a_record_with_the_wrong_seeds_or_steps_is_refused():
    env = Qwixx(num_players=2)
    step = jax.jit(env.step)
    state = env.init_seed(5)
    after = step(state, env.num_actions - 1)
    one = concat_traces([jax.tree.map(lambda x: np.asarray(x)[None], trace(state, env.num_actions - 1, after))])
    assert records(env, seed_states(5), one, after, seeds=5)["decisions"] == [[0, env.num_actions - 1]]
    with pytest.raises(ValueError, match="seeds"):
        records(env, seed_states(5), one, after, seeds=6)
    with pytest.raises(ValueError, match="traces"):  # `last` two rolls on: not the traces' game
        later = after
        for _ in range(2 * 3):
            later = step(later, env.num_actions - 1)
        records(env, seed_states(5), one, later)
    with pytest.raises(ValueError, match="start"):
        records(env, np.zeros(3, np.uint32), one, after)
