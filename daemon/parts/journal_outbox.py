"""The outbox over the journal: messages wait in memory, their progress is journaled.

A message enters once the event that caused it is committed (`add`); nothing of it is
written, because the journal can make it again (decision D4). The link acknowledges messages
oldest first; each acknowledgement moves its table's delivered watermark, which rides along
with the journal's next commit (`Journal.note_delivered`). After a restart the replay sends
again everything past the watermark, with the same ids, and a subscriber drops what it had.

Messages a schema 1 journal had sealed and not delivered when it was upgraded (random ids:
they cannot be made again) go out first, as they were, and leave the journal once the broker
has them (`add_legacy`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from daemon.mqtt.outbox import MessageId, OutboundMessage, PendingMessages, QueuedMessage

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from daemon.journal.rows import LegacyMessage
    from daemon.journal.store import Journal
    from daemon.wire.envelope import Outbound


@dataclass(frozen=True, slots=True)
class _Origin:
    table_id: str
    seq: int
    legacy_rowid: int | None = None


class JournalOutbox(PendingMessages):
    """`daemon.mqtt.outbox.Outbox` over the journal: the pending messages' order, window and
    high-water mark; delivery is journaled as each table's watermark. Its capacity stops new
    rounds (`full`), never a message: the journal already holds what makes it.
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
        self._ids = (MessageId(n) for n in itertools.count(1))
        self._origins: dict[MessageId, _Origin | None] = {}

    @property
    def full(self) -> bool:
        """At capacity: the daemon opens no new round until the broker has caught up."""
        return len(self) >= self.capacity

    def add(self, table_id: str, messages: Iterable[Outbound]) -> None:
        """Messages of a committed event, in the order it caused them."""
        for message in messages:
            self._queue(
                OutboundMessage(message.topic, message.payload, message.qos, message.retain),
                _Origin(table_id, message.seq),
            )

    def add_legacy(self, messages: Iterable[LegacyMessage]) -> None:
        for m in messages:
            self._queue(
                OutboundMessage(m.topic, m.payload, m.qos, m.retain),
                _Origin(m.table_id, m.seq, m.rowid),
            )

    def add_state(self, message: OutboundMessage) -> None:
        """A state without envelope and without the table's `seq` (the journal's own state):
        delivered in order with the rest, its delivery moves no watermark."""
        self._queue(message, None)

    def _queue(self, message: OutboundMessage, origin: _Origin | None) -> None:
        message_id = next(self._ids)
        self._origins[message_id] = origin
        self._enqueue(QueuedMessage(message_id, message))

    def ack(self, message_id: MessageId) -> None:
        if not self._remove(message_id):
            return
        origin = self._origins.pop(message_id)
        if origin is None:
            return
        if origin.legacy_rowid is not None:
            self._journal.note_legacy_delivered(origin.legacy_rowid)
        else:
            self._journal.note_delivered(origin.table_id, origin.seq)
