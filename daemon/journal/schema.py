"""The journal's SQLite file: its directory, its schema, opening it, upgrading it.

The queries are daemon/journal/database.py's.

Schema 2 (docs/durability.md has the why of each table):

- `meta`: `schema` (2) and `epoch` (the random root of every message id, decision D4);
- `events`, a row per journaled event: its table, the table's event number `n` (1, 2, 3…),
  kind, body (JSON), time, and its hash chained to the table's event before;
- `tables`, a row per table: the chain's head; the delivered watermark (the highest `seq` the
  broker acknowledged, every one before it too); how far the archive reaches; the protocol
  for replays of events journaled before a `start` event named it; what an upgrade left;
- `checkpoints`: a table's whole state after its event `n`, with the next `seq`, the event's
  time and whether a round was open;
- `rounds`, a row per ended round: where its events are, when, its settlements, voided,
  review (what `journal list` shows);
- `shift_numbers`, a row per table: its shift's numbers after its event `n`, and its state
  then, so that a restart counts on from them (added to schema 2 without a new number: a
  file without it gets it when the daemon opens it, and older shoe2mqtt ignores it);
- `legacy_outbox`: messages schema 1 had sealed and not delivered when it was upgraded
  (their ids were random: only this copy can send them).

Schema 1 (the first journals) kept every outgoing message in an `outbox` until the
broker had it, and a `sequences` table; `upgrade` turns such a file into schema 2 in place,
in one transaction, on the daemon's first start.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import uuid
from typing import TYPE_CHECKING, Final, Literal

from daemon.journal.chain import GENESIS, body_text, link_hash
from daemon.journal.errors import SchemaError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

JOURNAL_FILE: Final = "journal.sqlite3"
SCHEMA_VERSION: Final = 2
EventKind = Literal["config", "start", "shoe", "link", "request", "notice", "timer"]
SyncMode = Literal["full", "normal"]
SYNC_MODES: Final[tuple[SyncMode, ...]] = ("full", "normal")


def new_epoch() -> str:
    """A journal's epoch: 32 random hex digits, made once when the journal is created; the
    messages' ids are derived from it (daemon.wire.envelope.message_id)."""
    return uuid.uuid4().hex


