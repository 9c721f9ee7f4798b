"""Validators for values a user gives: one rule per kind of value, one wording of its error.

Each ``check_*`` returns the value in its plain Python form, or raises a `ValueError` that
names the option, the value given and what is accepted:

>>> check_int("num_envs", 0, minimum=1)
ValueError: num_envs: got 0; expected a positive integer

A bool is never a number here (``True == 1`` in Python, but ``num_players=True`` is a mistake).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import numpy as np


def is_int(value: Any) -> bool:
    """Whether `value` is a whole number (a Python or numpy integer, not a bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_number(value: Any) -> bool:
    """Whether `value` is a finite real number (Python or numpy, not a bool)."""
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, (bool, np.bool_))
        and math.isfinite(value)
    )


def _bounds_words(kind: str, minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{kind} from {minimum} to {maximum}"
    if minimum == 1 and kind == "an integer":
        return "a positive integer"
    if minimum is not None:
        return f"{kind} >= {minimum}"
    if maximum is not None:
        return f"{kind} <= {maximum}"
    return kind


def check_int(
    name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None, accepted: str | None = None
) -> int:
    """`value` as an int if it is a whole number within the bounds; else a `ValueError`.
    `accepted` replaces the generated words for what is accepted."""
    if is_int(value) and (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
        return int(value)
    raise ValueError(f"{name}: got {value!r}; expected {accepted or _bounds_words('an integer', minimum, maximum)}")


def check_number(
    name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None, accepted: str | None = None
) -> float:
    """`value` as a float if it is a finite real number within the bounds; else a `ValueError`."""
    if is_number(value) and (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
        return float(value)
    raise ValueError(f"{name}: got {value!r}; expected {accepted or _bounds_words('a number', minimum, maximum)}")


def check_choice(name: str, value: Any, choices: Collection[Any], *, note: str = "") -> Any:
    """`value` if it is one of `choices` (compared by equality, a bool never matching);
    else a `ValueError` listing them, followed by `note` (e.g. where the option applies)."""
    try:
        ok = not isinstance(value, (bool, np.bool_)) and value in choices
    except TypeError:  # an unhashable value against a set or dict
        ok = False
    if ok:
        return value
    raise ValueError(f"{name}: got {value!r}; expected one of {choices}{note}")


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """A seed (a game's, a bot's, a run's): None or a whole number >= 0."""
    if seed is None:
        return None
    return check_int(name, seed, minimum=0, accepted="None or a non-negative integer")


def check_flag(name: str, value: Any) -> bool:
    """`value` if it is a bool (True or False, not a number or a string)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name}: got {value!r}; expected true or false")


def array_words(value: Any) -> str:
    """An array as the errors name it, ``(1024, 2, 4) int32``; anything else by its type."""
    return f"{value.shape} {value.dtype}" if isinstance(value, np.ndarray) else type(value).__name__


def check_array(name: str, value: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """`value` if it is a writeable numpy array of exactly `shape` and `dtype` (an array a
    compiled kernel writes into, which would write past a smaller one, and which numba cannot
    compile a write into when read-only); else a `ValueError`."""
    if isinstance(value, np.ndarray) and value.shape == shape and value.dtype == dtype:
        if value.flags.writeable:
            return value
        raise ValueError(f"{name}: a read-only {shape} {np.dtype(dtype)} array; expected a writeable one")
    raise ValueError(f"{name}: got {array_words(value)}; expected a {shape} {np.dtype(dtype)} array")
