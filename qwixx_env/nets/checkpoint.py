"""Pretrained bots: trained policies stored without pickle and run by a numpy forward pass.

A checkpoint is a pair of files with one name: ``<name>.npz``, the weights (plain float32
arrays, `numpy.savez`), and ``<name>.json``, what they are (format, variant, players,
observation size, actions, the layers with their activations, the npz's sha256 and size,
and how the policy was trained). Loading reads the JSON with `json`, checks the npz's size
and sha256 against it, reads the arrays with ``allow_pickle=False`` and checks every shape,
so a missing, truncated, altered or pickled file is a clear error and nothing in a file is
ever executed. Neither torch nor stable-baselines3 is needed, except to export
(`export_policy`). `docs/pretrained.md` describes the format.

>>> from qwixx_env import bots
>>> bot = bots.load("ppo-classic-2p")                 # an installed checkpoint, by name
>>> bot = bots.load("runs/best.json", num_players=2)  # a file; a mismatch is an error
>>> bot.act(observation)                              # the common bot interface
>>> policy = NumpyPolicy.load("ppo-classic-2p")       # batched: (obs, masks) -> actions
>>> QwixxVectorEnv(256, opponents={policy: 1, "heuristic": 1})  # as a frozen opponent
>>> export_policy(model, "runs/best", meta={"steps": 10_000_000})  # from a MaskablePPO

Installed checkpoints live in the ``qwixx_env.checkpoints`` package (the repository's
top-level ``checkpoints/`` folder); each is registered as a bot under its name, so
``bots.make("ppo-classic-2p")`` (variant and players default to the checkpoint's) and
`qwixx arena` know them too.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import os
import stat
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from qwixx_env import bots
from qwixx_env.core.observation import layout_for
from qwixx_env.core.variant import LUCKY_RULES, VARIANT_NAMES, get_variant
from qwixx_env.envs.qwixx_v0 import check_num_players, check_seed
from qwixx_env.files import write_atomically

FORMAT = "qwixx_env.policy/1"
"""The ``format`` field of the JSON: a name and a version, bumped when the layout changes."""

MAX_JSON_BYTES = 16 * 2**20  # far above any export (a few KB): a larger file is not read

ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, np.float32(0))}
"""Hidden-layer activations a checkpoint may name (the last layer of a network has none)."""

NETWORKS = ("policy", "value")
"""The networks of a checkpoint: action logits (one per action) and the value (one number)."""

_FIELDS = (
    "format",
    "variant",
    "lucky",
    "num_players",
    "observation_size",
    "num_actions",
    "networks",
    "weights",
    "meta",
)
_LAYER_FIELDS = ("in", "out", "activation")
_OPTIONAL_FIELDS = ("inputs",)

INPUTS = ("afterstate",)
"""Extra inputs a policy may read after the observation (the optional ``inputs`` field):
``"afterstate"``, each action's afterstate win chance (`qwixx_env.bots.afterstate`; the tables
with a network, `NETWORKS` there), one number per action."""


def input_width(spec: dict[str, Any]) -> int:
    """How many numbers the extra `inputs` add after the observation."""
    return sum(spec["num_actions"] for name in spec.get("inputs", ()) if name == "afterstate")

Layer = tuple[np.ndarray, np.ndarray, "str | None"]
"""One linear layer: weight (out, in), bias (out,), activation after it (a name or None)."""


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used; the message names the file and what is wrong."""


# --- the numpy policy ---------------------------------------------------------------------


