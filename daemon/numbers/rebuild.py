"""A table's shift counted again from the journal at start, off the event loop.

The daemon saves a table's shift numbers beside its state every few rounds (decision N22,
daemon/numbers/saved.py): a restart takes them back and replays only the table's events
since, through the table's own replay, counting each as the live events are counted
(`ShiftStats.feed`). Without them (a journal of before, numbers of another shift) it replays
the current shift from its first round (decision N8): seconds of one core a table late in a
busy shift. Either way it runs in a worker thread, with a read-only connection of its own
(the journal's thread, which commits the tables' events, never waits on it), one event at a
time (nothing of the shift is held but the replay and its numbers), and it lets the event
loop have the interpreter between events (without that, each time the loop let go of the
GIL it waited up to the switch interval, 5 ms, for it back: on a floor the tables fell
behind their cards). It goes in passes: each replays what the journal holds beyond the last
pass, until the table has applied nothing the replay has not counted, so nothing the table
applies meanwhile needs to be kept for it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import structlog

from daemon.journal import database, schema
from daemon.numbers.live import ShiftStats
from daemon.numbers.saved import SavedNumbersError, restore
from daemon.table.log_lines import journal_line, table_line
from daemon.table.runner import TableRunner

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

    from daemon.journal.rows import Checkpoint, JournalEvent, TableRecord
    from daemon.wire.topics import Topics
    from rules.config import TableConfig

log = structlog.get_logger("daemon.numbers")


@dataclass(slots=True)
class ShiftReplay:
    """One table's shift as counted so far: `stats`, and the replay that feeds it (None until
    the shift's first round is in the journal). `n`: the last event accounted for, counted or
    before the shift."""

    stats: ShiftStats
    since: str  # the shift's start, as the journal's times are written
    replay: TableRunner | None = None
    settings: TableConfig | None = None
    n: int = 0
    replayed: int = 0  # events replayed and counted, in all passes
    resumed: bool = False  # counted on from the shift's numbers the journal kept

    def _resume(
        self, db: sqlite3.Connection, table: TableRecord, topics: Topics, epoch: str
    ) -> bool:
        """Start from the table's saved shift numbers when they are of this shift and the
        journal still holds every event after them; False to count the shift from its first
        round instead (no numbers saved, another shift's, or saved in another format)."""
        table_id = self.stats.table
        found = database.read_shift_numbers(db, table_id)
        if found is None:
            return False
        checkpoint, numbers = found
        if checkpoint.n < table.archived_n or checkpoint.n > table.last_n:
            return False
        stats = ShiftStats(table_id, self.stats.shifts, self.stats.confidence)
        try:
            restore(stats, numbers)
        except SavedNumbersError as exc:
            log.warning("numbers.saved_unusable", table=table_id, error=str(exc))
            return False
        if stats.shift != stats.shifts.shift_label(datetime.fromisoformat(self.since)):
            return False  # another shift's: this one is counted from its first round
        try:
            replay = TableRunner.begin(
                table, topics, epoch, checkpoint=checkpoint, first_config=None
            )
        except Exception as exc:  # noqa: BLE001 - a state this version cannot take: the shift
            log.warning("numbers.saved_unusable", table=table_id, error=repr(exc))
            return False
        self.stats = stats
        self.replay = replay
        self.settings = self.replay.service.config
        self.n = checkpoint.n
        self.resumed = True
        return True

    def catch_up(self, path: Path, epoch: str, topics: Topics) -> int:
        """Count what the journal at `path` holds beyond `n` (in a worker thread); returns the
        new `n`."""
        db = schema.connect(path, read_only=True)
        try:
            table = database.read_table(db, self.stats.table)
            last_n = table.last_n
            after = self.n
            if self.replay is None and self._resume(db, table, topics, epoch):
                after = self.n
            elif self.replay is None:
                start = _shift_start(db, table_id=self.stats.table, since=self.since)
                if start is None:  # no round in the shift yet: nothing before now counts
                    self.n = last_n
                    return last_n
                checkpoint, first = start
                self.replay = TableRunner.begin(
                    table, topics, epoch, checkpoint=checkpoint, first_config=first
                )
                after = checkpoint.n if checkpoint is not None else 0
            for event in database.iter_events(db, self.stats.table, after=after, through=last_n):
                self._count(event)
                self.replayed += 1
                time.sleep(0)  # the event loop's turn, if it waits for the interpreter
            self.n = last_n
            return last_n
        finally:
            db.close()

    def _count(self, event: JournalEvent) -> None:
        replay = self.replay
        assert replay is not None
        applied = replay.apply_stored(event)
        if replay.service.config is not self.settings:  # the table's paytable and shoe
            self.settings = replay.service.config
            self.stats.feed_lines([table_line(self.settings)])
        request = journal_line(event, applied.owner) if event.kind == "request" else None
        self.stats.feed(request, applied.messages)


def _shift_start(
    db: sqlite3.Connection, *, table_id: str, since: str
) -> tuple[Checkpoint | None, dict[str, Any] | None] | None:
    """Where a replay of the shift begins: the checkpoint before its first round, or the
    table's first config; None for a shift without a round."""
    rounds = [r for r in database.read_rounds(db, table_id) if r.started >= since]
    if not rounds:
        return None
    checkpoint = database.checkpoint_before(db, table_id, rounds[0].first_n, between_rounds=True)
    first = None if checkpoint is not None else database.first_config(db, table_id)
    if checkpoint is None and first is None:
        return None
    return checkpoint, first
