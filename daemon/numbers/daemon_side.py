"""The daemon's side of the live numbers: each table's `ShiftStats`, fed as events are applied,
published as the retained `<table>/stats` state and set as metrics when a round ends, saved
beside the table's state every `SAVE_EVERY` rounds (`checkpointed`, daemon/numbers/saved.py),
and rebuilt at start from the journal (from the saved numbers, or the current shift's
rounds, replayed off the event loop: daemon/numbers/rebuild.py).

The daemon calls five things: `StatsHub(...)` once, `applied` after each journaled event is
applied, `checkpointed` with each checkpoint its commits take (wired by `of_daemon`), and
`rebuild` and `keep_days` as tasks once its tables are recovered (marked in
daemon/service.py). Until a table's rebuild is done, what it applies is counted by the
rebuild, from the journal: nothing of it is held here. `keep_days` publishes each table's
closed days (`<table>/days`, daemon/numbers/days.py) at start and whenever a table's round
opens a new gaming day.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Final

import structlog

from daemon.journal.rows import JournalEvent
from daemon.mqtt.outbox import OutboundMessage
from daemon.numbers.days import TableDays, count_apart, may_hold_closed_days
from daemon.numbers.live import ShiftStats
from daemon.numbers.periods import Shifts
from daemon.numbers.rebuild import ShiftReplay
from daemon.numbers.saved import saved
from daemon.table.log_lines import journal_line
from daemon.table.records import RequestRecord

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from daemon.journal.rows import Checkpoint
    from daemon.journal.store import Journal
    from daemon.numbers.settings import NumbersConfig
    from daemon.service import Daemon
    from daemon.table.runner import Applied
    from daemon.wire.topics import Topics
    from rules.config import TableConfig

log = structlog.get_logger("daemon.numbers")

# Rounds counted between two saves of a table's shift numbers: a restart replays at most
# this many rounds a table (some 8 minutes of a busy table's play), and a save writes a row
# of some 100 kB late in a shift (its numbers and kept rounds, 40; the table's state, 60),
# where the checkpoint at every round's end writes 58 (decision N22).
SAVE_EVERY: Final = 10


@dataclass(slots=True)
class _Table:
    stats: ShiftStats
    ready: bool = False  # its shift rebuilt: what it applies is counted as it comes
    settings: TableConfig | None = None
    applied_n: int = 0  # the last event it applied
    counted_n: int = 0  # the event whose messages ended the round last counted
    saved_rounds: int = -1  # the shift's rounds when its numbers were last saved
    day: str | None = None  # the gaming day of the round last counted
    published: bool = False  # its `stats` was handed to the outbox at least once


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """How a table's numbers were rebuilt at start: whether from the numbers it saved, and
    how many of its events were replayed."""

    resumed: bool
    replayed: int


class StatsHub:
    """Every table's shift numbers, and where they go when a round ends."""

    def __init__(
        self,
        tables: Iterable[str],
        numbers: NumbersConfig,
        topics: Topics,
        publish: Callable[[OutboundMessage], None],
        on_counted: Callable[[str, dict[str, Any]], None] | None = None,
        save: Callable[[Checkpoint, dict[str, Any]], None] | None = None,
    ) -> None:
        shifts = Shifts.parse(numbers.shifts, numbers.timezone)
        self.shifts = shifts
        self._topics = topics
        self._publish = publish
        self._on_counted = on_counted
        self._save = save
        self.tables = {t: _Table(ShiftStats(t, shifts, numbers.confidence)) for t in tables}
        self._stats_topics = frozenset(topics.stats(t) for t in self.tables)
        self.days = {t: TableDays(t) for t in self.tables}
        self._numbers = numbers
        self._day_closed = asyncio.Event()
        self.rebuilt: dict[str, Rebuilt] = {}  # each table's rebuild at start, once done

    @classmethod
    def of_daemon(cls, daemon: Daemon) -> StatsHub:
        """The daemon's hub: its tables, `[numbers]`, its outbox for states, its metrics.
        The outbox keeps no copy of each table's `stats` for a broker that lost it: the hub
        makes it again (`states`)."""
        hub = cls(
            daemon.tables, daemon.config.numbers, daemon.topics, daemon.outbox.add_state,
            daemon.metrics.shift_numbers, daemon.journal.note_shift_numbers,
        )  # fmt: skip
        daemon.outbox.remade_by(hub)
        daemon.commits.on_checkpointed = hub.checkpointed
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

    def count_from_here(self, table_id: str) -> None:
        """The table's numbers counted from its next event on, with nothing to rebuild (a
        journal written from its first event: daemon.testing.floor)."""
        self.tables[table_id].ready = True

    def applied(self, table_id: str, applied: Applied, settings: TableConfig) -> None:
        """One event applied at the table, under `settings` (the table's, now). Until the
        table's shift is rebuilt, the rebuild counts it from the journal instead."""
        table = self.tables.get(table_id)
        if table is None:
            return
        table.applied_n = applied.n
        if not table.ready:
            return  # the rebuild's replay counts it, and its settings, from the journal
        if settings is not table.settings:  # the table's paytable and shoe, for its figures
            table.settings = settings
            table.stats.feed_lines([{"type": "table", **settings.to_mapping()}])
        request = None
        if isinstance(applied.record, RequestRecord):  # the request as journaled
            event = JournalEvent(table_id, applied.n, "request", applied.record.body(), applied.at)
            request = journal_line(event, applied.owner)
        counted = table.stats.feed(request, applied.messages)
        if counted:
            table.counted_n = applied.n
            self._counted(table_id)

    def checkpointed(self, table_id: str, checkpoint: Checkpoint) -> None:
        """The table's state after its event `checkpoint.n` is being journaled: its shift
        numbers go with it when that event ended a round and `SAVE_EVERY` rounds have been
        counted since they were last saved (or a new shift began), so a restart counts on
        from there (daemon/numbers/saved.py) and replays the few events since."""
        table = self.tables.get(table_id)
        if self._save is None or table is None or not table.ready:
            return
        if table.counted_n != checkpoint.n or checkpoint.open_round:
            return
        rounds = table.stats.numbers.rounds  # fewer than at the last save: a new shift's
        if 0 <= table.saved_rounds <= rounds < table.saved_rounds + SAVE_EVERY:
            return
        numbers = saved(table.stats)
        if numbers is not None:
            self._save(checkpoint, numbers)
            table.saved_rounds = rounds

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
        """Each table's current shift counted from the journal, off the event loop, in passes
        until it has counted all the table applied (daemon/numbers/rebuild.py); from then on
        the table's events are counted as they come. A table whose journal cannot be read now
        counts from its next round on: the numbers are never worth stopping a table for."""
        for table_id, table in self.tables.items():
            moment = now() if now is not None else datetime.now(UTC)
            since = self.shifts.current_shift_start(moment).astimezone(UTC).isoformat()
            shift = ShiftReplay(ShiftStats(table_id, self.shifts, self._numbers.confidence), since)
            try:
                while True:  # until the replay has counted all the table applied meanwhile
                    await asyncio.to_thread(
                        shift.catch_up, journal.path, journal.epoch, self._topics
                    )
                    if shift.n >= table.applied_n:
                        break
                table.stats = shift.stats
                self.rebuilt[table_id] = Rebuilt(shift.resumed, shift.replayed)  # not its replay
                log.info(
                    "numbers.rebuilt", table=table_id, from_saved=shift.resumed,
                    events_replayed=shift.replayed, rounds=shift.stats.numbers.rounds,
                )  # fmt: skip
            except Exception:
                log.exception("numbers.rebuild_failed", table=table_id)
            # The settings its numbers were told last: the live events tell theirs again.
            table.settings = shift.settings if table.stats is shift.stats else None
            table.ready = True
            if table.stats.numbers.rounds:
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
                counted = await self._count_days(journal, archive, due, today)
                for table_id, days in counted.items():
                    self.days[table_id].take(days, today)
                    payload = self.days[table_id].payload()
                    topic = self._topics.days(table_id)
                    self._publish(OutboundMessage(topic, payload, qos=1, retain=True))
            await self._day_closed.wait()
            self._day_closed.clear()

    async def _count_days(
        self, journal: Path, archive: Path, due: dict[str, date], today: date
    ) -> dict[str, list[dict[str, Any]]]:
        """The days `due` of each table, up to `today`: by the counting process for the
        tables that may have dealt before today, none for the others (no process)."""
        opened = datetime.combine(today, self.shifts.starts[0], tzinfo=self.shifts.zone)
        dealt = await asyncio.to_thread(may_hold_closed_days, journal, archive, due, opened)
        counted: dict[str, list[dict[str, Any]]] = {t: [] for t in due if t not in dealt}
        if not dealt:
            return counted
        job = {
            "journal": str(journal), "archive": str(archive), "base": self._topics.base,
            "shifts": self._numbers.shifts, "timezone": self._numbers.timezone,
            "confidence": self._numbers.confidence,
            "tables": {t: [due[t].isoformat(), today.isoformat()] for t in sorted(dealt)},
        }  # fmt: skip
        try:
            return counted | await count_apart(job)
        except Exception:
            log.exception("numbers.days_failed", tables=sorted(dealt))
            return counted
