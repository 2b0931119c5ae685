"""Build progress on stderr: a live rich bar (datasets done, rejected, ETA) on a terminal, plain lines otherwise.

Plain lines when stderr is not a TTY, because CI logs and the nightly
deployment's logs would otherwise fill with redraw escapes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

_held: list[str] | None = None  # the lines of a probe, while held_notes() holds them back


def note(message: str, once: bool = False) -> None:
    """One line of build progress (`daregen: ...`), so a long silent phase says what it is doing. A note `once`
    tells a change the probe made itself (a damaged cache entry discarded), which the build that may follow a
    probe would not repeat: it is printed at once, even while held_notes() holds the others back."""
    if _held is not None and not once:
        _held.append(message)
        return
    print(f"daregen: {message}", file=sys.stderr, flush=True)


@contextmanager
def held_notes() -> Iterator[list[str]]:
    """Hold back the notes of a probe (the no-op check before Prefect starts, which the build then
    repeats when it has work to do): yields them, for the caller to print (note) only if the probe's
    answer stands, so no line is printed twice."""
    global _held
    outer, _held = _held, []
    try:
        yield _held
    finally:
        _held = outer


def phase_seconds(seconds: dict[str, float]) -> str:
    """`source 1.2 s, build 30.0 s, ...`: where a build spent its time, in phase order."""
    return ", ".join(f"{name} {s:.1f} s" for name, s in seconds.items())


def plural(n: int, word: str) -> str:
    """`1 dataset`, `2 datasets`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


class WaveProgress:
    """One wave at a time: `start(label, total, noun)`, `advance(ok)` per finished unit, `finish()`. A unit
    a stage turns down is "rejected": that is the pipeline working, not failing. A wave counts what entered
    it (`noun`: a dataset before the design, a task after it), never what the cache or an earlier stage
    already settled."""

    def __init__(self, live: bool | None = None) -> None:
        self.live = sys.stderr.isatty() if live is None else live
        self._progress = None
        self._task = None
        self.label, self.noun, self.total, self.done, self.failed = "", "dataset", 0, 0, 0

    def start(self, label: str, total: int, noun: str = "dataset") -> None:
        self.label, self.noun, self.total, self.done, self.failed = label, noun, total, 0, 0
        if self.live and total:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self._progress = Progress(TextColumn("  {task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("rejected {task.fields[failed]}"), TimeElapsedColumn(),
                                      TextColumn("ETA"), TimeRemainingColumn(),
                                      console=Console(stderr=True), transient=False)
            self._progress.start()
            self._task = self._progress.add_task(label, total=total, failed=0)

    def advance(self, ok: bool) -> None:
        self.done += 1
        self.failed += not ok
        if self._progress is not None:
            self._progress.update(self._task, advance=1, failed=self.failed)

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self.total:
            line = f"{self.total - self.failed:>5} of {plural(self.total, self.noun)} still in"
        else:
            line = f"    0 to run: every {self.noun} was restored from the cache or rejected before"
        print(f"  {self.label:<12} {line}", file=sys.stderr, flush=True)