class NumpyPolicy:
    """A loaded checkpoint: the policy and value networks as numpy arrays.

    Called on a batch — ``policy(observations (n, D), masks (n, A)) -> actions (n,)`` — it
    returns the legal action with the highest logit (deterministic; ties go to the lowest
    action). That is the action ``MaskablePPO.predict(..., deterministic=True)`` picks, but
    where two legal logits are within float32 rounding of each other: MaskablePPO takes the
    argmax of the softmax, where they tie and the lower action wins. It can stand in a
    `QwixxVectorEnv` opponent pool as a frozen policy. Make it with `load`.
    """

    def __init__(self, spec: dict[str, Any], arrays: dict[str, np.ndarray], *, name: str, source: str):
        self.name, self.source, self.spec = name, source, spec
        self.variant: str = spec["variant"]
        self.lucky: str | None = spec["lucky"]
        self.num_players: int = spec["num_players"]
        self.observation_size: int = spec["observation_size"]
        self.num_actions: int = spec["num_actions"]
        self.meta: dict[str, Any] = spec["meta"]
        self.inputs: tuple[str, ...] = tuple(spec.get("inputs", ()))
        self._nets = {
            net: [
                (arrays[f"{net}.{i}.weight"], arrays[f"{net}.{i}.bias"], layer["activation"])
                for i, layer in enumerate(spec["networks"][net])
            ]
            for net in NETWORKS
        }

    @classmethod
    def load(cls, name_or_path: "str | os.PathLike[str]") -> "NumpyPolicy":
        """Load an installed checkpoint by name (``"ppo-classic-2p"``) or a checkpoint file
        by path (with or without the ``.json``/``.npz`` suffix; a str with a path separator
        or one of those suffixes is a path). Raises `FileNotFoundError` for a missing file
        and `CheckpointError` (a `ValueError`) for an unknown name or a bad file."""
        json_path, npz_path = _resolve(name_or_path)
        return cls(*_read(json_path, npz_path), name=json_path.name[: -len(".json")], source=str(json_path))

    def __repr__(self) -> str:
        return f"NumpyPolicy({self.name!r}: {self.variant}, {self.num_players} player(s))"

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """(n, A) float32: the policy network's raw action logits, before masking."""
        return _forward(self._nets["policy"], self._observations(observations))

    def value(self, observations: np.ndarray) -> np.ndarray:
        """(n,) float32: the value network's estimate of each observation."""
        return _forward(self._nets["value"], self._observations(observations))[:, 0]

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(n,) int64: the highest-logit legal action of each row (see the class docstring)."""
        logits = self.logits(observations)
        masks = np.asarray(masks)
        if masks.shape != logits.shape:
            raise ValueError(
                f"masks: got shape {masks.shape}; {self!r} expects (n, {self.num_actions}) "
                f"for {len(logits)} observation(s)"
            )
        legal = masks.astype(bool)
        empty = np.flatnonzero(~legal.any(axis=1))
        if empty.size:
            raise ValueError(f"masks: row {int(empty[0])} offers no legal action (not this seat's turn?)")
        return np.where(legal, logits, -np.inf).argmax(axis=1).astype(np.int64)

    def _observations(self, observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.observation_size:
            raise ValueError(
                f"observations: got shape {obs.shape}; {self!r} expects (n, {self.observation_size}), "
                f"the {self.variant} observation for {self.num_players} player(s)"
            )
        if "afterstate" in self.inputs:
            from qwixx_env.bots.afterstate import afterstate_inputs

            obs = np.hstack([obs, afterstate_inputs(obs, self.variant, self.num_players)])
        return obs


def _forward(layers: list[Layer], x: np.ndarray) -> np.ndarray:
    for weight, bias, activation in layers:
        x = x @ weight.T + bias
        if activation is not None:
            x = ACTIVATIONS[activation](x)
    return x


# --- the bot --------------------------------------------------------------------------------


class PretrainedBot:
    """The common bot interface over a `NumpyPolicy`: ``act(observation dict) -> action``.

    `variant`, `num_players` and (Longo) `lucky` default to the checkpoint's; given, they must
    match it (a policy only reads the observation it was trained on, and plays the lucky rule it
    was trained under; classic has no lucky numbers, so there only ``"bonus"``, the default, is
    accepted). The bot is deterministic, so `seed` is accepted for the interface and unused.
    """

    def __init__(
        self,
        policy: NumpyPolicy,
        *,
        variant: str | None = None,
        num_players: int | None = None,
        lucky: str | None = None,
        seed: int | None = None,
    ):
        if num_players is not None:
            check_num_players(num_players)  # 2.0 or True is no player count, even where it equals one
        check_seed(seed)
        reads = "a policy reads the observation it was trained on"
        for option, wanted, plays, why in (
            ("variant", variant, policy.variant, reads),
            ("num_players", num_players, policy.num_players, reads),
            ("lucky", lucky, policy.lucky, "a policy plays the lucky rule it was trained under"),
        ):
            if option == "lucky" and wanted is not None and policy.lucky is None:
                get_variant(policy.variant, wanted)  # classic: "bonus" is harmless, anything else an error
                continue
            if wanted is not None and (wanted != plays or isinstance(wanted, bool)):
                raise ValueError(
                    f"{option}: got {wanted!r}; checkpoint {policy.name!r} ({policy.source}) plays "
                    f"{option}={plays!r} only ({why})"
                )
        self.policy = policy
        self.name = policy.name
        self.variant, self.num_players = policy.variant, policy.num_players

    def __repr__(self) -> str:
        return f"PretrainedBot({self.name!r}: {self.variant}, {self.num_players} player(s))"

    def act(self, observation: dict[str, Any]) -> int:
        vector = np.asarray(observation["observation"], np.float32)[None]
        mask = np.asarray(observation["action_mask"])[None]
        return int(self.policy(vector, mask)[0])


def load(
    name_or_path: "str | os.PathLike[str]",
    *,
    variant: str | None = None,
    num_players: int | None = None,
    lucky: str | None = None,
    seed: int | None = None,
) -> PretrainedBot:
    """A `PretrainedBot` from an installed checkpoint's name or a checkpoint file's path.

    See `NumpyPolicy.load` for how the argument is read and the errors; `variant`,
    `num_players` and `lucky`, when given, must be the checkpoint's (a `ValueError` says what
    it plays).
    """
    policy = NumpyPolicy.load(name_or_path)
    return PretrainedBot(policy, variant=variant, num_players=num_players, lucky=lucky, seed=seed)


# --- finding checkpoints --------------------------------------------------------------------


def checkpoints_dir() -> Path:
    """The installed checkpoints: the ``qwixx_env.checkpoints`` package's folder, or, in a
    source checkout where that package is not installed, the repository's ``checkpoints/``."""
    try:
        return Path(str(resources.files("qwixx_env.checkpoints")))
    except ModuleNotFoundError as err:
        if err.name != "qwixx_env.checkpoints":
            raise
        return Path(__file__).resolve().parents[2] / "checkpoints"


