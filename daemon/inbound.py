"""Inbound events as journal records, and back: what came from the shoe, byte-exact in meaning.

A record is `{"event": <class name>, ...fields}`; only the classes listed here are read back,
so a journal cannot make the daemon build anything else.
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
    """Heartbeats and vendor chatter change nothing at the table: they are not journaled."""
    return type(event).__name__ in _CLASSES and not isinstance(event, shoe.Heartbeat)


def to_record(event: object) -> dict[str, Any]:
    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        raise TypeError(f"not an event record: {event!r}")
    return {"event": type(event).__name__, **dataclasses.asdict(event)}


def from_record(record: dict[str, Any]) -> object:
    fields = dict(record)
    cls = _CLASSES[fields.pop("event")]
    return cls(**fields)
