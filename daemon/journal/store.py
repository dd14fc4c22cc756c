"""The daemon's journal: every inbound event committed before it is applied, on one thread.

One commit on a card's path. `append_event` commits the event (a card that left the shoe
exists nowhere else, so it must be on disk before anything depends on it); the table then
applies it, and what it causes goes straight to the outbox in memory. Nothing it causes is
written: every message is a pure function of the journaled events (decision D4), so after a
restart the replay makes the same messages again, and everything past the table's delivered
watermark is sent again with the same ids.

What the daemon learns after a commit rides along with the next one instead of costing its
own fsync: the delivered watermark of each table (the broker acknowledged every message up
to it), checkpoints of table state and the index of ended rounds (`note_delivered`,
`note_checkpoint`). A crash loses at most what rode on no commit yet, and all of it is
derived: a few messages are sent again with their ids, a checkpoint or a round entry is made
again by the replay.

All database work runs on one dedicated thread, in submission order, so the event loop never
waits on a disk and the journal's order is the order of submission.

Group commit. The fsync is the cost (about 3-6 ms on the reference machine's virtual disk,
docs/performance.md); SQLite's own work per event is tens of microseconds. So the thread takes
every write queued while the previous commit was syncing, runs them in submission order in
ONE transaction (each in its own savepoint, so one failing write fails alone), commits with
one fsync, and only then releases every waiter, in order. No caller learns that its write is
done before the commit that holds it has returned: an event is still committed before it is
applied.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import structlog

from daemon.journal import database, schema
from daemon.journal.errors import JournalError, StorageFault, journal_error
from daemon.journal.riders import Riders

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from daemon.journal.rows import Checkpoint, JournalEvent, LegacyMessage, RoundEntry, TableRecord
    from daemon.journal.schema import EventKind, SyncMode

_T = TypeVar("_T")
log = structlog.get_logger("journal")


@dataclass(frozen=True, slots=True)
class History:
    """What start-up needs of one table: where it stands, the checkpoint to start from (or
    the settings of its first event, to start from there) and every event after."""

    table: TableRecord
    checkpoint: Checkpoint | None
    first_config: dict[str, Any] | None
    events: list[JournalEvent]


def read_history(db: sqlite3.Connection, table_id: str) -> History:
    table = database.read_table(db, table_id)
    start = database.start_checkpoint_n(db, table_id)
    checkpoint = None if start is None else database.read_checkpoint(db, table_id, start)
    after = 0 if checkpoint is None else checkpoint.n
    first = None if checkpoint is not None else database.first_config(db, table_id)
    return History(table, checkpoint, first, database.read_events(db, table_id, after=after))


class Journal:
    """The daemon's journal; every method that touches the disk is a coroutine run in order
    on the journal's own thread, writes grouped into shared commits (above)."""

    def __init__(self, path: Path, *, sync: SyncMode = "full") -> None:
        self.path = path
        self.sync = sync
        self.epoch = ""  # the journal's, once open
        self._db: sqlite3.Connection | None = None
        self._queue: queue.SimpleQueue[list[_Work[Any]] | None] = queue.SimpleQueue()
        self._pending: dict[asyncio.AbstractEventLoop, list[_Work[Any]]] = {}
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._riders = Riders()
        self._unwritable: StorageFault | None = None  # why the file is open read-only

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._submit(_Work(work, future, loop))
        return await future

    def _submit(self, item: _Work[Any]) -> None:
        """Queue `item` until its loop's turn ends: the thread is woken once a turn, not an item."""
        pending = self._pending.get(item.loop)
        if pending is None:
            self._pending[item.loop] = [item]
            item.loop.call_soon(self._hand_over, item.loop)
        else:
            pending.append(item)

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        if not (items := self._pending.pop(loop, None)):
            return  # handed over already (by `close`)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="journal", daemon=True)
                self._thread.start()
        self._queue.put(items)

    def _serve(self) -> None:
        """The journal thread: take everything queued, one transaction, one fsync, release;
        at the end (None), close the connection."""
        # Woken by a hand-over, a SCHED_BATCH thread does not preempt the loop's thread, which
        # holds the interpreter's lock it would only wait for (decision P15). Linux's policy:
        # where it is refused (another OS, a stricter syscall filter), the thread runs as ever.
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        try:
            while True:
                first = self._queue.get()
                if first is None:
                    return
                batch = list(first)
                while True:
                    try:
                        items = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if items is None:
                        self._run_batch(batch)
                        return
                    batch.extend(items)
                self._run_batch(batch)
        finally:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None

    def _take_riders(self) -> Riders:
        with self._lock:
            riders, self._riders = self._riders, Riders()
        return riders

    def _give_back(self, riders: Riders) -> None:
        with self._lock:
            self._riders.merge_older(riders)

    def _run_batch(self, batch: list[_Work[Any]]) -> None:
        riders = self._take_riders()
        carried = False
        try:
            results, carried = self._transaction(batch, riders)
        except Exception as exc:  # noqa: BLE001 - every waiter of the batch learns of it
            error = journal_error(exc, self.path)
            results = [(item, None, error) for item in batch]
        if riders and not carried:
            self._give_back(riders)  # for a commit that can carry them
        if self._unwritable is not None:
            # Open for reading only: what failed, failed for the storage's reason; the next
            # batch tries to open it for writing again.
            results = [
                (item, value, None if error is None else self._unwritable)
                for item, value, error in results
            ]
        if any(isinstance(error, StorageFault) for _, _, error in results):
            self._reconnect_later()
        # One hand-over per loop: the waiters resume in submission order.
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Work[Any], Any, Any]]] = {}
        for result in results:
            by_loop.setdefault(result[0].loop, []).append(result)
        for loop, done in by_loop.items():
            with contextlib.suppress(RuntimeError):  # a loop that is gone has no waiter left
                loop.call_soon_threadsafe(_release, done)

    def _transaction(
        self, batch: list[_Work[Any]], riders: Riders
    ) -> tuple[list[tuple[_Work[Any], Any, Exception | None]], bool]:
        """The batch in one transaction, a savepoint each, and what rides along: one commit.
        Returns each item's result, and whether the riders were committed with them. Raises
        if the transaction as a whole fails (its storage's word, if a write said it)."""
        results: list[tuple[_Work[Any], Any, Exception | None]] = []
        db = self._connection()
        writable = self._unwritable is None
        db.execute("BEGIN IMMEDIATE" if writable else "BEGIN")
        try:
            for item in batch:
                db.execute("SAVEPOINT work")
                result = _attempt(item, db, self.path)
                if result[2] is not None:
                    db.execute("ROLLBACK TO work")
                db.execute("RELEASE work")
                results.append(result)
            carried = bool(riders) and writable and _write_riders(db, riders, self.path)
            db.execute("COMMIT")
        except Exception as exc:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            faults = [r[2] for r in results if isinstance(r[2], StorageFault)]
            if faults:
                raise faults[0] from exc
            raise
        return results, carried

    def _connection(self) -> sqlite3.Connection:
        """The journal open for writing; or, while the storage refuses that (a full disk
        cannot even hold the log SQLite creates beside the file), open for reading only,
        when what was committed is all in the file: the daemon then starts, rebuilds its
        tables and tells the pit, and every write fails with the storage's reason."""
        if self._db is None:
            try:
                self._db = schema.connect(self.path, sync=self.sync)
                self._unwritable = None
            except (sqlite3.Error, OSError) as exc:
                error = journal_error(exc, self.path)
                if not isinstance(error, StorageFault):
                    raise error from exc
                self._db = schema.connect_for_reading(self.path)
                if self._db is None:
                    raise error from exc
                self._unwritable = error
        return self._db

    def _reconnect_later(self) -> None:
        """After a storage fault the next batch opens the file afresh: a file system
        remounted read-write, or a file given its permissions back, is then seen."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    async def open(self, protocols: Mapping[str, str] | None = None) -> None:
        """Open (or create, or upgrade) the journal now, so a bad path fails at start, not
        at a card. `protocols`: each table's shoe protocol, for replays of events journaled
        before a `start` event named it (journals upgraded from schema 1)."""

        with self._lock:
            self._riders.protocols.update(protocols or {})
        self.epoch = await self._run(database.read_epoch)

    async def close(self) -> None:
        """Commit what rides along (the latest watermarks above all), then close."""
        for loop in list(self._pending):  # submitted this turn, written before the end
            self._hand_over(loop)
        if self._thread is not None:
            if self._db is not None:
                with contextlib.suppress(JournalError):  # derived facts: a restart remakes them
                    await self.flush()
            self._queue.put(None)
            await asyncio.to_thread(self._thread.join)
            self._thread = None

    # ---------------------------------------------------------------- writing
    async def append_event(self, table_id: str, kind: EventKind, text: str, at: str) -> int:
        """Commit one inbound event (its body's text: daemon.journal.chain.body_text); returns
        its number in its table. Only then may it be applied."""
        return await self._run(lambda db: database.append_event(db, table_id, kind, text, at))

    async def append_events(
        self, table_id: str, events: list[tuple[EventKind, str, str]]
    ) -> list[int]:
        """Commit several inbound events of one table together (kind, body text, time each),
        in order, in one transaction; returns their numbers. Only then may they be applied."""

        def append(db: sqlite3.Connection) -> list[int]:
            return [
                database.append_event(db, table_id, kind, text, at) for kind, text, at in events
            ]

        return await self._run(append)

    def note_delivered(self, table_id: str, seq: int) -> None:
        """The broker has every message of the table up to `seq` (rides the next commit)."""
        with self._lock:
            riders = self._riders.delivered
            riders[table_id] = max(seq, riders.get(table_id, 0))

    def note_legacy_delivered(self, rowid: int) -> None:
        with self._lock:
            self._riders.legacy_delivered.append(rowid)

    def note_checkpoint(
        self, checkpoint: Checkpoint | None, entry: RoundEntry | None = None
    ) -> None:
        """A checkpoint of a table and the round that just ended, or either alone."""
        with self._lock:
            self._riders.checkpoints.append((checkpoint, entry))

    def note_shift_numbers(self, checkpoint: Checkpoint, numbers: dict[str, Any]) -> None:
        """A table's shift numbers after its event `checkpoint.n`, with its state then (a
        restart counts on from them: daemon/numbers/rebuild.py). The newest replaces any
        older one still waiting."""
        with self._lock:
            self._riders.shift_numbers[checkpoint.table_id] = (checkpoint, numbers)

    async def flush(self) -> None:
        """Commit what rides along now (an empty batch still carries it)."""
        await self._run(_nothing)

    async def drop_archived(self, table_id: str, through: Checkpoint) -> None:
        """The archive's manifest names a file holding the table's events up to
        `through.n`: they leave the database, `through` becomes its base."""
        await self._run(lambda db: database.drop_archived(db, table_id, through))

    async def give_back_space(self) -> None:
        """Return the free pages deleted rows left to the file system (auto_vacuum)."""
        await self._run(lambda db: db.execute("PRAGMA incremental_vacuum").fetchall())

    # ---------------------------------------------------------------- reading
    async def history(self, table_id: str) -> History:
        return await self._run(lambda db: read_history(db, table_id))

    async def legacy_messages(self) -> list[LegacyMessage]:
        return await self._run(database.read_legacy)

    async def tables(self) -> dict[str, TableRecord]:
        return await self._run(database.read_tables)

    async def read(self, query: Callable[[sqlite3.Connection], _T]) -> _T:
        """Any read, on the journal's thread (after everything submitted before it)."""
        return await self._run(query)


