"""Plain data (as read from YAML) checked into a frozen dataclass, field by field.

Each field's type hint says what it takes (int, float, str, bool, a tuple or dict of those,
an optional value or a nested dataclass); its metadata may add a range (``low``, ``high``,
``open_low``) or ``choices``. A value that does not fit raises `ValueError` naming the key
path (``ppo.learning_rate``), the value and what is accepted.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Union

from qwixx_env.core.checks import is_int, is_number
from qwixx_env.training.config_yaml import number_hint


def build(cls: type, data: Any, path: str) -> Any:
    """An instance of dataclass `cls` from a mapping, every key checked against its field."""
    where = path or "config"
    if not isinstance(data, dict):
        raise ValueError(f"{where}: got {data!r}; expected a mapping of keys {_names(cls)}")
    names = _names(cls)
    unknown = [k for k in data if k not in names]
    if unknown:
        key = f"{path}.{unknown[0]}" if path else str(unknown[0])
        raise ValueError(f"{key}: unknown key; accepted keys here: {names}")
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        key = f"{path}.{f.name}" if path else f.name
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{key}: missing; this key is required")
            continue
        values[f.name] = _value(hints[f.name], data[f.name], key, f.metadata)
    return cls(**values)


def _value(hint: Any, value: Any, key: str, rules: Mapping[str, Any]) -> Any:
    """`value` checked against a type hint and the field's range or choices."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType) and type(None) in args:  # Optional[X]
        if value is None:
            return None
        (hint,) = [a for a in args if a is not type(None)]
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:  # data passed on whole to a library that checks it (Ray's runtime_env)
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):  # a class, never an instance, in a hint
        return build(hint, value, key)
    if origin is tuple:
        if not isinstance(value, list):
            raise ValueError(f"{key}: got {value!r}; expected a list of {_describe(args[0], rules)}")
        return tuple(_value(args[0], v, f"{key}[{i}]", rules) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{key}: got {value!r}; expected a mapping name -> {_describe(args[1], rules)}")
        return {_value(args[0], k, f"{key}.{k}", {}): _value(args[1], v, f"{key}.{k}", rules) for k, v in value.items()}
    ok = (
        (hint is int and is_int(value))
        or (hint is float and is_number(value))
        or (hint in (str, bool) and isinstance(value, hint))
    )
    low, high, choices = rules.get("low"), rules.get("high"), rules.get("choices")
    if ok and choices is not None:
        ok = value in choices
    if ok and low is not None:
        ok = value > low if rules.get("open_low") else value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        hint_text = ""
        if hint is float and isinstance(value, str):
            hint_text = number_hint(value)
        raise ValueError(f"{key}: got {value!r}; expected {_describe(hint, rules)}{hint_text}")
    return float(value) if hint is float else value


def _describe(hint: Any, rules: Mapping[str, Any]) -> str:
    """What a field accepts, in words."""
    if rules.get("choices") is not None:
        return f"one of {list(rules['choices'])}"
    kind = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(hint, str(hint))
    low, high = rules.get("low"), rules.get("high")
    if low is not None and high is not None:
        return f"{kind} {'>' if rules.get('open_low') else '>='} {low} and <= {high}"
    if low is not None:
        return f"{kind} {'>' if rules.get('open_low') else '>='} {low}"
    return kind


def _names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def plain(value: Any) -> Any:
    """Tuples to lists, recursively (YAML and JSON friendly)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
