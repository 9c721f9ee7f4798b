"""PPO self-play on the JAX game (`qwixx_env.jax`), in PureJaxRL's shape: the games, the policy and
the updates compiled together, every seat played by the learner or by one of its snapshots.

`num_envs` games of the table are played side by side (`jax.vmap`). Each game, when it starts,
draws a learning seat and its opponents: with probability `snapshot_share` one of the
`num_snapshots` past networks kept in a pool plays every other seat, else the learner plays
them all (self-play). The pool starts as copies of the first network and every `snapshot_every`
updates the learner replaces its oldest member; with ``num_snapshots: 0`` every seat of every
game is the learner. An update plays `num_steps` decisions in every game (`lax.scan`; a finished
game restarts at once from its own generator, drawing its seats again), computes the learner's
advantages along each of its seats' own decisions (GAE with `gamma` and `gae_lambda`, a seat's
reward being what the table paid it from its decision to its next one), then takes
`update_epochs` passes of `num_minibatches` clipped-PPO steps (optax's Adam, the gradient's norm
clipped) over the learner's decisions only: a snapshot's decisions are played, not trained on.
The updates between two evaluations run as one `jax.jit` call (a `lax.scan` over updates); with
``eval_every: 0`` the whole run is one call.

Every `eval_every` updates and at the end, the learner is written in the package's policy
checkpoint format (`qwixx_env.nets.write_policy`: a tanh MLP over the observation, its logits
and value), which `qwixx_env.bots.load` plays with numpy alone, and that checkpoint plays the
arena against `eval_opponents` (`training.evaluate`): the learning curve (``curve.json``, over
decisions and wall time). The run folder ends with ``final.json`` + ``final.npz``, ``config.json``
and ``curve.json``::

    qwixx-train --engine jax jax_ppo_classic_2p                  # a shipped config, by name
    python -m qwixx_env.training.jax_ppo configs/jax_ppo_classic_2p.yaml --out runs/jax1
    qwixx bench runs/jax1/final.json

Needs the ``jax`` extra (jax, equinox, optax, PyYAML). On a machine with a GPU and a CUDA build of
jaxlib the same command trains there: nothing here names a device.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from qwixx_env.core.options import TableOptions
from qwixx_env.core.variant import variant_names
from qwixx_env.files import write_atomically
from qwixx_env.jax import Qwixx, State
from qwixx_env.nets import NumpyPolicy, write_policy
from qwixx_env.policies.scripted import POLICY_NAMES
from qwixx_env.training.config_yaml import config_path, dataclass_values, read_yaml, with_variant
from qwixx_env.training.evaluate import evaluate, policy_factory, summary

EVAL_SEED = 7_000_000  # the evaluations' deals: no training game is dealt from a seed (JAX keys deal those)


@dataclasses.dataclass(frozen=True)
class JaxPPOConfig:
    """One JAX PPO run (see the module docstring); every field but `name` has a default."""

    name: str  # the run's name: its folder is runs/<name> unless --out says
    variant: str = "classic"  # a registered variant or a sheet file (relative to the config)
    num_players: int = 2
    lucky: str = "bonus"  # Longo's lucky rule (ignored for a sheet without lucky numbers)
    seed: int = 0  # the JAX key of the weights and the games
    hidden: tuple[int, ...] = (128, 128)  # the tanh layers of the policy and of the value network
    num_envs: int = 256  # games played side by side
    num_steps: int = 64  # decisions per game between updates
    total_decisions: int = 10_000_000  # the run's length, in decisions of all games
    learning_rate: float = 3e-4
    anneal_lr: bool = True  # linearly to zero over the run
    gamma: float = 1.0  # discount per decision of a seat
    gae_lambda: float = 0.95
    clip: float = 0.2  # PPO's ratio clip, and the value clip
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    update_epochs: int = 4
    num_minibatches: int = 4
    eval_every: int = 100  # updates between evaluations (0: at the end only)
    eval_games: int = 400  # arena games against each opponent (seats rotated)
    eval_opponents: tuple[str, ...] = ("random", "greedy")
    num_snapshots: int = 0  # past learners kept as opponents (0, the default of configs written before
    # snapshots: pure self-play, the learner in every seat; the shipped config keeps 4)
    snapshot_every: int = 20  # updates between two snapshots (the newest replaces the oldest)
    snapshot_share: float = 0.5  # the chance that a game's other seats are a snapshot (drawn per game)

    def __post_init__(self) -> None:
        def bad(field: str, accepted: str) -> ValueError:
            return ValueError(f"{field}: got {getattr(self, field)!r}; expected {accepted}")

        if not isinstance(self.name, str) or not self.name or "/" in self.name:
            raise bad("name", "a non-empty name without '/' (the run folder's)")
        if self.variant not in variant_names():
            raise bad("variant", f"one of {list(variant_names())} or a sheet file")
        for field, low in (
            ("num_players", 1),
            ("num_envs", 1),
            ("num_steps", 1),
            ("total_decisions", 1),
            ("update_epochs", 1),
            ("num_minibatches", 1),
            ("eval_every", 0),
            ("eval_games", 1),
            ("seed", 0),
            ("num_snapshots", 0),
            ("snapshot_every", 1),
        ):
            value = getattr(self, field)
            if type(value) is not int or value < low:
                raise bad(field, f"an integer of at least {low}")
        if self.num_players > 5:
            raise bad("num_players", "1 to 5")
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            raise bad("num_minibatches", f"a divisor of num_envs * num_steps ({self.num_envs * self.num_steps})")
        if not self.hidden or any(type(h) is not int or h < 1 for h in self.hidden):
            raise bad("hidden", "one or more positive layer sizes, e.g. [128, 128]")
        for field, low, high in (
            ("gamma", 0.0, 1.0),
            ("gae_lambda", 0.0, 1.0),
            ("clip", 0.0, 1.0),
            ("snapshot_share", 0.0, 1.0),
        ):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise bad(field, f"a number from {low} to {high}")
        for field in ("learning_rate", "ent_coef", "vf_coef", "max_grad_norm"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise bad(field, "a non-negative number")
        if type(self.anneal_lr) is not bool:
            raise bad("anneal_lr", "true or false")
        if not self.eval_opponents or any(o not in POLICY_NAMES for o in self.eval_opponents):
            raise bad("eval_opponents", f"scripted bots among {list(POLICY_NAMES)}")

    @property
    def table(self) -> TableOptions:
        """The table the run plays (reward: win, so each game pays +1, 0 or -1 at its end)."""
        return TableOptions(num_players=self.num_players, variant=self.variant, lucky=self.lucky, reward="win")

    @property
    def num_updates(self) -> int:
        return max(1, self.total_decisions // (self.num_envs * self.num_steps))

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}


def config_from_dict(data: Any, source: str = "config", relative_to: Any = None) -> JaxPPOConfig:
    """A checked `JaxPPOConfig` from plain data (as read from YAML); an unknown key is refused by name."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: got {type(data).__name__}; expected a mapping of keys to values")
    try:
        data = with_variant(data, relative_to)
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None
    return JaxPPOConfig(**dataclass_values(data, JaxPPOConfig, "jax", source, ("hidden", "eval_opponents")))


