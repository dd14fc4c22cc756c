"""Captures: what a shoe said, byte for byte and when, kept in a file that plays back as a shoe.

The way an rtl_433 user sends in a recording of a device it misreads: `shoe2mqtt listen
--record FILE` writes one, the `capture` transport (`drivers.transports.capture`) and
`shoe2mqtt emulate --playback FILE` play one, so a site's capture of a shoe's odd behaviour
becomes a test the same day. The format is JSON Lines, for people as much as for programs
(docs/captures.md):

    {"format": "shoe2mqtt-capture", "version": 1, "protocol": "enq", "transport": {...},
     "endpoint": "/dev/ttyUSB0", "started": "2026-12-01T21:04:05.123Z", "recorder": "..."}
    {"t": 0.012417, "rx": "05 30 53 03 36 30"}        bytes the shoe sent, as one read took them
    {"t": 0.503001, "tx": "02 4f 50 4c 4b 30 32 03 31 42"}   bytes the host wrote
    {"t": 9.250000, "link": "lost", "detail": "..."}  the link opened or was lost

The first line says what the file is; every later line has `t`, seconds since the start, and
one of `rx`, `tx` or `link`. Bytes are hex, so any bytes at all, line noise included, make a
valid capture. A writer flushes every line as it goes: a capture survives Ctrl-C, SIGTERM, or
the recorder's crash, up to its last whole line.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from drivers.errors import DriverError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path
    from typing import TextIO

FORMAT: Final = "shoe2mqtt-capture"
VERSION: Final = 1
Direction: TypeAlias = Literal["rx", "tx"]
DIRECTIONS: Final[tuple[Direction, ...]] = ("rx", "tx")
_TIME_DIGITS: Final = 6  # microseconds: finer than any serial line's byte time


class CaptureError(DriverError):
    """A file that is not a capture this code reads: which file, which line, and why."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        where = source if line is None else f"{source}, line {line}"
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.message = message


@dataclass(frozen=True, slots=True)
class CaptureHeader:
    """The first line: what was recorded, through what, and when."""

    protocol: str  # the registry's name of the shoe's protocol: reference, enq, ...
    #: What the recorder read through: `kind` (serial, tcp, usb, capture) and its settings,
    #: the line settings of a serial port among them.
    transport: dict[str, Any] = field(default_factory=dict)
    endpoint: str | None = None  # "/dev/ttyUSB0", "10.0.0.5:4001"
    started: str | None = None  # UTC, ISO 8601: when `t` was 0
    recorder: str | None = None  # what wrote it: "shoe2mqtt 1.4.0 listen"

    def to_mapping(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "protocol": self.protocol,
            "transport": self.transport,
            "endpoint": self.endpoint,
            "started": self.started,
            "recorder": self.recorder,
        }


@dataclass(frozen=True, slots=True)
class Chunk:
    """Bytes one read returned (`rx`: from the shoe) or one write sent (`tx`: the host's)."""

    t: float  # seconds since the capture started
    direction: Direction
    data: bytes


@dataclass(frozen=True, slots=True)
class LinkNote:
    """The link opened or was lost, for the person reading the capture; playback skips it."""

    t: float
    link: str  # "opened", "lost"
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Capture:
    header: CaptureHeader
    chunks: tuple[Chunk, ...]
    notes: tuple[LinkNote, ...] = ()

    @property
    def received(self) -> tuple[Chunk, ...]:
        """What the shoe sent, in order: what a playback plays."""
        return tuple(chunk for chunk in self.chunks if chunk.direction == "rx" and chunk.data)

    @property
    def duration(self) -> float:
        """Seconds from the first byte the shoe sent to its last."""
        received = self.received
        return received[-1].t - received[0].t if received else 0.0


# ---------------------------------------------------------------- writing


