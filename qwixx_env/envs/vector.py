"""`QwixxVectorEnv`: the single-agent training view of the batched engine.

Each of N games has one learning seat (fixed, or drawn per game); every other seat is played
inside the engine by an opponent drawn per game and seat from a weighted pool. Scripted
opponents (`"random"`, `"greedy"`, `"heuristic"`) play in the engine's compiled call, from its
seat table (`Engine.play_table`); frozen learned policies are called once per round on the
batch of games that wait for them. The games move only through the engine's methods, and its
buffers hold the masks and observations. The learner sees exactly what `qwixx_v0` shows that
seat, and gets the same rewards.

It is a `gymnasium.vector.VectorEnv` with same-step autoreset by default: when a game ends,
`step` returns its terminal reward and the first observation of the next game, and the final
observation in ``infos["final_obs"]`` (valid where ``infos["_final_obs"]``). With
``autoreset_mode=AutoresetMode.NEXT_STEP`` (what RLlib's env runners expect) `step` returns
the final observation itself, and the next `step` ignores that game's action and returns the
first observation of its next game, with reward 0 and no decision played.

>>> env = QwixxVectorEnv(1024, num_players=2, opponents={"greedy": 3, "random": 1})
>>> obs, infos = env.reset(seed=0)          # obs: {"observation": (N, D), "action_mask": (N, A)}
>>> obs, rewards, terminated, truncated, infos = env.step(actions)
>>> env.action_masks()                      # (N, A) bool, for sb3-contrib's MaskablePPO
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from qwixx_env.bots.specs import ACCEPTED, opponent
from qwixx_env.core.checks import check_choice, check_int, is_number
from qwixx_env.core.engine import Engine, SeatTable, as_actions
from qwixx_env.core.options import TableOptions, table_from
from qwixx_env.core.rewards import check_illegal_reward
from qwixx_env.policies import Policy
from qwixx_env.policies.heuristic import weights_array
from qwixx_env.policies.scratch import new_scratch
from qwixx_env.policies.scripted import POLICY_NAMES, ScriptedPolicies, greedy_defaults, policy_action

Opponent = str | Policy
FROZEN = -1  # pool kind of a Python-side policy
ILLEGAL_ACTIONS = ("raise", "terminate")
AUTORESET_MODES = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)


class QwixxVectorEnv(VectorEnv):
    """N single-agent Qwixx games against opponents from a pool (see the module docstring).

    The table is `table` (a `TableOptions`) or its keyword options as `qwixx_v0.raw_env` takes
    them (num_players, variant, lucky, reward, ...), checked once (`core.options.table_from`); plus:
    `learner_seat` a seat or ``"random"`` (drawn per game); `opponents` (default
    ``"random"``) an opponent, a list (equal weights) or a mapping opponent -> weight, where an
    opponent is a bot spec as the arena and training configs take it (`qwixx_env.bots.specs`:
    ``"greedy"``, ``"heuristic"``, ``"afterstate"``, ``"rollout:threads=1"``, an installed
    checkpoint's name, a checkpoint's path or run folder; it must play this variant and player
    count) or a frozen policy callable; `greedy_max_skip` for the greedy
    opponents (default: the `greedy` bot's, best for the player count:
    `policies.scripted.greedy_defaults`); `illegal_action` ``"terminate"`` (the default, as in
    every env of the package: that game ends, ``infos["illegal_action"]`` marks it, and the
    learner's rewards for it sum to `illegal_reward`; None: worse than any legal ending,
    `core.rewards.illegal_return`) or ``"raise"`` (a `ValueError`, nothing changed);
    `autoreset_mode` gymnasium's `AutoresetMode` (or its value) ``SAME_STEP`` (the default) or
    ``NEXT_STEP`` (see the module docstring), declared in ``metadata["autoreset_mode"]``.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    # the spaces __init__ sets (VectorEnv declares them as any Space)
    single_observation_space: spaces.Dict
    single_action_space: spaces.Discrete

    def __init__(
        self,
        num_envs: int,
        *,
        learner_seat: int | str = "random",
        opponents: Opponent | Sequence[Opponent] | Mapping[Opponent, float] = "random",
        greedy_max_skip: int | None = None,
        illegal_action: str = "terminate",
        illegal_reward: float | None = None,
        table: TableOptions | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        **options: Any,
    ):
        num_envs = check_int("num_envs", num_envs, minimum=1)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.autoreset_mode = _check_autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.table = table = table_from(table, **options)
        self.engine = Engine(table, num_envs)  # the games; the opponents play inside it below
        e = self.engine
        self.num_envs, self.num_players = num_envs, e.num_players
        self.variant, self.layout, self.reward_mode = e.variant, e.layout, e.reward_mode
        self.illegal_reward = check_illegal_reward(illegal_reward, self.reward_mode, self.variant)
        self._learner_random = _check_learner_seat(learner_seat, self.num_players)
        self.learner_seat = learner_seat
        self._resolved: dict[str, Opponent] = {}  # bot specs named as opponents, made once
        self.opponents = opponents
        self._pool, self._pool_kinds, self._pool_weights = _check_pool(opponents, self._resolve)
        default_skip, self._penalty_worry = greedy_defaults(self.num_players)
        if greedy_max_skip is None:
            greedy_max_skip = default_skip
        self.greedy_max_skip = check_int("greedy_max_skip", greedy_max_skip, minimum=0)
        self.single_observation_space = spaces.Dict(
            {
                "observation": spaces.Box(self.layout.low, self.layout.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(e.num_actions,), dtype=np.int8),
            }
        )
        self.single_action_space = spaces.Discrete(e.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        N, P = self.num_envs, self.num_players
        self.learner = np.full(N, 0 if self._learner_random else int(learner_seat), np.int64)
        self.seat_opponent = np.zeros((N, P), np.int64)
        self.policy_rng = np.zeros(N, np.uint64)
        self._rng = np.random.default_rng()
        self._games = np.arange(N)
        self._final_obs = np.zeros((N, self.layout.size), np.float32)
        self._rewards = np.zeros(N, np.float32)
        self._done = np.zeros(N, np.bool_)
        # who plays each seat inside the engine: the learner's seat is ours, any other its opponent's
        policies = ScriptedPolicies(self.greedy_max_skip, self._penalty_worry, weights_array(), self.policy_rng)
        self._seat_table = SeatTable(self.learner, self.seat_opponent, self._pool_kinds, np.full(N, -1, np.int64),
                                     policies, new_scratch(e.variant, P))
        self._truncated = np.zeros(N, np.bool_)
        self._has_reset = False
        self._ended = np.zeros(N, np.bool_)  # NEXT_STEP: games that ended in the last step, restarted in the next
        self.opponent_decisions = 0  # decisions made by opponents so far (a running count)
        self.learner_decisions = 0  # learner decisions played so far (a running count)

    # --- Gymnasium vector API -------------------------------------------------------------

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None):
        """Start every game. An int seed seeds game i like ``qwixx_v0`` with ``seed + i`` and
        the opponents' and seat draws from ``seed``; same seed, same decisions → same games.
        Without a seed, the generators go on from where they are (as Gymnasium asks; fresh
        entropy only on the first reset), so ``reset(seed=0)`` then ``reset()`` is reproducible."""
        if seed is not None or not self._has_reset:
            self.engine.seed(seed)  # checks seed; every game's generator; the games start below
            root = None if seed is None else (seed if isinstance(seed, (int, np.integer)) else list(seed))
            self._rng = np.random.default_rng(root)
            self.policy_rng[:] = self._rng.integers(0, 2**63, self.num_envs, dtype=np.uint64)
        self.start_games(np.arange(self.num_envs))
        self._has_reset = True
        self._ended[:] = False
        return self.observations(), {}

    def step(self, actions: np.ndarray):
        """One learner decision per game → (obs, rewards, terminated, truncated, infos)."""
        if not self._has_reset:
            raise RuntimeError("reset() needs to be called before step()")
        e = self.engine
        actions = as_actions(actions, self.num_envs)
        ended = self._ended.copy()  # NEXT_STEP: their actions are ignored, the games restart below
        ok = (actions >= 0) & (actions < e.num_actions)
        ok[ok] = e.masks[np.flatnonzero(ok), actions[ok]] == 1
        ok |= ended
        illegal = np.flatnonzero(~ok)
        if illegal.size and self.illegal_action == "raise":
            b = int(illegal[0])
            raise ValueError(
                f"actions: game {b} (learner seat {int(self.learner[b])}) got action {int(actions[b])}; "
                f"legal there: {np.flatnonzero(e.masks[b]).tolist()} (illegal_action='terminate' ends the "
                "game instead)"
            )
        play = ok & ~ended
        if illegal.size or ended.any():  # terminate: those games end where they stand, the others go on
            e.apply_games(np.flatnonzero(play), actions[play])
        else:
            e.apply_games(self._games, actions)
        self.learner_decisions += int(play.sum())
        self._play_opponents()
        e.settle(self.learner)  # rewards, done, and a finished game's last observation as its learner sees it
        self._rewards[:] = e.rewards[self._games, self.learner]
        self._done[:] = e.done
        finished = np.flatnonzero(self._done)
        self._final_obs[finished] = e.obs[finished]
        infos: dict[str, Any] = {}
        if illegal.size:
            # the learner's rewards for the game sum to illegal_reward; its last observation is final
            self._rewards[illegal] = e.illegal_step_rewards(illegal, self.learner[illegal], self.illegal_reward)
            self._done[illegal] = True
            self._final_obs[illegal] = e.obs[illegal]
            e.end_games(illegal, self.learner[illegal], actions[illegal])
            infos["illegal_action"], infos["_illegal_action"] = ~ok, ~ok
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            return self._next_step_results(ended, infos)
        finished = np.flatnonzero(self._done)
        if finished.size:
            infos["final_obs"] = {"observation": self._final_obs.copy(), "action_mask": np.zeros_like(e.masks)}
            infos["_final_obs"] = self._done.copy()
            self.start_games(finished)
        return self.observations(), self._rewards.copy(), self._done.copy(), self._truncated.copy(), infos

    def _next_step_results(self, ended: np.ndarray, infos: dict[str, Any]):
        """The step's results in NEXT_STEP mode: the games that ended last step restart now
        (reward 0, the first observation of the new game); a game that ends now shows its final
        observation, with no legal action, and restarts in the next step."""
        self._rewards[ended], self._done[ended] = 0.0, False
        if ended.any():
            self.start_games(np.flatnonzero(ended))
        obs = self.observations()
        self._ended[:] = self._done
        if self._done.any():
            obs["observation"][self._done] = self._final_obs[self._done]
            obs["action_mask"][self._done] = 0  # the engine's are 0 there too: those games are over
        return obs, self._rewards.copy(), self._done.copy(), self._truncated.copy(), infos

    def action_masks(self) -> np.ndarray:
        """(N, A) bool: the learner's legal actions in every game (what MaskablePPO asks for)."""
        return self.engine.masks.astype(bool)

    def _resolve(self, spec: str) -> Opponent:
        """What the env plays for a bot spec (`bots.specs.opponent`: the one check of a spec,
        as the arena and training configs make it). Resolved once per env, so naming it again
        (`set_opponents`) keeps the seats that play it."""
        if spec not in self._resolved:
            try:
                self._resolved[spec] = opponent(spec, self.table)
            except ValueError as err:
                raise ValueError(f"opponents: {err}") from None
        return self._resolved[spec]

    def set_opponents(self, opponents: Opponent | Sequence[Opponent] | Mapping[Opponent, float]) -> None:
        """Replace the opponent pool (same forms as the `opponents` option), e.g. when
        self-play adds a snapshot between rollouts. New games draw from the new pool; in a game
        under way a seat keeps its opponent if it is still in the pool and draws a new one
        from the pool otherwise."""
        pool, kinds, weights = _check_pool(opponents, self._resolve)
        if len(self._pool) and self._has_reset:
            # old pool index -> new index (-1: gone); strings match by value, policies by identity
            moved = np.array(
                [next((j for j, o in enumerate(pool) if o is old or (isinstance(old, str) and o == old)), -1)
                 for old in self._pool],
                np.int64,
            )
            codes = moved[self.seat_opponent]
            gone = codes < 0
            codes[gone] = self._rng.choice(len(pool), size=int(gone.sum()), p=weights)
            self.seat_opponent[:] = codes
        self._pool, self._pool_kinds, self._pool_weights = pool, kinds, weights
        self._seat_table = self._seat_table._replace(kinds=kinds)
        self.opponents = opponents

    def __repr__(self) -> str:
        return (f"QwixxVectorEnv({self.num_envs}, num_players={self.num_players}, variant={self.variant.name!r}, "
                f"reward={self.reward_mode!r}, learner_seat={self.learner_seat!r}, opponents={self.opponents!r})")

    def close_extras(self, **kwargs: Any) -> None:
        pass

    @property
    def has_reset(self) -> bool:
        """Whether `reset()` has been called (and the games are under way)."""
        return self._has_reset

    def start_games(self, games: np.ndarray) -> None:
        """Restart these games (continuing their generators), draw their learner seats and
        opponents, and play on to each learner's first decision (`observations()` shows it)."""
        e = self.engine
        e.reset_games(games)
        if self._learner_random:
            self.learner[games] = self._rng.integers(0, self.num_players, games.size)
        self.seat_opponent[games] = self._rng.choice(
            len(self._pool), size=(games.size, self.num_players), p=self._pool_weights
        )
        self._play_opponents()

    # --- internals --------------------------------------------------------------------------

    def _play_opponents(self) -> None:
        """Scripted opponents in the kernel; frozen policies in batches, until every live game
        is at its learner's turn."""
        e, table = self.engine, self._seat_table
        while True:
            self.opponent_decisions += e.play_table(table, policy_action)
            waiting = np.flatnonzero(table.waiting >= 0)
            if waiting.size == 0:
                return
            for code in np.unique(table.waiting[waiting]):
                games = waiting[table.waiting[waiting] == code]
                all_obs, all_masks = e.observe_games(games, e.seats[games])
                obs, masks = all_obs[games], all_masks[games]
                acts = _check_policy_actions(self._pool[code], self._pool[code](obs, masks), masks)
                e.apply_games(games, acts)
                self.opponent_decisions += games.size

    def observations(self) -> dict[str, np.ndarray]:
        """Every game as its learner sees it now: {"observation": (N, D), "action_mask": (N, A)} (copies)."""
        obs, masks = self.engine.observe_games(self._games, self.learner)
        return {"observation": obs.copy(), "action_mask": masks.copy()}


