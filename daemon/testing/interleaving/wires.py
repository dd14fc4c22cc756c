"""The harness's clock and the three ways into and out of the table: the shoe's serial line,
and the broker between the console and the daemon in both directions.

Each message waits a delay drawn from `[0, jitter]` and keeps its place behind the one before
it on the same way (a serial line and an MQTT session deliver in order), so the two streams
reach the table in every order their delays allow, and never one that they do not. What a
fault does to each way is here too: a daemon that is down loses what the ENQ shoe sends and
every request (a clean MQTT session), while the reference shoe keeps every frame until it is
acknowledged and hands it over again when the daemon greets it; a broker that restarts loses
the requests and the messages in flight and takes none while it is down (the daemon's outbox
keeps its messages until the broker is back; the console asks again).
"""

from __future__ import annotations

import collections
import functools
import heapq
import itertools
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

    from daemon.testing.interleaving.shoe_line import Frame
    from daemon.wire.envelope import Outbound

ACK_DELAY: Final = (0.001, 0.005)  # seconds from the daemon's commit to the shoe's receipt
OPEN_DELAY: Final = (0.05, 0.3)  # from the daemon's start to the shoe's port open and greeted
RECONNECT_DELAY: Final = (0.1, 1.0)  # from the broker's return to a client's new session


class Clock:
    """Simulated time: actions in the order of their moments (ties in the order scheduled)."""

    def __init__(self) -> None:
        self.now = 0.0
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()

    def at(self, moment: float, action: Callable[[], None]) -> None:
        heapq.heappush(self._queue, (max(moment, self.now), next(self._order), action))

    def after(self, seconds: float, action: Callable[[], None]) -> None:
        self.at(self.now + seconds, action)

    def run(self, *, until: Callable[[], bool], limit: int) -> bool:
        """Run actions until `until()` or nothing is left; False if `limit` actions ran."""
        for _ in range(limit):
            if until() or not self._queue:
                return True
            self.now, _, action = heapq.heappop(self._queue)
            action()
        return False


class Way:
    """One direction of one link: in order, each message delayed by up to `jitter` s."""

    def __init__(self, clock: Clock, rng: random.Random, jitter: float) -> None:
        self.clock = clock
        self.rng = rng
        self.jitter = jitter
        self._last = 0.0

    def arrival(self, sent: float) -> float:
        self._last = max(self._last, sent + self.rng.uniform(0.0, self.jitter))
        return self._last


class ShoeWire:
    """The serial line from the shoe to the daemon's port.

    `take(frame)` is the daemon taking a frame: it returns whether the daemon was there to
    take it (and so acknowledges it: the reference shoe then sends its next kept frame).
    """

    def __init__(self, clock: Clock, rng: random.Random, jitter: float, *, reliable: bool) -> None:
        self.clock = clock
        self.rng = rng
        self.way = Way(clock, rng, jitter)
        self.reliable = reliable
        self.take: Callable[[Frame], bool] = lambda _frame: False
        self.open = False  # the daemon has the port open
        self.greeted = False  # reference: the shoe answered this daemon's greeting
        self.kept: collections.deque[Frame] = collections.deque()  # reference: unacknowledged
        self._in_flight = False
        self._opening = 0  # counts the port's openings: a frame sent to a closed one is gone

    def send(self, frames: list[Frame]) -> None:
        for frame in frames:
            if frame.card is not None:
                frame.card.copies += 1
        if self.reliable:
            self.kept.extend(frames)
            self._next()
            return
        for frame in frames:
            self.clock.at(self.way.arrival(self.clock.now), functools.partial(self._arrive, frame))

    def closed(self) -> None:
        """The daemon died: what was on its way is lost (ENQ), or is sent again once the
        next daemon greets the shoe (reference)."""
        self.open = self.greeted = self._in_flight = False
        self._opening += 1

    def opened(self, greeting: Callable[[], Frame] | None) -> None:
        """The new daemon opened the port; the reference shoe answers its greeting with who
        it is (`greeting()`: as it stands when it answers), then its oldest kept frame."""
        self.open = True
        if greeting is not None:
            opening = self._opening
            self.clock.at(
                self.way.arrival(self.clock.now), lambda: self._greeted(greeting, opening)
            )

    def _greeted(self, greeting: Callable[[], Frame], opening: int) -> None:
        if opening == self._opening and self.open and self.take(greeting()):
            self.greeted = True
            self._next()

    def _arrive(self, frame: Frame) -> None:
        taken = self.open and self.take(frame)
        card = frame.card
        if card is not None:
            card.copies -= 1
            if not taken and card.copies == 0 and card.fate == "pending":
                card.fate = "lost"

    def _next(self) -> None:
        """Reference: the oldest kept frame goes out when the line is free of another."""
        if self._in_flight or not self.kept or not self.greeted:
            return
        self._in_flight = True
        frame, opening = self.kept[0], self._opening
        self.clock.at(self.way.arrival(self.clock.now), lambda: self._arrive_kept(frame, opening))

    def _arrive_kept(self, frame: Frame, opening: int) -> None:
        if opening != self._opening or not self.take(frame):
            return  # the daemon is gone: the shoe keeps it and sends it again
        if frame.card is not None:
            frame.card.copies -= 1
        self.clock.after(self.rng.uniform(*ACK_DELAY), lambda: self._acknowledged(frame, opening))

    def _acknowledged(self, frame: Frame, opening: int) -> None:
        if opening == self._opening and self.kept and self.kept[0] is frame:
            self.kept.popleft()
            self._in_flight = False
            self._next()


