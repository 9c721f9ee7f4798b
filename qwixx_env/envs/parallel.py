"""`ParallelQwixx`: the game through PettingZoo's Parallel API (`qwixx_v0.parallel_env()`).

Qwixx's white action is simultaneous, so it is naturally a parallel game. Each `step` takes
one dict of actions:

* at a new roll (the white action) every seat acts at once;
* in Longo with `lucky="bonus"`, a seat whose lucky cross ties between rows then breaks the
  tie alone, one step per such seat, in seat order from the active player;
* then the active player acts alone (the colour action).

The view drives the AEC env underneath (`qwixx_v0.env()` or `raw_env()`): it checks each
decision, then hands it to the raw env in the AEC order (the white choices seat by seat from the
active player, a tie right after its seat's white choice), so the rules, observations, rewards,
snapshots and the handling of illegal actions are the AEC env's own. Only the masks differ, as
the Parallel API needs: every live agent gets a mask each step, the seats that act their legal
actions, the others only pass (the no-op they send, or leave out). `acting_agents` names the
seats that act.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv, ParallelEnv

from qwixx_env.core.checks import check_choice, is_int
from qwixx_env.core.state import OVER, WHITE
from qwixx_env.envs.guard import GuardedEnv
from qwixx_env.envs.render import RENDER_MODES, render_text
from qwixx_env.envs.table import QwixxTable


class ParallelQwixx(ParallelEnv, EzPickle):
    """The Parallel API view of one Qwixx AEC env; see the module docstring.

    `aec` is a fresh `qwixx_v0.env()` (an illegal action ends the game as that env does) or
    `qwixx_v0.raw_env()` (an illegal action raises `ValueError` and changes nothing), made
    without a render mode: the view renders once per step itself. Like the AEC env, a pickled
    view unpickles as a new table with the same options, to be reset.
    """

    def __init__(self, aec: AECEnv, render_mode: str | None = None):
        EzPickle.__init__(self, aec, render_mode)
        check_choice("render_mode", render_mode, RENDER_MODES)
        self.aec = aec
        self.raw = cast(QwixxTable, aec.unwrapped)
        self.table, self.variant = self.raw.table, self.raw.variant  # the AEC env's: options, and the Variant
        if self.raw.render_mode is not None:
            raise ValueError("ParallelQwixx: make the AEC env without a render_mode; give it to the view instead")
        self.render_mode = render_mode
        self.metadata = {k: v for k, v in self.raw.metadata.items() if k != "is_parallelizable"}  # an AEC flag
        self.possible_agents = self.raw.possible_agents[:]
        self.observation_spaces = dict(self.raw.observation_spaces)
        self.action_spaces = dict(self.raw.action_spaces)
        self.pass_action = self.raw.num_actions - 1
        P = len(self.possible_agents)
        self._held = np.full(P, -1, np.int64)  # white choices given, not played yet (a seat breaks a lucky tie)
        self._acting: list[str] = []  # acting_agents, as of the last reset or step
        # Every seat's observation (seat s sees row s) and next decision's mask: the engine's
        # `seat_views` buffers, which `play_seats` writes too. Read once: a step only reads them.
        self._obs, self._seat_masks = self.raw.engine.seat_buffers.obs, self.raw.engine.seat_buffers.masks
        self._mask_rows = np.zeros((P, self.raw.num_actions), np.int8)  # the masks outside a white action
        self._pass_rows = np.zeros_like(self._mask_rows)  # every seat with only pass: where those masks start
        self._pass_rows[:, self.pass_action] = 1
        self._view_masks = self._mask_rows  # each seat's mask for the next step: these rows or the engine's
        # The AEC order of a step's decisions, by the seat to decide first: from it, clockwise.
        self._orders = {first: [self.possible_agents[(i + k) % P] for k in range(P)]
                        for i, first in enumerate(self.possible_agents)}

    def __str__(self) -> str:
        return self.metadata["name"]

    # --- PettingZoo Parallel API ----------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start a new game, seeded as `qwixx_v0.env().reset(seed)`; returns (observations, infos)."""
        self.aec.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        self._held[:] = -1
        self._update_views()
        infos = {a: dict(self.raw.infos[a]) for a in self.agents}
        observations = self._observations()
        if self.render_mode == "human":
            self.render()
        return observations, infos

    def step(self, actions: Mapping[str, Any]):
        """Apply one action per acting agent (see `acting_agents`); the other agents may send pass
        or be left out. Returns (observations, rewards, terminations, truncations, infos), each
        keyed by every agent live before the step; the rewards sum the AEC env's over the
        decisions this step made."""
        if not hasattr(self, "agents"):
            raise RuntimeError("step: call reset() first; there is no game before it")
        if not self.agents:
            raise ValueError("step: the game is over; call reset() to start a new one")
        raw, live, played = self.raw, self.agents, True
        seat_actions = self._plain(actions)
        if seat_actions is not None:  # the usual step: the engine checks every action as it plays them
            try:
                self._held = raw.play_seats(seat_actions).copy()
            except ValueError:
                seat_actions = None  # something illegal, nothing changed: the checks below say what, as always
        if seat_actions is None:
            todo, offender = self._checked(actions, self._acting)
            if offender is not None:
                # Only with env(): the game ends as env() ends it on an illegal action.
                cast(GuardedEnv, self.aec).end_on_illegal(offender, int(actions[offender]))
                played = False
            else:
                seat_actions, seats = self._held.copy(), raw.agent_name_mapping
                for agent, action in todo.items():
                    seat_actions[seats[agent]] = action
                self._held = raw.play_seats(seat_actions).copy()  # checked legal: env()'s guard has nothing to do
        # Copies of the AEC env's, keyed by every live agent (none steps out here). Spelt for
        # speed, as in `_observations`: .copy() over dict(), a loop over a comprehension (which
        # makes a function object per call on Python 3.11).
        totals: dict[str, float] = raw.rewards.copy()
        terminations = raw.terminations.copy()  # bools
        truncations = raw.truncations.copy()
        infos: dict[str, dict[str, Any]] = {}
        for agent, info in raw.infos.items():
            infos[agent] = info.copy()
        self._update_views(played)
        observations = self._observations(live)
        if not self._acting:  # the game is over (`_update_views` read it from the state)
            self.agents = []
            self._held[:] = -1
        if self.render_mode == "human":
            self.render()
        return observations, totals, terminations, truncations, infos

    def render(self) -> str | None:
        """The AEC env's picture, with every seat that acts this step as the one to decide."""
        if not hasattr(self, "agents"):
            raise RuntimeError("render: call reset() first; there is no game to show before it")
        to_decide = ", ".join(self.acting_agents) or None
        text = render_text(self.variant, self.raw.snapshot(), self.possible_agents, to_decide)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.aec.close()

    # --- Qwixx extras ------------------------------------------------------------------

    @property
    def acting_agents(self) -> list[str]:
        """The agents whose action the next `step` needs: every seat at a new roll, else the one
        seat to decide (a lucky tie, the colour action); none once the game is over."""
        return self._acting[:] if getattr(self, "agents", None) else []

    def snapshot(self) -> dict[str, Any]:
        """The committed state of the game (the AEC env's `snapshot()`)."""
        return self.raw.snapshot()

    def record(self) -> dict[str, Any]:
        """The game so far as the AEC env records it (its decisions in the AEC order, the white
        choices seat by seat); `qwixx_env.replay` rebuilds it as an AEC env."""
        return self.raw.record()

    # --- internals -----------------------------------------------------------------------

    def _update_views(self, played: bool = False) -> None:
        """After a reset or step: the acting agents, and every seat's observation and mask for
        the next step (`Engine.seat_views`, which `play_seats` has written already if `played`:
        in the white action each seat's own legal actions, judged as the rules say against the
        sheets at the roll; else the AEC env's mask for the seat to decide and pass for the
        others; zeros once the game is over)."""
        raw = self.raw
        engine = raw.engine
        phase = engine.state.phase.item(0)  # a Python int: it compares faster than numpy's
        if not played:
            engine.seat_views(0)  # into `_obs` and `_seat_masks`
        masks = self._seat_masks
        if phase == WHITE:
            self._acting = self.possible_agents
            self._view_masks = masks
            return
        rows = self._view_masks = self._mask_rows
        if phase == OVER:  # by the rules, or (under env()) by an illegal action
            self._acting = []
            rows[:] = 0
        else:
            self._acting = [raw.agent_selection]
            seat = raw.agent_name_mapping[raw.agent_selection]
            rows[:] = self._pass_rows
            rows[seat] = masks[seat]

    def _observations(self, agents: list[str] | None = None) -> dict[str, dict[str, np.ndarray]]:
        """Each agent's observation as the AEC env's `observe` encodes it, with this view's mask:
        rows of one copy of `_update_views`' arrays."""
        obs, masks = self._obs.copy(), self._view_masks.copy()
        agents = self.agents if agents is None else agents
        if agents == self.possible_agents:  # every seat, in seat order: the rows as they come
            views: dict[str, dict[str, np.ndarray]] = {}
            for agent, o, m in zip(agents, obs, masks):  # a loop: cheaper than a comprehension on 3.11
                views[agent] = {"observation": o, "action_mask": m}
            return views
        seats = self.raw.agent_name_mapping
        return {agent: {"observation": obs[seats[agent]], "action_mask": masks[seats[agent]]} for agent in agents}

    def _plain(self, actions: Any) -> np.ndarray | None:
        """The step's seat actions (the white choices held from the last step, then these),
        if `actions` is a plain dict of integer actions from every acting agent, the others
        sending pass; else None (`_checked` then judges it)."""
        if type(actions) is not dict:
            return None
        # Written in place: a step that fails keeps the held choices of the seats that do not act
        # (only those matter), as every step that plays gives the acting seats' anew.
        held, seats, acting = self._held, self.raw.agent_name_mapping, self._acting
        pass_action = self.pass_action
        given = 0
        for agent, action in actions.items():
            seat = seats.get(agent)
            if seat is None or not (type(action) is int or isinstance(action, np.integer)):
                return None
            if agent in acting:
                held[seat] = action
                given += 1
            elif action != pass_action:
                return None
        return held if given == len(acting) else None

    def _checked(self, actions: Mapping[str, Any], acting: list[str]) -> tuple[dict[str, int], str | None]:
        """(the acting agents' actions as ints, None), or ({}, the first agent whose action is
        illegal) under env(); a ValueError that changes nothing for anything else wrong."""
        if type(actions) is not dict and not isinstance(actions, Mapping):  # an ABC check costs a lot here
            raise ValueError(f"step: actions must be a dict of agent -> action, got {type(actions).__name__}")
        live = self.agents
        unknown = [a for a in actions if a not in live]
        if unknown:
            raise ValueError(
                f"step: no agent {', '.join(map(repr, unknown))} in this game; the agents are {', '.join(live)}"
            )
        missing = [a for a in acting if a not in actions]
        if missing:
            what = "the white action, every seat at once" if len(acting) > 1 else f"only {acting[0]} decides"
            raise ValueError(
                f"step: no action for {', '.join(missing)}; this step needs one from {', '.join(acting)} ({what})"
            )
        # The AEC order: from the seat to decide on, clockwise; then the seats without a decision.
        raw, masks = self.raw, dict(zip(self.possible_agents, self._view_masks))
        checked = {}
        for agent in self._orders[raw.agent_selection]:
            if agent not in actions:
                continue
            try:
                action = raw.check_action(agent, actions[agent], masks[agent])
            except ValueError as error:
                if isinstance(self.aec, GuardedEnv) and self._in_action_space(actions[agent]):
                    return {}, agent  # an illegal move: env() ends the game
                if agent not in acting:
                    hint = f"{agent} has no decision this step: send pass or leave it out"
                    raise ValueError(f"{error} ({hint})") from None
                raise
            if agent in acting:
                checked[agent] = action
        return checked, None

    def _in_action_space(self, action: Any) -> bool:
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        return bool(is_int(action) and 0 <= action < self.raw.num_actions)
