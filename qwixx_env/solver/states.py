"""The solo state space: one row as a small code, a whole sheet as one canonical index.

A row of a solo sheet matters to the rest of the game only through its rightmost cross `p`
(a cell index in sheet order, -1 for an empty row) and its number of crosses `n`, or through
being locked: which cells left of `p` are crossed no longer changes what may be crossed, and a
locked row's points are already banked. Every open row state gets a *row code*::

    code 0             the empty row                (p = -1, n = 0)
    code 1 + T(p) + n-1 p in 0 .. K-2, n in 1 .. p+1 (T(p) = p(p+1)/2)
    code LOCKED        the last code: a locked row

so classic Qwixx (K = 11) has 56 open codes and one locked code.

The solver covers the classic sheet's shape only (`check_solvable`): four rows of the sums
2 to 2F, the first two ascending and the last two descending, each row crossed with a die of
its own (red, yellow, green and blue in classic, by sheet order here).
Red and yellow are interchangeable, so are green and blue, and mirroring every die (x -> F+1-x)
turns the red/yellow pair into the green/blue pair: row r crosses cell `s - 2` for a sum s
on red/yellow and cell `2F - s` on green/blue, and the mirrored sum `2F + 2 - s` lands on the
same cell index. So the value of a sheet depends only on the unordered pair of unordered
pairs of row codes. `combo_index` numbers those with triangular numbers::

    pair_index(a, b) = hi(hi+1)/2 + lo          (lo, hi = sorted a, b)
    combo_index(r, y, g, b) = pair_index(pair_index(r, y), pair_index(g, b))

which is dense (1,367,031 combinations in classic, every one a valid sheet; those with two
locked rows are over and stay worth 0). The functions here are compiled so that the solver,
the bot and `expected_score` share one definition.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from qwixx_env.core.checks import is_int
from qwixx_env.core.compile import kernel
from qwixx_env.core.rules import may_cross
from qwixx_env.core.snapshot import PLAYER_FIELDS
from qwixx_env.core.variant import Variant, get_variant


class Space(NamedTuple):
    """The row codes of one variant, as plain numbers and arrays for the compiled kernels."""

    cells: int  # K: numbers per row; cell K-1 is the lock cell
    locked: int  # the row code of a locked row (the last code)
    num_codes: int  # open codes + 1
    num_pairs: int  # unordered pairs of row codes
    num_combos: int  # unordered pairs of pairs: the rows of the value table
    row_p: np.ndarray  # (num_codes,) int64: rightmost crossed cell; -1 empty; K-1 when locked
    row_n: np.ndarray  # (num_codes,) int64: crosses in the row (0 for a locked row: banked)
    code_of: np.ndarray  # (K, K) int64: code of the open row [p + 1, n]; -1 where impossible


def make_space(variant: Variant) -> Space:
    """The row codes for a variant's sheet (one lock cell per row; see `check_solvable`)."""
    K = variant.cells
    code_of = np.full((K, K), -1, np.int64)
    row_p, row_n = [-1], [0]
    code_of[0, 0] = 0
    for p in range(K - 1):  # the lock cell K-1 is never the rightmost cross of an open row
        for n in range(1, p + 2):
            code_of[p + 1, n] = len(row_p)
            row_p.append(p)
            row_n.append(n)
    row_p.append(K - 1)
    row_n.append(0)
    num_codes = len(row_p)
    num_pairs = num_codes * (num_codes + 1) // 2
    return Space(
        cells=K,
        locked=num_codes - 1,
        num_codes=num_codes,
        num_pairs=num_pairs,
        num_combos=num_pairs * (num_pairs + 1) // 2,
        row_p=np.array(row_p, np.int64),
        row_n=np.array(row_n, np.int64),
        code_of=code_of,
    )


def check_solvable(variant: Variant) -> None:
    """Raise `ValueError` unless the solver covers this variant: one lock cell, no lucky numbers,
    and the classic sheet's shape, whose symmetries the state space is built on (see the module
    docstring; the rows' names may be any)."""
    if variant.lucky_count or variant.lock_cells != 1:
        raise ValueError(
            f"variant: the solo solver covers sheets with one lock cell per row and no lucky "
            f"numbers (classic Qwixx and reduced versions of it); got {variant.name!r} with "
            f"{variant.lock_cells} lock cells and {variant.lucky_count} lucky numbers"
        )
    problem = _sheet_shape_problem(variant)
    if problem:
        up = f"2 to {2 * variant.faces}"
        raise ValueError(
            f"variant: the solo solver covers the classic sheet's shape only: four rows of the numbers {up}, "
            f"two ascending then two descending, each row crossed with a die of its own colour; "
            f"got {variant.name!r}, {problem}"
        )


def _sheet_shape_problem(variant: Variant) -> str | None:
    """How the sheet of `variant` differs from the classic shape (`check_solvable`), or None."""
    if variant.num_rows != 4:
        return f"which has {variant.num_rows} rows {variant.row_names}"
    up = tuple(range(2, 2 * variant.faces + 1))
    for row, expected in zip(variant.rows, (up, up, up[::-1], up[::-1])):
        if row.numbers != expected:
            return f"whose row {row.name!r} has the numbers {list(row.numbers)}, not {list(expected)}"
    if variant.tables.cell_die.tolist() != [[r] * variant.cells for r in range(4)]:
        dice = {row.name: list(dict.fromkeys(row.colors)) for row in variant.rows}
        return f"whose rows are crossed with the dice {dice}"
    return None


@kernel()
def pair_index(a, b):
    """Index of the unordered pair {a, b} (triangular numbering)."""
    if a > b:
        a, b = b, a
    return b * (b + 1) // 2 + a


