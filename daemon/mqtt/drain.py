"""The link's publisher: the outbox, oldest first, a window of messages awaiting PUBACK.

The publishes leave in the outbox's order on one connection, so the broker receives them in
order; each is acknowledged to the outbox only after its own PUBACK and after every older
one's, so the outbox always holds the oldest unacknowledged message first. When the
connection drops, every message in flight is still in the outbox and is sent again, first
and in order, on the next connection (a subscriber may see a duplicate, which QoS 1 allows
and the id in the payload resolves). A PUBACK that does not come within `round_trip` seconds
of its publish counts as a lost connection (aiomqtt's `MqttError`, as a failed publish).

Each message goes to paho as it is taken, with no task or timer of its own; what is taken
together leaves in one write, at once, and the PUBACKs of one read are counted together
(daemon.mqtt.paho_hooks: `Acknowledgements`, `batch_socket_io`, which the link installs on
each connection). The publisher sleeps on one `Bell` (daemon.mqtt.bell) that a read of
PUBACKs and a message put in the outbox ring.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING

import aiomqtt

from daemon.mqtt.bell import Bell
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
    bell = Bell()  # rung by a read of PUBACKs and by a message put in the outbox
    acks = Acknowledgements(client, on_arrival=bell.ring)
    flight: InFlight = collections.deque()  # len(flight) is where the unsent begin
    loop = asyncio.get_running_loop()
    outbox.ring_on_arrival(bell.ring)
    try:
        while True:
            sending = len(flight)
            while len(flight) < window and len(outbox) > len(flight):
                message = outbox.pending_at(len(flight))
                mid = acks.publish(
                    message.message.topic, message.message.payload, message.message.qos,
                    retain=message.message.retain,
                )  # fmt: skip
                flight.append((message.message_id, mid, loop.time()))
            if len(flight) > sending:
                acks.flush()  # in one write, on this turn of the loop
            while flight and acks.take(flight[0][1]):
                outbox.ack(flight.popleft()[0])  # the broker has it, cancelled or not
                carried()
            raise_if_cancelled()
            if not flight:
                if not len(outbox):
                    await bell.sleep(None)
                continue
            # Until a PUBACK comes, or a message to send (sent if the window has room); the
            # round trip's timeout once the oldest publish has waited its whole round trip,
            # however often the bell rings meanwhile.
            left = round_trip - (loop.time() - flight[0][2])
            if left <= 0 or not await bell.sleep(left):
                raise aiomqtt.MqttError("Operation timed out")
    finally:
        outbox.ring_on_arrival(None)
