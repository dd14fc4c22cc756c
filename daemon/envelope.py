"""What every MQTT payload carries besides its body (docs/mqtt.md, "Envelope").

A subscriber drops duplicates by `id`, orders by `seq` and reads amounts as decimal strings.
The id is made once, when the message is made, and travels with it through the outbox, so a
resend after a reconnect or a restart carries the same id.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Callable

SCHEMA_VERSION = 1


def utc_timestamp(now: datetime | None = None) -> str:
    """ISO 8601, UTC, milliseconds: `2026-11-29T14:00:00.123Z`."""
    moment = now or datetime.now(UTC)
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


@dataclass(frozen=True, slots=True)
class Outbound:
    """One message ready for the outbox."""

    topic: str
    payload: bytes
    qos: Literal[0, 1, 2]
    retain: bool
    event_id: str


class Envelopes:
    """Stamps bodies for one table: schema version, event id, per-table sequence, time."""

    def __init__(
        self,
        table_id: str,
        *,
        next_seq: int = 1,
        clock: Callable[[], datetime] | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> None:
        self.table_id = table_id
        self.next_seq = next_seq
        self._clock = clock or (lambda: datetime.now(UTC))
        self._new_id = new_id or (lambda: uuid.uuid4().hex)

    def seal(
        self, topic: str, body: dict[str, Any], *, qos: Literal[0, 1, 2] = 1, retain: bool = False
    ) -> Outbound:
        event_id = self._new_id()
        stamped = {
            "schema": SCHEMA_VERSION,
            "id": event_id,
            "table": self.table_id,
            "seq": self.next_seq,
            "ts": utc_timestamp(self._clock()),
            **body,
        }
        self.next_seq += 1
        payload = json.dumps(stamped, separators=(",", ":"), ensure_ascii=False).encode()
        return Outbound(topic, payload, qos, retain, event_id)
