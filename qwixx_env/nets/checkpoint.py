"""The network file format: every network the project ships or trains, stored without pickle.

A network file is a pair with one name: ``<name>.npz``, the weights (plain arrays,
`numpy.savez`, stored uncompressed), and ``<name>.json``, what they are: the format (a name
and a version), the game (variant, lucky rule, players; for a variant that is not the
package's own, the whole sheet as ``sheet``, registered on loading), the input and output sizes, the
layers of each network with their activations, the npz's sha256 and size, and free-form
``meta`` (how it was trained). Two kinds share the format and its checks:

- ``qwixx_env.policy/1``: a policy checkpoint, a policy network (one logit per action) and a
  value network (one number) over the observation (float32 arrays) — the pretrained bots and
  what ``qwixx-train`` exports;
- ``qwixx_env.win_chance/1``: a win-chance network over the position features of
  `qwixx_env.policies.value` (float64 arrays; the output is a logit, its sigmoid the win chance) —
  the networks the ``rollout`` leaf and the ``afterstate`` bot read, and (with the optional
  ``"features": "plain"``, the layout with nothing from the heuristic) the teacher-free
  self-play bots'.

`read` is the one loader: it reads the JSON with `json`, checks every field, checks the npz's
size and sha256 against it, reads the arrays with ``allow_pickle=False`` and checks every
member's header, shape and values, so a missing, truncated, altered or pickled file is a
clear `CheckpointError` (or `FileNotFoundError`) and nothing in a file is ever executed.
`write` checks a description the same way and writes the pair atomically. Reading, checking
and writing stay in this one module: they are one definition of the format, and a change to
one side must be seen next to the others. `docs/pretrained.md` describes it field by field.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import stat
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env.core.observation import layout_for
from qwixx_env.core.options import check_num_players
from qwixx_env.core.variant import (
    LUCKY_RULES,
    Variant,
    custom_sheet,
    get_variant,
    register_sheet,
    unknown_variant,
    variant_names,
)
from qwixx_env.files import write_atomically
from qwixx_env.policies.value import num_features, plain_num_features

FORMAT = "qwixx_env.policy/1"
"""The ``format`` of a policy checkpoint's JSON: a name and a version, bumped when the layout changes."""

WIN_CHANCE_FORMAT = "qwixx_env.win_chance/1"
"""The ``format`` of a win-chance network's JSON."""

MAX_JSON_BYTES = 16 * 2**20  # far above any export (a few KB): a larger file is not read

ACTIVATIONS = ("tanh", "relu")
"""Hidden-layer activations a network may name (the last layer of a network has none)."""

NETWORKS = ("policy", "value")
"""The networks of a policy checkpoint: action logits (one per action) and the value (one number)."""

INPUTS = ("afterstate", "heuristic")
"""Extra inputs a policy may read after the observation (the optional ``inputs`` field), one
number per action each, in the order listed: ``"afterstate"``, each action's afterstate win
chance (`qwixx_env.nets.afterstate`; the tables with a network, `AFTERSTATE_TABLES` there);
``"heuristic"``, each action's value to the `heuristic` bot (`qwixx_env.nets.heuristic`; every
table)."""

AFTERSTATE_TABLES = {("classic", 2), ("classic", 3), ("classic", 4)}
"""The tables (variant, players) an afterstate win-chance network ships for."""


def afterstate_tables() -> str:
    """The tables an afterstate network ships for, in words (for error messages)."""
    return ", ".join(f"{v} with {p} players" for v, p in sorted(AFTERSTATE_TABLES))


Layer = tuple[np.ndarray, np.ndarray, "str | None"]
"""One linear layer: weight (out, in), bias (out,), activation after it (a name or None)."""


@dataclass(frozen=True)
class Kind:
    """What one format holds: its JSON fields, its networks and their array type."""

    format: str
    fields: tuple[str, ...]
    optional: tuple[str, ...]
    networks: tuple[str, ...]
    dtype: np.dtype


POLICY = Kind(
    FORMAT,
    ("format", "variant", "lucky", "num_players", "observation_size", "num_actions", "networks", "weights", "meta"),
    ("inputs", "sheet"),
    NETWORKS,
    np.dtype("<f4"),
)
WIN_CHANCE = Kind(
    WIN_CHANCE_FORMAT,
    ("format", "variant", "num_players", "num_features", "networks", "weights", "meta"),
    ("features", "sheet"),
    ("win_chance",),
    np.dtype("<f8"),
)
_LAYER_FIELDS = ("in", "out", "activation")

