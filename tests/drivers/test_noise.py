"""Noise on a shoe's line: told once per episode, never event by event (drivers.noise), and the
replies to no command counted, not handed up (drivers.session, through drivers.driver).

The watch is sans-I/O: fed running totals and times, its reports are checked against an
oracle written here from the rule in words (an episode ends after `QUIET` seconds of quiet,
is reported at most once per `SPACING`, and while it lasts, at least once per `SPACING`).
The driver is run over a real pty with an ENQ codec.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.codecs import enq
from drivers.driver import Connected, Disconnected, ShoeDriver
from drivers.events import CardDrawn, CommandAccepted, CommandRejected, VendorCommand
from drivers.noise import (
    QUIET,
    SPACING,
    LineCounts,
    LineEvent,
    LineNoise,
    LineNoiseBegan,
    LineQuiet,
    NoiseWatch,
)
from drivers.transports import SerialSettings, transport_factory
from tests.drivers.test_driver import card, driver_for, running
from tests.drivers.test_transports import Pty

ENDPOINT = "/dev/ttyUSB0"


def noisy(counts: LineCounts, garbage: int = 10) -> LineCounts:
    return dataclasses.replace(
        counts, bytes_read=counts.bytes_read + garbage, garbage_bytes=counts.garbage_bytes + garbage
    )


def clean(counts: LineCounts, read: int = 8) -> LineCounts:
    return dataclasses.replace(counts, bytes_read=counts.bytes_read + read)


# ---------------------------------------------------------------- the watch
def reports(events: list[LineEvent]) -> list[LineNoise]:
    return [event for event in events if isinstance(event, LineNoise)]


def test_a_quiet_line_has_no_episode() -> None:
    watch, totals = NoiseWatch(), LineCounts()
    for second in range(100):
        totals = clean(totals)
        assert not watch.observe(totals, float(second))
        assert watch.take(ENDPOINT, float(second)) == []
    assert watch.due_at() is None


def test_a_burst_is_one_episode_reported_once_the_line_is_quiet() -> None:
    watch, totals = NoiseWatch(), LineCounts()
    totals = noisy(totals)
    assert watch.observe(totals, 10.0)
    totals = noisy(totals)
    assert not watch.observe(totals, 10.5)  # the same episode
    totals = clean(totals)
    assert not watch.observe(totals, 11.0)  # a frame: quiet from 10.5
    assert watch.due_at() == 10.5 + QUIET
    assert watch.take(ENDPOINT, 11.4) == []
    assert watch.take(ENDPOINT, 11.5) == [
        LineNoise(ENDPOINT, 0.5, 20, 20, 0, 0, 0, 0),  # the frame's bytes are not in it
        LineQuiet(ENDPOINT),
    ]
    assert watch.take(ENDPOINT, 20.0) == []
    assert watch.due_at() is None


def test_noise_that_never_stops_is_reported_once_a_spacing_and_says_it_goes_on() -> None:
    watch, totals = NoiseWatch(), LineCounts()
    told: list[tuple[float, LineNoise]] = []
    for tenth in range(1500):  # 150 s of noise, a chunk every 0.1 s
        now = tenth / 10
        totals = noisy(totals)
        watch.observe(totals, now)
        told += [(now, report) for report in reports(watch.take(ENDPOINT, now))]
    assert [now for now, _ in told] == [SPACING, pytest.approx(2 * SPACING + 0.1)]
    assert all(report.lasting for _, report in told)
    last = watch.take(ENDPOINT, 150.0, closing=True)  # the link is lost: the rest, and the end
    assert [type(event) for event in last] == [LineNoise, LineQuiet]
    assert not reports(last)[0].lasting
    everything = [report for _, report in told] + reports(last)
    assert sum(r.garbage_bytes for r in everything) == totals.garbage_bytes


def test_a_line_that_crackles_costs_one_report_a_spacing_and_each_crackle_its_episode() -> None:
    watch, totals = NoiseWatch(), LineCounts()
    reported, began, ended = [], 0, 0
    for tick in range(6000):  # 600 s; a crackle every 1.5 s, each alone
        now = tick / 10
        if tick % 15 == 0:
            totals = noisy(totals)
            began += watch.observe(totals, now)
        events = watch.take(ENDPOINT, now)
        reported += [now for _ in reports(events)]
        ended += sum(isinstance(event, LineQuiet) for event in events)
    gaps = [b - a for a, b in itertools.pairwise(reported)]
    assert reported[0] == pytest.approx(QUIET)  # the first crackle is told at once
    assert all(gap >= SPACING for gap in gaps), gaps
    assert len(reported) <= 600 / SPACING + 1
    assert began == 400
    assert ended in {began, began - 1}  # the last may still be on


@given(
    st.lists(
        st.tuples(st.floats(0.01, 30.0), st.booleans(), st.integers(1, 5000)),
        max_size=200,
    )
)
def test_every_dropped_byte_is_reported_once_and_reports_keep_their_spacing(
    chunks: list[tuple[float, bool, int]],
) -> None:
    """Whatever the line does, read as the driver reads it (at each chunk, and when the watch
    asked to be woken): what was dropped is in exactly one report; two reports are never
    closer than `SPACING` but for the one a lost link forces; episodes begin and end in
    turn."""
    watch, totals, now = NoiseWatch(), LineCounts(), 0.0
    told: list[tuple[float, LineNoise]] = []
    turns: list[str] = []

    def take(at: float, *, closing: bool = False) -> None:
        for event in watch.take(ENDPOINT, at, closing=closing):
            if isinstance(event, LineNoise):
                told.append((at, event))
            else:
                turns.append("quiet")

    for gap, is_noise, size in chunks:
        while (due := watch.due_at()) is not None and due <= now + gap:
            take(due)
        now += gap
        totals = noisy(totals, size) if is_noise else clean(totals, size)
        if watch.observe(totals, now):
            turns.append("began")
        take(now)
    take(now, closing=True)
    assert sum(r.garbage_bytes for _, r in told) == totals.garbage_bytes
    for (at, _), (later, _) in itertools.pairwise(told[:-1]):
        assert later - at >= SPACING - 1e-9
    assert all(r.seconds >= 0 for _, r in told)
    assert turns == ["began", "quiet"] * (len(turns) // 2)


_COUNTS = st.builds(LineCounts, *[st.integers(0, 3)] * len(dataclasses.fields(LineCounts)))


@given(_COUNTS, _COUNTS)
def test_dropped_more_than_is_whether_the_difference_is_noisy(
    earlier: LineCounts, added: LineCounts
) -> None:
    """The driver's question at every chunk, asked without the difference made: running
    totals only grow, so `later` is `earlier` plus what a chunk added."""
    later = LineCounts(
        *(getattr(earlier, f.name) + getattr(added, f.name) for f in dataclasses.fields(LineCounts))
    )
    assert later.dropped_more_than(earlier) == later.since(earlier).noisy
    assert later.dropped_more_than(earlier) == any(
        getattr(added, f.name) > 0 for f in dataclasses.fields(LineCounts) if f.name != "bytes_read"
    )


# ---------------------------------------------------------------- the driver
def enq_driver(pty: Pty) -> ShoeDriver:
    return driver_for(
        transport_factory(SerialSettings(pty.path, baudrate=4800)), enq.DeviceFrameDecoder()
    )


async def write_all(pty: Pty, data: bytes) -> None:
    """All of `data` to the driver, as fast as it reads (a pty holds a few kilobytes)."""
    view = memoryview(data)
    async with asyncio.timeout(5):
        while view:
            try:
                view = view[os.write(pty.master, view) :]
            except BlockingIOError:
                await asyncio.sleep(0.001)


async def test_replies_to_no_command_are_counted_and_never_handed_up() -> None:
    with Pty() as pty:
        driver = enq_driver(pty)
        async with running(driver) as shoe:
            await shoe.next(Connected)
            pty.write(b"\x06\x15\x13\x06" + enq.encode_device_frame(card("QC", 1)))
            assert (await shoe.next(CardDrawn)).code == "QC"
            assert driver.line.unsolicited_replies == 3
            # A command the host sent is answered: that one reply is handed up.
            await driver.send(enq.encode_host_frame(VendorCommand(enq.LOCK, enq.LOCK_ON)))
            pty.write(b"\x06\x15\x13")
            assert await shoe.next(CommandAccepted) == CommandAccepted()
            noise = await shoe.next(LineNoise)  # the replies to nothing were the line's noise
        assert not any(isinstance(e, CommandRejected) for e in shoe.events)
        assert driver.line.unsolicited_replies == noise.unsolicited_replies == 4


async def test_noise_is_told_where_it_began_and_once_it_is_over() -> None:
    with Pty() as pty:
        driver = enq_driver(pty)
        async with running(driver) as shoe:
            await shoe.next(Connected)
            await write_all(pty, os.urandom(20_000) + enq.encode_device_frame(card("KH", 2)))
            began = await shoe.next(LineNoiseBegan)
            assert (await shoe.next(CardDrawn)).code == "KH"
            over = await shoe.next(LineNoise)
            kinds = [type(e) for e in shoe.events]
        assert began == LineNoiseBegan(pty.path)
        assert kinds.index(LineNoiseBegan) < kinds.index(CardDrawn) < kinds.index(LineNoise)
        assert kinds[-2:] == [LineNoise, LineQuiet] or kinds[-1] == LineNoise
        assert over.bytes_read == driver.line.bytes_read >= 20_000
        assert over.garbage_bytes == driver.line.garbage_bytes > 0
        assert not over.lasting
        assert over.seconds < QUIET


async def test_the_noise_of_a_lost_link_is_told_before_its_loss() -> None:
    with Pty() as pty:
        driver = enq_driver(pty)
        async with running(driver) as shoe:
            await shoe.next(Connected)
            pty.write(b"\x00" * 100)
            await shoe.next(LineNoiseBegan)
            pty.hang_up()
            await shoe.next(Disconnected)
            kinds = [type(e) for e in shoe.events]
        lost = kinds.index(Disconnected)
        assert kinds[lost - 2 : lost + 1] == [LineNoise, LineQuiet, Disconnected]


async def test_a_line_that_delivers_without_pause_leaves_the_loop_to_others() -> None:
    """A read that finds bytes waiting does not yield: the driver does, once a chunk."""
    ticks = 0

    async def ticking() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    with Pty() as pty:
        driver = enq_driver(pty)
        async with running(driver) as shoe:
            await shoe.next(Connected)
            ticker = asyncio.create_task(ticking())
            await write_all(pty, os.urandom(200_000))
            await shoe.next(LineNoise)
            ticker.cancel()
            await asyncio.gather(ticker, return_exceptions=True)
    assert ticks > 10
