"""The journal's word against what was delivered: a recovery run's verdict.

`replay_journal` replays a table's journal from its first event with the daemon's own replay
(`daemon.table.runner.TableRunner`, through `TableService.apply`): since every
message is a pure function of the journal (decision D4), it makes the very messages the
daemon published. `verify` holds every settlement delivered against it, envelope and all
(`id`, `seq`, `ts`), and the table's sequence numbers and its last round snapshot.
`journal_pending` and `journal_events_done` read the journal of a daemon that is running
(read-only: SQLite's WAL lets a reader in beside the writer).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from daemon.history.audit import JournalReader
from daemon.journal import JOURNAL_FILE, database
from daemon.journal.archive import Archive
from daemon.table.runner import TableRunner
from daemon.testing.recorder import latest_state
from daemon.wire.topics import Topics, has_envelope

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from daemon.testing.recorder import Received
    from rules.config import TableConfig

ENVELOPE: Final = ("schema", "id", "table", "seq", "ts", "as_of")
SETTLEMENT_KEY: Final = ("round", "seat", "hand", "wager", "order", "phase")
TOPICS: Final = Topics()  # the daemon's default base topic, which the recovery runs use


@contextlib.contextmanager
def _read_only_journal(state_directory: Path, timeout: float = 5.0) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(
        f"file:{state_directory / JOURNAL_FILE}?mode=ro", uri=True, timeout=timeout
    )
    try:
        yield db
    finally:
        db.close()


@dataclass
class Replay:
    """What the rules core decided, according to the journal alone."""

    table: str
    settlements: list[dict[str, Any]]
    snapshot: dict[str, Any]
    events: int
    rounds: int
    restarted_rounds: set[int]  # rounds that were open when the daemon (re)started
    # Settlements of such rounds, decided after the restart, not flagged: where the shoe
    # keeps nothing (cards dealt meanwhile are lost), every one must be; where it keeps its
    # frames (the reference protocol), none needs to be unless a gap said so.
    unflagged: list[str]


def replay_journal(
    state_directory: Path, config: TableConfig, protocol: str = "reference"
) -> Replay:
    """Every journaled event of the table, replayed from its first, in journal order; the
    shoe's numbers judged by the protocol each `start` event names (`protocol` before one)."""
    with _read_only_journal(state_directory) as db:
        table = database.read_table(db, config.table_id)
        events = database.read_events(db, config.table_id)
        replay = TableRunner.begin(
            table,
            TOPICS,
            database.read_epoch(db),
            checkpoint=None,
            first_config=database.first_config(db, config.table_id),
            protocol=protocol,
        )
    service = replay.service
    settlements: list[dict[str, Any]] = []
    restarted: set[int] = set()
    unflagged: list[str] = []
    with service.replaying():
        for event in events:
            round_id = service.round_id
            if event.kind == "start" and round_id is not None and service.engine.round_open:
                restarted.add(round_id)
            for message in replay.apply_stored(event).messages:
                if message.topic == TOPICS.settlement(config.table_id):
                    body = json.loads(message.payload)
                    settlements.append(body)
                    keeps_frames = service.receiver.reliable  # as the journaled protocol says
                    doubtful = body["round"] in restarted and not keeps_frames
                    if doubtful and body["review"] is not True:
                        unflagged.append(f"{settlement_key(body)}: review is false")
    snapshot = json.loads(service.snapshot().payload)
    rounds = service.engine.next_round_id - 1
    return Replay(config.table_id, settlements, snapshot, len(events), rounds, restarted, unflagged)


def content(body: dict[str, Any]) -> dict[str, Any]:
    """A message's body without its envelope: what a copy of it must repeat exactly."""
    return {k: v for k, v in body.items() if k not in ENVELOPE}


