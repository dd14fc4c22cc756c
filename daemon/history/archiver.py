"""The archiver: the process that writes the archive's files (`python -m daemon.history.archiver`).

The daemon starts it when days are due (daemon/journal/archive.py, `archive_due`), writes
the job to its standard input as JSON (`journal`, `archive`, `base_topic`, `before`: the
first day that is not due), and reads its report, a JSON object a line: `archived` (a file
written, checked and named in the manifest, with the checkpoint its events end at: the
daemon then takes them out of the database), `failed` (a table that could not be archived
now, and why: nothing of it was named), `quarantined` (the manifest was not one; the archive
was moved aside and a fresh one begun).

A process of its own, because the work is a replay of every event, as long as the days due
are many (twenty days after a long stop): in the daemon it would hold the interpreter's lock
and the tables would wait on it. Here it runs beside them, on its own core where there is
one, at a lower priority where it may lower it, and it reads the journal through its own
connection, in one snapshot from start to end.

Per table, from the first event not archived, each run of a day's events (database.py,
`archive_cuts`) becomes one file: written to a temporary name, synced; then checked, before
anything names it: the replay reached the very checkpoint the live table took there, and
the file read back from the disk holds the lines written (their SHA-256), every event of
the run once, in order, each chained by its hash to the one before it. Only then does it
get its name (`Archive.place`: never over another file) and its entry in the manifest
(`Archive.name`: never over another entry). What fails leaves nothing named.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.journal import database, schema
from daemon.journal.archive import Archive, ArchiveError, ArchiveFile, ManifestError
from daemon.journal.chain import GENESIS, body_text, link_hash
from daemon.journal.errors import JournalError
from daemon.system.parent import end_with_parent
from daemon.table.log_lines import journal_line, rules_lines, table_line
from daemon.table.runner import ReplayStartError, TableRunner
from daemon.wire.topics import Topics

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.journal.rows import Checkpoint, JournalEvent, RoundEntry
    from daemon.table.runner import Applied

COMPRESSION: Final = 6  # zlib's default: level 9 took a third more time for 2 % less disk
_LOOK_AT_PARENT: Final = 256  # events between looks: has the daemon gone?
_NICE: Final = 10
_BLOCK: Final = 1 << 18  # characters written to the compressor at once
# What fails one table's archiving (nothing of it named), and not the others'.
_TABLE_FAILURES: Final = (ArchiveError, JournalError, ReplayStartError, sqlite3.Error, OSError)


@dataclass(frozen=True, slots=True)
class Job:
    journal: Path
    archive: Path
    topics: Topics
    before: str  # the first day that is not due (YYYY-MM-DD)

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> Job:
        return cls(
            Path(data["journal"]), Path(data["archive"]), Topics(data["base_topic"]),
            data["before"],
        )  # fmt: skip


def run(job: Job, report: Callable[[dict[str, Any]], None]) -> None:
    """Archive what is due at every table, reporting each file as the manifest names it."""
    archive = Archive(job.archive)
    with archive.lock():
        try:
            listed = archive.files()
        except ManifestError as exc:
            where = archive.quarantine(str(exc))
            report({"quarantined": str(where), "reason": str(exc)})
            listed = []
        db = schema.connect(job.journal, read_only=True)
        try:
            db.execute("BEGIN")  # one snapshot of the journal for the whole job
            for table_id in database.read_tables(db):
                try:
                    _archive_table(db, archive, listed, table_id, job, report)
                except _TABLE_FAILURES as exc:
                    report({"failed": table_id, "error": str(exc)})
        finally:
            db.close()


def _archive_table(
    db: sqlite3.Connection,
    archive: Archive,
    listed: list[ArchiveFile],
    table_id: str,
    job: Job,
    report: Callable[[dict[str, Any]], None],
) -> None:
    """The table's files due, each named in the manifest as soon as it is checked: `listed`
    (what the manifest lists) grows with each, so that a table that fails later keeps what
    was named before."""
    table = database.read_table(db, table_id)
    ours = [f for f in listed if f.table == table_id and not f.empty]
    after = table.archived_n
    # Files a run named before the daemon took their events out of the database (it stopped
    # in between): their events leave it now.
    for file in ours:
        if file.first_n == after + 1:
            checkpoint = database.read_checkpoint(db, table_id, file.last_n)
            if checkpoint is None:
                raise ArchiveError(f"{file.file} is named, but the checkpoint at its end is gone")
            report(_archived(file, checkpoint))
            after = file.last_n
    cuts = [c for c in database.archive_cuts(db, table_id, job.before) if c.n > after]
    if not cuts:
        return
    before = next((f.last_hash for f in ours if f.last_n == after), GENESIS if not after else None)
    writer = _TableWriter(db, archive, table_id, job.topics, after, before)
    for cut in cuts:
        file = writer.write(cut, {f.file for f in listed})
        listed[:] = archive.name(listed, file)
        report(_archived(file, cut))


def _archived(file: ArchiveFile, checkpoint: Checkpoint) -> dict[str, Any]:
    entry = {**file.to_mapping(), "rounds": len(file.rounds)}
    mark = {
        "n": checkpoint.n, "next_seq": checkpoint.next_seq, "at": checkpoint.at,
        "open_round": checkpoint.open_round, "state": checkpoint.state,
    }  # fmt: skip
    return {"archived": entry, "checkpoint": mark}


@dataclass
class _TableWriter:
    """One table's files, one after another, from one replay of its events."""

    db: sqlite3.Connection
    archive: Archive
    table_id: str
    topics: Topics
    after: int  # the last event in the archive
    last_hash: str | None  # its hash (None: not known here, after a quarantine)
    replay: TableRunner = field(init=False)
    parent: int = field(default_factory=os.getppid)

    def __post_init__(self) -> None:
        db, table_id = self.db, self.table_id
        base = database.read_checkpoint(db, table_id, self.after) if self.after else None
        if self.after and base is None:
            raise ArchiveError(f"{table_id}: no checkpoint at event {self.after}, where it begins")
        self.replay = TableRunner.begin(
            database.read_table(db, table_id),
            self.topics,
            database.read_epoch(db),
            checkpoint=base,
            first_config=None if base is not None else database.first_config(db, table_id),
            record_rules=True,
        )

    def write(self, cut: Checkpoint, listed: set[str]) -> ArchiveFile:
        """The file of the events up to `cut`: written, checked, named (not yet listed)."""
        day = cut.at[:10]
        first = self.replay.n + 1
        with self.archive.temporary(self.table_id, day) as temporary:
            written, rounds = self._write(temporary, cut)
            if self.replay.n != cut.n or self.replay.checkpoint().state != cut.state:
                # The file must hold what the table did: the replay lands where it landed.
                raise ArchiveError(
                    f"{self.table_id} {day}: the replay does not reach the checkpoint at "
                    f"event {cut.n}"
                )
            read = _read_back(temporary)
            last_hash = _check(read, written, self.table_id, first, cut.n, self.last_hash)
            name = self.archive.place(temporary, self.table_id, day, read.sha256, listed)
        self.after, self.last_hash = cut.n, last_hash
        return ArchiveFile(
            self.table_id, day, name, first, cut.n, last_hash, written.lines, read.size,
            read.sha256, tuple(r.to_mapping() for r in rounds),
        )  # fmt: skip

    def _write(self, temporary: Path, cut: Checkpoint) -> tuple[_Written, list[RoundEntry]]:
        replay = self.replay
        rounds: list[RoundEntry] = []
        with temporary.open("wb") as raw:
            # No name and no time in the header: the same events make the same bytes.
            packed = gzip.GzipFile("", "wb", COMPRESSION, raw, mtime=0)
            with packed as out:
                text = _LineWriter(out)
                header = table_line(replay.service.config, replay.checkpoint())
                text.line(json.dumps(header, ensure_ascii=False))
                events = database.iter_events(self.db, self.table_id, after=replay.n, through=cut.n)
                for count, event in enumerate(events, start=1):
                    applied = replay.apply_stored(event)
                    if applied.ended is not None:
                        rounds.append(applied.ended)
                    text.applied(event, applied)
                    if count % _LOOK_AT_PARENT == 0 and os.getppid() != self.parent:
                        raise SystemExit(0)  # the daemon is gone: so is the work
                written = text.done()
            raw.flush()
            os.fsync(raw.fileno())
        return written, rounds


