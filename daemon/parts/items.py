"""What a table's inbox carries, in arrival order (one small type per kind of item), and the
table as the daemon serves it (`ServedTable`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from daemon.table.state import CONSOLE_CONTRACT

if TYPE_CHECKING:
    from daemon.configuration.service_config import TableSetup
    from daemon.journal import EventKind
    from daemon.journal.replay import TableReplay
    from daemon.request_gate import Refused
    from daemon.table.custody_flow import Timer
    from daemon.table.inbox import TableInbox
    from daemon.table.service import TableService
    from daemon.table.shoe_line import Overflow, ShoeLine
    from daemon.table.timers import TableTimers
    from drivers.driver import LinkEvent, ShoeDriver
    from drivers.events import Event as ShoeEvent
    from drivers.noise import LineEvent
    from rules.config import TableConfig


# What a table's queue carries, in arrival order: one small type per kind of item.
@dataclass(frozen=True, slots=True)
class ShoeItem:
    """Something the shoe said (a card, a shuffle, a fault, a heartbeat)."""

    event: ShoeEvent


@dataclass(frozen=True, slots=True)
class LinkItem:
    """The reader's link changed (connecting, connected, lost, back)."""

    event: LinkEvent


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


@dataclass(frozen=True, slots=True)
class StartItem:
    """The daemon started, reading the table's shoe with `protocol`, as `node`."""

    protocol: str
    node: str
    kind: ClassVar[EventKind] = "start"

    def record(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "node": self.node, "contract": CONSOLE_CONTRACT}


@dataclass(frozen=True, slots=True)
class TimerItem:
    """A deadline the table asked for has passed (daemon.table.timers)."""

    timer: Timer
    seconds: float
    kind: ClassVar[EventKind] = "timer"

    def record(self) -> dict[str, Any]:
        return {"timer": self.timer.kind, "key": self.timer.key, "seconds": self.seconds}


@dataclass(frozen=True, slots=True)
class ConfigItem:
    """New game settings from a reload, for the end of the round in progress."""

    table: TableConfig
    kind: ClassVar[EventKind] = "config"

    def record(self) -> dict[str, Any]:
        # The contract too: a new table's settings come before its first start, and under
        # contract 3 not even they make a numbered round snapshot (daemon.table.round_state).
        return {"table": self.table.to_mapping(), "contract": CONSOLE_CONTRACT}


@dataclass(frozen=True, slots=True)
class NoticeItem:
    """The daemon's own word to the pit: journaled, as everything the table publishes.

    `hold`: the table can no longer be sure which cards are its own (another daemon claims
    it, the broker keeps replacing this daemon's connection): from here it holds every card
    for the dealer console, as for any doubt (docs/rules.md, decision 13)."""

    kind: str
    message: str
    hold: bool = False

    def record(self) -> dict[str, Any]:
        """As journaled: `hold` only where it is set, so older journals read the same."""
        return {"kind": self.kind, "message": self.message, **({"hold": True} if self.hold else {})}


TableItem = (
    ShoeItem
    | LinkItem
    | LineItem
    | OverflowItem
    | RequestItem
    | RefusedItem
    | StartItem
    | ConfigItem
    | NoticeItem
    | TimerItem
)


@dataclass(slots=True)
class ServedTable:
    """One table as the daemon serves it: its settings, service, driver, inbox and line."""

    setup: TableSetup
    service: TableService
    driver: ShoeDriver
    # Everything the table hears, in arrival order; the shoe's and requests bounded.
    queue: TableInbox[TableItem]
    line: ShoeLine  # what the shoe's line costs the table: noise, overflow
    timers: TableTimers  # the table's deadlines, on the monotonic clock ([timing])
    replay: TableReplay | None = None  # from the journal, once recovered
    checkpoint_n: int = 0  # the event the last checkpoint followed
