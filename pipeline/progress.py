"""Build progress on stderr: a live rich bar (datasets done, failed, ETA) on a terminal, plain lines otherwise.

Plain lines when stderr is not a TTY, because CI logs and the nightly
deployment's logs would otherwise fill with redraw escapes.
"""

from __future__ import annotations

import sys


class WaveProgress:
    """One wave at a time: `start(label, total)`, `advance(ok)` per finished dataset, `finish()`."""

    def __init__(self, live: bool | None = None) -> None:
        self.live = sys.stderr.isatty() if live is None else live
        self._progress = None
        self._task = None
        self.label, self.total, self.done, self.failed = "", 0, 0, 0

    def start(self, label: str, total: int) -> None:
        self.label, self.total, self.done, self.failed = label, total, 0, 0
        if self.live and total:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self._progress = Progress(TextColumn("  {task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("failed {task.fields[failed]}"), TimeElapsedColumn(),
                                      TextColumn("ETA"), TimeRemainingColumn(),
                                      console=Console(stderr=True), transient=False)
            self._progress.start()
            self._task = self._progress.add_task(label, total=total, failed=0)

    def advance(self, ok: bool) -> None:
        self.done += 1
        self.failed += not ok
        if self._progress is not None:
            self._progress.update(self._task, advance=1, failed=self.failed)

    def finish(self, still_in: int, of: int) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        print(f"  {self.label:<12} {still_in:>5} of {of} datasets still in", file=sys.stderr, flush=True)
