"""Ray RLlib: the batched engine as RLlib's vector env, Qwixx as a `MultiAgentEnv`, an action-masking PPO module.

>>> from qwixx_env.integrations.rllib import ppo_config, vector_ppo_config
>>> config = vector_ppo_config(num_players=2, opponents={"greedy": 1, "heuristic": 1})
>>> config = ppo_config(num_players=2)                 # multi-agent self-play: every seat plays "shared"
>>> config = ppo_config(num_players=3, opponents={"self": 2, "heuristic": 1, "ppo-classic-3p": 1})
>>> algo = config.build_algo()
>>> algo.train()
>>> export_module(algo.get_module("shared"), "runs/rllib/best", variant="classic", num_players=2, meta={})

- `RLlibVectorEnv` and `vector_ppo_config`: the fast single-agent path. Each env runner steps
  a `QwixxVectorEnv` of ``num_envs_per_env_runner`` games (next-step autoreset, as RLlib's
  runner records episodes) as a native Gymnasium vector env: the learner's seat in every game
  against opponents played inside the engine (scripted bots in the compiled kernels, frozen
  snapshots of the learner as one numpy forward pass per batch), with the observation, mask
  and reward contract of the SB3 path. Every env runner is a `BatchedEnvRunner`
  (`qwixx_env.integrations.rllib_runner`: all of its games per step as one batch).
  `RLlibVectorEnv.set_league` swaps the opponent pool in a running env runner (the self-play
  league of `qwixx_env.training.rllib` broadcasts its snapshots with it).
- `QwixxMultiAgentEnv`: the AEC env (`qwixx_v0.raw_env`) seen as RLlib's turn-based
  `MultiAgentEnv`: each step exactly one agent, the one to decide, gets an observation; the
  observation is the dict RLlib's action-masking modules read, ``{"observations": float32
  vector, "action_mask": float32 0/1 vector}``. Rewards are those of the AEC env; at the end
  every agent gets its final observation and reward.
- `MaskedPPOModule`: RLlib's default PPO module (separate actor and critic MLPs) reading
  ``observations``, with the logits of the actions ``action_mask`` forbids set to the lowest
  float, so they get probability zero in exploration, inference and training.
- `BotModule`: a bot of `qwixx_env.bots` (scripted, or a pretrained checkpoint, by any name
  the arena takes) as an RLModule that returns actions; it is never trained.
- `SeatMapping`: the policy mapping: one seat per game plays the learned module, every other
  seat a module drawn by weight (the learned module too: self-play).
- `ppo_config`: a `PPOConfig` with all of the above; `export_module`: the learned module's
  networks to the project's numpy checkpoint format (`qwixx_env.nets.write_policy`), so that
  `qwixx_env.bots.load` and the arena play it like any PPO export.

Needs the ``rllib`` extra (``pip install "qwixx_env[rllib]"``: ray, with torch); importing
`qwixx_env` never imports this module. `docs/integrations.md` shows a local and a cluster run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorWrapper
from gymnasium.vector.utils import batch_space
from ray.rllib.algorithms.ppo import PPO, PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.connectors.learner import LearnerConnectorPipeline
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env
from torch import nn

from qwixx_env.bots import make_bot
from qwixx_env.core.checks import check_choice, check_int
from qwixx_env.core.options import TableOptions, table_from
from qwixx_env.core.rewards import check_illegal_reward
from qwixx_env.core.variant import get_variant
from qwixx_env.envs.parallel import ParallelQwixx
from qwixx_env.envs.qwixx_v0 import raw_env
from qwixx_env.envs.vector import QwixxVectorEnv
from qwixx_env.integrations.rllib_learner import BatchedAdvantages
from qwixx_env.integrations.rllib_runner import (
    BatchedEnvRunner,
    DealingMultiAgentEnvRunner,
    LeagueEnvRunner,
    as_numpy,
    dice_streams,
)
from qwixx_env.nets import Layer, write_policy
from qwixx_env.policies import Policy

ENV_OPTIONS = ("table", *TableOptions.names(), "illegal_reward")
"""The keys of `QwixxMultiAgentEnv`'s config: the table (``table``, a `TableOptions`, or its
options by name) and ``illegal_reward``, as `qwixx_v0.env` takes them (but ``render_mode``)."""

LEARNER = "shared"
"""The module id of the learned policy that every self-play seat shares."""

SELF = "self"
"""In `SeatMapping`'s and `ppo_config`'s opponent weights: a seat played by the learned module."""

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}
"""The hidden-layer activations a module may use and still export (what `NumpyPolicy` runs)."""


class QwixxMultiAgentEnv(MultiAgentEnv):
    """Qwixx for RLlib: turn-based, one deciding agent per step (see the module docstring).

    `config` (RLlib's ``env_config``) takes the options of `qwixx_v0.env` by name
    (`ENV_OPTIONS`: ``table``, a `TableOptions`, or the table's options, and ``illegal_reward``).
    Agents are ``player_0`` ... ``player_{n-1}``. ``reset(seed=...)`` reproduces a game as the
    AEC env does.

    An action dict must hold exactly the deciding agent's action (else `ValueError`, the game
    untouched). An action inside the action space that the mask forbids ends the game, as
    PettingZoo's classic games do (and RLlib's env check, which samples unmasked actions,
    expects), exactly as `qwixx_v0.env()` ends it: the offender's rewards for the game sum to
    `illegal_reward` (None, the default: worse than any legal ending in the reward mode,
    `core.rewards.illegal_return`, e.g. -2 with ``"win"``), 0 for the others. A masking module
    never takes one.
    """

    # What this env sets in __init__ (MultiAgentEnv declares them as Optional or for any agent id).
    possible_agents: list[str]
    observation_spaces: dict[str, spaces.Space]
    action_spaces: dict[str, spaces.Space]

    def __init__(self, config: Mapping[str, Any] | None = None):
        super().__init__()
        options = dict(config or {})
        unknown = sorted(set(options) - set(ENV_OPTIONS))
        if unknown:
            raise ValueError(f"env_config: got unknown key(s) {unknown}; accepted: {list(ENV_OPTIONS)}")
        illegal_reward = options.pop("illegal_reward", None)
        self.game = raw_env(**options)  # the table (`table_from`): every option checked, errors that name it
        self.illegal_reward = check_illegal_reward(illegal_reward, self.game.reward_mode, self.game.variant)
        self.table, self.variant = self.game.table, self.game.variant  # options, and the Variant played
        self.num_players = self.table.num_players
        self.possible_agents = list(self.game.possible_agents)
        self.agents = list(self.possible_agents)
        layout, num_actions = self.game.layout, self.game.num_actions
        observation = spaces.Dict({
            "observations": spaces.Box(layout.low, layout.high, dtype=np.float32),
            "action_mask": spaces.Box(0.0, 1.0, (num_actions,), np.float32),
        })
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation)
        self.action_spaces = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        self._mask = np.zeros(num_actions, np.float32)  # the deciding agent's mask, as handed out

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        self.game.reset(seed=seed, options=options)
        agent = self.game.agent_selection
        return {agent: self._observe(agent)}, {}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not getattr(self.game, "agents", None) or self.game.terminations[self.game.agent_selection]:
            raise ValueError("step: the game is over (or not started); call reset() first")
        agent = self.game.agent_selection
        if set(action_dict) != {agent}:
            raise ValueError(f"action_dict: got actions for {sorted(action_dict)}; expected exactly one, for "
                             f"{agent!r}, the agent to decide")
        action = self._in_space(agent, action_dict[agent])
        if not self._mask[action]:
            return self._illegal(agent)
        self.game.step(action)
        rewards = {a: float(r) for a, r in self.game.rewards.items()}
        nxt = self.game.agent_selection
        if self.game.terminations[nxt]:
            return self._final(rewards)
        return {nxt: self._observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def render(self) -> str:
        """The game as text (`qwixx_v0`'s ansi rendering)."""
        text = self.game.render()
        if text is None:  # raw_env returns None only in render_mode="human", which this env never sets
            raise RuntimeError(f"render: the game was built with render_mode={self.game.render_mode!r}")
        return text

    def _in_space(self, agent: str, action: Any) -> int:
        """`action` as an int, or a `ValueError` when it is not an action of the action space."""
        if isinstance(action, (bool, np.bool_)) or not self.action_spaces[agent].contains(action):
            raise ValueError(f"{agent}: action {action!r} is outside the action space 0..{self.game.num_actions - 1}")
        return int(action)

    def _illegal(self, agent: str) -> tuple[dict, dict, dict, dict, dict]:
        """The game ends on `agent`'s illegal action as `qwixx_v0.env()` ends it: its rewards for
        the game sum to `illegal_reward` (this step pays the rest), 0 for the others."""
        self.game.end_on_illegal(agent, self.illegal_reward)
        return self._final({a: float(r) for a, r in self.game.rewards.items()})

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        seen = self.game.observe(agent)
        mask = seen["action_mask"].astype(np.float32)
        if agent == self.game.agent_selection:
            self._mask = mask
        return {"observations": seen["observation"], "action_mask": mask}

    def _final(self, rewards: dict[str, float]) -> tuple[dict, dict, dict, dict, dict]:
        """Every agent's last observation (no legal action) and reward; the episode ends."""
        observations = {}
        for a in self.possible_agents:
            seen = self.game.observe(a)
            observations[a] = {"observations": seen["observation"],
                               "action_mask": np.zeros(self.game.num_actions, np.float32)}
        self._mask = np.zeros(self.game.num_actions, np.float32)
        terminated = {**dict.fromkeys(self.possible_agents, True), "__all__": True}
        return observations, rewards, terminated, {"__all__": False}, {}


class QwixxParallelMultiAgentEnv(QwixxMultiAgentEnv):
    """The same game for RLlib over the Parallel view (`qwixx_env.envs.parallel.ParallelQwixx`):
    at each roll every seat gets an observation and all white choices come in one step; a
    Longo lucky tie-break and the colour action are steps of one agent. A game takes fewer env
    steps than in `QwixxMultiAgentEnv`, so RLlib, whose cost is mostly per env step, samples
    more decisions per second (``benchmarks/rllib_speed.py``). Config, observations, rewards
    and the handling of bad and illegal actions are `QwixxMultiAgentEnv`'s; an action dict must
    hold exactly the acting agents' actions."""

    def __init__(self, config: Mapping[str, Any] | None = None):
        super().__init__(config)
        self.view = ParallelQwixx(self.game)  # drives the AEC env made above, decision by decision
        self._masks: dict[str, np.ndarray] = {}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        observations, _ = self.view.reset(seed=seed, options=options)
        return self._handed(observations), {}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        acting = self.view.acting_agents
        if not acting:
            raise ValueError("step: the game is over (or not started); call reset() first")
        if set(action_dict) != set(acting):
            raise ValueError(f"action_dict: got actions for {sorted(action_dict)}; expected one for each acting "
                             f"agent, {acting}")
        actions = {agent: self._in_space(agent, action_dict[agent]) for agent in acting}
        for agent, action in actions.items():
            if not self._masks[agent][action]:
                return self._illegal(agent)
        observations, rewards, terminations, _, _ = self.view.step(actions)
        rewards = {a: float(r) for a, r in rewards.items()}
        if any(terminations.values()):
            return self._final(rewards)
        return self._handed(observations), rewards, {"__all__": False}, {"__all__": False}, {}

    def _handed(self, observations: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, np.ndarray]]:
        """The acting agents' observations, in RLlib's masking form; their masks kept for the step."""
        handed = {}
        for agent in self.view.acting_agents:
            mask = observations[agent]["action_mask"].astype(np.float32)
            handed[agent] = {"observations": observations[agent]["observation"], "action_mask": mask}
        self._masks = {agent: seen["action_mask"] for agent, seen in handed.items()}
        return handed


