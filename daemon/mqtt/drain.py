"""The link's publisher: the outbox, oldest first, a window of messages awaiting PUBACK.

The publishes leave in the outbox's order on one connection, so the broker receives them in
order; each is acknowledged to the outbox only after its own PUBACK and after every older
one's, so the outbox always holds the oldest unacknowledged message first. When the
connection drops, every message in flight is still in the outbox and is sent again, first
and in order, on the next connection (a subscriber may see a duplicate, which QoS 1 allows
and the id in the payload resolves). A PUBACK that does not come within `round_trip` seconds
of its publish counts as a lost connection (aiomqtt's `MqttError`, as a failed publish).

Each message goes to paho as it is taken, with no task or timer of its own; what a turn of
the loop publishes leaves in one write, and the PUBACKs of one read are counted together
(daemon.mqtt.paho_hooks: `Acknowledgements`, `batch_socket_io`, which the link installs on
each connection).
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING, Any

import aiomqtt

from daemon.mqtt.client import raise_if_cancelled
from daemon.mqtt.paho_hooks import Acknowledgements

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.mqtt.outbox import MessageId, Outbox

# (outbox id, packet id, when published): the messages in flight, oldest first.
InFlight = collections.deque[tuple["MessageId", int, float]]


async def drain_outbox(
    client: aiomqtt.Client,
    outbox: Outbox,
    *,
    window: int,
    round_trip: float,
    carried: Callable[[], None],
) -> None:
    """Publish `outbox` on `client` until cancelled or the connection fails; `carried` is
    called for each message the broker acknowledged."""
    acks = Acknowledgements(client)
    flight: InFlight = collections.deque()  # len(flight) is where the unsent begin
    loop = asyncio.get_running_loop()
    while True:
        while len(flight) < window and len(outbox) > len(flight):
            queued = await outbox.next_pending(len(flight))  # at once: it is there
            message = queued.message
            mid = acks.publish(message.topic, message.payload, message.qos, retain=message.retain)
            flight.append((queued.message_id, mid, loop.time()))
        if not flight:
            await outbox.next_pending()
            continue
        while flight and acks.take(flight[0][1]):
            outbox.ack(flight.popleft()[0])  # the broker has it, cancelled or not
            carried()
        raise_if_cancelled()
        if flight:
            await _acknowledged_or_more(
                acks, outbox, flight, window, round_trip - (loop.time() - flight[0][2])
            )


async def _acknowledged_or_more(
    acks: Acknowledgements, outbox: Outbox, flight: InFlight, window: int, left: float
) -> None:
    """Until a PUBACK comes, or (if the window has room) a message to send; raises the round
    trip's timeout if the oldest publish has `left` seconds or less to wait for its own."""
    acks.arrived.clear()  # what came before is counted: the oldest's is not among it
    waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(acks.arrived.wait())]
    if len(flight) < window:
        waits.append(asyncio.ensure_future(outbox.next_pending(len(flight))))
    try:
        done, _ = await asyncio.wait(
            waits, timeout=max(0.0, left), return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        for waiting in waits:
            waiting.cancel()
    if not done:
        raise aiomqtt.MqttError("Operation timed out")