@dataclass(frozen=True, slots=True)
class _Written:
    lines: int
    sha256: str  # of the text, before compression


class _LineWriter:
    """Round-log lines into the compressed file, counting them and hashing the text; in
    blocks, as the compressor's own overhead per write was a sixth of the archiver's time."""

    def __init__(self, out: gzip.GzipFile) -> None:
        self._out = out
        self._digest = hashlib.sha256()
        self._lines = 0
        self._block: list[str] = []
        self._size = 0

    def line(self, text: str) -> None:
        self._block.append(text)
        self._size += len(text)
        self._lines += 1
        if self._size >= _BLOCK:
            self.flush()

    def flush(self) -> None:
        if self._block:
            data = ("\n".join(self._block) + "\n").encode()
            self._out.write(data)
            self._digest.update(data)
            self._block, self._size = [], 0

    def applied(self, event: JournalEvent, applied: Applied) -> None:
        """The lines `archive_lines` makes; a published message as its payload's own bytes
        (what the pit received, not decoded to be encoded again: a third of the time)."""
        self.line(json.dumps(journal_line(event, applied.owner), ensure_ascii=False))
        for line in rules_lines(applied):
            self.line(json.dumps(line, ensure_ascii=False))
        for message in applied.messages:
            topic = json.dumps(message.topic, ensure_ascii=False)
            retain = "true" if message.retain else "false"
            payload = message.payload.decode()
            self.line(f'{{"type": "published", "topic": {topic}, "retain": {retain}, '
                      f'"message": {payload}}}')  # fmt: skip

    def done(self) -> _Written:
        self.flush()
        return _Written(self._lines, self._digest.hexdigest())


