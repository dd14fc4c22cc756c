"""What rides along with the journal's next commit: facts derived after a commit (the
broker's watermarks, checkpoints, ended rounds, a table's shift numbers), which cost no
fsync of their own and which a crash may lose, since the replay makes each again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from daemon.journal import database

if TYPE_CHECKING:
    import sqlite3

    from daemon.journal.rows import Checkpoint, RoundEntry


@dataclass(slots=True)
class Riders:
    """Derived facts waiting for the next commit to carry them."""

    delivered: dict[str, int] = field(default_factory=dict)
    legacy_delivered: list[int] = field(default_factory=list)
    checkpoints: list[tuple[Checkpoint | None, RoundEntry | None]] = field(default_factory=list)
    protocols: dict[str, str] = field(default_factory=dict)  # for replays of upgraded journals
    # Each table's newest shift numbers, with its state at the same event.
    shift_numbers: dict[str, tuple[Checkpoint, dict[str, Any]]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(
            self.delivered or self.legacy_delivered or self.checkpoints or self.protocols
            or self.shift_numbers
        )  # fmt: skip

    def merge_older(self, older: Riders) -> None:
        """Put back what a failed commit could not carry, before what came since."""
        self.protocols = {**older.protocols, **self.protocols}
        for table_id, seq in older.delivered.items():
            self.delivered[table_id] = max(seq, self.delivered.get(table_id, 0))
        self.legacy_delivered[:0] = older.legacy_delivered
        self.checkpoints[:0] = older.checkpoints
        self.shift_numbers = {**older.shift_numbers, **self.shift_numbers}

    def write(self, db: sqlite3.Connection) -> None:
        for table_id, protocol in self.protocols.items():
            database.set_protocol(db, table_id, protocol)
        database.mark_delivered(db, self.delivered)
        database.forget_legacy(db, self.legacy_delivered)
        for checkpoint, entry in self.checkpoints:
            if entry is not None:
                database.write_round(db, entry)
            if checkpoint is not None:
                database.write_checkpoint(db, checkpoint)
        for checkpoint, numbers in self.shift_numbers.values():
            database.write_shift_numbers(db, checkpoint, numbers)
