"""PPO on the CPU over `QwixxPufferEnv`, in CleanRL's shape: one file, one settings dataclass,
one `train` function (rollout, GAE, clipped update) and a command line.

    python -m qwixx_env.integrations.pufferlib_ppo --table classic-2p --steps 200000 --save puffer.pt

PufferLib's own trainer (`pufferlib.pufferl`) needs its CUDA extension; this loop needs only
torch and PufferLib's environment side. It trains a `MaskedPolicy` (masked logits, a value
head) with CleanRL's PPO: generalised advantage estimates, the clipped surrogate objective, a
clipped value loss and the entropy of the legal actions only, CleanRL's default settings.

**Who plays.** `QwixxPufferEnv` shows each game from one learning seat (drawn per game, so the
policy learns every seat); the other seats decide inside the engine. With ``opponents="self"``
(the default) they are played by the same network, sampling from its current weights without
a gradient: self-play in which only the learning seat's decisions are trained on. Each row of
the env is always at its learner's decision, so a transition runs from one learner decision
to its next, with the rewards of the opponents' decisions in between summed by the env, and no
row waits (the loop checks PufferLib's ``masks`` buffer, its flags of live rows). With a
bot spec (``"heuristic"``) the policy learns against that bot instead.

**Counts.** ``steps`` is a budget of *decisions the network chooses*, in every seat it plays,
exploration included (the learner's and, in self-play, its opponents'); `Progress` reports
them, the transitions trained on (the learner's) and the games finished. The same settings
and seed train the same weights. At the end the policy is saved (``save``), atomically, with
the settings and the final progress beside it; `MaskedPolicy.load` reads it back.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from qwixx_env.core.checks import check_int, check_number
from qwixx_env.core.options import TableOptions
from qwixx_env.integrations.pufferlib import MaskedPolicy, QwixxPufferEnv

SELF = "self"


def table_options(name: str) -> TableOptions:
    """The table a name like the benchmark's gives: ``classic-2p``, ``longo-3p`` (Longo, the
    lucky cross a bonus), ``longo-instead-4p``."""
    stem, _, players = str(name).rpartition("-")
    variant, lucky = (stem[: -len("-instead")], "instead") if stem.endswith("-instead") else (stem, "bonus")
    if not (variant and players.endswith("p") and players[:-1].isdigit()):
        raise ValueError(
            f"table: got {name!r}; expected VARIANT-Np or VARIANT-instead-Np, e.g. 'classic-2p', "
            "'longo-3p', 'longo-instead-4p'"
        )
    try:
        return TableOptions(num_players=int(players[:-1]), variant=variant, lucky=lucky)
    except ValueError as err:
        raise ValueError(f"table: {name!r}: {err}") from None


@dataclass(frozen=True)
class PPOConfig:
    """The settings of one run; the defaults are CleanRL's `ppo.py` where it has one."""

    table: str = "classic-2p"
    """the table, named as the benchmark names it (`table_options`)"""
    opponents: str = SELF
    """``"self"`` (the network itself plays the other seats) or a bot spec (``"heuristic"``, ...)"""
    steps: int = 1_000_000
    """the budget: decisions the network chooses, in every seat it plays"""
    seed: int = 0
    """seeds the games, the weights, the sampling and the minibatches"""
    games: int = 64
    """games played side by side (the env's rows)"""
    rollout: int = 128
    """learner decisions per game in each rollout (CleanRL's num_steps)"""
    learning_rate: float = 2.5e-4
    """Adam's step size, annealed linearly to 0 over the budget"""
    anneal_lr: bool = True
    """whether to anneal the learning rate"""
    gamma: float = 0.99
    """the discount per learner decision"""
    gae_lambda: float = 0.95
    """the λ of the generalised advantage estimate"""
    minibatches: int = 4
    """minibatches per epoch"""
    epochs: int = 4
    """passes over each rollout"""
    norm_adv: bool = True
    """whether to normalise the advantages of each minibatch"""
    clip_coef: float = 0.2
    """the surrogate's clipping range"""
    clip_vloss: bool = True
    """whether to clip the value loss too"""
    ent_coef: float = 0.01
    """the weight of the (masked) entropy bonus"""
    vf_coef: float = 0.5
    """the weight of the value loss"""
    max_grad_norm: float = 0.5
    """the gradient norm clipped to"""
    target_kl: float | None = None
    """stop an update's epochs early past this approximate KL (None: never)"""
    hidden: tuple[int, ...] = (128, 128)
    """the trunk's layer widths"""
    threads: int = 1
    """torch's CPU threads (`train` sets them for the process): the weights a seed gives depend on it, as it
    orders the float sums"""
    save: str | None = None
    """where to save the trained policy (None: not saved)"""
    log_every: int = 1
    """print a progress line every this many iterations (0: quiet)"""

    def __post_init__(self) -> None:
        table_options(self.table)  # a ValueError for a name that is no table
        if not isinstance(self.opponents, str):
            raise ValueError(f"opponents: got {self.opponents!r}; expected 'self' or a bot spec ('heuristic', ...)")
        for name in ("steps", "games", "rollout", "minibatches", "epochs", "threads"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("seed", self.seed, minimum=0)
        check_int("log_every", self.log_every, minimum=0)
        for name in ("learning_rate", "clip_coef", "ent_coef", "vf_coef", "max_grad_norm"):
            check_number(name, getattr(self, name), minimum=0)
        for name in ("gamma", "gae_lambda"):
            check_number(name, getattr(self, name), minimum=0, maximum=1)
        if self.target_kl is not None:
            check_number("target_kl", self.target_kl, minimum=0)
        for name in ("anneal_lr", "norm_adv", "clip_vloss"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}: got {getattr(self, name)!r}; expected True or False")
        if self.games * self.rollout < self.minibatches:
            raise ValueError(
                f"minibatches: got {self.minibatches}; expected at most games x rollout "
                f"({self.games * self.rollout}) transitions per rollout"
            )

    @property
    def options(self) -> TableOptions:
        """The table's `TableOptions`."""
        return table_options(self.table)

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain values (what `save` writes beside the weights)."""
        return {**dataclasses.asdict(self), "hidden": list(self.hidden)}


@dataclass
class Progress:
    """Where a run stands after an iteration (a rollout and its update)."""

    iteration: int = 0
    decisions: int = 0
    """decisions the network chose: `learner_decisions` plus its opponents' in self-play"""
    learner_decisions: int = 0
    """decisions of the learning seats (the env's count)"""
    samples: int = 0
    """transitions trained on (every row of every rollout: a learner decision each)"""
    games: int = 0
    """games finished"""
    mean_return: float = 0.0
    """the learner's mean return over the games finished in the last rollout"""
    policy_loss: float = 0.0
    value_loss: float = 0.0
    entropy: float = 0.0
    approx_kl: float = 0.0
    clipfrac: float = 0.0
    seconds: float = 0.0
    """wall time in `train`, callbacks left out"""

    def line(self) -> str:
        """One progress line."""
        rate = self.decisions / self.seconds if self.seconds else 0.0
        return (
            f"iteration {self.iteration}: {self.decisions:,} decisions ({self.samples:,} trained), "
            f"{self.games:,} games, return {self.mean_return:+.3f}, policy loss {self.policy_loss:+.4f}, "
            f"value loss {self.value_loss:.4f}, entropy {self.entropy:.3f}, kl {self.approx_kl:.4f}, "
            f"{rate:,.0f} decisions/s"
        )


def self_play_opponent(policy: MaskedPolicy, generator: torch.Generator) -> Callable[[np.ndarray, np.ndarray], Any]:
    """The network as an opponent inside the env: it samples a legal action per row from its
    current weights (no gradient), drawing from `generator`."""

    @torch.no_grad()
    def opponent(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits, _ = policy.heads(torch.from_numpy(observations), torch.from_numpy(masks))
        return torch.multinomial(torch.softmax(logits, -1), 1, generator=generator).squeeze(-1).numpy()

    return opponent


def train(
    config: PPOConfig, *, on_iteration: Callable[[Progress, MaskedPolicy], None] | None = None
) -> tuple[MaskedPolicy, Progress]:
    """Train a `MaskedPolicy` by PPO over `QwixxPufferEnv` until it has chosen ``config.steps``
    decisions; returns it and the final `Progress`. `on_iteration(progress, policy)` is called
    before the first rollout and after every update (its time is not counted in ``seconds``)."""
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    env = QwixxPufferEnv(
        config.games,
        table=config.options,
        learner_seat="random",
        opponents="random" if config.opponents == SELF else config.opponents,
    )
    policy = MaskedPolicy.for_env(env, config.hidden)
    self_play = config.opponents == SELF
    if self_play:
        env.games.set_opponents(self_play_opponent(policy, generator))
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate, eps=1e-5)
    T, G, W = config.rollout, config.games, env.single_observation_space.shape[0]
    rows = torch.zeros((T, G, W))
    actions = torch.zeros((T, G), dtype=torch.long)
    log_probs, rewards, dones, values = (torch.zeros((T, G)) for _ in range(4))

    progress = Progress()
    started = time.perf_counter()
    paused = 0.0

    def report() -> None:
        nonlocal paused
        progress.seconds = time.perf_counter() - started - paused
        if on_iteration is not None:
            before = time.perf_counter()
            on_iteration(progress, policy)
            paused += time.perf_counter() - before

    observations, _ = env.reset(seed=config.seed)
    next_rows, next_done = torch.from_numpy(observations.copy()), torch.zeros(G)
    report()
    while progress.decisions < config.steps:
        if config.anneal_lr:
            optimizer.param_groups[0]["lr"] = config.learning_rate * (1.0 - progress.decisions / config.steps)
        ended = returned = 0.0
        for t in range(T):
            rows[t], dones[t] = next_rows, next_done
            if not env.masks.all():  # PufferLib's live-agent flags: a waiting row would need its own bookkeeping
                raise RuntimeError("QwixxPufferEnv left a row without a decision; every row should be at its learner's")
            with torch.no_grad():
                action, log_prob, _, value = policy.get_action_and_value(next_rows, generator=generator)
            actions[t], log_probs[t], values[t] = action, log_prob, value
            observations, reward, terminal, truncation, infos = env.step(action.numpy().astype(np.int32))
            rewards[t] = torch.from_numpy(reward.copy())
            next_rows = torch.from_numpy(observations.copy())
            next_done = torch.from_numpy((terminal | truncation).astype(np.float32))
            for info in infos:
                ended += info["games"]
                returned += info["episode_return"] * info["games"]

        with torch.no_grad():  # CleanRL's GAE: a done cuts the bootstrap at the game's end
            next_value = policy.get_value(next_rows)
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(G)
            for t in reversed(range(T)):
                following, value_after = (
                    (1.0 - next_done, next_value) if t == T - 1 else (1.0 - dones[t + 1], values[t + 1])
                )
                delta = rewards[t] + config.gamma * value_after * following - values[t]
                advantages[t] = last = delta + config.gamma * config.gae_lambda * following * last
            returns = advantages + values

        batch = (
            rows.reshape(-1, W),
            actions.reshape(-1),
            log_probs.reshape(-1),
            advantages.reshape(-1),
            returns.reshape(-1),
            values.reshape(-1),
        )
        stats = update(policy, optimizer, batch, config, generator)

        progress.iteration += 1
        progress.samples += T * G
        progress.learner_decisions = env.games.learner_decisions
        progress.decisions = progress.learner_decisions + (env.games.opponent_decisions if self_play else 0)
        progress.games += int(ended)
        if ended:
            progress.mean_return = returned / ended
        progress.policy_loss, progress.value_loss, progress.entropy, progress.approx_kl, progress.clipfrac = stats
        report()
        if config.log_every and progress.iteration % config.log_every == 0:
            print(progress.line(), flush=True)
    env.close()
    if config.save is not None:
        policy.save(config.save, config=config.as_dict(), progress=dataclasses.asdict(progress))
    return policy, progress


def update(
    policy: MaskedPolicy,
    optimizer: torch.optim.Optimizer,
    batch: tuple[torch.Tensor, ...],
    config: PPOConfig,
    generator: torch.Generator,
) -> tuple[float, float, float, float, float]:
    """CleanRL's PPO update on one rollout's transitions (rows, actions, log-probabilities,
    advantages, returns, values): ``epochs`` passes of ``minibatches`` minibatches; returns the
    last minibatch's (policy loss, value loss, entropy, approximate KL) and the clipped share."""
    rows, actions, old_log_probs, advantages, returns, old_values = batch
    n = rows.shape[0]
    size = math.ceil(n / config.minibatches)
    clipfracs: list[float] = []
    policy_loss = value_loss = entropy = approx_kl = torch.zeros(())
    for _ in range(config.epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, size):
            mb = order[start : start + size]
            _, new_log_prob, mb_entropy, new_value = policy.get_action_and_value(rows[mb], actions[mb])
            log_ratio = new_log_prob - old_log_probs[mb]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()
                clipfracs.append(float(((ratio - 1.0).abs() > config.clip_coef).float().mean()))
            mb_adv = advantages[mb]
            if config.norm_adv and mb.numel() > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            policy_loss = torch.max(
                -mb_adv * ratio, -mb_adv * ratio.clamp(1 - config.clip_coef, 1 + config.clip_coef)
            ).mean()
            if config.clip_vloss:
                clipped = old_values[mb] + (new_value - old_values[mb]).clamp(-config.clip_coef, config.clip_coef)
                value_loss = 0.5 * torch.max((new_value - returns[mb]) ** 2, (clipped - returns[mb]) ** 2).mean()
            else:
                value_loss = 0.5 * ((new_value - returns[mb]) ** 2).mean()
            entropy = mb_entropy.mean()
            loss = policy_loss - config.ent_coef * entropy + config.vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
            optimizer.step()
        if config.target_kl is not None and approx_kl > config.target_kl:
            break
    return (
        policy_loss.item(),
        value_loss.item(),
        entropy.item(),
        approx_kl.item(),
        float(np.mean(clipfracs)) if clipfracs else 0.0,
    )


def main(argv: Sequence[str] | None = None) -> Progress:
    """The command line: every `PPOConfig` field as ``--name`` (``--hidden 128 128``; booleans
    ``--anneal-lr`` / ``--no-anneal-lr``); trains, prints progress, saves if ``--save``."""
    parser = argparse.ArgumentParser(
        prog="python -m qwixx_env.integrations.pufferlib_ppo",
        description="PPO on the CPU over QwixxPufferEnv (CleanRL's shape).",
    )
    for f in dataclasses.fields(PPOConfig):
        flag, default, doc = "--" + f.name.replace("_", "-"), f.default, f"default {f.default!r}"
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=doc)
        elif isinstance(default, tuple):
            parser.add_argument(flag, type=int, nargs="+", default=default, help=doc)
        elif f.name == "target_kl":
            parser.add_argument(flag, type=float, default=default, help=doc)
        else:
            parser.add_argument(flag, type=type(default) if default is not None else str, default=default, help=doc)
    args = vars(parser.parse_args(argv))
    config = PPOConfig(**{**args, "hidden": tuple(args["hidden"])})
    _, progress = train(config)
    if config.save:
        print(f"saved {config.save}")
    return progress


if __name__ == "__main__":
    main()
