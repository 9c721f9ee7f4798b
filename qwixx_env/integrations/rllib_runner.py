"""`BatchedEnvRunner`: an RLlib env runner that samples a whole vector env of games per step, as arrays.

RLlib's `SingleAgentEnvRunner` spends most of its time per game, not per batch: every step
of a vector env of N games goes through its connector pipelines game by game and adds each
game's step to an episode object one item at a time, so a runner samples about as fast
whether the games come from a compiled engine or from Python. `BatchedEnvRunner` is that
runner with the sampling loop done on the batch: one module forward pass and one action draw
for all N games, the step's arrays kept as they come, and the episodes (RLlib's
`SingleAgentEpisode`, numpy'ized, as the stock runner returns them) cut out of the arrays
at the end of `sample`. What the learner gets is what the stock runner gives it: one
episode or episode chunk per game and call, observations, actions, rewards,
``action_dist_inputs``, ``action_logp`` and ``weights_seq_no``; a game still under way at
the end of a call goes on in the next call's chunk, under the same episode id.

It runs any Gymnasium vector env with a discrete action space and next-step autoreset
(what RLlib's runners expect, `gymnasium.vector.AutoresetMode.NEXT_STEP`): on the vector
path (`qwixx_env.integrations.rllib.vector_ppo_config`), the `RLlibVectorEnv` over the
batched engine. State, weights, metrics, checkpoints and `foreach_env_runner` are the stock
runner's. What it leaves out, and refuses where a config asks for it: custom env-to-module
and module-to-env connectors, and stateful (recurrent) modules. RLlib's per-episode callbacks
(``on_episode_start``/``step``/``end``) are not called; ``on_sample_end`` is.

>>> config = vector_ppo_config(num_players=2)          # uses BatchedEnvRunner
>>> config.env_runners(env_runner_cls=BatchedEnvRunner)  # the same, on any PPOConfig of such an env

Needs the ``rllib`` extra.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO
from ray.rllib.utils.torch_utils import FLOAT_MIN

from qwixx_env.integrations import rllib_private as private

REWARD_SPACE = spaces.Box(float("-inf"), float("inf"), (), np.float32)
"""The space of one reward in an episode (what `SingleAgentEpisode` gives its rewards)."""


LEAGUE_STATE = "qwixx_league"
"""The key of the opponent pool in a `LeagueEnvRunner`'s state (`get_state`, `set_state`)."""


def dice_streams(seed: int, num_games: int, key: tuple[int, ...] = ()) -> list[int]:
    """One seed per game: ``numpy.random.SeedSequence(seed, spawn_key=key)``'s first `num_games`
    64-bit words. Another seed or another key gives unrelated streams (not the same ones shifted,
    as ``seed + game`` gives: seed 1's game i would roll seed 0's game i + 1)."""
    return [int(word) for word in np.random.SeedSequence(seed, spawn_key=key).generate_state(num_games, np.uint64)]


def runner_dice_seeds(seed: int, worker_index: int, steps_sampled: int, num_games: int, *,
                      evaluation: bool = False) -> list[int]:
    """The seeds of the games an env runner starts (`dice_streams`): keyed by the run's `seed`,
    the runner's index, whether it evaluates, and `steps_sampled`, the env steps the run had
    sampled when the runner starts them: 0 in a new run; a restarted runner (synced to the run's
    count before it samples) and every runner of a resumed run (the checkpoint's count) start
    later, so they deal fresh dice, not the run's first ones again, and the same ones each time
    the run is resumed from that checkpoint."""
    return dice_streams(seed, num_games, (worker_index, int(evaluation), steps_sampled))


def fresh_dice(runner: Any, seed: Any) -> list[int] | None:
    """The seeds a runner's env reset with `seed` (RLlib's: the config's seed plus the runner's
    index, which runners and adjacent seeds share) gets instead: `runner_dice_seeds`, one per
    game; None, unseeded, where RLlib passes no seed."""
    if seed is None or runner.config.seed is None:
        return None
    return runner_dice_seeds(int(runner.config.seed), int(runner.worker_index or 0),
                             int(runner.num_env_steps_sampled_lifetime), int(runner.num_envs),
                             evaluation=bool(runner.config.in_evaluation))


