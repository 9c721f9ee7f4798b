"""The exact solo solver: the optimal expected score of solo Qwixx and of every solo sheet.

Solo Qwixx is small enough to solve by dynamic programming over sheets (`dp`): about 1.4
million sheets up to the game's symmetries (`states`), four penalty counts each. The value
table is cached on disk (`table`) and drives the optimal bot (`policy`,
``bots.make("solo_optimal")``).

>>> from qwixx_env import solver
>>> table = solver.load_table()        # solves and caches it the first time
>>> round(table.root, 4)
115.4831
>>> round(solver.expected_score({"marks": {"red": [2, 3]}, "locks": [], "penalties": 1}), 4)
117.7511

The command line does the same: ``qwixx solve``. See docs/solver.md for the method and figures.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from qwixx_env.core.variant import Variant
from qwixx_env.solver.states import check_solvable
from qwixx_env.solver.table import ValueTable, cache_dir, load_table, solve, table_path


def expected_score(
    sheet: dict[str, Any],
    *,
    locked_rows: Iterable[str] = (),
    variant: str | Variant = "classic",
) -> float:
    """The optimal expected final score of a solo sheet (points so far + expected further points).

    `sheet` is given like one player of the environment's snapshot: ``{"marks": {"red":
    [2, 5], ...}, "locks": ["green"], "penalties": 1}``; `locked_rows` names rows another
    player locked. The position is before a roll. Loads (or first solves) the cached table.
    """
    return load_table(variant).expected_score(sheet, locked_rows)


def solvable(variant: Variant) -> bool:
    """Whether the solo solver covers `variant` (`check_solvable` says why not)."""
    try:
        check_solvable(variant)
    except ValueError:
        return False
    return True


__all__ = ["ValueTable", "cache_dir", "expected_score", "load_table", "solvable", "solve", "table_path"]
