"""The daemon's side of the live numbers: each table's `ShiftStats`, fed as events are applied,
published as the retained `<table>/stats` state and set as metrics when a round ends, and
rebuilt at start from the journal (the current shift's rounds, replayed off the event loop).

The daemon calls four things (marked in daemon/service.py): `StatsHub(...)` once, `applied`
after each journaled event is applied, and `rebuild` and `keep_days` as tasks once its
tables are recovered. Until a table's rebuild is done, what it applies waits in order and is
counted after it. `keep_days` publishes each table's closed days (`<table>/days`,
daemon/numbers/days.py) at start and whenever a table's round opens a new gaming day.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import structlog

from daemon.journal import database, schema
from daemon.journal.rows import JournalEvent
from daemon.mqtt.outbox import OutboundMessage
from daemon.numbers.days import TableDays, count_apart
from daemon.numbers.live import ShiftStats
from daemon.numbers.periods import Shifts
from daemon.table.log_lines import journal_line, table_line
from daemon.table.records import RequestRecord
from daemon.table.runner import TableRunner

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from daemon.journal.rows import Checkpoint, TableRecord
    from daemon.journal.store import Journal
    from daemon.numbers.settings import NumbersConfig
    from daemon.service import Daemon
    from daemon.table.runner import Applied
    from daemon.wire.topics import Topics
    from rules.config import TableConfig

log = structlog.get_logger("daemon.numbers")
Pending = tuple[int, dict[str, Any] | None, list[tuple[str, bytes]]]


@dataclass(slots=True)
class _Table:
    stats: ShiftStats
    ready: bool = False
    settings: TableConfig | None = None
    pending: list[Pending] = field(default_factory=list)
    day: str | None = None  # the gaming day of the round last counted
    published: bool = False  # its `stats` was handed to the outbox at least once


class StatsHub:
    """Every table's shift numbers, and where they go when a round ends."""

    def __init__(
        self,
        tables: Iterable[str],
        numbers: NumbersConfig,
        topics: Topics,
        publish: Callable[[OutboundMessage], None],
        on_counted: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        shifts = Shifts.parse(numbers.shifts, numbers.timezone)
        self.shifts = shifts
        self._topics = topics
        self._publish = publish
        self._on_counted = on_counted
        self.tables = {t: _Table(ShiftStats(t, shifts, numbers.confidence)) for t in tables}
        self._stats_topics = frozenset(topics.stats(t) for t in self.tables)
        self.days = {t: TableDays(t) for t in self.tables}
        self._numbers = numbers
        self._day_closed = asyncio.Event()

    @classmethod
    def of_daemon(cls, daemon: Daemon) -> StatsHub:
        """The daemon's hub: its tables, `[numbers]`, its outbox for states, its metrics.
        The outbox keeps no copy of each table's `stats` for a broker that lost it: the hub
        makes it again (`states`)."""
        hub = cls(
            daemon.tables, daemon.config.numbers, daemon.topics, daemon.outbox.add_state,
            daemon.metrics.shift_numbers,
        )  # fmt: skip
        daemon.outbox.remade_by(hub)
        return hub

    def makes(self, topic: str) -> bool:
        """Whether `topic` is a table's `stats` (daemon.mqtt.outbox.RemadeStates)."""
        return topic in self._stats_topics

    def states(self) -> list[OutboundMessage]:
        """Each table's `stats` as last published, made again from its shift's numbers."""
        return [
            self._stats_message(table_id)
            for table_id, table in self.tables.items()
            if table.published
        ]

    def _stats_message(self, table_id: str) -> OutboundMessage:
        payload = self.tables[table_id].stats.payload()
        return OutboundMessage(self._topics.stats(table_id), payload, qos=1, retain=True)

    def applied(self, table_id: str, applied: Applied, settings: TableConfig) -> None:
        """One event applied at the table, under `settings` (the table's, now)."""
        table = self.tables.get(table_id)
        if table is None:
            return
        if settings is not table.settings:  # the table's paytable and shoe, for its figures
            table.settings = settings
            table.pending.append((0, {"type": "table", **settings.to_mapping()}, []))
        request = None
        if isinstance(applied.record, RequestRecord):  # the request as journaled
            event = JournalEvent(table_id, applied.n, "request", applied.record.body(), applied.at)
            request = journal_line(event, applied.owner)
        payloads = [(m.topic, m.payload) for m in applied.messages]
        table.pending.append((applied.n, request, payloads))
        if table.ready:
            self._drain(table_id, 0)

    def _drain(self, table_id: str, seeded_n: int) -> None:
        """What waited, in order (settings always; events past the rebuild's last)."""
        table, counted = self.tables[table_id], False
        for n, line, payloads in table.pending:
            if line is not None and line.get("type") == "table":
                table.stats.feed_lines([line])
            elif n > seeded_n:
                counted |= table.stats.feed(line, payloads)
        table.pending.clear()
        if counted:
            self._counted(table_id)

    def _counted(self, table_id: str) -> None:
        table = self.tables[table_id]
        stats = table.stats
        day = None if stats.shift is None else stats.shift[:10]  # "<gaming day> <start>"
        if table.day is not None and day != table.day:
            self._day_closed.set()  # a day closed at this table: keep_days counts it
        table.day = day
        self._publish(self._stats_message(table_id))
        table.published = True
        if self._on_counted is not None and stats.mapping is not None:
            self._on_counted(table_id, stats.mapping)

    async def rebuild(self, journal: Journal, now: Callable[[], datetime] | None = None) -> None:
        """Each table's current shift from the journal, then what it applied meanwhile. A
        table whose journal cannot be read now counts from its next round on: the numbers
        are never worth stopping a table for.

        A table's shift is read, replayed and counted in a worker thread with a read-only
        connection of its own, one event at a time, exactly as the live events are counted
        (`ShiftStats.feed`): neither the journal's thread (the tables' commits) nor the event
        loop waits on it, and no more than one event of the shift is held at once. A restart
        late in a busy shift replays hundreds of rounds a table (docs/performance.md)."""
        for table_id, table in self.tables.items():
            moment = now() if now is not None else datetime.now(UTC)
            since = self.shifts.current_shift_start(moment).astimezone(UTC).isoformat()
            seeded_n = 0
            stats = ShiftStats(table_id, self.shifts, self._numbers.confidence)
            try:
                seeded_n = await asyncio.to_thread(
                    _replayed, journal.path, journal.epoch, self._topics, stats, since
                )
                table.stats = stats
            except Exception:
                log.exception("numbers.rebuild_failed", table=table_id)
            table.ready = True
            shift = table.stats.numbers.rounds
            self._drain(table_id, seeded_n)
            if shift and table.stats.numbers.rounds == shift:  # rebuilt, nothing since
                self._counted(table_id)

    async def keep_days(
        self, journal: Path, archive: Path, now: Callable[[], datetime] | None = None
    ) -> None:
        """Each table's closed days, counted from the journal (`journal` and its `archive`
        directory) at start and again whenever a day closes; runs until cancelled. A journal
        that cannot be read now is read again at the next day's close."""
        while True:
            today = self.shifts.locate(now() if now is not None else datetime.now(UTC))[0]
            due = {t: d.since(today) for t, d in self.days.items() if d.since(today) < today}
            if due:
                job = {
                    "journal": str(journal), "archive": str(archive), "base": self._topics.base,
                    "shifts": self._numbers.shifts, "timezone": self._numbers.timezone,
                    "confidence": self._numbers.confidence,
                    "tables": {t: [s.isoformat(), today.isoformat()] for t, s in due.items()},
                }  # fmt: skip
                try:
                    counted = await count_apart(job)
                except Exception:
                    log.exception("numbers.days_failed", tables=sorted(due))
                    counted = {}
                for table_id, days in counted.items():
                    self.days[table_id].take(days, today)
                    payload = self.days[table_id].payload()
                    topic = self._topics.days(table_id)
                    self._publish(OutboundMessage(topic, payload, qos=1, retain=True))
            await self._day_closed.wait()
            self._day_closed.clear()


def _shift_start(
    db: sqlite3.Connection, *, table_id: str, since: str
) -> tuple[TableRecord, Checkpoint | None, dict[str, Any] | None] | None:
    """Where a replay of the shift begins: the checkpoint before its first round (or the
    table's first config), and the table as it stands; None for a shift without rounds."""
    rounds = [r for r in database.read_rounds(db, table_id) if r.started >= since]
    if not rounds:
        return None
    table = database.read_table(db, table_id)
    checkpoint = database.checkpoint_before(db, table_id, rounds[0].first_n, between_rounds=True)
    first = None if checkpoint is not None else database.first_config(db, table_id)
    if checkpoint is None and first is None:
        return None
    return table, checkpoint, first


def _replayed(path: Path, epoch: str, topics: Topics, stats: ShiftStats, since: str) -> int:
    """Count the table's shift since `since` into `stats` (off the event loop), the events
    replayed and counted one at a time as `StatsHub.applied` counts them live; returns the
    last event's number (0: the shift has no round yet)."""
    db = schema.connect(path, read_only=True)
    try:
        start = _shift_start(db, table_id=stats.table, since=since)
        if start is None:
            return 0
        table, checkpoint, first = start
        replay = TableRunner.begin(table, topics, epoch, checkpoint=checkpoint, first_config=first)
        settings = replay.service.config
        stats.feed_lines([table_line(settings)])
        after = checkpoint.n if checkpoint is not None else 0
        for event in database.iter_events(db, stats.table, after=after, through=table.last_n):
            applied = replay.apply_stored(event)
            if replay.service.config is not settings:  # the table's paytable and shoe changed
                settings = replay.service.config
                stats.feed_lines([table_line(settings)])
            request = journal_line(event, applied.owner) if event.kind == "request" else None
            stats.feed(request, [(m.topic, m.payload) for m in applied.messages])
        return replay.n
    finally:
        db.close()
