"""The commit protocol: how a table's task takes its inbox, one item (or one batch of
requests) at a time: judged, journaled (the one commit on its path), applied, handed to the
outbox (and, for one item, the publisher given its turn); then counted by the numbers, a
checkpoint riding along when due (daemon.parts.checkpoint_policy), the table's round state
when it changed (daemon.table.round_state), and last the shoe's frame acknowledged (durable
since the commit). Nothing an event caused leaves the process before the event is on disk
(docs/durability.md)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from daemon.journal import JournalError
from daemon.mqtt.outbox import OutboundMessage
from daemon.parts.checkpoint_policy import checkpoint_due
from daemon.parts.items import (
    LineItem,
    OverflowItem,
    RefusedItem,
    RequestItem,
    ShoeItem,
    TableItem,
)
from daemon.table.records import (
    ConfigRecord,
    LinkRecord,
    NoticeRecord,
    RequestRecord,
    ShoeRecord,
    StartRecord,
    TimerRecord,
    encode,
    is_journaled,
)
from daemon.table.round_state import RoundStates
from daemon.wire.envelope import utc_timestamp
from drivers.noise import LineNoise, LineQuiet

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.journal import Journal
    from daemon.journal.clock import JournalClock
    from daemon.journal.rows import Checkpoint
    from daemon.metrics import DaemonMetrics
    from daemon.parts.items import ServedTable
    from daemon.parts.journal_outbox import JournalOutbox
    from daemon.parts.storage import StorageWatch
    from daemon.table.records import JournalRecord
    from daemon.table.runner import Applied
    from daemon.table.shoe_line import LineNotice
    from daemon.table.timers import TableTimers
    from daemon.wire.envelope import Outbound
    from drivers.events import Event as ShoeEvent
    from rules.config import TableConfig

# Requests that queued together are journaled in one commit, up to this many: a round's
# wagers from a chip-recognition layout fit, and a card waits behind one commit, not dozens.
REQUESTS_PER_COMMIT: Final = 64


class TableCommits:
    """Every table's task (`consume`) and the commit each item of its inbox goes through."""

    def __init__(
        self,
        journal: Journal,
        outbox: JournalOutbox,
        metrics: DaemonMetrics,
        clock: JournalClock,
        storage: StorageWatch,
        *,
        link_changed: Callable[[], None],
    ) -> None:
        """`link_changed`: told when a reader's link change is journaled (the status line)."""
        self.journal = journal
        self.outbox = outbox
        self.metrics = metrics
        self.clock = clock
        self.storage = storage
        self._link_changed = link_changed
        # numbers: told of each event applied (daemon.numbers.daemon_side.StatsHub.applied)
        self.on_applied: Callable[[str, Applied, TableConfig], None] | None = None
        # Told each checkpoint as it is noted (the shift's numbers ride along with some).
        self.on_checkpointed: Callable[[str, Checkpoint], None] | None = None
        # The tables' round states, outside their numbering (docs/mqtt.md, "The round state").
        self.round_states = RoundStates(self._add_round_state)

    def _add_round_state(self, state: Outbound) -> None:
        """A table's round state: delivered in order with the rest, moving no watermark."""
        self.outbox.add_state(OutboundMessage(state.topic, state.payload, state.qos, state.retain))

    async def consume(self, table: ServedTable) -> None:
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
            while True:  # the items, until the journal has them (daemon/parts/storage.py)
                try:
                    if len(requests) > 1:
                        await self.take_requests(table, requests)
                    else:
                        await self.take(table, item)
                except JournalError as exc:
                    await asyncio.sleep(self.storage.failing(table_id, exc))
                    continue
                self.storage.resumed(table_id)
                break
            timers.follow(table.service.timers(), loop.time())

    async def _next_item(self, table: ServedTable, timers: TableTimers) -> TableItem:
        """The table's next item, or a timer of the table's that has passed meanwhile."""
        if len(table.queue):  # taken before a timer that came due meanwhile, as `get` does
            return table.queue.get_nowait()  # (and without a deadline's timer, made and undone)
        loop = asyncio.get_running_loop()
        while True:
            due_at = timers.next_due()
            if due_at is None:  # nothing can fall due while it waits: no deadline to undo
                return await table.queue.get()
            try:
                async with asyncio.timeout_at(due_at):
                    return await table.queue.get()
            except TimeoutError:
                for timer in timers.due(loop.time()):
                    seconds = timers.seconds(timer)
                    table.queue.put_nowait(TimerRecord(timer.kind, timer.key, seconds))

    async def take_requests(self, table: ServedTable, items: list[RequestItem]) -> None:
        """Requests that queued together: journaled in one commit, then applied in order. A
        request costs its table's cards one commit, not one each (a console that sends a
        round's wagers at once, or a flood's admitted burst)."""
        at = utc_timestamp(self.clock.now())
        table_id = table.setup.table.table_id
        records = [self._request_record(item) for item in items]
        with self.metrics.journal_commit():
            numbers = await self.journal.append_events(
                table_id, [("request", encode(record), at) for record in records]
            )
        for n, record in zip(numbers, records, strict=True):
            applied = table.runner.apply(n, at, record)
            self.outbox.add(table_id, applied.messages)
            # Their messages leave on the loop's next turn, together: the lines go now.
            table.service.write_held_lines()
            self._told(table, applied)  # numbers
            self._checkpoint(table, applied)
        self.round_states.applied(table_id, table.service, asyncio.get_running_loop().time())

    def _request_record(self, item: RequestItem) -> RequestRecord:
        # The outbox's fullness is journaled: a replay must refuse what was refused.
        return RequestRecord(item.command, item.payload, outbox_full=self.outbox.full)

    async def take(self, table: ServedTable, item: TableItem) -> None:
        """Journal and apply one item of the table's queue."""
        match item:
            case NoticeRecord() | StartRecord() | TimerRecord() | ConfigRecord():
                await self.commit(table, item)
            case RequestItem():
                await self.commit(table, self._request_record(item))
            case RefusedItem():
                self._answer_refusal(table, item)
            case LinkRecord():
                await self.commit(table, item)
                self._link_changed()
            case LineItem() | OverflowItem():
                await self._tell(table, self._line_notice(table, item))
            case ShoeItem(event=event):
                holding = table.service.doubt is not None
                await self._tell(table, table.line.before_shoe_event(event, holding=holding))
                await self.take_from_shoe(table, event)

    def _line_notice(self, table: ServedTable, item: LineItem | OverflowItem) -> LineNotice | None:
        """What the table is told of its shoe's line (daemon.table.shoe_line)."""
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

    async def _tell(self, table: ServedTable, notice: LineNotice | None) -> None:
        """What the shoe's line costs the table, journaled as the daemon's notice."""
        if notice is not None:
            await self.commit(table, NoticeRecord(*notice))

    def _answer_refusal(self, table: ServedTable, item: RefusedItem) -> None:
        """The gate's refusal is not journaled, so its answer is outside the table's sequence
        (Envelopes.seal_unsequenced): it moves no watermark and a replay makes nothing of it."""
        refusal = item.refusal
        for out in table.service.refuse(
            item.command, refusal.transaction, refusal.code, refusal.message
        ):
            self.outbox.add_state(OutboundMessage(out.topic, out.payload, out.qos, out.retain))

    async def take_from_shoe(self, table: ServedTable, event: ShoeEvent) -> None:
        """Decision D3: judged before anything is journaled, acknowledged once it is durable.

        A repeat of a frame the journal holds is acknowledged again and applied no more; a
        loss is journaled (and applied) before the frame that shows it. A heartbeat is
        judged (it may show a loss) but neither journaled nor applied: it changes nothing
        that is published (`last_seen` is the time of the reader's last journaled event).
        When the journal cannot be written, nothing is acknowledged: the shoe keeps it.
        """
        intake = table.service.judge(event)
        if intake.gap is not None:
            await self.commit(table, ShoeRecord(intake.gap))
        if intake.conflict is not None:  # the table doubts what it holds before the frame
            await self.commit(table, ShoeRecord(intake.conflict))
        if intake.take and is_journaled(event):
            await self.commit(table, ShoeRecord(event), acknowledge=intake.acknowledge)
            return
        if intake.acknowledge is not None:  # a repeat of what the journal holds
            await self._acknowledge(table, intake.acknowledge)

    @staticmethod
    async def _acknowledge(table: ServedTable, seq: int) -> None:
        """Tell the shoe its frame `seq` is durable: the table's session says it, the driver
        writes it (nothing without a link: the shoe sends the frame again)."""
        await table.driver.deliver(table.session.acknowledgement(seq))

    async def commit(
        self, table: ServedTable, record: JournalRecord, *, acknowledge: int | None = None
    ) -> None:
        """Journal the record (the one commit on its path: its text, encoded once), apply
        it, hand what it caused to the outbox and write it to the broker; acknowledge the
        shoe's frame `acknowledge` (durable since the commit) last, once nothing of the event
        is left to do: nothing it caused leaves the process before the event is on disk, and
        nothing waits between the apply and the counting (no await, decision P11)."""
        at = utc_timestamp(self.clock.now())
        table_id = table.setup.table.table_id
        with self.metrics.journal_commit():
            n = await self.journal.append_event(table_id, record.kind, encode(record), at)
        applied = table.runner.apply(n, at, record)
        self.outbox.add(table_id, applied.messages)
        if applied.messages:
            # What the pit waits for leaves first, now: written to the broker before the
            # numbers, the checkpoint, the round state (which a round's end makes dear:
            # docs/performance.md, "The pit's message before what is derived") and the
            # shoe's acknowledgement (decision P14).
            self.outbox.publish_now()
        table.service.write_held_lines()  # the settlements' lines, after the settlements
        self._told(table, applied)  # numbers
        self._checkpoint(table, applied)
        self.round_states.applied(table_id, table.service, asyncio.get_running_loop().time())
        if acknowledge is not None:
            await self._acknowledge(table, acknowledge)

    def _told(self, table: ServedTable, applied: Applied) -> None:
        if self.on_applied is not None:
            self.on_applied(table.setup.table.table_id, applied, table.service.config)

    def _checkpoint(self, table: ServedTable, applied: Applied) -> None:
        """A checkpoint rides along with the next commit when one is due."""
        since = applied.n - table.checkpoint_n
        round_open = table.service.engine.round_open
        if checkpoint_due(since, round_open=round_open, round_ended=applied.ended is not None):
            checkpoint = table.runner.checkpoint()
            self.journal.note_checkpoint(checkpoint, applied.ended)
            table.checkpoint_n = applied.n
            if self.on_checkpointed is not None:
                self.on_checkpointed(table.setup.table.table_id, checkpoint)
