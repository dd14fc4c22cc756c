"""The outbox backed by the journal: what the link publishes is on disk until the broker has it.

Messages enter already committed (the journal wrote them with the event that caused them),
so `put` is not how they arrive: `add_committed` is. The link's `ack` removes a message from
memory at once and from disk in the background, batched: a crash in between resends it,
with its id, which a subscriber drops as a duplicate. Nothing here blocks the event loop.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING

import structlog

from daemon.mqtt.outbox import MessageId, OutboundMessage, QueuedMessage

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from daemon.journal import Journal

log = structlog.get_logger("daemon.outbox")


class JournalOutbox:
    """`daemon.mqtt.outbox.Outbox` over the journal; capacity is a high-water, never a drop."""

    def __init__(
        self,
        journal: Journal,
        capacity: int,
        *,
        on_high_water: Callable[[int, int], None] | None = None,
    ) -> None:
        self._journal = journal
        self._capacity = capacity
        self._high_water = max(1, capacity * 4 // 5)
        self._on_high_water = on_high_water
        self._above = False
        self._pending: collections.deque[QueuedMessage] = collections.deque()
        self._arrived = asyncio.Event()
        self._delivered: list[int] = []
        self._flushing: asyncio.Task[None] | None = None

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def high_water(self) -> int:
        return self._high_water

    @property
    def full(self) -> bool:
        """At capacity: the daemon opens no new round until the broker has caught up."""
        return len(self._pending) >= self._capacity

    def put(self, message: OutboundMessage) -> MessageId:  # noqa: ARG002 - the protocol's signature
        raise TypeError("messages reach the journal outbox through the journal: add_committed")

    def add_committed(self, messages: Iterable[tuple[int, OutboundMessage]]) -> None:
        for rowid, message in messages:
            self._pending.append(QueuedMessage(MessageId(rowid), message))
        self._arrived.set()
        if len(self._pending) >= self._high_water and not self._above:
            self._above = True
            log.warning("outbox filling", queued=len(self._pending), capacity=self._capacity)
            if self._on_high_water is not None:
                self._on_high_water(len(self._pending), self._capacity)

    def peek(self) -> QueuedMessage | None:
        return self._pending[0] if self._pending else None

    async def next_pending(self, after: int = 0) -> QueuedMessage:
        while len(self._pending) <= after:
            self._arrived.clear()
            await self._arrived.wait()
        return self._pending[after]

    def ack(self, message_id: MessageId) -> None:
        if self._pending and self._pending[0].message_id == message_id:
            self._pending.popleft()  # the usual case: the link acknowledges in order
            self._delivered.append(message_id)
        else:
            for queued in self._pending:
                if queued.message_id == message_id:
                    self._pending.remove(queued)
                    self._delivered.append(message_id)
                    break
        if self._above and len(self._pending) <= self._high_water // 2:
            self._above = False
            log.info("outbox drained below half the high-water mark", queued=len(self._pending))
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.get_running_loop().create_task(
                self._flush(), name="outbox-flush"
            )

    async def _flush(self) -> None:
        while self._delivered:
            batch, self._delivered = self._delivered, []
            await self._journal.forget_delivered(batch)

    async def drain(self) -> None:
        """Write the pending deletions; called on shutdown."""
        if self._flushing is not None:
            await self._flushing
        await self._flush()

    def __len__(self) -> int:
        return len(self._pending)
