"""The daemon: every table's shoe driver and rules, one MQTT link, under one TaskGroup.

Tasks (all named, all children of one TaskGroup, all cancelled together on shutdown):
- `mqtt-link`: connects, announces `online`, subscribes to each table's requests, drains the
  outbox in order, reconnects forever;
- `driver:<table>`: reads the shoe, reconnecting forever, and queues its events;
- `table:<table>`: applies the queued events to the table's rules and queues messages;
- `signals`: SIGTERM and SIGINT stop the daemon cleanly; SIGHUP reloads the configuration
  where that is safe (logging at once; a table's game settings between rounds).
"""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from daemon import logs
from daemon.config import ConfigErrors, TableSetup, load_config
from daemon.envelope import Envelopes, Outbound, utc_timestamp
from daemon.mqtt.errors import OutboxFull
from daemon.mqtt.link import InboundMessage, LinkStateChange, MqttLink
from daemon.mqtt.outbox import MemoryOutbox, OutboundMessage
from daemon.table_service import TableService
from daemon.topics import Topics
from drivers.driver import Connected, Connecting, Disconnected, LinkFault, Reconnected
from drivers.registry import create_driver

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.config import ServiceConfig
    from daemon.mqtt.outbox import Outbox
    from drivers.driver import ShoeDriver

log = structlog.get_logger("daemon")

_LINK_EVENTS = (Connecting, Connected, Disconnected, LinkFault, Reconnected)


def default_driver(setup: TableSetup) -> ShoeDriver:
    shoe = setup.shoe
    return create_driver(shoe.driver, shoe.transport, idle_timeout=shoe.idle_timeout)


class _Stop(Exception):
    """Raised inside the TaskGroup to end it: the daemon was asked to stop."""


@dataclass(slots=True)
class _Table:
    setup: TableSetup
    service: TableService
    driver: ShoeDriver
    queue: asyncio.Queue[object] = field(default_factory=asyncio.Queue)


class Daemon:
    def __init__(
        self,
        config: ServiceConfig,
        *,
        outbox: Outbox | None = None,
        driver_factory: Callable[[TableSetup], ShoeDriver] = default_driver,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.topics = Topics(config.mqtt.base_topic)
        self.outbox = outbox or MemoryOutbox(
            config.outbox_limit, on_high_water=self._outbox_filling
        )
        self.tables = {
            setup.game.table_id: _Table(
                setup,
                TableService(setup.game, self.topics, Envelopes(setup.game.table_id)),
                driver_factory(setup),
            )
            for setup in config.tables
        }
        self.link = MqttLink(
            config.mqtt,
            self.outbox,
            on_message=self._on_message,
            subscriptions=[self.topics.request_filter(t) for t in self.tables],
            on_state_change=self._on_link_state,
        )
        self.logging = config.logging  # as configured by run_service, changed by reloads
        self._stop = asyncio.Event()
        self._on_ready = on_ready
        self.broker_state = "starting"

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        """Serve until `stop()` or a stopping signal; every task ends before this returns."""
        log.info(
            "starting",
            tables=list(self.tables),
            broker=f"{self.config.mqtt.host}:{self.config.mqtt.port}",
        )
        for table in self.tables.values():
            # Retained state and snapshot at once, so displays never show a stale table.
            self._send([table.service.state(), table.service.snapshot()])
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.link.run(), name="mqtt-link")
                for table_id, table in self.tables.items():
                    group.create_task(table.driver.run(table.queue.put), name=f"driver:{table_id}")
                    group.create_task(self._consume(table), name=f"table:{table_id}")
                group.create_task(self._signals(), name="signals")
                if self._on_ready is not None:
                    self._on_ready()
        except* _Stop:
            pass
        log.info("stopped")

    async def _signals(self) -> None:
        loop = asyncio.get_running_loop()
        stopping = (signal.SIGTERM, signal.SIGINT)
        for signum in stopping:
            loop.add_signal_handler(signum, self._stop.set)
        loop.add_signal_handler(signal.SIGHUP, self.reload)
        try:
            await self._stop.wait()
        finally:
            for signum in (*stopping, signal.SIGHUP):
                loop.remove_signal_handler(signum)
        log.info("stopping")
        raise _Stop

    async def _consume(self, table: _Table) -> None:
        service = table.service
        while True:
            event = await table.queue.get()
            if isinstance(event, _LINK_EVENTS):
                self._send(service.on_link_event(event))
            else:
                self._send(service.on_shoe_event(event, seen_at=utc_timestamp()))  # type: ignore[arg-type]

    async def _on_message(self, message: InboundMessage) -> None:
        parsed = self.topics.parse_request(message.topic)
        table = self.tables.get(parsed[0]) if parsed else None
        if parsed is None or table is None:
            log.warning("message on an unexpected topic dropped", topic=message.topic)
            return
        self._send(table.service.on_request(parsed[1], message.payload))

    def _send(self, messages: list[Outbound]) -> None:
        for message in messages:
            try:
                self.outbox.put(
                    OutboundMessage(message.topic, message.payload, message.qos, message.retain)
                )
            except OutboxFull:
                # Not silent: the line names the message, so it can be recovered from the log
                # until the journal (which keeps every message on disk) takes over.
                log.error(  # noqa: TRY400 - expected condition: a traceback would add nothing
                    "outbox full: message not queued",
                    topic=message.topic,
                    event_id=message.event_id,
                )

    def _outbox_filling(self, length: int, capacity: int) -> None:
        log.warning("outbox filling while the broker is away", queued=length, capacity=capacity)

    def _on_link_state(self, change: LinkStateChange) -> None:
        self.broker_state = change.state.value
        log.info(
            "broker link", state=change.state.value, reason=change.reason, retry_in=change.retry_in
        )

    def reload(self) -> None:
        """SIGHUP: re-read the file; apply what is safe now, say what needs a restart."""
        try:
            fresh = load_config(self.config.path)
        except ConfigErrors as exc:
            log.error(  # noqa: TRY400 - the mistakes are the message, not a traceback
                "reload refused: the configuration has mistakes",
                errors=[str(e) for e in exc.errors],
            )
            return
        if fresh.logging != self.logging:
            self.logging = fresh.logging
            logs.configure(
                fmt=fresh.logging.format,
                level=fresh.logging.level,
                raw_frames=fresh.logging.raw_frames,
            )
        if fresh.mqtt != self.config.mqtt:
            log.warning("reload: [mqtt] changed; restart the service to apply it")
        for setup in fresh.tables:
            table = self.tables.get(setup.game.table_id)
            if table is None:
                log.warning("reload: a new table needs a restart", table=setup.game.table_id)
                continue
            if setup.shoe != table.setup.shoe:
                log.warning(
                    "reload: shoe settings changed; restart to apply", table=setup.game.table_id
                )
            if setup.game != table.setup.game:
                applied = table.service.reconfigure(setup.game)
                if applied:
                    table.setup = TableSetup(setup.game, table.setup.shoe)
                log.info("reload: table settings", table=setup.game.table_id, applied=applied)
        log.info("configuration reloaded")


def run_service(config: ServiceConfig) -> int:
    logs.configure(
        fmt=config.logging.format, level=config.logging.level, raw_frames=config.logging.raw_frames
    )

    async def main() -> None:
        await Daemon(config).run()

    asyncio.run(main())
    return 0
