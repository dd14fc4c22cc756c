"""Every query of the journal: what the daemon writes, what it and the tools read (its rows
as dataclasses: daemon/journal/rows.py).

Plain functions over a `sqlite3.Connection`, so the daemon's journal thread
(daemon/journal/store.py) and the read-only tools (`shoe2mqtt journal`) run the same SQL.
The file, its schema and its upgrade are daemon/journal/schema.py's.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any, Final

from daemon.journal.chain import GENESIS, link_hash
from daemon.journal.errors import SchemaError
from daemon.journal.rows import Checkpoint, JournalEvent, LegacyMessage, RoundEntry, TableRecord

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from daemon.journal.schema import EventKind

KEEP_HOUR: Final = "hour"  # the last between rounds of its hour: `journal show` replays from it
KEEP_BASE: Final = "base"  # where the live database begins since the archive took the rest
# `json.dumps(..., separators=(",", ":"))`, made once: a state is written at every round's end.
_COMPACT: Final = json.JSONEncoder(separators=(",", ":"))


# ---------------------------------------------------------------- the file


def append_event(db: sqlite3.Connection, table_id: str, kind: EventKind, text: str, at: str) -> int:
    """Insert the table's next event, chained to its last; returns its number."""
    head = db.execute(
        "SELECT last_n, last_hash FROM tables WHERE table_id = ?", (table_id,)
    ).fetchone()
    last_n, last_hash = head if head is not None else (0, GENESIS)
    n = last_n + 1
    digest = link_hash(last_hash, table_id, n, kind, at, text)
    db.execute(
        "INSERT INTO events (table_id, n, kind, body, at, hash) VALUES (?, ?, ?, ?, ?, ?)",
        (table_id, n, kind, text, at, digest),
    )
    if head is None:
        db.execute(
            "INSERT INTO tables (table_id, last_n, last_hash) VALUES (?, ?, ?)",
            (table_id, n, digest),
        )
    else:
        db.execute(
            "UPDATE tables SET last_n = ?, last_hash = ? WHERE table_id = ?",
            (n, digest, table_id),
        )
    return n


def mark_delivered(db: sqlite3.Connection, watermarks: Mapping[str, int]) -> None:
    db.executemany(
        "UPDATE tables SET delivered_seq = max(delivered_seq, ?) WHERE table_id = ?",
        [(seq, table_id) for table_id, seq in watermarks.items()],
    )


def forget_legacy(db: sqlite3.Connection, rowids: Iterable[int]) -> None:
    db.executemany("DELETE FROM legacy_outbox WHERE id = ?", [(r,) for r in rowids])


def set_protocol(db: sqlite3.Connection, table_id: str, protocol: str) -> None:
    """The protocol replays assume before a `start` event names one (upgraded journals)."""
    db.execute(
        "UPDATE tables SET protocol = ? WHERE table_id = ? AND protocol IS NULL",
        (protocol, table_id),
    )


def write_checkpoint(db: sqlite3.Connection, checkpoint: Checkpoint) -> None:
    """Store a checkpoint. Kept: the newest; the newest between rounds; the last between
    rounds of every hour (`journal show` replays from it); the one start-up needs (the
    newest whose messages all reached the broker) and every one after it; the archive's
    base. The others go."""
    table_id, n = checkpoint.table_id, checkpoint.n
    db.execute(
        "INSERT OR REPLACE INTO checkpoints (table_id, n, next_seq, at, open_round, keep, state) "
        "VALUES (?, ?, ?, ?, ?, '', ?)",
        (
            table_id,
            n,
            checkpoint.next_seq,
            checkpoint.at,
            int(checkpoint.open_round),
            _COMPACT.encode(checkpoint.state),
        ),
    )
    before = db.execute(
        "SELECT n, at FROM checkpoints WHERE table_id = ? AND n < ? AND open_round = 0 "
        "ORDER BY n DESC LIMIT 1",
        (table_id, n),
    ).fetchone()
    if before is not None and before[1][:13] != checkpoint.at[:13] and not checkpoint.open_round:
        db.execute(
            "UPDATE checkpoints SET keep = ? WHERE table_id = ? AND n = ? AND keep = ''",
            (KEEP_HOUR, table_id, before[0]),
        )
    start = start_checkpoint_n(db, table_id)
    if start is not None:
        # The newest between rounds stays too: the archive cuts a day there.
        db.execute(
            "DELETE FROM checkpoints WHERE table_id = ? AND keep = '' AND n < ? AND n != "
            "(SELECT max(n) FROM checkpoints WHERE table_id = ? AND open_round = 0)",
            (table_id, start, table_id),
        )


def write_round(db: sqlite3.Connection, entry: RoundEntry) -> None:
    db.execute(
        "INSERT OR REPLACE INTO rounds VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.table_id,
            entry.round_id,
            entry.first_n,
            entry.last_n,
            entry.started,
            entry.ended,
            entry.settlements,
            int(entry.voided),
            json.dumps(list(entry.review)),
        ),
    )


