"""The daemon's line in `systemctl status`, kept current at a cost that does not grow with
the events.

Describing the daemon means looking at every table (how many readers are connected, how many
rounds are open). Done on every link event, as it was, that is work proportional to the
number of tables for each event: with 2,000 tables whose readers kept retrying, py-spy found
the status text and its sd_notify datagram in two thirds of the event loop thread's CPU
samples (docs/performance.md). Here an event only marks the line stale; one task rewrites
it at most once per `period`, so a storm of link events costs one description per second.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.system.notify import Notifier

PERIOD: Final = 1.0  # seconds: what a person reading `systemctl status` notices


class StatusLine:
    """`changed()` from anywhere on the loop; `run()` as a task sends the line."""

    def __init__(
        self, notifier: Notifier, describe: Callable[[], str], *, period: float = PERIOD
    ) -> None:
        self._notifier = notifier
        self._describe = describe
        self._period = period
        self._stale = asyncio.Event()

    def changed(self) -> None:
        """Something the line shows changed: it is sent again within `period`."""
        self._stale.set()

    async def run(self) -> None:
        """Send the line whenever it is stale, at most once per `period`, until cancelled."""
        while True:
            await self._stale.wait()
            self._stale.clear()
            self._notifier.status(self._describe())
            await asyncio.sleep(self._period)