def _check_policy_actions(policy: Any, returned: Any, masks: np.ndarray) -> np.ndarray:
    """A frozen policy's actions as (n,) int64, each a legal action of its row, or a
    `ValueError` naming the first bad one (out of range, or masked)."""
    n, num_actions = masks.shape
    given = np.asarray(returned)
    try:  # any shape of n whole numbers, as the learner's actions are read
        acts = as_actions(given.reshape(-1) if given.size == n else given, n)
    except ValueError:
        raise ValueError(
            f"opponent {policy!r} returned {given.dtype} of shape {given.shape}; expected {n} whole-number "
            "actions, one per observation"
        ) from None
    in_range = (acts >= 0) & (acts < num_actions)
    legal = in_range.copy()
    legal[in_range] = masks[np.flatnonzero(in_range), acts[in_range]] == 1
    if not legal.all():
        i = int(np.flatnonzero(~legal)[0])
        why = "masked there" if in_range[i] else f"outside 0..{num_actions - 1}"
        raise ValueError(
            f"opponent {policy!r} returned an illegal action, {int(acts[i])} for row {i} ({why}); legal there: "
            f"{np.flatnonzero(masks[i]).tolist()}"
        )
    return acts


def _check_autoreset_mode(mode: Any) -> AutoresetMode:
    """`mode` as an `AutoresetMode` this env implements, or a `ValueError` naming the accepted ones."""
    try:
        checked = AutoresetMode(mode)
    except ValueError:
        checked = None
    if checked not in AUTORESET_MODES:
        accepted = [m.value for m in AUTORESET_MODES]
        raise ValueError(f"autoreset_mode: got {mode!r}; expected one of {accepted} (gymnasium's AutoresetMode)")
    return checked


