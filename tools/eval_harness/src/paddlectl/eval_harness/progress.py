"""Progress of the long steps (the evaluation set, the latency rounds, the cold start, logging).

An evaluation takes tens of seconds; silence looks like a hang. ``evaluate`` reports through the
small ``Stages`` interface so it needs no terminal (tests record it); the CLI passes the one
``rich_stages`` makes, a rich progress bar on stderr that leaves ``--json`` stdout clean.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

Advance = Callable[[int], None]


class Stages(Protocol):
    def stage(self, description: str, total: int | None = None) -> Advance:
        """Start a step of ``total`` units (None: unknown); the returned callable advances it."""
        ...


class Quiet:
    """No display: what ``evaluate`` uses unless told otherwise."""

    def stage(self, description: str, total: int | None = None) -> Advance:
        return lambda units=1: None


QUIET = Quiet()


class _RichStages:
    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.current: int | None = None

    def stage(self, description: str, total: int | None = None) -> Advance:
        if self.current is not None:  # the previous step is over: show it complete
            done = self.bar.tasks[self.current].completed
            self.bar.update(self.current, total=done, completed=done)
        self.current = self.bar.add_task(escape(description), total=total)
        task_id = self.current
        return lambda units=1: self.bar.advance(task_id, units)


@contextlib.contextmanager
def rich_stages(console: Console) -> Iterator[Stages]:
    """A progress bar per step on ``console``, removed when the block ends."""
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        yield _RichStages(bar)
