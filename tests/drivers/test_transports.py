"""Transports against real kernel ttys, a local TCP server and a pyusb backend playing a shoe.

Serial tests use os.openpty pairs and socat-linked pty pairs (real ttys, so pyserial and the
kernel do what they do with an adapter). A pty has no modem lines, so nothing here depends
on DTR, RTS or CTS. Closing a pty's master (or killing socat) makes the other end read EIO:
that is what a USB-serial adapter being unplugged looks like. The pty helpers live here and
test_driver.py reuses them.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
import termios
import tty
from typing import TYPE_CHECKING, Self

import pytest

from daemon.testing import SocatPair
from drivers.transports import (
    LinkLost,
    NotConnected,
    OpenFailed,
    SerialSettings,
    SerialTransport,
    SettingsError,
    TcpSettings,
    TcpTransport,
    UsbSettings,
    UsbTransport,
    transport_factory,
)
from drivers.transports.streams import READ_SIZE
from tests.drivers.usb_backend import FakeShoeBackend

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator
    from pathlib import Path


class Pty:
    """An os.openpty pair: the test is the shoe on the master, the driver opens `path`."""

    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        # Raw from the start, so no byte is echoed or translated before the driver opens it.
        tty.setraw(self._slave, termios.TCSANOW)
        self.path = os.ttyname(self._slave)
        os.set_blocking(self.master, False)

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    async def read(self, size: int) -> bytes:
        """Read exactly `size` bytes the host wrote to the shoe."""
        received = b""
        async with asyncio.timeout(5):
            while len(received) < size:
                try:
                    received += os.read(self.master, size - len(received))
                except BlockingIOError:
                    await asyncio.sleep(0.005)
        return received

    def hang_up(self) -> None:
        """Close the master: the driver's end now reads EIO, as after an unplug."""
        if self.master >= 0:
            os.close(self.master)
            self.master = -1

    def close(self) -> None:
        self.hang_up()
        if self._slave >= 0:
            os.close(self._slave)
            self._slave = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@pytest.fixture
def pty() -> Iterator[Pty]:
    with Pty() as pair:
        yield pair


@pytest.fixture
async def socat(tmp_path: Path) -> AsyncIterator[SocatPair]:
    pair = SocatPair(tmp_path)
    await pair.start()
    try:
        yield pair
    finally:
        await pair.stop()


@contextlib.asynccontextmanager
async def tcp_server(
    on_connect: Callable[[asyncio.StreamReader, asyncio.StreamWriter], object],
) -> AsyncIterator[int]:
    """A device server on 127.0.0.1; yields its port; every client gets `on_connect`."""
    writers: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        result = on_connect(reader, writer)
        if asyncio.iscoroutine(result):
            await result

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in writers:
            writer.close()
        await server.wait_closed()


