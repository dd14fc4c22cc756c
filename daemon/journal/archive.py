"""The archive: closed rounds older than `[journal] keep_days`, out of the live database.

Per table, gzip-compressed round logs (docs/events.md, format 2), each a run of the table's
events by number, named after the day they were journaled on:
`<archive directory>/<table>/<YYYY-MM-DD>.jsonl.gz`, and `<YYYY-MM-DD>.2.jsonl.gz`, `.3`, …
for a later run of events dated the same day (a clock that stepped back into a day already
archived, in a journal written before the journal's time was held: daemon/journal/clock.py).
A file's first line is the `table` line with the table's state where the file begins (a
checkpoint); then, for every journaled event, its `journal` line (number, kind, time, body,
hash, and the round it belongs to), the rules events it made, and a `published` line for
every message it caused, exactly as the pit received it.

`manifest.json` lists the files per table in the order of their events, with the event
numbers and hashes at their ends, their size and SHA-256, and the rounds each holds (what
`journal list` shows). A file is never overwritten and an entry never replaced: the archive
only grows. A manifest that is not one (valid JSON of another shape, say) is quarantined:
the whole archive moves aside into `quarantine.d/<when>/`, never deleted, and a fresh
archive begins; `journal verify` names it until it is repaired in place.

This module is the directory and its manifest. The files are written by the archiver, a
process of its own (daemon/history/archiver.py), so the daemon's tables never wait on the
work; daemon/history/archiving.py is the daemon's side: when to look, what is due, the
archiver run, and the events leaving the database once the manifest names their file.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import itertools
import json
import os
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.journal.rows import RoundEntry

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping

MANIFEST: Final = "manifest.json"
MANIFEST_FORMAT: Final = 1
ARCHIVE_DIRECTORY_NAME: Final = "archive"  # under the state directory, unless configured
QUARANTINE: Final = "quarantine.d"  # a dot: no table id has one (rules/config.py)
QUARANTINE_REASON: Final = "reason.txt"
LOCK: Final = ".lock"
TEMPORARY_SUFFIX: Final = ".tmp"
_HASH = re.compile(r"[0-9a-f]{64}")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_FILE = re.compile(r"[a-z0-9][a-z0-9_-]*/\d{4}-\d{2}-\d{2}(\.[0-9]+)?\.jsonl\.gz")


class ArchiveError(Exception):
    """The archive cannot be written or read as its manifest says."""


class ManifestError(ArchiveError):
    """The manifest is not a manifest: not JSON, or JSON of another shape."""


class LineError(ArchiveError):
    """A day file's line is not a round log's line of its kind: `where` names it."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(f"{where}: {detail}")
        self.where = where
        self.detail = detail