def checkpoint_names() -> list[str]:
    """The names of the installed checkpoints (their JSON files), sorted."""
    return _names_in(checkpoints_dir())


def _names_in(folder: Path) -> list[str]:
    return sorted(p.name[: -len(".json")] for p in folder.glob("*.json")) if folder.is_dir() else []


def is_checkpoint_name(name_or_path: "str | os.PathLike[str]") -> bool:
    """Whether `load` reads the argument as an installed checkpoint's name rather than a
    file's path: a `str` with no path separator and no ``.json``/``.npz`` ending."""
    text = os.fspath(name_or_path)
    return isinstance(name_or_path, str) and not (
        any(s in text for s in ("/", os.sep)) or text.endswith((".json", ".npz"))
    )


def _resolve(name_or_path: "str | os.PathLike[str]") -> tuple[Path, Path]:
    """(json, npz) paths of a checkpoint name or path (see `NumpyPolicy.load`)."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(
            f"checkpoint: got {name_or_path!r}; expected a checkpoint name or a path (str or Path)"
        )
    text = os.fspath(name_or_path)
    if is_checkpoint_name(name_or_path):
        if text not in checkpoint_names():
            raise CheckpointError(
                f"checkpoint: got name {text!r}; installed checkpoints are {checkpoint_names()} "
                f"(in {checkpoints_dir()}); for a file of your own pass its path, e.g. './{text}.json'"
            )
        base = checkpoints_dir() / text
    else:
        base = Path(text)
        if base.suffix in (".json", ".npz"):
            base = base.with_suffix("")
    return base.with_name(base.name + ".json"), base.with_name(base.name + ".npz")


# --- reading and checking -------------------------------------------------------------------


def _read(json_path: Path, npz_path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The checked JSON and arrays of a checkpoint (see the module docstring for the checks)."""
    size = _check_is_file(json_path)
    if size > MAX_JSON_BYTES:
        raise CheckpointError(
            f"checkpoint {json_path}: {size} bytes; a checkpoint's JSON is at most {MAX_JSON_BYTES} bytes (this is not one)"
        )
    try:
        spec = json.loads(json_path.read_bytes().decode("utf-8"))
    except (ValueError, RecursionError) as err:  # JSONDecodeError, UnicodeDecodeError; deep nesting
        raise CheckpointError(f"checkpoint {json_path}: not valid JSON ({err})") from None
    _check_spec(spec, str(json_path))
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
    arrays = _load_arrays(data, spec, str(npz_path))
    return spec, arrays


