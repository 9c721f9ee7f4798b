"""Variants of the game as data: the sheet, the dice, the lock rule, the score table.

Classic Qwixx and Qwixx Longo are two instances of one frozen dataclass; nothing in the
project branches on a variant's name. `get_variant` turns the user-facing options
(``variant="longo", lucky="instead"``) into a `Variant`, and `encode_action` /
`decode_action` translate between action indices and marks such as ``("green", 9)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from qwixx_env.core.checks import check_int, is_int

COLORS = ("red", "yellow", "green", "blue")
LUCKY_RULES = ("bonus", "instead")
VARIANT_NAMES = ("classic", "longo")  # the package's own; `variant_names()` adds the registered ones

Mark = tuple[str, int] | None


class RuleTables(NamedTuple):
    """A variant flattened into plain numbers and arrays, for the compiled rules kernels."""

    cells: int  # numbers per row (K)
    faces: int
    first_lock_cell: int  # cells at this index or right of it are lock cells
    lock_threshold: int  # crosses a row needs before a lock cell may be crossed
    lucky_rule: int  # 0: no lucky numbers, 1: bonus, 2: instead
    lucky_count: int
    penalty_points: int
    max_penalties: int
    rows_to_end: int
    cell_of: np.ndarray  # (4, 2*faces + 1) int64: cell of number s in row r, or -1
    number_of: np.ndarray  # (4, K) int64: the number printed in each cell
    score_table: np.ndarray  # (max crosses + 1,) int64: points for n crosses


def _check_int(name: str, value: object, minimum: int, maximum: int | None = None) -> None:
    """Refuse a `Variant` field that is not an integer in ``minimum .. maximum``, naming it."""
    accepted = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
    check_int(name, value, minimum=minimum, maximum=maximum, accepted=f"an integer {accepted}")


@dataclass(frozen=True)
class Variant:
    """Everything that distinguishes one version of the game from another.

    Rows are always red, yellow, green, blue; red and yellow ascend, green and blue descend.
    The last `lock_cells` numbers of a row are lock cells: crossing one needs
    `lock_threshold` crosses already in the row, crosses the lock too and locks the row.
    `score_table[n]` is what a row with n crosses (lock included) is worth.
    """

    name: str
    faces: int
    lock_cells: int
    lock_threshold: int
    score_table: tuple[int, ...]
    lucky_count: int = 0
    lucky_rule: str | None = None
    penalty_points: int = 5
    max_penalties: int = 4
    rows_to_end: int = 2
    tables: RuleTables = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the state's arrays bound them: a row is an int32 bitmask (at most 31 cells, so 16
        # faces), a sheet carries two lucky numbers, penalties are int8
        _check_int("faces", self.faces, 2, 16)
        _check_int("lock_cells", self.lock_cells, 1, self.cells - 1)
        _check_int("lock_threshold", self.lock_threshold, 0)
        _check_int("lucky_count", self.lucky_count, 0, 2)
        if self.lucky_count == 1:
            raise ValueError("lucky_count: got 1; expected 0 (no lucky numbers) or 2 (Longo's two per sheet)")
        _check_int("penalty_points", self.penalty_points, 0)
        _check_int("max_penalties", self.max_penalties, 1, 127)
        _check_int("rows_to_end", self.rows_to_end, 1, 4)
        if self.lucky_count and self.lucky_rule not in LUCKY_RULES:
            raise ValueError(f"lucky: got {self.lucky_rule!r}; expected one of {LUCKY_RULES}")
        max_crosses = self.cells + 1  # every number and the lock, an upper bound
        if len(self.score_table) < max_crosses + 1:
            raise ValueError(
                f"score_table: got {len(self.score_table)} entries; the {self.name} sheet "
                f"needs at least {max_crosses + 1} (0 to {max_crosses} crosses)"
            )
        number_of = np.array(self.row_numbers, dtype=np.int64)
        cell_of = np.full((4, 2 * self.faces + 1), -1, dtype=np.int64)
        for r in range(4):
            cell_of[r, number_of[r]] = np.arange(self.cells)
        tables = RuleTables(
            cells=self.cells,
            faces=self.faces,
            first_lock_cell=self.cells - self.lock_cells,
            lock_threshold=self.lock_threshold,
            lucky_rule=0 if not self.lucky_count else 1 + LUCKY_RULES.index(self.lucky_rule),
            lucky_count=self.lucky_count,
            penalty_points=self.penalty_points,
            max_penalties=self.max_penalties,
            rows_to_end=self.rows_to_end,
            cell_of=cell_of,
            number_of=number_of,
            score_table=np.array(self.score_table, dtype=np.int64),
        )
        object.__setattr__(self, "tables", tables)

    @property
    def cells(self) -> int:
        """Numbers per row: 11 in classic (2 to 12), 15 in Longo (2 to 16)."""
        return 2 * self.faces - 1

    @property
    def numbers(self) -> tuple[int, ...]:
        """Every number a sheet shows, ascending (also the possible sums of two dice)."""
        return tuple(range(2, 2 * self.faces + 1))

    @property
    def row_numbers(self) -> tuple[tuple[int, ...], ...]:
        """The numbers of each row in sheet order (left to right)."""
        up = self.numbers
        return (up, up, up[::-1], up[::-1])

    @property
    def num_actions(self) -> int:
        """Size of the action space: one action per cell of the sheet, then pass."""
        return 4 * self.cells + 1

    @property
    def pass_action(self) -> int:
        return 4 * self.cells

    @property
    def lock_numbers(self) -> tuple[tuple[int, ...], ...]:
        """The lock cells' numbers of each row."""
        return tuple(row[self.cells - self.lock_cells :] for row in self.row_numbers)

    def max_rolls(self, num_players: int) -> int:
        """The most rolls a game of `num_players` can last: each roll the active seat crosses a
        number or takes a penalty, and a seat's last penalty ends the game, so there are at most
        ``4 * cells`` crosses a sheet and ``(max_penalties - 1)`` penalties a seat, plus the one
        that ends it."""
        return 4 * self.cells * num_players + (self.max_penalties - 1) * num_players + 1

    def with_score_table(self, score_table: Sequence[int]) -> Variant:
        """The same variant scored with another table (`score_table[n]` for n crosses)."""
        return replace(self, score_table=tuple(int(s) for s in score_table))


