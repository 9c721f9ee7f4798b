"""`GuardedEnv`: PettingZoo's classic-game wrapper chain in one thin layer.

PettingZoo's classic games wrap their raw env in `TerminateIllegalWrapper` (an illegal move
ends the game; the offender's return here is `core.rewards.illegal_return`, worse than any legal
ending), `AssertOutOfBoundsWrapper` and `OrderEnforcingWrapper`.
Chained, those three cost more than the game itself: every attribute read in `last()` and
`agent_iter()` passes through three `__getattr__` hops. This wrapper gives the same behaviour
with one hop and direct calls on the hot path.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import BaseWrapper

from qwixx_env.core.rewards import check_illegal_reward
from qwixx_env.envs.table import QwixxTable

_NEEDS_RESET = {"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"}


class GuardedEnv(BaseWrapper):
    """Order enforcing, out-of-bounds assertion and terminate-on-illegal for a masked AEC env."""

    def __init__(self, env: AECEnv, illegal_reward: float | None = None):
        super().__init__(env)
        self.raw = raw = cast(QwixxTable, env.unwrapped)
        self.illegal_reward = check_illegal_reward(illegal_reward, raw.reward_mode, raw.variant)
        self._has_reset = False
        self._has_updated = False

    def __getattr__(self, name: str) -> Any:
        if name in _NEEDS_RESET and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return super().__getattr__(name)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._has_reset = True
        self._has_updated = True
        self.env.reset(seed=seed, options=options)

    def observe(self, agent: str):
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def last(self, observe: bool = True):
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def render(self):
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return self.env.render()

    def state(self):
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return self.env.state()

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _GuardedIterator(self, max_iter)

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        raw = self.raw
        if not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            assert action is None, "action is not in action space"  # only None once done
            raw.step(None)
            return
        # Discrete(n).contains, without its generality on the hot path; a bool is no action
        # index (Discrete.contains would take True for 1), as the raw env refuses it.
        assert (type(action) is int or isinstance(action, np.integer)) and 0 <= action < raw.num_actions or (
            not isinstance(action, (bool, np.bool_)) and raw.action_spaces[agent].contains(action)
        ), "action is not in action space"
        if not raw.is_legal(int(action)):
            self.end_on_illegal(agent, int(action))
            return
        self.env.step(action)

    def end_on_illegal(self, agent: str, action: int | None = None) -> None:
        """As PettingZoo's TerminateIllegalWrapper: the game ends; the offender's rewards for the
        game sum to `illegal_reward` (this step pays the rest), the others get 0."""
        EnvLogger.warn_on_illegal_move()
        self.raw.end_on_illegal(agent, self.illegal_reward, action)

    def take_update(self) -> bool:
        """Whether `step()` or `reset()` was called since the last agent of `agent_iter()`;
        clears the flag (PettingZoo's order enforcing)."""
        updated, self._has_updated = self._has_updated, False
        return updated

    def __str__(self) -> str:
        return str(self.env)


class _GuardedIterator:
    """`agent_iter()` that insists on a `step()` between two agents, like PettingZoo's."""

    def __init__(self, env: GuardedEnv, max_iter: int):
        self.env = env
        self.raw = env.raw
        self.left = max_iter

    def __iter__(self):
        return self

    def __next__(self) -> str:
        if not self.raw.agents or self.left <= 0:
            raise StopIteration
        assert self.env.take_update(), "need to call step() or reset() in a loop over `agent_iter`"
        self.left -= 1
        return self.raw.agent_selection
