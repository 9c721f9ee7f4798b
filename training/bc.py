"""Behaviour cloning: a warm start for PPO from a teacher bot's decisions.

`collect` plays many games at once in a `QwixxVectorEnv`: the teacher (any bot from
`qwixx_env.bots`, through its ordinary ``act(observation dict)``) decides for the learner's
seat, the scripted pool plays the other seats inside the engine. Every decision is kept as
(observation, mask, teacher action) with the discounted return that followed it under the
run's reward mode (times `reward_scale`, as PPO sees it); games still running when enough
samples are in are dropped, so every return is complete. `fit` then fits an actor-critic (SB3's
policy through `clone`, RLlib's module in `training.rllib`):
cross-entropy of the teacher's action under the masked logits (the actor) plus the value
head's squared error on the returns (weighted by PPO's `vf_coef`), reporting the agreement
with the teacher on a held-out tenth.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from qwixx_env import QwixxVectorEnv
from qwixx_env.envs.vector import Opponent
from qwixx_env.training.config import TrainConfig

HELD_OUT = 0.1  # share of the samples kept aside to measure agreement


@dataclass
class Demonstrations:
    """Teacher decisions: observations (n, D) float32, masks (n, A) bool, actions (n,) int64
    and returns (n,) float32 (discounted, from each decision to the end of its game)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)


