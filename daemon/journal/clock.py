"""The journal's time: the wall clock, never behind what the journal holds, watched for steps.

Nothing in the journal is ordered by time: a table's events are ordered by their numbers,
the archive cuts them by number, and a replay applies them by number. The time an event is
journaled at (`at`, the `ts` of every message it causes) is for people: when it happened.
Two things make the PC's wall clock a poor witness of that, and this module deals with both:

- **It can step.** NTP, a person with `date -s`, a virtual machine resumed: the wall clock
  jumps while the monotonic clock (`CLOCK_BOOTTIME`: it counts a suspend too) goes on at
  its pace. `JournalClock` compares the two at every reading (and once a second, by the
  daemon's `clock` task): when their difference moves back by more than `STEP_BACK`, or
  forward by more than `STEP_FORWARD`, it reports a `ClockStep` (how far, which way).
  Slewing (NTP's gentle correction) moves both clocks alike and is no step.
- **It can be behind the journal.** After a step back, or at a start after the clock was
  set back while the daemon was down, the wall clock reads earlier than events already
  journaled. The journal's time is then held at the latest time it holds: every `at` is
  `max(wall clock, the latest at journaled)`, so `ts` never runs backwards at a table (nor
  across tables), and goes on with the wall clock once it has caught up. A step back found
  at start is reported as a step too (`found_at_start`).

Why back by more than a second and forward only by more than a minute: a step back is what
would break the order people read in the times (`ts` running backwards, a day's rounds
dated into an earlier day), so any real one is told; a step forward only leaves a gap in
the times, which matters once it is large (a day archived early), while clocks corrected
by a few seconds at boot are common and harmless. One second is far above the error of
reading two clocks one after the other, even on a loaded machine.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final, NoReturn

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

STEP_BACK: Final = 1.0  # seconds the wall clock may fall behind the monotonic one unreported
STEP_FORWARD: Final = 60.0  # ... and run ahead of it
WATCH_EVERY: Final = 1.0  # seconds between looks when nothing is journaled


def _boottime() -> float:
    """Seconds since boot, suspend included: the clock a wall clock is held against."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def _wall() -> datetime:
    return datetime.now(UTC)


def parse_at(at: str) -> datetime | None:
    """A journaled time (`2026-11-29T14:00:00.123Z`) as a datetime; None if it is not one
    (a journal's own test times, say)."""
    try:
        moment = datetime.fromisoformat(at)  # 3.11 reads the "Z"
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def describe_seconds(seconds: float) -> str:
    """`2 days 3 h 4 min`, `5 min 6 s`, `1.5 s`: how far, for a person."""
    left = abs(seconds)
    if left < 60:
        return f"{left:.1f} s"
    days, left = divmod(round(left), 86400)
    hours, left = divmod(left, 3600)
    minutes, secs = divmod(left, 60)
    parts = [f"{days} day{'s' if days != 1 else ''}"] if days else []
    if hours or days:
        parts.append(f"{hours} h")
    parts.append(f"{minutes} min")
    if not days:
        parts.append(f"{secs} s")
    return " ".join(parts)


@dataclass(frozen=True, slots=True)
class ClockStep:
    """The wall clock stepped `seconds` (negative: back) against the monotonic clock, or
    (`found_at_start`) was behind the journal's latest time by `-seconds` at start."""

    seconds: float
    wall: datetime  # what the wall clock read just after
    journal: datetime  # the journal's time then: what `at` (and `ts`) carry
    found_at_start: bool = False

    @property
    def direction(self) -> str:
        return "back" if self.seconds < 0 else "forward"

    def message(self) -> str:
        """What the pit reads (the `clock_stepped` notice)."""
        how_far = describe_seconds(self.seconds)
        if self.seconds >= 0:
            return (
                f"the PC's clock jumped forward {how_far}: check its time source (NTP); "
                "times journaled before the jump may have been behind"
            )
        held = f"{self.journal.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
        what = (
            f"the PC's clock is {how_far} behind the journal"
            if self.found_at_start
            else f"the PC's clock was set back {how_far}"
        )
        return (
            f"{what}: message times stay at {held} until the clock reaches it "
            "(the order of events is kept); check its time source (NTP)"
        )


class JournalClock:
    """The time events are journaled at: `now()` (module docstring).

    `wall` and `monotonic` are the clocks read (the system's by default; a benchmark's
    simulated days pass both). `on_step` hears of every step, as it is found.
    """

    def __init__(
        self,
        wall: Callable[[], datetime] | None = None,
        monotonic: Callable[[], float] | None = None,
        *,
        on_step: Callable[[ClockStep], None] | None = None,
    ) -> None:
        self._wall = wall or _wall
        self._monotonic = monotonic or _boottime
        self.on_step = on_step or (lambda _step: None)
        self._offset: float | None = None  # wall minus monotonic, at the last look
        self._floor: datetime | None = None  # the latest time journaled (or found at start)

    def begin(self, journaled: Iterable[str]) -> None:
        """Start from the journal's latest time (the latest of each table's last `at`): the
        wall clock behind it is a step back, found at start."""
        times = [t for t in (parse_at(at) for at in journaled) if t is not None]
        floor = max(times, default=None)
        wall = self._look()
        if floor is None:
            return
        if self._floor is None or floor > self._floor:
            self._floor = floor
        behind = (wall - floor).total_seconds()
        if behind < -STEP_BACK:
            self.on_step(ClockStep(behind, wall, floor, found_at_start=True))

    def now(self) -> datetime:
        """The time to journal an event at: the wall clock, or the journal's latest time
        while the wall clock is behind it."""
        wall = self._look()
        if self._floor is None or wall > self._floor:
            self._floor = wall
        return self._floor

    def check(self) -> None:
        """Look at the clocks (a step is reported even while nothing is journaled)."""
        self._look()

    async def watch(self) -> NoReturn:
        """The daemon's `clock` task: a look every WATCH_EVERY seconds."""
        while True:
            await asyncio.sleep(WATCH_EVERY)
            self.check()

    def _look(self) -> datetime:
        wall = self._wall()
        offset = wall.timestamp() - self._monotonic()
        previous, self._offset = self._offset, offset
        if previous is not None:
            moved = offset - previous
            if moved < -STEP_BACK or moved > STEP_FORWARD:
                journal = wall if self._floor is None else max(wall, self._floor)
                self.on_step(ClockStep(moved, wall, journal))
        return wall

    def behind(self) -> timedelta:
        """How far the wall clock is behind the journal's time now (zero if it is not)."""
        wall = self._wall()
        if self._floor is None or wall >= self._floor:
            return timedelta(0)
        return self._floor - wall