@dataclass(frozen=True, slots=True)
class ArchiveFile:
    """One run of one table's events, as the manifest lists it."""

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

    @property
    def empty(self) -> bool:
        """A file holding no event: only an earlier version wrote one (its archive cut a
        day before the one it had archived, when the clock had stepped back). Kept in the
        manifest as it was, and read past."""
        return self.last_n == 0

    def to_mapping(self) -> dict[str, Any]:
        return {
            "table": self.table, "day": self.day, "file": self.file, "first_n": self.first_n,
            "last_n": self.last_n, "last_hash": self.last_hash, "lines": self.lines,
            "bytes": self.bytes, "sha256": self.sha256, "rounds": list(self.rounds),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Quarantined:
    """An archive moved aside because its manifest was not one."""

    directory: Path
    reason: str


# ---------------------------------------------------------------- the manifest's shape
_ROUND_FIELDS: Final = {
    "table": str, "round": int, "first": int, "last": int, "started": str, "ended": str,
    "settlements": int, "voided": bool, "review": list,
}  # fmt: skip


def _field(entry: Mapping[str, Any], key: str, kind: type, where: str) -> Any:  # noqa: ANN401 - of the kind asked for
    if key not in entry:
        raise ManifestError(f"{where}: no {key!r}")
    value = entry[key]
    # A bool is an int to Python; no count or number here is ever one.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ManifestError(f"{where}: {key!r} is not a {kind.__name__}: {value!r:.60}")
    if isinstance(value, int) and value < 0:
        raise ManifestError(f"{where}: {key!r} is negative")
    return value


def _round(data: object, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: not an object")
    for key, kind in _ROUND_FIELDS.items():
        _field(data, key, kind, where)
    if not all(isinstance(reason, str) for reason in data["review"]):
        raise ManifestError(f"{where}: 'review' holds something other than words")
    return data


def _entry(data: object, where: str) -> ArchiveFile:
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: not an object")
    table, day, file = (_field(data, k, str, where) for k in ("table", "day", "file"))
    first_n, last_n, lines, size = (
        _field(data, k, int, where) for k in ("first_n", "last_n", "lines", "bytes")
    )
    last_hash, sha256 = (_field(data, k, str, where) for k in ("last_hash", "sha256"))
    rounds = _field(data, "rounds", list, where)
    if not _DAY.fullmatch(day):
        raise ManifestError(f"{where}: 'day' is not a day: {day!r:.60}")
    if not _FILE.fullmatch(file) or not file.startswith(f"{table}/"):
        # Never a path out of the archive: the tools open what the manifest names.
        raise ManifestError(f"{where}: 'file' is not a day file of table {table!r}: {file!r:.80}")
    empty = first_n == last_n == 0
    if not ((empty or _HASH.fullmatch(last_hash)) and _HASH.fullmatch(sha256)):
        raise ManifestError(f"{where}: a hash is not 64 hex digits")
    if not (empty or 1 <= first_n <= last_n):
        raise ManifestError(f"{where}: events {first_n}-{last_n} are no run of events")
    checked = tuple(_round(r, f"{where} round {i}") for i, r in enumerate(rounds))
    return ArchiveFile(table, day, file, first_n, last_n, last_hash, lines, size, sha256, checked)


def parse_manifest(data: object) -> list[ArchiveFile]:
    """The files a manifest lists, ordered per table by their events; `ManifestError` (and
    only that) for anything that is not a manifest of this format."""
    if not isinstance(data, dict):
        raise ManifestError("not a JSON object")
    if data.get("format") != MANIFEST_FORMAT or isinstance(data.get("format"), bool):
        raise ManifestError(f"format {data.get('format')!r:.20}; this shoe2mqtt reads 1")
    entries = data.get("files")
    if not isinstance(entries, list):
        raise ManifestError("'files' is not a list")
    return _in_order([_entry(e, f"files[{i}]") for i, e in enumerate(entries)])


def _in_order(listed: list[ArchiveFile]) -> list[ArchiveFile]:
    """The files per table in the order of their events; `ManifestError` if two hold the
    same name or the same events."""
    files = sorted(listed, key=lambda f: (f.table, f.first_n))
    names = [f.file for f in files]
    if len(set(names)) != len(names):
        raise ManifestError("a file is listed twice")
    for before, after in itertools.pairwise(f for f in files if not f.empty):
        if before.table == after.table and after.first_n <= before.last_n:
            raise ManifestError(
                f"{after.file} holds events from {after.first_n}, which {before.file} holds"
            )
    return files


def manifest_text(files: list[ArchiveFile]) -> str:
    return json.dumps(
        {"format": MANIFEST_FORMAT, "files": [f.to_mapping() for f in files]}, indent=1
    )


# ---------------------------------------------------------------- the directory
class Archive:
    """The archive directory and its manifest."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST

    @property
    def exists(self) -> bool:
        return self.manifest_path.exists()

    def files(self, table_id: str | None = None) -> list[ArchiveFile]:
        """Every file the manifest lists (of one table), in the order of their events per
        table. `ManifestError` if the manifest is not one; `ArchiveError` if it cannot be
        read."""
        try:
            text = self.manifest_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise ArchiveError(f"{self.manifest_path}: {exc}") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ManifestError(f"{self.manifest_path}: not JSON: {exc}") from exc
        except RecursionError as exc:  # JSON nested deeper than Python recurses
            raise ManifestError(f"{self.manifest_path}: nested too deep") from exc
        try:
            files = parse_manifest(data)
        except ManifestError as exc:
            raise ManifestError(f"{self.manifest_path}: {exc}") from exc
        return [f for f in files if table_id is None or f.table == table_id]

    def lines(self, file: ArchiveFile) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, line) of a file, from 1; `ArchiveError` at the first line that is
        not a JSON object with a `type`."""
        path = self.directory / file.file
        try:
            with gzip.open(path, "rt", encoding="utf-8") as text:
                for number, raw in enumerate(text, start=1):
                    try:
                        line = json.loads(raw)
                    except (ValueError, RecursionError) as exc:
                        raise LineError(f"{file.file} line {number}", f"not JSON: {exc}") from exc
                    if not isinstance(line, dict) or not isinstance(line.get("type"), str):
                        raise LineError(f"{file.file} line {number}", "not a round-log line")
                    yield number, line
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise ArchiveError(f"{path}: {exc}") from exc

    def name(self, listed: list[ArchiveFile], new: ArchiveFile) -> list[ArchiveFile]:
        """List `new` in the manifest beside `listed` (what it lists now), synced and renamed
        into place; returns what it lists then. No entry is ever replaced."""
        try:
            files = _in_order([*listed, new])
        except ManifestError as exc:
            raise ArchiveError(f"{new.file} cannot be listed: {exc}") from exc
        self._replace(self.manifest_path, manifest_text(files).encode())
        return files

    def place(
        self, temporary: Path, table_id: str, day: str, sha256: str, listed: Collection[str]
    ) -> str:
        """Give a checked file its name: `<table>/<day>.jsonl.gz`, or the day's next free
        `.<k>` name; never over another file, except the very same bytes left unnamed by an
        archiver that stopped before the manifest named them (`listed`: the names the
        manifest holds). Returns the name (relative)."""
        for k in itertools.count(1):
            relative = f"{table_id}/{day}.jsonl.gz" if k == 1 else f"{table_id}/{day}.{k}.jsonl.gz"
            path = self.directory / relative
            if not path.exists():
                temporary.replace(path)  # the archiver holds the lock: no other writer
                break
            if relative not in listed and _file_sha256(path) == sha256:
                temporary.unlink()
                break
        _sync_directory(path.parent)
        return relative

    @contextlib.contextmanager
    def temporary(self, table_id: str, day: str) -> Iterator[Path]:
        """A temporary file in the table's directory, removed unless placed."""
        directory = self.directory / table_id
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, name = tempfile.mkstemp(dir=directory, prefix=f".{day}.", suffix=TEMPORARY_SUFFIX)
        os.close(handle)
        path = Path(name)
        try:
            yield path
        finally:
            path.unlink(missing_ok=True)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """One writer at a time (an archiver left running by a daemon that was killed ends
        before the next one writes)."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(self.directory / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.lockf(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    def quarantine(self, reason: str) -> Path:
        """Move the whole archive aside into `quarantine.d/<now>/` (never deleted), with the
        reason beside it; the archive is then empty, ready for a fresh manifest."""
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M%SZ")
        holder = self.directory / QUARANTINE
        holder.mkdir(parents=True, exist_ok=True, mode=0o700)
        for k in itertools.count(1):
            target = holder / (stamp if k == 1 else f"{stamp}.{k}")
            with contextlib.suppress(FileExistsError):
                target.mkdir(mode=0o700)
                break
        for entry in sorted(self.directory.iterdir()):
            if entry.name not in (QUARANTINE, LOCK):
                entry.rename(target / entry.name)
        self._replace(target / QUARANTINE_REASON, f"{reason}\n".encode())
        _sync_directory(self.directory)
        _sync_directory(holder)
        return target

    def quarantined(self) -> list[Quarantined]:
        """The archives moved aside, oldest first."""
        holder = self.directory / QUARANTINE
        if not holder.is_dir():
            return []
        found = []
        for directory in sorted(p for p in holder.iterdir() if p.is_dir()):
            try:
                reason = (directory / QUARANTINE_REASON).read_text(encoding="utf-8").strip()
            except OSError:
                reason = "(no reason kept)"
            found.append(Quarantined(directory, reason))
        return found

    def remove_temporaries(self) -> tuple[int, int]:
        """Remove what an archiver killed mid-work left (`.*.tmp` in the archive and its
        tables' directories); returns how many files and bytes."""
        count = size = 0
        if not self.directory.is_dir():
            return 0, 0
        places = [self.directory] + [
            d for d in self.directory.iterdir() if d.is_dir() and d.name != QUARANTINE
        ]
        for place in places:
            for path in place.glob(f".*{TEMPORARY_SUFFIX}"):
                with contextlib.suppress(FileNotFoundError):
                    size += path.stat().st_size
                    path.unlink()
                    count += 1
        return count, size

    def _replace(self, path: Path, data: bytes) -> None:
        """Write `data` as `path`: a synced temporary renamed into place."""
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=TEMPORARY_SUFFIX
        )
        try:
            with os.fdopen(handle, "wb") as raw:
                raw.write(data)
                raw.flush()
                os.fsync(raw.fileno())
            Path(temporary).replace(path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _sync_directory(path.parent)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as raw:
        for block in iter(lambda: raw.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sync_directory(directory: Path) -> None:
    """A rename is durable once its directory is synced."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def cutoff_day(keep_days: int, now: datetime | None = None) -> str:
    """Days before this one (UTC, YYYY-MM-DD) are older than `keep_days`."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return (moment - timedelta(days=keep_days)).date().isoformat()
