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
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
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
    on the journal's own thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="journal")
        self._db: sqlite3.Connection | None = None

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, work)

    def _call(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._db is None:
            try:
                self._db = connect(self.path)
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: {exc}") from exc
        return work(self._db)

    async def open(self) -> None:
        """Open (or create) the journal now, so a bad path fails at start, not at a card."""
        await self._run(_nothing)

    async def close(self) -> None:
        def shut(db: sqlite3.Connection) -> None:
            db.close()
            self._db = None

        if self._db is not None:
            await self._run(shut)
        self._executor.shutdown(wait=True)

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
            db.execute("BEGIN IMMEDIATE")
            try:
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
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return ids

        return await self._run(write)

    async def forget_delivered(self, rowids: Iterable[int]) -> None:
        """The broker has these: they leave the outbox (a crash before this resends them)."""
        batch = [(rowid,) for rowid in rowids]
        await self._run(lambda db: db.executemany("DELETE FROM outbox WHERE id = ?", batch))

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
