"""MaskablePPO as a run uses it: its keyword arguments from the config and the reward scaling."""

from __future__ import annotations

from typing import Any

from qwixx_env.training.config import TrainConfig


def ppo_options(cfg: TrainConfig) -> dict[str, Any]:
    """MaskablePPO keyword arguments from the config."""
    from torch import nn

    p = cfg.ppo
    return dict(
        learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size, n_epochs=p.n_epochs,
        gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range, ent_coef=p.ent_coef,
        vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm, target_kl=p.target_kl,
        policy_kwargs=dict(
            net_arch=dict(pi=list(cfg.network.pi), vf=list(cfg.network.vf)),
            activation_fn={"tanh": nn.Tanh, "relu": nn.ReLU}[cfg.network.activation],
        ),
    )


def scaled_rewards(venv: Any, scale: float) -> Any:
    """`venv` with every reward multiplied by `scale` (keeps value targets near 1 when the
    reward is a score; the observations, and so an exported policy, are unchanged)."""
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class ScaledRewards(VecEnvWrapper):
        def reset(self):
            return self.venv.reset()

        def step_wait(self):
            obs, rewards, dones, infos = self.venv.step_wait()
            return obs, rewards * scale, dones, infos

    return ScaledRewards(venv)
