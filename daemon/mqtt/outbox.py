"""Messages waiting for the broker, kept until the broker has acknowledged them.

The link takes the oldest pending message, publishes it, and acknowledges it to the outbox
only when `publish` has returned: with QoS 1, aiomqtt returns after the broker's PUBACK
(QoS 2: PUBCOMP; QoS 0: once written to the socket). A message in flight when the link
drops is therefore still the oldest pending one and is sent again, first, after the
reconnect: order is kept, nothing is lost, and a subscriber may see a message twice, which
is what QoS 1 promises. Consumers deduplicate on the id inside the payload.

`Outbox` is the interface the link depends on; `PendingMessages` implements it but for the
way in, which `MemoryOutbox` (`put`) and `daemon.parts.journal_outbox.JournalOutbox` (messages of
committed events, their delivery journaled as each table's watermark, so that what the broker
has not acknowledged is sent again after a restart) each add.

The outbox also remembers the latest retained message the broker acknowledged on each topic
(`retained`): a broker restarted without persistence forgets every retained message, and the
link publishes these again on every connection (a table's journal state, reader state and
round snapshot, and any retained state added later), so a display that connects afterwards
still learns of a failing journal or a reader fault. A state its owner can make again at any
moment (`RemadeStates`: a table's shift numbers, some 150 KiB at a shift's end) is not kept
here but asked of its owner then.
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, NewType, Protocol

import structlog

from daemon.mqtt.errors import InvalidMessage, OutboxFull

if TYPE_CHECKING:
    from collections.abc import Callable

QoS = Literal[0, 1, 2]
MessageId = NewType("MessageId", int)
"""Opaque to callers: the memory outbox counts, a SQLite outbox will use its row id."""

_MAX_TOPIC_BYTES: Final = 65535  # MQTT strings carry a 16-bit length
DEFAULT_CAPACITY: Final = 10_000
_log = structlog.get_logger()


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """One MQTT publication as the daemon means it; checked before it can be queued.

    A malformed topic would be refused by the broker, and the link would then retry the
    same head-of-line message forever; refusing it here puts the error where the bug is.
    """

    topic: str
    payload: bytes
    qos: QoS = 1
    retain: bool = False

    def __post_init__(self) -> None:
        topic = self.topic
        if not isinstance(topic, str) or not topic:
            raise InvalidMessage("topic", "must be a non-empty string", topic=str(topic))
        if any(char in topic for char in "+#\0") or len(topic.encode()) > _MAX_TOPIC_BYTES:
            raise InvalidMessage(
                "topic", "must not contain wildcards (+, #) or NUL, nor exceed 64 KiB", topic=topic
            )
        if not isinstance(self.payload, bytes):
            raise InvalidMessage("payload", "must be bytes (encode JSON first)", topic=topic)
        if self.qos not in (0, 1, 2):
            raise InvalidMessage("qos", "must be 0, 1 or 2", topic=topic)
        if not isinstance(self.retain, bool):
            raise InvalidMessage("retain", "must be true or false", topic=topic)


class RemadeStates(Protocol):
    """Retained states their owner makes again when asked, so that the outbox need not keep
    a copy of each for a broker that lost them (`PendingMessages.remade_by`)."""

    def makes(self, topic: str) -> bool:
        """Whether the state on `topic` is one of these."""
        ...

    def states(self) -> list[OutboundMessage]:
        """Each state as last published, made again (none yet published: not there)."""
        ...


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    """A message the outbox holds, with the id to acknowledge it by."""

    message_id: MessageId
    message: OutboundMessage


class Outbox(Protocol):
    """What the link needs of an outbox: the oldest messages in order, and a way to say the
    broker has one. Ordered and bounded, used from the event loop's thread only; how
    messages get in is the owner's business (`MemoryOutbox.put`, the daemon's journal)."""

    async def next_pending(self, after: int = 0) -> QueuedMessage:
        """Wait (without polling) until more than `after` messages are pending; return the
        oldest after those `after` (the link skips the ones it has in flight)."""
        ...

    def pending_at(self, index: int) -> QueuedMessage:
        """The pending message at `index` (0: the oldest); IndexError past the last."""
        ...

    def ring_on_arrival(self, ring: Callable[[], None] | None) -> None:
        """Call `ring` whenever a message arrives, until called again (None: no more)."""
        ...

    def send_with(self, send: Callable[[], None] | None) -> None:
        """Call `send` when an owner asks for what waits to be sent at once (`publish_now`),
        until called again (None: no more; the link is not connected)."""
        ...

    def ack(self, message_id: MessageId) -> None:
        """The broker has it: remove it. Acknowledging twice, or an unknown id, is a no-op."""
        ...

    def __len__(self) -> int:
        """How many messages still wait for the broker's acknowledgement."""
        ...

    def retained(self) -> list[OutboundMessage]:
        """The latest retained message the broker acknowledged on each topic that has none
        pending (a pending one goes out with the rest, and is newer): what a broker that
        lost its retained messages must be told again."""
        ...


