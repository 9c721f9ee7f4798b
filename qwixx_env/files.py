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


def write_atomically(target: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `target`, sync it, make it readable by all
    (0644, as package data should be) and rename it over `target`; then sync the folder, so
    a crash leaves the old file or the new one, never a part."""
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o644)
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


def save_figure(fig: Any, path: "str | os.PathLike[str]", **options: Any) -> None:
    """Save a matplotlib figure as a PNG with `write_atomically` and close it."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", **options)
    plt.close(fig)
    write_atomically(Path(path), buffer.getvalue())
