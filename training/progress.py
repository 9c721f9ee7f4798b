"""What a training run shows while it runs: log lines and one rich progress bar at a time."""

from __future__ import annotations

import time
from typing import Any


class RunOutput:
    """Log lines and a progress bar (of PPO steps, or of the warm start's decisions).

    Lines go to `console` (a rich Console) if given, else to stdout; while a bar is open they
    print above it. With `show_bar` False no bar is ever drawn (log lines only)."""

    def __init__(self, console: Any = None, show_bar: bool = True):
        self.console, self.show_bar = console, show_bar
        self._bar: Any = None

    def say(self, line: str) -> None:
        if self._bar is not None:
            self._bar.console.print(line)
        elif self.console is not None:
            self.console.print(line)
        else:
            print(line, flush=True)

    def open(self, description: str, total: int, start: int = 0, unit: str = "steps") -> None:
        """A bar of `total` `unit` under `description`, `start` of them done already."""
        if not self.show_bar:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn(unit),
            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn(), console=self.console,
        )
        self._task = self._bar.add_task(description, total=total, completed=start, rate="")
        self._start = (time.perf_counter(), start)
        self._bar.start()

    def advance(self, done: int) -> None:
        """Move the open bar (if any) to `done`, with the rate since it opened."""
        if self._bar is not None:
            t0, s0 = self._start
            rate = (done - s0) / max(time.perf_counter() - t0, 1e-9)
            self._bar.update(self._task, completed=done, rate=f"{rate:,.0f}/s")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
