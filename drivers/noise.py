"""What a shoe's line carried that was no frame of the shoe's: counted, and told in a few words.

Noise on the line (a loose connector, a cable beside a motor, a device server that replays
garbage, a shoe that babbles) decodes to almost nothing: the codec skips the bytes outside any
frame and drops the frames that fail a check, counting each (`DecoderCounters`), and the
driver drops the replies to no command it sent (`LineCounts.unsolicited_replies`). What a
person needs is a word per burst, not one per byte. `NoiseWatch`, fed the line's running
totals after every chunk read and woken when it asks (`due_at`), says:

- `LineNoiseBegan` where an *episode* of noise begins (the first thing dropped after the line
  was quiet for `QUIET` seconds), in the stream's order: a frame may be lost from there;
- `LineQuiet` where it ends (`QUIET` seconds without a drop);
- `LineNoise`, the report: what the line carried since the last report, and for how long. It
  comes when an episode ends, but never sooner than `SPACING` seconds after the last report
  (episodes closer than that are reported together), and after `SPACING` seconds of noise at
  the latest (then `lasting`: the noise goes on). So a line that is noisy for hours, or
  crackles every second, costs at most one report a minute, whatever it carries.

Sans-I/O like the codecs: counts and times in, events out; the driver keeps the clock.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias

if TYPE_CHECKING:
    from drivers.codecs.base import DecoderCounters

QUIET: Final = 1.0  # seconds without a dropped byte or frame that end an episode
SPACING: Final = 60.0  # seconds: at most one report this often, and at least while noise lasts


@dataclass(frozen=True, slots=True)
class LineCounts:
    """What a driver's line carried since the driver was made (or over an episode: the
    difference of two). Frames handed up are not here: the codec counts those."""

    bytes_read: int = 0  # every byte the line delivered
    garbage_bytes: int = 0  # skipped outside any frame while hunting for a start
    bad_checksum: int = 0  # complete frames whose check value did not match
    malformed: int = 0  # frames with an impossible layout, or no end
    unknown_message: int = 0  # well-formed frames of a kind no shoe of this protocol sends
    unsolicited_replies: int = 0  # acknowledgements of a command the host never sent

    @classmethod
    def of(cls, decoder: DecoderCounters, bytes_read: int, unsolicited: int) -> LineCounts:
        return cls(
            bytes_read=bytes_read,
            garbage_bytes=decoder.garbage_bytes,
            bad_checksum=decoder.bad_checksum,
            malformed=decoder.malformed,
            unknown_message=decoder.unknown_message,
            unsolicited_replies=unsolicited,
        )

    @property
    def frames_dropped(self) -> int:
        """Frames thrown away: a bad check value, a bad layout, an unknown kind, no command."""
        return self.bad_checksum + self.malformed + self.unknown_message + self.unsolicited_replies

    @property
    def noisy(self) -> bool:
        """Whether anything was dropped."""
        return self.garbage_bytes > 0 or self.frames_dropped > 0

    def dropped_more_than(self, earlier: LineCounts) -> bool:
        """Whether anything was dropped after `earlier` (both running totals of one line):
        `since(earlier).noisy`, without a `LineCounts` made and its fields looked up, as a
        driver asks at every chunk its line delivers."""
        return (
            self.garbage_bytes > earlier.garbage_bytes
            or self.bad_checksum > earlier.bad_checksum
            or self.malformed > earlier.malformed
            or self.unknown_message > earlier.unknown_message
            or self.unsolicited_replies > earlier.unsolicited_replies
        )

    def since(self, earlier: LineCounts) -> LineCounts:
        """What was counted after `earlier` (both running totals of one line)."""
        return LineCounts(
            *(
                getattr(self, f.name) - getattr(earlier, f.name)
                for f in dataclasses.fields(LineCounts)
            )
        )


@dataclass(frozen=True, slots=True)
class LineNoiseBegan:
    """The line began to carry what is no frame: something a frame carried may be lost from
    here (a shoe that keeps nothing never sends it again). Handed up in the stream's order,
    before the events decoded from the same bytes."""

    endpoint: str


@dataclass(frozen=True, slots=True)
class LineQuiet:
    """The episode of noise is over: the line dropped nothing for `QUIET` seconds."""

    endpoint: str


@dataclass(frozen=True, slots=True)
class LineNoise:
    """The report of the noise since the last one: how long it lasted and what the line
    carried meanwhile (`LineCounts`' fields). `lasting`: the noise goes on."""

    endpoint: str
    seconds: float
    bytes_read: int
    garbage_bytes: int
    bad_checksum: int
    malformed: int
    unknown_message: int
    unsolicited_replies: int
    lasting: bool = False

    @property
    def frames_dropped(self) -> int:
        return self.bad_checksum + self.malformed + self.unknown_message + self.unsolicited_replies

    def describe(self) -> str:
        """The noise in words, for the pit."""
        dropped = (
            f"{self.frames_dropped:,} frames dropped (bad checksum {self.bad_checksum:,}, "
            f"malformed {self.malformed:,}, unknown {self.unknown_message:,}, replies to no "
            f"command {self.unsolicited_replies:,})"
        )
        return (
            f"noise on the shoe's line for {self.seconds:.1f} s"
            f"{' (and still going)' if self.lasting else ''}: {self.bytes_read:,} bytes read, "
            f"{self.garbage_bytes:,} skipped as garbage, {dropped}; none of it was journaled: "
            "check the shoe's cable, its connectors and what runs beside it"
        )


LineEvent: TypeAlias = LineNoiseBegan | LineQuiet | LineNoise


class NoiseWatch:
    """One line's noise: fed its running totals, says when an episode begins and ends, and
    when to report what it carried."""

    def __init__(self, *, quiet: float = QUIET, spacing: float = SPACING) -> None:
        self.quiet = quiet
        self.spacing = spacing
        self._last = LineCounts()  # the totals at the last look
        self._noisy = False  # an episode is open
        self._dropped: tuple[float, LineCounts] = (0.0, LineCounts())  # the last drop
        self._unreported: tuple[float, LineCounts] | None = (
            None  # its first drop, the totals before
        )
        self._reported_at: float | None = None

    def observe(self, totals: LineCounts, now: float) -> bool:
        """The line's totals after a chunk; True when this chunk began an episode."""
        before, self._last = self._last, totals
        if not totals.dropped_more_than(before):
            return False
        self._dropped = (now, totals)
        if self._unreported is None:
            self._unreported = (now, before)
        began, self._noisy = not self._noisy, True
        return began

    def due_at(self) -> float | None:
        """When to look again, if nothing is read meanwhile (`take`); None: no need."""
        times = [self._quiet_at(), self._report_at()]
        return min((t for t in times if t is not None), default=None)

    def take(self, endpoint: str, now: float, *, closing: bool = False) -> list[LineEvent]:
        """What is due now: the report, then the episode's end (both now if `closing`: the
        line is gone)."""
        quiet_at = self._quiet_at()
        ended = quiet_at is not None and (closing or now >= quiet_at)
        if ended:
            self._noisy = False
        events: list[LineEvent] = []
        report_at = self._report_at()
        if report_at is not None and (closing or now >= report_at):
            events.append(self._report(endpoint, now))
        if ended:
            events.append(LineQuiet(endpoint))
        return events

    def _quiet_at(self) -> float | None:
        return self._dropped[0] + self.quiet if self._noisy else None

    def _report_at(self) -> float | None:
        if self._unreported is None:
            return None
        if self._noisy:  # at the latest after a spacing of noise
            return self._unreported[0] + self.spacing
        earliest = -self.spacing if self._reported_at is None else self._reported_at
        return max(self._dropped[0] + self.quiet, earliest + self.spacing)

    def _report(self, endpoint: str, now: float) -> LineNoise:
        assert self._unreported is not None
        began, before = self._unreported
        dropped_at, at_drop = self._dropped
        lasting = self._noisy
        # What goes on is reported until now; what is over, until its last drop. What the
        # noise carries from here is the next report's (`observe` starts it).
        self._unreported, self._reported_at = None, now
        counts = at_drop.since(before)
        return LineNoise(
            endpoint,
            round((now if lasting else dropped_at) - began, 3),
            counts.bytes_read,
            counts.garbage_bytes,
            counts.bad_checksum,
            counts.malformed,
            counts.unknown_message,
            counts.unsolicited_replies,
            lasting=lasting,
        )
