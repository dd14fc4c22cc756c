"""The journal: what came in, durable before it is applied; what went out, derived from it.
Storage only: it stores each event's kind and body text and reads them back; what they mean
is the table's (daemon.table.records, daemon.table.runner), and it imports nothing of it.

- `store.Journal`: the daemon's SQLite journal on its own thread, group commit, one commit
  on a card's path, derived facts riding along (daemon/journal/store.py);
- `schema`: the file, its schema, its upgrade from schema 1; `database`: every query;
- `errors`: what cannot be read or written, and why (a `StorageFault`: the storage failed);
- `chain`: the per-table hash chain and the check that names the first broken row or line;
- `clock.JournalClock`: the time events are journaled at, never back; clock steps found;
- `archive`: days older than `keep_days`, out of the database into compressed round logs:
  the directory and its manifest (daemon/history/ writes the files and reads them back).

docs/durability.md says what is written when, and why.
"""

from daemon.journal.database import read_events
from daemon.journal.errors import JournalError, SchemaError, StorageFault, journal_error
from daemon.journal.rows import Checkpoint, JournalEvent, RoundEntry, TableRecord
from daemon.journal.schema import (
    JOURNAL_FILE,
    SCHEMA_VERSION,
    SYNC_MODES,
    EventKind,
    SyncMode,
    connect,
    prepare_state_directory,
)
from daemon.journal.store import History, Journal

__all__ = [
    "JOURNAL_FILE",
    "SCHEMA_VERSION",
    "SYNC_MODES",
    "Checkpoint",
    "EventKind",
    "History",
    "Journal",
    "JournalError",
    "JournalEvent",
    "RoundEntry",
    "SchemaError",
    "StorageFault",
    "SyncMode",
    "TableRecord",
    "connect",
    "journal_error",
    "prepare_state_directory",
    "read_events",
]
