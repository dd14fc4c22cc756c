"""A serial cable that can be pulled out: two ptys joined by socat.

The host (the daemon, a driver) opens `host_path`, as it opens a USB-serial adapter's tty;
the caller plays the shoe and writes to `device_path`. `stop()` kills socat, which removes
both links as udev removes an unplugged adapter's name, and the host's end reads EIO;
`start()` again is the replug. `async with SocatPair(directory) as cable:` plugs it in for
the block.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from typing import TYPE_CHECKING, Final, Self

if TYPE_CHECKING:
    from pathlib import Path

SOCAT: Final = "/usr/bin/socat"
_READY_TIMEOUT: Final = 5.0


class SocatPair:
    """Two ptys joined by socat: the host opens `host_path`, the caller writes `device_path`."""

    def __init__(self, directory: Path) -> None:
        self.host_path = directory / "shoe-host"
        self.device_path = directory / "shoe-device"
        self._log = directory / "socat.log"
        self._process: asyncio.subprocess.Process | None = None
        self._device_fd = -1

    async def start(self) -> None:
        """Start socat and wait until both links exist: the adapter is plugged in."""
        assert self._process is None, "socat is already running"
        with self._log.open("ab") as log:
            self._process = await asyncio.create_subprocess_exec(
                SOCAT, "-d", "-d",
                f"pty,raw,echo=0,link={self.host_path}", f"pty,raw,echo=0,link={self.device_path}",
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            )  # fmt: skip
        async with asyncio.timeout(_READY_TIMEOUT):
            # socat gives no readiness signal but its links, which it makes once both exist.
            while not (self.host_path.exists() and self.device_path.exists()):
                assert self._process.returncode is None, self._log.read_text()
                await asyncio.sleep(0.01)
        self._device_fd = os.open(self.device_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)

    def write(self, data: bytes) -> None:
        os.write(self._device_fd, data)

    async def write_all(self, data: bytes) -> None:
        """Write all of `data`, waiting while the line is full (the host reads no faster)."""
        loop = asyncio.get_running_loop()
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._device_fd, view) :]
            except BlockingIOError:
                writable: asyncio.Future[None] = loop.create_future()

                def ready(waiter: asyncio.Future[None] = writable) -> None:
                    if not waiter.done():  # the loop may look again before we stop it
                        waiter.set_result(None)

                loop.add_writer(self._device_fd, ready)
                try:
                    await writable
                finally:
                    loop.remove_writer(self._device_fd)

    async def stop(self) -> None:
        """Kill socat (SIGTERM: it removes its links, as udev removes an unplugged tty)."""
        if self._device_fd >= 0:
            os.close(self._device_fd)
            self._device_fd = -1
        process, self._process = self._process, None
        if process is None:
            return
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(_READY_TIMEOUT):
            await process.wait()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
