"""When the journal cannot be written: the table waits, says so at once, and tries again.

A disk that fills up, a file system remounted read-only, a journal file that
lost its permissions, an I/O error: the event in hand cannot be journaled, so it is neither
applied nor answered, and nothing it would cause is published (decision D4: what the daemon
publishes is a pure function of the journal). The table's consumer holds that event and
tries it again, backing off to `RETRY_MAX`; it takes nothing after it meanwhile, so the shoe
is not acknowledged and keeps its frames (decision D3), and the table's driver reads no
further from the shoe (`writable`: backpressure). When a write succeeds, the table goes on by
itself with the same event, then takes what the shoe kept, in order.

The pit hears of it at once, without the journal (it cannot carry the news):
- `<base>/<table>/journal`, retained, no envelope (a state, like availability, docs/mqtt.md):
  `{"state": "failing", "reason": "the disk is full", "since": "…", "node": "…"}`, and
  `{"state": "ok", "node": "…"}` when writes resume (and at every start, to clear a stale one);
- one error log line per episode (`journal.write_failed`) and one when it ends
  (`journal.write_resumed`, with how long);
- the systemd status line, through the daemon's status text (`describe`).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import structlog

from daemon.journal import StorageFault
from daemon.mqtt.outbox import OutboundMessage
from daemon.wire.envelope import utc_timestamp

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.journal import JournalError
    from daemon.wire.topics import Topics

RETRY_FIRST: Final = 0.25  # seconds before the first retry
RETRY_MAX: Final = 2.0  # between retries, at most: storage back, the table goes on within this
log = structlog.get_logger("journal")


@dataclass(slots=True)
class _Fault:
    reason: str
    since: str  # UTC, as the envelope writes time
    began: float  # monotonic
    attempts: int = 1


def journal_state(state: str, node: str, fault: _Fault | None = None) -> bytes:
    body: dict[str, object] = {"state": state, "node": node}
    if fault is not None:
        body |= {"reason": fault.reason, "since": fault.since}
    return json.dumps(body, separators=(",", ":")).encode()


class StorageWatch:
    """Each table's storage faults: what the pit, the log and systemd are told."""

    def __init__(
        self,
        topics: Topics,
        node: str,
        publish: Callable[[OutboundMessage], None],
        on_change: Callable[[], None],
    ) -> None:
        """`publish` puts a message without envelope in the outbox; `on_change` refreshes
        the systemd status."""
        self._topics = topics
        self._node = node
        self._publish = publish
        self._on_change = on_change
        self.faults: dict[str, _Fault] = {}
        self._writable: dict[str, asyncio.Event] = {}

    async def writable(self, table_id: str) -> None:
        """Return once the table's journal takes writes (at once, unless it is failing)."""
        await self._event(table_id).wait()

    def _event(self, table_id: str) -> asyncio.Event:
        event = self._writable.get(table_id)
        if event is None:
            event = self._writable[table_id] = asyncio.Event()
            event.set()
        return event

    def ok(self, table_id: str) -> None:
        """Say the table's journal is writable (at start: a `failing` left retained by a
        daemon that died during a fault must not stay)."""
        self._state(table_id, "ok", None)

    def failing(self, table_id: str, error: JournalError) -> float:
        """A write failed; returns how long to wait before the next try."""
        reason = error.reason if isinstance(error, StorageFault) else "the journal failed"
        fault = self.faults.get(table_id)
        if fault is None or fault.reason != reason:
            fault = self.faults[table_id] = _Fault(reason, utc_timestamp(), time.monotonic())
            self._event(table_id).clear()
            log.error(
                "journal.write_failed",
                table=table_id,
                reason=reason,
                error=str(error),
                hint="free space, make the journal writable, or replace the disk: the table "
                "waits and goes on by itself; the shoe keeps what it sends meanwhile",
            )
            self._state(table_id, "failing", fault)
            self._on_change()
        else:
            fault.attempts += 1
            log.debug("journal.write_retried", table=table_id, attempts=fault.attempts)
        return min(RETRY_FIRST * 2.0 ** (fault.attempts - 1), RETRY_MAX)

    def resumed(self, table_id: str) -> None:
        """A write succeeded; if the table was failing, it is back."""
        fault = self.faults.pop(table_id, None)
        if fault is None:
            return
        self._event(table_id).set()
        log.info(
            "journal.write_resumed",
            table=table_id,
            reason=fault.reason,
            outage=round(time.monotonic() - fault.began, 1),
            attempts=fault.attempts,
        )
        self._state(table_id, "ok", None)
        self._on_change()

    def describe(self) -> str | None:
        """For systemd's status line: the failing tables and why; None when none fails."""
        if not self.faults:
            return None
        reasons = sorted({f.reason for f in self.faults.values()})
        return f"JOURNAL FAILING ({'; '.join(reasons)}) at {', '.join(sorted(self.faults))}"

    def _state(self, table_id: str, state: str, fault: _Fault | None) -> None:
        self._publish(
            OutboundMessage(
                self._topics.journal_state(table_id),
                journal_state(state, self._node, fault),
                qos=1,
                retain=True,
            )
        )