VIEWS = {"aec": QwixxMultiAgentEnv, "parallel": QwixxParallelMultiAgentEnv}
"""`ppo_config`'s `view`: the MultiAgentEnv class RLlib steps."""

VECTOR_ENV_OPTIONS = ("table", *TableOptions.names(), "opponents", "learner_seat", "greedy_max_skip",
                      "illegal_reward", "num_envs")
"""The keys of `make_vector_env`'s config: `QwixxVectorEnv`'s options by name, and ``num_envs``
(RLlib adds it: ``num_envs_per_env_runner``)."""


class RLlibVectorEnv(VectorWrapper):
    """A `QwixxVectorEnv` as RLlib's env runners step it: next-step autoreset, and each
    observation in the masking module's form, ``{"observations": (N, D) float32,
    "action_mask": (N, A) float32}`` (what `QwixxMultiAgentEnv` hands out). Rewards,
    terminations and the opponents are the wrapped env's.

    An int seed gives the games streams of their own (`rllib_runner.dice_streams`), not
    ``seed + game``; RLlib's env runners of this project pass one seed per game
    (`rllib_runner.fresh_dice`: distinct for every runner, seed, restart and resume)."""

    env: QwixxVectorEnv  # what __init__ wraps (VectorWrapper declares any VectorEnv)

    def __init__(self, env: QwixxVectorEnv):
        if env.autoreset_mode != AutoresetMode.NEXT_STEP:
            raise ValueError(f"env: got autoreset_mode {env.autoreset_mode.value!r}; RLlib's env runners record "
                             "episodes as NextStep resets them (QwixxVectorEnv(..., autoreset_mode='NextStep'))")
        super().__init__(env)
        inner = env.single_observation_space["observation"]
        self.single_observation_space = spaces.Dict({
            "observations": inner,
            "action_mask": spaces.Box(0.0, 1.0, (env.single_action_space.n,), np.float32),
        })
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)
        self._snapshots: dict[str, Policy] = {}

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seed = dice_streams(check_int("seed", seed, minimum=0), self.env.num_envs)
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._handed(obs), infos

    def step(self, actions: Any):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        return self._handed(obs), rewards, terminated, truncated, infos

    def set_league(self, weights: Mapping[str, float], snapshots: Mapping[str, Policy]) -> None:
        """Play the opponent pool `weights` (name -> weight): bot specs, and the names of
        `snapshots` (name -> a frozen policy, e.g. a `NumpyPolicy`). A snapshot already known
        by its name keeps its policy object, so the seats that play it keep it
        (`QwixxVectorEnv.set_opponents`); one no longer named is dropped."""
        self._snapshots = {name: self._snapshots.get(name, policy) for name, policy in snapshots.items()}
        self.env.set_opponents({self._snapshots.get(name, name): weight for name, weight in weights.items()})

    @staticmethod
    def _handed(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"observations": obs["observation"], "action_mask": obs["action_mask"].astype(np.float32)}


