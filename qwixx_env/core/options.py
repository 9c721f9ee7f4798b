"""`TableOptions`: the options of a Qwixx table, checked once.

Every place that sets up games — the AEC and Parallel envs, the engine, the batched, vector
and Gymnasium envs, the RLlib envs, the bots, the training configs — takes ``table=TableOptions(...)``
or, as a convenience, the same keyword options, and turns them into one `TableOptions` with
`table_from`, so an option is added, checked and documented here only. It is a frozen
dataclass: build it, and it is valid.

>>> table = TableOptions(num_players=3, variant="longo", lucky="instead")
>>> table.rules            # the Variant the kernels play (lucky rule and score table applied)
>>> table.reward           # "win": the default reward for 2+ players is filled in
>>> table.as_dict()        # JSON-ready, as a game record stores it
>>> table_from(table) is table and table_from(num_players=3) == TableOptions(num_players=3)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from qwixx_env.core.checks import check_choice, check_int, is_int
from qwixx_env.core.rewards import check_reward
from qwixx_env.core.variant import (
    LUCKY_RULES,
    Variant,
    custom_sheet,
    get_variant,
    register_variant,
    unknown_variant,
    variant_names,
)

MAX_PLAYERS = 5


def check_num_players(num_players: Any) -> int:
    """`num_players` as an int from 1 to 5, or a `ValueError` naming it."""
    return check_int("num_players", num_players, minimum=1, maximum=MAX_PLAYERS)


def check_variant(variant: Any) -> str:
    """The name of `variant`: a registered name (``"classic"``, ``"longo"``, or one given to
    `variant.register_variant`), or a `Variant`, which is registered under its name (a
    `ValueError` if another variant has that name); anything else is a `ValueError`."""
    if isinstance(variant, Variant):
        return register_variant(variant).name
    if isinstance(variant, str) and variant in variant_names():
        return variant
    raise unknown_variant(variant)


def check_lucky(lucky: Any) -> str:
    """`lucky` if it is a lucky rule (``"bonus"`` or ``"instead"``), or a `ValueError`."""
    return check_choice("lucky", lucky, LUCKY_RULES, note=" (the lucky rule of variant='longo')")


@dataclass(frozen=True)
class TableOptions:
    """The options of a table; each is checked when the value is built (see the fields).

    The keyword names and meanings are those of ``qwixx_v0.env()``; `reward` None is replaced
    by the default for the player count, and sequences are stored as tuples.
    """

    num_players: int = 2
    """Seats at the table, 1 to 5 (1: solo, that player active on every roll)."""
    variant: str = "classic"
    """``"classic"``, ``"longo"`` or the name of a registered variant (a `Variant` given here is
    registered under its name, and its name kept)."""
    lucky: str = "bonus"
    """Longo's lucky rule: ``"bonus"`` or ``"instead"`` (classic: only the default, ``"bonus"``)."""
    lucky_numbers: tuple[tuple[int, int], ...] | None = None
    """Longo only: fixed lucky numbers, one pair per seat; None draws them each game."""
    start_player: int | str = 0
    """The first active seat, or ``"random"`` (drawn from each game's generator)."""
    reward: str | None = None
    """``"win"``, ``"score"``, ``"score_delta"`` or ``"margin"``; None: ``"win"``, solo ``"score"``."""
    score_table: tuple[int, ...] | None = None
    """Points for 0, 1, 2, ... crosses in a row, replacing the variant's; None keeps it."""
    rules: Variant = field(init=False, repr=False, compare=False)
    """The `Variant` the kernels play: the variant with this lucky rule and score table."""

    def __post_init__(self) -> None:
        num_players = check_num_players(self.num_players)
        variant = check_variant(self.variant)
        lucky = check_lucky(self.lucky)
        rules = _with_score_table(get_variant(variant, lucky), self.score_table)
        set_ = object.__setattr__  # frozen: the checked, normalised values replace the given ones
        set_(self, "num_players", num_players)
        set_(self, "variant", variant)  # the name, also when a Variant was given
        set_(self, "rules", rules)
        set_(self, "lucky", rules.lucky_rule or "bonus")
        set_(self, "lucky_numbers", _check_lucky_numbers(self.lucky_numbers, rules, num_players))
        set_(self, "start_player", _check_start_player(self.start_player, num_players))
        set_(self, "reward", check_reward(self.reward, num_players))
        if self.score_table is not None:
            set_(self, "score_table", tuple(rules.score_table))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in order (the keyword arguments every constructor takes)."""
        return tuple(f.name for f in fields(cls) if f.init)

    def kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments for any constructor that takes table options
        (``QwixxVectorEnv(64, **table.kwargs())``)."""
        return {name: getattr(self, name) for name in self.names()}

    @property
    def reward_mode(self) -> str:
        """The reward mode in force: `reward` with its default filled in, never None."""
        if self.reward is None:  # __post_init__ fills it in; None means the object skipped it
            raise RuntimeError(f"{self!r}: reward is None; build a TableOptions with TableOptions(...)")
        return self.reward

    @property
    def start_seat(self) -> int:
        """The first active seat as the kernels take it: a seat, or -1 for ``"random"``."""
        return -1 if self.start_player == "random" else int(self.start_player)

    def lucky_array(self) -> np.ndarray:
        """The lucky numbers as the kernels take them: (P, 2) int64, a row of zeros where a
        seat's numbers are drawn each game (`rules.reset_one`)."""
        if self.lucky_numbers is None:
            return np.zeros((self.num_players, 2), np.int64)
        return np.array(self.lucky_numbers, np.int64)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with its variant's sheet where it is not the package's own (`Variant.as_dict`,
        registered again where it is unpickled): a table of a variant registered in this
        process plays in another, e.g. the arena's and the benchmark's workers."""
        return _unpickle_table, (custom_sheet(self.variant), self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        """The options as JSON-ready data (lists for the sequences), as a game record stores them."""
        return {
            "num_players": self.num_players,
            "variant": self.variant,
            "lucky": self.lucky,
            "lucky_numbers": None if self.lucky_numbers is None else [list(p) for p in self.lucky_numbers],
            "start_player": self.start_player,
            "reward": self.reward,
            "score_table": None if self.score_table is None else list(self.score_table),
        }


def _unpickle_table(sheet: dict[str, Any] | None, options: dict[str, Any]) -> TableOptions:
    if sheet is not None:
        register_variant(Variant.from_dict(sheet))
    return TableOptions(**options)


def table_from(table: TableOptions | None = None, /, **options: Any) -> TableOptions:
    """The table a constructor plays: `table` itself, or a `TableOptions` built (and so checked)
    from the keyword `options`. Giving both, a `table` that is no `TableOptions`, or an option
    `TableOptions` does not know is a `TypeError` that says what is accepted."""
    if table is None:
        unknown = sorted(set(options) - set(TableOptions.names()))
        if unknown:
            raise TypeError(
                f"got unknown table option(s) {unknown}; accepted: table (a TableOptions) or the options "
                f"{list(TableOptions.names())}"
            )
        return TableOptions(**options)
    if not isinstance(table, TableOptions):
        raise TypeError(f"table: got {table!r}; expected a TableOptions")
    if options:
        raise TypeError(
            f"got table={table!r} and the table option(s) {sorted(options)}; give the table either as "
            "table=TableOptions(...) or as its options, not both"
        )
    return table


def _with_score_table(variant: Variant, score_table: Any) -> Variant:
    if score_table is None:
        return variant
    need = variant.cells + 2
    accepted = f"a sequence of at least {need} integers (points for 0, 1, 2, ... crosses in a row)"
    try:
        table = list(score_table)
    except TypeError:
        raise ValueError(f"score_table: got {score_table!r}; expected {accepted}") from None
    if len(table) < need or not all(is_int(x) for x in table):
        raise ValueError(f"score_table: got {score_table!r}; expected {accepted}")
    return variant.with_score_table(table)


def _check_lucky_numbers(lucky_numbers: Any, variant: Variant, num_players: int) -> tuple | None:
    if lucky_numbers is None:
        return None
    if not variant.lucky_count:
        raise ValueError(
            f"lucky_numbers: got {lucky_numbers!r}; the {variant.name!r} variant has no lucky "
            "numbers (they belong to variant='longo')"
        )
    low, high = variant.numbers[0], variant.numbers[-1]
    accepted = f"a list of {num_players} pairs (one per seat) of two different integers from {low} to {high}"
    try:
        pairs = [list(p) for p in lucky_numbers]
    except TypeError:
        raise ValueError(f"lucky_numbers: got {lucky_numbers!r}; expected {accepted}") from None
    ok = len(pairs) == num_players and all(
        len(p) == 2 and all(is_int(x) and low <= x <= high for x in p) and p[0] != p[1] for p in pairs
    )
    if not ok:
        raise ValueError(f"lucky_numbers: got {lucky_numbers!r}; expected {accepted}")
    return tuple((int(a), int(b)) for a, b in pairs)


def _check_start_player(start_player: Any, num_players: int) -> int | str:
    if isinstance(start_player, str) and start_player == "random":
        return "random"
    return check_int(
        "start_player", start_player, minimum=0, maximum=num_players - 1,
        accepted=f"'random' or a seat from 0 to {num_players - 1}",
    )
