"""What a shoe reader reports, as typed, immutable events.

Every codec turns bytes into these and nothing else, so the daemon handles one vocabulary
whichever shoe is plugged in. Rank and suit use the same text codes the rules core parses
("10S", "QH"); drivers/ must not import rules/, so the codes are repeated here on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, get_args

Rank: TypeAlias = Literal["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
Suit: TypeAlias = Literal["S", "H", "D", "C"]
RANKS: tuple[Rank, ...] = get_args(Rank)
SUITS: tuple[Suit, ...] = get_args(Suit)

FaultKind: TypeAlias = Literal["jam", "cover_open", "sensor", "other"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)

# Where a card came from. Only the ENQ/ETX/BCC family distinguishes these today; a round
# engine settles "dealt" cards and decides for itself what the other two mean for a round.
CardOrigin: TypeAlias = Literal["dealt", "outside_game", "retransmission"]
CARD_ORIGINS: tuple[CardOrigin, ...] = get_args(CardOrigin)


# ---------------------------------------------------------------- shoe → host


@dataclass(frozen=True, slots=True)
class DeviceIdentity:
    """Who the device is, and since when: what a host compares to know it talks to the same
    shoe, which has not restarted since it last heard from it (docs/protocol.md §1.4)."""

    vendor: str
    model: str
    serial_number: str
    firmware: str
    #: A number the device picks at every power-up or reset; None where it says none.
    power_up: int | None = None
    #: The number of the frame it will send next: its oldest unacknowledged one, or when
    #: it keeps none, the number its next new frame will get. None where it says none.
    next_seq: int | None = None


@dataclass(frozen=True, slots=True)
class CardDrawn:
    rank: Rank
    suit: Suit
    seq: int  # the sequence number of the frame that carried the card
    burned: bool = False
    origin: CardOrigin = "dealt"

    @property
    def code(self) -> str:
        """The card as the rules core writes it: "10S", "QH"."""
        return f"{self.rank}{self.suit}"


@dataclass(frozen=True, slots=True)
class CardUnreadable:
    """A card left the shoe but its face could not be read: the round must know a card went."""

    seq: int
    burned: bool = False


@dataclass(frozen=True, slots=True)
class NewShoe:
    """The shoe was shuffled or refilled: counts and shoe-level state start over."""

    seq: int | None = None  # the sequence number of the frame, where the protocol gives one


@dataclass(frozen=True, slots=True)
class CutCardReached:
    """The cut card came out: this is the last round of the shoe."""

    seq: int | None = None


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """The device is alive; `next_seq` (as in `DeviceIdentity`) lets the host see a loss
    between cards."""

    next_seq: int | None = None


@dataclass(frozen=True, slots=True)
class FaultSet:
    kind: FaultKind
    code: int = 0  # the device's own detail code; 0 when it gives none
    seq: int | None = None
    #: What the code means, where the codec's table names it ("can not read"); None where
    #: no one has said. Journals written before it existed hold no name: they read as None.
    name: str | None = None


@dataclass(frozen=True, slots=True)
class FaultCleared:
    kind: FaultKind
    code: int = 0
    seq: int | None = None
    name: str | None = None  # as in `FaultSet`


@dataclass(frozen=True, slots=True)
class CommunicationStarted:
    """The device (re)started talking: an ENQ-family shoe says so with an `S` frame, and its
    count starts over there (`drivers.receiver`)."""

    seq: int | None = None  # the frame's number, where the protocol gives one


@dataclass(frozen=True, slots=True)
class Standby:
    """The device went to standby (ENQ family `P`)."""

    seq: int | None = None


@dataclass(frozen=True, slots=True)
class LockChanged:
    locked: bool
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class VendorMessage:
    """A well-formed message whose meaning no blackjack table needs (baccarat result, preset).

    Passed on rather than dropped so the daemon can log it and an operator can see it.
    """

    code: str
    data: bytes
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class CommandAccepted:
    """The device acknowledged the host's last command."""


@dataclass(frozen=True, slots=True)
class CommandRejected:
    """The device refused the host's last command, with its own error code."""

    code: int
    name: str | None = None  # what the code means, where the codec's table names it


# ---------------------------------------------------------------- link diagnostics


@dataclass(frozen=True, slots=True)
class SequenceGap:
    """Frames were lost between two received frames: a card may be missing from the round."""

    expected: int
    got: int


@dataclass(frozen=True, slots=True)
class SequenceConflict:
    """A frame came with the number of the frame before it but other content: not a repeat
    (that would be the same frame again), so the shoe's numbering cannot be trusted here and
    the table must doubt what it holds (`drivers.receiver`)."""

    seq: int


# ---------------------------------------------------------------- host → shoe


@dataclass(frozen=True, slots=True)
class Acknowledge:
    acknowledged_seq: int


@dataclass(frozen=True, slots=True)
class StatusRequest:
    """Asks the device who it is: it answers `DeviceIdentity`, then sends what it keeps."""


@dataclass(frozen=True, slots=True)
class VendorCommand:
    """An ENQ-family host command, e.g. name "LK" (lock) with argument "02" (on)."""

    name: str
    argument: str


ShoeEvent: TypeAlias = (
    DeviceIdentity
    | CardDrawn
    | CardUnreadable
    | NewShoe
    | CutCardReached
    | Heartbeat
    | FaultSet
    | FaultCleared
    | CommunicationStarted
    | Standby
    | LockChanged
    | VendorMessage
    | CommandAccepted
    | CommandRejected
)
HostCommand: TypeAlias = Acknowledge | StatusRequest | VendorCommand
Event: TypeAlias = ShoeEvent | HostCommand | SequenceGap | SequenceConflict

#: Events that come in a numbered frame of their own, judged by their number and content
#: (`drivers.receiver`). Where the protocol acknowledges (docs/protocol.md §1.4), the device
#: keeps these frames until the host acknowledges them: whatever changes the table. The ENQ
#: family numbers every event frame, its start, standby, lock and vendor frames too.
NumberedEvent: TypeAlias = (
    CardDrawn
    | CardUnreadable
    | NewShoe
    | CutCardReached
    | FaultSet
    | FaultCleared
    | CommunicationStarted
    | Standby
    | LockChanged
    | VendorMessage
)
NUMBERED_EVENTS: Final = (
    CardDrawn,
    CardUnreadable,
    NewShoe,
    CutCardReached,
    FaultSet,
    FaultCleared,
    CommunicationStarted,
    Standby,
    LockChanged,
    VendorMessage,
)
#: Events that say where the device's numbering stands (`next_seq`) without a number of
#: their own: never kept, never acknowledged.
StatusEvent: TypeAlias = DeviceIdentity | Heartbeat


def frame_number(event: object) -> int | None:
    """The sequence number of the frame `event` came in, if it is numbered and has one."""
    return event.seq if isinstance(event, NUMBERED_EVENTS) else None
