"""The journal: what came in, durable before it is applied; what went out, derived from it.

- `store.Journal`: the daemon's SQLite journal on its own thread, group commit, one commit
  on a card's path, derived facts riding along (daemon/journal/store.py);
- `schema`: the file, its schema, its upgrade from schema 1; `database`: every query;
- `errors`: what cannot be read or written, and why (a `StorageFault`: the storage failed);
- `chain`: the per-table hash chain and the check that names the first broken row or line;
- `replay.TableReplay`: a table's events applied again, making the very messages published;
- `clock.JournalClock`: the time events are journaled at, never back; clock steps found;
- `archive`: days older than `keep_days`, out of the database into compressed round logs
  (`archive` the directory and manifest, `archiver` the process that writes the files,
  `archiving` the daemon's side);
- `outbox.JournalOutbox`: the link's outbox, delivery journaled as a per-table watermark;
- `audit`: what `shoe2mqtt journal` reads (rounds live and archived, show, export, verify).

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
