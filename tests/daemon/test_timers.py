"""A table's timers on the daemon's clock: a reload's new lengths, for the waits to come."""

from __future__ import annotations

from daemon.table.custody_flow import Timer
from daemon.table.timers import TableTimers


def test_new_lengths_are_for_the_waits_that_begin_after_them() -> None:
    """A reload never turns a running wait into a doubt at once, nor stretches it: a card
    already held keeps its 30 s; one held after the reload waits the new 10 s."""
    timers = TableTimers({"declaration": 30, "silence": 120})
    held = Timer("declaration", 1)
    timers.follow([held], now=100.0)
    timers.retime({"declaration": 10, "silence": 120})
    later = Timer("declaration", 2)
    timers.follow([held, later], now=105.0)
    assert (timers.seconds(held), timers.seconds(later)) == (30, 10)
    assert timers.next_due() == 115.0  # the later card's: 105 + 10
    assert timers.due(115.0) == [later]
    assert timers.seconds(later) == 10  # as journaled, once passed
    assert timers.due(130.0) == [held]
    timers.follow([held], now=130.0)  # still running at the table: set again, at the new length
    assert (timers.next_due(), timers.seconds(held)) == (140.0, 10)
    timers.follow([], now=131.0)  # ended: forgotten
    assert timers.next_due() is None