def collect(cfg: TrainConfig, teacher: Any, samples: int, *, seed: int, num_envs: int = 64,
            on_progress: Callable[[int], None] | None = None) -> tuple[Demonstrations, dict[str, float]]:
    """At least `samples` decisions of `teacher` in the learner's seat (see the module
    docstring), and figures: samples, games, seconds, samples_per_second, teacher_return.
    `on_progress(kept)` is called as finished games add their decisions."""
    start = time.perf_counter()
    scripted: dict[Opponent, float] | Opponent = "heuristic"
    if cfg.opponents and cfg.opponents.scripted:  # a copy, keyed as the env's pool is
        scripted = {name: weight for name, weight in cfg.opponents.scripted.items()}
    env = QwixxVectorEnv(
        num_envs, table=cfg.table, learner_seat="random", opponents=scripted if cfg.num_players > 1 else "random"
    )
    gamma, scale = cfg.ppo.gamma, cfg.reward_scale
    obs, _ = env.reset(seed=seed)
    chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    returns: list[np.ndarray] = []
    game_rows: list[list[int]] = [[] for _ in range(num_envs)]  # sample rows of each game in play
    game_rewards: list[list[float]] = [[] for _ in range(num_envs)]
    kept, games, final_returns = 0, 0, []
    while kept < samples:
        actions = np.array(
            [teacher.act({"observation": o, "action_mask": m}) for o, m in zip(obs["observation"], obs["action_mask"])],
            np.int64,
        )
        row0 = len(chunks) * num_envs
        chunks.append((obs["observation"], obs["action_mask"].astype(bool), actions))
        returns.append(np.full(num_envs, np.nan, np.float32))
        obs, rewards, terminated, truncated, _ = env.step(actions)
        for i in range(num_envs):
            game_rows[i].append(row0 + i)
            game_rewards[i].append(float(rewards[i]))
        for i in np.flatnonzero(terminated | truncated):
            g = 0.0
            for row, r in zip(reversed(game_rows[i]), reversed(game_rewards[i])):
                g = scale * r + gamma * g
                returns[row // num_envs][row % num_envs] = g
            kept += len(game_rows[i])
            games += 1
            final_returns.append(sum(game_rewards[i]))
            game_rows[i], game_rewards[i] = [], []
        if on_progress is not None and (terminated | truncated).any():
            on_progress(min(kept, samples))
    all_returns = np.concatenate(returns)
    done = ~np.isnan(all_returns)
    demos = Demonstrations(
        observations=np.concatenate([c[0] for c in chunks])[done],
        masks=np.concatenate([c[1] for c in chunks])[done],
        actions=np.concatenate([c[2] for c in chunks])[done],
        returns=all_returns[done],
    )
    seconds = time.perf_counter() - start
    stats = {
        "samples": len(demos),
        "games": games,
        "seconds": seconds,
        "samples_per_second": len(demos) / seconds,
        "teacher_return": float(np.mean(final_returns)),
    }
    return demos, stats


def clone(model: Any, demos: Demonstrations, **options: Any) -> dict[str, float]:
    """Fit `model.policy` (a MaskablePPO policy) to the demonstrations: `fit` with the policy's
    masked logits and its value head, `options` `fit`'s (``epochs``, ``batch_size``, ...)."""
    policy = model.policy

    def forward(obs: Any, masks: Any) -> tuple[Any, Any]:
        dist = policy.get_distribution(obs, action_masks=masks.numpy())
        return dist.distribution.logits, policy.predict_values(obs)

    try:
        return fit(forward, policy.parameters(), demos, train_mode=policy.set_training_mode, **options)
    finally:
        policy.set_training_mode(False)


def fit(
    forward: Callable[[Any, Any], tuple[Any, Any]],
    parameters: Any,
    demos: Demonstrations,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    vf_coef: float,
    seed: int,
    train_mode: Callable[[bool], Any] | None = None,
    on_epoch: Callable[[dict[str, float]], None] | None = None,
) -> dict[str, float]:
    """Behaviour cloning of any actor-critic (see the module docstring), SB3's policy (`clone`)
    or RLlib's module (`training.rllib`): `forward(observations, masks)` gives the masked
    logits and the values of a batch (torch tensors: float32 observations, bool masks), and Adam
    fits `parameters` to cross-entropy of the teacher's action plus `vf_coef` times the values'
    squared error on the returns, `epochs` passes in minibatches of `batch_size`, in an order
    drawn from `seed`. `train_mode(flag)` switches the model between training and inference.
    `on_epoch(figures)` is called after each epoch with the training losses and the held-out
    agreement; returns the last epoch's figures plus the agreement before training and by
    chance (a uniformly random legal action)."""
    import torch

    rng = np.random.default_rng(seed)
    order = rng.permutation(len(demos))
    n_val = max(1, int(len(demos) * HELD_OUT))
    val, train = order[:n_val], order[n_val:]
    obs, masks = torch.as_tensor(demos.observations), torch.as_tensor(demos.masks.astype(bool))
    actions, returns = torch.as_tensor(demos.actions), torch.as_tensor(demos.returns)

    def agreement() -> float:
        if train_mode is not None:
            train_mode(False)
        hits = 0
        with torch.no_grad():
            for a in range(0, n_val, 8192):
                rows = torch.as_tensor(val[a : a + 8192])
                logits, _ = forward(obs[rows], masks[rows])
                hits += int((logits.argmax(dim=1) == actions[rows]).sum())
        return hits / n_val

    chance = float(np.mean(1.0 / demos.masks[val].sum(axis=1)))
    before = agreement()
    optimizer = torch.optim.Adam(parameters, lr=learning_rate)
    figures: dict[str, float] = {}
    for epoch in range(epochs):
        if train_mode is not None:
            train_mode(True)
        rng.shuffle(train)
        losses, value_losses = [], []
        for a in range(0, len(train), batch_size):
            rows = torch.as_tensor(train[a : a + batch_size])
            logits, values = forward(obs[rows], masks[rows])
            policy_loss = torch.nn.functional.cross_entropy(logits, actions[rows])
            value_loss = torch.nn.functional.mse_loss(values.flatten(), returns[rows])
            loss = policy_loss + vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(policy_loss.item())
            value_losses.append(value_loss.item())
        figures = {
            "epoch": epoch + 1,
            "policy_loss": float(np.mean(losses)),
            "value_loss": float(np.mean(value_losses)),
            "agreement": agreement(),
        }
        if on_epoch:
            on_epoch(figures)
    return {**figures, "agreement_before": before, "agreement_chance": chance}
