"""What every shoe codec shares: the decoder interface, its counters, and how frames are dropped.

Codecs are sans-I/O in the h11 sense: bytes in, events out, no sockets, clocks or tasks.
A transport calls `feed` with whatever the line delivered, in chunks of any size, and gets
back the events completed by those bytes. The result never depends on how the bytes were
split, and a decoder never raises on bad input: it counts, logs at DEBUG and resynchronises.

Every codec module has the same shape (docs/protocol.md): `DeviceFrameDecoder` reads what
the shoe sends (the host runs it), `HostFrameDecoder` reads what the host sends (the shoe,
or our emulator, runs it), `encode_device_frame` and `encode_host_frame` write them,
`SEQUENCE` says how the device numbers its frames, and `HostLink` what a host sends of its
own accord: its greeting when it opens the line, its acknowledgements. Inside a decoder, a
check that fails raises `Rejected`; the decoder's feed loop catches it, counts it and
resynchronises.

A decoder hands up every intact frame, numbered as the frame says, a repeat too, whatever
the protocol: whether a frame repeats one before it, conflicts with it or follows a loss is
for the receiver to judge (`drivers.receiver`), by the frame's number and content, since it
alone knows what it has made durable.
"""

from __future__ import annotations

import enum
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from drivers.logs import WireBytes, get_logger

if TYPE_CHECKING:
    from drivers.codecs.sequence import SequencePolicy
    from drivers.events import Event


@dataclass(slots=True)
class DecoderCounters:
    """Running totals since the decoder was created; `Decoder.counters` hands out copies."""

    frames_ok: int = 0  # intact frames handed up, repeats included (the receiver judges them)
    bad_checksum: int = 0  # complete frames whose CRC or BCC did not match
    malformed: int = 0  # frames with a good check value but an impossible layout, or no end
    unknown_message: int = 0  # well-formed frames of a version, direction or type not known
    garbage_bytes: int = 0  # bytes skipped outside any frame while hunting for a start


class Drop(enum.Enum):
    """Why a frame was thrown away; each reason has its own counter."""

    BAD_CHECKSUM = "bad checksum"
    MALFORMED = "malformed frame"
    UNKNOWN_MESSAGE = "unknown message"


class Rejected(Exception):
    """Raised inside a decoder to throw away the frame it is judging; never leaves `feed`."""

    def __init__(self, reason: Drop, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def malformed(detail: str) -> Rejected:
    return Rejected(Drop.MALFORMED, detail)


class HostLink:
    """What a host sends a shoe of its own accord, for one driver: nothing, here.

    The base is a host that only listens (the ENQ family, and any plugin that says nothing
    else). A protocol whose device waits for acknowledgements subclasses it.
    """

    #: Whether the host greets the device when it opens the line, and waits for its answer.
    greets: ClassVar[bool] = False

    def greeting(self) -> bytes:
        """Sent every time the host opens the line, so the device learns a host is there."""
        return b""

    def answers_greeting(self, event: Event) -> bool:  # noqa: ARG002 - no greeting, nothing to wait for
        """Whether `event` is the device's answer to the greeting; until it comes, the host
        takes nothing else from the line (it has no greeting: everything is an answer)."""
        return True

    def acknowledgement(self, seq: int) -> bytes:  # noqa: ARG002 - a listener acknowledges nothing
        """The frame that acknowledges the device's frame `seq`; empty: nothing to send."""
        return b""

    def awaits_reply(self, frame: bytes) -> bool:  # noqa: ARG002 - a listener asks nothing
        """Whether the device answers `frame`, which the host sent, with a reply
        (`CommandAccepted` or `CommandRejected`): a reply no frame asked for is the line's
        noise, counted and dropped by the driver, never handed up."""
        return False


class Decoder(ABC):
    """Base of every codec's decoder; subclasses implement `feed`."""

    #: The codec's short name; its logger is `drivers.codecs.<name>`.
    codec_name: ClassVar[str]
    #: How the frames this decoder reads are numbered; None when they carry no number it
    #: checks (and for a plugin that does not say: then no one judges a jump in its numbers).
    sequence: ClassVar[SequencePolicy | None] = None
    #: What the host side sends the device (a fresh one per driver): a device decoder's
    #: protocol says; a plugin that does not only listens.
    host_link: ClassVar[type[HostLink]] = HostLink

    def __init__(self) -> None:
        self._counters = DecoderCounters()
        self._log = get_logger(self._logger_name)
        # Where the structlog lines end up, asked first: a noisy line then costs no DEBUG
        # line per dropped byte when nobody listens at DEBUG.
        self._stdlib_log = logging.getLogger(self._logger_name)

    @abstractmethod
    def feed(self, data: bytes) -> list[Event]:
        """Take the next bytes from the line; return the events they complete, in order."""

    @property
    def counters(self) -> DecoderCounters:
        # Field by field: `dataclasses.replace` looks the fields up at every call, and the
        # driver reads the counters at every chunk a shoe's line delivers.
        c = self._counters
        return DecoderCounters(
            c.frames_ok, c.bad_checksum, c.malformed, c.unknown_message, c.garbage_bytes
        )

    def log_context(self, **fields: object) -> None:
        """Fields that every later line of this decoder carries (a driver's table, endpoint)."""
        self._log = get_logger(self._logger_name, **fields)

    @property
    def _logger_name(self) -> str:
        return f"drivers.codecs.{self.codec_name}"

    def _drop(self, reason: Drop, detail: str, frame: bytes) -> None:
        counters = self._counters
        match reason:
            case Drop.BAD_CHECKSUM:
                counters.bad_checksum += 1
            case Drop.MALFORMED:
                counters.malformed += 1
            case Drop.UNKNOWN_MESSAGE:
                counters.unknown_message += 1
        if self._stdlib_log.isEnabledFor(logging.DEBUG):
            self._log.debug(
                "codec.frame_dropped",
                reason=reason.value,
                detail=detail,
                frame=WireBytes(frame),
            )

    def _skip_garbage(self, garbage: bytes) -> None:
        self._counters.garbage_bytes += len(garbage)
        if self._stdlib_log.isEnabledFor(logging.DEBUG):
            self._log.debug("codec.garbage_skipped", count=len(garbage), garbage=WireBytes(garbage))