class DealingMultiAgentEnvRunner(MultiAgentEnvRunner):
    """RLlib's `MultiAgentEnvRunner`, seeding its games from `fresh_dice` (RLlib seeds sub-env i
    of runner w with the config's seed plus w plus i, streams that other runners, other seeds, a
    restarted runner and a resumed run deal again). `qwixx_env.integrations.rllib.ppo_config`
    uses it."""

    def _try_env_reset(self, *, seed: Any = None, options: dict | None = None) -> Any:
        seeds: Any = fresh_dice(self, seed)  # a list: the vector env takes one per game (RLlib types an int)
        return super()._try_env_reset(seed=seeds, options=options)


class LeagueEnvRunner(SingleAgentEnvRunner):
    """RLlib's `SingleAgentEnvRunner`, holding the self-play league (the opponent pool its env
    plays: `set_league`) as part of its state, so that every way RLlib makes or remakes a
    runner or its env starts with the current pool:

    - an env rebuilt after a failed step (`make_env`) gets the pool again;
    - a runner restarted after its process died gets the driver's runner's state
      (RLlib's ``restore_env_runners`` syncs it), the pool with it;
    - an algorithm checkpoint holds the driver's runner's state, the pool with it, and
      `LeaguePPO` hands it on to the remote runners on restore (``Algorithm.from_checkpoint``).

    Its games draw their dice from `fresh_dice`, as `DealingMultiAgentEnvRunner`'s do.

    Sampling is RLlib's own; `BatchedEnvRunner` samples on the batch."""

    _league: tuple[dict[str, float], dict[str, Any]] | None = None

    def set_league(self, weights: Mapping[str, float], snapshots: Mapping[str, Any]) -> None:
        """Play the pool `weights` (bot spec or snapshot name -> weight), `snapshots` the frozen
        policies by name, from the next step on; kept for the env's remakes and in the state."""
        self._league = (dict(weights), dict(snapshots))
        self._apply_league()

    @property
    def league(self) -> tuple[dict[str, float], dict[str, Any]] | None:
        """The pool this runner plays (weights, snapshots), or None before any `set_league`."""
        return self._league

    def _apply_league(self) -> None:
        env: Any = self.env
        while env is not None and not hasattr(env, "set_league"):
            env = getattr(env, "env", None)  # under RLlib's wrappers: the vector env's league
        if env is not None and self._league is not None:
            env.set_league(*self._league)

    def make_env(self) -> None:
        super().make_env()
        self._apply_league()

    def _try_env_reset(self, *, seed: Any = None, options: dict | None = None) -> Any:
        seeds: Any = fresh_dice(self, seed)  # a list: the vector env takes one per game (RLlib types an int)
        return super()._try_env_reset(seed=seeds, options=options)

    def get_state(self, components: Any = None, *, not_components: Any = None, **kwargs: Any) -> dict[str, Any]:
        state = super().get_state(components, not_components=not_components, **kwargs)
        if self._league is not None:
            state[LEAGUE_STATE] = {"weights": self._league[0], "snapshots": self._league[1]}
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        if LEAGUE_STATE in state:
            self.set_league(state[LEAGUE_STATE]["weights"], state[LEAGUE_STATE]["snapshots"])


