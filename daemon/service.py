"""The daemon: every table's shoe driver and rules, one MQTT link, one journal.

Tasks (all named, all children of one TaskGroup, all cancelled together on shutdown):
- `mqtt-link`: connects, announces `online`, subscribes to each table's requests, drains the
  outbox in order, reconnects forever;
- `driver:<table>`: reads the shoe, reconnecting forever, and queues its events: it waits
  while the table's inbox holds as much of the shoe's as it may (daemon.table_inbox), or, for
  a shoe that keeps nothing, reads on and drops what finds it full, counted and told
  (daemon.shoe_line); the line's noise is told once per episode, never journaled byte by byte;
- `table:<table>`: takes the table's inbox (shoe events, link changes, new settings first;
  then requests) one item at a time: judges what the shoe sent against the journal, journals
  it, acknowledges it to the shoe, applies it, hands what it caused to the outbox. One
  consumer per table keeps the journal's order the table's order;
- `request-reports`: once per interval, one notice per table that refused requests
  without answering each (a flood: `daemon.request_gate`);
- `signals`: ends the group when SIGTERM or SIGINT asked for a stop; SIGHUP reloads the
  configuration (daemon.reload: `[logging]`, `[requests]` and `[timing]` at once, a table's
  game settings at the end of its round, every other change named as waiting for a
  restart). The handlers are installed before the journal is replayed, and reach the loop
  however busy it is (daemon.signals): a stop is honoured within a second at any time;
- `status`: the `systemctl status` line, at most once a second (daemon.status_line);
- `bridge-info`: publishes `<base>/bridge/<node>/info` again when a reload changed it;
- `metrics`: with `[metrics] enabled`, serves `/metrics` for Prometheus (daemon/metrics/);
- `archive`: every hour (and at once when the clock stepped), moves the days older than
  `keep_days` to the archive (daemon/journal/archiving.py; the archiver process writes the
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
import collections
import dataclasses
import functools
import json
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, NoReturn, TypeVar

import structlog

from daemon import logs, signals
from daemon.bridge_info import BridgeInfo
from daemon.claims import TableClaims
from daemon.config import TableSetup, load_config
from daemon.config_file import ConfigErrors
from daemon.envelope import Envelopes, utc_timestamp
from daemon.inbound import LINK_EVENTS, is_journaled, to_record
from daemon.journal import (
    JOURNAL_FILE,
    Checkpoint,
    History,
    Journal,
    JournalError,
    JournalEvent,
    StorageFault,
    journal_error,
    prepare_state_directory,
)
from daemon.journal.archive import Archive
from daemon.journal.archiving import ArchiveTask
from daemon.journal.chain import body_text
from daemon.journal.clock import ClockStep, JournalClock, describe_seconds
from daemon.journal.outbox import JournalOutbox
from daemon.journal.replay import Applied, TableReplay
from daemon.metrics import DaemonMetrics, Readings, serve_metrics
from daemon.mqtt.link import InboundMessage, LinkState, LinkStateChange, MqttLink, Presence
from daemon.mqtt.outbox import OutboundMessage
from daemon.notify import Notifier
from daemon.reload import log_plan, plan_reload
from daemon.request_gate import REPORT_INTERVAL, Refused, RequestGate
from daemon.requests import request_record
from daemon.shoe_line import Overflow, ShoeLine
from daemon.status_line import StatusLine
from daemon.storage import RETRY_FIRST, RETRY_MAX, StorageWatch
from daemon.table_inbox import TableInbox
from daemon.table_service import CONSOLE_CONTRACT, TableService
from daemon.timers import TableTimers
from daemon.topics import Topics
from daemon.version import installed_version
from drivers.noise import LineNoise, LineNoiseBegan, LineQuiet
from drivers.registry import create_driver, sequence_policy

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from daemon.config import ServiceConfig
    from daemon.journal import EventKind
    from daemon.mqtt.takeover import ClientIdInUse, LinkUnstable
    from daemon.shoe_line import LineNotice
    from daemon.table_service import Timer
    from drivers.driver import DriverEvent, Emit, LinkEvent, ShoeDriver
    from drivers.events import Event as ShoeEvent
    from drivers.noise import LineEvent
    from rules.config import TableConfig

log = structlog.get_logger("daemon")
_T = TypeVar("_T")

# A checkpoint of a table's state: at the end of every round; between rounds after this many
# events without one (a shoe left unplugged journals its link, a round never opens); in any
# state after this many (a round left open for days). Start-up replays at most that far.
CHECKPOINT_BETWEEN_ROUNDS: Final = 500
CHECKPOINT_ALWAYS: Final = 5000
# Requests that queued together are journaled in one commit, up to this many: a round's
# wagers from a chip-recognition layout fit, and a card waits behind one commit, not dozens.
REQUESTS_PER_COMMIT: Final = 64


def default_driver(setup: TableSetup) -> ShoeDriver:
    shoe = setup.shoe
    table = setup.table.table_id
    return create_driver(shoe.protocol, shoe.transport, table=table, idle_timeout=shoe.idle_timeout)


class _Stop(Exception):
    """Raised inside the TaskGroup to end it: the daemon was asked to stop."""


# What a table's queue carries, in arrival order: one small type per kind of item.
@dataclass(frozen=True, slots=True)
class ShoeItem:
    """Something the shoe said (a card, a shuffle, a fault, a heartbeat)."""

    event: ShoeEvent


@dataclass(frozen=True, slots=True)
class LinkItem:
    """The reader's link changed (connecting, connected, lost, back)."""

    event: LinkEvent