def _check_learner_seat(learner_seat: Any, num_players: int) -> bool:
    if isinstance(learner_seat, str) and learner_seat == "random":
        return True
    check_int("learner_seat", learner_seat, minimum=0, maximum=num_players - 1,
              accepted=f"'random' or a seat from 0 to {num_players - 1}")
    return False


def _check_pool(opponents: Any, resolve: Callable[[str], Opponent]) -> tuple[list, np.ndarray, np.ndarray]:
    """(pool, kinds, weights) from an opponent, a list of them or a mapping to weights;
    `resolve(spec)` is what the env plays for a bot spec (a `ValueError` for a bad one)."""
    accepted = f"a bot spec ({ACCEPTED}), a policy callable(obs, masks) -> actions, a list of them or a dict of weights"
    if isinstance(opponents, str) or callable(opponents):
        items = [(opponents, 1.0)]
    elif isinstance(opponents, Mapping):
        items = list(opponents.items())
    else:
        try:
            items = [(o, 1.0) for o in opponents]
        except TypeError:
            raise ValueError(f"opponents: got {opponents!r}; expected {accepted}") from None
    if not items:
        raise ValueError(f"opponents: got an empty pool; expected {accepted}")
    pool, kinds, weights = [], [], []
    for given, weight in items:
        if not (is_number(weight) and weight > 0):
            raise ValueError(f"opponents: weight {weight!r} for {given!r}; expected a positive finite number")
        opponent = resolve(given) if isinstance(given, str) else given
        if isinstance(opponent, str):
            kinds.append(POLICY_NAMES.index(opponent))
        elif callable(opponent):
            kinds.append(FROZEN)
        else:
            raise ValueError(f"opponents: got {opponent!r}; expected {accepted}")
        pool.append(opponent)
        weights.append(float(weight))
    w = np.array(weights)
    return pool, np.array(kinds, np.int64), w / w.sum()