def _write_riders(db: sqlite3.Connection, riders: Riders, path: Path) -> bool:
    """In a savepoint of its own: what rides along is derived, and a fault in writing it
    must never cost the events of the batch. False when it could not be written (it waits
    for the next commit: a storage fault, which the events' own writes report)."""
    db.execute("SAVEPOINT riders")
    try:
        riders.write(db)
    except sqlite3.Error as exc:
        db.execute("ROLLBACK TO riders")
        db.execute("RELEASE riders")
        if not isinstance(journal_error(exc, path), StorageFault):
            log.error("journal.riders_failed", error=str(exc))  # noqa: TRY400 - a bug: its text
        return False
    db.execute("RELEASE riders")
    return True


@dataclass(slots=True)
class _Work(Generic[_T]):
    """One call for the journal thread, and the waiter it answers."""

    work: Callable[[sqlite3.Connection], _T]
    future: asyncio.Future[_T]
    loop: asyncio.AbstractEventLoop


def _attempt(
    item: _Work[_T], db: sqlite3.Connection, path: Path
) -> tuple[_Work[_T], _T | None, Exception | None]:
    try:
        return item, item.work(db), None
    except sqlite3.Error as exc:
        error = journal_error(exc, path)
        error.__cause__ = exc
        return item, None, error
    except Exception as exc:  # noqa: BLE001 - handed to the waiter, raised there
        return item, None, exc


def _release(done: list[tuple[_Work[Any], Any, Exception | None]]) -> None:
    for item, result, error in done:
        if item.future.done():  # its waiter was cancelled; the write stands
            continue
        if error is None:
            item.future.set_result(result)
        else:
            item.future.set_exception(error)


def _nothing(db: sqlite3.Connection) -> None:  # noqa: ARG001 - the batch around it is the point
    return None
