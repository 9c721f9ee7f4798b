"""`solo_optimal`: the optimal solo policy, read off the solver's value table.

It plays its own sheet as if the game were solo: on its own rolls it chooses the white cross
jointly with the colour cross it will then make (it sees all six dice), and the colour cross
or pass; on other players' rolls it crosses the white sum only where the table says the
sheet gains by it. Rows locked by anyone count as locked. In a solo game this is the optimal
policy; with opponents it ignores them (their locks and penalties end the game too, which a
solo table cannot foresee).

Classic only: the solver covers neither Qwixx Longo nor a sheet of another shape (three rows,
cells of mixed colours), and `make` says so. The first bot made
in a process loads the table (solving and caching it first if the cache is empty);
`directory` names another cache folder, and `rebuild=True` solves it again (once per process).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env.bots import registry
from qwixx_env.core.checks import check_flag
from qwixx_env.core.observation import ObservationView
from qwixx_env.core.options import TableOptions
from qwixx_env.core.variant import get_variant
from qwixx_env.solver import load_table, policy, table_path
from qwixx_env.solver.states import check_solvable, row_code

_REBUILT: set[Path] = set()  # the tables solved again in this process (`rebuild`), by file


class SoloOptimalBot(registry.TableBot):
    """Maximises the solo value table at every decision (see the module docstring)."""

    name = "solo_optimal"

    def __init__(self, table: TableOptions = registry.DEFAULT_TABLE, *, seed: int | None = None,
                 directory: str | os.PathLike[str] | None = None, rebuild: bool = False):
        if directory is not None and not isinstance(directory, (str, os.PathLike)):
            raise ValueError(f"directory: got {directory!r}; expected the solver's cache folder (a path) or None")
        check_flag("rebuild", rebuild)
        self.check_table(table)
        super().__init__(table)
        # the solver's table of the variant as printed (its own score table); `rebuild` solves
        # again once per process: an arena makes a bot per game
        variant = get_variant(table.variant)
        path = table_path(variant, directory)
        self.solution = load_table(variant, directory=directory, rebuild=rebuild and path not in _REBUILT)
        if rebuild:
            _REBUILT.add(path)
        self._values = self.solution.values
        self._space = self.solution.space
        self._tables = self.solution.variant.tables

    @staticmethod
    def check_table(table: TableOptions) -> None:
        """Refuse a variant the solo solver does not cover (the registry's `check_table`); any
        number of players, as the bot plays its own sheet."""
        try:
            check_solvable(table.rules)
        except ValueError as err:
            raise ValueError(f"variant: got {table.variant!r}; the solo_optimal bot plays 'classic' only, what the "
                             f"solo solver covers ({err})") from None

    def _sheet(self, view: ObservationView) -> tuple[np.ndarray, int]:
        """Own row codes (a row is locked when anyone locked it) and penalties."""
        crosses = view.crosses[0]
        locked = view.locked_rows
        rows = [row_code(self._space, np.flatnonzero(crosses[r]), locked[r]) for r in range(self.variant.num_rows)]
        return np.array(rows, np.int64), int(view.penalties[0])

    def act(self, observation: dict[str, Any]) -> int:
        view = ObservationView(observation, self.variant, self.num_players)
        mask = view.action_mask
        if mask is None:
            raise ValueError("act needs the observation dict with its 'action_mask'")
        if not mask.any():
            raise ValueError(registry.NO_LEGAL_ACTION)
        rows, pen = self._sheet(view)
        seen = view.dice
        dice = np.array([d or 0 for d in [*seen["white"], *(seen[c] for c in self.variant.dice_colors)]], np.int64)
        args = (self._values, self._space, self._tables, rows, pen, dice)
        phase = view.phase
        if phase == "white":
            if view.is_active:
                return int(policy.white_action_active(*args, mask))
            return int(policy.white_action_other(*args, mask))
        if phase == "color":
            return int(policy.color_action(*args, view.active_crossed, mask))
        raise ValueError(f"observation: phase {phase!r} is not a decision the solo_optimal bot makes")


registry.register("solo_optimal", SoloOptimalBot)
