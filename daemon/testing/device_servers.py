"""Emulated shoes behind TCP ports, as serial device servers (ser2net, a Moxa NPort) serve
real ones: one listening port per shoe on 127.0.0.1, one host at a time on each.

    async with DeviceServers(256, protocol="reference") as shoes:
        shoes.ports                      # one port per shoe, for `[table.shoe] port`
        await shoes.wait_connected(256)  # until the daemon has a link to each
        await shoes.deal(0)              # shoe 0 deals a card now

The shoe is the emulator's sans-I/O core (`drivers.emulator.ShoeEmulator`): it greets each
host that connects (power-up), answers what the host sends, and deals when told. Every
shoe is served by one process's event loop, so hundreds cost a test a few file descriptors
each, where as many ptys or socat processes would not fit.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Self

from daemon.cli.loopback import LOOPBACK
from drivers.emulator import EmulatorSettings, ShoeEmulator

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from types import TracebackType

    from drivers.emulator import Write
    from drivers.emulator.personalities import ProtocolName


class _Shoe:
    def __init__(self, emulator: ShoeEmulator) -> None:
        self.emulator = emulator
        self.writer: asyncio.StreamWriter | None = None
        self.server: asyncio.Server | None = None

    async def serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, connected: asyncio.Event
    ) -> None:
        if self.writer is not None:  # a device server serves one host at a time
            writer.close()
            return
        self.writer = writer
        connected.set()
        try:
            await self.send(self.emulator.power_up())
            while data := await reader.read(4096):
                await self.send(self.emulator.receive(data))
        except ConnectionError:
            pass
        finally:
            self.writer = None
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def send(self, writes: list[Write]) -> bool:
        writer = self.writer
        if writer is None or not writes:
            return writer is not None
        writer.write(b"".join(w.data for w in writes))
        await writer.drain()
        return True


class DeviceServers:
    """`count` emulated shoes, each behind its own TCP port, until the block ends."""

    def __init__(self, count: int, *, protocol: ProtocolName = "reference", seed: int = 1) -> None:
        self._shoes = [
            _Shoe(ShoeEmulator(EmulatorSettings(protocol=protocol, seed=seed + i), seed + i))
            for i in range(count)
        ]
        self._connections: set[asyncio.Task[None]] = set()
        self._connected = asyncio.Event()

    @property
    def ports(self) -> list[int]:
        ports = []
        for shoe in self._shoes:
            assert shoe.server is not None, "not started"
            ports.append(shoe.server.sockets[0].getsockname()[1])
        return ports

    @property
    def connected(self) -> int:
        """Shoes whose host is connected now."""
        return sum(1 for shoe in self._shoes if shoe.writer is not None)

    async def wait_connected(self, count: int) -> None:
        """Until `count` shoes have a host; wrap it in a timeout."""
        while self.connected < count:
            self._connected.clear()
            await self._connected.wait()

    def drop_hosts(self) -> None:
        """Every shoe's connection drops at once, as when a device server restarts."""
        for shoe in self._shoes:
            if shoe.writer is not None:
                shoe.writer.close()

    async def deal(self, index: int) -> bool:
        """Shoe `index` deals one card now; False if no host was there to read it."""
        shoe = self._shoes[index]
        dealing = shoe.emulator.deal()
        return dealing is not None and await shoe.send(dealing.writes)

    async def __aenter__(self) -> Self:
        for shoe in self._shoes:
            shoe.server = await asyncio.start_server(
                self._handler(shoe), LOOPBACK, 0, reuse_address=True
            )
        return self

    def _handler(
        self, shoe: _Shoe
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            self._connections.add(task)
            try:
                await shoe.serve(reader, writer, self._connected)
            finally:
                self._connections.discard(task)

        return handle

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for shoe in self._shoes:
            if shoe.server is not None:
                shoe.server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        for shoe in self._shoes:
            if shoe.server is not None:
                await shoe.server.wait_closed()
