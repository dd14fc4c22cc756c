"""Inbound events as journal records, and back: what came from the shoe, byte-exact in meaning.

A record is `{"event": <class name>, ...fields}`, bytes written as hex; only the classes
listed here are read back, so a journal cannot make the daemon build anything else.

A vendor message (an ENQ shoe's game result or preset) changes nothing at a blackjack table,
but it is numbered like any frame: it is journaled so that the receiver's memory of the last
frame (decision D3) is rebuilt by a replay exactly as the live table held it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from drivers import driver as link
from drivers import events as shoe

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


def to_record(event: object) -> dict[str, Any]:
    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        raise TypeError(f"not an event record: {event!r}")
    fields = {
        field.name: _json_value(getattr(event, field.name)) for field in dataclasses.fields(event)
    }
    return {"event": type(event).__name__, **fields}


def from_record(record: dict[str, Any]) -> object:
    fields = dict(record)
    cls = _CLASSES[fields.pop("event")]
    if cls is shoe.VendorMessage:
        fields["data"] = bytes.fromhex(fields["data"])
    return cls(**fields)


def _json_value(value: object) -> object:
    return value.hex() if isinstance(value, bytes) else value
