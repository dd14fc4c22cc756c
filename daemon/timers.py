"""The daemon's clock for a table's timers: what the table asks for, kept on the monotonic clock.

A table is sans-I/O and has no clock; it says which deadlines are running (`TableService.
timers`: a card waiting for the console's declaration, a round waiting for the shoe). This
keeps, for each, when it began on the monotonic clock, so that a wall clock that steps never
fires or holds one back, and says which have passed. The daemon journals each passed timer
as an event (`timer`), which the table applies only if what it was set for still stands: a
replay therefore does what the live table did. After a restart every running timer starts
again from zero: a wait is never cut short by the time the daemon was down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from daemon.table_service import Timer


class TableTimers:
    """One table's running timers and their deadlines."""

    def __init__(self, seconds: Mapping[str, float]) -> None:
        """`seconds`: how long each kind of timer runs (`[timing]`, docs/configuration.md)."""
        self._seconds = dict(seconds)
        self._deadlines: dict[Timer, float] = {}

    def seconds(self, timer: Timer) -> float:
        return self._seconds[timer.kind]

    def follow(self, running: Iterable[Timer], now: float) -> None:
        """The table's timers now: new ones start at `now`, ended ones are forgotten."""
        running = tuple(running)
        deadlines = self._deadlines
        for timer in [t for t in deadlines if t not in running]:
            del deadlines[timer]
        for timer in running:
            deadlines.setdefault(timer, now + self._seconds[timer.kind])

    def next_due(self) -> float | None:
        return min(self._deadlines.values(), default=None)

    def due(self, now: float) -> list[Timer]:
        """The timers past their deadline, forgotten here (the table says whether they
        still count)."""
        passed = [timer for timer, deadline in self._deadlines.items() if deadline <= now]
        for timer in passed:
            del self._deadlines[timer]
        return passed
