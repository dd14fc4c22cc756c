"""The daemon: every table's shoe driver and rules, one MQTT link, one journal.

Tasks (all named, all children of one TaskGroup, all cancelled together on shutdown):
- `mqtt-link`: connects, announces `online`, subscribes to each table's requests, drains the
  outbox in order, reconnects forever;
- `driver:<table>`: reads the shoe, reconnecting forever, and queues its events: it waits
  while the table's inbox holds as much of the shoe's as it may (daemon.table.inbox), or, for
  a shoe that keeps nothing, reads on and drops what finds it full, counted and told
  (daemon.table.shoe_line); the line's noise is told once per episode, never journaled byte by byte;
- `table:<table>`: takes the table's inbox (shoe events, link changes, new settings first;
  then requests) one item at a time: judges what the shoe sent against the journal, journals
  it, acknowledges it to the shoe, applies it, hands what it caused to the outbox. One
  consumer per table keeps the journal's order the table's order;
- `request-reports`: once per interval, one notice per table that refused requests
  without answering each (a flood: `daemon.request_gate`);
- `signals`: ends the group when SIGTERM or SIGINT asked for a stop; SIGHUP reloads the
  configuration (daemon.configuration.reload: `[logging]`, `[requests]` and `[timing]` at
  once, a table's
  game settings at the end of its round, every other change named as waiting for a
  restart). The handlers are installed before the journal is replayed, and reach the loop
  however busy it is (daemon.system.signals): a stop is honoured within a second at any time;
- `status`: the `systemctl status` line, at most once a second (daemon.system.status_line);
- `bridge-info`: publishes `<base>/bridge/<node>/info` again when a reload changed it;
- `metrics`: with `[metrics] enabled`, serves `/metrics` for Prometheus (daemon/metrics/);
- `archive`: every hour (and at once when the clock stepped), moves the days older than
  `keep_days` to the archive (daemon/history/archiving.py; the archiver process writes the
  files);
- `clock`: once a second, holds the wall clock against the monotonic one: a step either
  way is logged (`clock.stepped`) and noticed at every table (daemon/journal/clock.py).

On start each table is rebuilt from its last checkpoint and the events journaled after it;
the messages those events caused past the table's delivered watermark are sent again, with
the ids they had, and a round that was open when the daemon stopped goes on, flagged for
review (docs/durability.md). Old days leave the live journal for the archive (`archive`).
"""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING, Any

import structlog

from daemon.history.archiving import ArchiveTask
from daemon.journal import (
    JOURNAL_FILE,
    Journal,
)
from daemon.journal.archive import Archive
from daemon.journal.clock import ClockStep, JournalClock
from daemon.metrics import DaemonMetrics, Readings, serve_metrics
from daemon.mqtt.link import MqttLink
from daemon.mqtt.link_state import LinkState
from daemon.numbers.daemon_side import StatsHub
from daemon.parts.bridge_announcer import BridgeAnnouncer
from daemon.parts.commits import TableCommits
from daemon.parts.driver_inbox import DriverInbox
from daemon.parts.items import ServedTable
from daemon.parts.journal_outbox import JournalOutbox
from daemon.parts.recovery import Recovery
from daemon.parts.reloading import Reloading
from daemon.parts.request_intake import RequestIntake
from daemon.parts.status_report import DaemonStatus
from daemon.parts.storage import StorageWatch
from daemon.request_gate import RequestGate
from daemon.system import logs, signals
from daemon.system.heap import manage_the_heap, settle_the_heap
from daemon.system.notify import Notifier
from daemon.table.claims import TableClaims
from daemon.table.inbox import TableInbox
from daemon.table.records import NoticeRecord
from daemon.table.shoe_line import ShoeLine
from daemon.table.timers import TableTimers
from daemon.version import installed_version
from daemon.wire.bridge_info import BridgeInfo
from daemon.wire.envelope import utc_timestamp
from daemon.wire.topics import Topics
from drivers.registry import create_driver, host_session, sequence_policy

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from daemon.configuration.service_config import ServiceConfig, TableSetup
    from daemon.mqtt.subscriptions import InboundMessage
    from daemon.mqtt.takeover import ClientIdInUse, LinkUnstable
    from drivers.driver import ShoeDriver
    from drivers.session import HostSession

