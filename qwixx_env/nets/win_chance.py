"""The shipped win-chance networks: where they live, and how the kernels get them.

A win-chance network rates a position (`qwixx_env.policies.value` features) with a small MLP; the
`afterstate` bot and the afterstate inputs of some policies read one per table size
(`AFTERSTATE_TABLES`), the `rollout` bot's leaf reads another (`LEAF_TABLES`). They ship in
``qwixx_env/nets/data/`` in the checked network file format (`qwixx_env.nets.checkpoint`,
kind ``qwixx_env.win_chance/1``); training writes them with `write_win_chance`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env.core.options import check_num_players
from qwixx_env.nets.checkpoint import (
    AFTERSTATE_TABLES,
    WIN_CHANCE,
    afterstate_tables,
    json_and_npz,
    read,
    write,
)
from qwixx_env.policies.value import num_features

LEAF_TABLES = {("classic", 2)}
"""The tables a rollout-leaf win-chance network ships for."""


def check_afterstate_table(variant: str, num_players: int) -> None:
    """Refuse a table no afterstate win-chance network is trained for."""
    if (variant, num_players) not in AFTERSTATE_TABLES:
        raise ValueError(
            f"afterstate: got variant={variant!r}, num_players={num_players!r}; a win-chance network is "
            f"trained for {afterstate_tables()} only"
        )


def network_name(role: str, variant: str, num_players: int) -> str:
    """The file name (without suffix) of a shipped win-chance network: ``role`` is
    ``"afterstate"`` (the `afterstate` bot's) or ``"value"`` (the rollout leaf's)."""
    return f"{role}-{variant}-{num_players}p"


def networks_dir() -> Path:
    """The folder of the shipped win-chance networks (``qwixx_env/nets/data``)."""
    return Path(__file__).resolve().parent / "data"


_NETWORK_CACHE: dict[tuple[str, str, int], tuple[np.ndarray, ...]] = {}


def win_chance_network(role: str, variant: str, num_players: int) -> tuple[np.ndarray, ...]:
    """A shipped win-chance network as the kernels take it: (w1, b1, w2, b2, w3, b3), each
    weight (in, out) and contiguous float64; read and checked once per process."""
    key = (role, variant, num_players)
    if key not in _NETWORK_CACHE:
        json_path, npz_path = json_and_npz(networks_dir() / network_name(role, variant, num_players))
        _NETWORK_CACHE[key] = kernel_arrays(*read(json_path, npz_path, kind=WIN_CHANCE))
    return _NETWORK_CACHE[key]


def kernel_arrays(spec: dict[str, Any], arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """A win-chance network's layers as `policies.value.win_chance` takes them (three layers:
    weight (in, out), bias; float64, contiguous). `spec` is checked (`checkpoint.check_description`), which
    asks for exactly that shape."""
    out: list[np.ndarray] = []
    for i in range(3):
        weight, bias = arrays[f"win_chance.{i}.weight"], arrays[f"win_chance.{i}.bias"]
        out += [np.ascontiguousarray(weight.T), np.ascontiguousarray(bias)]
    return tuple(out)


def write_win_chance(
    path: str | os.PathLike[str], network: Sequence[np.ndarray], *, variant: str, num_players: int,
    meta: dict[str, Any], features: str = "heuristic",
) -> Path:
    """Write a win-chance network given as the kernels take it ((w1, b1, w2, b2, w3, b3),
    weights (in, out)) as a network file pair; see `write`. `features` is its input layout
    (`checkpoint.FEATURE_LAYOUTS`; only ``"plain"`` is written into the file)."""
    w1, b1, w2, b2, w3, b3 = network
    layers = [(np.asarray(w1).T, b1, "relu"), (np.asarray(w2).T, b2, "relu"), (np.asarray(w3).T, b3, None)]
    spec = {"variant": variant, "num_players": check_num_players(num_players),
            "num_features": num_features(num_players) if features == "heuristic" else int(np.asarray(w1).shape[0]),
            "meta": meta}
    if features != "heuristic":
        spec["features"] = features
    return write(path, spec, {"win_chance": layers}, WIN_CHANCE)