_SCHEMA: Final = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    at TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE UNIQUE INDEX events_by_table ON events (table_id, n);
CREATE TABLE tables (
    table_id TEXT PRIMARY KEY,
    last_n INTEGER NOT NULL,
    last_hash TEXT NOT NULL,
    delivered_seq INTEGER NOT NULL DEFAULT 0,
    archived_n INTEGER NOT NULL DEFAULT 0,
    protocol TEXT,
    legacy_n INTEGER NOT NULL DEFAULT 0,
    legacy_next_seq INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE checkpoints (
    table_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    next_seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    open_round INTEGER NOT NULL,
    keep TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL,
    PRIMARY KEY (table_id, n)
);
CREATE TABLE rounds (
    table_id TEXT NOT NULL,
    round_id INTEGER NOT NULL,
    first_n INTEGER NOT NULL,
    last_n INTEGER NOT NULL,
    started TEXT NOT NULL,
    ended TEXT NOT NULL,
    settlements INTEGER NOT NULL,
    voided INTEGER NOT NULL,
    review TEXT NOT NULL,
    PRIMARY KEY (table_id, round_id)
);
CREATE TABLE legacy_outbox (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL,
    retain INTEGER NOT NULL,
    seq INTEGER NOT NULL
);
"""

# Added to schema 2 later (a file without it gets it when the daemon opens it for writing).
_SHIFT_NUMBERS: Final = """
CREATE TABLE IF NOT EXISTS shift_numbers (
    table_id TEXT PRIMARY KEY,
    n INTEGER NOT NULL,
    next_seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    state TEXT NOT NULL,
    numbers TEXT NOT NULL
)
"""

# Why a checkpoint is kept once a newer one exists (the newest is always kept, and so is the
# one start-up needs: the newest whose messages all reached the broker).


def prepare_state_directory(directory: Path) -> Path:
    """Create the directory (0700) and return the journal path; tighten loose permissions.

    The journal holds every card, the hole cards before their reveal included: the state
    directory and the file are for the service's user alone.
    """
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    mode = stat.S_IMODE(directory.stat().st_mode)
    if mode & 0o077:
        _tighten(directory, mode & 0o700)
    return directory / JOURNAL_FILE


def _tighten(path: Path, mode: int) -> None:
    """Take group and other permissions away where this user may (its own files): a file
    that is not ours, or a read-only file system, is left as it is, and what cannot be
    written says so when it is written."""
    with contextlib.suppress(PermissionError, OSError):
        path.chmod(mode)


def connect(path: Path, *, read_only: bool = False, sync: SyncMode = "full") -> sqlite3.Connection:
    """The journal at `path`: created at schema 2 if new, upgraded in place if older.

    `sync`: "full" syncs the log at every commit (a committed event survives a power cut);
    "normal" only at checkpoints of the log (it survives a crash of the process, but the last
    commits before a power cut may be lost). docs/durability.md has the figures.
    """
    if read_only:
        connection = sqlite3.connect(_uri(path, "mode=ro"), uri=True, check_same_thread=False)
        connection.execute("PRAGMA query_only = ON")
        version = _schema_version(connection)
        if version != SCHEMA_VERSION:
            connection.close()
            raise SchemaError(
                f"{path}: journal schema {version}; this shoe2mqtt reads {SCHEMA_VERSION} "
                "(the daemon upgrades it at its next start)"
            )
        return connection
    existed = path.exists()
    old_umask = os.umask(0o077)  # the file, its -wal and -shm are created 0600
    try:
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        if not existed:
            # Set before the first table exists: the archive's deletions can then give pages
            # back to the file system (daemon/journal/archive.py).
            connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(f"PRAGMA synchronous = {sync.upper()}")
    finally:
        os.umask(old_umask)
    if existed:
        _tighten(path, 0o600)
    try:
        _create_or_upgrade(connection, path)
    except BaseException:
        connection.close()
        raise
    return connection


def connect_for_reading(path: Path) -> sqlite3.Connection | None:
    """The journal for reading only, without the log and index SQLite keeps beside it (a
    storage that takes no write cannot hold them): possible when the last connection closed
    cleanly, having put everything committed into the file itself. None when it did not, or
    the file is of an older schema (the upgrade writes)."""
    log = path.with_name(path.name + "-wal")
    if not path.exists() or (log.exists() and log.stat().st_size > 0):
        return None  # (an empty log holds nothing: the failed open may have just made it)
    try:
        db = sqlite3.connect(
            _uri(path, "mode=ro&immutable=1"),
            uri=True,
            check_same_thread=False,
            isolation_level=None,
        )
        if _schema_version(db) == SCHEMA_VERSION:
            return db
        db.close()
    except sqlite3.Error:
        pass
    return None


def _uri(path: Path, query: str) -> str:
    """`path` as an SQLite URI with `query`: a directory named with "?" or "#" escaped, which
    in `file:{path}` began the query or a fragment and named another file."""
    return f"{path.absolute().as_uri()}?{query}"


def _schema_version(db: sqlite3.Connection) -> int | None:
    has_meta = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
    if not has_meta:
        return None
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    return None if row is None else int(row[0])


def _create_or_upgrade(db: sqlite3.Connection, path: Path) -> None:
    version = _schema_version(db)
    if version == SCHEMA_VERSION:
        db.execute(_SHIFT_NUMBERS)  # a schema 2 file of before the shift numbers were kept
        return
    if version is None:
        with transaction(db):
            _create_tables(db)
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [("schema", str(SCHEMA_VERSION)), ("epoch", new_epoch())],
            )
        return
    if version == 1:
        with transaction(db):
            upgrade_from_1(db)
        return
    raise SchemaError(f"{path}: journal schema {version}; this shoe2mqtt reads {SCHEMA_VERSION}")


def upgrade_from_1(db: sqlite3.Connection) -> None:
    """Schema 1 → 2, inside the caller's transaction.

    Every event is kept, numbered per table and hash-chained (tamper evidence starts here:
    what was changed before the upgrade cannot be told). Schema 1's messages were sealed with
    random ids and deleted once delivered, so the history's messages cannot be made again;
    what the tables need to go on is kept instead: per table, the last event whose messages
    were sealed (`legacy_n`) and the next `seq` (`legacy_next_seq`), from which the replay
    numbers the messages of any later event; every message delivered (`delivered_seq`) but
    those still in the outbox, which move to `legacy_outbox` to go out as they were sealed.
    """
    old = db.execute(
        "SELECT id, table_id, kind, body, at, outputs_recorded FROM events ORDER BY id"
    ).fetchall()
    sequences = dict(db.execute("SELECT table_id, next_seq FROM sequences").fetchall())
    pending = db.execute(
        "SELECT id, table_id, topic, payload, qos, retain FROM outbox ORDER BY id"
    ).fetchall()
    db.execute("ALTER TABLE events RENAME TO events_schema1")
    db.execute("DROP INDEX IF EXISTS events_by_table")
    _create_tables(db, meta=False)
    heads: dict[str, tuple[int, str, int]] = {}  # table: (last n, last hash, last sealed n)
    rows = []
    for rowid, table_id, kind, body, at, recorded in old:
        n, prev, sealed = heads.get(table_id, (0, GENESIS, 0))
        n += 1
        text = body_text(json.loads(body))  # canonical, as schema 2 writes it
        digest = link_hash(prev, table_id, n, kind, at, text)
        heads[table_id] = (n, digest, n if recorded else sealed)
        rows.append((rowid, table_id, n, kind, text, at, digest))
    db.executemany(
        "INSERT INTO events (id, table_id, n, kind, body, at, hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    legacy = [
        (rowid, table_id, topic, bytes(payload), qos, retain, int(json.loads(payload)["seq"]))
        for rowid, table_id, topic, payload, qos, retain in pending
    ]
    db.executemany("INSERT INTO legacy_outbox VALUES (?, ?, ?, ?, ?, ?, ?)", legacy)
    for table_id in sorted(heads.keys() | sequences.keys()):
        n, digest, sealed = heads.get(table_id, (0, GENESIS, 0))
        next_seq = int(sequences.get(table_id, 1))
        db.execute(
            "INSERT INTO tables (table_id, last_n, last_hash, delivered_seq, legacy_n, "
            "legacy_next_seq) VALUES (?, ?, ?, ?, ?, ?)",
            (table_id, n, digest, next_seq - 1, sealed, next_seq),
        )
    db.execute("DROP TABLE events_schema1")
    db.execute("DROP TABLE outbox")
    db.execute("DROP TABLE sequences")
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
    db.execute("INSERT INTO meta VALUES ('epoch', ?)", (new_epoch(),))
    db.execute("INSERT INTO meta VALUES ('upgraded_from', '1')")


def _create_tables(db: sqlite3.Connection, *, meta: bool = True) -> None:
    # One statement at a time: executescript would commit the caller's transaction first.
    for statement in _SCHEMA.split(";"):
        if statement.strip() and (meta or "CREATE TABLE meta" not in statement):
            db.execute(statement)
    db.execute(_SHIFT_NUMBERS)


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """A transaction of its own, or nothing more inside the caller's."""
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


# ---------------------------------------------------------------- writing
