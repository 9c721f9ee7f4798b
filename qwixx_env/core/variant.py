"""Variants of the game as data: the sheet, the dice, the lock rule, the score table.

Classic Qwixx and Qwixx Longo are two instances of one frozen dataclass; nothing in the
project branches on a variant's name. A sheet is a tuple of `Row` values (each row's name,
its numbers left to right, and the colour of the die each cell is crossed with); the classic
four rows are the default, and a member of the Qwixx family with other rows (three rows,
cells of mixed colours) is another `Variant`, registered with `register_variant`.
`get_variant` turns the user-facing options (``variant="longo", lucky="instead"``) into a
`Variant`; `resolve_variant` takes whatever a user may name a variant by (a registered name,
a sheet file, ``module:attribute``; `Variant.from_file` / `Variant.to_file` read and write the
file), and `encode_action` /
`decode_action` translate between action indices and marks such as ``("green", 9)``.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from qwixx_env.core.checks import check_int, is_int

if sys.version_info >= (3, 11):  # a sheet file in TOML: the standard library's reader
    import tomllib
else:  # pragma: no cover - Python 3.10: tomli, its original, a dependency there (pyproject.toml)
    import tomli as tomllib  # pyright: ignore[reportMissingImports] (installed on Python 3.10 only)

COLORS = ("red", "yellow", "green", "blue")
LUCKY_RULES = ("bonus", "instead")
MAX_ROWS = MAX_DICE = 8  # a sheet has at most 8 rows and 8 colours of dice
VARIANT_NAMES = ("classic", "longo")  # the package's own; `variant_names()` adds the registered ones
SHEET_SUFFIXES = (".json", ".toml")  # the files `Variant.from_file` reads and `Variant.to_file` writes

Mark = tuple[str, int] | None


class RuleTables(NamedTuple):
    """A variant flattened into plain numbers and arrays, for the compiled rules kernels."""

    # R rows (0, 1, ..., R - 1) and D coloured dice (0, ..., D - 1; the two white dice come
    # first in `State.dice`): tuples, so that a kernel knows R and D when it is compiled (a
    # tuple's length is part of its type; read them with `rules.rows_of`, `rules.dice_of`) and
    # unrolls its loops over them: loops to plain ints made the batched step of a classic game
    # several percent slower
    row_ids: tuple[int, ...] | np.ndarray  # an array only for a `prange` kernel (`solver.dp.parallel_tables`)
    die_ids: tuple[int, ...] | np.ndarray
    cells: int  # numbers per row (K)
    faces: int
    first_lock_cell: int  # cells at this index or right of it are lock cells
    lock_threshold: int  # crosses a row needs before a lock cell may be crossed
    lucky_rule: int  # 0: no lucky numbers, 1: bonus, 2: instead
    lucky_count: int
    penalty_points: int
    max_penalties: int
    rows_to_end: int
    cell_of: np.ndarray  # (R, 2*faces + 1) int64: cell of number s in row r, or -1
    number_of: np.ndarray  # (R, K) int64: the number printed in each cell
    cell_die: np.ndarray  # (R, K) int64: the coloured die (0 .. D-1) each cell is crossed with
    color_pairs: np.ndarray  # (n, 2) int64: (row, coloured die) for each die that crosses a cell of the row
    own_dice: bool  # every row r is crossed with coloured die r alone (classic, Longo): the mask's fast path
    lock_dice: int  # bits 8r .. 8r+7: the dice of row r's lock cells, out of play once it locks
    score_table: np.ndarray  # (max crosses + 1,) int64: points for n crosses


@dataclass(frozen=True)
class Row:
    """One row of a sheet: its name (how marks, locks and actions name it, e.g. ``"red"``), its
    numbers left to right (crossed left to right), and the colour of the die each cell is
    crossed with in the colour action (every cell the row's own colour, the name, if empty).

    >>> Row("red", (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12))
    >>> Row("mixed", (2, 3, 4), colors=("red", "blue", "red"))
    """

    name: str
    numbers: tuple[int, ...]
    colors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (isinstance(self.name, str) and _is_word(self.name)):
            raise ValueError(f"row name: got {self.name!r}; expected a short word (letters, digits, '_' or '-')")
        numbers = tuple(self.numbers) if isinstance(self.numbers, (tuple, list)) else None
        if not numbers or not all(is_int(n) for n in numbers):
            raise ValueError(f"row {self.name}: numbers {self.numbers!r}; expected a tuple of integers")
        object.__setattr__(self, "numbers", tuple(int(n) for n in numbers))
        colors = tuple(self.colors) if isinstance(self.colors, (tuple, list)) else None
        if colors is None or not all(isinstance(c, str) and _is_word(c) for c in colors):
            raise ValueError(f"row {self.name}: colors {self.colors!r}; expected a tuple of colour names")
        if not colors:
            colors = (self.name,) * len(numbers)
        if len(colors) != len(numbers):
            raise ValueError(f"row {self.name}: {len(colors)} colors for {len(numbers)} numbers; expected one per cell")
        object.__setattr__(self, "colors", colors)


def _is_word(name: str) -> bool:
    return 0 < len(name) <= 40 and name.replace("_", "").replace("-", "").isalnum()


def _check_int(name: str, value: object, minimum: int, maximum: int | None = None) -> None:
    """Refuse a `Variant` field that is not an integer in ``minimum .. maximum``, naming it."""
    accepted = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
    check_int(name, value, minimum=minimum, maximum=maximum, accepted=f"an integer {accepted}")


@dataclass(frozen=True)
class Variant:
    """Everything that distinguishes one version of the game from another.

    `rows` is the sheet, a tuple of `Row`; left empty it is the classic four: red and yellow
    ascending from 2 to ``2 * faces``, green and blue descending, each cell crossed with its
    row's die. Every row has the same number of cells, each number at most once. The
    coloured dice are the cells' colours in the order they first appear on the sheet
    (`dice_colors`); two white dice are rolled beside them, every die with `faces` faces.
    The last `lock_cells` cells of a row are lock cells: crossing one needs `lock_threshold`
    crosses already in the row, crosses the lock too and locks the row, and the dice of the
    row's lock cells leave play. `score_table[n]` is what a row with n crosses (lock
    included) is worth.
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
    rows: tuple[Row, ...] = ()
    tables: RuleTables = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the state's arrays bound them: a row is a bitmask read through 15-bit tables (at
        # most 15 cells), a sheet carries two lucky numbers, penalties are int8
        _check_int("faces", self.faces, 2, 16)
        self._set_rows()
        _check_int("lock_cells", self.lock_cells, 1, self.cells - 1)
        _check_int("lock_threshold", self.lock_threshold, 0)
        _check_int("lucky_count", self.lucky_count, 0, 2)
        if self.lucky_count == 1:
            raise ValueError("lucky_count: got 1; expected 0 (no lucky numbers) or 2 (Longo's two per sheet)")
        _check_int("penalty_points", self.penalty_points, 0)
        _check_int("max_penalties", self.max_penalties, 1, 127)
        _check_int("rows_to_end", self.rows_to_end, 1, self.num_rows)
        if self.lucky_count and self.lucky_rule not in LUCKY_RULES:
            raise ValueError(f"lucky: got {self.lucky_rule!r}; expected one of {LUCKY_RULES}")
        max_crosses = self.cells + 1  # every number and the lock, an upper bound
        if len(self.score_table) < max_crosses + 1:
            raise ValueError(
                f"score_table: got {len(self.score_table)} entries; the {self.name} sheet "
                f"needs at least {max_crosses + 1} (0 to {max_crosses} crosses)"
            )
        number_of = np.array(self.row_numbers, dtype=np.int64)
        cell_of = np.full((self.num_rows, 2 * self.faces + 1), -1, dtype=np.int64)
        for r in range(self.num_rows):
            cell_of[r, number_of[r]] = np.arange(self.cells)
        colors = self.dice_colors
        cell_die = np.array([[colors.index(c) for c in row.colors] for row in self.rows], dtype=np.int64)
        first_lock = self.cells - self.lock_cells
        color_pairs = np.array([(r, d) for r, row in enumerate(cell_die) for d in sorted(set(row.tolist()))], np.int64)
        lock_dice = sum(sum(1 << int(d) for d in set(row[first_lock:])) << 8 * r for r, row in enumerate(cell_die))
        tables = RuleTables(
            row_ids=tuple(range(self.num_rows)),
            die_ids=tuple(range(len(colors))),
            cells=self.cells,
            faces=self.faces,
            first_lock_cell=first_lock,
            lock_threshold=self.lock_threshold,
            lucky_rule=0 if not self.lucky_count else 1 + LUCKY_RULES.index(self.lucky_rule),
            lucky_count=self.lucky_count,
            penalty_points=self.penalty_points,
            max_penalties=self.max_penalties,
            rows_to_end=self.rows_to_end,
            cell_of=cell_of,
            number_of=number_of,
            cell_die=cell_die,
            color_pairs=color_pairs,
            own_dice=bool(len(colors) == self.num_rows and (cell_die == np.arange(self.num_rows)[:, None]).all()),
            lock_dice=lock_dice,
            score_table=np.array(self.score_table, dtype=np.int64),
        )
        object.__setattr__(self, "tables", tables)

    def _set_rows(self) -> None:
        """Fill in the classic four rows when `rows` is empty, and check the sheet."""
        rows = self.rows
        if not isinstance(rows, (tuple, list)) or not all(isinstance(r, Row) for r in rows):
            raise ValueError(f"rows: got {rows!r}; expected a tuple of qwixx_env.core.variant.Row")
        if not rows:
            up = tuple(range(2, 2 * self.faces + 1))
            rows = tuple(Row(c, up if r < 2 else up[::-1]) for r, c in enumerate(COLORS))
        rows = tuple(rows)
        object.__setattr__(self, "rows", rows)
        names = [r.name for r in rows]
        if len(set(names)) != len(names):
            raise ValueError(f"rows: names {names}; expected each row to have a name of its own")
        if "white" in names or "white" in self.dice_colors:
            raise ValueError("rows: 'white' names the two white dice; give the rows and colours other names")
        cells = len(rows[0].numbers)
        if not 2 <= cells <= 15:
            raise ValueError(f"rows: {cells} cells a row; expected 2 to 15")
        for row in rows:
            if len(row.numbers) != cells:
                raise ValueError(f"row {row.name}: {len(row.numbers)} numbers; every row needs {cells}, as the first")
            bad = [n for n in row.numbers if not 2 <= n <= 2 * self.faces]
            if bad or len(set(row.numbers)) != cells:
                raise ValueError(
                    f"row {row.name}: numbers {row.numbers}; expected {cells} different sums of two "
                    f"{self.faces}-sided dice (2 to {2 * self.faces})"
                )
        if not 1 <= len(rows) <= MAX_ROWS or len(self.dice_colors) > MAX_DICE:
            raise ValueError(f"rows: {len(rows)} rows in {len(self.dice_colors)} colours; expected 1 to {MAX_ROWS} "
                             f"rows and at most {MAX_DICE} colours")

    @property
    def num_rows(self) -> int:
        """Rows per sheet (4 in classic and Longo)."""
        return len(self.rows)

    @property
    def row_names(self) -> tuple[str, ...]:
        """The rows' names in sheet order: ``("red", "yellow", "green", "blue")`` in classic."""
        return tuple(r.name for r in self.rows)

    @property
    def dice_colors(self) -> tuple[str, ...]:
        """The coloured dice, in the order they are rolled and stored after the two white ones:
        the cells' colours in the order they first appear on the sheet."""
        return tuple(dict.fromkeys(c for row in self.rows for c in row.colors))

    @property
    def die_names(self) -> tuple[str, ...]:
        """Every die in `State.dice` order: ``("white", "white", *dice_colors)``."""
        return ("white", "white", *self.dice_colors)

    @property
    def cells(self) -> int:
        """Numbers per row: 11 in classic (2 to 12), 15 in Longo (2 to 16)."""
        return len(self.rows[0].numbers)

    @property
    def numbers(self) -> tuple[int, ...]:
        """Every number the sheet shows, ascending."""
        return tuple(sorted({n for row in self.rows for n in row.numbers}))

    @property
    def row_numbers(self) -> tuple[tuple[int, ...], ...]:
        """The numbers of each row in sheet order (left to right)."""
        return tuple(row.numbers for row in self.rows)

    @property
    def cell_colors(self) -> tuple[tuple[str, ...], ...]:
        """The colour of the die each cell of each row is crossed with, in sheet order."""
        return tuple(row.colors for row in self.rows)

    @property
    def num_actions(self) -> int:
        """Size of the action space: one action per cell of the sheet, then pass."""
        return self.num_rows * self.cells + 1

    @property
    def pass_action(self) -> int:
        return self.num_rows * self.cells

    @property
    def lock_numbers(self) -> tuple[tuple[int, ...], ...]:
        """The lock cells' numbers of each row."""
        return tuple(row[self.cells - self.lock_cells :] for row in self.row_numbers)

    def max_rolls(self, num_players: int) -> int:
        """The most rolls a game of `num_players` can last: each roll the active seat crosses a
        number or takes a penalty, and a seat's last penalty ends the game, so there are at most
        ``rows * cells`` crosses a sheet and ``(max_penalties - 1)`` penalties a seat, plus the one
        that ends it."""
        return self.num_rows * self.cells * num_players + (self.max_penalties - 1) * num_players + 1

    def as_dict(self) -> dict[str, Any]:
        """The variant as JSON-ready data: its constructor arguments, every one written out, the
        rows as ``{"name", "numbers", "colors"}``. `Variant.from_dict` builds it back equal."""
        data: dict[str, Any] = {name: getattr(self, name) for name in _ARGUMENTS}
        data["score_table"] = list(self.score_table)
        data["rows"] = [{"name": r.name, "numbers": list(r.numbers), "colors": list(r.colors)} for r in self.rows]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Variant:
        """The `Variant` of `as_dict`'s data (as read back from JSON), checked as the constructor
        checks its arguments: an unknown key, a missing one, or a value of the wrong kind is a
        `ValueError` naming it. Keys left out take `Variant`'s defaults, as do a row's colours."""
        if not isinstance(data, dict):
            raise ValueError(f"variant: got {type(data).__name__}; expected a dict of Variant's arguments")
        unknown = sorted(set(data) - set(_ARGUMENTS), key=str)
        missing = [name for name in _REQUIRED if name not in data]
        if unknown or missing:
            raise ValueError(f"variant: {'unknown keys ' + str(unknown) if unknown else 'missing ' + str(missing)}; "
                             f"expected the keys {list(_ARGUMENTS)} ({list(_REQUIRED)} required)")
        if not (isinstance(data["name"], str) and _is_word(data["name"])):
            raise ValueError(f"variant name: got {data['name']!r}; expected a short word (letters, digits, '_' or '-')")
        table = data["score_table"]
        if not (isinstance(table, (list, tuple)) and all(is_int(x) for x in table)):
            raise ValueError(f"score_table: got {table!r}; expected a list of integers (points for 0, 1, 2, ... "
                             "crosses)")
        if data.get("lucky_rule") is not None and not isinstance(data["lucky_rule"], str):
            raise ValueError(f"lucky_rule: got {data['lucky_rule']!r}; expected null or one of {LUCKY_RULES}")
        rows = data.get("rows", [])
        if not isinstance(rows, (list, tuple)):
            raise ValueError(f"rows: got {rows!r}; expected a list of {{name, numbers, colors}}")
        built = []
        for row in rows:
            if not (isinstance(row, dict) and {"name", "numbers"} <= set(row) <= {"name", "numbers", "colors"}):
                raise ValueError(f"rows: got a row {row!r}; expected {{name, numbers, colors}} (colors optional)")
            built.append(Row(row["name"], row["numbers"], row.get("colors", ())))
        return cls(**{**data, "score_table": tuple(int(x) for x in table), "rows": tuple(built)})

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Variant:
        """The `Variant` of a sheet file: JSON (``.json``) or TOML (``.toml``) holding
        `from_dict`'s keys, checked as `from_dict` checks them. A file that is not there, does
        not parse, or holds a bad value is a `ValueError` naming the file and the key."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in SHEET_SUFFIXES:
            raise ValueError(f"variant file {str(path)!r}: expected a name ending in {' or '.join(SHEET_SUFFIXES)}")
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ValueError(f"variant file {str(path)!r}: no such file") from None
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(f"variant file {str(path)!r}: cannot be read ({err})") from None
        try:
            data = json.loads(text) if suffix == ".json" else tomllib.loads(text)
        except ValueError as err:  # json's and tomllib's decode errors are ValueErrors
            raise ValueError(f"variant file {str(path)!r}: not valid {suffix[1:].upper()} ({err})") from None
        try:
            return cls.from_dict(data)
        except ValueError as err:
            raise ValueError(f"variant file {str(path)!r}: {err}") from None

    def to_file(self, path: str | os.PathLike[str]) -> Path:
        """Write the variant as a sheet file that `from_file` reads back equal: JSON or TOML by
        the name's ending (``.json``, ``.toml``), every argument written out but a row's colours
        where they are all its own. Returns the path."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in SHEET_SUFFIXES:
            raise ValueError(f"path: got {str(path)!r}; expected a name ending in {' or '.join(SHEET_SUFFIXES)}")
        data = self.as_dict()
        for row in data["rows"]:  # a row crossed with its own die alone needs no colours: the default
            if set(row["colors"]) == {row["name"]}:
                del row["colors"]
        if suffix == ".json":  # a line per key and per row: a file to read and edit by hand
            lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items() if k != "rows"]
            rows = ",\n".join(f"    {json.dumps(r)}" for r in data["rows"])
            text = "{\n" + ",\n".join([*lines, f'  "rows": [\n{rows}\n  ]']) + "\n}\n"
        else:  # TOML has no null: a lucky_rule of None is left out, which reads back as the default
            head = [f"{k} = {json.dumps(v)}" for k, v in data.items() if k != "rows" and v is not None]
            rows = ["\n[[rows]]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in r.items()) for r in data["rows"]]
            text = "\n".join(head) + "\n" + "\n".join(rows) + "\n"
        path.write_text(text, encoding="utf-8")
        return path

    def with_score_table(self, score_table: Sequence[int]) -> Variant:
        """The same variant scored with another table (`score_table[n]` for n crosses)."""
        return replace(self, score_table=tuple(int(s) for s in score_table))


_ARGUMENTS = tuple(f.name for f in fields(Variant) if f.init)  # the keys of a variant's JSON form
_REQUIRED = tuple(f.name for f in fields(Variant) if f.init and f.default is MISSING)


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


def register_variant(variant: Variant, replace: bool = False) -> Variant:
    """Make `variant` playable by its name wherever a table is named: ``TableOptions(variant=
    name)``, ``qwixx_v0.env(variant=name)``, a config, a record (``TableOptions(variant=
    variant)`` registers it itself). Its name must be new, or name an equal `Variant` (then
    nothing changes); another `Variant` under a taken name is a `ValueError` naming what
    differs, unless `replace` (for a notebook that edits its sheet: tables built before keep
    the old definition; the package's own variants are never replaced). A name that is not a
    short word is a `ValueError`. Returns `variant`. Registration lasts for the process; a
    `TableOptions` sent to another process, a record and a checkpoint carry their variant
    along, and `resolve_variant` registers a sheet file's."""
    if not isinstance(variant, Variant):
        raise ValueError(f"register_variant: got {variant!r}; expected a qwixx_env.core.variant.Variant")
    name = variant.name
    if not (isinstance(name, str) and _is_word(name)):
        raise ValueError(f"variant name: got {name!r}; expected a short word (letters, digits, '_' or '-')")
    known = _REGISTRY.get(name)
    if known is not None and known != variant and (name in VARIANT_NAMES or not replace):
        again = "" if name in VARIANT_NAMES else ", or register_variant(..., replace=True) to replace it"
        raise ValueError(f"variant {name!r} is registered already, with another definition "
                         f"({differences(known, variant)}: registered / yours); give yours another name{again}")
    _REGISTRY[name] = variant
    return variant


def register_sheet(sheet: Any, name: Any, where: str) -> Variant:
    """Register the variant that a record or network file carries (`Variant.as_dict` data) and
    return it. It must be the variant the carrier names (`name`), and equal to the one registered
    under that name, if any: otherwise a `ValueError` that names what differs (`where` names the
    carrier in it: ``"the record"``), as does a sheet that `Variant.from_dict` refuses."""
    variant = Variant.from_dict(sheet)
    if variant.name != name:
        raise ValueError(f"names the variant {variant.name!r}; {where} plays {name!r}")
    known = _REGISTRY.get(variant.name)
    if known is not None and known != variant:
        raise ValueError(
            f"{where}'s variant {name!r} is not the one registered in this process under that name "
            f"({differences(known, variant)}, here / in {where}); open it in a fresh process, or "
            f"register_variant(..., replace=True) {where}'s"
        )
    return register_variant(variant)


def differences(a: Variant, b: Variant) -> str:
    """What differs between two variants, briefly, for an error: ``"faces 6 / 8, rows
    ['red'] differ"`` (a's value, then b's)."""
    da, db = a.as_dict(), b.as_dict()
    out = []
    for key in (k for k in da if da[k] != db[k]):
        x, y = da[key], db[key]
        if key == "rows" and len(x) == len(y):
            out.append(f"rows {[r['name'] for r, s in zip(x, y) if r != s]} differ")
        elif key == "rows":
            out.append(f"{len(x)} / {len(y)} rows")
        elif key == "score_table":
            n = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            out.append(f"score_table from {n} crosses ({len(x)} / {len(y)} entries)")
        else:
            out.append(f"{key} {x!r} / {y!r}")
    return ", ".join(out) or "none"


def variant_names() -> tuple[str, ...]:
    """The names a table may use: the package's (`VARIANT_NAMES`), then those registered since."""
    return tuple(_REGISTRY)


register_variant(CLASSIC)
register_variant(LONGO)


def unknown_variant(value: object, name: str = "variant") -> ValueError:
    """The error for a `name` option that names no variant: the package's own, then those
    registered in this process, then how to add one."""
    registered = tuple(n for n in _REGISTRY if n not in VARIANT_NAMES)
    also = f", or one registered here: {registered}" if registered else ""
    return ValueError(f"{name}: got {value!r}; expected one of {VARIANT_NAMES}{also}, a sheet file "
                      "(.json or .toml) or module:attribute (or a Variant: register_variant makes one "
                      "playable by name)")


def custom_sheet(name: str) -> dict[str, Any] | None:
    """The JSON form (`Variant.as_dict`) of the registered variant `name` where it is not one of
    the package's own (`VARIANT_NAMES`), which every process knows; None for those."""
    return None if name in VARIANT_NAMES else get_variant(name).as_dict()


_MODULE_ATTRIBUTE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def resolve_variant(spec: Any, relative_to: str | os.PathLike[str] | None = None) -> Variant:
    """The `Variant` a user names, registered (`register_variant`) so that its name plays
    everywhere in this process: a registered name (``"classic"``), a sheet file (a path ending
    in ``.json`` or ``.toml``, read by `Variant.from_file`; a relative path is taken from the
    folder `relative_to` where given, e.g. a config's), ``"module:attribute"`` (a `Variant`, or
    its `as_dict` data, imported) or a `Variant`. Every door that takes a variant (the
    commands' ``--variant``, a training config, the play server) goes through here. Anything
    else, or a definition that differs from the one registered under its name, is a
    `ValueError` naming it."""
    if isinstance(spec, Variant):
        return register_variant(spec)
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and spec.lower().endswith(SHEET_SUFFIXES)):
        path = Path(spec)
        if relative_to is not None and not path.is_absolute():
            path = Path(relative_to) / path
        variant = Variant.from_file(path)
        return _register_from(variant, f"variant file {str(path)!r}")
    if isinstance(spec, str) and spec in _REGISTRY:
        return _REGISTRY[spec]
    if isinstance(spec, str) and _MODULE_ATTRIBUTE.match(spec):
        module, _, attribute = spec.partition(":")
        try:
            value: Any = importlib.import_module(module)
            for part in attribute.split("."):
                value = getattr(value, part)
        except (ImportError, AttributeError) as err:
            raise ValueError(f"variant: got {spec!r}; cannot import it ({err})") from None
        if not isinstance(value, Variant):
            try:
                value = Variant.from_dict(value)
            except ValueError as err:
                raise ValueError(f"variant {spec!r}: not a Variant nor a Variant's dict ({err})") from None
        return _register_from(value, f"variant {spec!r}")
    raise unknown_variant(spec)


