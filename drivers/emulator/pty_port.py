"""A virtual serial port: a pseudo-terminal whose slave end a host opens like /dev/ttyUSB0.

The emulator owns the master. The slave is put in raw mode, so nothing is echoed or
translated, and we keep our own slave descriptor open for the port's whole life: that keeps
the line's settings and lets us ask how many bytes the host has not read yet.

Knowing when a host opens the port: the master runs in packet mode (TIOCPKT), where the
kernel reports a flush of the slave's input queue. pyserial flushes that queue at the end of
every open, so a flush is how the emulator tells that a host has (re)opened the line, and
answers like a device that sees a new connection (identity, or `S` for the ENQ family).

Unplugging closes the master (and our slave descriptor) and removes the link: the host's
next read fails with EIO or reads end-of-file, and opening the link fails with ENOENT, just
as after a USB-serial adapter is pulled and udev removes its /dev/serial/by-id name. Plugging
in opens a new pty, whose /dev/pts number differs, and points the link at it atomically.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import struct
import termios
import tty
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from drivers.emulator.errors import EmulatorError
from drivers.errors import DriverError
from drivers.logs import get_logger

if TYPE_CHECKING:
    from pathlib import Path

READ_SIZE: Final = 4096
DRAIN_POLL: Final = 0.01  # seconds between looks at what the host has not read yet
DRAIN_SETTLE: Final = 0.05  # seconds after a write before the kernel's count of unread bytes holds
_PACKET_DATA: Final = 0  # TIOCPKT_DATA: the first byte of a packet that carries data
_ENABLE: Final = struct.pack("i", 1)

_log = get_logger("drivers.emulator")


class PortUnplugged(DriverError):
    """The virtual cable is out: nothing can be written to or read from the port now."""


@dataclass(frozen=True, slots=True)
class HostPacket:
    """What came from the host side: bytes it wrote, or the news that it opened the port."""

    data: bytes = b""
    host_opened: bool = False


class VirtualSerialPort:
    """One pty at a time, replaced on every replug; `link`, if given, follows it."""

    def __init__(self, link: Path | None = None) -> None:
        self.link = link
        self._master = -1
        self._slave = -1
        self._path = ""
        self._generation = 0  # counts plug-ins: a descriptor number alone may be reused
        self._last_write = 0.0  # the loop's time when bytes last went to the host
        self._plugged = asyncio.Event()
        self._waiters: set[asyncio.Future[None]] = set()

    @property
    def path(self) -> str:
        """The current slave device, /dev/pts/N; it changes on every replug."""
        return self._path

    @property
    def plugged(self) -> bool:
        return self._master >= 0

    async def wait_plugged(self) -> None:
        await self._plugged.wait()

    def plug_in(self) -> None:
        if self.plugged:
            return
        if self.link is not None and self.link.exists() and not self.link.is_symlink():
            # Never replace a real file or device: the link name was probably mistyped.
            raise EmulatorError(
                "exists and is not a symlink: choose another link path",
                field="link",
                value=str(self.link),
            )
        master, slave = os.openpty()
        try:
            tty.setraw(slave, termios.TCSANOW)
            fcntl.ioctl(master, termios.TIOCPKT, _ENABLE)
            os.set_blocking(master, False)
            path = os.ttyname(slave)
            if self.link is not None:
                _replace_symlink(self.link, path)
        except OSError as exc:
            os.close(master)
            os.close(slave)
            raise EmulatorError(
                f"cannot create the link ({exc.strerror}): does its directory exist, "
                "and may we write to it?",
                field="link",
                value=str(self.link),
            ) from exc
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        self._master, self._slave, self._path = master, slave, path
        self._generation += 1
        self._plugged.set()
        _log.info(
            "emulator.plugged_in", port=path, link=None if self.link is None else str(self.link)
        )

    def unplug(self) -> None:
        """Pull the cable: the host's reads fail, the link disappears. Idempotent."""
        if not self.plugged:
            return
        master, slave = self._master, self._slave
        self._master = self._slave = -1
        self._plugged.clear()
        loop = asyncio.get_running_loop()
        # Unregister before closing: a new pty may get the same descriptor numbers at once.
        loop.remove_reader(master)
        loop.remove_writer(master)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(PortUnplugged(f"{self._path} was unplugged"))
        self._waiters.clear()
        os.close(master)
        os.close(slave)
        if self.link is not None:
            with contextlib.suppress(OSError):
                if str(self.link.readlink()) == self._path:
                    self.link.unlink()
        _log.info("emulator.unplugged", port=self._path)

    def close(self) -> None:
        self.unplug()

    async def wait_read_by_host(self) -> None:
        """Until the host has read every byte written: wrap it in a timeout, as a host that
        never opens the port never reads."""
        # The kernel offers no wake-up for "the other end has read": look every few ms. It
        # also hands what we wrote to the host's side a moment later, and the count reads 0
        # until then: only a count of 0 a while after the last write means it was read.
        loop = asyncio.get_running_loop()
        while loop.time() - self._last_write < DRAIN_SETTLE or self.unread_by_host() > 0:  # noqa: ASYNC110 - nothing to wait on but a poll
            await asyncio.sleep(DRAIN_POLL)

    def unread_by_host(self) -> int:
        """Bytes written to the host that it has not read yet."""
        if not self.plugged:
            return 0
        raw = fcntl.ioctl(self._slave, termios.FIONREAD, bytes(4))
        count: int = struct.unpack("i", raw)[0]
        return count

    async def write(self, data: bytes) -> None:
        """Write all of `data`, waiting while the host's input queue is full."""
        view = memoryview(data)
        while view:
            master = self._require_plugged()
            try:
                written = os.write(master, view)
            except BlockingIOError:
                await self._wait(master, for_write=True)
            else:
                view = view[written:]
                self._last_write = asyncio.get_running_loop().time()

    async def read(self) -> HostPacket:
        """The next packet from the host side; raises `PortUnplugged` if the cable is out."""
        while True:
            master = self._require_plugged()
            try:
                packet = os.read(master, READ_SIZE + 1)
            except BlockingIOError:
                await self._wait(master, for_write=False)
                continue
            if not packet:  # not seen with a slave descriptor of our own held open
                await self._wait(master, for_write=False)
                continue
            if packet[0] == _PACKET_DATA:
                if len(packet) > 1:
                    return HostPacket(data=packet[1:])
                continue
            if packet[0] & termios.TIOCPKT_FLUSHREAD:
                return HostPacket(host_opened=True)

    def _require_plugged(self) -> int:
        if not self.plugged:
            raise PortUnplugged(f"{self._path or 'the port'} is unplugged")
        return self._master

    async def _wait(self, fd: int, *, for_write: bool) -> None:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def ready() -> None:
            if not waiter.done():
                waiter.set_result(None)

        add, remove = (
            (loop.add_writer, loop.remove_writer)
            if for_write
            else (loop.add_reader, loop.remove_reader)
        )
        generation = self._generation
        add(fd, ready)
        self._waiters.add(waiter)
        try:
            await waiter
        finally:
            self._waiters.discard(waiter)
            if generation == self._generation and self.plugged:
                remove(fd)  # otherwise unplug has unregistered it already


def _replace_symlink(link: Path, target: str) -> None:
    """Point `link` at `target` in one step: a host never finds the name missing or stale."""
    temporary = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    temporary.symlink_to(target)
    try:
        temporary.replace(link)
    except BaseException:
        temporary.unlink()
        raise
