"""What a table's journal holds, typed: one record per kind of journaled event, one codec.

A record is made once where the daemon learns of it (daemon.parts.commits): its text
(`encode`) goes to the journal, the record itself to the table (`TableService.apply`). A
replay reads the text back (`decode`) into the same record, so the live table and the
replay apply one and the same thing. The text is the journal's format on disk (compact JSON,
keys sorted: daemon.journal.chain.body_text), unchanged from the journals written before the
records were typed: every field a record leaves unset is left out of its text, as it was.

A shoe's or a link's event is journaled as the event itself (daemon.inbound).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from daemon.inbound import from_record, to_record
from daemon.journal.chain import body_text
from daemon.wire.requests import request_record
from rules.config import TableConfig

if TYPE_CHECKING:
    from collections.abc import Mapping

    from daemon.journal import EventKind
    from drivers.driver import LinkEvent
    from drivers.events import Event as ShoeEvent


@dataclass(frozen=True, slots=True)
class ShoeRecord:
    """Something the shoe said: a card, a shuffle, a fault; or a loss the daemon found in
    its numbering (a `SequenceGap`, a `SequenceConflict`)."""

    event: ShoeEvent
    kind: ClassVar[EventKind] = "shoe"

    def body(self) -> dict[str, Any]:
        return to_record(self.event)


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """The reader's link changed (connecting, connected, lost, back)."""

    event: LinkEvent
    kind: ClassVar[EventKind] = "link"

    def body(self) -> dict[str, Any]:
        return to_record(self.event)


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """A dealer console's request; `outbox_full`: the outbox was full when it came (the
    outbox is not table state, so a replay must be told to refuse what was refused)."""

    command: str
    payload: bytes
    outbox_full: bool = False
    kind: ClassVar[EventKind] = "request"

    def body(self) -> dict[str, Any]:
        body = request_record(self.command, self.payload)
        return {**body, "outbox_full": True} if self.outbox_full else body


@dataclass(frozen=True, slots=True)
class ConfigRecord:
    """New game settings, in force now between rounds, else at the round's end."""

    table: TableConfig
    kind: ClassVar[EventKind] = "config"

    def body(self) -> dict[str, Any]:
        return {"table": self.table.to_mapping()}


@dataclass(frozen=True, slots=True)
class NoticeRecord:
    """The daemon's own word to the pit, of kind `notice`. `hold`: the table can no longer be
    sure which cards are its own: from here it holds every card for the dealer console
    (docs/rules.md, decision 13)."""

    notice: str
    message: str
    hold: bool = False
    kind: ClassVar[EventKind] = "notice"

    def body(self) -> dict[str, Any]:
        """`hold` only where it is set, as journals before it was named read."""
        hold = {"hold": True} if self.hold else {}
        return {"kind": self.notice, "message": self.message, **hold}


@dataclass(frozen=True, slots=True)
class TimerRecord:
    """A deadline the table asked for has passed (daemon.table.custody_flow.Timer): `timer`
    its kind, `key` what it was set for, `seconds` how long it ran."""

    timer: Literal["declaration", "silence"]
    key: int
    seconds: float
    kind: ClassVar[EventKind] = "timer"

    def body(self) -> dict[str, Any]:
        return {"timer": self.timer, "key": self.key, "seconds": self.seconds}


@dataclass(frozen=True, slots=True)
class StartRecord:
    """The daemon started, reading the shoe with `protocol`, as `node`, under the console's
    `contract`. Starts journaled before a field was named leave it out (None): no contract
    named is contract 1."""

    protocol: str | None = None
    node: str | None = None
    contract: int | None = None
    kind: ClassVar[EventKind] = "start"

    def body(self) -> dict[str, Any]:
        fields = {"protocol": self.protocol, "node": self.node, "contract": self.contract}
        return {name: value for name, value in fields.items() if value is not None}


JournalRecord = (
    ShoeRecord
    | LinkRecord
    | RequestRecord
    | ConfigRecord
    | NoticeRecord
    | TimerRecord
    | StartRecord
)


def encode(record: JournalRecord) -> str:
    """The record's text, as the journal stores and hashes it."""
    return body_text(record.body())


def decode(kind: str, body: Mapping[str, Any]) -> JournalRecord:  # noqa: PLR0911 - one return per kind
    """A journaled event's record, from its kind and its body as read back. Raises
    KeyError, TypeError or ValueError on a body this version cannot read."""
    match kind:
        case "shoe":
            return ShoeRecord(from_record(dict(body)))  # type: ignore[arg-type]
        case "link":
            return LinkRecord(from_record(dict(body)))  # type: ignore[arg-type]
        case "request":
            payload = body["payload"].encode("latin-1")
            return RequestRecord(body["command"], payload, body.get("outbox_full", False))
        case "config":
            return ConfigRecord(TableConfig.from_mapping(body["table"]))
        case "notice":
            return NoticeRecord(body["kind"], body["message"], body.get("hold", False))
        case "timer":
            return TimerRecord(body["timer"], int(body["key"]), float(body["seconds"]))
        case "start":
            contract = body.get("contract")
            return StartRecord(
                body.get("protocol"), body.get("node"), None if contract is None else int(contract)
            )
    raise KeyError(kind)
