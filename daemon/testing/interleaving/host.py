"""One table's daemon without its I/O: the real table service, driven as daemon.service drives
it, over a journal kept in memory and a clock the harness keeps.

What it does with each item is what `TableCommits.take` and `take_from_shoe` do: a shoe event is
judged against the journal first (a repeat is only acknowledged, a loss or a conflict
journaled before the frame that shows it), then journaled and applied with
`TableRunner.apply`; a request, a daemon's notice and a passed timer (daemon.table.timers on the
harness's monotonic clock, journaled at its deadline) are journaled and applied. Every
item's `at` is the harness's time, so the messages are exactly those a daemon journaling at
those times would publish.

A crash loses nothing journaled. `start` rebuilds the table as the daemon does: from the last
checkpoint (taken where the daemon takes one: daemon.parts.checkpoint_policy) and the events
journaled after it, through the same replay, re-sending every message past the broker's
watermark with the ids it had; then the start, and the shoe's link opening.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final

from daemon.journal.rows import JournalEvent, TableRecord
from daemon.parts.checkpoint_policy import checkpoint_due
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
from daemon.table.runner import TableRunner
from daemon.table.state import CONSOLE_CONTRACT
from daemon.table.timers import TableTimers
from daemon.wire.envelope import utc_timestamp
from daemon.wire.topics import Topics
from drivers.driver import Connected, Connecting

if TYPE_CHECKING:
    from daemon.journal.rows import Checkpoint
    from daemon.table.records import JournalRecord
    from daemon.table.runner import Applied
    from daemon.table.service import TableService
    from daemon.wire.envelope import Outbound
    from rules.config import TableConfig

ORIGIN: Final = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)  # the harness's time 0, as journaled
ENDPOINT: Final = "/dev/shoe2mqtt/table"
NODE: Final = "pit-a"


class SimulatedDaemon:
    """One table's daemon: its journal, its table service while it runs, its timers."""

    def __init__(
        self,
        config: TableConfig,
        protocol: str,
        *,
        epoch: str,
        timing: dict[str, float],
        topics: Topics | None = None,
        contract: int = CONSOLE_CONTRACT,
    ) -> None:
        self.config = config
        self.contract = contract  # the console contract it publishes under (`mqtt.contract`)
        self.protocol = protocol
        self.epoch = epoch
        self.timing = timing
        self.topics = topics or Topics()
        self.journal: list[JournalEvent] = []
        self.checkpoint: Checkpoint | None = None
        self.replay: TableRunner | None = None
        self.timers = TableTimers(timing)
        self.delivered_seq = 0  # what the broker acknowledged: a restart re-sends the rest
        # The round states, as daemon.service publishes them (daemon.table.round_state).
        self._states: list[Outbound] = []
        self.round_states = RoundStates(self._states.append)
        self.starts = 0

    @property
    def up(self) -> bool:
        return self.replay is not None

    @property
    def service(self) -> TableService:
        assert self.replay is not None, "the daemon is down"
        return self.replay.service

    # ---------------------------------------------------------------- life
    def start(self, now: float) -> list[Outbound]:
        """Recover the table from the journal, re-send what the broker may not have, journal
        the start and the shoe's link opening."""
        assert self.replay is None, "the daemon runs already"
        self.starts += 1
        first_config = next((e.body["table"] for e in self.journal if e.kind == "config"), None)
        new = self.checkpoint is None and first_config is None
        replay = TableRunner.begin(
            TableRecord(self.config.table_id, protocol=self.protocol),
            self.topics,
            self.epoch,
            checkpoint=self.checkpoint,
            first_config=self.config.to_mapping() if new else first_config,
            protocol=self.protocol,
        )
        out: list[Outbound] = []
        after = 0 if self.checkpoint is None else self.checkpoint.n
        with replay.service.replaying():
            for event in self.journal[after:]:
                applied = replay.apply_stored(event)
                out += [m for m in applied.messages if m.seq > self.delivered_seq]
                if applied.ended is not None:
                    self.checkpoint = replay.checkpoint()
        self.replay = replay
        self.timers = TableTimers(self.timing)  # a restart starts every wait again
        self.round_states = RoundStates(self._states.append)  # and publishes its state at once
        if new:
            out += self._commit(ConfigRecord(self.config, self.contract), now)
        out += self._commit(StartRecord(self.protocol, NODE, self.contract), now)
        out += self._commit(LinkRecord(Connecting(ENDPOINT, 1)), now)
        return out

    def port_opened(self, now: float) -> list[Outbound]:
        """The shoe's port is open: from here on the table hears what the shoe sends."""
        return self._commit(LinkRecord(Connected(ENDPOINT)), now)

    def crash(self) -> None:
        """SIGKILL: what was journaled stays; everything else is gone."""
        self.replay = None

    # ---------------------------------------------------------------- items
    def take_shoe(self, event: object, now: float) -> tuple[list[Outbound], bool, int | None]:
        """A shoe event as `TableCommits.take_from_shoe` takes it: (messages, whether it was
        taken, the frame to acknowledge)."""
        service = self.service
        intake = service.judge(event)
        out: list[Outbound] = []
        if intake.gap is not None:
            out += self._commit(ShoeRecord(intake.gap), now)
        if intake.conflict is not None:  # the table doubts what it holds before the frame
            out += self._commit(ShoeRecord(intake.conflict), now)
        if intake.take and is_journaled(event):
            out += self._commit(ShoeRecord(event), now)  # type: ignore[arg-type]
            return out, True, intake.acknowledge
        return out, False, intake.acknowledge

    def take_request(self, command: str, payload: bytes, now: float) -> list[Outbound]:
        return self._commit(RequestRecord(command, payload), now)

    def take_notice(self, kind: str, message: str, now: float, *, hold: bool) -> list[Outbound]:
        """The daemon's own word to the pit (`NoticeRecord`); `hold`: a doubt over every card."""
        return self._commit(NoticeRecord(kind, message, hold), now)

    def next_deadline(self) -> float | None:
        if not self.up:
            return None
        due = [d for d in (self.timers.next_due(), self.round_states.next_due()) if d is not None]
        return min(due, default=None)

    def take_due_timers(self, now: float) -> list[Outbound]:
        """Each timer past its deadline by `now`, journaled at its deadline (the daemon's
        table task wakes then), for the table to judge whether it still counts; and each
        round state that waited, published when it was due."""
        out: list[Outbound] = []
        while self.up:
            deadline, state_due = self.timers.next_due(), self.round_states.next_due()
            first = state_due is not None and (deadline is None or state_due <= deadline)
            if state_due is not None and state_due <= now and first:
                self.round_states.publish_due(state_due)
                out += self._published()
            elif deadline is not None and deadline <= now:
                for timer in self.timers.due(deadline):
                    record = TimerRecord(timer.kind, timer.key, self.timers.seconds(timer))
                    out += self._commit(record, deadline)
            else:
                return out
        return out

    # ---------------------------------------------------------------- the journal
    def _commit(self, record: JournalRecord, now: float) -> list[Outbound]:
        """Journal the record and apply it with the daemon's own runner (`TableCommits.commit`);
        the journal in memory holds its body as the database reads it back."""
        replay = self.replay
        assert replay is not None, "the daemon is down"
        n, when = len(self.journal) + 1, at(now)
        body = json.loads(encode(record))
        self.journal.append(JournalEvent(self.config.table_id, n, record.kind, body, when))
        applied = replay.apply(n, when, record)
        self._checkpoint(applied)
        self.timers.follow(replay.service.timers(), now)
        self.round_states.applied(self.config.table_id, replay.service, now)
        return [*applied.messages, *self._published()]

    def _published(self) -> list[Outbound]:
        out = list(self._states)
        self._states.clear()
        return out

    def _checkpoint(self, applied: Applied) -> None:
        """Where the daemon takes one (daemon.parts.checkpoint_policy)."""
        assert self.replay is not None
        since = applied.n - (0 if self.checkpoint is None else self.checkpoint.n)
        round_open = self.replay.service.engine.round_open
        if checkpoint_due(since, round_open=round_open, round_ended=applied.ended is not None):
            self.checkpoint = self.replay.checkpoint()


def at(now: float) -> str:
    """The journaled time of the harness's moment `now` (seconds)."""
    return utc_timestamp(ORIGIN + timedelta(seconds=now))
