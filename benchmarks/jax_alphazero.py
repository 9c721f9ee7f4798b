"""pgx's AlphaZero example (examples/alphazero in github.com/sotetsuk/pgx) on the JAX Qwixx game.

The example's shape, with the environment swapped for `qwixx_env.jax.Qwixx` (2-player classic,
``reward="win"``): self-play of a batch of games inside one `jit`, each decision chosen by mctx's
Gumbel MuZero search with the game's own `step` as the model, then AlphaZero's losses (the
search's action weights as the policy target, the game's outcome as the value target) on
shuffled minibatches. What had to change for Qwixx:

* **Chance.** pgx's games in that example are deterministic, so the search steps the real state.
  A Qwixx state carries its own dice generator: stepping it in the search would read the dice
  to come. The recurrent function therefore reseeds each state's generator from the search's
  key before stepping it, so a roll inside the tree is a sample, not the game's next roll (the
  tree keeps the first sample a node expanded with: sampled chance, no chance nodes).
* **Who moves next.** pgx's example alternates seats and uses a discount of -1 every step. In
  Qwixx every seat decides on each white roll and the active seat decides again (its colour
  action). With two players in classic that order still alternates (A white, B white, A
  colour, then B rolls: B, A, B, ...), but a lucky-cross tie in Longo gives one seat two
  decisions in a row, so the discount is set by who decides next: +1 when it is the seat that
  just decided, -1 when it is the other, 0 at the end. Values are always from the view of the
  seat to decide. This holds for two players (the ``win`` reward is zero-sum there); more
  players would need a value per seat.
* **Sequential white decisions.** The white action is one decision a seat in the AEC order, so
  the search of the second seat steps a state holding the first seat's white choice (which
  the observation, and so the network, does not show).
* **Rewards at the end only** (``win``: +1, 0 or -1), as in pgx's board games; a game cut by
  `max_num_steps` gets no value target (masked), as in the example.
* **The network** is a tanh MLP over the observation vector (Qwixx's observation is a vector,
  not a board): `qwixx_env.training.jax_ppo.MLP`, a policy net and a value net (tanh on its
  output), trained with optax's Adam; no haiku, no BatchNorm.
* **Evaluation**: the policy network alone (the most likely legal action, no search) is written
  in the package's checkpoint format and plays `qwixx_env.arena` against scripted bots, seats
  rotated, the same deals every time (`qwixx_env.training.evaluate`), where pgx's example
  plays its baseline model by sampling.

Run in the venv of the ``jax`` extra with mctx: ``python benchmarks/jax_alphazero.py
[--minutes 10] [--batch 64] [--simulations 16]``. It trains until `--iterations` or
`--minutes` of training (compiling included) runs out, evaluating every `--eval-every`
iterations and at the end; it writes ``jax/alphazero.json`` under ``--out`` (default
benchmarks/results) and the last checkpoint as ``--checkpoint`` (.json + .npz).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import mctx
import numpy as np
import optax

from qwixx_env.files import write_atomically
from qwixx_env.jax import Qwixx, State
from qwixx_env.nets import NumpyPolicy, write_policy
from qwixx_env.training.evaluate import evaluate, policy_factory, summary
from qwixx_env.training.jax_ppo import EVAL_SEED, MLP


@dataclasses.dataclass(frozen=True)
class Config:
    """The run's settings (pgx's example's names where it has them)."""

    seed: int = 0
    """The JAX key of the network, the games and the search."""
    iterations: int = 1000
    """Self-play + training iterations at most (`minutes` usually stops the run first)."""
    minutes: float = 10.0
    """Wall minutes of training (compiling included) after which no new iteration starts."""
    hidden: tuple[int, ...] = (128, 128)
    """The hidden layers of the policy and of the value MLP."""
    selfplay_batch_size: int = 64
    """Games played side by side in self-play."""
    num_simulations: int = 16
    """Gumbel MuZero simulations per decision."""
    max_num_steps: int = 128
    """Decisions of every game per iteration (finished games restart; a game cut here has no
    value target)."""
    training_batch_size: int = 1024
    """Samples per Adam step."""
    learning_rate: float = 1e-3
    """Adam's step size."""
    eval_every: int = 10
    """Iterations between two arena evaluations (and one at the end)."""
    eval_games: int = 400
    """Arena games per opponent and evaluation."""
    eval_opponents: tuple[str, ...] = ("random", "greedy")
    """The scripted bots the policy plays."""

    def __post_init__(self) -> None:
        for name in (
            "iterations",
            "selfplay_batch_size",
            "num_simulations",
            "max_num_steps",
            "training_batch_size",
            "eval_every",
            "eval_games",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: {value!r}; expected a positive integer")
        samples = self.selfplay_batch_size * self.max_num_steps
        if samples % self.training_batch_size:
            raise ValueError(
                f"training_batch_size: {self.training_batch_size} does not divide the "
                f"{samples} samples of an iteration; expected a divisor of it"
            )
        if not self.minutes > 0:
            raise ValueError(f"minutes: {self.minutes!r}; expected a positive number")


ENV = Qwixx(num_players=2, variant="classic", reward="win")


class Net(eqx.Module):
    """pgx's AZNet in the part it plays: prior logits over the legal actions and a value in
    [-1, 1] from the view of the seat to decide."""

    policy: MLP
    value: MLP

    def __init__(self, hidden: tuple[int, ...], key: jax.Array):
        kp, kv = jax.random.split(key)
        self.policy = MLP((ENV.observation_size, *hidden, ENV.num_actions), kp, last_scale=0.01)
        self.value = MLP((ENV.observation_size, *hidden, 1), kv)

    def __call__(self, obs: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
        """(B, A) logits, the illegal actions at the dtype's minimum; (B,) values."""
        logits = jax.vmap(self.policy)(obs)
        logits = logits - logits.max(axis=-1, keepdims=True)
        logits = jnp.where(mask, logits, jnp.finfo(logits.dtype).min)
        return logits, jnp.tanh(jax.vmap(self.value)(obs)[:, 0])


def _seen(state: State) -> tuple[jax.Array, jax.Array]:
    """The observation and legal mask of the seat to decide, for a batch."""
    obs = jax.vmap(ENV.observe)(state, state.turn)
    return obs, jax.vmap(ENV.legal_action_mask)(state)


def _discount(actor: jax.Array, after: State) -> jax.Array:
    """+1 when the seat that decided decides again, -1 when the other seat does, 0 at the end."""
    same = jnp.where(after.turn == actor, 1.0, -1.0)
    return jnp.where(jax.vmap(ENV.terminated)(after), 0.0, same)


def recurrent_fn(net: Net, key: jax.Array, action: jax.Array, state: State):
    """mctx's model: the game's own step, on dice sampled from `key` (never the game's own)."""
    batch = action.shape[0]
    state = state._replace(rng=jax.random.bits(key, (batch, 2), jnp.uint32))
    actor = state.turn
    state = jax.vmap(ENV.step)(state, action)
    obs, mask = _seen(state)
    logits, value = net(obs, mask)
    over = jax.vmap(ENV.terminated)(state)
    out = mctx.RecurrentFnOutput(
        reward=state.rewards[jnp.arange(batch), actor],
        discount=_discount(actor, state),
        prior_logits=logits,
        value=jnp.where(over, 0.0, value),
    )
    return out, state


class SelfplayOutput(NamedTuple):
    obs: jax.Array
    legal: jax.Array
    reward: jax.Array
    terminated: jax.Array
    action_weights: jax.Array
    discount: jax.Array


class Sample(NamedTuple):
    obs: jax.Array
    legal: jax.Array
    policy_tgt: jax.Array
    value_tgt: jax.Array
    mask: jax.Array


def make_iteration(cfg: Config):
    """The compiled pieces: ``selfplay(net, key) -> Sample`` (T * B samples, flattened) and
    ``train(net, opt_state, samples) -> (net, opt_state, policy_loss, value_loss)``; self-play
    also gives the number of games that ended."""
    optimizer = optax.adam(cfg.learning_rate)
    B, T = cfg.selfplay_batch_size, cfg.max_num_steps

    def step_fn(carry, key):
        net, state = carry
        k_search, k_reset = jax.random.split(key)
        obs, mask = _seen(state)
        logits, value = net(obs, mask)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
        policy = mctx.gumbel_muzero_policy(
            params=net,
            rng_key=k_search,
            root=root,
            recurrent_fn=recurrent_fn,
            num_simulations=cfg.num_simulations,
            invalid_actions=~mask,
            qtransform=mctx.qtransform_completed_by_mix_value,
            gumbel_scale=1.0,
        )
        actor = state.turn
        # the real game rolls from its own generator, drawn from a JAX key when it started
        after = jax.vmap(ENV.step)(state, policy.action)
        over = jax.vmap(ENV.terminated)(after)
        fresh = jax.vmap(ENV.init)(jax.random.split(k_reset, B))
        following = jax.tree_util.tree_map(
            lambda new, old: jnp.where(over.reshape((-1,) + (1,) * (old.ndim - 1)), new, old), fresh, after
        )
        out = SelfplayOutput(
            obs=obs,
            legal=mask,
            reward=after.rewards[jnp.arange(B), actor],
            terminated=over,
            action_weights=policy.action_weights,
            discount=_discount(actor, after),
        )
        return (net, following), out

    @eqx.filter_jit
    def selfplay(net: Net, key: jax.Array) -> tuple[Sample, jax.Array]:
        k_init, k_steps = jax.random.split(key)
        state = jax.vmap(ENV.init)(jax.random.split(k_init, B))
        _, data = jax.lax.scan(step_fn, (net, state), jax.random.split(k_steps, T))
        # a value target only where the game ended within the window (pgx's mask)
        has_end = jnp.cumsum(data.terminated[::-1], axis=0)[::-1] >= 1

        def back(v, i):
            ix = T - 1 - i
            v = data.reward[ix] + data.discount[ix] * v
            return v, v

        _, value_tgt = jax.lax.scan(back, jnp.zeros(B), jnp.arange(T))
        sample = Sample(data.obs, data.legal, data.action_weights, value_tgt[::-1], has_end)
        return jax.tree_util.tree_map(lambda x: x.reshape((T * B,) + x.shape[2:]), sample), data.terminated.sum()

    def loss_fn(net: Net, s: Sample):
        logits, value = net(s.obs, s.legal)
        policy_loss = optax.softmax_cross_entropy(logits, s.policy_tgt).mean()
        value_loss = (optax.l2_loss(value, s.value_tgt) * s.mask).mean()
        return policy_loss + value_loss, (policy_loss, value_loss)

    @eqx.filter_jit
    def train(net: Net, opt_state, s: Sample):
        grads, (pl, vl) = eqx.filter_grad(loss_fn, has_aux=True)(net, s)
        updates, opt_state = optimizer.update(grads, opt_state)
        return eqx.apply_updates(net, updates), opt_state, pl, vl

    return optimizer, selfplay, train


def _take(samples: Sample, idx: jax.Array) -> Sample:
    return jax.tree_util.tree_map(lambda x: x[idx], samples)


def write_checkpoint(net: Net, path: Path, meta: dict[str, Any]) -> Path:
    """The policy network (and the value net) in the package's checkpoint format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_policy(
        path,
        policy=net.policy.export(),
        value=net.value.export(),
        variant=ENV.table.variant,
        num_players=2,
        lucky=ENV.table.rules.lucky_rule,
        meta={"trainer": "benchmarks/jax_alphazero.py", **meta},
    )


def run(cfg: Config, checkpoint: Path, log=print) -> dict[str, Any]:
    """Train `cfg`, evaluating as it goes; the result record (settings, curve, timings)."""
    key = jax.random.PRNGKey(cfg.seed)
    key, k_net = jax.random.split(key)
    net = Net(cfg.hidden, k_net)
    optimizer, selfplay, train = make_iteration(cfg)
    opt_state = optimizer.init(eqx.filter(net, eqx.is_array))
    per_iter = cfg.selfplay_batch_size * cfg.max_num_steps
    curve: list[dict[str, Any]] = []
    began = time.perf_counter()
    train_seconds = first_seconds = 0.0
    iteration = 0

    def evaluation(row: dict[str, Any]) -> None:
        path = write_checkpoint(net, checkpoint, {"iterations": iteration, "decisions": iteration * per_iter})
        row["eval"] = evaluate(
            policy_factory(NumpyPolicy.load(path)),
            {n: n for n in cfg.eval_opponents},
            num_players=2,
            variant=ENV.table.variant,
            lucky=ENV.table.rules.lucky_rule or ENV.table.lucky,
            games=cfg.eval_games,
            seed=EVAL_SEED,
        )
        log(f"iteration {iteration}: {summary(row['eval'])}")

    while iteration < cfg.iterations and train_seconds < cfg.minutes * 60:
        t0 = time.perf_counter()
        key, k_play, k_shuffle = jax.random.split(key, 3)
        samples, finished = selfplay(net, k_play)
        order = jax.random.permutation(k_shuffle, per_iter)
        losses = []
        for i in range(per_iter // cfg.training_batch_size):
            idx = order[i * cfg.training_batch_size : (i + 1) * cfg.training_batch_size]
            net, opt_state, pl, vl = train(net, opt_state, _take(samples, idx))
            losses.append((pl, vl))
        losses = np.asarray(jax.device_get(losses))
        took = time.perf_counter() - t0
        train_seconds += took
        if iteration == 0:
            first_seconds = took
        iteration += 1
        row = {
            "iteration": iteration,
            "decisions": iteration * per_iter,
            "games_finished": int(finished),
            "policy_loss": float(losses[:, 0].mean()),
            "value_loss": float(losses[:, 1].mean()),
            "train_seconds": train_seconds,
            "wall_seconds": time.perf_counter() - began,
        }
        log(
            f"iteration {iteration}: {row['decisions']:,} decisions, {took:.1f} s; "
            f"policy loss {row['policy_loss']:.3f}, value loss {row['value_loss']:.3f}"
        )
        if iteration % cfg.eval_every == 0:
            evaluation(row)
        curve.append(row)
    if "eval" not in curve[-1]:
        evaluation(curve[-1])
    steady = (train_seconds - first_seconds) / max(iteration - 1, 1)
    return {
        "config": dataclasses.asdict(cfg),
        "iterations": iteration,
        "decisions": iteration * per_iter,
        "train_seconds": train_seconds,
        "first_iteration_seconds": first_seconds,
        "decisions_per_second_after_compiling": per_iter / steady if iteration > 1 else None,
        "search_steps_per_decision": cfg.num_simulations,
        "wall_seconds": time.perf_counter() - began,
        "curve": curve,
    }


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=64, help="selfplay_batch_size")
    parser.add_argument("--steps", type=int, default=128, help="max_num_steps")
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--train-batch", type=int, default=1024)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--eval-games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--checkpoint", type=Path, default=Path("runs/jax_alphazero/final"))
    args = parser.parse_args(argv)
    cfg = Config(
        seed=args.seed,
        iterations=args.iterations,
        minutes=args.minutes,
        selfplay_batch_size=args.batch,
        num_simulations=args.simulations,
        max_num_steps=args.steps,
        training_batch_size=args.train_batch,
        eval_every=args.eval_every,
        eval_games=args.eval_games,
    )
    print(cfg, flush=True)
    record = run(cfg, args.checkpoint, log=lambda line: print(line, flush=True))
    record["machine"] = {
        "platform": platform.platform(),
        "device": str(jax.devices()[0]),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "versions": {name: version(name) for name in ("jax", "jaxlib", "mctx", "equinox", "optax")},
    }
    out = args.out / "jax" / "alphazero.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(out, (json.dumps(record, indent=2) + "\n").encode())
    print(f"wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
