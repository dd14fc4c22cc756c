"""Line noise on a shoe's line: random bytes, as fast as the host reads them, for a while.

    written = await write_noise(cable.write_all, seconds=20)   # a SocatPair's end of the cable
    written = await write_noise(shoe.write_noise, seconds=20)   # an EmulatedShoe's line

`send` is awaited for every chunk and waits while the line is full, so the noise comes as fast
as the host takes it and no faster: what the host cannot read waits in the kernel, as on a
real line, instead of growing this process.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

CHUNK: Final = 4096  # bytes per write: a serial driver's buffer, about


@dataclass(frozen=True, slots=True)
class NoiseWritten:
    """What `write_noise` wrote, and when it stopped (the event loop's clock)."""

    bytes: int
    seconds: float
    ended_at: float

    @property
    def rate(self) -> float:
        """Bytes a second."""
        return self.bytes / self.seconds if self.seconds else 0.0


async def write_noise(
    send: Callable[[bytes], Awaitable[object]], *, seconds: float, chunk: int = CHUNK
) -> NoiseWritten:
    """Random bytes through `send`, chunk after chunk, for `seconds`."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    written = 0
    while loop.time() - began < seconds:
        await send(os.urandom(chunk))
        written += chunk
        await asyncio.sleep(0)  # a send that found room did not yield: the rest runs too
    ended = loop.time()
    return NoiseWritten(written, ended - began, ended)
