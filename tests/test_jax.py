"""The JAX game (`qwixx_env.jax`, the ``jax`` extra) against the core: the same seeds and the
same decisions give the same masks, observations, rewards and scores, decision for decision."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from qwixx_env.core.engine import Engine  # noqa: E402
from qwixx_env.core.options import TableOptions  # noqa: E402
from qwixx_env.core.state import COLOR, LUCKY, WHITE, seed_to_rng  # noqa: E402
from qwixx_env.core.variant import encode_action  # noqa: E402
from qwixx_env.jax import Qwixx, seed_states, splitmix_below  # noqa: E402


def batch_functions(env):
    """The batched, compiled functions a test plays with: step, and what every decision shows."""
    P = env.num_players

    def view(s):
        return (env.legal_action_mask(s), env.observe(s, s.turn), env.observe(s, (s.turn + 1) % P), s.rewards,
                env.terminated(s), env.scores(s))

    return jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(view)), jax.jit(jax.vmap(env.init_rng))


def play_both(table, seeds, rng):
    """Play random legal games from `seeds` in the core's Engine and in JAX, comparing every
    decision; returns (decisions compared, games, the final scores)."""
    n = len(seeds)
    env = Qwixx(table)
    step, view, init = batch_functions(env)
    core = Engine(table, n, observe_turn=True)
    core.reset(seed=list(seeds))
    state = init(jnp.asarray(seed_states(seeds)))
    decisions = 0
    for _ in range(10_000):
        mask, obs, obs_next, rewards, over, scores = (np.asarray(x) for x in view(state))
        live = ~core.is_over()
        np.testing.assert_array_equal(over, ~live)
        np.testing.assert_array_equal(mask, core.masks.astype(bool))
        np.testing.assert_array_equal(obs, core.obs)
        np.testing.assert_array_equal(scores, core.scores())
        np.testing.assert_array_equal(obs_next, core.observe((core.seats + 1) % table.num_players))
        if decisions:
            np.testing.assert_array_equal(rewards, core.rewards)
        if not live.any():
            return decisions, n, scores
        actions = np.argmax(rng.random(mask.shape) * mask + mask, axis=1)  # a random legal action
        core.step(np.where(live, actions, 0))
        state = step(state, jnp.asarray(actions, jnp.int32))
        core.observe(core.seats)  # observe_turn wrote it; `observe` above overwrote the buffer
        decisions += int(live.sum())
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
]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: f"{t.variant}-{t.lucky}-{t.num_players}p-{t.reward}")
def test_random_games_agree_with_the_core(table):
    decisions, games, _ = play_both(table, list(range(100, 100 + 64)), np.random.default_rng(table.num_players))
    assert games == 64 and decisions > 64 * 20