FEATURE_LAYOUTS = ("heuristic", "plain")
"""A win-chance network's ``features`` (absent: ``"heuristic"``): `policies.value.num_features`'s
layout, with the heuristic's evaluation as one column, or the plain layout
(`policies.value.plain_num_features`), raw facts of the sheets only."""


def feature_width(layout: str, num_players: int, rows: int = 4) -> int:
    """The features a win-chance network of `layout` reads at a table of `num_players` on a
    sheet of `rows` rows."""
    return num_features(num_players, rows) if layout == "heuristic" else plain_num_features(num_players, rows)


class CheckpointError(ValueError):
    """A network file that cannot be used; the message names the file and what is wrong."""


def input_width(spec: dict[str, Any]) -> int:
    """How many numbers the extra `inputs` of a policy add after the observation."""
    return spec["num_actions"] * len(spec.get("inputs", ()))


def json_and_npz(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The (json, npz) paths of a network file given with or without its suffix."""
    base = Path(path)
    if base.suffix in (".json", ".npz"):
        base = base.with_suffix("")
    return base.with_name(base.name + ".json"), base.with_name(base.name + ".npz")


# --- reading and checking -------------------------------------------------------------------


def read(json_path: Path, npz_path: Path, *, kind: Kind = POLICY) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The checked JSON and arrays of a network file of `kind` (see the module docstring)."""
    size = _check_is_file(json_path)
    if size > MAX_JSON_BYTES:
        raise CheckpointError(
            f"checkpoint {json_path}: {size} bytes; a checkpoint's JSON is at most {MAX_JSON_BYTES} bytes "
            "(this is not one)"
        )
    try:
        spec = json.loads(json_path.read_bytes().decode("utf-8"))
    except (ValueError, RecursionError) as err:  # JSONDecodeError, UnicodeDecodeError; deep nesting
        raise CheckpointError(f"checkpoint {json_path}: not valid JSON ({err})") from None
    check_description(spec, str(json_path), kind)
    size = _check_is_file(npz_path, f" (the weights {json_path.name} describes)")
    weights = spec["weights"]
    if size != weights["bytes"]:  # refused before reading (a file changed since: the sha256 below)
        raise CheckpointError(
            f"checkpoint {npz_path}: {size} bytes, but {json_path.name} says {weights['bytes']} "
            "(truncated, or not the file exported with it)"
        )
    data = npz_path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != weights["sha256"]:
        raise CheckpointError(
            f"checkpoint {npz_path}: sha256 {digest} differs from {weights['sha256']} in {json_path.name} "
            "(the file was changed after export, or belongs to another checkpoint)"
        )
    return spec, _load_arrays(data, spec, str(npz_path), kind)


def _load_arrays(data: bytes, spec: dict[str, Any], source: str, kind: Kind) -> dict[str, np.ndarray]:
    """The npz's arrays, each checked against the layer list. Compressed or encrypted members
    (which could inflate far beyond the checked size) are refused, and every member's header
    is checked (the kind's float type and the layer's shape, so no pickle and no oversized allocation) before
    its data is read."""
    shapes = _expected_shapes(spec, kind)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            members = [info.filename for info in infos]
            names = {m[: -len(".npy")] for m in members if m.endswith(".npy")}
            if sorted(members) != sorted(n + ".npy" for n in names) or names != set(shapes):
                raise CheckpointError(
                    f"checkpoint {source}: holds {sorted(members)}; expected exactly "
                    f"{sorted(n + '.npy' for n in shapes)} (the layers of its JSON)"
                )
            if any(info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1 for info in infos):
                raise CheckpointError(
                    f"checkpoint {source}: compressed or encrypted members; expected numpy.savez's stored arrays"
                )
            for info in infos:
                name = info.filename[: -len(".npy")]
                with archive.open(info) as member:
                    header = _npy_header(member)
                    header_bytes = member.tell()
                if header != (shapes[name], False, kind.dtype):
                    shape, fortran, dtype = header
                    raise CheckpointError(
                        f"checkpoint {source}: array {name!r} is {dtype} {shape}"
                        f"{' (Fortran order)' if fortran else ''}; expected {kind.dtype.name} {shapes[name]}"
                    )
                # the data must be in the file: a forged header cannot make np.load allocate more
                # (stored members: the bytes read are compress_size, which file_size must equal)
                data_bytes = kind.dtype.itemsize * math.prod(shapes[name])
                if not info.compress_size == info.file_size == header_bytes + data_bytes:
                    raise CheckpointError(
                        f"checkpoint {source}: array {name!r} holds {info.compress_size - header_bytes} bytes of data "
                        f"(its zip entry says {info.file_size - header_bytes}); "
                        f"{kind.dtype.name} {shapes[name]} needs {data_bytes}"
                    )
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in shapes}
    except CheckpointError:
        raise
    # e.g. a bad header or object arrays (a pickle): ValueError; a broken archive: the others
    except (ValueError, OSError, EOFError, RuntimeError, NotImplementedError, MemoryError, zipfile.BadZipFile) as err:
        raise CheckpointError(f"checkpoint {source}: not a plain numpy .npz ({err})") from None
    for name, a in arrays.items():  # dtype and shape: checked in each header above
        if not np.isfinite(a).all():
            raise CheckpointError(f"checkpoint {source}: array {name!r} holds NaN or infinite values")
        a.flags.writeable = False
    return arrays


