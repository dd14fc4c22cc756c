"""The dealer consoles' requests as they come off the broker: another daemon's word on one of
our tables (daemon.table.claims), then the request gate's verdict
(daemon.request_gate) before a request costs anything; a flood muted at the broker for
a while, and told once an interval where the gate refused requests without answering each."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import structlog

from daemon.parts.items import RefusedItem, RequestItem
from daemon.request_gate import REPORT_INTERVAL, Refused
from daemon.table.records import NoticeRecord

if TYPE_CHECKING:
    from collections.abc import Mapping

    from daemon.metrics import DaemonMetrics
    from daemon.mqtt.link import MqttLink
    from daemon.mqtt.subscriptions import InboundMessage
    from daemon.parts.items import ServedTable
    from daemon.request_gate import RequestGate
    from daemon.table.claims import TableClaims
    from daemon.wire.topics import Topics

log = structlog.get_logger("daemon")


class RequestIntake:
    """What the link hears (`on_message`; a request as paho reads it: `take_request`), and the
    flood's reports (`run`)."""

    def __init__(
        self,
        node: str,
        topics: Topics,
        tables: Mapping[str, ServedTable],
        gate: RequestGate,
        claims: TableClaims,
        metrics: DaemonMetrics,
        link: MqttLink,
    ) -> None:
        self.node = node
        self.topics = topics
        self.tables = tables
        self.gate = gate
        self.claims = claims
        self.metrics = metrics
        self.link = link

    async def on_message(self, message: InboundMessage) -> None:
        claims = self.claims.heard(message.topic, message.payload)
        if claims is not None:  # another daemon's word on one of our tables (daemon.table.claims)
            for change in claims:
                self.tables[change.table].queue.put_nowait(
                    NoticeRecord(change.kind, change.message(self.node), change.began)
                )
                await self.link.announce(self.claims.presence(change.table))
            return
        self.take_request(message)

    def take_request(self, message: InboundMessage) -> None:
        """A message on a request topic: judged, then queued for its table or refused."""
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
            NoticeRecord(
                "requests_muted",
                f"a flood of requests: this table hears no request for {seconds:.0f} s "
                "(the others are not affected); find what publishes them",
            )
        )

    async def run(self) -> None:
        """One notice per interval for each table that refused requests unanswered."""
        while True:
            await asyncio.sleep(REPORT_INTERVAL)
            for report in self.gate.take_reports():
                log.warning(
                    "request.flood", table=report.table, seconds=round(report.seconds, 1),
                    unanswered=report.unanswered,
                )  # fmt: skip
                self.tables[report.table].queue.put_nowait(
                    NoticeRecord("requests_refused", report.message())
                )