def load_config(name_or_path: Any) -> JaxPPOConfig:
    """A JAX PPO config from a YAML file's path or a shipped config's name."""
    path = config_path(name_or_path)
    return config_from_dict(read_yaml(path), str(path), path.parent)


# --- the networks ---------------------------------------------------------------------------------


class MLP(eqx.Module):
    """Linear layers with tanh between them (none after the last): what a checkpoint stores."""

    layers: list[eqx.nn.Linear]

    def __init__(self, sizes: tuple[int, ...], key: jax.Array, last_scale: float = 1.0):
        keys = jax.random.split(key, len(sizes) - 1)
        layers = [eqx.nn.Linear(a, b, key=k) for a, b, k in zip(sizes[:-1], sizes[1:], keys)]
        # a small last layer: the policy starts near uniform over the legal actions
        layers[-1] = eqx.tree_at(lambda lin: lin.weight, layers[-1], layers[-1].weight * last_scale)
        self.layers = layers

    def __call__(self, x: jax.Array) -> jax.Array:
        for layer in self.layers[:-1]:
            x = jnp.tanh(layer(x))
        return self.layers[-1](x)

    def export(self) -> list[tuple[np.ndarray, np.ndarray, str | None]]:
        """The layers as `qwixx_env.nets.Layer` tuples: (weight (out, in), bias, activation)."""
        last = len(self.layers) - 1
        return [
            (np.asarray(lin.weight), np.asarray(lin.bias), None if i == last else "tanh")
            for i, lin in enumerate(self.layers)
        ]


