"""A TCP proxy between a client and a broker that cuts every connection after a while.

A link that drops every second (a flaky firewall, a NAT that forgets, a proxy with a short
idle limit) is made here on purpose: `CuttingProxy` listens on a free loopback port, opens a
connection to the upstream for every client it accepts, copies both ways, and `cut_after`
seconds after accepting closes both ends, as such a network does (the broker sees its client
go without a DISCONNECT and publishes its will). It runs on the caller's event loop; the
client is usually another process (`DaemonProcess`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Final, Self

from daemon.cli.loopback import LOOPBACK, free_port

if TYPE_CHECKING:
    from types import TracebackType

_CHUNK: Final = 65536


class CuttingProxy:
    """`async with CuttingProxy(host, port, cut_after=1.0) as proxy:` clients dial
    `proxy.host`, `proxy.port`; `proxy.accepted` counts the connections it made."""

    host: Final = LOOPBACK

    def __init__(self, upstream_host: str, upstream_port: int, *, cut_after: float) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.cut_after = cut_after
        self.port = free_port(self.host)
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        server, self._server = self._server, None
        assert server is not None, "the proxy was not started"
        server.close()
        for connection in self._connections:
            connection.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await server.wait_closed()

    async def _serve(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self.accepted += 1
        try:
            await self._pipe(client_in, client_out)
        finally:
            self._connections.discard(task)
            client_out.close()
            with contextlib.suppress(OSError):
                await client_out.wait_closed()

    async def _pipe(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        try:
            upstream_in, upstream_out = await asyncio.open_connection(*self.upstream)
        except OSError:
            return  # the broker is away: the client sees its connection closed at once
        try:
            # The cut: both ends are closed below, as a network that drops the link.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.cut_after):
                    await _both_ways(client_in, client_out, upstream_in, upstream_out)
        finally:
            upstream_out.close()
            with contextlib.suppress(OSError):
                await upstream_out.wait_closed()


async def _both_ways(
    client_in: asyncio.StreamReader,
    client_out: asyncio.StreamWriter,
    upstream_in: asyncio.StreamReader,
    upstream_out: asyncio.StreamWriter,
) -> None:
    """Copy until either end closes."""
    try:
        async with asyncio.TaskGroup() as copying:
            copying.create_task(_copy(client_in, upstream_out), name="proxy-up")
            copying.create_task(_copy(upstream_in, client_out), name="proxy-down")
    except* _Closed:
        pass


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Until either end closes; then the whole connection ends (a half-open one too)."""
    with contextlib.suppress(OSError):
        while chunk := await source.read(_CHUNK):
            sink.write(chunk)
            await sink.drain()
    raise _Closed


class _Closed(Exception):
    """One direction ended: the task group ends the other."""