def vector_env_of(runner: Any) -> RLlibVectorEnv | None:
    """An env runner's `RLlibVectorEnv` (under RLlib's wrappers), or None: a runner without
    an env (the driver's, where remote runners sample) or of another env."""
    env = getattr(runner, "env", None)
    while env is not None and not isinstance(env, RLlibVectorEnv):
        env = getattr(env, "env", None)  # RLlib wraps the vector env (DictInfoToList)
    return env


def set_league(runner: Any, weights: Mapping[str, float], snapshots: Mapping[str, Policy]) -> None:
    """On an env runner (`foreach_env_runner`): a `LeagueEnvRunner` keeps the pool in its state
    and plays it (the driver's runner too, which has no env: restarted runners and checkpoints
    take the pool from it); another runner's `RLlibVectorEnv` plays it (none: nothing to do)."""
    if isinstance(runner, LeagueEnvRunner):
        runner.set_league(weights, snapshots)
        return
    env = vector_env_of(runner)
    if env is not None:
        env.set_league(weights, snapshots)


LEARNER_PIPELINES = ("batched", "rllib")
"""`vector_ppo_config`'s `learner_pipeline`: `BatchedAdvantages`, or RLlib's default pipeline."""


class VectorPPOConfig(PPOConfig):
    """RLlib's `PPOConfig` with one setting more, `learner_pipeline` (`LEARNER_PIPELINES`):
    ``"batched"`` builds the learner's connector pipeline as `BatchedAdvantages` alone (with
    this config's ``gamma`` and ``lambda_``, as they are when the learner is built), in place of
    RLlib's per-episode pieces; ``"rllib"`` builds RLlib's. `vector_ppo_config` makes one."""

    def __init__(self, algo_class: Any = None):
        super().__init__(algo_class=algo_class)
        self.learner_pipeline = "batched"

    def build_learner_connector(self, input_observation_space: Any, input_action_space: Any,
                                device: Any = None) -> Any:
        if self.learner_pipeline == "rllib":
            return super().build_learner_connector(input_observation_space, input_action_space, device)
        gamma, lambda_ = self.gamma, self.lambda_
        assert gamma is not None and lambda_ is not None, "a PPOConfig has gamma and lambda_"
        connectors: list[ConnectorV2] = [BatchedAdvantages(gamma=gamma, lambda_=lambda_)]
        return LearnerConnectorPipeline(connectors=connectors, input_observation_space=input_observation_space,
                                        input_action_space=input_action_space)