@dataclass(frozen=True, slots=True)
class LineItem:
    """What the shoe's line carried that was no frame: noise began, it ended, its report."""

    event: LineEvent


@dataclass(frozen=True, slots=True)
class OverflowItem:
    """Where the shoe's events began to be dropped, the inbox being full (daemon.shoe_line)."""

    overflow: Overflow


@dataclass(frozen=True, slots=True)
class RequestItem:
    """A dealer console's request, as it came off the broker."""

    command: str
    payload: bytes


@dataclass(frozen=True, slots=True)
class RefusedItem:
    """A request the gate refused (not journaled): its response, for the table to send."""

    command: str
    refusal: Refused


@dataclass(frozen=True, slots=True)
class StartItem:
    """The daemon started, reading the table's shoe with `protocol`, as `node`."""

    protocol: str
    node: str
    kind: ClassVar[EventKind] = "start"

    def record(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "node": self.node, "contract": CONSOLE_CONTRACT}


@dataclass(frozen=True, slots=True)
class TimerItem:
    """A deadline the table asked for has passed (daemon.timers)."""

    timer: Timer
    seconds: float
    kind: ClassVar[EventKind] = "timer"

    def record(self) -> dict[str, Any]:
        return {"timer": self.timer.kind, "key": self.timer.key, "seconds": self.seconds}


@dataclass(frozen=True, slots=True)
class ConfigItem:
    """New game settings from a reload, for the end of the round in progress."""

    table: TableConfig
    kind: ClassVar[EventKind] = "config"

    def record(self) -> dict[str, Any]:
        return {"table": self.table.to_mapping()}


@dataclass(frozen=True, slots=True)
class NoticeItem:
    """The daemon's own word to the pit: journaled, as everything the table publishes.

    `hold`: the table can no longer be sure which cards are its own (another daemon claims
    it, the broker keeps replacing this daemon's connection): from here it holds every card
    for the dealer console, as for any doubt (docs/rules.md, decision 13)."""

    kind: str
    message: str
    hold: bool = False

    def record(self) -> dict[str, Any]:
        """As journaled: `hold` only where it is set, so older journals read the same."""
        return {"kind": self.kind, "message": self.message, **({"hold": True} if self.hold else {})}


TableItem = (
    ShoeItem
    | LinkItem
    | LineItem
    | OverflowItem
    | RequestItem
    | RefusedItem
    | StartItem
    | ConfigItem
    | NoticeItem
    | TimerItem
)


@dataclass(slots=True)
class _Table:
    setup: TableSetup
    service: TableService
    driver: ShoeDriver
    # Everything the table hears, in arrival order; the shoe's and requests bounded.
    queue: TableInbox[TableItem]
    line: ShoeLine  # what the shoe's line costs the table: noise, overflow
    timers: TableTimers  # the table's deadlines, on the monotonic clock ([timing])
    replay: TableReplay | None = None  # from the journal, once recovered
    checkpoint_n: int = 0  # the event the last checkpoint followed