class Agent(eqx.Module):
    """The policy (a logit per action) and the value network, over one observation."""

    policy: MLP
    value: MLP

    def __init__(self, observation_size: int, num_actions: int, hidden: tuple[int, ...], key: jax.Array):
        kp, kv = jax.random.split(key)
        self.policy = MLP((observation_size, *hidden, num_actions), kp, last_scale=0.01)
        self.value = MLP((observation_size, *hidden, 1), kv)

    def __call__(self, obs: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
        """(the legal actions' log-probabilities, -inf elsewhere; the value)."""
        return self.log_policy(obs, mask), self.value(obs)[0]

    def log_policy(self, obs: jax.Array, mask: jax.Array) -> jax.Array:
        """The legal actions' log-probabilities, -inf elsewhere (the policy alone: what a snapshot plays)."""
        return jax.nn.log_softmax(jnp.where(mask, self.policy(obs), -1e9))


def write_checkpoint(agent: Agent, path: Path, cfg: JaxPPOConfig, meta: dict[str, Any]) -> Path:
    """`agent` as a policy checkpoint pair (`qwixx_env.nets.write_policy`); the JSON's path."""
    table = cfg.table
    return write_policy(
        path,
        policy=agent.policy.export(),
        value=agent.value.export(),
        variant=table.variant,
        num_players=table.num_players,
        lucky=table.rules.lucky_rule,
        meta={"trainer": "qwixx_env.training.jax_ppo", "config": cfg.to_dict(), **meta},
    )


# --- the compiled run -------------------------------------------------------------------------------


class Step(NamedTuple):
    """One decision of every game, as the update reads it."""

    obs: jax.Array
    mask: jax.Array
    seat: jax.Array
    action: jax.Array
    logp: jax.Array  # the learner's log-probability of the action (a snapshot's decision too)
    value: jax.Array
    rewards: jax.Array  # (B, P): every seat's reward for this step
    done: jax.Array  # the step ended the game (before it restarted)
    learn: jax.Array  # the decision is the learner's: it enters the loss (a snapshot's does not)


class Snapshots(NamedTuple):
    """The learner's past networks, and which of them plays which game."""

    pool: Agent  # every array with a leading axis of num_snapshots: the past networks
    oldest: jax.Array  # () int32: the slot the next snapshot replaces
    updates: jax.Array  # () int32: updates so far, which time the snapshots
    learner: jax.Array  # (B,) int32: each game's learning seat
    opponent: jax.Array  # (B,) int32: the slot playing each game's other seats, -1 for the learner


class Runner(NamedTuple):
    agent: Agent
    opt_state: Any
    games: State
    key: jax.Array
    snapshots: Snapshots | None = None  # None with num_snapshots 0


class PPO(NamedTuple):
    """The functions of a run (`make_run`); `rollout` and `loss` are its parts, for tests."""

    start: Callable[[jax.Array], Runner]  # the first Runner from a key
    run: Callable[[Runner, int], tuple[Runner, dict[str, jax.Array]]]  # jitted: `updates` updates
    rollout: Callable[[Runner], tuple[Runner, Step]]  # one update's decisions, (T, B) steps
    loss: Callable[..., Any]  # (agent, flat steps, advantages, targets) -> (total, aux)


def _select(cond: jax.Array, a, b):
    return jax.tree.map(lambda x, y: jnp.where(cond.reshape(cond.shape + (1,) * (x.ndim - 1)), x, y), a, b)


def make_run(cfg: JaxPPOConfig) -> PPO:
    """The run's functions: the first `Runner` from a key, a jitted ``run(runner, updates) ->
    (runner, metrics)``, and its parts."""
    env = Qwixx(cfg.table)
    B, T, P, K = cfg.num_envs, cfg.num_steps, env.num_players, cfg.num_snapshots
    batch = B * T
    minibatch = batch // cfg.num_minibatches
    steps_total = cfg.num_updates * cfg.update_epochs * cfg.num_minibatches
    lr = optax.linear_schedule(cfg.learning_rate, 0.0, steps_total) if cfg.anneal_lr else cfg.learning_rate
    optimizer = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(lr, eps=1e-5))
    init_games = jax.vmap(env.init)
    observe, mask_of = jax.vmap(env.observe), jax.vmap(env.legal_action_mask)
    step_games, over_of = jax.vmap(env.step), jax.vmap(env.terminated)

    def draw_seats(key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Each game's learning seat, and the snapshot playing its other seats (-1: the learner)."""
        k_seat, k_slot, k_share = jax.random.split(key, 3)
        slot = jax.random.randint(k_slot, (B,), 0, K)
        against = jax.random.uniform(k_share, (B,)) < cfg.snapshot_share
        return jax.random.randint(k_seat, (B,), 0, P), jnp.where(against, slot, -1)

    def start(key: jax.Array) -> Runner:
        k_agent, k_games, key = jax.random.split(key, 3)
        agent = Agent(env.observation_size, env.num_actions, cfg.hidden, k_agent)
        runner = Runner(agent, optimizer.init(agent), init_games(jax.random.split(k_games, B)), key)
        if not K:
            return runner
        key, k_seats = jax.random.split(key)
        pool = jax.tree.map(lambda x: jnp.stack([x] * K), agent)  # the first network, K times
        zero = jnp.zeros((), jnp.int32)
        return runner._replace(key=key, snapshots=Snapshots(pool, zero, zero, *draw_seats(k_seats)))

    def play(carry, _):
        agent, games, snaps, key = carry
        keys = jax.random.split(key, 3 if snaps is None else 4)  # without snapshots, the keys of before
        key, pick, fresh = keys[:3]
        obs, mask = observe(games, games.turn), mask_of(games)
        logp_all, value = jax.vmap(agent)(obs, mask)
        if snaps is None:
            learn, acting = jnp.ones(B, bool), logp_all
        else:
            learn = (snaps.opponent < 0) | (games.turn == snaps.learner)
            # every snapshot on every game (K small dense passes), then each game's own
            theirs = jax.vmap(lambda a: jax.vmap(a.log_policy)(obs, mask))(snaps.pool)  # (K, B, A)
            theirs = theirs[jnp.maximum(snaps.opponent, 0), jnp.arange(B)]
            acting = jnp.where(learn[:, None], logp_all, theirs)
        action = jax.random.categorical(pick, acting, axis=-1)
        after = step_games(games, action)
        done = over_of(after)
        logp = jnp.take_along_axis(logp_all, action[:, None], axis=1)[:, 0]
        step = Step(obs, mask, games.turn, action, logp, value, after.rewards, done, learn)
        games = _select(done, init_games(jax.random.split(fresh, B)), after)
        if snaps is not None:  # a new game draws its seats again
            learner, opponent = draw_seats(keys[3])
            snaps = snaps._replace(
                learner=jnp.where(done, learner, snaps.learner), opponent=jnp.where(done, opponent, snaps.opponent)
            )
        return (agent, games, snaps, key), step

    def rollout(runner: Runner) -> tuple[Runner, Step]:
        carry = (runner.agent, runner.games, runner.snapshots, runner.key)
        (_, games, snaps, key), steps = jax.lax.scan(play, carry, None, length=T)
        return runner._replace(games=games, snapshots=snaps, key=key), steps

    def advantages(steps: Step, last_values: jax.Array) -> jax.Array:
        """Each of the learner's decisions' advantage along its seat's own decisions in its game
        (GAE); a snapshot's decisions neither get one nor pass one on."""

        def back(carry, s: Step):
            next_value, next_adv, paid = carry
            keep = ~s.done[:, None]  # a game that ended here: what came later is the next game's
            next_value, next_adv, paid = next_value * keep, next_adv * keep, paid * keep
            paid = paid + s.rewards
            mine = (jnp.arange(P) == s.seat[:, None]) & s.learn[:, None]
            pick = lambda x: (x * mine).sum(axis=1)  # noqa: E731
            delta = pick(paid) + cfg.gamma * pick(next_value) - s.value
            adv = delta + cfg.gamma * cfg.gae_lambda * pick(next_adv)
            next_value = jnp.where(mine, s.value[:, None], next_value)
            next_adv = jnp.where(mine, adv[:, None], next_adv)
            return (next_value, next_adv, jnp.where(mine, 0.0, paid)), jnp.where(s.learn, adv, 0.0)

        zero = jnp.zeros((B, P))
        _, adv = jax.lax.scan(back, (last_values, zero, zero), steps, reverse=True)
        return adv

    def loss(agent: Agent, s: Step, adv: jax.Array, target: jax.Array):
        logp_all, value = jax.vmap(agent)(s.obs, s.mask)
        logp = jnp.take_along_axis(logp_all, s.action[:, None], axis=1)[:, 0]
        if not K:  # every row is the learner's

            def mean(x: jax.Array) -> jax.Array:
                return x.mean()

            ratio = jnp.exp(logp - s.logp)
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        else:  # the learner's rows only; a snapshot's row weighs nothing (ratio 1, advantage 0)

            def mean(x: jax.Array) -> jax.Array:
                return jnp.where(s.learn, x, 0.0).sum() / jnp.maximum(s.learn.sum(), 1)

            ratio = jnp.exp(jnp.where(s.learn, logp - s.logp, 0.0))
            centred = adv - mean(adv)
            adv = jnp.where(s.learn, centred / (jnp.sqrt(mean(centred**2)) + 1e-8), 0.0)
        policy_loss = -mean(jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv))
        clipped = s.value + jnp.clip(value - s.value, -cfg.clip, cfg.clip)
        value_loss = 0.5 * mean(jnp.maximum((value - target) ** 2, (clipped - target) ** 2))
        entropy = mean(-jnp.where(s.mask, jnp.exp(logp_all) * logp_all, 0.0).sum(axis=1))
        total = policy_loss + cfg.vf_coef * value_loss - cfg.ent_coef * entropy
        return total, (policy_loss, value_loss, entropy, mean((ratio - 1) - jnp.log(ratio)))

    grad_fn = jax.value_and_grad(loss, has_aux=True)

    def update(runner: Runner, _):
        runner, steps = rollout(runner)
        agent, opt_state, games, key, snaps = runner
        # each seat's value where the rollout stops: its next decision's value, bootstrapped
        last_values = jnp.stack(
            [jax.vmap(agent)(observe(games, jnp.full(B, s)), mask_of(games))[1] for s in range(P)], axis=1
        )
        adv = advantages(steps, last_values)
        target = adv + steps.value
        flat = jax.tree.map(lambda x: x.reshape((batch, *x.shape[2:])), (steps, adv, target))

        def epoch(carry, _):
            agent, opt_state, key = carry
            key, perm_key = jax.random.split(key)
            order = jax.random.permutation(perm_key, batch)
            shuffled = jax.tree.map(lambda x: x[order].reshape((cfg.num_minibatches, minibatch, *x.shape[1:])), flat)

            def minibatch_step(carry, mb):
                agent, opt_state = carry
                (_, aux), grads = grad_fn(agent, *mb)
                updates, opt_state = optimizer.update(grads, opt_state, agent)
                return (eqx.apply_updates(agent, updates), opt_state), aux

            (agent, opt_state), aux = jax.lax.scan(minibatch_step, (agent, opt_state), shuffled)
            return (agent, opt_state, key), aux

        (agent, opt_state, key), aux = jax.lax.scan(epoch, (agent, opt_state, key), None, length=cfg.update_epochs)
        metrics = {name: x.mean() for name, x in zip(("policy_loss", "value_loss", "entropy", "approx_kl"), aux)}
        metrics["games_finished"] = steps.done.sum()
        metrics["learner_decisions"] = steps.learn.sum()
        if snaps is not None:  # every snapshot_every updates the learner replaces the oldest snapshot
            count = snaps.updates + 1
            refresh, oldest = count % cfg.snapshot_every == 0, snaps.oldest
            pool = jax.tree.map(lambda p, x: jnp.where(refresh, p.at[oldest].set(x), p), snaps.pool, agent)
            oldest = jnp.where(refresh, (oldest + 1) % K, oldest)
            snaps = snaps._replace(pool=pool, oldest=oldest, updates=count)
        return Runner(agent, opt_state, games, key, snaps), metrics

    @eqx.filter_jit
    def run(runner: Runner, updates: int):
        return jax.lax.scan(update, runner, None, length=updates)

    return PPO(start, run, rollout, loss)


