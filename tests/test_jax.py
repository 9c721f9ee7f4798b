"""The JAX game (`qwixx_env.jax`, the ``jax`` extra) against the core: the same seeds and the
same decisions give the same masks, observations, rewards and scores, decision for decision."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from qwixx_env.core.engine import Engine  # noqa: E402
from qwixx_env.core.options import TableOptions  # noqa: E402
from qwixx_env.core.state import COLOR, LUCKY, WHITE, seed_to_rng  # noqa: E402
from qwixx_env.core.variant import Row, Variant, register_variant  # noqa: E402
from qwixx_env.jax import Qwixx, seed_states, splitmix_below  # noqa: E402


def batch_functions(env):
    """The batched, compiled functions a test plays with: step, and what every decision shows."""
    P = env.num_players

    def view(s):
        return (env.legal_action_mask(s), env.observe(s, s.turn), env.observe(s, (s.turn + 1) % P), s.rewards,
                env.terminated(s), env.scores(s))

    return jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(view)), jax.jit(jax.vmap(env.init_rng))


def choose(mask, core, rng):
    """One legal action per game of `core` (an Engine): odd games play at random; even games
    play a little greedily (cross where the fewest cells are skipped, at most two; else pass,
    unless it costs a penalty), to reach long games that lock rows."""
    n, cells = len(mask), core.variant.cells
    randomly = np.argmax(rng.random(mask.shape) * mask + mask, axis=1)
    crosses = mask[:, :-1]
    rows, cell = np.divmod(np.arange(crosses.shape[1]), cells)
    st = core.state
    seat = st.turn.astype(np.int64)
    row_marks = st.marks[np.arange(n), seat][:, rows]  # (B, R*K): the row of each action, on the seat's sheet
    rightmost = np.where(row_marks > 0, np.floor(np.log2(np.maximum(row_marks, 1))), -1)
    skips = np.where(crosses, cell - rightmost - 1, 1 << 20)
    best, fewest = np.argmin(skips, axis=1), skips.min(axis=1)
    active = st.active.astype(np.int64)
    pending, lucky = st.pending[np.arange(n), active], st.pending_lucky[np.arange(n), active]
    crossed = ((pending >= 0) & (pending < crosses.shape[1])) | (lucky >= 0)
    penalty = (st.phase == COLOR) & ~crossed
    greedy = np.where((fewest <= 2) | (penalty & crosses.any(axis=1)), best, mask.shape[1] - 1)
    greedy = np.where(st.phase == LUCKY, randomly, greedy)  # a lucky tie: no pass there
    return np.where(np.arange(n) % 2 == 0, greedy, randomly)


def play_both(table, seeds, rng):
    """Play games from `seeds` in the core's Engine and in JAX (`choose`), comparing every
    decision; returns (decisions compared in each phase (white, lucky, colour), the final scores,
    how many games ended with the rows to end locked)."""
    n = len(seeds)
    env = Qwixx(table)
    step, view, init = batch_functions(env)
    core = Engine(table, n, observe_turn=True)
    core.reset(seed=list(seeds))
    state = init(jnp.asarray(seed_states(seeds)))
    decisions = np.zeros(3, np.int64)
    for _ in range(10_000):
        mask, obs, obs_next, rewards, over, scores = (np.asarray(x) for x in view(state))
        live = ~core.is_over()
        np.testing.assert_array_equal(over, ~live)
        np.testing.assert_array_equal(mask, core.masks.astype(bool))
        np.testing.assert_array_equal(obs, core.obs)
        np.testing.assert_array_equal(scores, core.scores())
        np.testing.assert_array_equal(obs_next, core.observe((core.seats + 1) % table.num_players))
        if decisions.any():
            np.testing.assert_array_equal(rewards, core.rewards)
        if not live.any():
            locked = core.state.locks.any(axis=1).sum(axis=1) >= table.rules.rows_to_end
            return decisions, scores, int(locked.sum())
        actions = choose(mask, core, rng)
        decisions += np.bincount(core.state.phase[live], minlength=3)[:3]
        core.step(np.where(live, actions, 0))
        state = step(state, jnp.asarray(actions, jnp.int32))
        core.observe(core.seats)  # observe_turn wrote it; `observe` above overwrote the buffer
    raise AssertionError("the games did not end")


def test_splitmix_on_32_bit_words_is_the_cores_generator():
    from qwixx_env.core import rules

    for seed in (0, 1, 12345, 2**40):
        core = np.array([seed_to_rng(seed)], np.uint64)
        words = jnp.asarray(seed_states(seed))
        for n in (2, 5, 6, 8, 15, 31):
            with np.errstate(over="ignore"):
                want = rules.random_below.py_func(core, 0, n)
            got, words = splitmix_below(words, n)
            assert int(got) == int(want)
            assert (int(words[0]) << 32 | int(words[1])) == int(core[0])


# A sheet of the user's: three rows whose cells take the colours of three dice in turn (a die
# serves cells of several rows), two lock cells of two colours, other penalties.
UP = tuple(range(2, 13))
CYCLE = ("red", "yellow", "green")
TRIO = register_variant(Variant(
    name="jax_trio", faces=6, lock_cells=2, lock_threshold=4, max_penalties=3, penalty_points=4,
    score_table=tuple(k * (k + 1) // 2 for k in range(13)),
    rows=(
        Row("top", UP, colors=tuple(CYCLE[i % 3] for i in range(11))),
        Row("middle", UP[::-1], colors=tuple(CYCLE[(i + 1) % 3] for i in range(11))),
        Row("bottom", UP, colors=("green",) * 11),
    ),
))

TABLES = [
    TableOptions(num_players=1),
    TableOptions(num_players=2),
    TableOptions(num_players=3, reward="score_delta", start_player="random"),
    TableOptions(num_players=4, reward="margin"),
    TableOptions(num_players=5, reward="score"),
    TableOptions(num_players=2, variant="longo"),
    TableOptions(num_players=3, variant="longo", lucky="instead", start_player="random"),
    TableOptions(num_players=2, variant="longo", lucky_numbers=((7, 9), (8, 6)), reward="score_delta"),
    TableOptions(num_players=1, variant="longo", reward="score"),
    TableOptions(num_players=3, variant="jax_trio"),
]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: f"{t.variant}-{t.lucky}-{t.num_players}p-{t.reward}")
def test_random_games_agree_with_the_core(table):
    decisions, _, locked = play_both(table, list(range(100, 100 + 64)), np.random.default_rng(table.num_players))
    assert decisions[WHITE] > 64 * 10 and decisions[COLOR] > 64 * 5
    assert locked >= 8  # games that ended on locked rows, not only on penalties
    if table.rules.lucky_rule == "bonus":
        assert decisions[LUCKY] > 0  # ties for the lucky cross were broken



def test_an_illegal_action_ends_the_game_and_costs_the_offender_what_the_guarded_env_charges():
    env = Qwixx(num_players=3, reward="win")
    step, mask = jax.jit(env.step), jax.jit(env.legal_action_mask)
    state = env.init_seed(7)
    seat = int(env.current_player(state))
    illegal = int(np.flatnonzero(~np.asarray(mask(state)))[0])
    after = step(state, illegal)
    assert bool(env.terminated(after)) and int(after.illegal_end) == seat
    want = np.zeros(3, np.float32)
    want[seat] = -2.0  # core.rewards.illegal_return("win", ...)
    np.testing.assert_array_equal(env.rewards(after), want)
    assert not np.asarray(mask(after)).any()
    again = step(after, env.num_actions - 1)  # a game that is over stays over, paying nothing
    assert bool(env.terminated(again)) and not np.asarray(again.rewards).any()
    for bad in (-1, env.num_actions):  # outside the action space: illegal too
        assert int(step(state, bad).illegal_end) == seat


def test_a_batch_from_jax_keys_plays_to_the_end_in_one_jit():
    env = Qwixx(num_players=2, variant="longo")
    keys = jax.random.split(jax.random.PRNGKey(0), 16)

    def play(key):
        def turn(carry):
            state, key, n = carry
            key, sub = jax.random.split(key)
            logits = jnp.where(env.legal_action_mask(state), 0.0, -jnp.inf)
            return env.step(state, jax.random.categorical(sub, logits)), key, n + 1

        state, _, n = jax.lax.while_loop(lambda c: ~env.terminated(c[0]), turn, (env.init(key), key, 0))
        return env.scores(state), n, state.rng

    scores, decisions, rngs = jax.jit(jax.vmap(play))(keys)
    assert scores.shape == (16, 2) and (np.asarray(decisions) > 20).all()
    assert len({tuple(r) for r in np.asarray(rngs).tolist()}) == 16  # every game its own generator


def test_a_game_goes_to_the_core_and_back_unchanged():
    table = TableOptions(num_players=3, variant="longo")
    env = Qwixx(table)
    core = Engine(table, 2)
    core.reset(seed=[5, 6])
    for b in range(2):
        state = env.from_core(core.state, b)
        assert int(state.rng[0]) << 32 | int(state.rng[1]) == int(core.state.rng[b])
        copy = core.state.clone()
        copy.marks[...] = 0
        env.to_core(state, copy, b)
        for name, value in zip(copy._fields, copy):
            np.testing.assert_array_equal(value[b], getattr(core.state, name)[b], err_msg=name)
    with pytest.raises(ValueError, match="game"):
        env.from_core(core.state, 2)
    with pytest.raises(ValueError, match="players"):
        Qwixx(num_players=2, variant="longo").from_core(core.state)


def test_init_seed_deals_the_cores_first_roll():
    for table in (TableOptions(num_players=4), TableOptions(num_players=2, variant="longo", start_player="random")):
        env = Qwixx(table)
        core = Engine(table, 1)
        core.reset(seed=123)
        state = env.init_seed(123)
        np.testing.assert_array_equal(state.dice, core.state.dice[0])
        np.testing.assert_array_equal(state.lucky_numbers, core.state.lucky_numbers[0])
        assert int(state.active) == int(core.state.active[0])


# --- the core's hand-set rule tests, played by the JAX rules ---------------------------------

import inspect  # noqa: E402
import itertools  # noqa: E402

import test_rules  # noqa: E402

from qwixx_env.core import rules as core_rules  # noqa: E402

_TABLES: dict = {}


def jax_table(v, num_players, start_player=0, lucky_numbers=None):
    """The JAX table (and its compiled functions) that plays variant `v` with `num_players`."""
    key = (v, num_players, start_player, lucky_numbers)
    if key not in _TABLES:
        table = TableOptions(num_players=num_players, variant=v.name, lucky=v.lucky_rule or "bonus",
                             score_table=v.score_table, start_player=start_player, lucky_numbers=lucky_numbers)
        assert table.rules == v, f"no table plays {v!r}"
        env = Qwixx(table)
        _TABLES[key] = (env, jax.jit(env.step), jax.jit(env.legal_action_mask), jax.jit(env.init_rng))
    return _TABLES[key]


class JaxRules:
    """`qwixx_env.core.rules` with `reset`, `legal_mask`, `apply` and `scores` played by the JAX
    game: each game of the core state goes to JAX and back (`Qwixx.from_core`, `to_core`).
    Counts its calls."""

    def __init__(self):
        self.calls = 0

    def __getattr__(self, name):
        return getattr(core_rules, name)

    def reset(self, v, st, *, start_player=0, lucky_numbers=None, games=None):
        scratch = st.clone()
        core_rules.reset(v, scratch, start_player=start_player, lucky_numbers=lucky_numbers, games=games)  # its checks
        fixed = None if lucky_numbers is None else np.asarray(lucky_numbers)
        if fixed is not None and not fixed.all():
            if fixed.any():  # some seats fixed, some drawn: no table says that
                st.copy_from(scratch)
                return
            fixed = None
        self.calls += 1
        pairs = None if fixed is None else tuple(tuple(int(x) for x in row) for row in fixed)
        env, _, _, init = jax_table(v, st.num_players, "random" if start_player < 0 else start_player, pairs)
        for b in range(st.batch_size) if games is None else np.asarray(games).reshape(-1):
            words = np.array([int(st.rng[b]) >> 32, int(st.rng[b]) & 0xFFFFFFFF], np.uint32)
            env.to_core(init(jnp.asarray(words)), st, int(b))

    def legal_mask(self, v, st, out=None):
        self.calls += 1
        env, _, mask, _ = jax_table(v, st.num_players)
        got = np.stack([np.asarray(mask(env.from_core(st, b))) for b in range(st.batch_size)]).astype(np.int8)
        if out is not None:
            out[...] = got
            return out
        return got

    def apply(self, v, st, actions):
        self.calls += 1
        env, step, _, _ = jax_table(v, st.num_players)
        actions = np.asarray(actions).reshape(st.batch_size)
        for b in range(st.batch_size):
            if st.phase[b] != core_rules.OVER:
                env.to_core(step(env.from_core(st, b), jnp.int32(actions[b])), st, b)

    def scores(self, v, st, out=None):
        self.calls += 1
        env, _, _, _ = jax_table(v, st.num_players)
        got = np.stack([np.asarray(env.scores(env.from_core(st, b))) for b in range(st.batch_size)]).astype(np.int64)
        if out is not None:
            out[...] = got
            return out
        return got


def _cases(fn):
    """The parameter sets of a test function's `parametrize` marks (their product)."""
    sets = [[{}]]
    for mark in getattr(fn, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        sets.append([dict(zip(names, value if len(names) > 1 else (value,))) for value in values])
    return [{k: val for part in combo for k, val in part.items()} for combo in itertools.product(*sets)]


RULE_CASES = [
    pytest.param(name, i, case, id=f"{name}-{i}")
    for name, fn in sorted(vars(test_rules).items()) if name.startswith("test_") and callable(fn)
    for i, case in enumerate(_cases(fn))
    if set(inspect.signature(fn).parameters) == set(case)
]


@pytest.mark.parametrize(("name", "index", "case"), RULE_CASES)
def test_the_cores_rule_tests_pass_on_the_jax_rules(name, index, case, monkeypatch):
    shim = JaxRules()
    monkeypatch.setattr(test_rules, "rules", shim)
    getattr(test_rules, name)(**case)
    if not shim.calls:
        pytest.skip("calls none of rules.reset, legal_mask, apply, scores")