class PendingMessages:
    """An `Outbox` without its way in: order, window and high-water mark. `MemoryOutbox`
    adds `put`; the daemon's `JournalOutbox` adds messages its journal has committed.

    `on_high_water(length, capacity)` is called once when the length reaches `high_water`
    (default: 80 % of capacity), and again only after the outbox has drained to half of
    that mark, so a link flapping around the mark does not flood the pit with notices.
    """

    def __init__(
        self,
        capacity: int = DEFAULT_CAPACITY,
        *,
        high_water: int | None = None,
        on_high_water: Callable[[int, int], None] | None = None,
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity must be a whole number of messages from 1, not {capacity}")
        mark = max(1, capacity * 4 // 5) if high_water is None else high_water
        if isinstance(mark, bool) or not isinstance(mark, int) or not 1 <= mark <= capacity:
            raise ValueError(f"high_water must be from 1 to capacity ({capacity}), not {mark}")
        self._capacity = capacity
        self._high_water = mark
        self._on_high_water = on_high_water
        self._above_high_water = False
        self._pending: collections.deque[QueuedMessage] = collections.deque()
        self._retained: dict[str, OutboundMessage] = {}  # topic: the latest delivered
        self._remade: list[RemadeStates] = []  # states not kept in `_retained`: asked for
        # Set whenever a message arrives; a waiter sleeps on it instead of polling, and the
        # link's publisher is rung (`ring_on_arrival`).
        self._arrived = asyncio.Event()
        self._ring: Callable[[], None] | None = None
        self._send: Callable[[], None] | None = None  # the connected link's, at once

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def high_water(self) -> int:
        return self._high_water

    def _enqueue(self, queued: QueuedMessage) -> None:
        """Append in order, wake the publisher, and call out the high-water mark once."""
        self._pending.append(queued)
        self._arrived.set()
        if self._ring is not None:
            self._ring()
        if len(self._pending) >= self._high_water and not self._above_high_water:
            self._above_high_water = True
            _log.warning(
                "mqtt.outbox.high_water", length=len(self._pending), capacity=self._capacity
            )
            if self._on_high_water is not None:
                self._on_high_water(len(self._pending), self._capacity)

    def peek(self) -> QueuedMessage | None:
        return self._pending[0] if self._pending else None

    async def next_pending(self, after: int = 0) -> QueuedMessage:
        while len(self._pending) <= after:
            self._arrived.clear()
            await self._arrived.wait()
        return self._pending[after]

    def pending_at(self, index: int) -> QueuedMessage:
        return self._pending[index]

    def ring_on_arrival(self, ring: Callable[[], None] | None) -> None:
        self._ring = ring

    def send_with(self, send: Callable[[], None] | None) -> None:
        self._send = send

    def publish_now(self) -> None:
        """What waits goes to the broker now, on this turn of the loop, not the next: the
        connected link's publisher sends it (daemon.mqtt.drain), as far as its window has
        room; without a connection it waits for the next, as ever."""
        if self._send is not None:
            self._send()

    def ack(self, message_id: MessageId) -> None:
        self._remove(message_id)

    def remade_by(self, owner: RemadeStates) -> None:
        """The states `owner` makes are asked of it for `retained`, not kept."""
        self._remade.append(owner)

    def retained(self) -> list[OutboundMessage]:
        pending = {queued.message.topic for queued in self._pending}
        remade = [m for owner in self._remade for m in owner.states()]
        return [m for m in [*self._retained.values(), *remade] if m.topic not in pending]

    def _remove(self, message_id: MessageId) -> bool:
        """Take an acknowledged message out; False if it was not (or no longer) here."""
        removed: QueuedMessage | None = None
        if self._pending and self._pending[0].message_id == message_id:
            removed = self._pending.popleft()  # the usual case: the link acknowledges in order
        else:
            for queued in self._pending:
                if queued.message_id == message_id:
                    self._pending.remove(queued)
                    removed = queued
                    break
        if removed is not None and removed.message.retain and not self._is_remade(removed):
            # Acknowledged in order, so the last one of a topic is the newest.
            self._retained[removed.message.topic] = removed.message
        if self._above_high_water and len(self._pending) <= self._high_water // 2:
            self._above_high_water = False
            _log.info("mqtt.outbox.below_high_water", length=len(self._pending))
        return removed is not None

    def _is_remade(self, queued: QueuedMessage) -> bool:
        return any(owner.makes(queued.message.topic) for owner in self._remade)

    def __len__(self) -> int:
        return len(self._pending)


class MemoryOutbox(PendingMessages):
    """The `Outbox` in memory, numbering its own messages: on its own it forgets everything
    when the process exits (the daemon's `JournalOutbox` keeps every message on disk)."""

    _numbered = 0  # how many messages this outbox has numbered; the next gets one more

    def put(self, message: OutboundMessage) -> MessageId:
        """Queue at the end; raises `OutboxFull` rather than dropping anything."""
        if len(self) >= self.capacity:
            _log.error("mqtt.outbox.full", capacity=self.capacity, refused_topic=message.topic)
            raise OutboxFull(capacity=self.capacity, topic=message.topic)
        self._numbered += 1
        queued = QueuedMessage(MessageId(self._numbered), message)
        self._enqueue(queued)
        return queued.message_id