class Daemon:
    def __init__(
        self,
        config: ServiceConfig,
        *,
        driver_factory: Callable[[TableSetup], ShoeDriver] = default_driver,
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
            setup.table.table_id: self._new_table(setup, driver_factory(setup))
            for setup in config.tables
        }
        self.gate = RequestGate(config.requests, self.tables)
        self.claims = TableClaims(self.topics, config.mqtt.node, self.tables)
        self.info = BridgeInfo(
            installed_version(),
            config.mqtt.node,
            tuple(self.tables),
            utc_timestamp(),
            config.sha256,
        )
        self._info_changed = asyncio.Event()
        self.metrics = DaemonMetrics(
            node=config.mqtt.node,
            version=self.info.version,
            tables=list(self.tables),
            readings=self._readings,
        )
        for table in self.tables.values():
            table.service.observer = self.metrics
        self.link = self._mqtt_link()
        self._reload_note: str | None = None  # for `systemctl status`: a refusal, a restart due
        self._stop = asyncio.Event()
        self._on_ready = on_ready
        self._ready_sent = False
        self.notifier = notifier if notifier is not None else Notifier.from_environment()
        self.status_line = StatusLine(self.notifier, self._status_text)
        self.broker_state = "starting"
        self._starting = "starting"  # what the daemon does before READY=1, for systemd
        self.storage = StorageWatch(
            self.topics,
            config.mqtt.node,
            self.outbox.add_state,
            lambda: self.notifier.status(self._status_text()),
        )

    def _archive_task(self) -> ArchiveTask:
        config = self.config
        return ArchiveTask(
            self.journal, Archive(config.archive_path), config.keep_days, self.topics,
            self.clock, ready=lambda: self._ready_sent, backlog=lambda: len(self.outbox),
            notice=self._notice_every_table,
        )  # fmt: skip

    def _new_table(self, setup: TableSetup, driver: ShoeDriver) -> _Table:
        return _Table(
            setup,
            # Replaced by the journal's replay of the table as the daemon starts.
            TableService(
                setup.table,
                self.topics,
                Envelopes(setup.table.table_id),
                protocol=setup.shoe.protocol,
            ),
            driver,
            TableInbox(self.config.requests.queue),
            ShoeLine(reliable=_keeps_frames(setup.shoe.protocol)),
            TableTimers(self.config.timing.seconds()),
        )

    def _mqtt_link(self) -> MqttLink:
        return MqttLink(
            self.config.mqtt,
            self.outbox,
            on_message=self._on_message,
            subscriptions=[self.topics.request_filter(t) for t in self.tables],
            watches=self.claims.watches(),
            on_state_change=self._on_link_state,
            on_client_id_in_use=self._client_id_in_use,
            on_link_unstable=self._link_unstable,
            # Announced once connected, and the link runs only after `_recover`: a table is
            # `online` once it is rebuilt from the journal (decision D1, docs/mqtt.md).
            presences=[self.claims.presence(t) for t in self.tables] + [self._info_presence()],
        )

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
                if await self._unless_stopped(self._start()):
                    await self._serve()
                else:
                    self._stopping()
            finally:
                await self.journal.close()
        log.info("daemon.stopped")

    async def _start(self) -> None:
        """Open (or upgrade) the journal and rebuild every table from it."""
        async with asyncio.TaskGroup() as starting:
            # systemd hears from the daemon while it opens (or upgrades) and replays the
            # journal, however long that takes: a live start is never killed as stuck.
            keeping = starting.create_task(
                self.notifier.keep_starting(lambda: self._starting), name="starting"
            )
            self._starting = "opening the journal"
            directory = self.config.state_directory
            await self._readable(
                "preparing the state directory",
                functools.partial(asyncio.to_thread, prepare_state_directory, directory),
            )
            protocols = {t: s.setup.shoe.protocol for t, s in self.tables.items()}
            await self._readable("opening the journal", lambda: self.journal.open(protocols))
            await self._recover()
            keeping.cancel()

    async def _serve(self) -> None:
        """Every table's tasks and the link's, until a stop."""
        self.notifier.status(self._status_text())
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.link.run(), name="mqtt-link")
                for table_id, table in self.tables.items():
                    group.create_task(
                        table.driver.run(self._from_driver(table)), name=f"driver:{table_id}"
                    )
                    group.create_task(self._consume(table), name=f"table:{table_id}")
                group.create_task(self._signals(), name="signals")
                group.create_task(self._report_refusals(), name="request-reports")
                group.create_task(self.status_line.run(), name="status")
                group.create_task(self.notifier.watchdog_loop(), name="watchdog")
                group.create_task(self._keep_info(), name="bridge-info")
                if self.config.metrics.enabled:
                    group.create_task(
                        serve_metrics(self.metrics, self.config.metrics), name="metrics"
                    )
                group.create_task(self.archiving.run(), name="archive")
                group.create_task(self.clock.watch(), name="clock")
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

    # ---------------------------------------------------------------- recovery
    async def _recover(self) -> None:
        """Rebuild every table from its checkpoint and the events after it; queue again what
        the broker may not have (everything past the table's watermark, with its ids)."""
        self.outbox.add_legacy(
            await self._readable("reading the journal", self.journal.legacy_messages)
        )
        for table_id, table in self.tables.items():
            await self._recover_table(table_id, table)
        # The journal's time starts where the journal ends: `ts` never runs backwards.
        self.clock.begin(t.replay.at for t in self.tables.values() if t.replay is not None)

    async def _recover_table(self, table_id: str, table: _Table) -> None:
        """Replay one table's history; queue its start (and new settings) as its first items."""
        self._starting = f"replaying the journal of table {table_id}"
        history = await self._readable(
            self._starting, functools.partial(self.journal.history, table_id)
        )
        configured = table.setup.table.to_mapping()
        new = history.checkpoint is None and history.first_config is None
        replay = TableReplay.begin(
            history.table,
            self.topics,
            self.journal.epoch,
            checkpoint=history.checkpoint,
            first_config=configured if new else history.first_config,
            protocol=table.setup.shoe.protocol,
            quiet=False,
            clock=self.clock.now,
        )
        table.replay, table.service = replay, replay.service
        table.checkpoint_n = replay.n
        await self._replay_events(table_id, replay, history)
        if history.events:
            self.journal.note_checkpoint(replay.checkpoint())
            table.checkpoint_n = replay.n
        replay.service.observer = self.metrics  # counted from now: the replay was, before
        # The start and new settings are the table's first items, journaled by its
        # consumer like any other: on a full disk they wait there, the daemon runs on.
        if new:  # the settings first: a replay from the table's first event starts there
            table.queue.put_nowait(ConfigItem(table.setup.table))
        table.queue.put_nowait(StartItem(table.setup.shoe.protocol, self.config.mqtt.node))
        service = table.service
        if not new and (service.pending_config or service.config).to_mapping() != configured:
            table.queue.put_nowait(ConfigItem(table.setup.table))
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

    async def _replay_events(self, table_id: str, replay: TableReplay, history: History) -> None:
        """Apply the journaled events after the checkpoint; queue again what the broker may not
        have had (past the table's watermark)."""
        delivered = history.table.delivered_seq
        # A long replay (an upgraded journal's first) keeps the last round's end of each
        # hour as a checkpoint, as live play would have: the archive cuts days there.
        hourly: dict[str, Checkpoint] = {}
        with replay.service.replaying():
            for count, event in enumerate(history.events, start=1):
                applied = replay.apply(event)
                self.outbox.add(table_id, [m for m in applied.messages if m.seq > delivered])
                if applied.ended is not None:
                    self.journal.note_checkpoint(None, applied.ended)
                    hourly[event.at[:13]] = replay.checkpoint()
                if count % 1000 == 0:
                    total = len(history.events)
                    self._starting = f"replaying table {table_id}: {count} of {total} events"
                    await asyncio.sleep(0)  # systemd's keep-alive runs meanwhile
        for checkpoint in hourly.values():
            self.journal.note_checkpoint(checkpoint)

    # ---------------------------------------------------------------- the loop
    def _from_driver(self, table: _Table) -> Emit:
        table_id = table.setup.table.table_id
        queue, line = table.queue, table.line

        async def emit(event: DriverEvent) -> None:
            # While the journal cannot be written, the driver waits here and reads no more:
            # the shoe keeps what it dealt, unacknowledged (decision D3, daemon/storage.py).
            await self.storage.writable(table_id)
            if isinstance(event, LineNoiseBegan | LineQuiet | LineNoise):
                await queue.put(LineItem(event))
            elif isinstance(event, LINK_EVENTS):
                await queue.put(LinkItem(event))
            elif line.reliable:  # waits for room: the shoe keeps the frame meanwhile
                await queue.put(ShoeItem(event))
            elif not queue.try_put(ShoeItem(event)):
                # A shoe that keeps nothing must be read on, or the kernel drops its bytes
                # uncounted: what the table cannot take is dropped here, counted and told.
                overflow = line.refused(event)
                if overflow is not None:
                    log.warning("reader.overflow", table=table_id, capacity=queue.shoe_capacity)
                    queue.put_nowait(OverflowItem(overflow))

        return emit

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
                self._starting = f"{what}: {exc.reason}; trying again"
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)

    async def _consume(self, table: _Table) -> None:
        table_id = table.setup.table.table_id
        loop = asyncio.get_running_loop()
        timers = table.timers
        timers.follow(table.service.timers(), loop.time())
        while True:
            item = await self._next_item(table, timers)
            requests: list[RequestItem] = []
            if isinstance(item, RequestItem):  # what queued behind it too: one commit
                queued = table.queue.get_requests_nowait(REQUESTS_PER_COMMIT - 1)
                requests = [item, *(r for r in queued if isinstance(r, RequestItem))]
            while True:  # the items, until the journal has them (daemon/storage.py)
                try:
                    if len(requests) > 1:
                        await self._take_requests(table, requests)
                    else:
                        await self._take(table, item)
                except JournalError as exc:
                    await asyncio.sleep(self.storage.failing(table_id, exc))
                    continue
                self.storage.resumed(table_id)
                break
            timers.follow(table.service.timers(), loop.time())

    async def _next_item(self, table: _Table, timers: TableTimers) -> TableItem:
        """The table's next item, or a timer of the table's that has passed meanwhile."""
        loop = asyncio.get_running_loop()
        while True:
            due_at = timers.next_due()
            try:
                async with asyncio.timeout_at(due_at):
                    return await table.queue.get()
            except TimeoutError:
                for timer in timers.due(loop.time()):
                    table.queue.put_nowait(TimerItem(timer, timers.seconds(timer)))

    async def _take_requests(self, table: _Table, items: list[RequestItem]) -> None:
        """Requests that queued together: journaled in one commit, then applied in order. A
        request costs its table's cards one commit, not one each (a console that sends a
        round's wagers at once, or a flood's admitted burst)."""
        at = utc_timestamp(self.clock.now())
        table_id = table.setup.table.table_id
        bodies = [json.loads(body_text(self._request_record(item))) for item in items]
        with self.metrics.journal_commit():
            numbers = await self.journal.append_events(
                table_id, [("request", body, at) for body in bodies]
            )
        assert table.replay is not None, "a table is recovered before it takes events"
        for n, body in zip(numbers, bodies, strict=True):
            applied = table.replay.apply(JournalEvent(table_id, n, "request", body, at))
            self.outbox.add(table_id, applied.messages)
            self._checkpoint(table, applied)

    def _request_record(self, item: RequestItem) -> dict[str, Any]:
        record = request_record(item.command, item.payload)
        if self.outbox.full:  # journaled: a replay must refuse what was refused
            record["outbox_full"] = True
        return record

    async def _take(self, table: _Table, item: TableItem) -> None:
        """Journal and apply one item of the table's queue."""
        match item:
            case NoticeItem():
                await self._commit(table, "notice", item.record())
            case RequestItem():
                await self._commit(table, "request", self._request_record(item))
            case RefusedItem():
                self._answer_refusal(table, item)
            case StartItem() | TimerItem() | ConfigItem():
                await self._commit(table, item.kind, item.record())
            case LinkItem(event=event):
                await self._commit(table, "link", to_record(event))
                if self._ready_sent:
                    self.status_line.changed()
            case LineItem() | OverflowItem():
                await self._tell(table, self._line_notice(table, item))
            case ShoeItem(event=event):
                holding = table.service.doubt is not None
                await self._tell(table, table.line.before_shoe_event(event, holding=holding))
                await self._take_from_shoe(table, event)

    def _line_notice(self, table: _Table, item: LineItem | OverflowItem) -> LineNotice | None:
        """What the table is told of its shoe's line (daemon.shoe_line)."""
        line, at_stake = table.line, table.service.at_stake
        match item:
            case LineItem(event=LineNoise() as noise):
                return line.noise_reported(noise)
            case LineItem(event=LineQuiet()):
                line.noise_quiet()
                return None
            case LineItem():  # LineNoiseBegan
                return line.noise_began(at_stake=at_stake, holding=table.service.doubt is not None)
            case OverflowItem(overflow=overflow):
                return line.overflow_taken(overflow, at_stake=at_stake)

    async def _tell(self, table: _Table, notice: LineNotice | None) -> None:
        """What the shoe's line costs the table, journaled as the daemon's notice."""
        if notice is not None:
            await self._commit(table, "notice", NoticeItem(*notice).record())

    def _answer_refusal(self, table: _Table, item: RefusedItem) -> None:
        """The gate's refusal is not journaled, so its answer is outside the table's sequence
        (Envelopes.seal_unsequenced): it moves no watermark and a replay makes nothing of it."""
        refusal = item.refusal
        for out in table.service.refuse(
            item.command, refusal.transaction, refusal.code, refusal.message
        ):
            self.outbox.add_state(OutboundMessage(out.topic, out.payload, out.qos, out.retain))

    async def _take_from_shoe(self, table: _Table, event: ShoeEvent) -> None:
        """Decision D3: judged before anything is journaled, acknowledged once it is durable.

        A repeat of a frame the journal holds is acknowledged again and applied no more; a
        loss is journaled (and applied) before the frame that shows it. A heartbeat is
        judged (it may show a loss) but neither journaled nor applied: it changes nothing
        that is published (`last_seen` is the time of the reader's last journaled event).
        When the journal cannot be written, nothing is acknowledged: the shoe keeps it.
        """
        intake = table.service.judge(event)
        if intake.gap is not None:
            await self._commit(table, "shoe", to_record(intake.gap))
        if intake.conflict is not None:  # the table doubts what it holds before the frame
            await self._commit(table, "shoe", to_record(intake.conflict))
        if intake.take and is_journaled(event):
            await self._commit(table, "shoe", to_record(event), acknowledge=intake.acknowledge)
            return
        if intake.acknowledge is not None:  # a repeat of what the journal holds
            await table.driver.acknowledge(intake.acknowledge)

    async def _commit(
        self,
        table: _Table,
        kind: EventKind,
        record: dict[str, Any],
        *,
        acknowledge: int | None = None,
    ) -> None:
        """Journal the event (the one commit on its path), acknowledge the shoe's frame
        `acknowledge` (it is durable now), apply the event, hand what it caused to the
        outbox: nothing it caused leaves the process before the event is on disk."""
        at = utc_timestamp(self.clock.now())
        table_id = table.setup.table.table_id
        body = json.loads(body_text(record))  # exactly what a replay will read back
        with self.metrics.journal_commit():
            n = await self.journal.append_event(table_id, kind, body, at)
        if acknowledge is not None:
            await table.driver.acknowledge(acknowledge)
        assert table.replay is not None, "a table is recovered before it takes events"
        applied = table.replay.apply(JournalEvent(table_id, n, kind, body, at))
        self.outbox.add(table_id, applied.messages)
        self._checkpoint(table, applied)

    def _checkpoint(self, table: _Table, applied: Applied) -> None:
        """A checkpoint rides along with the next commit when a round ends, or long after
        the last one (CHECKPOINT_BETWEEN_ROUNDS, CHECKPOINT_ALWAYS)."""
        assert table.replay is not None
        since = applied.event.n - table.checkpoint_n
        between_rounds = not table.service.engine.round_open
        if (
            applied.ended is not None
            or (between_rounds and since >= CHECKPOINT_BETWEEN_ROUNDS)
            or since >= CHECKPOINT_ALWAYS
        ):
            self.journal.note_checkpoint(table.replay.checkpoint(), applied.ended)
            table.checkpoint_n = applied.event.n

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
        if self._ready_sent:
            self.status_line.changed()

    def _notice_every_table(self, kind: str, message: str) -> None:
        for table in self.tables.values():
            table.queue.put_nowait(NoticeItem(kind, message))

    async def _on_message(self, message: InboundMessage) -> None:
        claims = self.claims.heard(message.topic, message.payload)
        if claims is not None:  # another daemon's word on one of our tables (daemon.claims)
            for change in claims:
                self.tables[change.table].queue.put_nowait(
                    NoticeItem(change.kind, change.message(self.config.mqtt.node), change.began)
                )
                await self.link.announce(self.claims.presence(change.table))
            return
        parsed = self.topics.parse_request(message.topic)
        table = self.tables.get(parsed[0]) if parsed else None
        if parsed is None or table is None:
            log.warning("request.unexpected_topic", topic=message.topic)
            return
        if message.retain:
            # A retained request would be handed to us again on every reconnect and obeyed
            # again: a command is a moment, never a state. Dropped, with a line.
            log.warning("request.retained_dropped", table=parsed[0], command=parsed[1])
            return
        # Judged before it costs anything: what is refused here is not journaled.
        command = parsed[1]
        verdict = self.gate.judge(
            parsed[0], command, message.payload, room=table.queue.has_request_room
        )
        if isinstance(verdict, Refused):
            self.metrics.rejected(parsed[0], "request", verdict.code)
            if verdict.answer:
                table.queue.put_nowait(RefusedItem(command, verdict))
            if verdict.mute_for is not None:
                self._mute_flood(parsed[0], verdict.mute_for)
            return
        table.queue.offer(RequestItem(command, message.payload), reads_only=command == "status")

    def _mute_flood(self, table_id: str, seconds: float) -> None:
        """Have the broker drop the table's requests for a while: a flood (request_gate)."""
        log.warning("request.flood_muted", table=table_id, seconds=seconds)
        self.link.mute(self.topics.request_filter(table_id), seconds)
        self.tables[table_id].queue.put_nowait(
            NoticeItem(
                "requests_muted",
                f"a flood of requests: this table hears no request for {seconds:.0f} s "
                "(the others are not affected); find what publishes them",
            )
        )

    async def _report_refusals(self) -> None:
        """One notice per interval for each table that refused requests unanswered."""
        while True:
            await asyncio.sleep(REPORT_INTERVAL)
            for report in self.gate.take_reports():
                log.warning(
                    "request.flood", table=report.table, seconds=round(report.seconds, 1),
                    unanswered=report.unanswered,
                )  # fmt: skip
                self.tables[report.table].queue.put_nowait(
                    NoticeItem("requests_refused", report.message())
                )

    async def _signals(self) -> None:
        """End the task group once a stop is asked for (daemon.signals hears the signals)."""
        await self._stop.wait()
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
            table.queue.put_nowait(NoticeItem("outbox_filling", message))

    def _client_id_in_use(self, report: ClientIdInUse) -> None:
        """The broker keeps replacing our connection: every table's pit hears why."""
        for table in self.tables.values():
            table.queue.put_nowait(NoticeItem("client_id_in_use", report.message(), hold=True))

    def _link_unstable(self, report: LinkUnstable) -> None:
        """The link keeps dropping (no other client): every table's pit hears why."""
        for table in self.tables.values():
            table.queue.put_nowait(NoticeItem("link_unstable", report.message()))

    def _on_link_state(self, change: LinkStateChange) -> None:
        self.broker_state = change.state.value
        if change.state is LinkState.CONNECTED and not self._ready_sent:
            # READY=1 only now: configuration loaded, journal replayed, broker connected.
            self._ready_sent = True
            self.notifier.ready(self._status_text())
            if self._on_ready is not None:
                self._on_ready()
        elif self._ready_sent:
            self.status_line.changed()

    def _status_text(self) -> str:
        """What `systemctl status` shows: states and counts, never a card; one line however
        many tables (a datagram of a line per table would not fit 10,000 of them)."""
        readers = collections.Counter(t.service.reader.link for t in self.tables.values())
        rounds = sum(1 for t in self.tables.values() if t.service.engine.round_open)
        count = len(self.tables)
        fault = self.storage.describe()
        behind = self.clock.behind().total_seconds()
        clock = f"CLOCK {describe_seconds(behind)} BEHIND THE JOURNAL; " if behind >= 1 else ""
        return (
            ("" if fault is None else f"{fault}; ")
            + clock
            + f"broker {self.broker_state}; {len(self.outbox)} queued; "
            f"{count} table{'s' if count != 1 else ''}, readers "
            + ", ".join(f"{n} {link}" for link, n in sorted(readers.items()))
            + f"; {rounds} round{'s' if rounds != 1 else ''} open"
            + ("" if self._reload_note is None else f"; {self._reload_note}")
        )

    def _readings(self) -> Readings:
        """The daemon's state for a metrics scrape: what `_status_text` says in words."""
        return Readings(
            broker_connected=self.link.state is LinkState.CONNECTED,
            backlog=len(self.outbox),
            reader_links={table_id: t.service.reader.link for table_id, t in self.tables.items()},
            lines={table_id: t.driver.line for table_id, t in self.tables.items()},
            overflowed={table_id: t.line.overflowed for table_id, t in self.tables.items()},
        )

    def _info_presence(self) -> Presence:
        # Kept on a clean stop: it says what ran here; the bridge state says whether it runs.
        return Presence(self.topics.bridge_info(self.config.mqtt.node), self.info.payload(), None)

    async def _keep_info(self) -> NoReturn:
        """Publish the bridge info again whenever a reload changed it."""
        while True:
            await self._info_changed.wait()
            self._info_changed.clear()
            await self.link.announce(self._info_presence())  # honours a stop itself

    def reload(self) -> None:
        """SIGHUP: re-read the file; apply what is safe now, say what needs a restart.

        systemd is told RELOADING=1, then READY=1 with the status line, which names a
        refusal or what waits for a restart. Debian 12's systemd (252) takes no verdict from
        the daemon: `systemctl reload` fails because the unit's ExecReload= checks the file
        first (`shoe2mqtt check-config --daemon`) and stops before the signal."""
        if self._ready_sent:
            self.notifier.reloading()
        try:
            self._reload()
        finally:
            if self._ready_sent:  # before the first broker connection, READY=1 is not ours yet
                self.notifier.ready(self._status_text())

    def _reload(self) -> None:
        try:
            fresh = load_config(self.config.path)
        except ConfigErrors as exc:
            log.error(  # noqa: TRY400 - the mistakes are the message, not a traceback
                "config.reload_refused",
                errors=[str(e) for e in exc.errors],
                host_problems=[str(e) for e in exc.host_problems],
                running_sha256=self.info.config_sha256,
            )
            count = len(exc.errors) + len(exc.host_problems)
            self._reload_note = (
                f"reload refused ({count} mistake{'s' if count != 1 else ''} in "
                f"{self.config.path}, the log names them); the earlier settings run"
            )
            return
        plan = plan_reload(self.config, fresh)
        running = plan.running
        if plan.logging:
            logging = running.logging
            logs.configure(fmt=logging.format, level=logging.level, raw_frames=logging.raw_frames)
        if plan.requests:
            self.gate.retune(running.requests)
        for table in self.tables.values():
            if plan.requests:
                table.queue.request_capacity = running.requests.queue
            if plan.timing:
                table.timers.retime(running.timing.seconds())
        for setup in plan.games:
            # Journaled and applied in the table's order: at once between rounds, else when
            # the round in progress ends.
            table = self.tables[setup.table.table_id]
            table.setup = setup
            table.queue.put_nowait(ConfigItem(setup.table))
        self.config = running
        log_plan(plan)
        info = dataclasses.replace(
            self.info, config_sha256=running.sha256, restart_needed=plan.restart_needed
        )
        if info != self.info:
            self.info = info
            self._info_changed.set()
        waiting = ", ".join(plan.restart_needed)
        self._reload_note = f"restart needed for: {waiting}" if waiting else None


def _keeps_frames(protocol: str) -> bool:
    """Whether the shoe keeps its frames until acknowledged (docs/protocol.md §1.4)."""
    policy = sequence_policy(protocol)
    return policy is not None and policy.reliable


def run_service(config: ServiceConfig) -> int:
    logs.configure(
        fmt=config.logging.format, level=config.logging.level, raw_frames=config.logging.raw_frames
    )

    for note in config.deprecations:
        log.warning("config.deprecated", where=f"{note.path}:{note.line}", field=note.field,
                    message=note.message)  # fmt: skip

    async def main() -> None:
        await Daemon(config).run()

    asyncio.run(main())
    return 0
