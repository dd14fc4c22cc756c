"""The one interface every transport implements: an async byte stream to a shoe."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from types import TracebackType


class Transport(ABC):
    """An async byte stream: open, read, write, close.

    A transport object is used for one connection: the driver makes a fresh one for every
    attempt, so no state survives from a link that failed. Every failure of the device or
    the operating system reaches the caller as a `TransportError`; anything else is a bug.
    """

    #: Says which device this is, in every log line and error: "/dev/ttyUSB0", "10.0.0.5:4001".
    endpoint: str

    @abstractmethod
    async def open(self) -> None:
        """Open the link; raises `OpenFailed`."""

    @abstractmethod
    async def read(self) -> bytes:
        """The next bytes from the device, at least one; raises `LinkLost` when it is gone."""

    def may_hold_more(self) -> bool:
        """Whether the next `read` may return at once, with bytes that came before this one
        was taken: the driver then gives the loop a turn first, so that a line that never
        stops keeps no other table waiting. True unless the transport knows better (a read
        that had to wait has given the loop its turn already)."""
        return True

    @abstractmethod
    async def write(self, data: bytes) -> None:
        """Send bytes to the device; raises `NotConnected` before open, `LinkLost` after loss."""

    @abstractmethod
    async def close(self) -> None:
        """Release the link and everything it holds. Idempotent, and never raises."""

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