class BatchedEnvRunner(LeagueEnvRunner):
    """A `LeagueEnvRunner` whose `sample` steps the vector env as one batch (module docstring)."""

    def __init__(self, *, config: AlgorithmConfig, **kwargs: Any):
        # when one is built, not on import: env_runner="rllib", the way out that the error names, stays open
        private.check_runner_class()
        check_batched_config(config)
        super().__init__(config=config, **kwargs)
        private.check_runner(self)
        if self.env is not None:
            self._check_env()
        self._games: _Games | None = None  # the games under way, once sampling has started

    def make_env(self) -> None:
        super().make_env()  # the league's make_env: the pool again
        self._games = None  # a new env: its games start at the next sample
        self._check_env()

    def _check_env(self) -> None:
        env = self.env
        assert env is not None
        if not isinstance(env.single_action_space, spaces.Discrete):
            raise ValueError(f"BatchedEnvRunner: got action space {env.single_action_space!r}; it samples discrete "
                             "actions (use RLlib's SingleAgentEnvRunner for others)")
        mode = env.metadata.get("autoreset_mode")
        if mode != AutoresetMode.NEXT_STEP and getattr(mode, "value", mode) != AutoresetMode.NEXT_STEP.value:
            raise ValueError(f"BatchedEnvRunner: the vector env resets with autoreset_mode {mode!r}; it records "
                             "episodes as NextStep resets them (as RLlib's runners do)")

    def _sample(
        self,
        *,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool,
        random_actions: bool = False,
        force_reset: bool = False,
    ) -> list[SingleAgentEpisode]:
        """Step every game at once until `num_timesteps` decisions (or `num_episodes` finished
        games, from fresh games) are played; the episodes of this call, cut from the arrays."""
        assert self.env is not None
        if force_reset or num_episodes is not None or private.needs_initial_reset(self) or self._games is None:
            obs, _ = private.reset_env(self, initial=True)
            self._games = _Games(self.num_envs, obs)
        private.set_needs_initial_reset(self, num_episodes is not None)  # RLlib: by episodes starts afresh each time
        games = self._games
        steps = _Steps(games)
        ts = done_games = 0
        finished: list[tuple[int, float, float]] = []  # (length, return, seconds) of each game that ended
        while (ts < num_timesteps) if num_timesteps is not None else (done_games < (num_episodes or 0)):
            actions = self._actions(games.obs, explore, random_actions, ts, steps)
            result = private.step_env(self, actions)
            if isinstance(result, str):  # ENV_STEP_FAILURE: RLlib remade the env; start over
                obs, _ = private.reset_env(self, initial=False)
                self._games = games = _Games(self.num_envs, obs)
                steps, ts = _Steps(games), 0
                continue
            obs, rewards, terminated, truncated, _ = result
            played = steps.record(rewards, terminated, truncated, obs)
            ts += played
            done_games += self._finish(games, steps, finished)
        self._log_finished(finished)
        episodes = steps.episodes(self.env.single_observation_space, self.env.single_action_space,
                                  private.weights_seq_no(self), complete_only=num_episodes is not None)
        private.log_sampled(self, ts, done_games)
        return episodes

    def _actions(self, obs: Any, explore: bool, random_actions: bool, ts: int, steps: _Steps) -> np.ndarray:
        """Every game's action (N,) for the observations `obs`, drawn from the module's
        distribution (`explore`) or its most likely action; the distribution's inputs and the
        action's log-probability go to `steps`."""
        batch = {Columns.OBS: as_tensors(obs, private.device(self))}
        with torch.no_grad():
            if random_actions or self.module is None:
                logits = _uniform_logits(obs, self.env.single_action_space.n)  # type: ignore[union-attr]
                dist = torch.distributions.Categorical(logits=torch.from_numpy(logits))
                action = dist.sample()
                steps.act(action.numpy(), logits, dist.log_prob(action).numpy())
                return steps.last_actions
            if explore:
                runners = self.config.num_env_runners or 1
                t = (self.num_env_steps_sampled_lifetime // runners + ts) * runners
                out = self.module.forward_exploration(batch, t=t)
                dist = self.module.get_exploration_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
            else:
                out = self.module.forward_inference(batch)
                dist = self.module.get_inference_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
                dist = dist.to_deterministic()
            action = dist.sample()
            logp = dist.logp(action)
        steps.act(as_numpy(action), as_numpy(out[Columns.ACTION_DIST_INPUTS]), as_numpy(logp))
        return steps.last_actions

    def _finish(self, games: _Games, steps: _Steps, finished: list[tuple[int, float, float]]) -> int:
        """Note the games that ended in the last step (length, return, duration) and start
        their slots' next games; how many ended."""
        ended = steps.just_ended
        now = time.perf_counter()
        for i in np.flatnonzero(ended):
            finished.append((int(games.length[i]), float(games.ret[i]), now - float(games.started[i])))
        games.finish(ended, now)
        return int(ended.sum())

    def _log_finished(self, finished: list[tuple[int, float, float]]) -> None:
        """Log the finished games as RLlib logs episodes. Its episode metrics are means, minima
        and maxima over a window of the last games, so only the games that can still be in
        the window are logged: the same figures, without a metrics call per game for the rest."""
        smoothing = self.config.metrics_num_episodes_for_smoothing or 1
        window = max(1, math.ceil(smoothing / (self.config.num_env_runners or 1)))
        for length, ret, seconds in finished[-window:]:
            private.log_episode(self, length, ret, seconds)


def check_batched_config(config: AlgorithmConfig) -> None:
    """Refuse what `BatchedEnvRunner` leaves out: custom connectors (env-to-module and
    module-to-env: it does not run them; learner: its episode chunks carry no observation from
    before the chunk, which RLlib's runner carries and a custom learner connector may read) and
    stateful modules. The vector path's own learner pipeline (``learner_pipeline="batched"``,
    `rllib_learner.BatchedAdvantages`, which reads each chunk's own steps only) is not custom."""
    for what, custom in private.custom_connectors(config).items():
        ours = what == "learner" and getattr(config, "learner_pipeline", None) == "batched" and custom is None
        if not ours and (custom is not None or getattr(config, f"add_default_connectors_to_{what}_pipeline",
                                                         True) is False):
            raise ValueError(f"BatchedEnvRunner: config sets {what}_connector; the batched runner runs RLlib's default "
                             "connectors only (use RLlib's own sampling: vector_ppo_config(env_runner='rllib'))")
    model = config.model_config if isinstance(config.model_config, dict) else {}
    if model.get("use_lstm") or model.get("use_attention"):
        raise ValueError("BatchedEnvRunner: the module is stateful (use_lstm/use_attention); the batched runner "
                         "samples stateless modules")


class _Games:
    """The games under way in every slot of the vector env: the observation to act on, and
    each game's episode id, decisions so far (all returned by earlier calls when a call
    begins), return and start time."""

    def __init__(self, n: int, obs: Any):
        self.obs = obs
        self.ids = [uuid.uuid4().hex for _ in range(n)]
        self.length = np.zeros(n, np.int64)
        self.ret = np.zeros(n, np.float64)
        self.started = np.full(n, time.perf_counter())
        self.resetting = np.zeros(n, bool)  # the slot's game ended: the next step restarts it (NextStep)

    def finish(self, ended: np.ndarray, now: float) -> None:
        """The games `ended` are over: their slots' next games get new ids."""
        for i in np.flatnonzero(ended):
            self.ids[i] = uuid.uuid4().hex
        self.length[ended] = 0
        self.ret[ended] = 0.0
        self.started[ended] = now
        self.resetting |= ended


class _Steps:
    """One `sample` call's steps, as arrays of (steps, games): what each game saw, did, got."""

    def __init__(self, games: _Games):
        self.games = games
        self.obs: list[Any] = [games.obs]  # observations before each step, and the last one after
        self.actions: list[np.ndarray] = []
        self.logits: list[np.ndarray] = []
        self.logp: list[np.ndarray] = []
        self.rewards: list[np.ndarray] = []
        self.done: list[np.ndarray] = []  # (terminated, truncated) of the step's outcome
        self.played: list[np.ndarray] = []  # the game made a decision (not a NextStep restart)
        self.last_actions = np.zeros(0, np.int64)
        self.just_ended = np.zeros(len(games.ids), bool)
        self.t_before = games.length.copy()  # each slot's game's decisions, returned before this call
        self.ended_ids: list[list[str]] = [[] for _ in games.ids]  # the games that end in this call, in order

    def act(self, actions: np.ndarray, logits: np.ndarray, logp: np.ndarray) -> None:
        """The step's actions, with the distribution's inputs and each action's log-probability."""
        self.last_actions = actions
        self.actions.append(actions)
        self.logits.append(logits.astype(np.float32, copy=False))
        self.logp.append(logp.astype(np.float32, copy=False))

    def record(self, rewards: Any, terminated: Any, truncated: Any, obs: Any) -> int:
        """The step's outcome; how many decisions it played (restarting slots play none)."""
        g = self.games
        played = ~g.resetting
        terminated, truncated = np.asarray(terminated, bool), np.asarray(truncated, bool)
        self.rewards.append(np.asarray(rewards, np.float32))
        self.done.append(np.stack([terminated & played, truncated & played]))
        self.played.append(played)
        self.obs.append(obs)
        g.obs = obs
        g.length += played
        g.ret += np.where(played, self.rewards[-1], 0.0)
        g.resetting = np.zeros_like(played)
        self.just_ended = (terminated | truncated) & played
        for i in np.flatnonzero(self.just_ended):
            self.ended_ids[i].append(g.ids[i])  # before `_Games.finish` gives the slot a new id
        return int(played.sum())

    def episodes(self, obs_space: spaces.Space, action_space: spaces.Space, seq_no: int,
                 complete_only: bool) -> list[SingleAgentEpisode]:
        """Every game's stretch of decisions in this call as a numpy'ized `SingleAgentEpisode`
        (finished games end terminated or truncated; a game under way ends in a chunk that the
        next call continues)."""
        if not self.played:
            return EpisodeList()
        played = np.stack(self.played)  # (K, N)
        done = np.stack(self.done, axis=1)  # (2, K, N)
        actions, rewards = np.stack(self.actions).astype(np.int32), np.stack(self.rewards)
        logits, logp = np.stack(self.logits), np.stack(self.logp)
        obs = join_leaves(np.stack, self.obs)  # leaves (K + 1, N, ...)
        steps, n = played.shape
        out = EpisodeList()
        for i in range(n):
            ended = iter(self.ended_ids[i])  # the ids of the games that ended in this call, in order
            for start, end in _runs(played[:, i]):  # decisions start..end-1, observations start..end
                terminated, truncated = bool(done[0, end - 1, i]), bool(done[1, end - 1, i])
                # a run from the call's first step goes on with the game under way when the call began
                t_started = int(self.t_before[i]) if start == 0 else 0
                if terminated or truncated:
                    episode_id = next(ended)
                else:  # the game still under way (the last run): the next call continues it
                    episode_id = self.games.ids[i]
                    if complete_only:
                        continue
                out.append(_episode(
                    episode_id, leaves(obs, slice(start, end + 1), i), actions[start:end, i].copy(),
                    rewards[start:end, i].copy(),
                    {Columns.ACTION_DIST_INPUTS: logits[start:end, i].copy(),
                     Columns.ACTION_LOGP: logp[start:end, i].copy(),
                     WEIGHTS_SEQ_NO: np.full(end - start, seq_no, np.int64)},
                    terminated, truncated, t_started, obs_space, action_space,
                ))
        return out


class EpisodeList(list):
    """The episodes of one `sample` call. A plain list of `SingleAgentEpisode`s, but for how it
    travels from a remote env runner to the learner: packed into one array per column (not
    several small arrays per episode, which Ray moves one by one) and unpacked into the same
    episodes on arrival (`tests/test_rllib_runner.py` checks the round trip)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return _unpack, (_pack(self),)


def _episode(episode_id: str, obs: Any, actions: np.ndarray, rewards: np.ndarray, extras: dict[str, np.ndarray],
             terminated: bool, truncated: bool, t_started: int, obs_space: spaces.Space,
             action_space: spaces.Space) -> SingleAgentEpisode:
    """A numpy'ized episode (chunk) of `len(actions)` decisions and one more observation, as
    RLlib's runner returns them: no lookback, empty infos."""
    return SingleAgentEpisode(
        episode_id,
        observations=InfiniteLookbackBuffer(obs),
        infos=InfiniteLookbackBuffer([{} for _ in range(len(actions) + 1)]),
        actions=InfiniteLookbackBuffer(actions),
        rewards=InfiniteLookbackBuffer(rewards, space=REWARD_SPACE),
        extra_model_outputs={key: InfiniteLookbackBuffer(value) for key, value in extras.items()},
        terminated=terminated,
        truncated=truncated,
        t_started=t_started,
        len_lookback_buffer=0,
        observation_space=obs_space,
        action_space=action_space,
    )


def _pack(episodes: list[SingleAgentEpisode]) -> dict[str, Any] | None:
    """`episodes` (this runner's) as one array per column and the few scalars of each."""
    if not episodes:
        return None
    first = episodes[0]
    return {
        "ids": [e.id_ for e in episodes],
        "lengths": np.array([len(e) for e in episodes], np.int64),
        "t_started": np.array([e.t_started for e in episodes], np.int64),
        "terminated": np.array([e.is_terminated for e in episodes], bool),
        "truncated": np.array([e.is_truncated for e in episodes], bool),
        "obs": join_leaves(np.concatenate, [e.observations.data for e in episodes]),
        "actions": join_leaves(np.concatenate, [e.actions.data for e in episodes]),
        "rewards": join_leaves(np.concatenate, [e.rewards.data for e in episodes]),
        "extras": {key: join_leaves(np.concatenate, [e.extra_model_outputs[key].data for e in episodes])
                   for key in first.extra_model_outputs},
        "spaces": (first.observation_space, first.action_space),
    }


def _unpack(packed: dict[str, Any] | None) -> list[SingleAgentEpisode]:
    """The episodes `_pack` packed (their arrays are views of the packed columns)."""
    if packed is None:
        return []
    lengths = packed["lengths"]
    ends = np.cumsum(lengths)
    starts = ends - lengths
    obs_space, action_space = packed["spaces"]
    episodes = []
    for j, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        o = slice(a + j, b + j + 1)  # each episode has one observation more than decisions
        episodes.append(_episode(
            packed["ids"][j], leaves(packed["obs"], o, None), packed["actions"][a:b], packed["rewards"][a:b],
            {key: value[a:b] for key, value in packed["extras"].items()}, bool(packed["terminated"][j]),
            bool(packed["truncated"][j]), int(packed["t_started"][j]), obs_space, action_space,
        ))
    return episodes


def as_numpy(x: Any) -> np.ndarray:
    """A torch tensor (on any device) or an array as a numpy array."""
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _runs(played: np.ndarray) -> list[tuple[int, int]]:
    """The maximal stretches [start, end) of True in a 1-D bool array."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], played.astype(np.int8), [0]))))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))


def join_leaves(join: Any, items: list[Any]) -> Any:
    """`items` (arrays, or dicts of them alike) joined leaf by leaf by `join` (np.stack, np.concatenate)."""
    if isinstance(items[0], dict):
        return {k: join_leaves(join, [item[k] for item in items]) for k in items[0]}
    return join([np.asarray(item) for item in items])


def leaves(obs: Any, steps: slice | np.ndarray, i: int | None) -> Any:
    """The observations `steps` of game `i` (a copy), or of a packed column (`i` None: a view; a
    boolean `steps` picks rows, a copy)."""
    if isinstance(obs, dict):
        return {k: leaves(v, steps, i) for k, v in obs.items()}
    return obs[steps] if i is None else obs[steps, i].copy()


def as_tensors(obs: Any, device: Any) -> Any:
    """Observations (an array, or a dict of them) as torch tensors on `device` (None: the CPU)."""
    if isinstance(obs, dict):
        return {k: as_tensors(v, device) for k, v in obs.items()}
    tensor = torch.from_numpy(np.asarray(obs))
    return tensor if device is None or str(device) == "cpu" else tensor.to(device)


def _uniform_logits(obs: Any, num_actions: int) -> np.ndarray:
    """Logits of a uniform draw among the legal actions (``action_mask`` where the
    observation has one, else all)."""
    mask = obs.get("action_mask") if isinstance(obs, dict) else None
    if mask is None:
        first = obs if not isinstance(obs, dict) else next(iter(obs.values()))
        return np.zeros((len(first), num_actions), np.float32)
    mask = np.asarray(mask)
    return np.where(mask > 0, 0.0, FLOAT_MIN).astype(np.float32)
