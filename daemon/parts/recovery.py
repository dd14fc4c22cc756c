"""The daemon's start: the journal opened (or upgraded) and every table rebuilt from its last
checkpoint and the events journaled after it; the messages those events caused past the
table's delivered watermark queued again, with the ids they had; a storage fault waited
out, said to the log and to systemd (docs/durability.md)."""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, TypeVar

import structlog

from daemon.journal import StorageFault, journal_error, prepare_state_directory
from daemon.parts.storage import RETRY_FIRST, RETRY_MAX
from daemon.table.records import ConfigRecord, StartRecord
from daemon.table.runner import TableRunner

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from daemon.configuration.service_config import ServiceConfig
    from daemon.journal import Checkpoint, History, Journal
    from daemon.journal.clock import JournalClock
    from daemon.metrics import DaemonMetrics
    from daemon.parts.items import ServedTable
    from daemon.parts.journal_outbox import JournalOutbox
    from daemon.parts.storage import StorageWatch
    from daemon.system.notify import Notifier
    from daemon.wire.topics import Topics

log = structlog.get_logger("daemon")
_T = TypeVar("_T")


class Recovery:
    """Opens the journal and rebuilds the tables; `starting` says what it does meanwhile."""

    def __init__(  # noqa: PLR0913 - what a start reads and fills, each one thing
        self,
        config: ServiceConfig,
        journal: Journal,
        outbox: JournalOutbox,
        clock: JournalClock,
        topics: Topics,
        tables: Mapping[str, ServedTable],
        *,
        metrics: DaemonMetrics,
        storage: StorageWatch,
        notifier: Notifier,
    ) -> None:
        self.config = config
        self.journal = journal
        self.outbox = outbox
        self.clock = clock
        self.topics = topics
        self.tables = tables
        self.metrics = metrics
        self.storage = storage
        self.notifier = notifier
        self.starting = "starting"  # what the daemon does before READY=1, for systemd

    async def start(self) -> None:
        """Open (or upgrade) the journal and rebuild every table from it."""
        async with asyncio.TaskGroup() as starting:
            # systemd hears from the daemon while it opens (or upgrades) and replays the
            # journal, however long that takes: a live start is never killed as stuck.
            keeping = starting.create_task(
                self.notifier.keep_starting(lambda: self.starting), name="starting"
            )
            self.starting = "opening the journal"
            directory = self.config.state_directory
            await self._readable(
                "preparing the state directory",
                functools.partial(asyncio.to_thread, prepare_state_directory, directory),
            )
            protocols = {t: s.setup.shoe.protocol for t, s in self.tables.items()}
            await self._readable("opening the journal", lambda: self.journal.open(protocols))
            await self.recover()
            keeping.cancel()

    async def recover(self) -> None:
        """Rebuild every table from its checkpoint and the events after it; queue again what
        the broker may not have (everything past the table's watermark, with its ids)."""
        self.outbox.add_legacy(
            await self._readable("reading the journal", self.journal.legacy_messages)
        )
        for table_id, table in self.tables.items():
            await self._recover_table(table_id, table)
        # The journal's time starts where the journal ends: `ts` never runs backwards.
        self.clock.begin(t.runner.at for t in self.tables.values())

    async def _recover_table(self, table_id: str, table: ServedTable) -> None:
        """Replay one table's history; queue its start (and new settings) as its first items."""
        self.starting = f"replaying the journal of table {table_id}"
        history = await self._readable(
            self.starting, functools.partial(self.journal.history, table_id)
        )
        configured = table.setup.table.to_mapping()
        new = history.checkpoint is None and history.first_config is None
        runner = TableRunner.begin(
            history.table,
            self.topics,
            self.journal.epoch,
            checkpoint=history.checkpoint,
            first_config=configured if new else history.first_config,
            protocol=table.setup.shoe.protocol,
            quiet=False,
            clock=self.clock.now,
            session=table.session,
        )
        table.runner, table.service = runner, runner.service  # the table's one service
        runner.service.surveillance.configure(self.config.surveillance)  # surveillance hook
        table.checkpoint_n = runner.n
        await self._replay_events(table_id, runner, history)
        if history.events:
            self.journal.note_checkpoint(runner.checkpoint())
            table.checkpoint_n = runner.n
        runner.service.observer = self.metrics  # counted from now: the replay was, before
        # The start and new settings are the table's first items, journaled by its
        # consumer like any other: on a full disk they wait there, the daemon runs on.
        if new:  # the settings first: a replay from the table's first event starts there
            table.queue.put_nowait(ConfigRecord(table.setup.table, self.config.mqtt.contract))
        start = StartRecord(
            table.setup.shoe.protocol, self.config.mqtt.node, self.config.mqtt.contract
        )
        table.queue.put_nowait(start)
        service = table.service
        if not new and (service.pending_config or service.config).to_mapping() != configured:
            table.queue.put_nowait(ConfigRecord(table.setup.table, self.config.mqtt.contract))
        self.storage.ok(table_id)
        log.info(
            "journal.replayed",
            table=table_id,
            events=len(history.events),
            since=None if history.checkpoint is None else history.checkpoint.n,
            resending=len(self.outbox),
            round=service.round_id,
            review=list(service.review),
        )

    async def _replay_events(self, table_id: str, replay: TableRunner, history: History) -> None:
        """Apply the journaled events after the checkpoint; queue again what the broker may not
        have had (past the table's watermark)."""
        delivered = history.table.delivered_seq
        # A long replay (an upgraded journal's first) keeps the last round's end of each
        # hour as a checkpoint, as live play would have: the archive cuts days there.
        hourly: dict[str, Checkpoint] = {}
        with replay.service.replaying():
            for count, event in enumerate(history.events, start=1):
                applied = replay.apply_stored(event)
                self.outbox.add(table_id, [m for m in applied.messages if m.seq > delivered])
                if applied.ended is not None:
                    self.journal.note_checkpoint(None, applied.ended)
                    hourly[event.at[:13]] = replay.checkpoint()
                if count % 1000 == 0:
                    total = len(history.events)
                    self.starting = f"replaying table {table_id}: {count} of {total} events"
                    await asyncio.sleep(0)  # systemd's keep-alive runs meanwhile
        for checkpoint in hourly.values():
            self.journal.note_checkpoint(checkpoint)

    async def _readable(self, what: str, read: Callable[[], Awaitable[_T]]) -> _T:
        """Read the journal at start, waiting out a storage fault (the daemon stays up and
        says so, to the log and to systemd, instead of exiting to be restarted in vain)."""
        delay = RETRY_FIRST
        while True:
            try:
                return await read()
            except (StorageFault, OSError) as caught:
                exc = journal_error(caught, self.config.state_directory)
                if not isinstance(exc, StorageFault):
                    raise exc from caught
                log.error(  # noqa: TRY400 - the reason is the message; it is tried again
                    "journal.open_failed", reason=exc.reason, error=str(exc), retry_in=delay
                )
                self.starting = f"{what}: {exc.reason}; trying again"
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
