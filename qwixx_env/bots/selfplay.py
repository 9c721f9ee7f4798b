"""`selfplay-<variant>-<P>p`: the afterstate policy on a network that learned by self-play alone.

Each such bot is a win-chance network in ``qwixx_env/nets/data/selfplay-<variant>-<P>p``
(json + npz, ``"features": "plain"``), trained by `qwixx_env.training.selfplay` from random
weights against itself and its snapshots: no behaviour cloning, no warm start, no scripted
bot in its inputs or features. It plays as the `afterstate` bot does (every legal action
crossed on a scratch sheet, the active player's white action with its best colour follow-up,
the position rated by the network), but the network reads the plain features, so nothing the
heuristic computes enters a decision. Its model card is the ``.md`` beside the network.
Every shipped network is registered under its file's name; it plays that table only.

>>> from qwixx_env import bots
>>> bot = bots.make("selfplay-classic-2p")
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from qwixx_env.bots import registry
from qwixx_env.bots.afterstate import AfterstateBot
from qwixx_env.core.options import TableOptions
from qwixx_env.nets.checkpoint import MAX_JSON_BYTES, WIN_CHANCE, WIN_CHANCE_FORMAT, json_and_npz, read
from qwixx_env.nets.installed import resolve
from qwixx_env.nets.win_chance import kernel_arrays, networks_dir
from qwixx_env.policies.value import NO_HEURISTIC, plain_num_features

PREFIX = "selfplay-"


class SelfPlayBot(AfterstateBot):
    """See the module docstring. Deterministic: `seed` is accepted and unused."""

    def __init__(self, path: Path, table: TableOptions, *, seed: int | None = None):
        self._path = path
        self.name = path.name
        super().__init__(table, seed=seed)

    def check_table(self, table: TableOptions) -> None:  # type: ignore[override]
        network(self._path).check_table(table)

    def network(self, table: TableOptions):
        return network(self._path).arrays(), NO_HEURISTIC


class SelfPlayNetwork:
    """A shipped self-play network as a registered bot factory: ``factory(table, seed=)`` makes
    its `SelfPlayBot`; its game is the table `bots.make` fills in."""

    def __init__(self, path: Path):
        self.path = path  # without suffix
        self._read: tuple[dict, dict] | None = None
        self._arrays: tuple | None = None

    def spec_and_arrays(self):
        """The checked file, read once."""
        if self._read is None:
            spec, arrays = read(*json_and_npz(self.path), kind=WIN_CHANCE)
            if spec.get("features") != "plain":
                raise ValueError(f"{self.path}: features: got {spec.get('features', 'heuristic')!r}; a self-play "
                                 "network reads the plain features")
            self._read = spec, arrays
        return self._read

    def arrays(self):
        """The network as the kernels take it (made once; every bot of this network shares it)."""
        if self._arrays is None:
            self._arrays = kernel_arrays(*self.spec_and_arrays())
        return self._arrays

    def default_table(self) -> TableOptions:
        spec, _ = self.spec_and_arrays()
        return TableOptions(variant=spec["variant"], num_players=spec["num_players"])

    def check_table(self, table: TableOptions) -> None:
        """Refuse a table that is not the network's (it reads that table's features only)."""
        own = self.default_table()
        for option in ("variant", "num_players"):
            if getattr(table, option) != getattr(own, option):
                raise ValueError(f"{option}: got {getattr(table, option)!r}; {self.path.name} plays "
                                 f"{option}={getattr(own, option)!r} only (the table it learned on)")
        # the learner plays its variant's own rules: Longo's lucky cross as a bonus, the sheet's score table
        if table.lucky != "bonus":
            raise ValueError(f"lucky: got {table.lucky!r}; {self.path.name} plays lucky='bonus' only (the rule it "
                             "learned under)")
        if table.score_table is not None:
            raise ValueError(f"score_table: got {table.score_table!r}; {self.path.name} plays the sheet's own score "
                             "table only (the one it learned under)")
        width = plain_num_features(table.num_players, table.rules.num_rows)
        if width != self.arrays()[0].shape[0]:
            raise ValueError(f"{self.path.name}: reads {self.arrays()[0].shape[0]} features; this table has {width}")

    def __call__(self, table: TableOptions | None = None, *, seed: int | None = None) -> SelfPlayBot:
        return SelfPlayBot(self.path, self.default_table() if table is None else table, seed=seed)


def selfplay_file(name_or_path: str | os.PathLike[str]) -> Path | None:
    """The network (path without suffix) if `name_or_path`, a checkpoint's path or a run folder
    (`nets.installed.resolve`), is a self-play network file (a win-chance network over the
    plain features, what ``qwixx-train --engine selfplay`` writes as ``final``); else None."""
    try:
        json_path, _ = resolve(name_or_path)
        if not json_path.is_file() or json_path.stat().st_size > MAX_JSON_BYTES:
            return None
        head = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return None
    if isinstance(head, dict) and head.get("format") == WIN_CHANCE_FORMAT and head.get("features") == "plain":
        return json_path.with_suffix("")
    return None


def shipped() -> list[str]:
    """The names of the shipped self-play networks, sorted."""
    return sorted(p.name[: -len(".json")] for p in networks_dir().glob(f"{PREFIX}*.json"))


_NETWORKS: dict[Path, tuple[tuple, SelfPlayNetwork]] = {}


def network(path: Path) -> SelfPlayNetwork:
    """The one `SelfPlayNetwork` of a file in this process: its file is read once while it
    stays as it is, and again once rewritten (a run still training writes its final network
    anew after every segment)."""
    stamp = tuple((s.st_mtime_ns, s.st_size, s.st_ino) for s in map(_stat, json_and_npz(path)))
    known = _NETWORKS.get(path)
    if known is None or known[0] != stamp:
        _NETWORKS[path] = stamp, SelfPlayNetwork(path)
    return _NETWORKS[path][1]


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except OSError:  # a file not there: SelfPlayNetwork's read says so in the package's words
        return os.stat_result((0,) * 10)


for _name in shipped():
    registry.register(_name, network(networks_dir() / _name))