def _triangular(n: int) -> tuple[int, ...]:
    return tuple(k * (k + 1) // 2 for k in range(n + 1))


CLASSIC = Variant(name="classic", faces=6, lock_cells=1, lock_threshold=5, score_table=_triangular(12))
LONGO = Variant(
    name="longo",
    faces=8,
    lock_cells=2,
    lock_threshold=6,
    score_table=_triangular(16),
    lucky_count=2,
    lucky_rule="bonus",
)


_REGISTRY: dict[str, Variant] = {}  # name -> Variant: what a table may name (`register_variant`)


def register_variant(variant: Variant) -> Variant:
    """Make `variant` playable by its name wherever a table is named: ``TableOptions(variant=
    name)``, ``qwixx_v0.env(variant=name)``, a config, a record (``TableOptions(variant=
    variant)`` registers it itself). Its name must be new, or name an equal `Variant` (then
    nothing changes); another `Variant` under a taken name is a `ValueError`, as is a name
    that is not a short word. Returns `variant`. Registration lasts for the process: a program
    that plays a variant of its own registers it at import, as the package does "classic"
    and "longo" (a `TableOptions` sent to another process carries its variant along)."""
    if not isinstance(variant, Variant):
        raise ValueError(f"register_variant: got {variant!r}; expected a qwixx_env.core.variant.Variant")
    name = variant.name
    if not (isinstance(name, str) and 0 < len(name) <= 40 and name.replace("_", "").replace("-", "").isalnum()):
        raise ValueError(f"variant name: got {name!r}; expected a short word (letters, digits, '_' or '-')")
    known = _REGISTRY.get(name)
    if known is not None and known != variant:
        raise ValueError(f"variant {name!r} is registered already, as {known!r}; give yours another name")
    _REGISTRY[name] = variant
    return variant


def variant_names() -> tuple[str, ...]:
    """The names a table may use: the package's (`VARIANT_NAMES`), then those registered since."""
    return tuple(_REGISTRY)


register_variant(CLASSIC)
register_variant(LONGO)


def get_variant(variant: str | Variant = "classic", lucky: str | None = None) -> Variant:
    """The `Variant` for a registered name (``"classic"``, ``"longo"``, or one given to
    `register_variant`) and a lucky rule (variants with lucky numbers only).

    A `Variant` instance passes through unchanged (with its lucky rule replaced if `lucky`
    is given). Raises `ValueError` naming the option and what is accepted.
    """
    if isinstance(variant, Variant):
        base = variant
    elif isinstance(variant, str) and variant in _REGISTRY:
        base = _REGISTRY[variant]
    else:
        raise ValueError(f"variant: got {variant!r}; expected one of {variant_names()} (or a Variant; "
                         "register_variant makes one playable by name)")
    if lucky is None:
        return base
    if not base.lucky_count:
        if lucky == "bonus":
            return base  # the default rule: harmless where there are no lucky numbers
        raise ValueError(
            f"lucky: got {lucky!r}; the {base.name!r} variant has no lucky numbers, "
            "so lucky must be 'bonus' (the default) or unset; 'instead' is for variant='longo'"
        )
    if lucky not in LUCKY_RULES:
        raise ValueError(f"lucky: got {lucky!r}; expected one of {LUCKY_RULES}")
    return replace(base, lucky_rule=lucky)


def encode_action(mark: Mark, variant: str | Variant = "classic") -> int:
    """The action index of a mark: ``None`` is pass, ``("green", 9)`` crosses green 9.

    Raises `ValueError` if the colour or number is not on the variant's sheet.
    """
    v = get_variant(variant)
    if mark is None:
        return v.pass_action
    try:
        color, number = mark
    except (TypeError, ValueError):
        raise ValueError(
            f"mark: got {mark!r}; expected None (pass) or a (color, number) pair such as ('green', 9)"
        ) from None
    if color not in COLORS:
        raise ValueError(f"mark: got color {color!r}; expected one of {COLORS}")
    row = COLORS.index(color)
    if not isinstance(number, (int, np.integer)) or number not in v.numbers:
        raise ValueError(
            f"mark: got number {number!r} for {color}; the {v.name} sheet has "
            f"{v.numbers[0]} to {v.numbers[-1]}"
        )
    return row * v.cells + int(v.tables.cell_of[row, number])


def decode_action(action: int, variant: str | Variant = "classic") -> Mark:
    """The mark of an action index: ``None`` for pass, else ``(color, number)``.

    Raises `ValueError` if the index is outside ``0 .. 4*K``.
    """
    v = get_variant(variant)
    if not (is_int(action) and 0 <= action <= v.pass_action):
        raise ValueError(
            f"action: got {action!r}; expected an integer from 0 to {v.pass_action} "
            f"({v.pass_action} is pass) for the {v.name} variant"
        )
    if action == v.pass_action:
        return None
    row, cell = divmod(int(action), v.cells)
    return COLORS[row], int(v.tables.number_of[row, cell])


def mark_text(action: int, variant: str | Variant = "classic") -> str:
    """An action as the error messages and the game's text name it: ``"red 7"`` or ``"pass"``.
    Raises `ValueError` for an index outside the variant's action space (`decode_action`)."""
    mark = decode_action(action, variant)
    return "pass" if mark is None else f"{mark[0]} {mark[1]}"
