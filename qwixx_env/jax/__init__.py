"""Qwixx in JAX (the ``jax`` extra): one game as an immutable pytree, pure functions in pgx's
shape, `jit`- and `vmap`-able, agreeing decision for decision with the core (`game`); records of
games played in it that `qwixx_env.replay` rebuilds (`records`).

>>> from qwixx_env.jax import Qwixx
>>> env = Qwixx(num_players=2)
>>> state = env.init_seed(0)
"""

from qwixx_env.jax.game import Qwixx, State, seed_states, splitmix_below
from qwixx_env.jax.records import Trace, concat_traces, records, trace

__all__ = ["Qwixx", "State", "Trace", "concat_traces", "records", "seed_states", "splitmix_below", "trace"]
