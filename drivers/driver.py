"""One shoe, one driver: a transport and a codec, reconnected forever.

`ShoeDriver.events()` is the whole interface: an async iterator of every decoded shoe event,
and every change of the link's state, in order, that the consumer pulls (as aiomqtt's
`client.messages`), and that never ends by itself: a device that goes away is reported and
retried with capped, jittered exponential backoff.

    async with contextlib.aclosing(driver.events()) as events:
        async for event in events:
            ...  # journal it; once durable: `driver.deliver(session.acknowledgement(seq))`

Nothing is read while an event waits to be pulled, so a consumer that stops pulling stops
the reading (back-pressure). Closing the iterator closes the link: `aclosing` closes it when
the loop ends, by a return, an error or the pulling task's cancellation.

How the daemon should read the link events:

    Connecting     an attempt is starting (attempt 1 is the first since start-up or a loss)
    LinkFault      that attempt failed; `reason` says what to check; retried in `retry_in` s
    Connected      the first link since start-up is up
    Disconnected   an open link was lost: the round in progress may miss cards from now on
    Reconnected    the link is back after a loss: flag the round that spans it for review

and the line's (`drivers.noise`): `LineNoiseBegan` where the line began to carry what is no
frame (in the stream's order: a frame in the noise may be lost), `LineQuiet` where it stopped,
and `LineNoise`, what it came to (at most one report a minute, whatever its size).

The driver pumps the bytes of the host's session (`drivers.session`, made by the codec from
its `HostLink`; the table's own, or one of the driver's): whenever it opens the line it sends
the greeting (the reference protocol's STATUS_REQUEST) and takes nothing from the line until
the device answers it (DEVICE_IDENTITY), repeating the greeting every second meanwhile; so
the first thing a receiver hears after every (re)open is who the device is and where its
numbering stands. It never acknowledges a frame on its own: the receiver judges repeats and
gaps with the session's memory, against what it has made durable, and once a frame is
durable (decision D3) writes the session's acknowledgement through `deliver`.

A reply (`CommandAccepted`, `CommandRejected`) is handed up only where it answers a command
the driver sent on this link (`HostLink.awaits_reply`); any other is the line's noise,
counted (`line.unsolicited_replies`) and dropped: random bytes on an ENQ line hold some 7,800
"replies" a megabyte, which would otherwise each become an event.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias

from drivers.backoff import Backoff, BackoffPolicy
from drivers.events import Event
from drivers.logs import WireBytes, get_logger
from drivers.noise import LineCounts, LineEvent, LineNoise, LineNoiseBegan, NoiseWatch
from drivers.session import HostSession
from drivers.transports.errors import LinkLost, NotConnected, SettingsError, TransportError

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Callable, Sequence

    from structlog.typing import FilteringBoundLogger

    from drivers.codecs.base import Decoder, DecoderCounters
    from drivers.transports.base import Transport

_READER_LOG: Final = "drivers.reader"
GREETING_WARN_AFTER: Final = 5  # unanswered greetings before a warning says so


# ---------------------------------------------------------------- link events


@dataclass(frozen=True, slots=True)
class Connecting:
    endpoint: str
    attempt: int  # 1, 2, ... counted from start-up or from the last loss of the link


@dataclass(frozen=True, slots=True)
class LinkFault:
    """A connection attempt failed; the driver tries again after `retry_in` seconds."""

    endpoint: str
    reason: str  # says what to check: "no such serial port /dev/ttyUSB9: check ..."
    errno: int | None
    attempt: int
    retry_in: float


@dataclass(frozen=True, slots=True)
class Connected:
    """The first link since the driver started is up."""

    endpoint: str


@dataclass(frozen=True, slots=True)
class Disconnected:
    """An open link was lost; cards dealt from now until `Reconnected` are not seen."""

    endpoint: str
    reason: str
    errno: int | None
    retry_in: float


@dataclass(frozen=True, slots=True)
class Reconnected:
    """The link is back after a `Disconnected`: the round that spans the outage needs review."""

    endpoint: str
    outage: float  # seconds from the loss of the link until it was back
    attempts: int  # connection attempts it took


LinkEvent: TypeAlias = Connecting | LinkFault | Connected | Disconnected | Reconnected
DriverEvent: TypeAlias = Event | LinkEvent | LineEvent


# ---------------------------------------------------------------- the driver


class ShoeDriver:
    """Reads one shoe: opens a fresh transport per attempt and feeds its bytes to one codec.

    The consumer pulls its events (`events()`), so a slow consumer slows reading down instead
    of events piling up in memory; the bytes wait in the kernel's buffer meanwhile.

    Every line it logs (logger `drivers.reader`, events `reader.*`) and every line its codec
    logs carries the `table` it serves and the `endpoint` it reads, as fields.
    """

    def __init__(
        self,
        name: str,
        decoder: Decoder,
        transport_factory: Callable[[], Transport],
        *,
        table: str | None = None,
        backoff: BackoffPolicy | None = None,
        rng: random.Random | None = None,
        idle_timeout: float | None = None,
        session: HostSession | None = None,
    ) -> None:
        """`name`: the shoe protocol's name. `table`: the table this shoe deals for.
        `session`: the host's side of the protocol the driver pumps bytes for (the table's
        own, made by the codec: `HostSession.of(decoder)`, which is the default).

        `idle_timeout`: seconds without a byte after which the link counts as lost. Leave
        it None unless the shoe sends heartbeats; a shoe that is idle between shoes would
        otherwise be reconnected for nothing.
        """
        if idle_timeout is not None and not (
            isinstance(idle_timeout, int | float) and idle_timeout > 0
        ):
            raise SettingsError(
                "must be a number of seconds above 0, or left out",
                field="idle_timeout",
                value=idle_timeout,
            )
        self.name = name
        self.table = table
        self._decoder = decoder
        self._session = session if session is not None else HostSession.of(decoder)
        self._transport_factory = transport_factory
        self._backoff_policy = backoff if backoff is not None else BackoffPolicy()
        # Jitter needs no cryptographic quality; tests inject a seeded generator.
        self._rng = rng if rng is not None else random.Random()  # noqa: S311
        self._idle_timeout = idle_timeout
        self._log = self._reader_log(None)
        # Asked before each line a frame's bytes would cost: a structlog call binds a logger
        # even when its level drops the line, twice a card; the standard library's logger
        # knows its level at once (and a reload of the logging settings sets it).
        self._stdlib_log = logging.getLogger(_READER_LOG)
        self._link: Transport | None = None
        self._running = False
        self._bytes_read = 0
        self._noise = NoiseWatch()

    @property
    def counters(self) -> DecoderCounters:
        """The codec's running totals: frames handed up, bad checksums, malformed and unknown
        frames, garbage; repeats and conflicts are the receiver's (`FrameReceiver.counters`)."""
        return self._decoder.counters

    @property
    def line(self) -> LineCounts:
        """What the line carried that was no frame, with every byte read: running totals."""
        return LineCounts.of(self._decoder.counters, self._bytes_read, self._session.unsolicited)

    @property
    def connected(self) -> bool:
        return self._link is not None

    async def send(self, data: bytes) -> None:
        """Write a frame the codec encoded to the device; raises `TransportError` if no link."""
        link = self._link
        if link is None:
            raise NotConnected(f"driver {self.name} has no open link", endpoint=self.name)
        if self._stdlib_log.isEnabledFor(logging.DEBUG):
            self._log.debug("reader.sent", data=WireBytes(data))
        self._session.sending(data)
        await link.write(data)

    @property
    def session(self) -> HostSession:
        """The host's session this driver pumps."""
        return self._session

    async def deliver(self, frame: bytes) -> None:
        """Write `frame` (an acknowledgement the session made) if a link is open.

        Without a link it does nothing: the device keeps the frame it acknowledges and sends it
        again to the next link, where the receiver judges it a repeat and acknowledges it
        then. A write that fails is the link's loss, which the reading side reports.
        """
        if not frame or self._link is None:
            return
        try:
            await self.send(frame)
        except TransportError as failure:
            self._log.debug(
                "reader.acknowledgement_lost", frame=WireBytes(frame), reason=str(failure)
            )

    async def events(self) -> AsyncGenerator[DriverEvent, None]:
        """Every event, in order, as the consumer pulls them; it never ends by itself.

        Nothing more is read while an event waits to be pulled: a consumer that does not pull
        stops the reading, and the bytes wait in the kernel's buffer (a shoe that keeps its
        frames loses nothing). Close it when you stop pulling (`contextlib.aclosing` around
        the loop, which also does when the pulling task is cancelled): that closes the link
        and its worker thread.
        """
        if self._running:
            raise RuntimeError(f"driver {self.name} is already running")
        self._running = True
        backoff = Backoff(self._backoff_policy, self._rng)
        lost_at: float | None = None  # when the link was lost, until it is back
        attempt = 0
        try:
            while True:
                attempt += 1
                transport = self._transport_factory()
                self._log = self._reader_log(transport.endpoint)
                self._decoder.log_context(table=self.table, endpoint=transport.endpoint)
                try:
                    yield Connecting(transport.endpoint, attempt)
                    error = await self._open(transport)
                    opened = error is None
                    if error is None:
                        yield self._linked(transport.endpoint, lost_at, attempt)
                        self._link, lost_at, attempt = transport, None, 0
                        reading = _Reading(transport, backoff, self._now())
                        self._session.opened(reading.last_byte)
                        while reading.failure is None:
                            for event in await self._step(reading):
                                yield event
                        error = reading.failure
                finally:
                    self._link = None
                    await transport.close()
                delay = backoff.next_delay()
                if opened:
                    lost_at = time.monotonic()
                yield self._report(error, transport.endpoint, attempt, delay, lost=opened)
                await asyncio.sleep(delay)
        finally:
            self._running = False

    def _reader_log(self, endpoint: str | None) -> FilteringBoundLogger:
        return get_logger(_READER_LOG, table=self.table, endpoint=endpoint)

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    @staticmethod
    async def _open(transport: Transport) -> TransportError | None:
        """Open the link; the failure when it would not open."""
        try:
            await transport.open()
        except TransportError as failure:
            return failure
        return None

    def _linked(self, endpoint: str, lost_at: float | None, attempt: int) -> LinkEvent:
        """What says the link is up: the first since start-up, or back after a loss."""
        if lost_at is None:
            self._log.info("reader.connected", protocol=self.name)
            return Connected(endpoint)
        outage = time.monotonic() - lost_at
        self._log.warning(
            "reader.reconnected", protocol=self.name, outage=round(outage, 2), attempts=attempt
        )
        return Reconnected(endpoint, outage=outage, attempts=attempt)

    def _report(
        self, error: TransportError, endpoint: str, attempt: int, delay: float, *, lost: bool
    ) -> LinkEvent:
        """One line and one link event per retry: a link that was lost, or an attempt that
        failed to open one."""
        retry_in = round(delay, 2)
        if lost:
            self._log.warning(
                "reader.link_lost", reason=str(error), errno=error.errno, retry_in=retry_in
            )
            return Disconnected(endpoint, str(error), error.errno, retry_in=delay)
        self._log.warning(
            "reader.retrying",
            reason=str(error),
            errno=error.errno,
            attempt=attempt,
            retry_in=retry_in,
        )
        return LinkFault(endpoint, str(error), error.errno, attempt, delay)

    async def _step(self, reading: _Reading) -> Sequence[DriverEvent]:
        """One turn on an open link: greet if due, read once, and what that came to. When the
        link fails, `reading.failure` says why, and what is returned is the noise it carried
        (told before its loss is)."""
        transport, session = reading.transport, self._session
        endpoint = transport.endpoint
        try:
            frame = session.due(self._now())
            if frame:
                if session.greetings == GREETING_WARN_AFTER:
                    self._log.warning("reader.greeting_unanswered", greetings=session.greetings)
                await self.send(frame)
            data = await self._read(transport, reading.last_byte, session.next_at)
        except TransportError as failure:
            reading.failure = failure
            return self._noise_events(self._noise.take(endpoint, self._now(), closing=True))
        if data is None:  # time to greet again, or to tell of the noise
            return self._noise_events(self._noise.take(endpoint, self._now()))
        reading.last_byte = self._now()
        if not reading.proven:
            # Only a link that delivered data resets the backoff: a device server that
            # accepts and at once drops us must not be hammered at the initial delay.
            reading.proven = True
            reading.backoff.reset()
        events = self._take(data, endpoint)
        # A read that finds bytes waiting returns without yielding: a line that never stops
        # (noise at a device server's speed) must not keep the other tables waiting. One
        # that had to wait has yielded: a card's read, most often, costs no turn more.
        if transport.may_hold_more():
            await asyncio.sleep(0)
        return events

    def _take(self, data: bytes, endpoint: str) -> list[DriverEvent]:
        """Feed the codec one chunk: what the noise did, and the events it completed."""
        if self._stdlib_log.isEnabledFor(logging.DEBUG):
            self._log.debug("reader.received", data=WireBytes(data))
        now = self._now()
        # What fell due before these bytes came (the noise was over, or is to be reported).
        told: list[DriverEvent] = [*self._noise_events(self._noise.take(endpoint, now))]
        self._bytes_read += len(data)
        events = self._session.replies(self._decoder.feed(data))
        if self._noise.observe(self.line, now):
            # Before this chunk's events: one of them may come after a frame the noise ate.
            told.append(LineNoiseBegan(endpoint))
        for event in events:
            if self._session.admits(event):
                told.append(event)
            else:
                # Before its answer, a frame may be a resend the device's timer sent
                # blindly: the device sends it again after the answer, where the
                # receiver can judge it knowing who the device is.
                self._log.debug("reader.before_greeting_dropped", dropped=type(event).__name__)
        return told

    def _noise_events(self, events: list[LineEvent]) -> list[LineEvent]:
        """The noise's report (with a log line for it) and its end, as they fall due."""
        for event in events:
            if isinstance(event, LineNoise):
                self._log.warning(
                    "reader.line_noise",
                    seconds=event.seconds,
                    lasting=event.lasting,
                    bytes_read=event.bytes_read,
                    garbage_bytes=event.garbage_bytes,
                    bad_checksum=event.bad_checksum,
                    malformed=event.malformed,
                    unknown_message=event.unknown_message,
                    unsolicited_replies=event.unsolicited_replies,
                )
        return events

    async def _read(
        self, transport: Transport, last_byte: float, greet_at: float | None
    ) -> bytes | None:
        """The next bytes; None when it is time to greet again or to tell of the noise;
        raises `LinkLost` after `idle_timeout` seconds without a byte."""
        idle = self._idle_timeout
        times = (None if idle is None else last_byte + idle, greet_at, self._noise.due_at())
        deadline = min((t for t in times if t is not None), default=None)
        try:
            async with asyncio.timeout_at(deadline):
                return await transport.read()
        except TimeoutError:
            if idle is not None and asyncio.get_running_loop().time() - last_byte >= idle:
                message = f"no data from {transport.endpoint} for {idle} s"
                raise LinkLost(message, endpoint=transport.endpoint) from None
            return None


class _Reading:
    """One open link's reading: when it last brought a byte, whether it has brought any
    (only then is the backoff reset), and why it failed, once it has."""

    def __init__(self, transport: Transport, backoff: Backoff, now: float) -> None:
        self.transport = transport
        self.backoff = backoff
        self.last_byte = now
        self.proven = False
        self.failure: TransportError | None = None
