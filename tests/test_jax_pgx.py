"""The JAX game as a `pgx.Env` (`qwixx_env.jax.pgx_env`, the ``pgx`` extra): pgx's own ``init`` and
``step``, batched with `jax.vmap`, play random legal games to their end, and every state shows the
wrapped game's mask, observation, rewards, seat to decide and end."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pgx = pytest.importorskip("pgx", reason="pgx is not installed (the pgx extra: pip install 'qwixx_env[pgx]')")

from qwixx_env.core.rewards import illegal_return  # noqa: E402
from qwixx_env.jax import Qwixx  # noqa: E402
from qwixx_env.jax.pgx_env import PgxQwixx, PgxState  # noqa: E402


def test_it_is_a_pgx_env_of_qwixx():
    env = PgxQwixx(num_players=3, variant="longo")
    assert isinstance(env, pgx.core.Env)
    assert (env.id, env.version, env.num_players) == ("qwixx", "v0", 3)
    assert env.num_actions == env.game.num_actions
    assert env.observation_shape == (env.game.observation_size,)
    state = env.init(jax.random.PRNGKey(0))
    assert isinstance(state, PgxState) and isinstance(state, pgx.core.State) and state.env_id == "qwixx"
    assert state.legal_action_mask.shape == (env.num_actions,) and state.observation.shape == env.observation_shape
    with pytest.raises(ValueError, match="num_players"):
        PgxQwixx(num_players=6)


@pytest.mark.parametrize(
    "options",
    [{"num_players": 2, "reward": "win"}, {"num_players": 3, "variant": "longo", "lucky": "bonus", "reward": "score"}],
    ids=["classic-2p", "longo-3p"],
)
def test_random_legal_games_through_pgx_show_the_wrapped_game(options):
    env = PgxQwixx(**options)
    game = Qwixx(**options)
    n = 32
    keys = jax.random.split(jax.random.PRNGKey(1), n)
    init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
    game_step = jax.jit(jax.vmap(game.step))

    @jax.jit
    def view(x):
        return (
            jax.vmap(game.legal_action_mask)(x),
            jax.vmap(game.observe)(x, x.turn),
            x.rewards,
            x.turn,
            jax.vmap(game.terminated)(x),
        )

    state, x = init(keys), jax.vmap(game.init)(keys)  # the same key draws the same generator
    rng = np.random.default_rng(0)
    decisions = np.zeros(n, np.int64)
    for _ in range(2000):
        mask, obs, rewards, turn, over = (np.asarray(v) for v in view(x))
        np.testing.assert_array_equal(np.asarray(state.terminated), over)
        np.testing.assert_array_equal(np.asarray(state.truncated), False)
        np.testing.assert_array_equal(np.asarray(state.legal_action_mask), np.where(over[:, None], True, mask))
        np.testing.assert_array_equal(np.asarray(state.observation), obs)
        np.testing.assert_array_equal(np.asarray(state.rewards), rewards)
        np.testing.assert_array_equal(np.asarray(state.current_player), turn)
        np.testing.assert_array_equal(np.asarray(state._step_count), decisions)
        if over.all():
            break
        legal = np.asarray(state.legal_action_mask)
        action = np.argmax(rng.random(legal.shape) * legal, axis=1).astype(np.int32)  # a random legal action
        decisions += ~over
        state, x = step(state, jnp.asarray(action)), game_step(x, jnp.asarray(action))
    else:
        raise AssertionError("the games did not end")
    assert decisions.min() > 10
    scores = np.asarray(jax.vmap(game.scores)(state.game))
    assert (scores != 0).any()
    # a finished game stays finished and pays nothing more
    again = step(state, jnp.zeros(n, jnp.int32))
    np.testing.assert_array_equal(np.asarray(again.rewards), 0.0)
    np.testing.assert_array_equal(np.asarray(again.terminated), True)
    np.testing.assert_array_equal(np.asarray(again._step_count), decisions)


def test_an_illegal_action_ends_the_game_as_qwixx_v0_does():
    env = PgxQwixx(num_players=2, reward="win")
    state = env.init(jax.random.PRNGKey(2))
    illegal = int(np.flatnonzero(~np.asarray(state.legal_action_mask))[0])
    seat = int(state.current_player)
    after = jax.jit(env.step)(state, illegal)
    assert bool(after.terminated) and int(after.game.illegal_end) == seat
    expected = np.zeros(2, np.float32)
    expected[seat] = illegal_return("win", env.game.variant)  # not pgx's -1 and +1
    np.testing.assert_array_equal(np.asarray(after.rewards), expected)
    assert np.asarray(after.legal_action_mask).all()  # pgx's mask of a finished game