def settlement_key(body: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(body[k] for k in SETTLEMENT_KEY)


@dataclass
class Verdict:
    expected: int = 0
    delivered: int = 0
    lost: list[tuple[Any, ...]] = field(default_factory=list)
    duplicated: int = 0  # settlements received again under another id: a defect
    redelivered: int = 0  # the same message received again (QoS 1 after a reconnect): fine
    mismatched: list[str] = field(default_factory=list)
    sequence: list[str] = field(default_factory=list)
    snapshot: list[str] = field(default_factory=list)
    unflagged: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.lost
            or self.duplicated
            or self.mismatched
            or self.sequence
            or self.snapshot
            or self.unflagged
        )

    def explain(self) -> str:
        return (
            f"expected={self.expected} delivered={self.delivered} lost={self.lost} "
            f"duplicated={self.duplicated} redelivered={self.redelivered} "
            f"mismatched={self.mismatched} "
            f"sequence={self.sequence[:5]} snapshot={self.snapshot} unflagged={self.unflagged}"
        )


def verify(messages: list[Received], replay: Replay) -> Verdict:
    """Delivered settlements against the journal's, envelope and all; sequence numbers; the
    last snapshot."""
    verdict = Verdict(expected=len(replay.settlements))
    expected = {settlement_key(s): s for s in replay.settlements}
    assert len(expected) == len(replay.settlements), "two settlements share a key"
    delivered: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for message in messages:
        if message.topic == TOPICS.settlement(replay.table):
            body = message.body
            delivered.setdefault(settlement_key(body), []).append(body)
    verdict.delivered = len(delivered)
    for key, wanted in expected.items():
        copies = delivered.get(key)
        if not copies:
            verdict.lost.append(key)
            continue
        ids = {copy["id"] for copy in copies}
        verdict.duplicated += len(ids) - 1
        verdict.redelivered += len(copies) - len(ids)
        for copy in copies:
            if copy != wanted:
                verdict.mismatched.append(f"{key}: delivered {copy}, the journal makes {wanted}")
    verdict.mismatched += [
        f"{key}: delivered, but the journal decided no such settlement"
        for key in delivered.keys() - expected.keys()
    ]
    verdict.unflagged = list(replay.unflagged)
    verdict.sequence = check_sequence(messages, replay.table)
    snapshots = [m.body for m in messages if m.topic == TOPICS.round_snapshot(replay.table)]
    if not snapshots:
        verdict.snapshot.append("no round snapshot was delivered")
    else:
        last = content(latest_state(snapshots) or {})
        if last != content(replay.snapshot):
            verdict.snapshot.append(f"last snapshot {last} != replay {content(replay.snapshot)}")
    return verdict


def check_sequence(messages: list[Received], table: str) -> list[str]:
    """The table's messages, duplicates (same id) dropped: seq goes 1, 2, 3... in arrival order,
    each id with one seq and each seq with one id."""
    problems: list[str] = []
    seen: dict[str, int] = {}
    by_seq: dict[int, str] = {}
    expected_seq = 1
    prefix = f"{TOPICS.base}/{table}/"
    for message in messages:
        if not message.topic.startswith(prefix) or "/request/" in message.topic:
            continue
        if message.carried:  # what a contract 4 round message carried: that message counts
            continue
        numbered_round = message.topic.endswith("/round") and b'"seq":' in message.payload
        if not (has_envelope(message.topic) or numbered_round):  # a state (docs/mqtt.md)
            continue
        body = message.body
        event_id, seq = body["id"], int(body["seq"])
        if event_id in seen:
            if seen[event_id] != seq:
                problems.append(f"id {event_id} came with seq {seen[event_id]} and {seq}")
            continue
        if seq in by_seq:
            problems.append(f"seq {seq} came with ids {by_seq[seq]} and {event_id}")
        seen[event_id], by_seq[seq] = seq, event_id
        if seq != expected_seq:
            problems.append(f"seq {seq} arrived where {expected_seq} was due ({message.topic})")
        expected_seq = seq + 1
    return problems


def journal_pending(state_directory: Path, table_id: str) -> list[int]:
    """The seq of every message of the table past its delivered watermark, as a restart
    would send it again: what waits for the broker, read while the daemon runs."""
    reader = JournalReader(state_directory / JOURNAL_FILE, Archive(state_directory / "archive"))
    try:
        return [message.seq for message in reader.undelivered(table_id)]
    finally:
        reader.close()


def journal_events_done(state_directory: Path) -> int:
    """How many events the daemon has journaled, read while it runs."""
    with _read_only_journal(state_directory) as db:
        row = db.execute("SELECT count(*) FROM events").fetchone()
    return int(row[0])
