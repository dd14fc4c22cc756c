"""What a thread's wake-up costs in CPU on this machine, against the same work done without one.

    uv run python -m bench.wake_cost [--wakes 200] [--commits 300] [--dir DIR]

Goal 3 counts the daemon's CPU a card, and a card wakes the daemon's two threads several
times (its bytes, the journal's thread, the commit's return, the broker's PUBACK), each after
the thread slept. Measured here, in one process, each line beside its baseline run at the
same time (docs/performance.md, "Goal 3: what a wake-up costs"):

- the event loop's CPU for one wake-up after sleeping 20 ms and 2 ms, against a turn of the
  loop that does not sleep (`asyncio.sleep(0)`);
- a round trip to another thread through two queues, every 20 ms, against back to back;
- a fixed piece of Python run right after a 20 ms sleep, against the same piece run hot;
- the journal's commit (the daemon's own `Journal`, `sync = "full"`), one every 20 ms,
  against commits back to back: the journal thread's CPU and the whole process's.

CPU is the thread's or the process's own clock (`CLOCK_THREAD_CPUTIME_ID`,
`CLOCK_PROCESS_CPUTIME_ID`, the journal thread's by `pthread_getcpuclockid`), so it holds
whatever the kernel and the hypervisor charge the thread for waking it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import queue
import tempfile
import threading
import time
from pathlib import Path

from daemon.journal.store import Journal
from daemon.wire.envelope import utc_timestamp

GAP = 0.02  # seconds asleep between wake-ups: a card of goal 3's 32 shoes comes every 25 ms
BODY = '{"type":"card_drawn","card":"QH","seq":1,"note":"' + "x" * 250 + '"}'


async def _asyncio_wake(count: int, seconds: float) -> float:
    """Process CPU (µs) for one `asyncio.sleep(seconds)`: the loop's wait and its wake."""
    started = time.process_time()
    for _ in range(count):
        await asyncio.sleep(seconds)
    return (time.process_time() - started) / count * 1e6


def _round_trip(count: int, gap: float) -> float:
    """Process CPU (µs) for one item to another thread and back, `gap` seconds apart."""
    there: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    back: queue.SimpleQueue[int] = queue.SimpleQueue()

    def echo() -> None:
        while (item := there.get()) is not None:
            back.put(item)

    thread = threading.Thread(target=echo, name="echo")
    thread.start()
    cpu = 0.0
    for number in range(count):
        if gap:
            time.sleep(gap)
        started = time.process_time()
        there.put(number)
        back.get()
        cpu += time.process_time() - started
    there.put(None)
    thread.join()
    return cpu / count * 1e6


def _work(count: int, gap: float) -> float:
    """Thread CPU (µs) for a fixed piece of Python, run `gap` seconds after a sleep (0: hot)."""
    cpu = 0.0
    for _ in range(count):
        if gap:
            time.sleep(gap)
        started = time.thread_time()
        sum(range(1000))
        cpu += time.thread_time() - started
    return cpu / count * 1e6


def _thread_cpu(ident: int) -> float:
    """Another thread's own CPU clock, in seconds, to the nanosecond."""
    return time.clock_gettime(time.pthread_getcpuclockid(ident))


async def _commits(count: int, gap: float, where: Path) -> tuple[float, float]:
    """The journal thread's CPU and the process's (µs) for one commit, `gap` seconds apart,
    the journal in a temporary directory in `where`."""
    with tempfile.TemporaryDirectory(dir=where) as directory:
        journal = Journal(Path(directory) / "journal.db", sync="full")
        await journal.open()
        await journal.append_event("bj-1", "shoe", BODY, utc_timestamp())
        thread = journal._thread  # noqa: SLF001 - the journal's own thread, to read its CPU
        assert thread is not None
        assert thread.ident is not None
        before, started = _thread_cpu(thread.ident), time.process_time()
        for number in range(count):
            if gap:
                await asyncio.sleep(gap)
            await journal.append_event(f"bj-{number % 32}", "shoe", BODY, utc_timestamp())
        journal_cpu = _thread_cpu(thread.ident) - before
        process_cpu = time.process_time() - started
        await journal.close()
    return journal_cpu / count * 1e6, process_cpu / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wakes", type=int, default=200, help="wake-ups of each kind")
    parser.add_argument("--commits", type=int, default=300, help="journal commits each way")
    parser.add_argument(
        "--dir", type=Path, default=Path.cwd(),
        help="where the journal is made (default: here; a disk's fsync, where /tmp may be "
        "held in memory)",
    )  # fmt: skip
    args = parser.parse_args()
    wakes = args.wakes
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{platform.python_implementation()} {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    turn = asyncio.run(_asyncio_wake(wakes * 10, 0))
    for seconds in (GAP, GAP / 10):
        woken = asyncio.run(_asyncio_wake(wakes, seconds))
        print(f"asyncio, a wake-up after {seconds * 1000:g} ms asleep: {woken:.0f} µs of CPU "
              f"= {woken / turn:.0f} x a turn that does not sleep ({turn:.1f} µs)")  # fmt: skip
    apart, together = _round_trip(wakes, GAP), _round_trip(wakes * 10, 0)
    print(f"a round trip to another thread, {GAP * 1000:g} ms apart: {apart:.0f} µs of CPU "
          f"= {apart / together:.1f} x back to back ({together:.0f} µs)")  # fmt: skip
    cold, hot = _work(wakes, GAP), _work(wakes * 10, 0)
    print(f"sum(range(1000)) right after a {GAP * 1000:g} ms sleep: {cold:.1f} µs "
          f"= {cold / hot:.1f} x run hot ({hot:.1f} µs)")  # fmt: skip
    spaced = asyncio.run(_commits(args.commits, GAP, args.dir))
    packed = asyncio.run(_commits(args.commits, 0, args.dir))
    print(f"a journal commit (sync full), {GAP * 1000:g} ms apart: journal thread "
          f"{spaced[0]:.0f} µs, process {spaced[1]:.0f} µs of CPU = {spaced[0] / packed[0]:.1f} "
          f"and {spaced[1] / packed[1]:.1f} x back to back ({packed[0]:.0f} and "
          f"{packed[1]:.0f} µs)")  # fmt: skip


if __name__ == "__main__":
    main()
