"""The outbox backed by the journal: what the link publishes is on disk until the broker has it.

Messages enter already committed (the journal wrote them with the event that caused them),
through `add_committed`. The link's `ack` removes a message from
memory at once and from disk in the background, batched: a crash in between resends it,
with its id, which a subscriber drops as a duplicate. Nothing here blocks the event loop.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from daemon.mqtt.outbox import MessageId, OutboundMessage, PendingMessages, QueuedMessage

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from daemon.journal import Journal


class JournalOutbox(PendingMessages):
    """`daemon.mqtt.outbox.Outbox` over the journal: the pending messages' order, window and
    high-water mark, with messages that arrive committed and leave the disk once delivered.
    Its capacity stops new rounds (`full`), never a message: the journal already holds it.
    """

    def __init__(
        self,
        journal: Journal,
        capacity: int,
        *,
        on_high_water: Callable[[int, int], None] | None = None,
    ) -> None:
        super().__init__(capacity, on_high_water=on_high_water)
        self._journal = journal
        self._delivered: list[int] = []
        self._flushing: asyncio.Task[None] | None = None

    @property
    def full(self) -> bool:
        """At capacity: the daemon opens no new round until the broker has caught up."""
        return len(self) >= self.capacity

    def add_committed(self, messages: Iterable[tuple[int, OutboundMessage]]) -> None:
        for rowid, message in messages:
            self._enqueue(QueuedMessage(MessageId(rowid), message))

    def ack(self, message_id: MessageId) -> None:
        if self._remove(message_id):
            self._delivered.append(message_id)
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