def _register_from(variant: Variant, source: str) -> Variant:
    """`register_variant` for a definition read from `source`, its clash named after it."""
    try:
        return register_variant(variant)
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None


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
        raise unknown_variant(variant)
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
    """The action index of a mark: ``None`` is pass, ``("green", 9)`` crosses green 9 (a row's
    name and a number of that row).

    Raises `ValueError` if the row or number is not on the variant's sheet.
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
    if color not in v.row_names:
        raise ValueError(f"mark: got row {color!r}; expected one of {v.row_names}")
    row = v.row_names.index(color)
    if not isinstance(number, (int, np.integer)) or number not in v.row_numbers[row]:
        shown = sorted(v.row_numbers[row])
        numbers = f"{shown[0]} to {shown[-1]}" if shown == list(range(shown[0], shown[-1] + 1)) else str(shown)
        raise ValueError(f"mark: got number {number!r} for {color}; the {v.name} sheet's {color} row has {numbers}")
    return row * v.cells + int(v.tables.cell_of[row, number])


def decode_action(action: int, variant: str | Variant = "classic") -> Mark:
    """The mark of an action index: ``None`` for pass, else ``(color, number)``.

    Raises `ValueError` if the index is outside ``0 .. R*K`` (R rows of K cells).
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
    return v.row_names[row], int(v.tables.number_of[row, cell])


def mark_text(action: int, variant: str | Variant = "classic") -> str:
    """An action as the error messages and the game's text name it: ``"red 7"`` or ``"pass"``.
    Raises `ValueError` for an index outside the variant's action space (`decode_action`)."""
    mark = decode_action(action, variant)
    return "pass" if mark is None else f"{mark[0]} {mark[1]}"
