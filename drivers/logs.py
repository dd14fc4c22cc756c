"""How the drivers log: structlog lines with fields, routed through the standard library.

Every logger here wraps a standard-library logger of the same name, so the process decides
where the lines go and at which level: the daemon's `daemon.system.logs.configure` renders them as
JSON or console text beside its own; a command that only calls `logging.basicConfig` gets
them on stderr at its level; a library user who configures nothing sees warnings only (the
standard library's last resort), never a flood of DEBUG lines on stdout.

Bytes from a shoe's line go into a field as `WireBytes`, never as hex text: a live frame
carries the hole card before its reveal, so a `WireBytes` shows only its length until the
process opts in by adding `reveal_wire_bytes` to its structlog processors (the daemon does
for `[logging] raw_frames = true`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

import structlog

if TYPE_CHECKING:
    from collections.abc import Callable

    from structlog.typing import EventDict, FilteringBoundLogger, WrappedLogger

HIDDEN_NOTE: Final = "hidden: they may hold an unrevealed card"


def get_logger(name: str, **context: object) -> FilteringBoundLogger:
    """A structlog logger named `name` whose every line carries `context` as fields.

    Lazy: the processors and the level come from structlog's configuration at each call,
    so a reload of the daemon's logging settings reaches loggers made before it.
    """
    # Typed loosely on purpose: structlog's own keywords share the namespace of the fields.
    wrap: Callable[..., FilteringBoundLogger] = structlog.wrap_logger
    return wrap(logging.getLogger(name), **context)


class WireBytes:
    """Bytes seen on a shoe's line, as a log field: shown as their length unless revealed."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)

    @property
    def hex(self) -> str:
        return self.data.hex(" ")

    def __repr__(self) -> str:
        return f"<{len(self.data)} bytes, {HIDDEN_NOTE}>"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WireBytes) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)


def reveal_wire_bytes(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """structlog processor: every `WireBytes` field as hex. Only for a shoe out of play."""
    for key, value in event_dict.items():
        if isinstance(value, WireBytes):
            event_dict[key] = value.hex
    return event_dict
