"""What every MQTT payload carries besides its body (docs/mqtt.md, "Envelope").

A subscriber drops duplicates by `id`, orders by `seq` and reads amounts as decimal strings.

Nothing in an envelope is drawn at random or read from a clock at the moment of sealing
(decision D4): `seq` counts the table's messages, `ts` is the journaled time of the event
that caused the message (`at`, set by the table service before it applies the event), and
`id` is a UUID5 of the journal's own random epoch and `<table>/<seq>`. So a replay of the
journal seals the very same messages again, byte for byte: a resend after a restart carries
the ids it had, and `shoe2mqtt journal show` prints what the pit received. A new journal
(a new install) has a new epoch, so its ids never repeat an older journal's, although its
`seq` starts again at 1.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

SCHEMA_VERSION = 1
# `json.dumps(..., separators=(",", ":"), ensure_ascii=False)`, made once rather than at
# every message (`dumps` makes an encoder at each call): the same bytes.
_PAYLOAD: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def utc_timestamp(now: datetime | None = None) -> str:
    """ISO 8601, UTC, milliseconds: `2026-11-29T14:00:00.123Z`."""
    # `isoformat` and not `strftime`: the same text in 60 % of the time, and every commit
    # and every message is stamped. An aware UTC time always ends in "+00:00".
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.isoformat(timespec="milliseconds")[:-6] + "Z"


def message_id(epoch: str, table_id: str, seq: int) -> str:
    """The id of a table's message number `seq` in the journal of `epoch`."""
    return _name_id(uuid.UUID(hex=epoch).bytes, table_id, seq)


def _name_id(namespace: bytes, table_id: str, seq: int) -> str:
    """RFC 4122's name-based id (version 5) of `<table_id>/<seq>` in `namespace` (a UUID's
    16 bytes), as hex: what `uuid.uuid5(...).hex` says, which the tests hold it to. Written
    out because every message is sealed with one, and in the daemon's profile at goal 3's
    load `uuid.uuid5` (its `UUID` objects, made and checked twice) was 2.4 % of the CPU."""
    name = f"{table_id}/{seq}".encode()
    octets = bytearray(hashlib.sha1(namespace + name, usedforsecurity=False).digest()[:16])
    octets[6] = (octets[6] & 0x0F) | 0x50  # version 5
    octets[8] = (octets[8] & 0x3F) | 0x80  # the RFC 4122 variant
    return octets.hex()


@dataclass(frozen=True, slots=True)
class Outbound:
    """One message ready for the outbox."""

    topic: str
    payload: bytes
    qos: Literal[0, 1, 2]
    retain: bool
    event_id: str
    seq: int = 0
    # What `payload` encodes, as sealed (None where only the bytes are known): read, never
    # changed, by what follows the table in the same process (the live numbers), which
    # would otherwise decode the message it was just given the encoding of.
    body: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)


class Envelopes:
    """Stamps bodies for one table: schema version, id, per-table sequence, time.

    `epoch` is the journal's (a fresh random one when none is given: a table service that
    publishes nothing it must repeat, like a test's). `at` is the time to stamp, set for each
    event; until one is set, `clock` gives it. `new_id` replaces the derived id (tests that
    want readable ids).
    """

    def __init__(
        self,
        table_id: str,
        *,
        epoch: str | None = None,
        next_seq: int = 1,
        clock: Callable[[], datetime] | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> None:
        self.table_id = table_id
        # The journal's epoch (daemon.journal.schema.new_epoch); without a journal (a tool's,
        # a test's table), one of the envelopes' own, of the same form.
        self.epoch = epoch or uuid.uuid4().hex
        self.next_seq = next_seq
        self.at: str | None = None
        self._namespace = uuid.UUID(hex=self.epoch).bytes
        self._clock = clock or (lambda: datetime.now(UTC))
        self._new_id = new_id

    def seal(
        self, topic: str, body: dict[str, Any], *, qos: Literal[0, 1, 2] = 1, retain: bool = False
    ) -> Outbound:
        seq = self.next_seq
        event_id = (
            self._new_id()
            if self._new_id is not None
            else _name_id(self._namespace, self.table_id, seq)
        )
        self.next_seq += 1
        return self._stamp(topic, body, qos, retain, event_id, seq, self.time())

    def time(self) -> str:
        """The time the current event's messages are stamped with."""
        return self.at if self.at is not None else utc_timestamp(self._clock())

    def seal_unsequenced(self, topic: str, body: dict[str, Any]) -> Outbound:
        """A message that is not journaled (the request gate's refusal): it takes no number
        of the table's sequence, so the journal still makes every numbered message. `seq` is
        0, outside the sequence (it starts at 1); the `id` is random and `ts` is now: it is
        never sent again."""
        event_id = self._new_id() if self._new_id is not None else uuid.uuid4().hex
        return self._stamp(topic, body, 1, False, event_id, 0, utc_timestamp(self._clock()))

    def _stamp(
        self,
        topic: str,
        body: dict[str, Any],
        qos: Literal[0, 1, 2],
        retain: bool,  # noqa: FBT001 - positional on a private helper, named at each call
        event_id: str,
        seq: int,
        at: str,
    ) -> Outbound:
        stamped = {
            "schema": SCHEMA_VERSION,
            "id": event_id,
            "table": self.table_id,
            "seq": seq,
            "ts": at,
            **body,
        }
        payload = _PAYLOAD.encode(stamped).encode()
        return Outbound(topic, payload, qos, retain, event_id, seq, stamped)
