"""The opponent pool of self-play: scripted bots and frozen snapshots of the learner.

A snapshot is the learner exported with `export_policy` to ``<run>/snapshots/<name>.{npz,json}``
and loaded back as a `NumpyPolicy`, a batched numpy forward pass that `QwixxVectorEnv` calls
for the seats it plays. `opponents()` is the weighted pool in the form
`QwixxVectorEnv.set_opponents` takes; `entries()` and `restore` carry it through checkpoints.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qwixx_env.nets import NumpyPolicy
from qwixx_env.training.config import SelfPlayConfig
from qwixx_env.training.export import export_policy


@dataclass
class Snapshot:
    """A frozen copy of the learner in the pool."""

    name: str  # "snapshot@<steps>"
    steps: int  # learner steps when it was taken
    policy: NumpyPolicy

    @property
    def stem(self) -> Path:
        """Its files without the suffix (``.json`` / ``.npz``)."""
        return Path(self.policy.source).with_suffix("")


class OpponentPool:
    """Scripted bots (name -> weight) and the newest snapshots of the learner.

    The snapshots share `self_play.share` of the weight evenly and the scripted bots the rest
    (in their own proportions); with no scripted bots the snapshots take it all, with no
    snapshots the scripted bots do.
    """

    def __init__(self, scripted: dict[str, float], self_play: SelfPlayConfig | None, folder: Path):
        self.scripted = dict(scripted)
        self.self_play = self_play
        self.folder = Path(folder)
        self.snapshots: list[Snapshot] = []

    def add(self, model: Any, steps: int, meta: dict[str, Any]) -> Snapshot:
        """Export the learner as a new snapshot and put it in the pool (dropping the oldest
        beyond `max_snapshots`)."""
        assert self.self_play is not None, "snapshots need opponents.self_play"
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.insert(steps, export_policy(model, self.file(steps), meta={**meta, "steps": steps}))

    def file(self, steps: int) -> Path:
        """Where the snapshot taken at `steps` is written (without the suffix)."""
        return self.folder / f"snapshot_{steps:012d}"

    def insert(self, steps: int, path: Path) -> Snapshot:
        """Put the policy exported to `path` (`file(steps)`, by any trainer's export) in the
        pool as the snapshot taken at `steps` (dropping the oldest beyond `max_snapshots`)."""
        assert self.self_play is not None, "snapshots need opponents.self_play"
        snapshot = Snapshot(f"snapshot@{steps}", steps, NumpyPolicy.load(path))
        self.snapshots.append(snapshot)
        del self.snapshots[: max(0, len(self.snapshots) - self.self_play.max_snapshots)]
        return snapshot

    def beaten_by(self, record: dict[str, Any]) -> bool:
        """Whether an evaluation `record` (`evaluate`'s, with the newest snapshot's results under
        ``"snapshot"``) shows the learner winning at least `add_when_win_rate` against every
        pool opponent it measured (scripted pool bots among its opponents and the newest
        snapshot)."""
        sp = self.self_play
        if sp is None or sp.add_when_win_rate is None or "opponents" not in record:
            return False
        measured = [r for name, r in record["opponents"].items() if name in self.scripted]
        measured += list(record.get("snapshot", {}).values())
        return bool(measured) and all(r["win_rate"] >= sp.add_when_win_rate for r in measured)

    @property
    def newest(self) -> Snapshot | None:
        return self.snapshots[-1] if self.snapshots else None

    def opponents(self) -> dict[Any, float]:
        """The pool as ``{opponent: weight}`` for `QwixxVectorEnv` (weights sum to 1)."""
        if not self.snapshots:
            share = 0.0
        elif not self.scripted:
            share = 1.0
        elif self.self_play is None:  # snapshots come from self-play only (add)
            raise RuntimeError(f"opponent pool: {len(self.snapshots)} snapshot(s) but no self_play config")
        else:
            share = self.self_play.share
        total = sum(self.scripted.values())
        # bot specs by name: the env resolves each once (`bots.specs.opponent`) and keeps it
        pool: dict[Any, float] = {name: (1 - share) * w / total for name, w in self.scripted.items() if share < 1}
        for s in self.snapshots:
            pool[s.policy] = share / len(self.snapshots)
        return pool

    def describe(self) -> str:
        """One line: every opponent and its weight."""
        names: dict[Any, str] = {n: n for n in self.scripted}
        names.update({s.policy: s.name for s in self.snapshots})
        return ", ".join(f"{names[o]} {w:.2f}" for o, w in self.opponents().items())

    # --- checkpoints -----------------------------------------------------------------------------

    def entries(self) -> list[dict[str, Any]]:
        """The snapshots, oldest first, as JSON data (their files by name)."""
        return [{"name": s.name, "steps": s.steps, "file": s.stem.name} for s in self.snapshots]

    def copy_files(self, folder: Path) -> None:
        """Copy every snapshot's files into `folder` (a checkpoint being written)."""
        folder.mkdir(parents=True, exist_ok=True)
        for s in self.snapshots:
            for suffix in (".npz", ".json"):
                shutil.copyfile(s.stem.with_suffix(suffix), folder / (s.stem.name + suffix))

    def restore(self, entries: list[dict[str, Any]], folder: Path) -> None:
        """Put back the snapshots of a checkpoint: its copies in `folder` return to the pool's
        own folder and are loaded (and checked) from there. `entries` has passed
        `check_entries` (the trainer checks them before it writes anything)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.snapshots = []
        for e in entries:
            for suffix in (".npz", ".json"):
                shutil.copyfile(folder / (e["file"] + suffix), self.folder / (e["file"] + suffix))
            policy = NumpyPolicy.load(self.folder / (e["file"] + ".json"))
            self.snapshots.append(Snapshot(e["name"], int(e["steps"]), policy))


    def drop_files_after(self, steps: int) -> None:
        """Delete the snapshot files in the pool's folder taken after `steps` decisions: those a
        killed run wrote after the checkpoint it is resumed from (no pool holds them)."""
        for path in self.folder.glob("snapshot_*.*"):
            taken = path.name.split(".", 1)[0].removeprefix("snapshot_")
            if taken.isdigit() and int(taken) > steps:
                path.unlink()


def check_entries(entries: Any, folder: Path) -> None:
    """A `ValueError` unless `entries` (a checkpoint's pool) lists snapshots whose files are
    all in `folder` (the checkpoint's copies), naming what is wrong."""
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and {"name", "steps", "file"} <= set(e) and isinstance(e["file"], str)
        and Path(e["file"]).name == e["file"] not in ("", ".", "..")  # a bare file name, no folder part
        for e in entries
    ):
        raise ValueError(f"checkpoint {folder.parent}: pool: got {entries!r}; expected a list of snapshot entries "
                         "with name, steps and file (the checkpoint is damaged)")
    for e in entries:
        for suffix in (".npz", ".json"):
            if not (folder / (e["file"] + suffix)).is_file():
                raise ValueError(f"checkpoint {folder.parent}: the pool's snapshot file {e['file'] + suffix} "
                                 "is missing "
                                 f"from {folder} (the checkpoint is damaged)")
