"""The loop's pulse: a worker thread's background work waits while the event loop is behind,
and only so long."""

from __future__ import annotations

import asyncio
import threading
import time

from daemon.numbers.pulse import LATE, loop_pulse


async def test_a_worker_pauses_until_a_blocked_loop_beats_again() -> None:
    """The loop is held 0.4 s (as a burst of weighing holds it): a worker that pauses in the
    middle returns only once the loop has beaten again, not at once."""
    async with loop_pulse("test") as pulse:
        await asyncio.sleep(0.05)
        started = threading.Event()
        returned: list[float] = []

        def worker() -> None:
            started.wait()
            time.sleep(LATE * 2)  # the loop is held: its last beat grows late
            pulse.pause(patience=5.0)
            returned.append(time.monotonic())

        job = asyncio.create_task(asyncio.to_thread(worker), name="test.worker")
        await asyncio.sleep(0.01)
        started.set()
        time.sleep(0.4)  # noqa: ASYNC251 - the loop held on purpose, as CPU work holds it
        released = time.monotonic()
        await job
    assert returned[0] >= released
    assert pulse.paused > 0.1


async def test_a_free_loop_costs_a_worker_nothing() -> None:
    async with loop_pulse("test") as pulse:
        await asyncio.sleep(0.05)

        def worker() -> float:
            began = time.monotonic()
            for _ in range(200):
                pulse.pause()
            return time.monotonic() - began

        spent = await asyncio.to_thread(worker)
    assert spent < 0.5  # 200 pauses: each gives the interpreter away once, and sleeps not
    assert pulse.paused == 0.0


async def test_a_worker_waits_no_longer_than_its_patience() -> None:
    """A loop busy for long still lets the background work move."""
    async with loop_pulse("test") as pulse:
        await asyncio.sleep(0.05)
        spent: list[float] = []

        def worker() -> None:
            time.sleep(LATE * 2)
            began = time.monotonic()
            pulse.pause(patience=0.1)
            spent.append(time.monotonic() - began)

        job = asyncio.create_task(asyncio.to_thread(worker), name="test.worker")
        await asyncio.sleep(0.01)
        time.sleep(0.6)  # noqa: ASYNC251 - the loop held on purpose
        await job
    assert 0.09 <= spent[0] < 0.4