def _check_is_file(path: Path, what: str = "") -> int:
    """The size of the regular file `path`; a `FileNotFoundError` if it is missing, a
    `CheckpointError` if it is not a regular file (a folder, a device, a pipe, a link loop)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"checkpoint {path}: no such file{what}") from None
    except OSError as err:  # e.g. a symlink loop
        raise CheckpointError(f"checkpoint {path}: cannot be read ({err.strerror}){what}") from None
    if not stat.S_ISREG(info.st_mode):
        raise CheckpointError(f"checkpoint {path}: not a regular file{what}")
    return info.st_size


def _npy_header(member: Any) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, Fortran order, dtype) from a ``.npy`` member's header, read without its data."""
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(member)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(member)
    raise ValueError(f"unsupported .npy format version {version}")


def _expected_shapes(spec: dict[str, Any], kind: Kind) -> dict[str, tuple[int, ...]]:
    """Array name -> shape, from a checked spec's layer lists (``policy.0.weight``: (out, in))."""
    return {
        f"{net}.{i}.{part}": shape
        for net in kind.networks
        for i, layer in enumerate(spec["networks"][net])
        for part, shape in (("weight", (layer["out"], layer["in"])), ("bias", (layer["out"],)))
    }


def check_description(spec: Any, source: str, kind: Kind = POLICY) -> None:
    """Check a network file's JSON description; raise `CheckpointError` naming `source`, the
    field and what is accepted."""

    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {source}: {what}")

    if not isinstance(spec, dict):
        raise bad(f"got a JSON {type(spec).__name__}; expected an object with fields {list(kind.fields)}")
    if spec.get("format") != kind.format:
        what = "a policy exported by this qwixx_env" if kind is POLICY else "a win-chance network of this qwixx_env"
        raise bad(f"format: got {spec.get('format')!r}; expected {kind.format!r} ({what})")
    if not set(kind.fields) <= set(spec) <= set(kind.fields + kind.optional):
        missing = sorted(set(kind.fields) - set(spec))
        extra = sorted(set(spec) - set(kind.fields + kind.optional))
        optional = f" (and optionally {list(kind.optional)})" if kind.optional else ""
        raise bad(f"fields: missing {missing}, unexpected {extra}; expected {list(kind.fields)}{optional}")
    if "sheet" in spec:  # a variant not the package's own comes whole: registered here if it is not yet
        try:
            register_sheet(spec["sheet"], spec["variant"], "the file")
        except ValueError as err:
            raise bad(f"sheet: {err}") from None
    if spec["variant"] not in variant_names():
        raise bad(str(unknown_variant(spec["variant"])))
    variant = get_variant(spec["variant"])
    if kind is POLICY:
        lucky = spec["lucky"]
        if variant.lucky_count and lucky not in LUCKY_RULES or not variant.lucky_count and lucky is not None:
            accepted = f"one of {list(LUCKY_RULES)}" if variant.lucky_count else "null (classic has no lucky numbers)"
            raise bad(f"lucky: got {spec['lucky']!r}; expected {accepted} for {variant.name}")
        variant = get_variant(spec["variant"], spec["lucky"])
    try:
        num_players = check_num_players(spec["num_players"])
    except ValueError as err:
        raise bad(str(err)) from None
    if kind is POLICY:
        width = _check_policy_fields(spec, variant, num_players, bad)
        outputs = {"policy": spec["num_actions"], "value": 1}
        inputs = "the observation and inputs have" if input_width(spec) else "the observation has"
    else:
        if num_players < 2:
            raise bad(f"num_players: got {num_players}; a win chance is for a table of 2 or more")
        layout = spec.get("features", "heuristic")
        if layout not in FEATURE_LAYOUTS:
            raise bad(f"features: got {layout!r}; expected one of {list(FEATURE_LAYOUTS)}")
        rows = 4 if layout == "heuristic" else variant.num_rows  # the heuristic layout's networks: classic
        size = feature_width(layout, num_players, rows)
        if type(spec["num_features"]) is not int or spec["num_features"] != size:
            raise bad(f"num_features: got {spec['num_features']!r}; a table of {num_players} has {size}"
                      f"{' in the plain layout' if layout == 'plain' else ''}")
        width, outputs, inputs = size, {"win_chance": 1}, "the features have"
    _check_networks(spec["networks"], kind, width, outputs, bad, inputs)
    activations = [layer["activation"] for layer in spec["networks"].get("win_chance", [])]
    if kind is WIN_CHANCE and activations != ["relu", "relu", None]:
        raise bad("networks.win_chance: expected three layers, relu, relu, then the logit (what the kernels run)")
    weights = spec["weights"]
    if not isinstance(weights, dict) or set(weights) != {"sha256", "bytes"}:
        raise bad(f"weights: got {weights!r}; expected an object with fields ['sha256', 'bytes']")
    digest = weights["sha256"]
    if not isinstance(digest, str) or len(digest) != 64 or set(digest) - set("0123456789abcdef"):
        raise bad(f"weights.sha256: got {digest!r}; expected 64 lowercase hex digits")
    _count(weights["bytes"], "weights.bytes", bad)
    if not isinstance(spec["meta"], dict):
        raise bad(f"meta: got {spec['meta']!r}; expected an object")