class CaptureWriter:
    """Writes a capture line by line to an open text file, flushing each line."""

    def __init__(
        self,
        file: TextIO,
        header: CaptureHeader,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._file = file
        self._clock = clock
        self._started = clock()
        self._opened = False
        self._write(header.to_mapping())

    @property
    def opened(self) -> bool:
        """Whether the link opened while it recorded (else the capture holds nothing of it)."""
        return self._opened

    def received(self, data: bytes) -> None:
        """Bytes a read from the shoe returned."""
        self.chunk("rx", data)

    def sent(self, data: bytes) -> None:
        """Bytes the host wrote to the shoe."""
        self.chunk("tx", data)

    def chunk(self, direction: Direction, data: bytes, t: float | None = None) -> None:
        """One chunk, at `t` seconds (now, if not given)."""
        if data:
            self._write({"t": self._t(t), direction: data.hex(" ")})

    def link(self, state: str, detail: str | None = None, t: float | None = None) -> None:
        """The link opened or was lost."""
        self._opened |= state == "opened"
        line: dict[str, Any] = {"t": self._t(t), "link": state}
        if detail is not None:
            line["detail"] = detail
        self._write(line)

    def _t(self, t: float | None) -> float:
        return round(self._clock() - self._started if t is None else t, _TIME_DIGITS)

    def _write(self, line: dict[str, Any]) -> None:
        self._file.write(json.dumps(line, separators=(", ", ": ")) + "\n")
        self._file.flush()


# ---------------------------------------------------------------- reading


def read_capture(path: Path) -> Capture:
    """The capture in `path`; raises `CaptureError` saying which line is wrong, or
    `OSError` if the file cannot be read."""
    with path.open(encoding="utf-8", errors="strict") as file:
        try:
            return parse_capture(file, str(path))
        except UnicodeDecodeError as exc:
            raise CaptureError(str(path), None, f"not UTF-8 text ({exc.reason})") from None


def parse_capture(lines: Iterable[str], source: str = "capture") -> Capture:
    """A capture from its lines; raises `CaptureError` at the first wrong one."""
    header: CaptureHeader | None = None
    chunks: list[Chunk] = []
    notes: list[LinkNote] = []
    last_t = 0.0
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        line = _json_object(text, source, number)
        if header is None:
            header = _header(line, source, number)
            continue
        item = _item(line, source, number)
        if item.t < last_t:
            raise CaptureError(source, number, f"t goes back in time ({item.t} < {last_t})")
        last_t = item.t
        if isinstance(item, Chunk):
            chunks.append(item)
        else:
            notes.append(item)
    if header is None:
        raise CaptureError(source, None, "empty: not a capture")
    return Capture(header, tuple(chunks), tuple(notes))


def _json_object(text: str, source: str, number: int) -> dict[str, Any]:
    try:
        line = json.loads(text)
    except ValueError as exc:
        raise CaptureError(source, number, f"not JSON: {exc}") from None
    if not isinstance(line, dict):
        raise CaptureError(source, number, "not a JSON object")
    return line


def _header(line: dict[str, Any], source: str, number: int) -> CaptureHeader:
    if line.get("format") != FORMAT:
        raise CaptureError(
            source, number, f"not a capture: the first line's format is not {FORMAT!r}"
        )
    if line.get("version") != VERSION:
        raise CaptureError(
            source,
            number,
            f"capture version {line.get('version')!r}; this shoe2mqtt reads {VERSION}",
        )
    protocol, transport = line.get("protocol"), line.get("transport", {})
    if not isinstance(protocol, str) or not protocol:
        raise CaptureError(source, number, "protocol: must be the shoe protocol's name")
    if not isinstance(transport, dict):
        raise CaptureError(source, number, "transport: must be an object")
    texts = {key: line.get(key) for key in ("endpoint", "started", "recorder")}
    for key, value in texts.items():
        if value is not None and not isinstance(value, str):
            raise CaptureError(source, number, f"{key}: must be text")
    return CaptureHeader(protocol, transport, **texts)


def _item(line: dict[str, Any], source: str, number: int) -> Chunk | LinkNote:
    t = line.get("t")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        raise CaptureError(source, number, "t: must be seconds since the start, 0 or more")
    kinds = [key for key in (*DIRECTIONS, "link") if key in line]
    if len(kinds) != 1:
        raise CaptureError(source, number, "must hold exactly one of rx, tx or link")
    (kind,) = kinds
    value = line[kind]
    if kind == "link":
        detail = line.get("detail")
        if not isinstance(value, str) or not (detail is None or isinstance(detail, str)):
            raise CaptureError(source, number, "link: must be text")
        return LinkNote(float(t), value, detail)
    if not isinstance(value, str):
        raise CaptureError(source, number, f"{kind}: must be bytes in hex")
    try:
        data = bytes.fromhex(value)
    except ValueError:
        raise CaptureError(source, number, f"{kind}: not bytes in hex: {value[:40]!r}") from None
    return Chunk(float(t), kind, data)  # type: ignore[arg-type]  # kind is one of DIRECTIONS
