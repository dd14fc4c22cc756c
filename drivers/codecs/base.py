"""What every shoe codec shares: the decoder interface, its counters and sequence tracking.

Codecs are sans-I/O in the h11 sense: bytes in, events out, no sockets, clocks or tasks.
A transport calls `feed` with whatever the line delivered, in chunks of any size, and gets
back the events completed by those bytes. The result never depends on how the bytes were
split, and a decoder never raises on bad input: it counts, logs at DEBUG and resynchronises.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from drivers.events import Event


@dataclass(slots=True)
class DecoderCounters:
    """Running totals since the decoder was created; `Decoder.counters` hands out copies."""

    frames_ok: int = 0  # frames accepted, duplicates excluded
    bad_checksum: int = 0  # complete frames whose CRC or BCC did not match
    malformed: int = 0  # frames with a good check value but an impossible layout, or no end
    unknown_message: int = 0  # well-formed frames of a version, direction or type not known
    garbage_bytes: int = 0  # bytes skipped outside any frame while hunting for a start
    duplicates: int = 0  # frames repeating the previous sequence number, dropped
    gaps: int = 0  # sequence discontinuities, each also reported as a SequenceGap event


class Drop(enum.Enum):
    """Why a frame was thrown away; each reason has its own counter."""

    BAD_CHECKSUM = "bad checksum"
    MALFORMED = "malformed frame"
    UNKNOWN_MESSAGE = "unknown message"


class Decoder(ABC):
    """Base of every codec's decoder; subclasses implement `feed`."""

    #: The codec's short name; its logger is `drivers.codecs.<name>`.
    codec_name: ClassVar[str]

    def __init__(self) -> None:
        self._counters = DecoderCounters()
        self._log = logging.getLogger(f"drivers.codecs.{self.codec_name}")

    @abstractmethod
    def feed(self, data: bytes) -> list[Event]:
        """Take the next bytes from the line; return the events they complete, in order."""

    @property
    def counters(self) -> DecoderCounters:
        return dataclasses.replace(self._counters)

    # The isEnabledFor guards keep a noisy line from costing a hex dump per dropped byte
    # when nobody is listening at DEBUG.

    def _drop(self, reason: Drop, frame: bytes, detail: str) -> None:
        counters = self._counters
        match reason:
            case Drop.BAD_CHECKSUM:
                counters.bad_checksum += 1
            case Drop.MALFORMED:
                counters.malformed += 1
            case Drop.UNKNOWN_MESSAGE:
                counters.unknown_message += 1
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug("dropped %s (%s): %s", reason.value, detail, frame.hex(" "))

    def _skip_garbage(self, garbage: bytes) -> None:
        self._counters.garbage_bytes += len(garbage)
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug("skipped %d garbage bytes: %s", len(garbage), garbage.hex(" "))

    def _duplicate(self, frame: bytes, seq: int) -> None:
        self._counters.duplicates += 1
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug("dropped duplicate of seq %d: %s", seq, frame.hex(" "))


class SequenceVerdict(enum.Enum):
    FIRST = "first"  # nothing to compare with yet
    NEXT = "next"
    DUPLICATE = "duplicate"
    GAP = "gap"


class SequenceTracker:
    """Follows a wrapping per-device sequence number.

    A frame that repeats the previous number is a retransmission of it (the device did not
    see our acknowledgement, or simply sends everything more than once). Any other jump,
    forwards or backwards, is a gap: frames were lost, or the device restarted its count.
    """

    def __init__(self, modulus: int) -> None:
        self._modulus = modulus
        self._last: int | None = None

    @property
    def last(self) -> int | None:
        """The most recent sequence number seen, duplicates included."""
        return self._last

    @property
    def expected(self) -> int | None:
        return None if self._last is None else (self._last + 1) % self._modulus

    def observe(self, seq: int) -> SequenceVerdict:
        """Classify `seq` and, unless it is a duplicate, remember it as the latest."""
        last, self._last = self._last, seq
        if last is None:
            return SequenceVerdict.FIRST
        if seq == last:
            return SequenceVerdict.DUPLICATE
        if seq == (last + 1) % self._modulus:
            return SequenceVerdict.NEXT
        return SequenceVerdict.GAP
