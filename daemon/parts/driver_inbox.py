"""The way from a table's shoe driver into its inbox (daemon.table.inbox): line noise, link
changes and the shoe's events as items; a shoe that keeps its frames waits for room, one that
keeps nothing is read on and what finds the inbox full is dropped, counted and told
(daemon.table.shoe_line); nothing is read while the journal cannot be written."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from daemon.parts.items import LineItem, OverflowItem, ShoeItem
from daemon.table.records import LINK_EVENTS, LinkRecord
from drivers.noise import LineNoise, LineNoiseBegan, LineQuiet

if TYPE_CHECKING:
    from daemon.parts.items import ServedTable
    from daemon.parts.storage import StorageWatch
    from drivers.driver import DriverEvent, Emit

log = structlog.get_logger("daemon")


def driver_emit(table: ServedTable, storage: StorageWatch) -> Emit:
    """What the table's driver calls with each event it reads: the event, into the table's
    inbox."""
    table_id = table.setup.table.table_id
    queue, line = table.queue, table.line

    async def emit(event: DriverEvent) -> None:
        # While the journal cannot be written, the driver waits here and reads no more:
        # the shoe keeps what it dealt, unacknowledged (decision D3, daemon/parts/storage.py).
        await storage.writable(table_id)
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

    return emit
