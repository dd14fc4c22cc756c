"""What a table's journal holds, typed: one record per kind of journaled event, one codec.

A record is made once where the daemon learns of it (daemon.parts.commits): its text
(`encode`) goes to the journal, the record itself to the table (`TableService.apply`). A
replay reads the text back (`decode`) into the same record, so the live table and the
replay apply one and the same thing. The text is the journal's format on disk (compact JSON,
keys sorted: daemon.journal.chain.body_text), unchanged from the journals written before the
records were typed: every field a record leaves unset is left out of its text, as it was.

A shoe's or a link's event is journaled as the event itself: `{"event": <class name>,
...fields}`, bytes written as hex; only the classes listed here are read back, so a journal
cannot make the daemon build anything else. A vendor message (an ENQ shoe's game result or
preset) changes nothing at a blackjack table, but it is numbered like any frame: it is
journaled so that the receiver's memory of the last frame (decision D3) is rebuilt by a
replay exactly as the live table held it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from daemon.journal.chain import body_text
from daemon.wire.requests import request_record
from drivers import driver as link
from drivers import events as shoe
from rules.config import TableConfig

if TYPE_CHECKING:
    from collections.abc import Mapping

    from daemon.journal import EventKind
    from drivers.driver import LinkEvent
    from drivers.events import Event as ShoeEvent


# ---------------------------------------------------------------- a shoe's and a link's events
_CLASSES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        shoe.DeviceIdentity,
        shoe.CardDrawn,
        shoe.CardUnreadable,
        shoe.NewShoe,
        shoe.CutCardReached,
        shoe.Heartbeat,
        shoe.FaultSet,
        shoe.FaultCleared,
        shoe.CommunicationStarted,
        shoe.Standby,
        shoe.LockChanged,
        shoe.VendorMessage,
        shoe.CommandAccepted,
        shoe.CommandRejected,
        shoe.SequenceGap,
        shoe.SequenceConflict,
        link.Connecting,
        link.Connected,
        link.Disconnected,
        link.LinkFault,
        link.Reconnected,
    )
}
LINK_EVENTS = (link.Connecting, link.Connected, link.Disconnected, link.LinkFault, link.Reconnected)


def is_journaled(event: object) -> bool:
    """Heartbeats change nothing at the table and carry no number: they are not journaled."""
    return type(event).__name__ in _CLASSES and not isinstance(event, shoe.Heartbeat)


def event_body(event: object) -> dict[str, Any]:
    """A shoe's or a link's event as journaled."""
    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        raise TypeError(f"not an event record: {event!r}")
    fields = {
        field.name: _json_value(getattr(event, field.name)) for field in dataclasses.fields(event)
    }
    return {"event": type(event).__name__, **fields}


def event_of_body(body: Mapping[str, Any]) -> object:
    """The event a journaled body holds; KeyError for a class not listed."""
    fields = dict(body)
    cls = _CLASSES[fields.pop("event")]
    if cls is shoe.VendorMessage:
        fields["data"] = bytes.fromhex(fields["data"])
    return cls(**fields)


def _json_value(value: object) -> object:
    return value.hex() if isinstance(value, bytes) else value


# ---------------------------------------------------------------- the records
@dataclass(frozen=True, slots=True)
class ShoeRecord:
    """Something the shoe said: a card, a shuffle, a fault; or a loss the daemon found in
    its numbering (a `SequenceGap`, a `SequenceConflict`)."""

    event: ShoeEvent
    kind: ClassVar[EventKind] = "shoe"

    def body(self) -> dict[str, Any]:
        return event_body(self.event)


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """The reader's link changed (connecting, connected, lost, back)."""

    event: LinkEvent
    kind: ClassVar[EventKind] = "link"

    def body(self) -> dict[str, Any]:
        return event_body(self.event)


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
    """New game settings, in force now between rounds, else at the round's end; with the
    console's `contract` since contract 3 (a new table's settings come before its first
    start; settings journaled before leave it out: None)."""

    table: TableConfig
    contract: int | None = None
    kind: ClassVar[EventKind] = "config"

    def body(self) -> dict[str, Any]:
        contract = {} if self.contract is None else {"contract": self.contract}
        return {"table": self.table.to_mapping(), **contract}


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


@dataclass(frozen=True, slots=True)
class UnreadableRecord:
    """A journaled body this version cannot read (`read`), and why: applied, it costs its
    event (the pit is told, the round is reviewed), as a bug in applying one does, never the
    table. The live table never makes one: it journals only records."""

    kind: str
    error: Exception


def encode(record: JournalRecord) -> str:
    """The record's text, as the journal stores and hashes it."""
    return body_text(record.body())


def decode(kind: str, body: Mapping[str, Any]) -> JournalRecord:  # noqa: PLR0911 - one return per kind
    """A journaled event's record, from its kind and its body as read back. Raises
    KeyError, TypeError or ValueError on a body this version cannot read."""
    match kind:
        case "shoe":
            return ShoeRecord(event_of_body(body))  # type: ignore[arg-type]
        case "link":
            return LinkRecord(event_of_body(body))  # type: ignore[arg-type]
        case "request":
            payload = body["payload"].encode("latin-1")
            return RequestRecord(body["command"], payload, body.get("outbox_full", False))
        case "config":
            contract = body.get("contract")
            table = TableConfig.from_mapping(body["table"])
            return ConfigRecord(table, None if contract is None else int(contract))
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


def read(kind: str, body: Mapping[str, Any]) -> JournalRecord | UnreadableRecord:
    """A journaled event's record as a replay reads it: `decode`, or what it could not read."""
    try:
        return decode(kind, body)
    except Exception as exc:  # noqa: BLE001 - whatever the body holds, it costs its event alone
        return UnreadableRecord(kind, exc)
