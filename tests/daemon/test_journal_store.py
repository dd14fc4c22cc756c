"""The journal's thread takes a turn's writes together: every write the event loop submits in
one turn reaches the thread in one hand-over (one wake of the thread, not one a write), and
each is committed, numbered in the order it was submitted, before its caller hears of it."""

from __future__ import annotations

import asyncio
import os
import queue
from typing import TYPE_CHECKING, Any

import pytest

from daemon.journal import database
from daemon.journal.store import Journal

if TYPE_CHECKING:
    from pathlib import Path

WRITES = 40


class CountedQueue(queue.SimpleQueue[Any]):
    """The queue to the journal's thread, counting what is put on it (each put wakes it)."""

    puts = 0

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:  # noqa: FBT001, FBT002 - SimpleQueue.put's own signature
        self.puts += 1
        super().put(item, block, timeout)


async def _opened(path: Path) -> tuple[Journal, CountedQueue]:
    journal = Journal(path, sync="normal")
    counted = CountedQueue()
    journal._queue = counted  # the thread's wake-ups are what is measured
    await journal.open()
    counted.puts = 0
    return journal, counted


async def test_a_turn_s_writes_are_handed_to_the_thread_once_and_numbered_in_order(
    tmp_path: Path,
) -> None:
    journal, counted = await _opened(tmp_path / "journal.sqlite3")
    try:
        # Each task submits in its first step: all in the same turn of the loop.
        writes = [
            asyncio.create_task(journal.append_event("t1", "shoe", f'{{"i":{i}}}', "at"))
            for i in range(WRITES)
        ]
        numbers = await asyncio.gather(*writes)
        assert counted.puts == 1
        assert numbers == list(range(1, WRITES + 1))
        events = await journal.read(lambda db: database.read_events(db, "t1"))
        assert [e.body for e in events] == [{"i": i} for i in range(WRITES)]
    finally:
        await journal.close()


async def test_writes_of_turns_apart_are_each_committed_before_their_caller_resumes(
    tmp_path: Path,
) -> None:
    journal, counted = await _opened(tmp_path / "journal.sqlite3")
    try:
        for i in range(5):
            n = await journal.append_event("t1", "shoe", f'{{"i":{i}}}', "at")
            stored = await journal.read(lambda db: database.read_table(db, "t1").last_n)
            assert n == stored == i + 1
        assert counted.puts == 10  # a write and a read a turn: nothing waits for a later turn
    finally:
        await journal.close()


async def test_a_write_still_to_be_handed_over_when_the_journal_closes_is_committed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite3"
    journal, _ = await _opened(path)
    write = asyncio.create_task(journal.append_event("t1", "shoe", '{"i":0}', "at"))
    await asyncio.sleep(0)  # the write is submitted; its hand-over waits for the turn's end
    # As after a storage fault: no connection, so closing has nothing to flush first.
    journal._reconnect_later()  # the state a storage fault leaves
    await journal.close()
    assert await asyncio.wait_for(write, 10) == 1
    reopened = Journal(path)
    await reopened.open()
    try:
        assert await reopened.read(lambda db: database.read_table(db, "t1").last_n) == 1
    finally:
        await reopened.close()


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux's scheduling policies")
async def test_the_journal_s_thread_never_preempts_the_loop_when_woken(tmp_path: Path) -> None:
    """SCHED_BATCH: woken by a hand-over, the thread waits for the loop to give up its CPU
    (or takes the other one) rather than preempting it while it still holds the
    interpreter's lock, only to wait for that lock (decision P15)."""
    journal, _ = await _opened(tmp_path / "journal.sqlite3")
    try:
        thread = journal._thread
        assert thread is not None
        assert thread.native_id is not None
        assert os.sched_getscheduler(thread.native_id) == os.SCHED_BATCH
        assert os.sched_getscheduler(0) != os.SCHED_BATCH  # the loop's own is left as it was
    finally:
        await journal.close()
