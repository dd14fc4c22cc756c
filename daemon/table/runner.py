"""A table's journaled records, applied: the one runner the live table, the daemon's replay
at start and every tool share.

`TableRunner` starts a table service from a checkpoint, or from the table's first event, and
applies journaled records through `TableService.apply`: the live table the record it has
just journaled (`apply`), a replay the record read back from the journal (`apply_stored`).
Because every message is a pure function of the journal (decision D4), the messages it
returns are the very messages the daemon published, ids, `seq` and `ts` included: the daemon
resends from it after a restart, `shoe2mqtt journal show` prints from it, and the archive
writes from it.

It also cuts the events into rounds, as an auditor reads them: an event belongs to the round
that was open when it came, or to the round it opened; the rest (shuffles, burn cards, the
reader's link, new settings between rounds) belongs to no round. When an event ends a round,
`Applied.ended` is the round's entry for `journal list`.

Journals upgraded from schema 1 (daemon/journal/schema.py) keep their old events, whose
messages were sealed with random ids and are gone: for those events the replay returns no
messages, and numbers the first message after them where schema 1 stopped.

`daemon.table.log_lines` turns applied events into lines of a round log.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Final

from daemon.journal.rows import Checkpoint, RoundEntry
from daemon.table.records import read
from daemon.table.service import TableService
from daemon.wire.envelope import Envelopes
from daemon.wire.round_message import unbundled
from rules.config import TableConfig

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from daemon.journal.rows import JournalEvent, TableRecord
    from daemon.table.records import JournalRecord, UnreadableRecord
    from daemon.table.state import Recorded
    from daemon.wire.envelope import Outbound
    from daemon.wire.topics import Topics
    from drivers.session import HostSession

CHECKPOINT_FORMAT: Final = 1


class ReplayStartError(Exception):
    """A table's journal gives nothing to start a replay from (no checkpoint, no settings)."""


@dataclass(slots=True)
class _OpenRound:
    round_id: int
    first_n: int
    started: str


@dataclass(frozen=True, slots=True)
class Applied:
    """One journaled event, applied: the `n`-th of its table, journaled at `at`."""

    n: int
    at: str
    record: JournalRecord | UnreadableRecord  # what was applied
    owner: int | None  # the round the event belongs to
    messages: list[Outbound]  # what it caused ([] where an upgraded journal cannot know)
    recorded: list[Recorded]  # rules events it made, and settings it put in force
    ended: RoundEntry | None  # the round it ended, if it ended one


@dataclass(slots=True)
class TableRunner:
    """One table's service, and its journaled records applied through it."""

    service: TableService
    table: TableRecord
    n: int = 0  # the last event applied
    at: str = ""  # its journaled time
    _open: _OpenRound | None = None
    _recorded: list[Recorded] = field(default_factory=list)

    @classmethod
    def begin(  # noqa: PLR0913 - keywords only, each a part of the start
        cls,
        table: TableRecord,
        topics: Topics,
        epoch: str,
        *,
        checkpoint: Checkpoint | None,
        first_config: dict[str, Any] | None,
        protocol: str | None = None,
        record_rules: bool = False,
        quiet: bool = True,
        clock: Callable[[], datetime] | None = None,
        session: HostSession | None = None,
    ) -> TableRunner:
        """A runner at `checkpoint`, or before the table's first event (whose settings are
        `first_config`). `protocol` when the table has none recorded (a fresh journal);
        `quiet`: log nothing (a tool's replay: it was all logged when it happened); the
        daemon's table is not quiet, once it is recovered. `clock`: the time of what is
        not journaled (the daemon's journal clock: a refusal's `ts` never runs back).
        `session`: the table's host session, which its driver pumps (the daemon's table)."""
        shoe_protocol = table.protocol or protocol
        if checkpoint is None and first_config is None:
            raise ReplayStartError(f"table {table.table_id}: no checkpoint and no settings")
        config = TableConfig.from_mapping(
            checkpoint.state["service"]["config"] if checkpoint is not None else first_config  # type: ignore[arg-type]
        )
        service = TableService(
            config,
            topics,
            Envelopes(config.table_id, epoch=epoch, clock=clock),
            **({} if shoe_protocol is None else {"protocol": shoe_protocol}),
            session=session,
        )
        service.quiet = quiet
        runner = cls(service, table)
        if checkpoint is not None:
            runner.restore(checkpoint)
        else:
            # From the table's first event: its starts say which console contract each part
            # of the journal was written under; one that says none was written under 1.
            service.contract = 1
            if table.legacy_n == 0:
                service.resume_numbering(table.legacy_next_seq)
        if record_rules:
            service.recorder = runner.record
        return runner

    def record(self, recorded: Recorded, round_id: int | None) -> None:  # noqa: ARG002 - the recorder's signature
        self._recorded.append(recorded)

    def restore(self, checkpoint: Checkpoint) -> None:
        state = checkpoint.state
        self.service.restore(state["service"])
        opened = state.get("round")
        self._open = None if opened is None else _OpenRound(**opened)
        self.n, self.at = checkpoint.n, checkpoint.at

    def checkpoint(self) -> Checkpoint:
        """The table's state after the last event applied."""
        opened = self._open
        state = {
            "format": CHECKPOINT_FORMAT,
            "service": self.service.checkpoint(),
            "round": None if opened is None else asdict(opened),
        }
        return Checkpoint(
            self.table.table_id,
            self.n,
            self.service.envelopes.next_seq,
            self.at,
            self.service.engine.round_open,
            state,
        )

    def apply_stored(self, event: JournalEvent) -> Applied:
        """A journaled event as the journal reads it back (a replay)."""
        return self.apply(event.n, event.at, read(event.kind, event.body))

    def apply(self, n: int, at: str, record: JournalRecord | UnreadableRecord) -> Applied:
        """The record journaled as the table's event `n`, at `at`: the live table's, the very
        record whose text it journaled; a replay's, read back."""
        service = self.service
        engine = service.engine
        open_before = service.round_id if engine.round_open else None
        latest_before = service.round_id
        self._recorded.clear()
        messages = service.apply(record, at)
        latest_after = service.round_id
        owner = open_before
        if owner is None and latest_after is not None and latest_after != latest_before:
            owner = latest_after
        if owner is not None and (self._open is None or self._open.round_id != owner):
            self._open = _OpenRound(owner, n, at)
        ended = None
        if owner is not None and self._open is not None and not service.engine.round_open:
            ended = self._round_entry(self._open, n, at, messages)
            self._open = None
        self.n, self.at = n, at
        legacy = self.table.legacy_n
        if n <= legacy:
            # Sealed by schema 1 with random ids: their messages cannot be made again.
            messages = []
            if n == legacy:
                service.resume_numbering(self.table.legacy_next_seq)
        return Applied(n, at, record, owner, messages, list(self._recorded), ended)

    def _round_entry(
        self, opened: _OpenRound, n: int, at: str, messages: list[Outbound]
    ) -> RoundEntry:
        topics, table_id = self.service.topics, self.table.table_id
        ended_topic = topics.event(table_id, "round_ended")
        voided = any(  # on its own topic, or carried by a round message (contract 4)
            body.get("voided") is True
            for m in messages
            if m.topic in (ended_topic, topics.round_snapshot(table_id))
            for topic, body in unbundled(m.topic, json.loads(m.payload))
            if topic == ended_topic
        )
        return RoundEntry(
            self.table.table_id,
            opened.round_id,
            opened.first_n,
            n,
            opened.started,
            at,
            len(self.service.round_settlements),
            voided,
            tuple(self.service.review),
        )