def _load_arrays(data: bytes, spec: dict[str, Any], source: str) -> dict[str, np.ndarray]:
    """The npz's arrays, each checked against the layer list. Compressed or encrypted members
    (which could inflate far beyond the checked size) are refused, and every member's header
    is checked (float32 of the layer's shape, so no pickle and no oversized allocation) before
    its data is read."""
    shapes = _expected_shapes(spec)
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
                if header != (shapes[name], False, np.dtype("<f4")):
                    shape, fortran, dtype = header
                    raise CheckpointError(
                        f"checkpoint {source}: array {name!r} is {dtype} {shape}"
                        f"{' (Fortran order)' if fortran else ''}; expected float32 {shapes[name]}"
                    )
                # the data must be in the file: a forged header cannot make np.load allocate more
                # (stored members: the bytes read are compress_size, which file_size must equal)
                data_bytes = 4 * math.prod(shapes[name])
                if not info.compress_size == info.file_size == header_bytes + data_bytes:
                    raise CheckpointError(
                        f"checkpoint {source}: array {name!r} holds {info.compress_size - header_bytes} bytes of data "
                        f"(its zip entry says {info.file_size - header_bytes}); float32 {shapes[name]} needs {data_bytes}"
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


def _expected_shapes(spec: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Array name -> shape, from a checked spec's layer lists (``policy.0.weight``: (out, in))."""
    return {
        f"{net}.{i}.{part}": shape
        for net in NETWORKS
        for i, layer in enumerate(spec["networks"][net])
        for part, shape in (("weight", (layer["out"], layer["in"])), ("bias", (layer["out"],)))
    }


def _check_spec(spec: Any, source: str) -> None:
    """Check a checkpoint's JSON description; raise `CheckpointError` naming `source`, the
    field and what is accepted."""

    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {source}: {what}")

    def count(value: Any, field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad(f"{field}: got {value!r}; expected a positive integer")
        return value

    if not isinstance(spec, dict):
        raise bad(f"got a JSON {type(spec).__name__}; expected an object with fields {list(_FIELDS)}")
    if spec.get("format") != FORMAT:
        raise bad(
            f"format: got {spec.get('format')!r}; expected {FORMAT!r} (a policy exported by this qwixx_env)"
        )
    if not set(_FIELDS) <= set(spec) <= set(_FIELDS + _OPTIONAL_FIELDS):
        missing = sorted(set(_FIELDS) - set(spec))
        extra = sorted(set(spec) - set(_FIELDS + _OPTIONAL_FIELDS))
        raise bad(f"fields: missing {missing}, unexpected {extra}; expected {list(_FIELDS)} "
                  f"(and optionally {list(_OPTIONAL_FIELDS)})")
    if spec["variant"] not in VARIANT_NAMES:
        raise bad(f"variant: got {spec['variant']!r}; expected one of {VARIANT_NAMES}")
    variant = get_variant(spec["variant"])
    if variant.lucky_count and spec["lucky"] not in LUCKY_RULES or not variant.lucky_count and spec["lucky"] is not None:
        accepted = f"one of {list(LUCKY_RULES)}" if variant.lucky_count else "null (classic has no lucky numbers)"
        raise bad(f"lucky: got {spec['lucky']!r}; expected {accepted} for {variant.name}")
    variant = get_variant(spec["variant"], spec["lucky"])
    try:
        num_players = check_num_players(spec["num_players"])
    except ValueError as err:
        raise bad(str(err)) from None
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
    if "afterstate" in inputs:
        from qwixx_env.bots.afterstate import NETWORKS as AFTERSTATE_TABLES
        from qwixx_env.bots.afterstate import tables

        if (variant.name, num_players) not in AFTERSTATE_TABLES:
            raise bad(f"inputs: 'afterstate' is for {tables()}; got {variant.name} with {num_players}")
    networks = spec["networks"]
    if not isinstance(networks, dict) or set(networks) != set(NETWORKS):
        raise bad(f"networks: got {networks!r}; expected an object with layer lists {list(NETWORKS)}")
    for net in NETWORKS:
        layers = networks[net]
        if not isinstance(layers, list) or not layers:
            raise bad(f"networks.{net}: got {layers!r}; expected a non-empty list of layers")
        width = spec["observation_size"] + input_width(spec)
        for i, layer in enumerate(layers):
            where = f"networks.{net}[{i}]"
            if not isinstance(layer, dict) or set(layer) != set(_LAYER_FIELDS):
                raise bad(f"{where}: got {layer!r}; expected an object with fields {list(_LAYER_FIELDS)}")
            if count(layer["in"], f"{where}.in") != width:
                first = "the observation and inputs have" if input_width(spec) else "the observation has"
                before = "the layer before gives" if i else first
                raise bad(f"{where}.in: got {layer['in']}; {before} {width}")
            width = count(layer["out"], f"{where}.out")
            last, act = i == len(layers) - 1, layer["activation"]
            if not (act is None if last else isinstance(act, str) and act in ACTIVATIONS):
                accepted = "null (the output layer)" if last else f"one of {sorted(ACTIVATIONS)}"
                raise bad(f"{where}.activation: got {layer['activation']!r}; expected {accepted}")
        wanted = spec["num_actions"] if net == "policy" else 1
        if width != wanted:
            raise bad(f"networks.{net}: outputs {width}; expected {wanted}")
    weights = spec["weights"]
    if not isinstance(weights, dict) or set(weights) != {"sha256", "bytes"}:
        raise bad(f"weights: got {weights!r}; expected an object with fields ['sha256', 'bytes']")
    digest = weights["sha256"]
    if not isinstance(digest, str) or len(digest) != 64 or set(digest) - set("0123456789abcdef"):
        raise bad(f"weights.sha256: got {digest!r}; expected 64 lowercase hex digits")
    count(weights["bytes"], "weights.bytes")
    if not isinstance(spec["meta"], dict):
        raise bad(f"meta: got {spec['meta']!r}; expected an object")


# --- writing ----------------------------------------------------------------------------------


def write_policy(
    path: "str | os.PathLike[str]",
    *,
    policy: Sequence[Layer],
    value: Sequence[Layer],
    variant: str,
    num_players: int,
    lucky: str | None = None,
    meta: dict[str, Any],
    inputs: Sequence[str] = (),
) -> Path:
    """Write a checkpoint pair from numpy layers (`Layer`: weight (out, in), bias, activation)
    and return the JSON's path; `path` may end in ``.json`` or ``.npz`` or neither.

    Each file is written to a temporary file in the same folder, synced, and renamed over
    the target; the npz first, the JSON last. A crash therefore leaves either the old pair,
    or the new npz with the old JSON — which loading refuses (sha256) — never a JSON with a
    missing or partial npz. The description is checked exactly as loading checks it.
    """
    json_path, npz_path = _resolve(Path(path))
    arrays: dict[str, np.ndarray] = {}
    networks: dict[str, list[dict[str, Any]]] = {}
    for net, layers in (("policy", policy), ("value", value)):
        networks[net] = []
        for i, (weight, bias, activation) in enumerate(layers):
            weight = np.ascontiguousarray(weight, np.float32)
            if weight.ndim != 2:
                raise ValueError(f"{net} layer {i}: got a weight of shape {weight.shape}; expected (out, in)")
            arrays[f"{net}.{i}.weight"], arrays[f"{net}.{i}.bias"] = (
                weight,
                np.ascontiguousarray(bias, np.float32),
            )
            networks[net].append({"in": weight.shape[1], "out": weight.shape[0], "activation": activation})
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    data = buffer.getvalue()
    v = get_variant(variant, lucky)
    num_players = check_num_players(num_players)
    spec = {
        "format": FORMAT,
        "variant": v.name,
        "lucky": v.lucky_rule,
        "num_players": num_players,
        "observation_size": layout_for(v, num_players).size,
        "num_actions": v.num_actions,
        "networks": networks,
        "weights": {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)},
        "meta": meta,
    }
    if inputs:
        spec["inputs"] = list(inputs)
    _check_spec(spec, str(json_path))
    _load_arrays(data, spec, str(npz_path))  # shapes and values, before anything is written
    try:
        text = json.dumps(spec, indent=2, allow_nan=False) + "\n"
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"meta: got {meta!r}; expected JSON-ready data (str, numbers, lists, dicts): {err}"
        ) from None
    write_atomically(npz_path, data)
    write_atomically(json_path, text.encode("utf-8"))
    return json_path


def export_policy(
    model: Any,
    path: "str | os.PathLike[str]",
    *,
    meta: dict[str, Any],
    variant: str | None = None,
    num_players: int | None = None,
    lucky: str | None = None,
) -> Path:
    """Export an sb3-contrib ``MaskablePPO`` model's MLP policy as a checkpoint pair (see
    `write_policy`) and return the JSON's path. Needs torch (imported here only).

    Extra inputs an `AfterstateInputs` wrapper appends to the model's observations are
    recorded (``inputs``), so the loaded policy computes them itself. The policy must be
    ``"MlpPolicy"``: the flatten extractor, then ``mlp_extractor``'s
    policy and value nets (linear layers, each followed by the policy's ``activation_fn``,
    tanh or relu) and the ``action_net`` and ``value_net`` heads. `variant`, `num_players`
    and `lucky` default to those of the model's training env (a `QwixxVectorEnv` under
    `Sb3VecEnv`); give them when the model has no env. `meta` (JSON-ready: config, steps,
    wall time, ...) is stored as is.
    """
    from stable_baselines3.common.torch_layers import FlattenExtractor
    from stable_baselines3.common.vec_env import VecNormalize
    from torch import nn

    from qwixx_env.envs.vector import QwixxVectorEnv

    policy = model.policy
    names = {nn.Tanh: "tanh", nn.ReLU: "relu"}
    if policy.activation_fn not in names:
        raise ValueError(
            f"activation_fn: got {policy.activation_fn!r}; export supports {sorted(names.values())}"
        )
    activation = names[policy.activation_fn]
    extractors = {policy.features_extractor, policy.pi_features_extractor, policy.vf_features_extractor}
    if not all(isinstance(e, FlattenExtractor) for e in extractors):
        raise ValueError(
            f"features extractor: got {extractors!r}; export supports MlpPolicy's FlattenExtractor"
        )

    def layers(body: nn.Sequential, head: nn.Linear, where: str) -> list[Layer]:
        out: list[Layer] = []
        for module in [*body, head]:
            if isinstance(module, nn.Linear):
                out.append((module.weight.detach().cpu().numpy(), module.bias.detach().cpu().numpy(), None))
            elif isinstance(module, policy.activation_fn) and out and out[-1][2] is None:
                out[-1] = (*out[-1][:2], activation)
            else:
                raise ValueError(
                    f"{where}: got module {module!r}; export supports Linear layers each followed by {activation}"
                )
        return out

    env = model.get_env()
    inputs: list[str] = []
    while env is not None and hasattr(env, "venv"):  # SB3's VecEnv wrappers
        inputs += getattr(env, "policy_inputs", ())  # extra inputs a wrapper appends (AfterstateInputs)
        if isinstance(env, VecNormalize):
            raise ValueError(
                "model env: VecNormalize changes the observations, which a checkpoint cannot store"
            )
        env = env.venv
    game = getattr(env, "env", None)  # what Sb3VecEnv adapts
    if isinstance(game, QwixxVectorEnv):
        variant = game.variant.name if variant is None else variant
        lucky = game.variant.lucky_rule if lucky is None else lucky
        num_players = game.num_players if num_players is None else num_players
    if variant is None or num_players is None:
        raise ValueError(
            f"variant, num_players: the model's env {env!r} is not a QwixxVectorEnv (under Sb3VecEnv); "
            "pass variant= and num_players= (and lucky= for Longo)"
        )
    return write_policy(
        path,
        policy=layers(policy.mlp_extractor.policy_net, policy.action_net, "policy net"),
        value=layers(policy.mlp_extractor.value_net, policy.value_net, "value net"),
        variant=variant,
        num_players=num_players,
        lucky=lucky,
        meta=meta,
        inputs=inputs,
    )


def _register_folder(folder: Path) -> list[str]:
    """Register every checkpoint in `folder` as a bot under its name; return the names.
    Cheap: only the folder is listed; `bots.make` reads and checks the files."""
    names = _names_in(folder)
    for name in names:
        bots.register(name, functools.partial(load, folder / f"{name}.json"))
    return names


_register_folder(checkpoints_dir())
