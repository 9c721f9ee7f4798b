"""Every private name of RLlib that `BatchedEnvRunner` uses, in one place, checked against the
installed RLlib before a runner is built.

`BatchedEnvRunner` is RLlib's `SingleAgentEnvRunner` with its sampling loop (the private
``_sample``) done on the batch, so it leans on what that runner keeps private: how it resets
and steps its env with RLlib's failure handling, its seed, device and weights' sequence number,
and how it counts and logs what it sampled. RLlib may rename any of these in a minor release.
Here each is named once (`METHODS`, `ATTRIBUTES`, `CONFIG_KEYS`) and reached through a small
function, and `check_runner_class`, `check_runner` and `check_config` fail with an `RLlibMismatch`
naming the ray version and the missing name, instead of an ``AttributeError`` deep in sampling.
`TESTED` is the ray release these names were read from: the ``rllib`` extra's range.

Needs the ``rllib`` extra.
"""

from __future__ import annotations

import inspect
from typing import Any

import ray
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

TESTED = "2.60"
"""The ray release (major.minor) whose RLlib these names were read from and tested with."""

METHODS: dict[str, tuple[str, ...]] = {
    "_sample": ("num_timesteps", "num_episodes", "explore", "random_actions", "force_reset"),
    "_try_env_reset": ("seed", "options"),
    "_try_env_step": ("actions",),
    "_log_env_steps": ("metric", "num_steps"),
    "_increase_sampled_metrics": ("num_steps", "num_episodes_completed"),
    "_log_episode_metrics": ("length", "ret", "sec"),
}
"""`SingleAgentEnvRunner`'s private methods used, with the parameters they are called with."""

ATTRIBUTES = ("_needs_initial_reset", "_seed", "_device", "_weights_seq_no", "_metrics_num_env_steps_sampled")
"""A built `SingleAgentEnvRunner`'s private attributes used."""

CONFIG_KEYS = ("_env_to_module_connector", "_module_to_env_connector", "_learner_connector")
"""`AlgorithmConfig`'s private attributes read: where it keeps a user's custom connectors."""


class RLlibMismatch(ImportError):
    """The installed RLlib lacks a private name `BatchedEnvRunner` uses (or takes other arguments)."""


def _mismatch(what: str) -> RLlibMismatch:
    return RLlibMismatch(
        f"BatchedEnvRunner uses RLlib's private {what}, which ray {ray.__version__} does not have; it was written "
        f"against ray {TESTED}.x (the rllib extra's range: pip install \"qwixx_env[rllib]\"), or use RLlib's own "
        "runner: vector_ppo_config(..., env_runner='rllib')"
    )


def check_runner_class(cls: type = SingleAgentEnvRunner) -> None:
    """`RLlibMismatch` unless `cls` has every method of `METHODS`, taking those parameters."""
    for name, params in METHODS.items():
        method = getattr(cls, name, None)
        if not callable(method):
            raise _mismatch(f"method {cls.__name__}.{name}")
        missing = [p for p in params if p not in inspect.signature(method).parameters]
        if missing:
            raise _mismatch(f"method {cls.__name__}.{name} with the parameter(s) {missing}")


def check_runner(runner: SingleAgentEnvRunner) -> None:
    """`RLlibMismatch` unless a built runner has every attribute of `ATTRIBUTES`."""
    for name in ATTRIBUTES:
        if not hasattr(runner, name):
            raise _mismatch(f"attribute {type(runner).__name__}.{name}")


def check_config(config: AlgorithmConfig) -> None:
    """`RLlibMismatch` unless `config` keeps its custom connectors under `CONFIG_KEYS`."""
    for name in CONFIG_KEYS:
        if not hasattr(config, name):
            raise _mismatch(f"attribute {type(config).__name__}.{name}")


# --- the private names, each reached once -----------------------------------------------------------
# SLF001 is off for these lines only: reaching RLlib's private names is what this module is for.


def custom_connectors(config: AlgorithmConfig) -> dict[str, Any]:
    """The custom connector factories `config` holds: ``env_to_module``, ``module_to_env`` and
    ``learner`` (None where the config has none)."""
    check_config(config)
    return {name.strip("_").removesuffix("_connector"): getattr(config, name) for name in CONFIG_KEYS}


def reset_env(runner: SingleAgentEnvRunner, *, initial: bool) -> Any:
    """Reset the runner's env with RLlib's failure handling: with the runner's seed on its first
    reset (`initial`, and RLlib asks for one), else without a seed."""
    seed = runner._seed if initial and runner._needs_initial_reset else None  # noqa: SLF001
    return runner._try_env_reset(seed=seed, options=None)  # noqa: SLF001


def needs_initial_reset(runner: SingleAgentEnvRunner) -> bool:
    """Whether RLlib asks the runner to start its games afresh (first call, sampling by episodes)."""
    return bool(runner._needs_initial_reset)  # noqa: SLF001


def set_needs_initial_reset(runner: SingleAgentEnvRunner, value: bool) -> None:
    runner._needs_initial_reset = value  # noqa: SLF001


def step_env(runner: SingleAgentEnvRunner, actions: Any) -> Any:
    """Step the runner's env with RLlib's failure handling: the step's tuple, or RLlib's failure
    marker (a str) after it remade the env."""
    return runner._try_env_step(actions)  # noqa: SLF001


def device(runner: SingleAgentEnvRunner) -> Any:
    """The device the runner's module runs on."""
    return runner._device  # noqa: SLF001


def weights_seq_no(runner: SingleAgentEnvRunner) -> int:
    """The sequence number of the weights the runner samples with (stamped on its episodes)."""
    return runner._weights_seq_no  # noqa: SLF001


def log_sampled(runner: SingleAgentEnvRunner, steps: int, episodes_done: int) -> None:
    """Count `steps` decisions and `episodes_done` finished episodes as RLlib's runner does."""
    if steps:
        runner._log_env_steps(metric=runner._metrics_num_env_steps_sampled, num_steps=steps)  # noqa: SLF001
    runner._increase_sampled_metrics(steps, episodes_done)  # noqa: SLF001


def log_episode(runner: SingleAgentEnvRunner, length: int, ret: float, seconds: float) -> None:
    """Log a finished episode's length, return and duration as RLlib's runner does."""
    runner._log_episode_metrics(length, ret, seconds)  # noqa: SLF001