log = structlog.get_logger("daemon")


def default_driver(setup: TableSetup, session: HostSession) -> ShoeDriver:
    """The table's driver, pumping the table's session."""
    shoe, table = setup.shoe, setup.table.table_id
    return create_driver(
        shoe.protocol, shoe.transport, table=table, idle_timeout=shoe.idle_timeout, session=session
    )


class _Stop(Exception):
    """Raised inside the TaskGroup to end it: the daemon was asked to stop."""


class Daemon:
    def __init__(
        self,
        config: ServiceConfig,
        *,
        driver_factory: Callable[[TableSetup, HostSession], ShoeDriver] = default_driver,
        on_ready: Callable[[], None] | None = None,
        notifier: Notifier | None = None,
        clock: JournalClock | None = None,
    ) -> None:
        """`clock`: the time each event is journaled at (the system's clocks; a benchmark's
        simulated days)."""
        self.config = config
        self.clock = clock or JournalClock()
        self.clock.on_step = self._clock_stepped
        self.topics = Topics(config.mqtt.base_topic)
        self.journal = Journal(
            config.state_directory / JOURNAL_FILE,
            sync="normal" if config.journal_sync == "normal" else "full",
        )
        self.archiving = self._archive_task()
        self.outbox = JournalOutbox(
            self.journal, config.outbox_limit, on_high_water=self._outbox_filling
        )
        self.tables = {
            setup.table.table_id: self._new_table(setup, driver_factory) for setup in config.tables
        }
        self.gate = RequestGate(config.requests, self.tables)
        self.claims = TableClaims(self.topics, config.mqtt.node, self.tables)
        info = BridgeInfo(
            installed_version(), config.mqtt.node, tuple(self.tables), utc_timestamp(),
            config.sha256,
        )  # fmt: skip
        self.bridge = BridgeAnnouncer(self.topics, config.mqtt.node, info)
        self.metrics = DaemonMetrics(
            node=config.mqtt.node,
            version=info.version,
            tables=list(self.tables),
            readings=self._readings,
        )
        self.reloading = Reloading(config, self.gate, self.tables, self.bridge)
        self._stop = asyncio.Event()
        self.notifier = notifier if notifier is not None else Notifier.from_environment()
        self._assemble(on_ready)

    def _assemble(self, on_ready: Callable[[], None] | None) -> None:
        """The parts over the core objects: storage, status, link, requests, commits, start."""
        config = self.config
        self.storage = StorageWatch(
            self.topics,
            config.mqtt.node,
            self.outbox.add_state,
            lambda: self.notifier.status(self.status.text()),
        )
        self.status = DaemonStatus(
            self.notifier, self.tables, self.outbox, self.clock, self.reloading, self.storage,
            on_ready=on_ready,
        )  # fmt: skip
        self.status_line = self.status.line
        self.link = self._mqtt_link()
        self.intake = RequestIntake(
            config.mqtt.node, self.topics, self.tables, self.gate, self.claims, self.metrics,
            self.link,
        )  # fmt: skip
        self.commits = TableCommits(
            self.journal, self.outbox, self.metrics, self.clock, self.storage,
            link_changed=self.status.changed,
        )  # fmt: skip
        self.stats = StatsHub.of_daemon(self)  # numbers: each table's shift (daemon/numbers/)
        self.commits.on_applied = self.stats.applied
        self.recovery = Recovery(
            config, self.journal, self.outbox, self.clock, self.topics, self.tables,
            metrics=self.metrics, storage=self.storage, notifier=self.notifier,
        )  # fmt: skip

    def _archive_task(self) -> ArchiveTask:
        config = self.config
        return ArchiveTask(
            self.journal, Archive(config.archive_path), config.keep_days, self.topics,
            self.clock, ready=lambda: self.status.ready_sent, backlog=lambda: len(self.outbox),
            notice=self._notice_every_table,
        )  # fmt: skip

    def _new_table(
        self, setup: TableSetup, driver_factory: Callable[[TableSetup, HostSession], ShoeDriver]
    ) -> ServedTable:
        session = host_session(setup.shoe.protocol)  # the table's: its service takes it
        return ServedTable(
            setup,
            driver_factory(setup, session),
            TableInbox(self.config.requests.queue),
            ShoeLine(reliable=_keeps_frames(setup.shoe.protocol)),
            TableTimers(self.config.timing.seconds()),
            session,
        )

    def _mqtt_link(self) -> MqttLink:
        return MqttLink(
            self.config.mqtt,
            self.outbox,
            on_message=self._on_message,
            on_request=self._on_request,
            subscriptions=[self.topics.request_filter(t) for t in self.tables],
            watches=self.claims.watches(),
            on_state_change=self.status.link_state,
            on_client_id_in_use=self._client_id_in_use,
            on_link_unstable=self._link_unstable,
            # Announced once connected, and the link runs only after `Recovery.recover`: a table is
            # `online` once it is rebuilt from the journal (decision D1, docs/mqtt.md).
            presences=[self.claims.presence(t) for t in self.tables] + [self.bridge.presence()],
        )

    async def _on_message(self, message: InboundMessage) -> None:
        await self.intake.on_message(message)

    def _on_request(self, message: InboundMessage) -> None:
        self.intake.take_request(message)

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        """Serve until `stop()` or a stopping signal; every task ends before this returns."""
        log.info(
            "daemon.starting",
            tables=list(self.tables),
            broker=f"{self.config.mqtt.host}:{self.config.mqtt.port}",
        )
        stop = self._stop.set
        with signals.handling(
            {signal.SIGTERM: stop, signal.SIGINT: stop, signal.SIGHUP: self.reload}
        ):
            try:
                if await self._unless_stopped(self.recovery.start()):
                    await self._serve()
                else:
                    self._stopping()
            finally:
                await self.journal.close()
        log.info("daemon.stopped")

    async def _serve(self) -> None:
        """Every table's tasks and the link's, until a stop."""
        self.notifier.status(self.status.text())
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.link.run(), name="mqtt-link")
                for table_id, table in self.tables.items():
                    group.create_task(
                        DriverInbox(table, self.storage).read_shoe(),
                        name=f"driver:{table_id}",
                    )
                    group.create_task(self.commits.consume(table), name=f"table:{table_id}")
                group.create_task(self._signals(), name="signals")
                round_states = self.commits.round_states.run(asyncio.get_running_loop().time)
                group.create_task(round_states, name="round-states")
                group.create_task(self.intake.run(), name="request-reports")
                group.create_task(self.status_line.run(), name="status")
                group.create_task(self.notifier.watchdog_loop(), name="watchdog")
                group.create_task(self._keep_info(), name="bridge-info")
                if self.config.metrics.enabled:
                    group.create_task(
                        serve_metrics(self.metrics, self.config.metrics), name="metrics"
                    )
                group.create_task(self.archiving.run(), name="archive")
                group.create_task(self.clock.watch(), name="clock")
                group.create_task(self.stats.rebuild(self.journal), name="stats")  # numbers
                days = self.stats.keep_days(self.journal.path, self.config.archive_path)
                group.create_task(days, name="stats-days")  # numbers: the closed days
        except* _Stop:
            pass

    async def _unless_stopped(self, work: Coroutine[Any, Any, None]) -> bool:
        """Run `work` to its end (True), or until a stop is asked for (False): a long
        journal's replay must not hold a SIGTERM back."""
        working = asyncio.create_task(work, name="recovery")
        stopping = asyncio.create_task(self._stop.wait(), name="stop-wait")
        try:
            await asyncio.wait([working, stopping], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (working, stopping):
                task.cancel()
            await asyncio.wait([working, stopping])
        if working.cancelled():
            return False
        working.result()  # its exception, if it failed
        return True

    # ---------------------------------------------------------------- the loop
    def _clock_stepped(self, step: ClockStep) -> None:
        """The wall clock stepped: the log, and every table's pit (journaled notices)."""
        log.warning(
            "clock.stepped",
            direction=step.direction,
            seconds=round(step.seconds, 3),
            wall=utc_timestamp(step.wall),
            journal_time=utc_timestamp(step.journal),
            found="at start" if step.found_at_start else "running",
        )
        message = step.message()
        self._notice_every_table("clock_stepped", message)
        self.archiving.clock_changed()
        self.status.changed()

    def _notice_every_table(self, kind: str, message: str) -> None:
        for table in self.tables.values():
            table.queue.put_nowait(NoticeRecord(kind, message))

    async def _signals(self) -> None:
        """End the task group once a stop is asked for (daemon.system.signals hears the signals)."""
        await self._stop.wait()
        self.commits.round_states.flush()  # a state still waiting goes out with the rest
        self._stopping()
        raise _Stop

    def _stopping(self) -> None:
        log.info("daemon.stopping")
        self.notifier.stopping("stopping: delivering what the broker has not acknowledged")

    def _outbox_filling(self, length: int, capacity: int) -> None:
        message = (
            f"{length} messages wait for the broker (limit {capacity}): "
            "new rounds stop at the limit; nothing is dropped"
        )
        for table in self.tables.values():
            table.queue.put_nowait(NoticeRecord("outbox_filling", message))

    def _client_id_in_use(self, report: ClientIdInUse) -> None:
        """The broker keeps replacing our connection: every table's pit hears why."""
        for table in self.tables.values():
            table.queue.put_nowait(NoticeRecord("client_id_in_use", report.message(), hold=True))

    def _link_unstable(self, report: LinkUnstable) -> None:
        """The link keeps dropping (no other client): every table's pit hears why."""
        for table in self.tables.values():
            table.queue.put_nowait(NoticeRecord("link_unstable", report.message()))

    def _readings(self) -> Readings:
        """The daemon's state for a metrics scrape: what the status line says in words."""
        return Readings(
            broker_connected=self.link.state is LinkState.CONNECTED,
            backlog=len(self.outbox),
            reader_links={table_id: t.service.reader.link for table_id, t in self.tables.items()},
            lines={table_id: t.driver.line for table_id, t in self.tables.items()},
            overflowed={table_id: t.line.overflowed for table_id, t in self.tables.items()},
        )

    @property
    def info(self) -> BridgeInfo:
        """The bridge info the daemon runs with (`<base>/bridge/<node>/info`)."""
        return self.bridge.info

    async def _keep_info(self) -> None:
        """Publish the bridge info again whenever a reload changed it."""
        async for presence in self.bridge.changes():
            await self.link.announce(presence)  # honours a stop itself

    def reload(self) -> None:
        """SIGHUP: re-read the file; apply what is safe now, say what needs a restart.

        systemd is told RELOADING=1, then READY=1 with the status line, which names a
        refusal or what waits for a restart. Debian 12's systemd (252) takes no verdict from
        the daemon: `systemctl reload` fails because the unit's ExecReload= checks the file
        first (`shoe2mqtt check-config --daemon`) and stops before the signal."""
        if self.status.ready_sent:
            self.notifier.reloading()
        try:
            self.reloading.reload()
            self.config = self.reloading.config
        finally:
            if self.status.ready_sent:  # before the first connection, READY=1 is not ours yet
                self.notifier.ready(self.status.text())


def _keeps_frames(protocol: str) -> bool:
    """Whether the shoe keeps its frames until acknowledged (docs/protocol.md §1.4)."""
    policy = sequence_policy(protocol)
    return policy is not None and policy.reliable


def run_service(config: ServiceConfig) -> int:
    logs.configure(
        fmt=config.logging.format, level=config.logging.level, raw_frames=config.logging.raw_frames
    )
    manage_the_heap()  # this process's own heap (decision D43), not a test's

    for note in config.deprecations:
        log.warning("config.deprecated", where=f"{note.path}:{note.line}", field=note.field,
                    message=note.message)  # fmt: skip

    async def main() -> None:
        # Start-up's objects frozen once READY=1 is sent (daemon/system/heap.py, D43).
        await Daemon(config, on_ready=settle_the_heap).run()

    asyncio.run(main())
    return 0
