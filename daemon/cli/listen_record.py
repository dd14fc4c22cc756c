"""`shoe2mqtt listen --record FILE`: what the shoe says, byte for byte and when, kept as a
capture (docs/captures.md) while `listen` prints it; and `--raw`'s view of each chunk read."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.version import installed_version
from daemon.wire.envelope import utc_timestamp
from drivers.captures import CaptureHeader, CaptureWriter
from drivers.transports.base import Transport

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import TextIO

    from drivers.transports import TransportSettings


def new_capture_file(path: str | None) -> TextIO | None:
    """The file `--record` names, created: a capture is never written over another."""
    if path is None:
        return None
    # A small local file opened once, written a line per read like the terminal: not worth
    # a thread.
    return open(path, "x", encoding="utf-8")  # noqa: PTH123 - closed by `listen`


def drop_unopened_capture(path: str, err: TextIO) -> None:
    """A capture whose link never opened holds its header alone, and would hold the name the
    retry needs once the port is right (a capture is never written over): removed."""
    Path(path).unlink(missing_ok=True)  # a small local file, as it was opened: no thread
    err.write(f"shoe2mqtt listen: --record {path}: the link never opened; no capture kept\n")


def capture_writer(file: TextIO, protocol: str, settings: TransportSettings) -> CaptureWriter:
    """A capture of what `listen` reads through `settings`, written to `file` as it goes."""
    from drivers.transports import transport_factory

    header = CaptureHeader(
        protocol=protocol,
        transport=transport_record(settings),
        endpoint=transport_factory(settings)().endpoint,  # made, never opened
        started=utc_timestamp(),
        recorder=f"shoe2mqtt {installed_version()} listen",
    )
    return CaptureWriter(file, header)


def transport_record(settings: TransportSettings) -> dict[str, Any]:
    """The transport's kind and settings as a capture's header holds them."""
    from drivers.transports import CaptureSettings, SerialSettings, TcpSettings, UsbSettings

    kinds = {
        SerialSettings: "serial",
        TcpSettings: "tcp",
        UsbSettings: "usb",
        CaptureSettings: "capture",
    }
    return {"kind": kinds[type(settings)], **dataclasses.asdict(settings)}


class TappedTransport(Transport):
    """A transport that shows every chunk it reads before the codec sees it, and records
    what it reads and writes in a capture."""

    def __init__(
        self,
        inner: Transport,
        on_read: Callable[[bytes], Awaitable[None]],
        recorder: CaptureWriter | None = None,
    ) -> None:
        self._inner = inner
        self._on_read = on_read
        self._recorder = recorder
        self.endpoint = inner.endpoint

    async def open(self) -> None:
        await self._inner.open()

    async def read(self) -> bytes:
        data = await self._inner.read()
        if self._recorder is not None:
            self._recorder.received(data)
        await self._on_read(data)
        return data

    def may_hold_more(self) -> bool:
        return self._inner.may_hold_more()

    async def write(self, data: bytes) -> None:
        await self._inner.write(data)
        if self._recorder is not None:
            self._recorder.sent(data)

    async def close(self) -> None:
        await self._inner.close()
