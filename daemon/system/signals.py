"""Signals that reach the daemon however busy its event loop is.

asyncio's own `loop.add_signal_handler` learns of a signal from one byte that the C-level
handler writes into the loop's self-pipe (`signal.set_wakeup_fd`). The same pipe carries a
byte for every `call_soon_threadsafe`, and the journal's thread makes one per write it
completes. While the loop is held up (the issue's 10,000 tables, every link event walking
every table), those bytes fill the pipe's buffer, the signal's byte cannot be written
(Python prints "Exception ignored when trying to write to the signal wakeup fd:
BlockingIOError"), and asyncio never hears of the signal: the issue's lost SIGTERMs,
reproduced in tests/daemon/test_signals.py.

Here the signal has a Python-level handler instead. Python runs it in the main thread at the
next bytecode, or as soon as a blocking system call (the loop's `epoll_wait`) returns with
EINTR; it puts the daemon's callback on the loop's ready queue with `call_soon_threadsafe`,
which needs no pipe byte to be run (the byte only wakes an idle loop, and a full pipe means
the loop is awake). So a SIGTERM is honoured at the loop's next turn, whatever fills the
pipe, and from the moment the daemon starts, not only once its tasks are running.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from types import FrameType


@contextlib.contextmanager
def handling(handlers: Mapping[signal.Signals, Callable[[], None]]) -> Iterator[None]:
    """Within the block, each signal runs its handler on this event loop, once per delivery;
    the previous handlers come back when it ends."""
    loop = asyncio.get_running_loop()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(handlers[signal.Signals(signum)])

    previous = {signum: signal.signal(signum, on_signal) for signum in handlers}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