def _count(value: Any, field: str, bad: Any) -> int:
    if type(value) is not int or value < 1:
        raise bad(f"{field}: got {value!r}; expected a positive integer")
    return value


def _check_policy_fields(spec: dict[str, Any], variant: Variant, num_players: int, bad: Any) -> int:
    """Check a policy's sizes and extra inputs; return the width its networks read."""
    sizes = {"observation_size": layout_for(variant, num_players).size, "num_actions": variant.num_actions}
    for field, size in sizes.items():
        if type(spec[field]) is not int or spec[field] != size:
            raise bad(
                f"{field}: got {spec[field]!r}; the {variant.name} game for {num_players} player(s) has {size}"
            )
    inputs = spec.get("inputs", [])
    if (
        not isinstance(inputs, list)
        or not all(isinstance(name, str) for name in inputs)
        or len(set(inputs)) != len(inputs)
        or not set(inputs) <= set(INPUTS)
    ):
        raise bad(f"inputs: got {inputs!r}; expected a list of distinct names from {list(INPUTS)}")
    if "afterstate" in inputs and (variant.name, num_players) not in AFTERSTATE_TABLES:
        raise bad(f"inputs: 'afterstate' is for {afterstate_tables()}; got {variant.name} with {num_players}")
    return spec["observation_size"] + input_width(spec)


def _check_networks(networks: Any, kind: Kind, width: int, outputs: dict[str, int], bad: Any, inputs: str) -> None:
    """Check each network's layer list: widths chain from `width` (what `inputs` give) to
    its output size."""
    if not isinstance(networks, dict) or set(networks) != set(kind.networks):
        raise bad(f"networks: got {networks!r}; expected an object with layer lists {list(kind.networks)}")
    first = width
    for net in kind.networks:
        layers = networks[net]
        if not isinstance(layers, list) or not layers:
            raise bad(f"networks.{net}: got {layers!r}; expected a non-empty list of layers")
        width = first
        for i, layer in enumerate(layers):
            where = f"networks.{net}[{i}]"
            if not isinstance(layer, dict) or set(layer) != set(_LAYER_FIELDS):
                raise bad(f"{where}: got {layer!r}; expected an object with fields {list(_LAYER_FIELDS)}")
            if _count(layer["in"], f"{where}.in", bad) != width:
                before = "the layer before gives" if i else inputs
                raise bad(f"{where}.in: got {layer['in']}; {before} {width}")
            width = _count(layer["out"], f"{where}.out", bad)
            last, act = i == len(layers) - 1, layer["activation"]
            if not (act is None if last else isinstance(act, str) and act in ACTIVATIONS):
                accepted = "null (the output layer)" if last else f"one of {sorted(ACTIVATIONS)}"
                raise bad(f"{where}.activation: got {layer['activation']!r}; expected {accepted}")
        if width != outputs[net]:
            raise bad(f"networks.{net}: outputs {width}; expected {outputs[net]}")


