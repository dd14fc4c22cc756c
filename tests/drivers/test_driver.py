"""The driver over real links: cards arrive, unplugs are reported, reconnection is automatic.

Backoff in these tests is milliseconds long and its jitter comes from a seeded generator,
so every run waits the same short times.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import random
import threading
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from daemon.testing import SocatPair
from drivers import session as session_module
from drivers.backoff import Backoff, BackoffPolicy
from drivers.codecs import enq
from drivers.codecs.reference import (
    DeviceFrameDecoder,
    HostFrameDecoder,
    encode_device_frame,
    encode_host_frame,
)
from drivers.driver import (
    Connected,
    Connecting,
    Disconnected,
    DriverEvent,
    LinkFault,
    Reconnected,
    ShoeDriver,
)
from drivers.events import (
    Acknowledge,
    CardDrawn,
    CommunicationStarted,
    DeviceIdentity,
    Heartbeat,
    StatusRequest,
)
from drivers.transports import (
    NotConnected,
    SerialSettings,
    SettingsError,
    TcpSettings,
    UsbSettings,
    UsbTransport,
    transport_factory,
)
from tests.drivers.test_transports import Pty, tcp_server
from tests.drivers.usb_backend import FakeShoeBackend

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from drivers.codecs.base import Decoder
    from drivers.transports import Transport

E = TypeVar("E")
FAST = BackoffPolicy(initial=0.01, maximum=0.05, multiplier=2, jitter=0.5)


def seeded(seed: int) -> random.Random:
    return random.Random(seed)  # noqa: S311 - backoff jitter, not cryptography


def card(code: str, seq: int) -> CardDrawn:
    rank, suit = code[:-1], code[-1]
    return CardDrawn(rank=rank, suit=suit, seq=seq)  # type: ignore[arg-type]  # test codes are valid


def reference(code: str, seq: int) -> bytes:
    return encode_device_frame(card(code, seq))


IDENTITY = DeviceIdentity("Acme", "Shoe-1", "SN0001", "1.2.3", power_up=1, next_seq=0)
# What a reference device answers the driver's STATUS_REQUEST with: until it comes, the
# driver takes nothing from the line.
HELLO = encode_device_frame(IDENTITY)


class Recorder:
    """The daemon's side: everything the driver hands up, in order, pulled one at a time."""

    def __init__(self) -> None:
        self.events: list[DriverEvent] = []
        self._queue: asyncio.Queue[DriverEvent] = asyncio.Queue()

    async def pull(self, driver: ShoeDriver) -> None:
        async with contextlib.aclosing(driver.events()) as events:
            async for event in events:
                self.events.append(event)
                await self._queue.put(event)

    async def next(self, kind: type[E]) -> E:
        """The next event of `kind`, skipping others (they stay in `events`)."""
        async with asyncio.timeout(5):
            while True:
                event = await self._queue.get()
                if isinstance(event, kind):
                    return event


@contextlib.asynccontextmanager
async def running(driver: ShoeDriver) -> AsyncIterator[Recorder]:
    recorder = Recorder()
    task = asyncio.create_task(recorder.pull(driver), name=f"driver {driver.name}")
    try:
        yield recorder
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def driver_for(
    factory: Callable[[], Transport],
    decoder: Decoder | None = None,
    *,
    idle_timeout: float | None = None,
    table: str | None = None,
) -> ShoeDriver:
    return ShoeDriver(
        "reference",
        decoder or DeviceFrameDecoder(),
        factory,
        table=table,
        backoff=FAST,
        rng=seeded(7),
        idle_timeout=idle_timeout,
    )


# ---------------------------------------------------------------- backoff


def test_backoff_grows_to_its_cap_and_jitter_only_shortens() -> None:
    policy = BackoffPolicy(initial=1, maximum=8, multiplier=2, jitter=0.25)
    backoff = Backoff(policy, seeded(1))
    delays = [backoff.next_delay() for _ in range(8)]
    for delay, base in zip(delays, [1, 2, 4, 8, 8, 8, 8, 8], strict=True):
        assert base * 0.75 <= delay <= base


def test_backoff_is_deterministic_for_a_seed_and_resets() -> None:
    policy = BackoffPolicy(initial=0.5, maximum=30, jitter=0.2)
    first = Backoff(policy, seeded(42))
    second = Backoff(policy, seeded(42))
    assert [first.next_delay() for _ in range(20)] == [second.next_delay() for _ in range(20)]
    first.reset()
    assert 0.4 <= first.next_delay() <= 0.5