# --- the run on the host: chunks of updates, evaluations, the files ------------------------------------


def train(cfg: JaxPPOConfig, out: Path, *, log=print) -> dict[str, Any]:
    """Run `cfg` into the folder `out` (new or empty): ``config.json``, ``curve.json`` (one row an
    evaluation) and ``final.json`` + ``final.npz``; returns the last row of the curve."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"out: {str(out)!r} already holds files; expected a new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    write_atomically(out / "config.json", (json.dumps(cfg.to_dict(), indent=2) + "\n").encode())
    ppo = make_run(cfg)
    runner = ppo.start(jax.random.PRNGKey(cfg.seed))
    per_update = cfg.num_envs * cfg.num_steps
    chunk = cfg.eval_every or cfg.num_updates
    curve: list[dict[str, Any]] = []
    done = learned = 0  # updates; the learner's decisions (a snapshot's are played, not trained on)
    counts: dict[str, int] = {}
    train_seconds = steady_seconds = 0.0
    steady_decisions = 0
    compiled: set[int] = set()  # chunk lengths compiled: a first call of a length compiles, timed apart
    began = time.perf_counter()
    opponents = {name: name for name in cfg.eval_opponents}
    table = cfg.table
    while done < cfg.num_updates:
        n = min(chunk, cfg.num_updates - done)
        t0 = time.perf_counter()
        runner, metrics = jax.block_until_ready(ppo.run(runner, n))
        took = time.perf_counter() - t0
        train_seconds += took
        if n in compiled:
            steady_seconds += took
            steady_decisions += n * per_update
        compiled.add(n)
        done += n
        learned += int(np.asarray(metrics["learner_decisions"]).sum())
        counts = {"updates": done, "decisions": done * per_update, "learner_decisions": learned}
        path = write_checkpoint(runner.agent, out / "latest", cfg, counts)
        result = evaluate(
            policy_factory(NumpyPolicy.load(path)),
            opponents,
            num_players=table.num_players,
            variant=table.variant,
            lucky=table.rules.lucky_rule or table.lucky,
            games=cfg.eval_games,
            seed=EVAL_SEED,
        )
        row = {
            **counts,
            "wall_seconds": time.perf_counter() - began,
            "train_seconds": train_seconds,
            "decisions_per_second": steady_decisions / steady_seconds if steady_seconds else None,
            **{k: float(np.asarray(v)[-1]) for k, v in metrics.items() if k != "learner_decisions"},
            "games_finished_last_update": int(np.asarray(metrics["games_finished"])[-1]),
            "eval": result,
        }
        curve.append(row)
        write_atomically(out / "curve.json", (json.dumps(curve, indent=2) + "\n").encode())
        speed = f"{row['decisions_per_second']:,.0f}/s" if row["decisions_per_second"] else "compiling"
        log(
            f"update {done}/{cfg.num_updates}: {row['decisions']:,} decisions ({speed}), "
            f"{learned:,} of them the learner's; "
            f"entropy {row['entropy']:.3f}; {summary(result)}"
        )
    write_checkpoint(runner.agent, out / "final", cfg, {**counts, "train_seconds": train_seconds})
    return curve[-1]


def main(argv: list[str] | None = None) -> int:
    """``qwixx-train --engine jax CONFIG`` / ``python -m qwixx_env.training.jax_ppo CONFIG``."""
    ap = argparse.ArgumentParser(
        prog="qwixx-train --engine jax",
        description="PPO self-play on the JAX game (PureJaxRL's shape) from a YAML config.",
    )
    ap.add_argument("config", help="YAML config: a file's path or a shipped config's name, e.g. jax_ppo_classic_2p")
    ap.add_argument("--out", help="run folder (default runs/<name>)")
    ap.add_argument("--seed", type=int, help="overrides the config's seed")
    ap.add_argument("--decisions", type=int, help="overrides the config's total_decisions")
    a = ap.parse_args(argv)
    try:
        cfg = load_config(a.config)
        overrides = {k: v for k, v in (("seed", a.seed), ("total_decisions", a.decisions)) if v is not None}
        cfg = dataclasses.replace(cfg, **overrides) if overrides else cfg
        out = Path(a.out) if a.out else Path("runs") / cfg.name
        row = train(cfg, out, log=lambda line: print(line, flush=True))
    except ValueError as err:
        print(f"error: {err}", flush=True)
        return 2
    print(f"wrote {out / 'final.json'} ({row['decisions']:,} decisions, {row['train_seconds']:.0f} s training)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
