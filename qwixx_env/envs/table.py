"""`QwixxTable`: what the wrappers and views of the AEC env read from the raw env under them.

`qwixx_v0` builds `GuardedEnv` (`env()`) and `ParallelQwixx` (`parallel_env()`) around its
`raw_env`; they reach the raw env through this protocol, not through `qwixx_v0` itself, so the
modules import one way only (`raw_env` satisfies it: pyright checks the assignment in `qwixx_v0`).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from gymnasium import spaces

from qwixx_env.core.engine import Engine
from qwixx_env.core.observation import ObservationLayout
from qwixx_env.core.options import TableOptions
from qwixx_env.core.state import State
from qwixx_env.core.variant import Variant


class QwixxTable(Protocol):
    """The raw AEC env of one Qwixx table, as its wrappers and views use it."""

    table: TableOptions
    variant: Variant
    engine: Engine
    layout: ObservationLayout
    reward_mode: str
    num_actions: int
    render_mode: str | None
    metadata: dict[str, Any]
    possible_agents: list[str]
    agents: list[str]
    agent_name_mapping: dict[str, int]
    agent_selection: str
    rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, dict[str, Any]]
    observation_spaces: dict[str, spaces.Space]
    action_spaces: dict[str, spaces.Space]

    @property
    def core_state(self) -> State: ...

    def step(self, action: int | None) -> None: ...

    def snapshot(self) -> dict[str, Any]: ...

    def record(self) -> dict[str, Any]: ...

    def check_action(self, agent: str, action: Any, mask: np.ndarray | None = None) -> int: ...

    def is_legal(self, action: int) -> bool: ...

    def play_seats(self, seat_actions: np.ndarray) -> np.ndarray: ...

    def end_on_illegal(self, agent: str, illegal_reward: float, action: int | None = None) -> None: ...