def test_backoff_without_jitter_is_exact_and_never_overflows() -> None:
    backoff = Backoff(BackoffPolicy(initial=0.5, maximum=30, jitter=0), seeded(0))
    assert [backoff.next_delay() for _ in range(8)] == [0.5, 1, 2, 4, 8, 16, 30, 30]
    for _ in range(5000):
        assert backoff.next_delay() == 30


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"initial": 0}, "backoff.initial"),
        ({"initial": 5, "maximum": 1}, "backoff.maximum"),
        ({"multiplier": 0.5}, "backoff.multiplier"),
        ({"jitter": 1}, "backoff.jitter"),
        ({"initial": float("nan")}, "backoff.initial"),
    ],
)
def test_backoff_policy_says_what_to_fix(arguments: dict[str, float], field: str) -> None:
    with pytest.raises(SettingsError) as caught:
        BackoffPolicy(**arguments)
    assert caught.value.field == field


# ---------------------------------------------------------------- serial


async def test_cards_arrive_over_a_pty_in_order() -> None:
    with Pty() as pty:
        driver = driver_for(transport_factory(SerialSettings(pty.path)))
        async with running(driver) as shoe:
            await shoe.next(Connected)
            assert await pty.read(9) == encode_host_frame(StatusRequest(), seq=0)
            stream = HELLO + reference("AS", 1) + reference("10H", 2) + reference("KD", 3)
            for offset in range(0, len(stream), 5):  # split across reads, as a line does
                pty.write(stream[offset : offset + 5])
            cards = [await shoe.next(CardDrawn) for _ in range(3)]
        assert [c.code for c in cards] == ["AS", "10H", "KD"]
        assert shoe.events[:2] == [Connecting(pty.path, 1), Connected(pty.path)]


async def test_enq_frames_over_a_pty() -> None:
    with Pty() as pty:
        settings = SerialSettings(pty.path, baudrate=4800)
        driver = driver_for(transport_factory(settings), enq.DeviceFrameDecoder())
        async with running(driver) as shoe:
            await shoe.next(Connected)
            pty.write(enq.encode_device_frame(CommunicationStarted(), seq=0))  # no greeting
            pty.write(enq.encode_device_frame(card("QC", 1)))
            assert await shoe.next(CommunicationStarted) == CommunicationStarted(seq=0)
            assert (await shoe.next(CardDrawn)).code == "QC"
            await driver.acknowledge(1)  # the family acknowledges nothing: nothing is sent
            with pytest.raises(TimeoutError):
                await pty.read(1)


async def test_raw_bytes_are_logged_in_hex_at_debug(driver_logs: list[dict[str, Any]]) -> None:
    frame = reference("2C", 1)
    with Pty() as pty:
        async with running(driver_for(transport_factory(SerialSettings(pty.path)))) as shoe:
            await shoe.next(Connected)
            pty.write(HELLO)
            await shoe.next(DeviceIdentity)
            pty.write(frame)
            await shoe.next(CardDrawn)
    received = [line for line in driver_logs if line["event"] == "reader.received"]
    assert [(line["log_level"], line["endpoint"]) for line in received] == [("debug", pty.path)] * 2
    assert received[-1]["data"].hex == frame.hex(" ")


async def test_unplug_and_replug_over_socat(tmp_path: Path) -> None:
    """Kill socat mid-frame: reported, retried with backoff, reconnected by itself."""
    socat = SocatPair(tmp_path)
    await socat.start()
    try:
        driver = driver_for(transport_factory(SerialSettings(str(socat.host_path))))
        async with running(driver) as shoe:
            await shoe.next(Connected)
            socat.write(HELLO + reference("AS", 1))
            assert (await shoe.next(CardDrawn)).code == "AS"
            socat.write(reference("9D", 2)[:4])  # the cable goes mid-frame
            await socat.stop()

            lost = await shoe.next(Disconnected)
            assert lost.errno in {errno.EIO, None}  # the kernel's word for a hang-up varies
            assert lost.retry_in > 0
            fault = await shoe.next(LinkFault)  # the port is gone while unplugged
            assert fault.errno == errno.ENOENT
            assert "check `shoe2mqtt ports`" in fault.reason
            await shoe.next(LinkFault)  # it keeps trying

            await socat.start()
            back = await shoe.next(Reconnected)
            assert back.attempts >= 2
            socat.write(reference("5H", 3))  # before the device has answered the greeting
            socat.write(HELLO + reference("6H", 4))
            # Only what comes after the answer is taken; whether frame 2 is lost is the
            # receiver's to judge (it knows what it holds).
            assert await shoe.next(DeviceIdentity) == IDENTITY
            assert (await shoe.next(CardDrawn)).code == "6H"
            assert driver.connected
    finally:
        await socat.stop()
    faults = [e for e in shoe.events if isinstance(e, LinkFault)]
    assert all(b.retry_in <= FAST.maximum for b in faults)