class LeaguePPO(PPO):
    """RLlib's PPO, handing the self-play league on when it is restored from a checkpoint
    (``Algorithm.from_checkpoint``, ``restore_from_path``): the checkpoint holds the driver's
    env runner's state, the pool with it (`LeagueEnvRunner`), and RLlib syncs only its
    connectors to the remote runners, so the pool goes to each of them here. It registers the
    vector env (`VECTOR_ENV`) when it is set up, so a checkpoint restores in a fresh process.
    `vector_ppo_config` builds it."""

    def setup(self, config: Any) -> None:
        # the vector env's registration: a Ray started anew (a new process restoring a checkpoint
        # with Algorithm.from_checkpoint) knows no env registered in another
        register_env(VECTOR_ENV, make_vector_env)
        super().setup(config)

    def restore_from_path(self, path: Any, *args: Any, **kwargs: Any) -> None:
        super().restore_from_path(path, *args, **kwargs)
        league, group = getattr(self.env_runner, "league", None), self.env_runner_group
        if league is not None and group is not None and group.num_remote_env_runners() > 0:
            weights, snapshots = league
            group.foreach_env_runner(lambda runner: set_league(runner, weights, snapshots), local_env_runner=False)


def make_vector_env(config: Mapping[str, Any]) -> RLlibVectorEnv:
    """RLlib's env creator for the vector path, registered as `VECTOR_ENV` (used as
    ``config.environment(VECTOR_ENV, ...)`` with ``gym_env_vectorize_mode="vector_entry_point"``):
    a `RLlibVectorEnv` of ``config["num_envs"]`` games, the other keys `QwixxVectorEnv`'s options
    (`VECTOR_ENV_OPTIONS`)."""
    options = dict(config)
    unknown = sorted(set(options) - set(VECTOR_ENV_OPTIONS))
    if unknown:
        raise ValueError(f"env_config: got unknown key(s) {unknown}; accepted: {list(VECTOR_ENV_OPTIONS)}")
    num_envs = options.pop("num_envs", 1)
    return RLlibVectorEnv(QwixxVectorEnv(num_envs, autoreset_mode=AutoresetMode.NEXT_STEP, **options))


