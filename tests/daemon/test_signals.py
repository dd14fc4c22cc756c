"""A SIGTERM reaches the daemon however busy its loop, and the status line costs one
description a second however many events (SIGTERMs were lost at 10,000 tables)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import pytest

from daemon.system import signals
from daemon.system.notify import Notifier
from daemon.system.status_line import StatusLine

# Enough `call_soon_threadsafe` calls from another thread to fill the loop's self-pipe many
# times over while the loop is held up (each one-byte write costs a whole socket buffer
# entry; a few hundred fill it).
PIPE_FILLERS = 5_000


def _fill_the_wakeup_pipe(loop: asyncio.AbstractEventLoop) -> None:
    def fill() -> None:
        for _ in range(PIPE_FILLERS):
            loop.call_soon_threadsafe(lambda: None)

    filler = threading.Thread(target=fill, name="pipe-filler")
    filler.start()
    filler.join()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_asyncio_loses_a_signal_whose_wakeup_byte_finds_the_pipe_full() -> None:
    """The cause, shown: asyncio learns of a signal only from its byte in the self-pipe."""
    loop = asyncio.get_running_loop()
    heard: list[str] = []
    loop.add_signal_handler(signal.SIGUSR1, lambda: heard.append("SIGUSR1"))
    try:
        _fill_the_wakeup_pipe(loop)  # the loop is held up meanwhile, as by a long callback
        os.kill(os.getpid(), signal.SIGUSR1)
        await asyncio.sleep(0.2)
    finally:
        loop.remove_signal_handler(signal.SIGUSR1)
    assert heard == []  # "Exception ignored when trying to write to the signal wakeup fd"


async def test_a_signal_is_heard_however_full_the_pipe() -> None:
    loop = asyncio.get_running_loop()
    heard = asyncio.Event()
    with signals.handling({signal.SIGUSR1: heard.set}):
        _fill_the_wakeup_pipe(loop)
        time.sleep(0.05)  # noqa: ASYNC251 - the loop held up, as by a long callback, is the case
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.05)  # noqa: ASYNC251 - still held up when the signal comes
        await asyncio.wait_for(heard.wait(), 1)
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL  # given back


async def test_a_signal_is_heard_by_an_idle_loop() -> None:
    heard = asyncio.Event()
    with signals.handling({signal.SIGUSR1: heard.set}):
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, os.kill, os.getpid(), signal.SIGUSR1)
        await asyncio.wait_for(heard.wait(), 1)


class _Sent(Notifier):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def status(self, text: str) -> None:
        self.lines.append(text)


async def test_a_storm_of_changes_costs_one_status_line_per_period() -> None:
    notifier = _Sent()
    described = 0

    def describe() -> str:
        nonlocal described
        described += 1
        return f"line {described}"

    line = StatusLine(notifier, describe, period=0.1)
    task = asyncio.create_task(line.run(), name="status")
    try:
        for _ in range(50):  # 5,000 link events in half a second
            for _ in range(100):
                line.changed()
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.15)  # the last change is sent too
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert 4 <= described <= 8
    assert notifier.lines == [f"line {n}" for n in range(1, described + 1)]
