"""Checkpoints of a run, written so that a kill at any moment leaves a complete one.

A checkpoint is the folder ``<run>/checkpoint/``: ``model.zip`` (the SB3 model, optimiser
included), ``snapshots/`` (the pool's frozen learners) and ``state.json`` (steps done, pool
entries, evaluation history, seeds, wall time; written last). `save` builds the whole folder
as ``checkpoint.tmp`` beside it, syncs every file and the folders, then renames the old
checkpoint away (``checkpoint.old``), renames the new one in and removes the old one. At
every instant one of ``checkpoint`` and ``checkpoint.old`` is complete, and `latest` finds it
(a leftover ``checkpoint.tmp`` is never trusted).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from qwixx_env.bots.sb3_zip import MODEL, STATE  # `qwixx bench` reads a model's game from them

NAME, TEMP, OLD = "checkpoint", "checkpoint.tmp", "checkpoint.old"
SNAPSHOTS = "snapshots"


def save(run: Path, state: dict[str, Any], write_files: Callable[[Path], None]) -> Path:
    """Write a checkpoint of `run`: `write_files(folder)` puts the model and snapshots into
    the new folder, then `state` goes to ``state.json``; see the module docstring."""
    temp, final, old = run / TEMP, run / NAME, run / OLD
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir(parents=True)
    write_files(temp)
    (temp / STATE).write_text(json.dumps(state, indent=1) + "\n")
    _sync_tree(temp)
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)  # a complete `final` exists, so `old` is spare
        os.replace(final, old)
    os.replace(temp, final)
    _sync_dir(run)
    shutil.rmtree(old, ignore_errors=True)
    return final


def latest(run: Path) -> Path | None:
    """The newest complete checkpoint folder of `run`, or None."""
    for name in (NAME, OLD):
        folder = run / name
        if (folder / STATE).is_file() and (folder / MODEL).is_file():
            return folder
    return None


def read_state(folder: Path, required: Sequence[str] = ()) -> dict[str, Any]:
    """A checkpoint's ``state.json``: a JSON object holding the `required` fields, else a
    `ValueError` naming the file and what is wrong (a checkpoint damaged from outside)."""
    path = folder / STATE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:  # unreadable, not UTF-8, not JSON
        raise ValueError(f"checkpoint {path}: not a readable state file ({err})") from None
    missing = [k for k in required if k not in state] if isinstance(state, dict) else list(required)
    if not isinstance(state, dict) or missing:
        raise ValueError(f"checkpoint {path}: missing the fields {missing}; "
                         f"expected a JSON object with {list(required)}"
                         " (the checkpoint is damaged)")
    return state


def _sync_tree(folder: Path) -> None:
    """fsync every file under `folder`, then the folders themselves."""
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())
        else:
            _sync_dir(path)
    _sync_dir(folder)


def _sync_dir(folder: Path) -> None:
    if os.name != "posix":  # folders cannot be opened for fsync elsewhere
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
