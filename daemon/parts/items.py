"""What a table's inbox carries, in arrival order (one small type per kind of item, or the
journal's record itself), and the table as the daemon serves it (`ServedTable`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from daemon.table.records import ConfigRecord, LinkRecord, NoticeRecord, StartRecord, TimerRecord

if TYPE_CHECKING:
    from daemon.configuration.service_config import TableSetup
    from daemon.request_gate import Refused
    from daemon.table.inbox import TableInbox
    from daemon.table.runner import TableRunner
    from daemon.table.service import TableService
    from daemon.table.shoe_line import Overflow, ShoeLine
    from daemon.table.timers import TableTimers
    from drivers.driver import ShoeDriver
    from drivers.events import Event as ShoeEvent
    from drivers.noise import LineEvent
    from drivers.session import HostSession


# What a table's queue carries, in arrival order: one small type per kind of item.
@dataclass(frozen=True, slots=True)
class ShoeItem:
    """Something the shoe said (a card, a shuffle, a fault, a heartbeat)."""

    event: ShoeEvent


@dataclass(frozen=True, slots=True)
class LineItem:
    """What the shoe's line carried that was no frame: noise began, it ended, its report."""

    event: LineEvent


@dataclass(frozen=True, slots=True)
class OverflowItem:
    """Where the shoe's events began to be dropped, the inbox being full
    (daemon.table.shoe_line)."""

    overflow: Overflow


@dataclass(frozen=True, slots=True)
class RequestItem:
    """A dealer console's request, as it came off the broker."""

    command: str
    payload: bytes


@dataclass(frozen=True, slots=True)
class RefusedItem:
    """A request the gate refused (not journaled): its response, for the table to send."""

    command: str
    refusal: Refused


# What the daemon itself says to a table goes in as the record the journal will hold
# (daemon.table.records): a link's change, the start, new settings, a notice, a timer.
TableItem = (
    ShoeItem
    | LinkRecord
    | LineItem
    | OverflowItem
    | RequestItem
    | RefusedItem
    | StartRecord
    | ConfigRecord
    | NoticeRecord
    | TimerRecord
)


@dataclass(slots=True)
class ServedTable:
    """One table as the daemon serves it: its settings, driver, inbox and line; its service
    once the journal has rebuilt it (daemon.parts.recovery)."""

    setup: TableSetup
    driver: ShoeDriver
    # Everything the table hears, in arrival order; the shoe's and requests bounded.
    queue: TableInbox[TableItem]
    line: ShoeLine  # what the shoe's line costs the table: noise, overflow
    timers: TableTimers  # the table's deadlines, on the monotonic clock ([timing])
    # The host's side of the shoe's protocol: its driver pumps it, its service's memory of
    # the shoe's numbering is it (`TableState.receiver`), it acknowledges (decision D3).
    session: HostSession
    checkpoint_n: int = 0  # the event the last checkpoint followed
    # Built once, as the daemon starts, by the journal's replay of the table (daemon.parts.
    # recovery): until then they are not set, and reading them is an AttributeError.
    runner: TableRunner = field(init=False)  # applies the table's records
    service: TableService = field(init=False)  # the runner's
