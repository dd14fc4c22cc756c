"""A capture played as a shoe: the bytes a real shoe sent, with their timing, then silence.

`[table.shoe] transport = "capture"` (and `shoe2mqtt listen --capture FILE`) reads a capture
(`drivers.captures`, docs/captures.md) instead of a device: each chunk the recorder read
comes out of `read` as one chunk, `speed` times as fast as it came (the first at once; 0: as
fast as the reader takes them). After the last, the transport behaves like a shoe left
plugged in: the link stays up and no byte comes; or, with `ends` (`listen`, which reads a
capture to its end and stops), the link is lost once the reader comes back for more. What
the host writes is taken and dropped, as a shoe that says nothing back would.
"""

from __future__ import annotations

import asyncio
import errno
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from drivers.captures import CaptureError, read_capture
from drivers.transports.base import Transport
from drivers.transports.errors import (
    LinkLost,
    NotConnected,
    OpenFailed,
    SettingsCheck,
    describe_value,
)
from drivers.transports.serial_line import is_absolute_path

if TYPE_CHECKING:
    from drivers.captures import Chunk

# A faster playback than this is "as fast as the reader takes them": say 0.
MAX_SPEED: Final = 1000.0


@dataclass(frozen=True, slots=True)
class CaptureSettings:
    """One capture file, and how fast to play it; invalid values raise `SettingsError`."""

    path: str  # an absolute path, as every path the daemon's configuration names
    speed: float = 1.0  # 1: as recorded; 2: twice as fast; 0: as fast as the reader takes them
    # After the last chunk: False, silence on a link that stays up (a shoe left plugged in);
    # True, the link lost (`CaptureEnded`) once the reader has taken every chunk.
    ends: bool = False

    def __post_init__(self) -> None:
        check = SettingsCheck()
        if not is_absolute_path(self.path):
            check.refuse(
                "path",
                self.path,
                "must be the capture file's absolute path, e.g. /var/lib/shoe2mqtt/shoe.jsonl, "
                f"not {describe_value(self.path)}",
            )
        speed = self.speed
        if (
            isinstance(speed, bool)
            or not isinstance(speed, int | float)
            or not (math.isfinite(speed) and 0 <= speed <= MAX_SPEED)
        ):
            check.refuse(
                "speed",
                speed,
                f"must be a number from 0 (as fast as the reader takes them) to {MAX_SPEED:g}, "
                f"1 as recorded; not {describe_value(speed)}",
            )
        ends: object = self.ends  # typed bool, but built from whatever a caller passed
        if not isinstance(ends, bool):
            check.refuse("ends", ends, f"must be true or false, not {describe_value(ends)}")
        check.raise_any()


class CaptureEnded(LinkLost):
    """A capture read with `ends`: every chunk has been taken, the reader came back for more."""


class CaptureTransport(Transport):
    def __init__(self, settings: CaptureSettings) -> None:
        self.settings = settings
        self.endpoint = f"capture:{settings.path}"
        self._chunks: tuple[Chunk, ...] | None = None
        self._next = 0
        self._started = 0.0  # the loop's time when the first chunk came out

    async def open(self) -> None:
        if self._chunks is not None:
            raise RuntimeError(f"{self.endpoint} is already open")
        path = Path(self.settings.path)
        try:
            capture = await asyncio.to_thread(read_capture, path)
        except OSError as exc:
            message = f"cannot read the capture {path}: {exc.strerror or exc}"
            raise OpenFailed(message, endpoint=self.endpoint, errno=exc.errno) from exc
        except CaptureError as exc:
            raise OpenFailed(str(exc), endpoint=self.endpoint, errno=errno.EINVAL) from exc
        self._chunks, self._next = capture.received, 0

    async def read(self) -> bytes:
        chunks = self._chunks
        if chunks is None:
            raise NotConnected("not open", endpoint=self.endpoint)
        if self._next >= len(chunks):
            if self.settings.ends:
                message = "the capture is played to its end: every chunk is read"
                raise CaptureEnded(message, endpoint=self.endpoint)
            await asyncio.Event().wait()  # a shoe left plugged in: nothing more, ever
        chunk = chunks[self._next]
        loop = asyncio.get_running_loop()
        if self._next == 0:
            self._started = loop.time()
        if self.settings.speed == 0:
            await asyncio.sleep(0)  # as fast as the reader takes them, the loop still turning
        elif self._next > 0:
            due = self._started + (chunk.t - chunks[0].t) / self.settings.speed
            await asyncio.sleep(max(0.0, due - loop.time()))
        self._next += 1
        return chunk.data

    def may_hold_more(self) -> bool:
        """Every read after the first sleeps (for no time at all, at speed 0): the next read
        gives the loop its turn."""
        return False

    async def write(self, data: bytes) -> None:  # noqa: ARG002 - a capture answers nothing
        if self._chunks is None:
            raise NotConnected("not open", endpoint=self.endpoint)

    async def close(self) -> None:
        self._chunks = None