async def test_a_missing_port_is_retried_forever_not_raised() -> None:
    driver = driver_for(transport_factory(SerialSettings("/dev/ttyUSB9-not-here")))
    async with running(driver) as shoe:
        faults = [await shoe.next(LinkFault) for _ in range(3)]
    assert [f.attempt for f in faults] == [1, 2, 3]
    assert faults[0].reason == "no such serial port /dev/ttyUSB9-not-here: check `shoe2mqtt ports`"
    assert not driver.connected


# ---------------------------------------------------------------- TCP


async def test_tcp_server_closing_is_followed_by_a_reconnection() -> None:
    connections = 0

    async def device(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await reader.readexactly(9)  # the host's STATUS_REQUEST, answered
        writer.write(HELLO + reference("AH", connections))
        await writer.drain()
        if connections == 1:
            writer.close()  # the device server drops us after the first card

    async with tcp_server(device) as port:
        driver = driver_for(transport_factory(TcpSettings("127.0.0.1", port)))
        async with running(driver) as shoe:
            assert (await shoe.next(CardDrawn)).seq == 1
            lost = await shoe.next(Disconnected)
            assert lost.reason == f"lost connection to 127.0.0.1:{port}: closed by the other end"
            await shoe.next(Reconnected)
            assert (await shoe.next(CardDrawn)).seq == 2


async def test_send_writes_to_the_device_and_needs_a_link() -> None:
    received: asyncio.Queue[bytes] = asyncio.Queue()

    async def device(reader: asyncio.StreamReader, _: asyncio.StreamWriter) -> None:
        received.put_nowait(await reader.readexactly(4))

    async with tcp_server(device) as port:
        # An ENQ shoe's host greets nothing: the first bytes the device reads are ours.
        settings = TcpSettings("127.0.0.1", port)
        driver = driver_for(transport_factory(settings), enq.DeviceFrameDecoder())
        with pytest.raises(NotConnected):
            await driver.send(b"ping")
        async with running(driver) as shoe:
            await shoe.next(Connected)
            await driver.send(b"ping")
            assert await received.get() == b"ping"


async def test_a_silent_link_is_dropped_after_the_idle_timeout() -> None:
    async with tcp_server(lambda _r, _w: None) as port:
        settings = TcpSettings("127.0.0.1", port)
        async with running(driver_for(transport_factory(settings), idle_timeout=0.05)) as shoe:
            lost = await shoe.next(Disconnected)
            assert lost.reason == f"no data from 127.0.0.1:{port} for 0.05 s"


# ---------------------------------------------------------------- USB


def usb_driver(backend: FakeShoeBackend) -> ShoeDriver:
    settings = UsbSettings(0x1209, 0x5E0E, read_timeout_ms=20)
    return driver_for(lambda: UsbTransport(settings, backend=backend))


async def test_usb_device_going_away_and_coming_back() -> None:
    backend = FakeShoeBackend()
    async with running(usb_driver(backend)) as shoe:
        await shoe.next(Connected)
        backend.send(HELLO + reference("JS", 1))
        assert (await shoe.next(CardDrawn)).code == "JS"
        backend.unplug()
        lost = await shoe.next(Disconnected)
        assert lost.errno == errno.ENODEV
        assert (await shoe.next(LinkFault)).errno == errno.ENODEV
        backend.plug_in()
        await shoe.next(Reconnected)
        backend.send(HELLO + reference("QS", 2))
        assert (await shoe.next(CardDrawn)).code == "QS"


async def test_cancelling_the_driver_stops_the_usb_worker_thread() -> None:
    driver = usb_driver(FakeShoeBackend())
    async with running(driver) as shoe:
        await shoe.next(Connected)
        readers = [t for t in threading.enumerate() if t.name.startswith("shoe2mqtt usb")]
        assert len(readers) == 1
    assert not readers[0].is_alive()  # joined by the time the run task finished
    assert not driver.connected


# ---------------------------------------------------------------- the interface


async def test_heartbeats_and_other_events_pass_through() -> None:
    with Pty() as pty:
        async with running(driver_for(transport_factory(SerialSettings(pty.path)))) as shoe:
            await shoe.next(Connected)
            pty.write(HELLO + encode_device_frame(Heartbeat(), seq=9))
            assert await shoe.next(Heartbeat) == Heartbeat(next_seq=9)


async def test_the_driver_greets_and_takes_nothing_before_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/protocol.md §1.4: STATUS_REQUEST on every open, repeated until DEVICE_IDENTITY;
    a frame before it (a resend the device's timer sent blindly) is not taken."""
    monkeypatch.setattr(session_module, "GREETING_REPEAT", 0.05)
    with Pty() as pty:
        async with running(driver_for(transport_factory(SerialSettings(pty.path)))) as shoe:
            await shoe.next(Connected)
            host = HostFrameDecoder()
            greetings = host.feed(await pty.read(9 * 3))  # the greeting, unanswered, repeated
            assert greetings == [StatusRequest()] * 3
            pty.write(reference("AS", 5))  # not taken: the device has not answered yet
            pty.write(HELLO + reference("AS", 5))
            assert await shoe.next(DeviceIdentity) == IDENTITY
            assert await shoe.next(CardDrawn) == card("AS", 5)
            await asyncio.sleep(0.1)
        assert [e for e in shoe.events if isinstance(e, CardDrawn)] == [card("AS", 5)]
        with contextlib.suppress(TimeoutError):  # and no greeting once it was answered
            async with asyncio.timeout(0.1):
                assert host.feed(await pty.read(9)) == []


async def test_acknowledge_writes_the_protocols_acknowledgement_when_a_link_is_open() -> None:
    with Pty() as pty:
        driver = driver_for(transport_factory(SerialSettings(pty.path)))
        await driver.acknowledge(3)  # no link: the device will send it again; nothing to do
        async with running(driver) as shoe:
            await shoe.next(Connected)
            host = HostFrameDecoder()
            assert host.feed(await pty.read(9)) == [StatusRequest()]
            await driver.acknowledge(3)
            assert host.feed(await pty.read(11)) == [Acknowledge(acknowledged_seq=3)]


async def test_nothing_is_read_while_an_event_waits_to_be_pulled() -> None:
    """Back-pressure: a consumer that stops pulling stops the reading, and the bytes wait in
    the kernel (a shoe that keeps its frames loses nothing); closing the events closes the
    link."""
    with Pty() as pty:
        driver = driver_for(transport_factory(SerialSettings(pty.path)))
        async with contextlib.aclosing(driver.events()) as events:
            assert await anext(events) == Connecting(pty.path, 1)
            assert await anext(events) == Connected(pty.path)
            pty.write(HELLO + reference("AS", 1))  # waits in the pty until the driver reads
            assert await anext(events) == IDENTITY
            assert await anext(events) == card("AS", 1)
            read = driver.line.bytes_read
            pty.write(reference("KD", 2))
            await asyncio.sleep(0.1)
            assert driver.line.bytes_read == read  # nothing pulled: nothing read
            assert await anext(events) == card("KD", 2)
            assert driver.line.bytes_read > read
        assert not driver.connected
        assert await pty.read(9) == encode_host_frame(StatusRequest(), seq=0)


async def test_a_driver_runs_once_at_a_time() -> None:
    driver = driver_for(transport_factory(SerialSettings("/dev/ttyUSB9-not-here")))
    async with running(driver) as shoe:
        await shoe.next(LinkFault)
        with pytest.raises(RuntimeError, match="already running"):
            await anext(driver.events())


def test_idle_timeout_must_be_positive() -> None:
    with pytest.raises(SettingsError, match="idle_timeout"):
        driver_for(transport_factory(SerialSettings("/dev/ttyS0")), idle_timeout=0)
