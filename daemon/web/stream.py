"""A page's live stream of Server-Sent Events, as the pit display and the dealer console send it.

Server-Sent Events rather than a WebSocket: the page only listens, and the browser's
EventSource reconnects by itself when the process restarts (`retry:` says how soon). A
server notifies `Changes` after each change of what its pages show; each open stream takes
`changes.ticks()`: a tick at once, one as soon as anything changed, and one after `HEARTBEAT`
seconds of nothing (a `beat`, by which the page notices a dead connection that never
closed), until the server shuts down and `close()` ends every stream at once rather than
after its next heartbeat.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any, Final, Self

from aiohttp import web

if TYPE_CHECKING:
    from types import TracebackType

HEARTBEAT: Final = 5.0  # seconds between `beat` events; the pages give up after three missed
RETRY_MS: Final = 1000  # how soon EventSource reconnects after the stream ends


class Changes:
    """Wakes every open stream when what the pages show changes: `notify()` after each change."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._closed = False

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    def next(self) -> asyncio.Event:
        """The event the next `notify()` sets; take it before looking at what changed."""
        return self._event

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """The server is shutting down: every stream's ticks end now."""
        self._closed = True
        self.notify()

    def ticks(self, heartbeat: float = HEARTBEAT) -> Ticks:
        return Ticks(self, heartbeat)

    def end_streams_on_shutdown(self, app: web.Application) -> None:
        async def close(_app: web.Application) -> None:
            self.close()

        app.on_shutdown.append(close)


class Ticks:
    """`async for changed in changes.ticks()`: True at once and after each change, False
    after `heartbeat` seconds without one; ends when the changes close.

    The wake-up is taken before each tick is handed out, so a change made while the stream
    writes its last event is not missed: the next tick comes at once."""

    def __init__(self, changes: Changes, heartbeat: float) -> None:
        self._changes = changes
        self._heartbeat = heartbeat
        self._wake: asyncio.Event | None = None

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> bool:
        changed = True
        if self._wake is not None and not self._wake.is_set():  # set: no need to wait a turn
            try:
                await asyncio.wait_for(self._wake.wait(), self._heartbeat)
            except TimeoutError:
                changed = False
        if self._changes.closed:
            raise StopAsyncIteration
        self._wake = self._changes.next()
        return changed


class EventStream:
    """One page's stream: `async with EventStream(request) as stream:` sends the headers and
    `retry:`, then `await stream.send(kind, body)`; a page that went away ends the block
    quietly. The handler returns `stream.response`."""

    def __init__(self, request: web.Request) -> None:
        self._request = request
        self.response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",  # nginx: pass each event on at once
            }
        )

    async def __aenter__(self) -> Self:
        await self.response.prepare(self._request)
        with contextlib.suppress(ConnectionResetError):  # gone already: the first send ends it
            await self.response.write(f"retry: {RETRY_MS}\n\n".encode())
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        return kind is not None and issubclass(kind, ConnectionResetError)  # the page went away

    async def send(self, kind: str, body: dict[str, Any]) -> None:
        await self.response.write(f"event: {kind}\ndata: {dumps(body)}\n\n".encode())


def dumps(body: object) -> str:
    """Compact JSON, as the stream and the pages' other answers carry it."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)
