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

    from daemon.table.custody_flow import Timer


class TableTimers:
    """One table's running timers and their deadlines."""

    def __init__(self, seconds: Mapping[str, float]) -> None:
        """`seconds`: how long each kind of timer runs (`[timing]`, docs/configuration.md)."""
        self._seconds = dict(seconds)
        self._deadlines: dict[Timer, float] = {}
        self._lengths: dict[Timer, float] = {}  # each running timer's length when it began

    def seconds(self, timer: Timer) -> float:
        """How long `timer` runs: as long as it was set for when it began."""
        return self._lengths.get(timer, self._seconds[timer.kind])

    def retime(self, seconds: Mapping[str, float]) -> None:
        """New lengths (a reload's `[timing]`) for the timers that begin from now on: one
        already running keeps the deadline it began with, so a reload never turns a wait
        into a doubt at once, nor stretches one a supervisor is already counting on."""
        self._seconds = dict(seconds)

    def follow(self, running: Iterable[Timer], now: float) -> None:
        """The table's timers now: new ones start at `now`, ended ones are forgotten."""
        running = tuple(running)
        for timer in [t for t in self._lengths if t not in running]:
            self._deadlines.pop(timer, None)
            del self._lengths[timer]
        for timer in running:
            if timer not in self._deadlines:  # new, or passed and set again by the table
                self._lengths[timer] = self._seconds[timer.kind]
                self._deadlines[timer] = now + self._lengths[timer]

    def next_due(self) -> float | None:
        return min(self._deadlines.values(), default=None)

    def due(self, now: float) -> list[Timer]:
        """The timers past their deadline, forgotten here (the table says whether they
        still count)."""
        passed = [timer for timer, deadline in self._deadlines.items() if deadline <= now]
        for timer in passed:
            del self._deadlines[timer]
        return passed
