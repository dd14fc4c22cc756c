"""The durable journal: every inbound event before it is applied, every outbound message
until the broker has it. One SQLite file (WAL) in the service's state directory.

Why two commits per event. A card that left the shoe exists nowhere else: it is committed
first (`append_event`), then applied; the messages it caused are committed next, with the
table's next sequence number and a mark on the event (`record_outputs`). A crash between
the two leaves an event without outputs: on start the daemon replays every event, and for
those unmarked ones it publishes the outputs anew (they were never sealed, so no one can
have seen them). A crash after the second leaves messages in the outbox: they are resent
with the ids and sequence numbers they were sealed with.

`synchronous=FULL`: in WAL mode SQLite then syncs the log at every commit, so a committed
event survives a power cut, not only a crash of the process. It costs an fsync per commit
(docs/performance.md); NORMAL would only risk the last commits on power loss, which is
exactly the card a table cannot get back.

All database work runs on one dedicated thread, in submission order, so the event loop
never waits on a disk and the journal's order is the order of submission.

Group commit. The fsync is the cost (about 3-6 ms on the reference machine's virtual disk,
docs/performance.md); SQLite's own work per event is tens of microseconds. So the thread takes
every write queued while the previous commit was syncing, runs them in submission order in
ONE transaction (each in its own savepoint, so one failing write fails alone), commits with
one fsync, and only then releases every waiter, in order. No caller learns that its write is
done before the commit that holds it has returned: an event is still committed before it is
applied, and outputs before they enter the outbox. Deleting delivered messages rides along
in the same transactions instead of costing an fsync of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import sqlite3
import stat
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from pathlib import Path

    from daemon.envelope import Outbound

JOURNAL_FILE = "journal.sqlite3"
SCHEMA_VERSION = 1
EventKind = Literal["config", "start", "shoe", "link", "request"]
_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    at TEXT NOT NULL,
    outputs_recorded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS events_by_table ON events (table_id, id);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL,
    retain INTEGER NOT NULL,
    event_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sequences (table_id TEXT PRIMARY KEY, next_seq INTEGER NOT NULL);
"""


class JournalError(Exception):
    """The journal cannot be opened or written: the daemon must not go on without it."""


@dataclass(frozen=True, slots=True)
class JournalEvent:
    rowid: int
    table_id: str
    kind: EventKind
    body: dict[str, Any]
    at: str
    outputs_recorded: bool


@dataclass(frozen=True, slots=True)
class StoredMessage:
    rowid: int
    table_id: str
    topic: str
    payload: bytes
    qos: Literal[0, 1, 2]
    retain: bool
    event_id: str


def prepare_state_directory(directory: Path) -> Path:
    """Create the directory (0700) and return the journal path; refuse loose permissions.

    The journal holds every card, the hole cards before their reveal included: the state
    directory and the file are for the service's user alone.
    """
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    mode = stat.S_IMODE(directory.stat().st_mode)
    if mode & 0o077:
        directory.chmod(mode & 0o700)
    return directory / JOURNAL_FILE


def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    if read_only:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        connection.execute("PRAGMA query_only = ON")
        return connection
    existed = path.exists()
    old_umask = os.umask(0o077)  # the file, its -wal and -shm are created 0600
    try:
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
        connection.executescript(_SCHEMA)
    finally:
        os.umask(old_umask)
    if existed:
        path.chmod(0o600)
    version = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if version is None:
        connection.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
    elif int(version[0]) != SCHEMA_VERSION:
        raise JournalError(
            f"{path}: journal schema {version[0]}, this shoe2mqtt reads {SCHEMA_VERSION}"
        )
    return connection