class Broker:
    """The broker between one console and one daemon, each way in order."""

    def __init__(self, clock: Clock, rng: random.Random, jitter: float) -> None:
        self.clock = clock
        self.rng = rng
        self.up = True
        self.incarnation = 0  # counts restarts: what was in flight across one is lost
        self.requests = Way(clock, rng, jitter)
        self.messages = Way(clock, rng, jitter)
        self.retained: Outbound | None = None  # the latest round snapshot (persistence keeps it)
        self.to_daemon: Callable[[str, bytes], None] = lambda _c, _p: None
        self.to_console: Callable[[Outbound], None] = lambda _m: None
        self.acknowledged: Callable[[Outbound], None] = lambda _m: None
        self.outbox: collections.deque[Outbound] = collections.deque()  # the daemon's, while down

    def request(self, command: str, payload: bytes, *, copies: int = 1) -> None:
        """The console publishes a request (QoS 1: `copies` > 1 when it is delivered again)."""
        if not self.up:
            return
        sent, incarnation = self.clock.now, self.incarnation
        arrival = self.requests.arrival(sent)
        for copy in range(copies):
            moment = arrival + (0.0 if copy == 0 else self.rng.uniform(0.05, 2.0))
            self.clock.at(moment, lambda: self._deliver_request(command, payload, incarnation))

    def _deliver_request(self, command: str, payload: bytes, incarnation: int) -> None:
        if self.up and incarnation == self.incarnation:
            self.to_daemon(command, payload)

    def publish(self, messages: list[Outbound]) -> None:
        """The daemon hands its messages to the broker (or keeps them until it is back)."""
        if not self.up or self.outbox:
            self.outbox.extend(messages)
            return
        for message in messages:
            self._forward(message)

    def _forward(self, message: Outbound) -> None:
        incarnation = self.incarnation
        if message.retain and message.topic.endswith("/round"):
            self.retained = message
        self.clock.after(self.rng.uniform(*ACK_DELAY), lambda: self._puback(message, incarnation))
        arrival = self.messages.arrival(self.clock.now)
        self.clock.at(arrival, lambda: self._deliver_message(message, incarnation))

    def _puback(self, message: Outbound, incarnation: int) -> None:
        if incarnation == self.incarnation:
            self.acknowledged(message)

    def _deliver_message(self, message: Outbound, incarnation: int) -> None:
        if self.up and incarnation == self.incarnation:
            self.to_console(message)

    def restart(self, outage: float) -> None:
        """Down for `outage` s: what is in flight is lost; then the clients come back, the
        console gets the retained snapshot, and the daemon's outbox goes out in order."""
        self.up = False
        self.incarnation += 1
        self.clock.after(outage, self._back)

    def _back(self) -> None:
        self.up = True
        retained = self.retained
        if retained is not None:
            console_back = self.clock.now + self.rng.uniform(*RECONNECT_DELAY)
            self.clock.at(console_back, lambda: self._deliver_message(retained, self.incarnation))
        self.clock.after(self.rng.uniform(*RECONNECT_DELAY), self._flush)

    def _flush(self) -> None:
        while self.up and self.outbox:
            self._forward(self.outbox.popleft())

    def daemon_died(self) -> None:
        """What the dead daemon had not yet handed over is in its journal, not here."""
        self.outbox.clear()
