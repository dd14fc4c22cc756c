"""The archive: closed rounds older than `[journal] keep_days`, out of the live database.

Per table and day, one gzip-compressed round log (docs/events.md, format 2):
`<archive directory>/<table>/<YYYY-MM-DD>.jsonl.gz`. Its first line is the `table` line with
the table's state where the file begins (a checkpoint); then, for every journaled event, its
`journal` line (the event as the database held it: number, kind, time, body, hash, and the
round it belongs to), the rules events it made, and a `published` line for every message it
caused, exactly as the pit received it. `shoe2mqtt replay FILE` replays the day's table
events; `shoe2mqtt journal verify` follows the hash chain through the journal lines and
replays each file to check every other line.

`manifest.json` lists the files, oldest first per table, with the event numbers and hashes at
their ends, their size and SHA-256, and the rounds each holds (what `journal list` shows).

A day is archived once every message it caused has reached the broker, up to its last
checkpoint between rounds (a round that runs past midnight goes with the next day). The
order makes every crash harmless: the file is written to a temporary name, synced and
renamed; the manifest likewise; only then do the events leave the database, in one
transaction. A crash before that leaves the events where they were, and the next run writes
the file again (or finds it in the manifest and only deletes).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import structlog

from daemon.journal import database, schema
from daemon.journal.database import RoundEntry
from daemon.journal.replay import TableReplay, archive_lines, table_line

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator

    from daemon.journal.database import Checkpoint
    from daemon.journal.store import Journal
    from daemon.topics import Topics

MANIFEST: Final = "manifest.json"
MANIFEST_FORMAT: Final = 1
ARCHIVE_DIRECTORY_NAME: Final = "archive"  # under the state directory, unless configured
log = structlog.get_logger("journal.archive")


class ArchiveError(Exception):
    """The archive cannot be written or read as its manifest says."""


@dataclass(frozen=True, slots=True)
class ArchiveFile:
    """One day of one table, as the manifest lists it."""

    table: str
    day: str
    file: str  # relative to the archive directory
    first_n: int
    last_n: int
    last_hash: str
    lines: int
    bytes: int
    sha256: str
    rounds: tuple[dict[str, Any], ...]  # RoundEntry.to_mapping() of each round it holds

    def round_entries(self) -> list[RoundEntry]:
        return [RoundEntry.from_mapping(r) for r in self.rounds]


class Archive:
    """The archive directory and its manifest."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST

    def files(self, table_id: str | None = None) -> list[ArchiveFile]:
        """Every file the manifest lists (of one table), oldest first per table."""
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise ArchiveError(f"{self.manifest_path}: {exc}") from exc
        files = [ArchiveFile(**{**f, "rounds": tuple(f["rounds"])}) for f in data["files"]]
        chosen = [f for f in files if table_id is None or f.table == table_id]
        return sorted(chosen, key=lambda f: (f.table, f.first_n))

    def lines(self, file: ArchiveFile) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, line) of a file, from 1."""
        path = self.directory / file.file
        try:
            with gzip.open(path, "rt", encoding="utf-8") as text:
                for number, line in enumerate(text, start=1):
                    yield number, json.loads(line)
        except (OSError, EOFError, ValueError) as exc:
            raise ArchiveError(f"{path}: {exc}") from exc

    def write(
        self, table_id: str, day: str, lines: Iterable[dict[str, Any]], rounds: list[RoundEntry]
    ) -> ArchiveFile:
        """Write a day's file (synced, renamed into place) and list it in the manifest."""
        relative = f"{table_id}/{day}.jsonl.gz"
        path = self.directory / relative
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        digest = hashlib.sha256()
        count, first_n, last_n, last_hash = 0, 0, 0, ""
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{day}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as raw:
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed:
                    for line in lines:
                        packed.write((json.dumps(line, ensure_ascii=False) + "\n").encode())
                        count += 1
                        if line["type"] == "journal":
                            first_n = first_n or line["n"]
                            last_n, last_hash = line["n"], line["hash"]
                raw.flush()
                os.fsync(raw.fileno())
            digest.update(Path(temporary).read_bytes())
            Path(temporary).replace(path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                Path(temporary).unlink()
            raise
        _sync_directory(path.parent)
        entry = ArchiveFile(
            table_id,
            day,
            relative,
            first_n,
            last_n,
            last_hash,
            count,
            path.stat().st_size,
            digest.hexdigest(),
            tuple(r.to_mapping() for r in rounds),
        )
        kept = [f for f in self.files() if not (f.table == table_id and f.day == day)]
        self._write_manifest([*kept, entry])
        return entry

    def _write_manifest(self, files: list[ArchiveFile]) -> None:
        data = {"format": MANIFEST_FORMAT, "files": [asdict(f) for f in files]}
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".manifest.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as text:
            json.dump(data, text, indent=1)
            text.flush()
            os.fsync(text.fileno())
        Path(temporary).replace(self.manifest_path)
        _sync_directory(self.directory)


def _sync_directory(directory: Path) -> None:
    """A rename is durable once its directory is synced."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _candidates(table_id: str, before: str) -> Callable[[sqlite3.Connection], list[Checkpoint]]:
    return lambda db: database.archive_candidates(db, table_id, before)


def cutoff_day(keep_days: int, now: datetime | None = None) -> str:
    """Days before this one (UTC, YYYY-MM-DD) are older than `keep_days`."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return (moment - timedelta(days=keep_days)).date().isoformat()


def write_day(
    journal_path: Path,
    archive: Archive,
    table_id: str,
    through: Checkpoint,
    topics: Topics,
) -> ArchiveFile:
    """Replay the table's events from where the archive ends through `through` and write them
    as the file of `through`'s day (runs in a worker thread, with its own reading connection
    beside the daemon's writer)."""
    day = through.at[:10]
    db = schema.connect(journal_path, read_only=True)
    try:
        table = database.read_table(db, table_id)
        base = (
            database.read_checkpoint(db, table_id, table.archived_n) if table.archived_n else None
        )
        replay = TableReplay.begin(
            table,
            topics,
            database.read_epoch(db),
            checkpoint=base,
            first_config=None if base is not None else database.first_config(db, table_id),
            record_rules=True,
        )
        header = table_line(replay.service.config, replay.checkpoint())
        rounds: list[RoundEntry] = []

        def lines() -> Iterator[dict[str, Any]]:
            yield header
            for event in database.iter_events(
                db, table_id, after=table.archived_n, through=through.n
            ):
                applied = replay.apply(event)
                if applied.ended is not None:
                    rounds.append(applied.ended)
                yield from archive_lines(applied)

        file = archive.write(table_id, day, lines(), rounds)
        if replay.checkpoint().state != through.state:
            # The replay must land on the checkpoint the live table took: if not, the file
            # does not hold what the table did, and the events stay in the database.
            raise ArchiveError(f"{table_id} {day}: the replay does not reach the checkpoint")
        return file
    finally:
        db.close()


async def archive_due(
    journal: Journal,
    archive: Archive,
    keep_days: int,
    topics: Topics,
    *,
    now: datetime | None = None,
) -> list[ArchiveFile]:
    """Archive every table's days older than `keep_days`; returns the files written."""
    import asyncio

    before = cutoff_day(keep_days, now)
    written: list[ArchiveFile] = []
    for table_id, table in (await journal.tables()).items():
        candidates = await journal.read(_candidates(table_id, before))
        listed = {(f.table, f.day): f for f in archive.files(table_id)}
        archived_n = table.archived_n
        for checkpoint in candidates:
            day = checkpoint.at[:10]
            done = listed.get((table_id, day))
            if done is None or done.last_n < checkpoint.n or done.first_n != archived_n + 1:
                done = await asyncio.to_thread(
                    write_day, journal.path, archive, table_id, checkpoint, topics
                )
                written.append(done)
            await journal.drop_archived(table_id, checkpoint.n)
            archived_n = checkpoint.n
            log.info(
                "journal.archived",
                table=table_id,
                day=day,
                events=done.last_n - done.first_n + 1,
                rounds=len(done.rounds),
                file=done.file,
            )
    if written:
        await journal.give_back_space()
    return written