def closed_port() -> int:
    """A local port nothing listens on: bound once, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# ---------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"parity": "X"}, "parity", "parity must be one of N, E, O, M, S"),
        ({"baudrate": 96000}, "baudrate", "must be a standard baud rate .*, not 96000"),
        ({"baudrate": True}, "baudrate", "must be a whole number, not a boolean"),
        ({"baudrate": "4800"}, "baudrate", r"must be a whole number, not a string \('4800'\)"),
        ({"exclusive": "yes"}, "exclusive", "must be true or false, not a string"),
        ({"port": "/dev/tty\0USB0"}, "port", "must be a device path"),
        ({"bytesize": 9}, "bytesize", "data bits must be 5, 6, 7 or 8"),
        ({"stopbits": 3}, "stopbits", "stop bits must be 1, 1.5 or 2"),
        ({"port": "COM3"}, "port", "must be a device path such as /dev/ttyUSB0"),
    ],
)
def test_serial_settings_say_what_to_fix(change: dict[str, object], field: str, says: str) -> None:
    arguments: dict[str, object] = {"port": "/dev/ttyUSB0", **change}
    with pytest.raises(SettingsError, match=says) as caught:
        SerialSettings(**arguments)  # type: ignore[arg-type]  # wrong on purpose
    assert caught.value.field == field
    assert caught.value.value == change[field]
    assert str(caught.value).startswith(f"{field}: ")


def test_serial_settings_accept_a_field_setting() -> None:
    settings = SerialSettings("/dev/serial/by-id/usb-FTDI-if00", baudrate=4800, stopbits=1.5)
    assert settings.line == "4800 8N1.5"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"host": "", "port": 4001}, "host"),
        ({"host": "nport", "port": 0}, "port"),
        ({"host": "nport", "port": 70000}, "port"),
        ({"host": "nport", "port": 4001, "connect_timeout": 0}, "connect_timeout"),
    ],
)
def test_tcp_settings_say_what_to_fix(arguments: dict[str, object], field: str) -> None:
    with pytest.raises(SettingsError) as caught:
        TcpSettings(**arguments)  # type: ignore[arg-type]  # wrong on purpose
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"vendor_id": 0x10000, "product_id": 1}, "vendor_id"),
        ({"vendor_id": 1, "product_id": -1}, "product_id"),
        ({"vendor_id": 1, "product_id": 1, "serial_number": ""}, "serial_number"),
        ({"vendor_id": 1, "product_id": 1, "read_timeout_ms": 0}, "read_timeout_ms"),
    ],
)
def test_usb_settings_say_what_to_fix(arguments: dict[str, object], field: str) -> None:
    with pytest.raises(SettingsError, match=field):
        UsbSettings(**arguments)  # type: ignore[arg-type]  # wrong on purpose


def test_the_factory_makes_a_fresh_transport_of_the_right_kind() -> None:
    make = transport_factory(TcpSettings("::1", 4001))
    first, second = make(), make()
    assert isinstance(first, TcpTransport)
    assert first is not second
    assert first.endpoint == "[::1]:4001"


# ---------------------------------------------------------------- serial over a pty


async def test_serial_reads_and_writes_a_pty(pty: Pty) -> None:
    async with SerialTransport(SerialSettings(pty.path)) as port:
        pty.write(b"\x05\x01D")
        assert await port.read() == b"\x05\x01D"
        await port.write(b"\x02OPLK02")
        assert await pty.read(7) == b"\x02OPLK02"


async def test_serial_reports_a_hang_up_as_link_lost_with_eio(pty: Pty) -> None:
    async with SerialTransport(SerialSettings(pty.path)) as port:
        pty.hang_up()
        with pytest.raises(LinkLost) as caught:
            await port.read()
    # Depending on timing the kernel reports EIO or an empty read; pyserial calls the
    # latter "readiness to read but returned no data", with no errno to pass on.
    assert caught.value.errno in {errno.EIO, None}
    assert caught.value.endpoint == pty.path
    assert "unplugged" in str(caught.value)


async def test_a_missing_serial_port_says_what_to_check() -> None:
    port = SerialTransport(SerialSettings("/dev/ttyUSB9-not-here"))
    with pytest.raises(OpenFailed) as caught:
        await port.open()
    assert str(caught.value) == (
        "no such serial port /dev/ttyUSB9-not-here: check `shoe2mqtt ports`"
    )
    assert caught.value.errno == errno.ENOENT
    await port.close()  # harmless after a failed open


async def test_a_port_another_program_holds_is_reported_busy(pty: Pty) -> None:
    async with SerialTransport(SerialSettings(pty.path)):
        second = SerialTransport(SerialSettings(pty.path))
        with pytest.raises(OpenFailed, match="in use by another program"):
            await second.open()


async def test_io_before_open_is_refused(pty: Pty) -> None:
    port = SerialTransport(SerialSettings(pty.path))
    with pytest.raises(NotConnected):
        await port.read()
    with pytest.raises(NotConnected):
        await port.write(b"x")


async def test_serial_over_socat_sees_the_unplug(socat: SocatPair) -> None:
    async with SerialTransport(SerialSettings(str(socat.host_path), baudrate=4800)) as port:
        socat.write(b"\x7e\x01")
        assert await port.read() == b"\x7e\x01"
        await socat.stop()
        with pytest.raises(LinkLost) as caught:
            await port.read()
    assert caught.value.errno in {errno.EIO, None}  # see the pty hang-up test


# ---------------------------------------------------------------- TCP


async def test_tcp_reads_writes_and_sees_the_server_close() -> None:
    received: asyncio.Queue[bytes] = asyncio.Queue()

    async def device(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"\x05\x00S\x03")
        received.put_nowait(await reader.readexactly(3))
        writer.close()

    async with tcp_server(device) as port, TcpTransport(TcpSettings("127.0.0.1", port)) as link:
        assert await link.read() == b"\x05\x00S\x03"
        await link.write(b"ack")
        assert await received.get() == b"ack"
        with pytest.raises(LinkLost, match="closed by the other end"):
            await link.read()


async def test_a_tcp_read_says_whether_more_may_be_waiting() -> None:
    """A read that took less than it asked for emptied the buffer: the next one waits (the
    driver then gives the loop no extra turn); one that took all it asked for may have left
    more behind (the driver yields first). Checked by what the reads that follow return."""
    burst = os.urandom(3 * READ_SIZE + 100)
    sent = asyncio.Event()

    async def device(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"\x05\x00S\x03")
        await writer.drain()
        await sent.wait()
        writer.write(burst)
        await writer.drain()

    async with tcp_server(device) as port, TcpTransport(TcpSettings("127.0.0.1", port)) as link:
        assert await link.read() == b"\x05\x00S\x03"
        assert not link.may_hold_more()
        sent.set()
        chunks: list[bytes] = []
        async with asyncio.timeout(5):
            while sum(map(len, chunks)) < len(burst):  # the kernel may split it anywhere
                chunks.append(await link.read())
                assert link.may_hold_more() == (len(chunks[-1]) == READ_SIZE)
        assert b"".join(chunks) == burst
        assert READ_SIZE in map(len, chunks)  # one read at least left bytes behind
        assert not link.may_hold_more()


async def test_tcp_refused_says_what_to_check() -> None:
    port = closed_port()
    link = TcpTransport(TcpSettings("127.0.0.1", port))
    with pytest.raises(OpenFailed) as caught:
        await link.open()
    assert caught.value.errno == errno.ECONNREFUSED
    assert str(caught.value).startswith(f"127.0.0.1:{port} refused the connection")


# ---------------------------------------------------------------- USB


USB = UsbSettings(0x1209, 0x5E0E, read_timeout_ms=20)


async def test_usb_reads_frames_and_treats_a_read_timeout_as_no_data() -> None:
    backend = FakeShoeBackend()
    async with UsbTransport(USB, backend=backend) as link:
        reads_before = backend.reads
        backend.send(b"\x7e\x01\x02")
        assert await link.read() == b"\x7e\x01\x02"
        # Several reads time out while nothing is sent; none of them is an error.
        async with asyncio.timeout(5):
            while backend.reads < reads_before + 3:  # noqa: ASYNC110 - the fake has no event to wait on
                await asyncio.sleep(0.01)
        backend.send(b"\x7e")
        assert await link.read() == b"\x7e"
        assert backend.configuration == 1


async def test_a_usb_read_says_whether_chunks_wait() -> None:
    backend = FakeShoeBackend()
    async with UsbTransport(USB, backend=backend) as link:
        assert not link.may_hold_more()
        for frame in (b"\x7e\x01", b"\x02"):
            backend.send(frame)
            async with asyncio.timeout(5):
                while not link.may_hold_more():  # noqa: ASYNC110 - the fake has no event to wait on
                    await asyncio.sleep(0.01)
            assert await link.read() == frame
            assert not link.may_hold_more()


async def test_usb_writes_to_the_out_endpoint() -> None:
    backend = FakeShoeBackend(interrupt=True)
    async with UsbTransport(USB, backend=backend) as link:
        await link.write(b"\x02OPLK02\x03")
    assert backend.written == [b"\x02OPLK02\x03"]


async def test_usb_unplug_is_link_lost_with_enodev() -> None:
    backend = FakeShoeBackend()
    async with UsbTransport(USB, backend=backend) as link:
        backend.unplug()
        with pytest.raises(LinkLost) as caught:
            await link.read()
        with pytest.raises(LinkLost):  # and it stays lost
            await link.read()
    assert caught.value.errno == errno.ENODEV
    assert "went away" in str(caught.value)


async def test_usb_device_not_present_says_what_to_check() -> None:
    backend = FakeShoeBackend()
    backend.unplug()
    link = UsbTransport(USB, backend=backend)
    with pytest.raises(OpenFailed, match=r"no USB device usb 1209:5e0e: check it is plugged in"):
        await link.open()


async def test_usb_matches_the_serial_number() -> None:
    backend = FakeShoeBackend(serial_number="SHOE-0001")
    other = UsbSettings(0x1209, 0x5E0E, serial_number="SHOE-0002", read_timeout_ms=20)
    with pytest.raises(OpenFailed, match="serial SHOE-0002"):
        await UsbTransport(other, backend=backend).open()
    mine = UsbSettings(0x1209, 0x5E0E, serial_number="SHOE-0001", read_timeout_ms=20)
    async with UsbTransport(mine, backend=backend) as link:
        assert link.endpoint == "usb 1209:5e0e serial SHOE-0001"


async def test_usb_without_an_out_endpoint_refuses_writes() -> None:
    backend = FakeShoeBackend(with_out_endpoint=False)
    async with UsbTransport(USB, backend=backend) as link:
        with pytest.raises(LinkLost, match="no OUT endpoint"):
            await link.write(b"x")


async def test_usb_wrong_interface_says_so() -> None:
    settings = UsbSettings(0x1209, 0x5E0E, interface=3, read_timeout_ms=20)
    with pytest.raises(OpenFailed, match="has no interface 3"):
        await UsbTransport(settings, backend=FakeShoeBackend()).open()


def test_every_wrong_serial_setting_is_reported_at_once() -> None:
    """check-config names them all in one run (SettingsError.problems)."""
    with pytest.raises(SettingsError) as caught:
        SerialSettings("COM3", baudrate="4800", parity="X", exclusive="yes")  # type: ignore[arg-type]  # wrong on purpose
    assert [p.field for p in caught.value.problems] == ["port", "baudrate", "parity", "exclusive"]
    assert caught.value.field == "port"
