"""The way from a table's shoe driver into its inbox (daemon.table.inbox): line noise, link
changes and the shoe's events as items; a shoe that keeps its frames waits for room, one that
keeps nothing is read on and what finds the inbox full is dropped, counted and told
(daemon.table.shoe_line); nothing is read while the journal cannot be written.

The table's reader task pulls the driver's events (`read_shoe`) and puts each in the inbox
before it pulls the next: while it waits, the driver reads nothing more."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, NoReturn

import structlog

from daemon.parts.items import LineItem, OverflowItem, ShoeItem
from daemon.table.records import LINK_EVENTS, LinkRecord
from drivers.noise import LineNoise, LineNoiseBegan, LineQuiet

if TYPE_CHECKING:
    from daemon.parts.items import ServedTable
    from daemon.parts.storage import StorageWatch
    from drivers.driver import DriverEvent

log = structlog.get_logger("daemon")


class DriverInbox:
    """One table's driver events, into its inbox."""

    def __init__(self, table: ServedTable, storage: StorageWatch) -> None:
        self._table = table
        self._storage = storage

    async def read_shoe(self) -> NoReturn:
        """Pull the table's driver until cancelled; cancelling closes its link."""
        async with contextlib.aclosing(self._table.driver.events()) as events:
            async for event in events:
                await self.put(event)
        raise AssertionError("a shoe driver's events never end")  # pragma: no cover - unreachable

    async def put(self, event: DriverEvent) -> None:
        """One event the driver read, into the table's inbox."""
        table_id = self._table.setup.table.table_id
        queue, line = self._table.queue, self._table.line
        # While the journal cannot be written, the driver is not pulled and reads no more:
        # the shoe keeps what it dealt, unacknowledged (decision D3, daemon/parts/storage.py).
        await self._storage.writable(table_id)
        if isinstance(event, LineNoiseBegan | LineQuiet | LineNoise):
            await queue.put(LineItem(event))
        elif isinstance(event, LINK_EVENTS):
            await queue.put(LinkRecord(event))
        elif line.reliable:  # waits for room: the shoe keeps the frame meanwhile
            await queue.put(ShoeItem(event))
        elif not queue.try_put(ShoeItem(event)):
            # A shoe that keeps nothing must be read on, or the kernel drops its bytes
            # uncounted: what the table cannot take is dropped here, counted and told.
            overflow = line.refused(event)
            if overflow is not None:
                log.warning("reader.overflow", table=table_id, capacity=queue.shoe_capacity)
                queue.put_nowait(OverflowItem(overflow))