def write_shift_numbers(
    db: sqlite3.Connection, checkpoint: Checkpoint, numbers: Mapping[str, Any]
) -> None:
    """A table's shift numbers after its event `checkpoint.n`, with its state then (one row
    a table: the newest replaces the one before)."""
    db.execute(
        "INSERT OR REPLACE INTO shift_numbers (table_id, n, next_seq, at, state, numbers) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            checkpoint.table_id,
            checkpoint.n,
            checkpoint.next_seq,
            checkpoint.at,
            _COMPACT.encode(checkpoint.state),
            _COMPACT.encode(numbers),
        ),
    )


def read_shift_numbers(
    db: sqlite3.Connection, table_id: str
) -> tuple[Checkpoint, dict[str, Any]] | None:
    """The table's newest shift numbers and its state at the same event, if the journal
    holds them (a journal written before they were kept has no such table)."""
    try:
        row = db.execute(
            "SELECT n, next_seq, at, state, numbers FROM shift_numbers WHERE table_id = ?",
            (table_id,),
        ).fetchone()
    except sqlite3.OperationalError:  # no such table: a file opened read-only, of before
        return None
    if row is None:
        return None
    checkpoint = Checkpoint(table_id, row[0], row[1], row[2], False, json.loads(row[3]))
    return checkpoint, json.loads(row[4])


def drop_archived(db: sqlite3.Connection, table_id: str, through: Checkpoint) -> None:
    """The archive holds the table's events up to `through.n`: they leave the database, with
    the checkpoints and round entries before them; the checkpoint `through` (written again
    if it went meanwhile) becomes the base that replays of the live database start from."""
    through_n = through.n
    db.execute(
        "INSERT OR IGNORE INTO checkpoints (table_id, n, next_seq, at, open_round, keep, state) "
        "VALUES (?, ?, ?, ?, ?, '', ?)",
        (
            table_id,
            through_n,
            through.next_seq,
            through.at,
            int(through.open_round),
            _COMPACT.encode(through.state),
        ),
    )
    db.execute("DELETE FROM events WHERE table_id = ? AND n <= ?", (table_id, through_n))
    db.execute("DELETE FROM checkpoints WHERE table_id = ? AND n < ?", (table_id, through_n))
    db.execute(
        "UPDATE checkpoints SET keep = ? WHERE table_id = ? AND n = ?",
        (KEEP_BASE, table_id, through_n),
    )
    db.execute("DELETE FROM rounds WHERE table_id = ? AND last_n <= ?", (table_id, through_n))
    db.execute("DELETE FROM shift_numbers WHERE table_id = ? AND n < ?", (table_id, through_n))
    db.execute(
        "UPDATE tables SET archived_n = max(archived_n, ?) WHERE table_id = ?",
        (through_n, table_id),
    )


# ---------------------------------------------------------------- reading
def read_epoch(db: sqlite3.Connection) -> str:
    row = db.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
    if row is None:
        raise SchemaError("the journal has no epoch")
    return str(row[0])


def read_tables(db: sqlite3.Connection) -> dict[str, TableRecord]:
    rows = db.execute(
        "SELECT table_id, last_n, last_hash, delivered_seq, archived_n, protocol, legacy_n, "
        "legacy_next_seq FROM tables ORDER BY table_id"
    )
    return {row[0]: TableRecord(*row) for row in rows}


def read_table(db: sqlite3.Connection, table_id: str) -> TableRecord:
    return read_tables(db).get(table_id) or TableRecord(table_id)


def read_events(
    db: sqlite3.Connection, table_id: str, *, after: int = 0, through: int | None = None
) -> list[JournalEvent]:
    """The table's events numbered above `after` (and up to `through`), in order."""
    return list(iter_events(db, table_id, after=after, through=through))


def iter_events(
    db: sqlite3.Connection, table_id: str, *, after: int = 0, through: int | None = None
) -> Iterator[JournalEvent]:
    rows = db.execute(
        "SELECT table_id, n, kind, body, at, hash, id FROM events "
        "WHERE table_id = ? AND n > ? AND n <= ? ORDER BY n",
        (table_id, after, 2**62 if through is None else through),
    )
    for row in rows:
        yield JournalEvent(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6])


def iter_rows(db: sqlite3.Connection, table_id: str) -> Iterator[tuple[Any, ...]]:
    """The table's rows as stored, in row order (what tamper checks walk): id, n, kind, at,
    body text, hash."""
    yield from db.execute(
        "SELECT id, n, kind, at, body, hash FROM events WHERE table_id = ? ORDER BY id",
        (table_id,),
    )


