"""The solved value table: what every solo sheet is worth, and its cache on disk.

`ValueTable` wraps the solver's array `values[combo, penalties]` (expected further points,
see `dp`) with the variant it was solved for, and answers "what is this sheet worth?".
`load_table` returns the table of a variant from the user cache directory, solving and saving
it first when it is missing. The cache directory is ``$QWIXX_ENV_CACHE`` if set, else
``$XDG_CACHE_HOME/qwixx_env``, else ``~/.cache/qwixx_env``.

On disk a table is one uncompressed ``.npz``: the values as float32 (22 MB for classic; the
solver works in float64, so every entry is off by at most its float32 rounding, about 1e-5),
the root value in float64, and a key of every rule parameter the values depend on, so a
changed score table or penalty rule never reads a stale file. It is written to a temporary
file in the same directory and moved into place, so a reader never sees half a table.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env.core.compile import cache_root
from qwixx_env.core.variant import Variant, get_variant
from qwixx_env.files import folder_problem, write_atomically
from qwixx_env.solver import dp
from qwixx_env.solver.states import Space, check_solvable, combo_index, make_space, sheet_codes

FORMAT = 1  # bump when the meaning or layout of the stored values changes

# Said when a solve starts without a progress callback: a first use otherwise looks like a hang
# (as the kernels' first-compile notice, `qwixx_env.core.compile`). The times are docs/solver.md's
# (idle machine, then a shared one, compiling included); `qwixx solve` shows a progress bar instead.
SOLVING_MESSAGE = "qwixx_env: solving the solo %s table once (about 15 to 40 s); cached at %s"
logger = logging.getLogger("qwixx_env")


def cache_dir() -> Path:
    """The directory the value tables are cached in (see the module docstring)."""
    return cache_root()


def table_key(variant: Variant) -> dict[str, Any]:
    """Every rule parameter the solo values depend on (stored with the table, and hashed into its name)."""
    return {
        "format": FORMAT,
        "faces": variant.faces,
        "lock_cells": variant.lock_cells,
        "lock_threshold": variant.lock_threshold,
        "score_table": list(variant.score_table),
        "penalty_points": variant.penalty_points,
        "max_penalties": variant.max_penalties,
        "rows_to_end": variant.rows_to_end,
    }


def table_path(variant: Variant, directory: str | os.PathLike | None = None) -> Path:
    """Where the table of `variant` lives in `directory` (default: `cache_dir()`)."""
    digest = hashlib.sha256(json.dumps(table_key(variant), sort_keys=True).encode()).hexdigest()[:12]
    return Path(directory or cache_dir()) / f"solo-{variant.name}-{digest}.npz"


def further_bounds(variant: Variant) -> tuple[float, float]:
    """The range of the optimal "points still to come" from any solo sheet. At worst every
    penalty is still to be taken: crossing nothing is always allowed, so the optimum never
    does worse. At best each row moves from `score_table[k]` to the best
    `score_table[j]`, j >= k (a custom table may fall before it rises)."""
    t = variant.score_table
    best_gain = max(t[j] - t[k] for k in range(len(t)) for j in range(k, len(t)))
    return -variant.penalty_points * variant.max_penalties, variant.num_rows * best_gain


@dataclass
class ValueTable:
    """The optimal expected further points of every solo sheet of one variant.

    `values[combo_index(red, yellow, green, blue), penalties]` for the row codes of `states`;
    `root` is the optimal expected final score of a solo game (the empty sheet's value).
    """

    variant: Variant
    values: np.ndarray
    root: float = float("nan")  # the empty sheet's value in float64 (NaN: read it from values)
    solve_seconds: float | None = None  # how long the solve took, when this process solved it
    space: Space = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.space = make_space(self.variant)
        if np.isnan(self.root):
            self.root = float(self.values[0, 0])
        shape = (self.space.num_combos, self.variant.max_penalties)
        if self.values.shape != shape:
            raise ValueError(f"values: got shape {self.values.shape}; the {self.variant.name} table has {shape}")

    def further(self, codes: Iterable[int], penalties: int) -> float:
        """Expected further points of the sheet with these row codes; 0 once the game is over."""
        codes = list(codes)
        if sum(c == self.space.locked for c in codes) >= self.variant.rows_to_end:
            return 0.0
        if penalties >= self.variant.max_penalties:
            return 0.0
        return float(self.values[combo_index(*codes), penalties])

    def expected_score(self, sheet: dict[str, Any], locked_rows: Iterable[str] = ()) -> float:
        """The optimal expected final score of a solo sheet: its points so far plus `further`.

        `sheet` is one player of a snapshot (``{"marks": ..., "locks": ..., "penalties": ...}``);
        `locked_rows` adds rows locked by another player (their dice are out of play too).
        The sheet stands before a roll: nothing of the current roll is pending.
        """
        codes, penalties = sheet_codes(self.variant, self.space, sheet, locked_rows)
        marks, locks = sheet.get("marks", {}), sheet.get("locks", [])
        table = self.variant.score_table
        banked = sum(table[len(marks.get(c, [])) + (c in locks)] for c in self.variant.row_names)
        banked -= self.variant.penalty_points * penalties
        return banked + self.further(codes, penalties)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the table (float32) whole or not at all (`files.write_atomically`)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        np.savez(
            buffer,
            values=self.values.astype(np.float32),
            root=np.float64(self.root),
            key=np.array(json.dumps(table_key(self.variant), sort_keys=True)),
        )
        write_atomically(path, buffer.getvalue())
        return path

    @classmethod
    def load(cls, path: str | os.PathLike, variant: str | Variant = "classic") -> ValueTable:
        """Read a saved table; raises `ValueError` if it was solved under other rules."""
        v = get_variant(variant)
        with open(path, "rb") as f, np.load(f) as data:
            key = json.loads(str(data["key"]))
            if key != table_key(v):
                raise ValueError(f"{path}: solved for {key}, not for the {v.name} rules {table_key(v)}")
            values, root = data["values"], float(data["root"])
        # the zip's CRC catches a damaged file; these catch a consistent but altered one
        if values.dtype != np.float32 or values.ndim != 2 or values.shape[1] != v.max_penalties:
            raise ValueError(f"{path}: values are {values.dtype} {values.shape}; expected float32 (combos, penalties)")
        low, high = further_bounds(v)
        if not np.isfinite(values).all() or values.min() < low or values.max() > high:
            raise ValueError(f"{path}: values outside {low}..{high} (NaN, or altered)")
        if abs(root - float(values[0, 0])) > 1e-3:
            raise ValueError(f"{path}: root {root} differs from the table's own value {float(values[0, 0])}")
        return cls(v, values, root=root)


def solve(variant: str | Variant = "classic", progress: Callable[[int, int], None] | None = None) -> ValueTable:
    """Solve a variant from nothing (docs/solver.md has the time it takes); nothing is cached.

    `progress(done, total)` is called as layers of sheets are solved. Raises `ValueError`
    for variants the solver does not cover (Longo: two lock cells and lucky numbers).
    """
    v = get_variant(variant)
    check_solvable(v)
    start = time.perf_counter()
    values = dp.solve_values(v, progress)
    return ValueTable(v, values, solve_seconds=time.perf_counter() - start)


_LOADED: dict[Path, ValueTable] = {}
# One load or solve at a time: concurrent first callers (the play server's background
# preparation and a terminal game, two threads of one test) wait for the one solve and then
# share its table instead of each solving for a minute and writing the same file.
_LOAD_LOCK = threading.Lock()


def load_table(
    variant: str | Variant = "classic",
    *,
    directory: str | os.PathLike | None = None,
    rebuild: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ValueTable:
    """The value table of a variant: from memory, else from the cache, else solved and saved.

    `directory` overrides the cache directory; `rebuild` solves again even if a table exists.
    An unreadable or mismatched file is solved again and replaced (with a warning). Callers in
    several threads share one load or solve (a lock). A solve without a `progress` callback
    first logs (logger ``qwixx_env``, WARNING) what it does, about how long it takes and where
    the table is kept.
    """
    v = get_variant(variant)
    check_solvable(v)
    path = table_path(v, directory)
    with _LOAD_LOCK:
        return _load_or_solve(v, path, rebuild, progress)


def _load_or_solve(
    v: Variant, path: Path, rebuild: bool, progress: Callable[[int, int], None] | None
) -> ValueTable:
    """`load_table`'s work, under its lock."""
    if not rebuild:
        if path in _LOADED:
            return _LOADED[path]
        if path.exists():
            try:
                table = ValueTable.load(path, v)
            except Exception as err:  # any damage (numpy and zipfile raise many kinds): solve again
                warnings.warn(f"solo value table {path} is unreadable ({err}); solving again", stacklevel=3)
            else:
                _LOADED[path] = table
                return table
    problem = folder_problem(path.parent, create=True)  # before the solve, not after it
    if problem:
        raise ValueError(f"directory: {str(path.parent)!r} {problem}; expected a folder to keep the solo table in "
                         "(qwixx solve --cache-dir)")
    if progress is None:
        logger.warning(SOLVING_MESSAGE, v.name, path)
    solved = solve(v, progress)
    solved.save(path)
    # Keep what a later process will load (float32), so the policy is the same either way.
    table = ValueTable(v, solved.values.astype(np.float32), solved.root, solved.solve_seconds)
    _LOADED[path] = table
    return table