class Journal:
    """The daemon's journal; every method that touches the disk is a coroutine run in order
    on the journal's own thread, writes grouped into shared commits (above)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._queue: queue.SimpleQueue[_Work[Any] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._submit(_Work(work, future, loop))
        return await future

    def _submit(self, item: _Work[Any]) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="journal", daemon=True)
                self._thread.start()
        self._queue.put(item)

    def _serve(self) -> None:
        """The journal thread: take everything queued, one transaction, one fsync, release."""
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._run_batch(batch)
                    return
                batch.append(item)
            self._run_batch(batch)

    def _run_batch(self, batch: list[_Work[Any]]) -> None:
        results: list[tuple[_Work[Any], Any, Exception | None]] = []
        try:
            db = self._connection()
            if len(batch) == 1:  # alone: no savepoint needed, the statement is its transaction
                results.append(_attempt(batch[0], db))
            else:
                db.execute("BEGIN IMMEDIATE")
                try:
                    for item in batch:
                        db.execute("SAVEPOINT work")
                        result = _attempt(item, db)
                        if result[2] is not None:
                            db.execute("ROLLBACK TO work")
                        db.execute("RELEASE work")
                        results.append(result)
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
        except Exception as exc:  # noqa: BLE001 - every waiter of the batch learns of it
            error = exc if isinstance(exc, JournalError) else JournalError(f"{self.path}: {exc}")
            results = [(item, None, error) for item in batch]
        # One hand-over per loop: the waiters resume in submission order.
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Work[Any], Any, Any]]] = {}
        for result in results:
            by_loop.setdefault(result[0].loop, []).append(result)
        for loop, done in by_loop.items():
            with contextlib.suppress(RuntimeError):  # a loop that is gone has no waiter left
                loop.call_soon_threadsafe(_release, done)

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                self._db = connect(self.path)
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: {exc}") from exc
        return self._db

    async def open(self) -> None:
        """Open (or create) the journal now, so a bad path fails at start, not at a card."""
        await self._run(_nothing)

    async def close(self) -> None:
        def shut(db: sqlite3.Connection) -> None:
            db.close()
            self._db = None

        if self._thread is not None:
            # What waiters gave up on (a stop cancels them) is still queued: let it finish
            # first, so the connection is never closed inside another write's transaction.
            await self._run(_nothing)
            if self._db is not None:
                await self._run(shut)
            self._queue.put(None)
            await asyncio.to_thread(self._thread.join)
            self._thread = None

    # ---------------------------------------------------------------- writing
    async def append_event(
        self, table_id: str, kind: EventKind, body: dict[str, Any], at: str
    ) -> int:
        """Commit one inbound event; returns its row id. Only then may it be applied."""
        text = json.dumps(body, separators=(",", ":"), sort_keys=True)

        def write(db: sqlite3.Connection) -> int:
            cursor = db.execute(
                "INSERT INTO events (table_id, kind, body, at) VALUES (?, ?, ?, ?)",
                (table_id, kind, text, at),
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid

        return await self._run(write)

    async def record_outputs(
        self, event_rowid: int | None, table_id: str, next_seq: int, messages: Sequence[Outbound]
    ) -> list[int]:
        """Commit what an event caused, in one transaction; returns the messages' row ids."""

        def write(db: sqlite3.Connection) -> list[int]:
            with _transaction(db):
                ids = []
                for message in messages:
                    cursor = db.execute(
                        "INSERT INTO outbox (table_id, topic, payload, qos, retain, event_id) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            table_id,
                            message.topic,
                            message.payload,
                            message.qos,
                            int(message.retain),
                            message.event_id,
                        ),
                    )
                    assert cursor.lastrowid is not None
                    ids.append(cursor.lastrowid)
                db.execute(
                    "INSERT INTO sequences VALUES (?, ?) "
                    "ON CONFLICT (table_id) DO UPDATE SET next_seq = excluded.next_seq",
                    (table_id, next_seq),
                )
                if event_rowid is not None:
                    db.execute(
                        "UPDATE events SET outputs_recorded = 1 WHERE id = ?", (event_rowid,)
                    )
            return ids

        return await self._run(write)

    async def forget_delivered(self, rowids: Iterable[int]) -> None:
        """The broker has these: they leave the outbox (a crash before this resends them)."""
        batch = [(rowid,) for rowid in rowids]

        def delete(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.executemany("DELETE FROM outbox WHERE id = ?", batch)

        await self._run(delete)

    # ---------------------------------------------------------------- reading
    async def events(self, table_id: str | None = None) -> list[JournalEvent]:
        return await self._run(lambda db: read_events(db, table_id))

    async def pending(self) -> list[StoredMessage]:
        return await self._run(read_pending)

    async def next_seq(self, table_id: str) -> int:
        def read(db: sqlite3.Connection) -> int:
            row = db.execute(
                "SELECT next_seq FROM sequences WHERE table_id = ?", (table_id,)
            ).fetchone()
            return 1 if row is None else int(row[0])

        return await self._run(read)


@dataclass(slots=True)
class _Work(Generic[_T]):
    """One call for the journal thread, and the waiter it answers."""

    work: Callable[[sqlite3.Connection], _T]
    future: asyncio.Future[_T]
    loop: asyncio.AbstractEventLoop


def _attempt(
    item: _Work[_T], db: sqlite3.Connection
) -> tuple[_Work[_T], _T | None, Exception | None]:
    try:
        return item, item.work(db), None
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


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """A transaction of its own, or a savepoint inside the group's."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _nothing(db: sqlite3.Connection) -> None:  # noqa: ARG001 - opening the connection is the point
    return None


def read_events(db: sqlite3.Connection, table_id: str | None = None) -> list[JournalEvent]:
    query = "SELECT id, table_id, kind, body, at, outputs_recorded FROM events"
    rows = (
        db.execute(query + " ORDER BY id")
        if table_id is None
        else db.execute(query + " WHERE table_id = ? ORDER BY id", (table_id,))
    )
    return [JournalEvent(r[0], r[1], r[2], json.loads(r[3]), r[4], bool(r[5])) for r in rows]


def read_pending(db: sqlite3.Connection) -> list[StoredMessage]:
    rows = db.execute(
        "SELECT id, table_id, topic, payload, qos, retain, event_id FROM outbox ORDER BY id"
    )
    return [StoredMessage(r[0], r[1], r[2], bytes(r[3]), r[4], bool(r[5]), r[6]) for r in rows]
