"""Export a trained MaskablePPO policy to a numpy checkpoint (``<name>.npz`` + ``<name>.json``).

>>> export_policy(model, "runs/best", meta={"steps": model.num_timesteps})

The checkpoint is written by `qwixx_env.nets.write_policy` and loads without torch
(`qwixx_env.bots.load`, `NumpyPolicy.load`); `docs/pretrained.md` describes the format.
Exporting needs torch and stable-baselines3 (the train extra).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from qwixx_env.envs.sb3 import PolicyInputs
from qwixx_env.envs.vector import QwixxVectorEnv
from qwixx_env.nets import Layer, write_policy


def export_policy(
    model: Any,
    path: str | os.PathLike[str],
    *,
    meta: dict[str, Any],
    variant: str | None = None,
    num_players: int | None = None,
    lucky: str | None = None,
) -> Path:
    """Export an sb3-contrib ``MaskablePPO`` model's MLP policy as a checkpoint pair (see
    `write_policy`) and return the JSON's path. Needs torch (imported here only).

    Extra inputs a `PolicyInputs` wrapper appends to the model's observations are
    recorded (``inputs``), so the loaded policy computes them itself. The policy must be
    ``"MlpPolicy"``: the flatten extractor, then ``mlp_extractor``'s
    policy and value nets (linear layers, each followed by the policy's ``activation_fn``,
    tanh or relu) and the ``action_net`` and ``value_net`` heads. `variant`, `num_players`
    and `lucky` default to those of the model's training env (a `QwixxVectorEnv` under
    `Sb3VecEnv`); give them when the model has no env. `meta` (JSON-ready: config, steps,
    wall time, ...) is stored as is.
    """
    from stable_baselines3.common.torch_layers import FlattenExtractor
    from stable_baselines3.common.vec_env import VecNormalize
    from torch import nn

    policy = model.policy
    names = {nn.Tanh: "tanh", nn.ReLU: "relu"}
    if policy.activation_fn not in names:
        raise ValueError(
            f"activation_fn: got {policy.activation_fn!r}; export supports {sorted(names.values())}"
        )
    activation = names[policy.activation_fn]
    extractors = {policy.features_extractor, policy.pi_features_extractor, policy.vf_features_extractor}
    if not all(isinstance(e, FlattenExtractor) for e in extractors):
        raise ValueError(
            f"features extractor: got {extractors!r}; export supports MlpPolicy's FlattenExtractor"
        )

    def layers(body: nn.Sequential, head: nn.Linear, where: str) -> list[Layer]:
        out: list[Layer] = []
        for module in [*body, head]:
            if isinstance(module, nn.Linear):
                out.append((module.weight.detach().cpu().numpy(), module.bias.detach().cpu().numpy(), None))
            elif isinstance(module, policy.activation_fn) and out and out[-1][2] is None:
                out[-1] = (*out[-1][:2], activation)
            else:
                raise ValueError(
                    f"{where}: got module {module!r}; export supports Linear layers each followed by {activation}"
                )
        return out

    env: Any = model.get_env()  # any VecEnv wrapper, typed or not
    inputs: list[str] = []
    while env is not None and hasattr(env, "venv"):  # SB3's VecEnv wrappers
        if isinstance(env, PolicyInputs):  # its inputs follow those of the wrappers inside it
            inputs = [*env.policy_inputs, *inputs]
        if isinstance(env, VecNormalize):
            raise ValueError(
                "model env: VecNormalize changes the observations, which a checkpoint cannot store"
            )
        env = env.venv
    game = getattr(env, "env", None)  # what Sb3VecEnv adapts
    if isinstance(game, QwixxVectorEnv):
        variant = game.variant.name if variant is None else variant
        lucky = game.variant.lucky_rule if lucky is None else lucky
        num_players = game.num_players if num_players is None else num_players
    if variant is None or num_players is None:
        raise ValueError(
            f"variant, num_players: the model's env {env!r} is not a QwixxVectorEnv (under Sb3VecEnv); "
            "pass variant= and num_players= (and lucky= for Longo)"
        )
    return write_policy(
        path,
        policy=layers(policy.mlp_extractor.policy_net, policy.action_net, "policy net"),
        value=layers(policy.mlp_extractor.value_net, policy.value_net, "value net"),
        variant=variant,
        num_players=num_players,
        lucky=lucky,
        meta=meta,
        inputs=inputs,
    )
