"""A capture played onto a virtual serial port: the shoe it recorded, for a host on a real tty.

    async with CapturePlayback(read_capture(path), link=Path("/tmp/shoe0")) as shoe:
        await shoe.wait_for_host()    # until a host opens the port (optional)
        await shoe.play()             # every chunk the shoe sent, with its timing
        await shoe.wait_read()        # until the host has read the last byte

`shoe2mqtt emulate --playback FILE` runs one, so that `run` (or `listen`) reads a site's
capture through a serial port, as it reads the shoe itself. Each chunk the recorder read is
written as one write, `speed` times as fast as it came (the first at once); at speed 0 each
is written once the host has read the one before. What the host writes is read and dropped.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final, Self

from drivers.emulator.errors import EmulatorError
from drivers.emulator.pty_port import PortUnplugged, VirtualSerialPort
from drivers.logs import get_logger

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

    from drivers.captures import Capture

MAX_SPEED: Final = 1000.0  # as the capture transport's: faster is "0"
_log = get_logger("drivers.emulator")


class CapturePlayback:
    def __init__(self, capture: Capture, *, link: Path | None = None, speed: float = 1.0) -> None:
        if isinstance(speed, bool) or not 0 <= speed <= MAX_SPEED:
            raise EmulatorError(
                f"must be from 0 (as fast as the host reads) to {MAX_SPEED:g}; 1 as recorded",
                field="speed",
                value=speed,
            )
        self.capture = capture
        self.speed = speed
        self._port = VirtualSerialPort(link)
        self._host_opened = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    @property
    def port_path(self) -> str:
        """The pty a host opens now, /dev/pts/N."""
        return self._port.path

    @property
    def link(self) -> str | None:
        return None if self._port.link is None else str(self._port.link)

    @property
    def path(self) -> str:
        """What a host should open: the link if there is one, else the pty."""
        return self.link if self.link is not None else self.port_path

    async def __aenter__(self) -> Self:
        self._port.plug_in()
        self._reader = asyncio.create_task(self._serve_host(), name="playback host reader")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        self._port.close()

    async def wait_for_host(self) -> None:
        """Until a host has opened the port."""
        await self._host_opened.wait()

    async def play(self) -> int:
        """Write every chunk the shoe sent, with its timing; the number written."""
        chunks = self.capture.received
        loop = asyncio.get_running_loop()
        started = loop.time()
        for chunk in chunks:
            if self.speed == 0:
                await self.wait_read()
            else:
                due = started + (chunk.t - chunks[0].t) / self.speed
                await asyncio.sleep(max(0.0, due - loop.time()))
            await self._port.write(chunk.data)
        return len(chunks)

    async def wait_read(self) -> None:
        """Until the host has read every byte written."""
        await self._port.wait_read_by_host()

    async def _serve_host(self) -> None:
        """Notices a host opening the port; drops what it writes (a capture answers nothing)."""
        while True:
            try:
                packet = await self._port.read()
            except PortUnplugged:
                return
            if packet.host_opened:
                _log.info("emulator.host_opened", port=self._port.path)
                self._host_opened.set()
