"""The link's publisher: the outbox, oldest first, a window of messages awaiting PUBACK.

The publishes leave in the outbox's order on one connection, so the broker receives them in
order; each is acknowledged to the outbox only after its own PUBACK and after every older
one's, so the outbox always holds the oldest unacknowledged message first. When the
connection drops, every message in flight is still in the outbox and is sent again, first
and in order, on the next connection (a subscriber may see a duplicate, which QoS 1 allows
and the id in the payload resolves). A PUBACK that does not come within `round_trip` seconds
of its publish counts as a lost connection (aiomqtt's `MqttError`, as a failed publish).

Each message goes to paho as it is taken, with no task or timer of its own; what is taken
together leaves in one write, at once, and what the PUBACKs of one read leave room for
leaves in one write after it (daemon.mqtt.paho_hooks' `Acknowledgements` and
daemon.mqtt.paho_socket's `batch_socket_io`, which the link installs on each connection).

Nor does the publisher wake a task of its own for a message or a PUBACK: it runs where
they happen, on the loop's thread. A message put in the outbox is sent on the loop's next
turn with the rest of that turn's (one callback, one write); one whose sender asks for it
(`PendingMessages.publish_now`: a table's commit, whose message the pit waits for) is sent
at once. Each PUBACK is counted where paho reads it; what the window then has room for goes
on the next turn, once the read is over (paho's own count of messages in flight is down by
then, and nothing calls paho from inside its callback). One timer, moved only when it fires,
checks the oldest publish's round trip. The link's task only waits for the connection to
fail (`Publisher.run`), and raises what failed it. A card's messages reach the socket a
turn of the loop sooner, which at a floor's load is where a turn holds many tables' work
(docs/performance.md, "The publisher without a task, and the driver's yield when it is due").
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING

import aiomqtt

from daemon.mqtt.paho_hooks import Acknowledgements

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.mqtt.outbox import MessageId, Outbox

# (outbox id, packet id, when published): the messages in flight, oldest first.
InFlight = collections.deque[tuple["MessageId", int, float]]


class Publisher:
    """One connection's publishing (the module's rule), on the loop's thread."""

    def __init__(
        self,
        client: aiomqtt.Client,
        outbox: Outbox,
        *,
        window: int,
        round_trip: float,
        carried: Callable[[], None],
    ) -> None:
        """`carried` is called for each message the broker acknowledged. Make it once
        connected, on the loop's thread, and `run` it."""
        self._outbox = outbox
        self._window = window
        self._round_trip = round_trip
        self._carried = carried
        self._loop = asyncio.get_running_loop()
        self._flight: InFlight = collections.deque()  # len(flight): where the unsent begin
        self._acks = Acknowledgements(client, on_arrival=self._acknowledged)
        self._next_turn: asyncio.Handle | None = None  # a send on the loop's next turn
        self._deadline: asyncio.TimerHandle | None = None  # the round trip's next check
        self._stopped = False
        # Fails with the connection's error; never resolves otherwise.
        self._failed: asyncio.Future[None] = self._loop.create_future()

    async def run(self) -> None:
        """Publish the outbox until cancelled or the connection fails (raised: aiomqtt's
        `MqttError` for a lost connection)."""
        try:
            self._start()
            await self._failed
        finally:
            self._stop()

    def _start(self) -> None:
        """Send what waited for this connection, and each message as it comes."""
        self._outbox.ring_on_arrival(self._arrived)
        self._outbox.send_with(self.send)
        self.send()

    def _stop(self) -> None:
        """The connection is over: nothing more is sent or counted here."""
        self._stopped = True
        self._outbox.ring_on_arrival(None)
        self._outbox.send_with(None)
        for handle in (self._next_turn, self._deadline):
            if handle is not None:
                handle.cancel()
        self._next_turn = self._deadline = None

    def send(self) -> None:
        """What waits, up to the window, handed to paho and written at once. Never raises:
        what fails, fails the connection (`run` raises it), as a publish that raised in the
        link's own task did; its caller (a table's commit) carries on."""
        if self._stopped or self._failed.done():
            return
        if self._next_turn is not None:  # sent now: the next turn has nothing to send
            self._next_turn.cancel()
            self._next_turn = None
        flight, outbox, published = self._flight, self._outbox, 0
        try:
            while len(flight) < self._window and len(outbox) > len(flight):
                queued = outbox.pending_at(len(flight))
                message = queued.message
                mid = self._acks.publish(
                    message.topic, message.payload, message.qos, retain=message.retain
                )
                flight.append((queued.message_id, mid, self._loop.time()))
                published += 1
        except Exception as exc:  # noqa: BLE001 - paho refused it: the connection's end
            self._fail(exc)
            return
        if published:
            # In one write, on this turn of the loop. A QoS 0 message is acknowledged in
            # it, inside paho's callback: `_acknowledged` counts it there, and what that
            # leaves room for goes on the next turn.
            self._acks.flush()
            if self._deadline is None and flight:
                self._deadline = self._loop.call_at(flight[0][2] + self._round_trip, self._check)

    def _arrived(self) -> None:
        """A message reached the outbox, or the window room: sent on the loop's next turn,
        with the rest of this turn's in one write (unless someone asks for it sooner)."""
        if self._next_turn is None and not self._stopped:
            self._next_turn = self._loop.call_soon(self._send_on_this_turn)

    def _send_on_this_turn(self) -> None:
        self._next_turn = None
        self.send()

    def _acknowledged(self) -> None:
        """A PUBACK arrived, inside paho's callback (which holds paho's lock: nothing here
        calls paho): the outbox's oldest go, in order. What the window now has room for
        goes on the loop's next turn, after the whole read: the PUBACKs of one read make
        one write of what follows them."""
        if self._stopped:
            return
        flight, acks = self._flight, self._acks
        taken = 0
        try:
            while flight and acks.take(flight[0][1]):
                self._outbox.ack(flight.popleft()[0])  # the broker has it
                self._carried()
                taken += 1
        except Exception as exc:  # noqa: BLE001 - not paho's to meet: the link's end
            self._fail(exc)
            return
        if taken and len(self._outbox) > len(flight):
            self._arrived()

    def _check(self) -> None:
        """The round trip's timer: the oldest publish has waited its whole round trip, or
        the timer moves on to the publish that is now the oldest."""
        self._deadline = None
        if self._stopped or not self._flight:
            return
        oldest = self._flight[0][2]
        if self._loop.time() - oldest >= self._round_trip:
            self._fail(aiomqtt.MqttError("Operation timed out"))
            return
        self._deadline = self._loop.call_at(oldest + self._round_trip, self._check)

    def _fail(self, error: Exception) -> None:
        """The connection's end: the link's task raises `error` (aiomqtt's `MqttError`: a
        lost connection, replaced; anything else: a bug, raised as before)."""
        if not self._failed.done():
            self._failed.set_exception(error)
