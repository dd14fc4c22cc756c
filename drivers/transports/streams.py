"""What the serial and TCP transports share: an asyncio StreamReader/StreamWriter pair."""

from __future__ import annotations

import asyncio
import contextlib
import errno as errno_codes
import os
from abc import abstractmethod
from typing import ClassVar, Final

from drivers.transports.base import Transport
from drivers.transports.errors import LinkLost, NotConnected

READ_SIZE: Final = 4096  # far more than a shoe sends between two reads; the codec takes any split
CLOSE_TIMEOUT: Final = 2.0  # seconds to wait for the OS to release the port or socket


class StreamTransport(Transport):
    """A transport over a StreamReader/StreamWriter; subclasses only know how to connect."""

    # True where a graceful close may wait on a dead device (a serial port draining its
    # output into an unplugged adapter); a link we are closing has nothing worth sending.
    _abort_on_close: ClassVar[bool] = False

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._filled = False  # the last read took all it asked for: more may be buffered

    @abstractmethod
    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Open the stream; raises `OpenFailed` with a message that says what to check."""

    @abstractmethod
    def _lost_message(self, strerror: str) -> str:
        """What to tell an operator when the open link fails with `strerror`."""

    async def open(self) -> None:
        if self._writer is not None:
            raise RuntimeError(f"{self.endpoint} is already open")
        self._reader, self._writer = await self._connect()

    async def read(self) -> bytes:
        if self._reader is None:
            raise NotConnected("not open", endpoint=self.endpoint)
        try:
            data = await self._reader.read(READ_SIZE)
        except OSError as exc:
            raise self._lost(exc) from exc
        if not data:
            raise self._lost(None)
        self._filled = len(data) >= READ_SIZE
        return data

    def may_hold_more(self) -> bool:
        """A read that returned less than it asked for emptied the stream's buffer, and
        only the loop fills it again: the next read waits, and gives the loop its turn."""
        return self._filled

    async def write(self, data: bytes) -> None:
        writer = self._writer
        if writer is None:
            raise NotConnected("not open", endpoint=self.endpoint)
        if writer.is_closing():
            raise self._lost(None)
        try:
            writer.write(data)
            await writer.drain()
        except OSError as exc:
            raise self._lost(exc) from exc

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is None:
            return
        # A link that failed is already closing itself; closing it twice would run the
        # stream's teardown twice, which pyserial-asyncio-fast does not survive.
        if not writer.transport.is_closing():
            if self._abort_on_close:
                writer.transport.abort()
            else:
                writer.close()
        # The error that ended the link comes back out of wait_closed; it was reported already.
        with contextlib.suppress(OSError):  # TimeoutError is an OSError too
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await writer.wait_closed()

    def _lost(self, exc: BaseException | None) -> LinkLost:
        code = errno_of(exc)
        if exc is None:
            strerror = "closed by the other end"
        elif code is not None:
            strerror = describe_errno(code)
        else:
            strerror = str(exc) or type(exc).__name__
        return LinkLost(self._lost_message(strerror), endpoint=self.endpoint, errno=code)


def errno_of(exc: BaseException | None) -> int | None:
    """The errno behind `exc`, also when a library re-raised it without one (pyserial does)."""
    seen = 0
    while exc is not None and seen < 5:  # a short chain; the bound only guards against cycles
        code = getattr(exc, "errno", None)
        if isinstance(code, int):
            return code
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def describe_errno(code: int) -> str:
    """ "Input/output error (EIO)": the words for an operator, the name for a search."""
    return f"{os.strerror(code)} ({errno_codes.errorcode.get(code, code)})"
