# noqa: D212, D415
"""
# Qwixx (`qwixx_v0`)

| Import             | `from qwixx_env import qwixx_v0`                              |
|--------------------|---------------------------------------------------------------|
| Actions            | Discrete                                                      |
| Parallel API       | Yes: `qwixx_v0.parallel_env()` (the white action at once)     |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`, 1 to 5          |
| Action Values      | Discrete(4*K + 1): K = 11 (classic), 15 (Longo)               |
| Observation Shape  | (see `ObservationLayout`: 198 for 2-player classic)           |
| Observation Values | [0, 1] except `scores` (score / 100)                          |

Qwixx is a dice game for 1 to 5 players. Each roll every player may cross the sum of the
two white dice on their own sheet (the *white action*), then the active player may cross the
sum of a white and a coloured die in that colour's row (the *colour action*). Numbers must be
crossed left to right; a row closes with its lock; the game ends when two rows are locked or
someone takes a fourth penalty. Qwixx Longo (`variant="longo"`) uses eight-sided dice, rows
of 15 numbers and lucky numbers. The exact rules are in `docs/rules.md`.

### Options

`env(num_players=2, variant="classic", render_mode=None, lucky="bonus", lucky_numbers=None,
start_player=0, reward=None, score_table=None, illegal_reward=None)` (`raw_env` takes the same
but `illegal_reward`: it raises on an illegal action). Every option is a keyword; the seven
table options may come instead as one value, `env(table=TableOptions(...))`
(`qwixx_env.core.options`), as every constructor of the package takes them.

* `num_players`: 1 to 5. With one player (solo) that player is active on every roll.
* `variant`: `"classic"` or `"longo"`.
* `render_mode`: None, `"ansi"` (render returns the text) or `"human"` (prints it each step).
* `lucky`: Longo only. `"bonus"`: a lucky white sum adds a cross on the row with the fewest
  crosses; `"instead"`: that cross may be taken instead of the white-sum cross.
* `lucky_numbers`: Longo only; fixed lucky numbers, one pair per seat, e.g. `[(3, 11), (7, 9)]`.
  Drawn from the game's seeded generator when not given.
* `start_player`: the first active seat, or `"random"` (drawn from the game's generator).
* `reward`: `"win"` (+1 sole winner, 0 for a shared top score, -1 others; terminal),
  `"score"` (final score; terminal), `"score_delta"` (each step the change in the agent's
  score since its last reward; sums to the final score), `"margin"` (own score minus the best
  other score; terminal). Default: `"win"` with 2+ players, `"score"` solo.
* `score_table`: replaces the points for n crosses in a row (entry n), e.g. to try another
  reading of the Longo sheet. Default: n(n+1)/2.
* `illegal_reward` (`env()` only): the offender's return for a game it ends with an illegal
  action. Default: worse than any legal ending in the reward mode (see Illegal actions).

### Turn structure

Each roll: every seat makes one white-action decision, the active player first, then
clockwise; in Longo with `lucky="bonus"` a player whose lucky cross ties between rows makes
one more decision right after (only the tied rows' next numbers are legal). Then the active
player makes the colour-action decision. The white action is simultaneous: a choice stays
hidden from every observation, mask and snapshot until all seats have decided, and legality is
judged against the sheets as they stood at the roll.

### Actions

Action `r*K + i` crosses the i-th number of row r as printed (rows red, yellow, green,
blue); action `4*K` passes. `qwixx_env.encode_action(("green", 9), "classic")` and
`qwixx_env.decode_action(action, variant)` translate.

### Observations

`{"observation": float32 vector, "action_mask": int8 vector}` seen from the observing seat;
the fields are listed in `qwixx_env.core.observation` and read by name with
`qwixx_env.ObservationView`. The mask is all zeros for agents other than the one to act.

### Illegal actions

`raw_env.step` raises `ValueError` naming the agent, the action, its mark and the legal
actions, and leaves the game untouched. `env()` behaves like PettingZoo's classic games: an
illegal action ends the game (with a warning), 0 for the others, and for the offender a return
worse than any legal ending in the reward mode: -2 with `"win"`, the lowest possible score
minus 1 with `"score"` and `"score_delta"` (there the illegal step pays what brings the
offender's rewards to that sum), the lowest possible margin minus 1 with `"margin"`
(`env(illegal_reward=x)` sets another return). An action outside the action space fails an
assertion, and calls out of order raise.

### Parallel API

`parallel_env(**options)` takes the options of `env()` and plays the same game through
PettingZoo's Parallel API: each roll, one step in which every seat gives its white action at
once, a step for each Longo lucky tie (that seat alone), then a step for the active player's
colour action. Observations, rewards and snapshots are the AEC env's; every live agent gets a
mask each step, and a seat without a decision in that step (`acting_agents` names those that
have one) has only pass legal: it sends pass or is left out. An illegal action ends the game as
in `env()`; `raw_parallel_env()` raises `ValueError` instead. A missing or unknown agent raises
`ValueError` in both. Details in `docs/integrations.md`.

### Version history

* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from qwixx_env.core.checks import check_choice, check_seed, is_int
from qwixx_env.core.engine import RECORD_FORMAT, Engine
from qwixx_env.core.options import TableOptions, table_from
from qwixx_env.core.state import OVER, PHASES, State
from qwixx_env.core.variant import mark_text
from qwixx_env.envs.guard import GuardedEnv
from qwixx_env.envs.parallel import ParallelQwixx
from qwixx_env.envs.render import RENDER_MODES, render_text
from qwixx_env.envs.table import QwixxTable

__all__ = ["RECORD_FORMAT", "env", "parallel_env", "raw_env", "raw_parallel_env"]
_GAME_OVER = ("{call}: the game is over and every agent has stepped out (agents is empty); call reset() to start "
              "a new game")
_NOT_STARTED = "{call}: there is no game yet; call reset() first (reset(seed=...) for a reproducible one)"


def env(*, illegal_reward: float | None = None, **kwargs: Any) -> GuardedEnv:
    """The Qwixx AEC environment with PettingZoo's classic-game guards (see the module doc);
    `illegal_reward` is the offender's return for a game it ends with an illegal action (None:
    worse than any legal ending, `core.rewards.illegal_return`)."""
    return GuardedEnv(raw_env(**kwargs), illegal_reward)


def parallel_env(*, render_mode: str | None = None, **kwargs: Any) -> ParallelQwixx:
    """The game through PettingZoo's Parallel API, over `env(**kwargs)`: every seat acts at once
    in the white action; an illegal action ends the game as `env()` ends it (see the module doc)."""
    return ParallelQwixx(env(**kwargs), render_mode=render_mode)


def raw_parallel_env(*, render_mode: str | None = None, **kwargs: Any) -> ParallelQwixx:
    """`parallel_env` over `raw_env(**kwargs)`: an illegal action raises ValueError, changing nothing."""
    return ParallelQwixx(raw_env(**kwargs), render_mode=render_mode)


class raw_env(AECEnv, EzPickle):
    """The unwrapped Qwixx AEC environment: a thin adapter on `qwixx_env.core`.

    The table is `table` (a `TableOptions`) or its keyword options (``num_players``,
    ``variant``, ``lucky``, ``lucky_numbers``, ``start_player``, ``reward``, ``score_table``;
    see the module docstring), checked once (`core.options.table_from`).
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "qwixx_v0", "is_parallelizable": False}

    def __init__(self, *, render_mode: str | None = None, table: TableOptions | None = None, **options: Any):
        table = table_from(table, **options)
        EzPickle.__init__(self, render_mode=render_mode, table=table)
        super().__init__()
        check_choice("render_mode", render_mode, RENDER_MODES)
        self.table = table
        self.engine = Engine(table, 1, history=True)  # the one game: state, buffers, kernel, record
        self.variant = table.rules
        self.num_actions = self.variant.num_actions
        self.options = table.as_dict()
        self.render_mode = render_mode
        self.reward_mode = table.reward_mode
        self.possible_agents = [f"player_{i}" for i in range(table.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.layout = self.engine.layout
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(self.layout.low, self.layout.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self.num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        self._mask = self.engine.masks  # (1, A): the mask of the seat to decide, written by each step

    @property
    def core_state(self) -> State:
        """The game's `State` (a batch of one), as the engine holds it."""
        return self.engine.state

    # --- PettingZoo API -----------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game. With a seed the game is reproducible; without one the game's
        generator continues from the previous game (or starts from fresh entropy)."""
        if seed is not None:
            check_seed(seed)
        self.engine.reset(seed)  # the new game and its first mask
        self._start_agents()

    def reset_from_generator(self, rng_state: int, seed: int | None = None) -> None:
        """Start a new game from a generator state (a record's ``rng_state``; `qwixx_env.replay`)."""
        self.engine.restart(0, rng_state, seed)
        self._start_agents()

    def _start_agents(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}  # floats throughout, as the illegal ending's
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._after_decision()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not hasattr(self, "agents"):
            raise RuntimeError(_NOT_STARTED.format(call=f"observe({agent!r})"))
        engine = self.engine
        obs = engine.observe(self.agent_name_mapping[agent])[0].copy()  # the buffer is written again
        if agent == self.agent_selection and engine.state.phase[0] != OVER:
            mask = self._mask[0].copy()
        else:
            mask = np.zeros(self.num_actions, np.int8)
        return {"observation": obs, "action_mask": mask}

    def last(self, observe: bool = True):
        if not hasattr(self, "agents"):
            raise RuntimeError(_NOT_STARTED.format(call="last()"))
        if not self.agents:
            raise RuntimeError(_GAME_OVER.format(call="last()"))
        return super().last(observe)

    def step(self, action: int | None) -> None:
        if not hasattr(self, "agents"):
            raise RuntimeError(_NOT_STARTED.format(call=f"step({action!r})"))
        if not self.agents:
            raise RuntimeError(_GAME_OVER.format(call=f"step({action!r})"))
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ValueError(
                    f"{agent}: step({action!r}): the game is over; the agents step out with step(None) (as "
                    "env.agent_iter() loops do), or call reset() to start a new game"
                )
            self._was_dead_step(action)
            return
        action = self.check_action(agent, action)
        self._cumulative_rewards[agent] = 0.0
        self.engine.step(action)  # apply, then the next decision's mask and the rewards
        paid = self._set_rewards()
        self._after_decision()
        if paid:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if not hasattr(self, "agents"):
            raise RuntimeError("render: call reset() first; there is no game to show before it")
        text = render_text(self.variant, self.snapshot(), self.possible_agents, self._to_decide())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # --- Qwixx extras ------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The committed state of the game as a JSON-serialisable dict (see the README)."""
        return self.engine.snapshot()

    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to act (empty when the game is over)."""
        return self.engine.legal_actions()

    def record(self) -> dict[str, Any]:
        """The game so far as a JSON-serialisable record; `qwixx_env.replay` rebuilds it.

        It is the game's full history, not one player's view: made during a white action it
        includes the choices already made in it, so that the replay stands exactly where this
        game stands.
        """
        return self.engine.record()

    def check_action(self, agent: str, action: Any, mask: np.ndarray | None = None) -> int:
        """The action as an int if legal for `agent` now; else a ValueError that names it.
        `mask`: the agent's legal actions, when not the seat to decide (the parallel view)."""
        legal: np.ndarray = self._mask[0] if mask is None else mask
        if type(action) is int or isinstance(action, np.integer):
            action = int(action)
            if 0 <= action < self.num_actions and legal[action]:
                return action
        elif isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            return self.check_action(agent, action.item(), legal)
        raise ValueError(self._illegal_message(agent, action, legal))

    def play_seats(self, seat_actions: np.ndarray) -> np.ndarray:
        """Several seats' decisions at once (the Parallel view's step): seat s's next decision
        is ``seat_actions[s]`` (-1: none), played as `Engine.play` plays them, in the AEC order.
        Afterwards the env stands as after those decisions one by one, `rewards` included:
        every reward of such a call falls on its last decision (a white choice counts only once
        the roll's last seat has chosen); the engine's ``seat_buffers`` hold every seat's view
        after them (`Engine.seat_views`). Returns the actions not played (see `Engine.play`)."""
        engine = self.engine
        left = engine.play(seat_actions, show=0)
        self._after_decision()
        if self._set_rewards():
            # Each seat that decided starts its reward since it last acted from 0. Without pay
            # there is nothing to do: a terminal reward mode has paid nothing yet (all are 0).
            cumulative, agents = self._cumulative_rewards, self.possible_agents
            for seat in engine.seat_buffers.decided[0].tolist():  # -1 after the last seat that decided
                if seat < 0:
                    break
                cumulative[agents[seat]] = 0.0
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()
        return left[0]

    def is_legal(self, action: int) -> bool:
        """Whether `action` (an index inside the action space) is legal for the agent to act."""
        return bool(self._mask[0, action])

    def end_on_illegal(self, agent: str, illegal_reward: float, action: int | None = None) -> None:
        """End the game as PettingZoo's TerminateIllegalWrapper does for an illegal action by
        `agent` (`action`, if given, goes in the record): its rewards for the game sum to
        `illegal_reward` (this step pays the rest), the others get 0, every agent is done and
        no seat has a legal action left. The game's phase is over, with `agent` as the reason
        (`Engine.end_games`), so `snapshot()`, `record()` and the engine say so too."""
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = float(self.engine.illegal_step_rewards([0], [self.agent_name_mapping[agent]],
                                                                      illegal_reward)[0])
        self._accumulate_rewards()
        self._deads_step_first()
        self.engine.end_games([0], [self.agent_name_mapping[agent]], None if action is None else [action])

    # --- internals -----------------------------------------------------------------------

    def _clear_rewards(self) -> None:
        # PettingZoo's clears to int 0 (after a dead step); every reward here is a float
        for agent in self.rewards:
            self.rewards[agent] = 0.0

    def _to_decide(self) -> str | None:
        if not hasattr(self, "agents") or self.core_state.phase[0] == OVER:
            return None
        return self.possible_agents[int(self.core_state.turn[0])]

    def _after_decision(self) -> None:
        """Point agent_selection at the seat to decide (the mask is already written)."""
        st = self.engine.state
        if st.phase.item(0) == OVER:  # item(): a Python int, quicker to read and compare than numpy's
            self.terminations = {a: True for a in self.agents}
        self.agent_selection = self.possible_agents[st.turn.item(0)]

    def _illegal_message(self, agent: str, action: Any, mask: np.ndarray | None = None) -> str:
        legal_actions = self.legal_actions() if mask is None else [int(a) for a in np.flatnonzero(mask)]
        legal = ", ".join(f"{a} ({mark_text(a, self.variant)})" for a in legal_actions)
        if not is_int(action):
            return f"{agent}: action {action!r} is not an integer action; legal now: [{legal}]"
        if not 0 <= action < self.num_actions:
            return (
                f"{agent}: action {action} is outside the action space 0..{self.num_actions - 1}; "
                f"legal now: [{legal}]"
            )
        phase = PHASES[int(self.core_state.phase[0])]
        return (
            f"{agent}: action {action} ({mark_text(action, self.variant)}) is illegal in the "
            f"{phase} phase; legal now: [{legal}]"
        )

    def _set_rewards(self) -> bool:
        """`rewards` for the decisions just made; whether any can be non-zero (a terminal
        reward mode pays nothing until the end: there is nothing to accumulate then)."""
        if self.reward_mode != "score_delta" and self.engine.state.phase.item(0) != OVER:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            return False
        self.rewards = dict(zip(self.agents, self.engine.rewards[0].astype(float).tolist()))
        return True


_RAW: type[QwixxTable] = raw_env  # what the wrappers and views read of it (pyright checks the protocol)
