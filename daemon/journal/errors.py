"""The journal's errors: what cannot be read or written, and why, in words.

`journal_error` turns an SQLite or OS error into the journal's own; a `StorageFault` says the
storage failed (a full disk, a read-only file system, an I/O error, lost permissions), with
the reason a person reads (the pit's `<table>/journal`, the log, systemd's status).
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import Final


class JournalError(Exception):
    """The journal cannot be opened, read or written."""


class SchemaError(JournalError):
    """A journal of a schema this shoe2mqtt cannot read or upgrade."""


class StorageFault(JournalError):
    """The journal cannot be written (or read) because of its storage: the disk is full, the
    file or its file system is read-only, an I/O error, the file cannot be opened. Nothing
    of the write happened; it can be tried again once the storage is back
    (docs/durability.md)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason  # in words, for the pit, the log and systemd's status


# SQLite's primary result codes (sqlite3.Error.sqlite_errorname, before any "_" detail) that
# say the storage failed, not the journal's logic, in words.
_STORAGE_REASONS: Final = {
    "SQLITE_FULL": "the disk is full",
    "SQLITE_READONLY": "the journal is read-only (its file or file system)",
    "SQLITE_IOERR": "an I/O error on the journal's disk",
    "SQLITE_CANTOPEN": "the journal cannot be opened",
    "SQLITE_PERM": "no permission to write the journal",
    "SQLITE_NOTADB": "the journal file is damaged",
    "SQLITE_CORRUPT": "the journal file is damaged",
}


_ERRNO_REASONS: Final = {
    errno.EROFS: "the journal's file system is read-only",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk is full (quota)",
    errno.EACCES: "no permission to write the journal's directory",
    errno.EPERM: "no permission to write the journal's directory",
}


def journal_error(exc: BaseException, path: Path | str = "") -> JournalError:
    """`exc` (an SQLite or OS error) as the journal's own: a `StorageFault` where the storage
    failed, with the reason in words."""
    if isinstance(exc, JournalError):
        return exc
    where = f"{path}: " if path else ""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    primary = "_".join(name.split("_")[:2])
    reason = _STORAGE_REASONS.get(primary)
    if reason is None and isinstance(exc, OSError):
        reason = exc.strerror or "an I/O error on the journal's disk"
    if reason is None:
        return JournalError(f"{where}{exc}")
    if primary == "SQLITE_IOERR" and path:
        reason = _file_system_says(Path(path)) or reason
    return StorageFault(f"{where}{exc}", reason)


def _file_system_says(path: Path) -> str | None:
    """SQLite calls a failed write an I/O error whatever the system said; a small write
    beside the journal tells the commonest causes apart (a kernel's read-only remount after
    a disk error, a full disk, lost permissions). Only ever run after a failure."""
    probe = path.with_name(f".{path.name}.probe")
    try:
        descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(descriptor, bytes(4096))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except OSError as exc:
        return _ERRNO_REASONS.get(exc.errno or 0)
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return None


# ---------------------------------------------------------------- rows