# --- writing ----------------------------------------------------------------------------------


def write(path: str | os.PathLike[str], spec: dict[str, Any], layers: dict[str, Sequence[Layer]],
          kind: Kind = POLICY) -> Path:
    """Write a network file pair and return the JSON's path. `spec` is the description without
    ``networks`` and ``weights`` (filled in here from `layers`: network name -> `Layer` list).

    Each file is written to a temporary file in the same folder, synced, and renamed over the
    target; the npz first, the JSON last. A crash therefore leaves either the old pair, or the
    new npz with the old JSON — which loading refuses (sha256) — never a JSON with a missing or
    partial npz. The description is checked exactly as loading checks it, before anything is
    written.
    """
    json_path, npz_path = json_and_npz(path)
    arrays: dict[str, np.ndarray] = {}
    networks: dict[str, list[dict[str, Any]]] = {}
    for net, net_layers in layers.items():
        networks[net] = []
        for i, (weight, bias, activation) in enumerate(net_layers):
            weight = np.ascontiguousarray(weight, kind.dtype)
            if weight.ndim != 2:
                raise ValueError(f"{net} layer {i}: got a weight of shape {weight.shape}; expected (out, in)")
            arrays[f"{net}.{i}.weight"] = weight
            arrays[f"{net}.{i}.bias"] = np.ascontiguousarray(bias, kind.dtype)
            networks[net].append({"in": weight.shape[1], "out": weight.shape[0], "activation": activation})
    buffer = io.BytesIO()
    # numpy's stub lets **arrays fill savez's allow_pickle: bool; the keys here are "net.i.weight"
    np.savez(buffer, **arrays)  # pyright: ignore[reportArgumentType]
    data = buffer.getvalue()
    spec = {**spec, "format": kind.format, "networks": networks,
            "weights": {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}}
    sheet = custom_sheet(spec["variant"]) if spec.get("variant") in variant_names() else None
    if sheet is not None:  # a variant not the package's own goes with the file, to load where it is not registered
        spec["sheet"] = sheet
    spec = {field: spec[field] for field in kind.fields + kind.optional if field in spec}
    check_description(spec, str(json_path), kind)
    _load_arrays(data, spec, str(npz_path), kind)  # shapes and values, before anything is written
    try:
        text = json.dumps(spec, indent=2, allow_nan=False) + "\n"
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"meta: got {spec['meta']!r}; expected JSON-ready data (str, numbers, lists, dicts): {err}"
        ) from None
    write_atomically(npz_path, data)
    write_atomically(json_path, text.encode("utf-8"))
    return json_path


def write_policy(
    path: str | os.PathLike[str],
    *,
    policy: Sequence[Layer],
    value: Sequence[Layer],
    variant: str,
    num_players: int,
    lucky: str | None = None,
    meta: dict[str, Any],
    inputs: Sequence[str] = (),
) -> Path:
    """Write a policy checkpoint pair from numpy layers (`Layer`: weight (out, in), bias,
    activation) and return the JSON's path; `path` may end in ``.json`` or ``.npz`` or
    neither. Written and checked as `write` says."""
    v = get_variant(variant, lucky)
    num_players = check_num_players(num_players)
    spec: dict[str, Any] = {
        "variant": v.name,
        "lucky": v.lucky_rule,
        "num_players": num_players,
        "observation_size": layout_for(v, num_players).size,
        "num_actions": v.num_actions,
        "meta": meta,
    }
    if inputs:
        spec["inputs"] = list(inputs)
    return write(path, spec, {"policy": policy, "value": value}, POLICY)
