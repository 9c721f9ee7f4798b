"""Reading a training config's YAML file: a key set twice is refused, ``extends:`` starts
from a base file, a number YAML read as text gets a hint on how to write it, and ``variant:``
may name a sheet file relative to the config (`with_variant`)."""

from __future__ import annotations

import dataclasses
import math
import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from qwixx_env.core.variant import resolve_variant


class _UniqueKeys(yaml.SafeLoader):
    """`yaml.safe_load`'s loader, refusing a key set twice in one mapping (PyYAML would keep
    the last silently, so a forgotten line could override the one the reader sees)."""


def _unique_mapping(loader: _UniqueKeys, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            again = key in seen
        except TypeError:  # an unhashable key: construct_mapping says so below
            break
        if again:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark, f"the key {key!r} is set twice", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep)


_UniqueKeys.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def shipped_dir() -> Path:
    """The folder of the shipped configs: the ``qwixx_env.configs`` package (the repository's
    top-level ``configs/``, installed with the training pipeline)."""
    return Path(str(resources.files("qwixx_env.configs")))


def shipped_configs() -> list[str]:
    """The names of the shipped configs (``classic_2p`` for ``classic_2p.yaml``), sorted."""
    return sorted(p.stem for p in shipped_dir().glob("*.yaml"))


def with_variant(data: Any, relative_to: str | os.PathLike[str] | None = None) -> Any:
    """A config's data with its ``variant`` (a registered name, a sheet file's path, taken
    from the folder `relative_to` (the config's) when relative, or ``module:attribute``)
    registered and replaced by the variant's name, which is what the run, its saved config
    and its checkpoints name (the checkpoints carry the sheet itself). Data without a
    ``variant`` text is returned as it is, for the schema's checks to name."""
    if not isinstance(data, dict) or not isinstance(data.get("variant"), str):
        return data
    try:
        variant = resolve_variant(data["variant"], relative_to)
    except ValueError as err:
        text = str(err)
        raise ValueError(text if text.startswith("variant") else f"variant: {text}") from None
    return {**data, "variant": variant.name}


def dataclass_values(data: dict[str, Any], cls: type, engine: str, source: str, lists: tuple[str, ...] = ()
                     ) -> dict[str, Any]:
    """The keyword arguments of the config dataclass `cls` from a config's data (its variant
    resolved already): the ``engine`` key, if present, must be `engine` and is dropped; every
    other key must be a field of `cls`, ``name`` among them; each field in `lists` must be a
    list, given as a tuple. Anything else is a `ValueError` naming it, prefixed by `source`."""
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - fields - {"engine"})
    if unknown:
        raise ValueError(f"{source}: unknown keys {unknown}; expected some of {sorted(fields)}")
    if data.get("engine", engine) != engine:
        raise ValueError(f"{source}: engine: got {data['engine']!r}; expected {engine!r}")
    if "name" not in data:
        raise ValueError(f"{source}: name: missing; every config names its run")
    values = {k: v for k, v in data.items() if k != "engine"}
    for key in lists:
        if key in values:
            if not isinstance(values[key], (list, tuple)):
                raise ValueError(f"{source}: {key}: got {values[key]!r}; expected a list")
            values[key] = tuple(values[key])
    return values


def config_path(name_or_path: str | os.PathLike[str]) -> Path:
    """The config file a command line names: a YAML file's path (``configs/classic_2p.yaml``,
    ``my.yaml``), or a shipped config's name (``classic_2p``). A bare name that is neither an
    existing file nor a shipped config raises `ValueError` listing the shipped names."""
    path = Path(name_or_path)
    text = os.fspath(name_or_path)
    if path.exists() or path.name != text or path.suffix in (".yaml", ".yml"):
        return path  # a path: read_yaml says so if there is no such file
    if text in shipped_configs():
        return shipped_dir() / f"{text}.yaml"
    raise ValueError(f"config: got {text!r}, which is neither a file nor a shipped config; expected a YAML file's "
                     f"path or one of {shipped_configs()}")


def read_yaml(path: Path, seen: tuple[Path, ...] = ()) -> Any:
    """A config file's data with its ``extends:`` resolved: ``extends: base.yaml`` (a path
    relative to the file; a bare file name with no such file beside it names the shipped config
    of that name, so a shipped config copied into another folder still reads) starts from the
    base's data; each key the file sets replaces the
    base's, and inside a section (a mapping such as ``ppo`` or ``opponents``) each key it sets
    replaces that key's value whole (``opponents.scripted`` replaces the base's weights, and
    ``opponents.self_play`` stays the base's unless it is set too). A base may extend another."""
    where = f" (extended by {str(seen[-1])!r})" if seen else ""
    try:
        with open(path, encoding="utf-8") as stream:  # a stream: YAML's messages then name the file
            data = yaml.load(stream, Loader=_UniqueKeys)
    except FileNotFoundError:
        raise ValueError(f"config: no file {str(path)!r}{where}") from None
    except IsADirectoryError:
        raise ValueError(f"config: {str(path)!r}{where} is a folder; expected a YAML file") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"config {str(path)!r}{where}: not UTF-8 text ({err})") from None
    except yaml.YAMLError as err:
        raise ValueError(f"config {str(path)!r}: not valid YAML: {err}") from None
    if not isinstance(data, dict) or "extends" not in data:
        return data
    base_name = data.pop("extends")
    if not isinstance(base_name, str) or not base_name:
        raise ValueError(f"extends: got {base_name!r} in {str(path)!r}; expected the path of a config file")
    base_path = (path.parent / base_name).resolve()
    shipped = shipped_dir() / base_name
    if not base_path.exists() and Path(base_name).name == base_name and shipped.is_file():
        base_path = shipped.resolve()  # a shipped config copied elsewhere: its base is the shipped one
    if base_path in seen or base_path == path.resolve():
        chain = " -> ".join(str(p) for p in (*seen, path, base_path))
        raise ValueError(f"extends: a config may not extend itself; got the cycle {chain}")
    base = read_yaml(base_path, (*seen, path.resolve()))
    if not isinstance(base, dict):
        raise ValueError(f"extends: {str(base_path)!r} is not a mapping of keys; got {base!r}")
    merged = dict(base)
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = {**base[key], **value}
        else:
            merged[key] = value
    return merged


def number_hint(text: str) -> str:
    """Why a number came as text, and how to write it (YAML 1.1 reads 3e-4 as a string);
    nothing for text that is not a finite number."""
    try:
        if not math.isfinite(float(text)):
            return ""
    except ValueError:
        return ""
    if isinstance(yaml.safe_load(text), float | int):
        return " (it is quoted: write the number without quotes)"
    mantissa, e, exponent = text.strip().lower().partition("e")
    if e:  # YAML 1.1 reads a number with an exponent only with a '.' and a signed exponent
        fixed = (mantissa if "." in mantissa else mantissa + ".0") + "e" + (
            exponent if exponent[:1] in ("+", "-") else "+" + exponent
        )
        if isinstance(yaml.safe_load(fixed), float):
            return f" (YAML reads {text} as text: write {fixed})"
    return f" (YAML reads {text} as text: write it as a decimal, {float(text)!r})"