ENV_RUNNERS = {"batched": BatchedEnvRunner, "rllib": LeagueEnvRunner}
"""`vector_ppo_config`'s `env_runner`: the env runner class every runner of the vector path is."""

VECTOR_ENV = "qwixx-vector-v0"
"""`make_vector_env`'s name in RLlib's env registry (RLlib takes a class or a registered name;
`vector_ppo_config` registers it, again each time: a Ray shut down and started anew forgets it)."""


def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """(the batch with the bare observation vectors as its observations, the action masks); the
    caller's batch is not changed."""
    observation = batch[Columns.OBS]
    return {**batch, Columns.OBS: observation["observations"]}, observation["action_mask"]


def _masked(output: dict[str, Any], mask: Any) -> dict[str, Any]:
    """`output` with the forbidden actions' logits at the lowest float: probability zero."""
    logits = output[Columns.ACTION_DIST_INPUTS]
    output[Columns.ACTION_DIST_INPUTS] = torch.where(mask > 0, logits, torch.full_like(logits, FLOAT_MIN))
    return output


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO module over the ``observations`` of a Dict observation space,
    whose ``action_mask`` zeroes the probability of forbidden actions in every forward pass
    (exploration, inference, training). The networks are built for the ``observations``
    space alone, so `export_module` can write them in the numpy checkpoint format."""

    def __init__(self, *, observation_space: spaces.Space | None = None, **kwargs: Any):
        if not isinstance(observation_space, spaces.Dict) or set(observation_space.spaces) != {
            "observations", "action_mask"
        }:
            raise ValueError(
                f"observation_space: got {observation_space!r}; MaskedPPOModule expects a Dict of 'observations' "
                "and 'action_mask' (QwixxMultiAgentEnv's)"
            )
        super().__init__(observation_space=observation_space["observations"], **kwargs)
        self.observation_space = observation_space  # what the env runners and connectors see

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = _split(batch)
        return _masked(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = _split(batch)
        return _masked(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if isinstance(batch[Columns.OBS], Mapping):
            batch, _ = _split(batch)
        return super().compute_values(batch, embeddings)


class BotModule(RLModule):
    """A frozen opponent: a `qwixx_env.bots` bot acting on each observation of the batch.

    `model_config`: ``bot`` (any name the arena takes: ``"heuristic"``, ``"greedy:max_skip=2"``,
    ``"ppo-classic-2p"``, ...), ``variant``, ``num_players``, ``lucky`` and ``seed``. It returns
    actions directly; keep it out of ``policies_to_train`` (`ppo_config` does)."""

    @property
    def bot_config(self) -> dict[str, Any]:
        """`model_config` as `ppo_config` builds it: a dict (RLlib types it as any model config)."""
        return cast(dict[str, Any], self.model_config)

    def setup(self) -> None:
        cfg = self.bot_config
        table = TableOptions(variant=cfg.get("variant", "classic"), num_players=cfg.get("num_players", 2),
                             lucky=cfg.get("lucky") or "bonus")
        self.bot = make_bot(cfg["bot"], table, cfg.get("seed", 0))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        observation = batch[Columns.OBS]
        vectors = as_numpy(observation["observations"]).astype(np.float32)
        masks = as_numpy(observation["action_mask"]).astype(np.int8)
        actions = [self.bot.act({"observation": v, "action_mask": m}) for v, m in zip(vectors, masks)]
        return {Columns.ACTIONS: np.array(actions, np.int64)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"BotModule ({self.bot_config.get('bot')}) is frozen: leave it out of "
                                  "policies_to_train")


def bot_module_id(name: str) -> str:
    """The module id of bot `name` in the policy mapping: ``bot_`` and the name, other characters
    than letters, digits, ``_ . -`` as ``_`` (module ids name checkpoint folders)."""
    return "bot_" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class SeatMapping:
    """RLlib's ``policy_mapping_fn``: which module plays each agent of an episode.

    One seat of each game (drawn) plays `LEARNER`; every other seat is drawn from `weights`
    (module id -> weight, `LEARNER` among them for self-play). The draws depend on the
    episode's id only, so every agent of an episode is mapped consistently, on any machine.
    """

    def __init__(self, num_players: int, weights: Mapping[str, float]):
        self.num_players = num_players
        self.modules = list(weights)
        self.weights = [float(w) for w in weights.values()]

    def seats(self, episode_id: str) -> list[str]:
        """The module of every seat in the episode `episode_id`."""
        draw = random.Random(int.from_bytes(hashlib.sha256(episode_id.encode()).digest()[:8], "little"))
        learner = draw.randrange(self.num_players)
        others = draw.choices(self.modules, self.weights, k=self.num_players)
        return [LEARNER if seat == learner else others[seat] for seat in range(self.num_players)]

    def __call__(self, agent_id: Any, episode: Any, **kwargs: Any) -> str:
        seat = int(str(agent_id).rsplit("_", 1)[1])  # RLlib passes our env's agent ids, player_<seat>
        return self.seats(str(getattr(episode, "id_", episode)))[seat]


def ppo_config(
    *,
    table: TableOptions | None = None,
    opponents: Mapping[str, float] | None = None,
    hidden: tuple[int, ...] = (256, 256),
    activation: str = "tanh",
    env_options: Mapping[str, Any] | None = None,
    view: str = "aec",
    **options: Any,
) -> PPOConfig:
    """A `PPOConfig` (RLlib's new API stack) for Qwixx self-play with the masking module.

    The table is `table` (a `TableOptions`) or its keyword options (``num_players=2``,
    ``variant``, ``lucky``, ``reward``, ...; `core.options.table_from`). `opponents` weighs who
    plays the seats other than the learner's: `SELF` (``"self"``: the learned module) and bot
    names (`BotModule`). Default: ``{"self": 1}``, pure self-play. `hidden` and `activation`
    shape the actor and the critic (separate MLPs, as the numpy export needs). `env_options`
    are more `QwixxMultiAgentEnv` options (``illegal_reward``; a table option there joins the
    others). `view`: ``"aec"``
    (`QwixxMultiAgentEnv`, one decision per env step) or ``"parallel"``
    (`QwixxParallelMultiAgentEnv`, every seat's white choice in one env step). Set the rest
    (``.env_runners``, ``.training``, ``.learners``, ``.debugging(seed=...)``) on the result.
    """
    check_choice("view", view, tuple(VIEWS))
    env_options = dict(env_options or {})
    table = table_from(table, **options, **{k: env_options.pop(k) for k in TableOptions.names() if k in env_options})
    env_config = {"table": table, **env_options}
    probe = QwixxMultiAgentEnv(env_config)  # checks the env's options before anything is built
    variant, lucky = table.variant, table.lucky  # the table as the opponent bots are made for it
    opponents = dict(opponents or {SELF: 1.0})
    if table.num_players == 1 and set(opponents) != {SELF}:
        raise ValueError(f"opponents: got {sorted(opponents)}; a solo game has no opponents (give {{'self': 1}})")
    specs = {LEARNER: masked_module_spec(hidden, activation)}
    weights = {}
    for name, weight in opponents.items():
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not weight > 0:
            raise ValueError(f"opponents.{name}: got {weight!r}; expected a weight > 0")
        if name == SELF:
            weights[LEARNER] = weight
            continue
        bot = {"bot": name, "variant": variant, "num_players": probe.num_players, "lucky": lucky, "seed": 0}
        try:
            make_bot(name, TableOptions(variant=variant, num_players=probe.num_players, lucky=lucky), 0)
        except (TypeError, ValueError) as err:
            raise ValueError(f"opponents.{name}: {err}") from None
        specs[bot_module_id(name)] = RLModuleSpec(module_class=BotModule, model_config=bot)
        weights[bot_module_id(name)] = weight
    return (
        PPOConfig()
        .environment(VIEWS[view], env_config=env_config)
        .env_runners(env_runner_cls=DealingMultiAgentEnvRunner)  # dice of their own for every game
        .multi_agent(policies=set(specs), policy_mapping_fn=SeatMapping(probe.num_players, weights),
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
    )


def masked_module_spec(hidden: tuple[int, ...] = (256, 256), activation: str = "tanh") -> RLModuleSpec:
    """The learned module's spec: a `MaskedPPOModule` with separate actor and critic MLPs of
    `hidden` layers and `activation` (what `export_module` writes)."""
    check_choice("activation", activation, tuple(ACTIVATIONS))
    model = dataclasses.asdict(DefaultModelConfig(fcnet_hiddens=list(hidden), fcnet_activation=activation,
                                                  head_fcnet_hiddens=[], vf_share_layers=False))
    return RLModuleSpec(module_class=MaskedPPOModule, model_config=model)


def vector_ppo_config(
    *,
    table: TableOptions | None = None,
    opponents: Mapping[str, float] | None = None,
    hidden: tuple[int, ...] = (256, 256),
    activation: str = "tanh",
    env_options: Mapping[str, Any] | None = None,
    env_runner: str = "batched",
    learner_pipeline: str = "batched",
    **options: Any,
) -> VectorPPOConfig:
    """A `PPOConfig` whose env runners each step a `QwixxVectorEnv` (`make_vector_env`; as many
    games as ``num_envs_per_env_runner``): one learned seat per game (drawn per game), the
    others played inside the engine by `opponents` (bot spec -> weight, as the vector env and
    the SB3 configs take them; default ``{"random": 1}``), the masking module learning.

    The table is `table` or its keyword options (`core.options.table_from`); `env_options` are
    more `QwixxVectorEnv` options (``illegal_reward``, ``learner_seat``, ``greedy_max_skip``).
    `env_runner`: ``"batched"`` (the default: `BatchedEnvRunner`, which samples all of a
    runner's games as one batch per step) or ``"rllib"`` (`LeagueEnvRunner`: RLlib's own
    `SingleAgentEnvRunner`'s sampling, game by game: slower, but runs custom connectors and
    per-episode callbacks). Both keep the league in their state (`LeagueEnvRunner`), and the
    algorithm is a `LeaguePPO`. `learner_pipeline`: ``"batched"`` (the default:
    `BatchedAdvantages`, the learner's batch and advantages built with array operations) or
    ``"rllib"`` (RLlib's default learner connectors, episode by episode).
    The learned module is RLlib's single-agent default module id (`DEFAULT_MODULE_ID`); the
    self-play league swaps the pool in running env runners (`RLlibVectorEnv.set_league`). Set
    the rest (``.env_runners``, ``.training``, ``.learners``, ``.debugging``) on the result.
    """
    check_choice("env_runner", env_runner, tuple(ENV_RUNNERS))
    check_choice("learner_pipeline", learner_pipeline, LEARNER_PIPELINES)
    env_options = dict(env_options or {})
    table = table_from(table, **options, **{k: env_options.pop(k) for k in TableOptions.names() if k in env_options})
    env_config = {"table": table, "opponents": dict(opponents or {"random": 1.0}), **env_options}
    make_vector_env({**env_config, "num_envs": 1})  # checks the options and the pool before anything is built
    register_env(VECTOR_ENV, make_vector_env)
    config = VectorPPOConfig(algo_class=LeaguePPO)
    config.learner_pipeline = learner_pipeline
    return (
        config
        # RLlib's own pieces stay out of the batched pipeline (PPO's learner adds two more when this is True)
        .learners(add_default_connectors_to_learner_pipeline=learner_pipeline == "rllib")
        .environment(VECTOR_ENV, env_config=env_config)
        .env_runners(gym_env_vectorize_mode="vector_entry_point", env_runner_cls=ENV_RUNNERS[env_runner])
        .rl_module(rl_module_spec=masked_module_spec(hidden, activation))
    )


# --- export to the numpy checkpoint format ---------------------------------------------------------


def _layers(parts: list[nn.Module], where: str) -> list[Layer]:
    """The Linear layers of `parts`, in order, each with the activation that follows it."""
    out: list[Layer] = []
    names = {cls: name for name, cls in ACTIVATIONS.items()}
    for part in parts:
        for module in part.modules():
            if list(module.children()):
                continue  # a container: its leaves come next
            if isinstance(module, nn.Linear):
                out.append((np.array(as_numpy(module.weight)), np.array(as_numpy(module.bias)), None))  # copies
            elif type(module) in names and out and out[-1][2] is None:
                out[-1] = (*out[-1][:2], names[type(module)])
            elif not isinstance(module, nn.Identity):
                raise ValueError(f"{where}: got module {module!r}; export supports Linear layers, each followed by "
                                 f"one of {sorted(ACTIVATIONS)}")
    if not out or out[-1][2] is not None:
        raise ValueError(f"{where}: expected Linear layers ending in a Linear output layer")
    return out


def export_module(
    module: RLModule,
    path: str | os.PathLike[str],
    *,
    variant: str,
    num_players: int,
    lucky: str | None = None,
    meta: dict[str, Any],
) -> Path:
    """Write a `MaskedPPOModule`'s actor and critic as a policy checkpoint pair (`write_policy`)
    and return the JSON's path: `qwixx_env.bots.load` then plays it, its deterministic action
    being the module's inference action. `lucky` is Longo's rule; `meta` JSON-ready data."""
    policy, value = module_layers(module)
    return write_policy(path, policy=policy, value=value, variant=variant, num_players=num_players,
                        lucky=lucky if get_variant(variant).lucky_count else None, meta=meta)


def learned_module(algo: Any, module_id: str) -> MaskedPPOModule:
    """The learner's current `MaskedPPOModule` `module_id` (actor and critic, as the learner
    group holds it, wherever it runs), rebuilt on this process: what `export_module` writes
    and the league's snapshots copy. (An env runner's module is built for inference only and
    lacks the critic.)"""
    weights = algo.learner_group.get_weights([module_id])[module_id]
    shape = algo.get_module(module_id)  # for its spaces and model config
    module = MaskedPPOModule(observation_space=shape.observation_space, action_space=shape.action_space,
                             model_config=shape.model_config, inference_only=False)
    module.set_state(weights)
    return module


def module_layers(module: RLModule) -> tuple[list[Layer], list[Layer]]:
    """A `MaskedPPOModule`'s actor and critic as numpy layers (copies: later training does not
    change them), as `export_module` writes them."""
    ppo = cast(DefaultPPOTorchRLModule, module)  # algo.get_module is typed as any RLModule
    encoder = ppo.encoder
    if hasattr(encoder, "actor_encoder"):
        actor, critic = [encoder.actor_encoder, ppo.pi], [encoder.critic_encoder, ppo.vf]
    else:  # vf_share_layers: one encoder under both heads
        actor, critic = [encoder, ppo.pi], [encoder, ppo.vf]
    return _layers(actor, "policy"), _layers(critic, "value")
