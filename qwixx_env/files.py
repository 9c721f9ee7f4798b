"""Writing what a user keeps: every file is written whole or not at all.

`write_atomically` writes beside the target and renames over it, so a kill during a save
leaves the old file (or none), never a part of the new one. Checkpoints, model cards, arena
results, run records and plots all go through it.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomically(target: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to a temporary file beside `target`, sync it, give it `mode` (default
    0644: readable by all, as package data should be; 0600 for secrets) and rename it over
    `target`; then sync the folder, so a crash leaves the old file or the new one, never a
    part."""
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    if os.name == "posix":  # make the rename itself durable before the next file is renamed
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def folder_problem(folder: str | os.PathLike[str], *, create: bool = False) -> str | None:
    """Why files cannot be written into `folder`, as a phrase ("does not exist", "is not a
    folder", "is not writable"), or None when they can. With `create` a missing folder is
    fine if the nearest folder above it that exists is writable (it will be made)."""
    folder = Path(folder)
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if existing != folder and not create:
        return "does not exist"
    if not existing.is_dir():
        return "is not a folder" if existing == folder else f"is not a folder (its parent {existing} is a file)"
    if not os.access(existing, os.W_OK | os.X_OK):
        return "is not writable" if existing == folder else f"is not writable (its parent {existing} is not)"
    return None


def save_figure(fig: Any, path: str | os.PathLike[str], **options: Any) -> None:
    """Save a matplotlib figure as a PNG with `write_atomically` and close it."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", **options)
    plt.close(fig)
    write_atomically(Path(path), buffer.getvalue())