@kernel()
def combo_index(red, yellow, green, blue):
    """Canonical index of a sheet's four row codes: one per class of symmetric sheets."""
    return pair_index(pair_index(red, yellow), pair_index(green, blue))


@kernel()
def cross(sp, tb, code, c):
    """(row code after crossing cell c, points the cross adds), or (-1, 0.0) if the rules forbid it.

    Legality is the core's `may_cross` on a row of n crosses ending at cell p (which of the
    cells left of p are crossed changes nothing); a lock cell crosses the lock too.
    """
    if code == sp.locked:
        return -1, 0.0
    p = sp.row_p[code]
    n = sp.row_n[code]
    marks = ((1 << n) - 1) << (p - n + 1)
    if not may_cross(tb, marks, c):
        return -1, 0.0
    table = tb.score_table
    if c >= tb.first_lock_cell:
        return sp.locked, float(table[n + 2] - table[n])
    return sp.code_of[c + 1, n + 1], float(table[n + 1] - table[n])


def row_code(space: Space, crossed_cells: list[int] | np.ndarray, locked: bool) -> int:
    """The code of one row from its crossed cells left of the lock cell, or of a locked row."""
    if locked:
        return space.locked
    if len(crossed_cells) == 0:
        return 0
    return int(space.code_of[max(crossed_cells) + 1, len(crossed_cells)])


def check_sheet(sheet: Any, locked_rows: Any = (), variant: str | Variant = "classic") -> None:
    """The shape of a snapshot-style sheet, checked without the solver's tables: an object of
    `PLAYER_FIELDS` (a snapshot's player; "score" and "lucky_numbers" are not read) whose marks
    map row names (`variant`'s) to lists and whose locks (and `locked_rows`) are lists of row
    names; a `ValueError` naming what is wrong (the numbers: `sheet_codes`)."""
    names = get_variant(variant).row_names
    if not isinstance(sheet, dict):
        raise ValueError(f"sheet: got {sheet!r}; expected an object like one player of a snapshot, "
                         "e.g. {'marks': {'red': [2, 3]}, 'locks': [], 'penalties': 1}")
    unknown = sorted(set(sheet) - set(PLAYER_FIELDS), key=str)
    if unknown:
        raise ValueError(f"sheet: got field(s) {unknown}; expected some of {list(PLAYER_FIELDS)}")
    marks = sheet.get("marks", {})
    if not isinstance(marks, dict) or not all(isinstance(v, (list, tuple)) for v in marks.values()):
        raise ValueError(f"sheet: marks {marks!r}; expected an object of rows to lists of numbers, "
                         "e.g. {'red': [2, 3], 'green': [12]}")
    for field, rows in (("locks", sheet.get("locks", [])), ("locked_rows", locked_rows)):
        if isinstance(rows, (str, bytes, dict)) or not hasattr(rows, "__iter__"):
            raise ValueError(f"sheet: {field} {rows!r}; expected a list of row names from {names}")
    for name in [*marks, *sheet.get("locks", []), *locked_rows]:
        if name not in names:
            raise ValueError(f"sheet: got row {name!r}; expected one of {names}")


def sheet_codes(
    variant: Variant, space: Space, sheet: dict, locked_rows: Iterable[str] = ()
) -> tuple[list[int], int]:
    """Row codes (in sheet order: red, yellow, green, blue in classic) and penalties of a
    snapshot-style sheet.

    `sheet` is one player of `snapshot()`: ``{"marks": {"red": [2, 5], ...}, "locks": [...],
    "penalties": 1}``. A row is locked when the sheet crossed its lock or it is in
    `locked_rows` (rows another player locked). Raises `ValueError` on numbers that are not
    on the row or crossed twice, a lock without its lock cell, a lock cell crossed without the
    crosses it needs, or penalties that are not a whole number from 0 to the maximum.
    """
    if hasattr(locked_rows, "__iter__") and not isinstance(locked_rows, (str, bytes, dict)):
        locked_rows = tuple(locked_rows)  # once: a generator is read here, not by the check
    check_sheet(sheet, locked_rows, variant)
    marks, locks = sheet.get("marks", {}), set(sheet.get("locks", []))
    codes = []
    for r, color in enumerate(variant.row_names):
        cells = []
        for number in marks.get(color, []):
            if not is_int(number) or number not in variant.row_numbers[r]:
                raise ValueError(f"sheet: {color} has no number {number!r}")
            cells.append(int(variant.tables.cell_of[r, number]))
        if len(set(cells)) != len(cells):
            raise ValueError(f"sheet: {color} marks {marks.get(color, [])} cross a number twice")
        lock_crossed = space.cells - 1 in cells
        before_lock = sum(1 << c for c in cells if c != space.cells - 1)
        if lock_crossed and not may_cross(variant.tables, before_lock, space.cells - 1):  # rule 5, in the core
            raise ValueError(
                f"sheet: {color} crosses its lock cell {variant.lock_numbers[r][0]} after {len(cells) - 1} "
                f"crosses; it needs {variant.lock_threshold} first"
            )
        if (color in locks) != lock_crossed:
            raise ValueError(
                f"sheet: {color} lock and lock cell {variant.lock_numbers[r][0]} go together "
                f"(locks lists {sorted(locks)}, {color} marks {marks.get(color, [])})"
            )
        codes.append(row_code(space, [c for c in cells if c < space.cells - 1], lock_crossed or color in locked_rows))
    penalties = sheet.get("penalties", 0)
    if not (is_int(penalties) and 0 <= penalties <= variant.max_penalties):
        raise ValueError(f"sheet: penalties {penalties!r}; expected a whole number from 0 to {variant.max_penalties}")
    penalties = int(penalties)
    return codes, penalties
