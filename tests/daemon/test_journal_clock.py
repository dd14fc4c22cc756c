"""The journal's time: the wall clock, never behind what the journal holds; steps found.

The clocks are scripted: a wall clock and a monotonic one that a test moves apart. The
oracle for the property is the definition itself, computed here from the script: a step is
a move of (wall minus monotonic) between two readings beyond the bounds, and the time journaled
is the highest wall time journaled so far (or the journal's latest, at start).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from hypothesis import assume, given
from hypothesis import strategies as st

from daemon.journal.clock import (
    STEP_BACK,
    STEP_FORWARD,
    ClockStep,
    JournalClock,
    describe_seconds,
    parse_at,
)
from daemon.wire.envelope import utc_timestamp

START = datetime(2026, 11, 29, 14, 0, tzinfo=UTC)


@dataclass
class Clocks:
    """A wall clock and a monotonic one, moved by the test; the steps reported."""

    wall: datetime = START
    monotonic: float = 1000.0
    steps: list[ClockStep] = field(default_factory=list)

    def tick(self, seconds: float) -> None:
        """Time passes: both clocks move alike."""
        self.wall += timedelta(seconds=seconds)
        self.monotonic += seconds

    def step(self, seconds: float) -> None:
        """The wall clock alone is set."""
        self.wall += timedelta(seconds=seconds)

    def clock(self) -> JournalClock:
        return JournalClock(lambda: self.wall, lambda: self.monotonic, on_step=self.steps.append)


def test_a_steady_clock_is_the_wall_clock_and_steps_nothing() -> None:
    clocks = Clocks()
    clock = clocks.clock()
    clock.begin([])
    for _ in range(10):
        clocks.tick(0.5)
        assert clock.now() == clocks.wall
    assert clocks.steps == []


def test_a_step_back_is_reported_and_the_time_held_until_the_clock_catches_up() -> None:
    clocks = Clocks()
    clock = clocks.clock()
    clock.begin([])
    clocks.tick(1)
    held = clock.now()
    clocks.step(-3600)
    clocks.tick(1)
    assert clock.now() == held  # not an hour back
    [step] = clocks.steps
    assert (step.direction, step.seconds, step.journal, step.found_at_start) == (
        "back", -3600.0, held, False,
    )  # fmt: skip
    assert "set back 1 h 0 min" in step.message()
    assert clock.behind() == timedelta(seconds=3599)
    clocks.tick(3600)  # caught up: the wall clock again
    assert clock.now() == clocks.wall > held
    assert len(clocks.steps) == 1


def test_a_jump_forward_is_reported_beyond_its_bound_only() -> None:
    clocks = Clocks()
    clock = clocks.clock()
    clock.begin([])
    clocks.step(STEP_FORWARD - 1)  # NTP's correction at boot: a gap in the times, no more
    clock.check()
    assert clocks.steps == []
    clocks.step(2 * 86400)
    assert clock.now() == clocks.wall
    [step] = clocks.steps
    assert (step.direction, step.seconds) == ("forward", 2 * 86400.0)
    assert "jumped forward 2 days 0 h 0 min" in step.message()


def test_a_clock_behind_the_journal_at_start_is_a_step_back_found_at_start() -> None:
    clocks = Clocks()
    journaled = START + timedelta(days=1, minutes=5)
    clock = clocks.clock()
    clock.begin(["t1", utc_timestamp(journaled), utc_timestamp(START)])  # "t1": not a time
    [step] = clocks.steps
    assert step.found_at_start
    assert step.seconds == -(86400 + 300)
    assert "behind the journal" in step.message()
    assert clock.now() == journaled


def test_slewing_is_no_step() -> None:
    """NTP's gentle correction moves the clocks apart by half a millisecond a second at most;
    the daemon looks once a second."""
    clocks = Clocks()
    clock = clocks.clock()
    clock.begin([])
    for _ in range(10_000):
        clocks.tick(1)
        clocks.step(-0.0005)
        clock.check()
    assert clocks.steps == []


def test_how_far_reads_as_a_person_says_it() -> None:
    assert describe_seconds(-1.25) == "1.2 s"
    assert describe_seconds(65) == "1 min 5 s"
    assert describe_seconds(2 * 86400 + 3 * 3600 + 4 * 60 + 5) == "2 days 3 h 4 min"


@given(
    moves=st.lists(
        st.tuples(
            st.floats(0, 120, allow_nan=False),  # seconds passing
            st.floats(-3 * 86400, 3 * 86400, allow_nan=False),  # the wall clock set by
            st.booleans(),  # journal an event (now) or only look (check)
        ),
        max_size=40,
    ),
    behind=st.floats(0, 86400, allow_nan=False),
)
def test_the_journals_time_never_runs_back_and_every_step_is_told(
    moves: list[tuple[float, float, bool]], behind: float
) -> None:
    clocks = Clocks()
    clock = clocks.clock()
    journaled = parse_at(utc_timestamp(START + timedelta(seconds=behind)))  # as journaled
    assert journaled is not None
    clock.begin([utc_timestamp(journaled)])
    expected_steps = 1 if journaled - START > timedelta(seconds=STEP_BACK) else 0
    highest = max(journaled, START)
    stamps = [utc_timestamp(highest)]
    for passing, setting, journal in moves:
        # The clocks keep microseconds: a setting a hair from a bound is neither side of it.
        assume(abs(setting + STEP_BACK) > 1e-3 and abs(setting - STEP_FORWARD) > 1e-3)
        clocks.tick(passing)
        clocks.step(setting)
        if setting < -STEP_BACK or setting > STEP_FORWARD:
            expected_steps += 1
        if journal:
            highest = max(highest, clocks.wall)  # the latest time journaled
            now = clock.now()
            assert now == highest
            stamps.append(utc_timestamp(now))
        else:
            clock.check()
    assert stamps == sorted(stamps)  # `ts` never runs back
    assert len(clocks.steps) == expected_steps
