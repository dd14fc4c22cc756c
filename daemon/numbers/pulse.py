"""The event loop's pulse, for work in a worker thread that must take only what the loop leaves.

A worker thread and the event loop share one interpreter lock. While both have work, CPython
hands the lock back and forth every switch interval: the loop gets half the interpreter, and
its tables wait for the other half. The shift's rebuild at start (daemon/numbers/rebuild.py) is
minutes of such work on a floor, and it ran beside the burst of the floor's first shuffles
(every seat weighed over 600 rounds): the tables' answers waited past a second. The tables
come first: the loop beats every `BEAT` seconds, and between its steps the worker `pause`s:
it lets the loop have the interpreter, and while the loop's last beat is late (it has work
queued) it sleeps until the loop beats again, `PATIENCE` at most a step, so the background
work still moves, slowly, when the loop is busy for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

BEAT: Final = 0.02  # seconds between the loop's beats
LATE: Final = 0.05  # a beat older than this: the loop has work queued
NAP: Final = 0.005  # how long a paused worker sleeps before it looks again
PATIENCE: Final = 0.2  # the longest a worker pauses at one step


class LoopPulse:
    def __init__(self, *, beat: float = BEAT, late: float = LATE) -> None:
        self.beat_every = beat
        self.late_after = late
        self.last = time.monotonic()
        self.paused = 0.0  # seconds the workers slept for the loop, for the logs

    async def beat(self) -> None:
        """Runs until cancelled: the loop's beat."""
        while True:
            self.last = time.monotonic()
            await asyncio.sleep(self.beat_every)

    def late(self) -> bool:
        return time.monotonic() - self.last > self.late_after

    def pause(self, patience: float = PATIENCE) -> None:
        """In a worker thread, between steps: the interpreter to the loop, and back once the
        loop is not behind (or after `patience` seconds)."""
        time.sleep(0)  # the loop's turn, if it waits for the interpreter
        if not self.late():
            return
        began = time.monotonic()
        while self.late() and time.monotonic() - began < patience:
            time.sleep(NAP)
        self.paused += time.monotonic() - began


@contextlib.asynccontextmanager
async def loop_pulse(name: str) -> AsyncIterator[LoopPulse]:
    """A pulse beating for as long as the block runs."""
    pulse = LoopPulse()
    async with asyncio.TaskGroup() as group:
        task = group.create_task(pulse.beat(), name=f"{name}.pulse")
        try:
            yield pulse
        finally:
            task.cancel()
