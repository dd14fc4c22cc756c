"""What an auditor reads from the journal: rounds, live and archived; one round as it was
published; one round as a replay log; and whether anything was changed after the fact.

Read-only: the database through a read-only connection (WAL lets it in beside the running
daemon), the archive through its manifest, and any archive the daemon quarantined (moved
aside, its manifest not one) once its manifest is repaired in place; one still unreadable
is named (`unread`), and `verify` fails while it is. A round is found in the live database's round
index, in the manifest of the archive, or (a round still open, or ended since the last
checkpoint) by replaying the table's last events; then it is replayed from the checkpoint
before it, so what `show` prints is what the daemon published, ids, `seq` and `ts` included.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daemon.journal import database, schema
from daemon.journal.archive import Archive, ArchiveError, ArchiveFile, LineError
from daemon.journal.chain import ChainBreak, ChainEnd, ChainRecord, body_text, check_chain
from daemon.journal.rows import RoundEntry
from daemon.journal.store import read_history
from daemon.journal.verdicts import Unread, Verdict
from daemon.table.log_lines import archive_lines, checkpoint_of_line, event_of_line, table_line
from daemon.table.runner import TableRunner
from daemon.wire.topics import Topics

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Iterator
    from pathlib import Path

    from daemon.journal.rows import Checkpoint, JournalEvent, TableRecord
    from daemon.wire.envelope import Outbound


class RoundNotFound(LookupError):
    pass


@dataclass(frozen=True, slots=True)
class FoundRound:
    """A round, and where it is: the live database, or an archive file."""

    entry: RoundEntry
    open: bool = False
    file: ArchiveFile | None = None

    def to_mapping(self) -> dict[str, Any]:
        return {
            **self.entry.to_mapping(),
            "open": self.open,
            "archive": None if self.file is None else self.file.file,
        }


class JournalReader:
    """The journal file and the archive of one state directory, read only."""

    def __init__(self, journal_path: Path, archive: Archive, topics: Topics | None = None) -> None:
        self.db: sqlite3.Connection = schema.connect(journal_path, read_only=True)
        # One snapshot of the database for the reader's whole life: the daemon may commit,
        # or archive a day, meanwhile, and the reader must see one consistent journal.
        self.db.execute("BEGIN")
        self.epoch = database.read_epoch(self.db)
        self.archive = archive
        self.topics = topics or Topics()
        self._tables = database.read_tables(self.db)
        self.unread: list[Unread] = []  # quarantined archives whose manifest is still not one
        self._archived = self._read_archives()

    def close(self) -> None:
        self.db.close()

    def _read_archives(self) -> list[ArchiveFile]:
        """The archive's files, and those of every quarantined archive whose manifest reads
        again (named from the archive directory), where the archive does not hold the same
        events: the archive's manifest is the one the daemon keeps."""
        files = [f for f in self.archive.files() if not f.empty]
        for quarantined in self.archive.quarantined():
            where = quarantined.directory.relative_to(self.archive.directory)
            try:
                inner = Archive(quarantined.directory).files()
            except ArchiveError as exc:
                self.unread.append(Unread(str(where), str(exc)))
                continue
            for file in inner:
                if not file.empty and not any(_overlap(file, f) for f in files):
                    files.append(dataclasses.replace(file, file=f"{where}/{file.file}"))
        return sorted(files, key=lambda f: (f.table, f.first_n))

    def _files(self, table_id: str | None = None) -> list[ArchiveFile]:
        """The archive's files as far as this snapshot's database says the archive reaches
        (a file the daemon writes meanwhile holds events the snapshot still has)."""
        reach = {t: record.archived_n for t, record in self._tables.items()}
        return [
            f
            for f in self._archived
            if (table_id is None or f.table == table_id) and f.last_n <= reach.get(f.table, 0)
        ]

    def archive_files(self, table_id: str) -> list[ArchiveFile]:
        """The table's archive files, in the order of their events, as far as this
        snapshot's database says the archive reaches (what the numbers read first)."""
        return self._files(table_id)

    def tables(self) -> list[str]:
        return sorted(self._tables.keys() | {f.table for f in self._files()})

    # ------------------------------------------------------------ rounds
    def rounds(self, table_id: str | None = None) -> list[FoundRound]:
        tables = self.tables() if table_id is None else [table_id]
        return [found for t in tables for found in self._rounds_of(t)]

    def _rounds_of(self, table_id: str) -> list[FoundRound]:
        found = {
            entry.round_id: FoundRound(entry, file=file)
            for file in self._files(table_id)
            for entry in file.round_entries()
        }
        for entry in database.read_rounds(self.db, table_id):
            found.setdefault(entry.round_id, FoundRound(entry))
        for tail in self._tail(table_id):
            found.setdefault(tail.entry.round_id, tail)
        return [found[k] for k in sorted(found)]

    def _tail(self, table_id: str) -> list[FoundRound]:
        """Rounds since the table's newest checkpoint: ended since, or still open."""
        table = database.read_table(self.db, table_id)
        newest = database.checkpoint_before(self.db, table_id, table.last_n + 1)
        replay = self._begin(table, newest)
        rounds = []
        for event in database.iter_events(self.db, table_id, after=replay.n):
            applied = replay.apply_stored(event)
            if applied.ended is not None:
                rounds.append(FoundRound(applied.ended))
        state = replay.checkpoint().state["round"]
        if replay.service.engine.round_open and state is not None:
            service = replay.service
            entry = RoundEntry(
                table_id, state["round_id"], state["first_n"], replay.n, state["started"],
                replay.at, len(service.round_settlements), False, tuple(service.review),
            )  # fmt: skip
            rounds.append(FoundRound(entry, open=True))
        return rounds

    def find(self, table_id: str, round_id: int) -> FoundRound:
        for found in self._rounds_of(table_id):
            if found.entry.round_id == round_id:
                return found
        raise RoundNotFound(f"no round {round_id} at table {table_id}")

    # ------------------------------------------------------------ one round
    def _begin(
        self, table: TableRecord, checkpoint: Checkpoint | None, *, record_rules: bool = False
    ) -> TableRunner:
        return TableRunner.begin(
            table,
            self.topics,
            self.epoch,
            checkpoint=checkpoint,
            first_config=None
            if checkpoint is not None
            else database.first_config(self.db, table.table_id),
            record_rules=record_rules,
        )

    def _replay_to(
        self, found: FoundRound, *, record_rules: bool
    ) -> tuple[TableRunner, Iterator[JournalEvent]]:
        """A replay just before the round's first event, and the events from there on."""
        entry = found.entry
        table = database.read_table(self.db, entry.table_id)
        if found.file is not None:
            lines = self.archive.lines(found.file)
            _, header = next(lines)
            checkpoint = checkpoint_of_line(entry.table_id, header)
            replay = TableRunner.begin(
                table,
                self.topics,
                self.epoch,
                checkpoint=checkpoint,
                first_config=None if checkpoint is not None else _settings(header),
                record_rules=record_rules,
            )
            events: Iterator[JournalEvent] = (
                event_of_line(line) for _, line in lines if line.get("type") == "journal"
            )
        else:
            start = database.checkpoint_before(self.db, entry.table_id, entry.first_n)
            replay = self._begin(table, start, record_rules=record_rules)
            events = database.iter_events(self.db, entry.table_id, after=replay.n)
        for event in events:
            if event.n >= entry.first_n:
                return replay, _chain((event,), events)
            replay.apply_stored(event)
        return replay, iter(())

    def show(self, found: FoundRound) -> list[dict[str, Any]]:
        """Every journaled event of the round, the rules events it made and the messages it
        caused, as the archive writes them: the messages exactly as published."""
        replay, events = self._replay_to(found, record_rules=True)
        entry = found.entry
        lines: list[dict[str, Any]] = []
        for event in events:
            if event.n > entry.last_n:
                break
            applied = replay.apply_stored(event)
            if applied.owner == entry.round_id:
                lines.extend(archive_lines(event, applied))
        return lines

    def export(self, found: FoundRound) -> list[dict[str, Any]]:
        """The round as a replay log: the table line with the table's state at the round's
        start, then the table events of the round."""
        replay, events = self._replay_to(found, record_rules=True)
        entry = found.entry
        lines = [table_line(replay.service.config, replay.checkpoint())]
        for event in events:
            if event.n > entry.last_n:
                break
            applied = replay.apply_stored(event)
            if applied.owner == entry.round_id:
                lines.extend(
                    line
                    for line in archive_lines(event, applied)
                    if line["type"] not in {"journal", "published"}
                )
        return lines

    # ------------------------------------------------------------ delivery
    def undelivered(self, table_id: str) -> list[Outbound]:
        """The table's messages past its delivered watermark, as a restart would send them
        again (what waits for the broker, as far as the journal knows)."""
        history = read_history(self.db, table_id)
        replay = TableRunner.begin(
            history.table,
            self.topics,
            self.epoch,
            checkpoint=history.checkpoint,
            first_config=history.first_config,
        )
        delivered = history.table.delivered_seq
        return [
            message
            for event in history.events
            for message in replay.apply_stored(event).messages
            if message.seq > delivered
        ]

    # ------------------------------------------------------------ verify
    def verify(self) -> list[Verdict]:
        return [self._verify_table(t) for t in self.tables()]

    def _verify_table(self, table_id: str) -> Verdict:
        """The chain first (it names the very row or line), then the archive files' other
        lines against what their journal lines make."""
        table = database.read_table(self.db, table_id)
        files = self._files(table_id)
        try:
            records = _chain(
                *(self._archive_records(f) for f in files), self._live_records(table_id)
            )
            head = ChainEnd(table.last_n, table.last_hash) if table.last_n else None
            result = check_chain(table_id, records, head=head)
            if isinstance(result, ChainEnd):
                problem = self._verify_files(table_id, files)
                if problem is not None:
                    result = problem
        except LineError as exc:
            result = ChainBreak(table_id, exc.where, "changed", exc.detail)
        except ArchiveError as exc:
            result = ChainBreak(table_id, "the archive", "removed", str(exc))
        except (KeyError, TypeError, ValueError) as exc:  # a line of another shape, replayed
            result = ChainBreak(table_id, "the archive", "changed", f"a line not read: {exc!r}")
        if isinstance(result, ChainBreak):
            return Verdict(table_id, result, files=len(files))
        return Verdict(table_id, None, result, files=len(files), archived=table.archived_n)

    def _archive_records(self, file: ArchiveFile) -> Iterator[ChainRecord]:
        for number, line in self.archive.lines(file):
            if line.get("type") == "journal":
                where = f"{file.file} line {number}"
                try:
                    yield ChainRecord(
                        where, line["table"], line["n"], line["kind"], line["at"],
                        body_text(line["body"]), line["hash"],
                    )  # fmt: skip
                except (KeyError, TypeError, ValueError) as exc:
                    raise LineError(where, f"not a journal line ({exc!r})") from exc

    def _live_records(self, table_id: str) -> Iterator[ChainRecord]:
        for rowid, n, kind, at, body, digest in database.iter_rows(self.db, table_id):
            yield ChainRecord(f"{self._name} row {rowid}", table_id, n, kind, at, body, digest)

    @property
    def _name(self) -> str:
        return schema.JOURNAL_FILE

    def _verify_files(self, table_id: str, files: list[ArchiveFile]) -> ChainBreak | None:
        """Each archive file replays to exactly its own lines, and begins in the state the
        one before it ended in (the database's base checkpoint after the last)."""
        table = database.read_table(self.db, table_id)
        state_before: dict[str, Any] | None = None
        for file in files:
            path = self.archive.directory / file.file
            if not path.exists():
                return ChainBreak(table_id, file.file, "removed", "listed in the manifest, missing")
            lines = self.archive.lines(file)
            _, header = next(lines)
            checkpoint = checkpoint_of_line(table_id, header)
            follows = checkpoint is not None and checkpoint.state == state_before
            if state_before is not None and not follows:
                return ChainBreak(
                    table_id, f"{file.file} line 1", "changed",
                    "the table's state here is not where the file before it ended",
                )  # fmt: skip
            replay = TableRunner.begin(
                table, self.topics, self.epoch, checkpoint=checkpoint,
                first_config=None if checkpoint is not None else _settings(header),
                record_rules=True,
            )  # fmt: skip
            mismatch = _replays_to_itself(replay, file, lines)
            if mismatch is not None:
                return ChainBreak(table_id, mismatch, "changed", "not what its journal lines make")
            state_before = replay.checkpoint().state
            if hashlib.sha256(path.read_bytes()).hexdigest() != file.sha256:
                return ChainBreak(
                    table_id, file.file, "changed",
                    "its lines hold, but its bytes are not those the manifest lists",
                )  # fmt: skip
        if state_before is not None and table.archived_n:
            base = database.read_checkpoint(self.db, table_id, table.archived_n)
            if base is None or base.state != state_before:
                return ChainBreak(
                    table_id, f"{schema.JOURNAL_FILE} checkpoint {table.archived_n}", "changed",
                    "the live database does not begin where the archive ends",
                )  # fmt: skip
        return None


def _replays_to_itself(
    replay: TableRunner, file: ArchiveFile, lines: Iterator[tuple[int, dict[str, Any]]]
) -> str | None:
    """Where the file's lines differ from what replaying its journal lines makes, if they do."""
    expected: list[dict[str, Any]] = []
    for number, line in lines:
        if line.get("type") == "journal":
            if expected:
                return f"{file.file} line {number}"  # a made line is missing before this one
            event = event_of_line(line)
            expected = archive_lines(event, replay.apply_stored(event))
            if _canonical(expected.pop(0)) != _canonical(line):
                return f"{file.file} line {number}"
        elif not expected or _canonical(expected.pop(0)) != _canonical(line):
            return f"{file.file} line {number}"
    return f"{file.file} (the end)" if expected else None


def _canonical(line: dict[str, Any]) -> str:
    return json.dumps(line, sort_keys=True)


def _settings(header: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in header.items() if k not in ("type", "format", "checkpoint")}


def _chain(*parts: Iterable[Any]) -> Iterator[Any]:
    for part in parts:
        yield from part


def _overlap(one: ArchiveFile, other: ArchiveFile) -> bool:
    return one.table == other.table and one.first_n <= other.last_n and other.first_n <= one.last_n