@dataclass(frozen=True, slots=True)
class _ReadBack:
    """A written file as the disk gives it back."""

    size: int
    sha256: str  # of its bytes
    text_sha256: str  # of its text, uncompressed
    lines: int
    journal: list[dict[str, Any]]  # its journal lines


def _read_back(path: Path) -> _ReadBack:
    data = path.read_bytes()
    text = hashlib.sha256()
    lines = 0
    journal = []
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as packed:
            for raw in packed:
                text.update(raw)
                lines += 1
                if raw.startswith(b'{"type": "journal"'):
                    journal.append(json.loads(raw))
    except (OSError, EOFError, ValueError) as exc:
        raise ArchiveError(f"{path.name}: read back: {exc}") from exc
    return _ReadBack(len(data), hashlib.sha256(data).hexdigest(), text.hexdigest(), lines, journal)


def _check(
    read: _ReadBack, written: _Written, table_id: str, first: int, last: int, before: str | None
) -> str:
    """The file read back holds what was written: the same text, and every event from
    `first` to `last` once, in order, each chained to the one before (`before`: the hash of
    the event before `first`, where known). Returns the last event's hash."""
    where = f"{table_id} events {first}-{last}"
    if read.text_sha256 != written.sha256 or read.lines != written.lines:
        raise ArchiveError(f"{where}: the file read back is not what was written")
    numbers = [line["n"] for line in read.journal]
    if numbers != list(range(first, last + 1)):
        raise ArchiveError(f"{where}: the file read back does not hold each event once")
    previous = before
    for line in read.journal:
        digest = link_hash(
            previous or "", table_id, line["n"], line["kind"], line["at"], body_text(line["body"])
        )
        if previous is not None and digest != line["hash"]:
            raise ArchiveError(f"{where}: event {line['n']} does not chain to the one before")
        previous = line["hash"]
    return str(previous)


def main() -> int:
    """The job from standard input; the report, a line each, to standard output."""
    with contextlib.suppress(OSError):  # a unit's system call filter may refuse: then not
        os.nice(_NICE)  # the tables first
    data = json.load(sys.stdin)
    end_with_parent(data.get("parent"))  # the archiver ends with its daemon, killed or not
    job = Job.from_mapping(data)

    def report(line: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    run(job, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