def first_stamp(db: sqlite3.Connection, table_id: str) -> str | None:
    """When the table's first event in the live journal was journaled; None for a table the
    journal has not met."""
    row = db.execute(
        "SELECT at FROM events WHERE table_id = ? ORDER BY n LIMIT 1", (table_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def first_config(db: sqlite3.Connection, table_id: str) -> dict[str, Any] | None:
    """The settings of the table's first `config` event: what a replay from its first event
    starts with."""
    row = db.execute(
        "SELECT body FROM events WHERE table_id = ? AND kind = 'config' ORDER BY n LIMIT 1",
        (table_id,),
    ).fetchone()
    if row is None:
        return None
    table: dict[str, Any] = json.loads(row[0])["table"]
    return table


def start_checkpoint_n(db: sqlite3.Connection, table_id: str) -> int | None:
    """The newest checkpoint every message before which reached the broker: start-up
    replays from it, so that it can send again what the broker may not have."""
    row = db.execute(
        "SELECT max(c.n) FROM checkpoints c JOIN tables t USING (table_id) "
        "WHERE c.table_id = ? AND c.next_seq <= t.delivered_seq + 1",
        (table_id,),
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def read_checkpoint(db: sqlite3.Connection, table_id: str, n: int) -> Checkpoint | None:
    row = db.execute(
        "SELECT n, next_seq, at, open_round, state FROM checkpoints WHERE table_id = ? AND n = ?",
        (table_id, n),
    ).fetchone()
    if row is None:
        return None
    return Checkpoint(table_id, row[0], row[1], row[2], bool(row[3]), json.loads(row[4]))


def checkpoint_before(
    db: sqlite3.Connection, table_id: str, n: int, *, between_rounds: bool = False
) -> Checkpoint | None:
    """The newest checkpoint of the table's state before its event `n` (at `n - 1` or
    earlier)."""
    row = db.execute(
        "SELECT n FROM checkpoints WHERE table_id = ? AND n < ? AND open_round <= ? "
        "ORDER BY n DESC LIMIT 1",
        (table_id, n, 0 if between_rounds else 1),
    ).fetchone()
    return None if row is None else read_checkpoint(db, table_id, int(row[0]))


def archive_may_be_due(db: sqlite3.Connection, before_day: str, *, delivered: bool = True) -> bool:
    """Whether any table has a checkpoint the archive could cut at (between rounds, dated
    before `before_day`, past what is archived) whose messages all reached the broker (or,
    `delivered=False`, some of which wait for it): cheap, so the daemon runs the archiver
    only when there may be work, and looks again soon when the broker holds it back."""
    row = db.execute(
        "SELECT 1 FROM checkpoints c JOIN tables t USING (table_id) WHERE c.n > t.archived_n "
        "AND c.open_round = 0 AND (c.next_seq <= t.delivered_seq + 1) = ? "
        "AND substr(c.at, 1, 10) < ? LIMIT 1",
        (int(delivered), before_day),
    ).fetchone()
    return row is not None


def archive_cuts(db: sqlite3.Connection, table_id: str, before_day: str) -> list[Checkpoint]:
    """Where the archive cuts the table's events into files, in the order of their numbers.

    From the first event past what is archived, as long as every event is dated before
    `before_day` (YYYY-MM-DD) and every message it caused reached the broker: the last
    checkpoint between rounds of each run of events of one day. Times are for people, the
    order is the numbers': a day that comes again after another (a clock stepped back, in a
    journal written before the journal's time was held) makes a run, and a file, of its own.
    """
    table = read_table(db, table_id)
    rows = db.execute(
        "SELECT c.n, substr(c.at, 1, 10), c.open_round FROM checkpoints c JOIN tables t "
        "USING (table_id) WHERE c.table_id = ? AND c.n > t.archived_n "
        "AND c.next_seq <= t.delivered_seq + 1 ORDER BY c.n",
        (table_id,),
    ).fetchall()
    cuts: list[tuple[int, str]] = []  # (n, day), the last between rounds of each run
    for n, day, open_round in rows:
        if day >= before_day:
            break
        if open_round:
            continue
        if cuts and cuts[-1][1] == day:
            cuts[-1] = (n, day)
        else:
            cuts.append((n, day))
    if cuts:
        # An event dated later than the checkpoint after it (such a clock again) holds the
        # archive back there.
        newer = db.execute(
            "SELECT min(n) FROM events WHERE table_id = ? AND n > ? AND n <= ? "
            "AND substr(at, 1, 10) >= ?",
            (table_id, table.archived_n, cuts[-1][0], before_day),
        ).fetchone()[0]
        cuts = [c for c in cuts if newer is None or c[0] < newer]
    found = [read_checkpoint(db, table_id, n) for n, _ in cuts]
    return [c for c in found if c is not None]


def read_rounds(db: sqlite3.Connection, table_id: str | None = None) -> list[RoundEntry]:
    rows = (
        db.execute("SELECT * FROM rounds ORDER BY table_id, round_id")
        if table_id is None
        else db.execute("SELECT * FROM rounds WHERE table_id = ? ORDER BY round_id", (table_id,))
    )
    return [
        RoundEntry(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), tuple(json.loads(r[8])))
        for r in rows
    ]


def read_legacy(db: sqlite3.Connection) -> list[LegacyMessage]:
    rows = db.execute(
        "SELECT id, table_id, topic, payload, qos, retain, seq FROM legacy_outbox ORDER BY id"
    )
    return [LegacyMessage(r[0], r[1], r[2], bytes(r[3]), r[4], bool(r[5]), r[6]) for r in rows]
