"""What a shoe reader reports, as typed, immutable events.

Every codec turns bytes into these and nothing else, so the daemon handles one vocabulary
whichever shoe is plugged in. Rank and suit use the same text codes the rules core parses
("10S", "QH"); drivers/ must not import rules/, so the codes are repeated here on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias, get_args

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
    vendor: str
    model: str
    serial_number: str
    firmware: str


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


@dataclass(frozen=True, slots=True)
class CutCardReached:
    """The cut card came out: this is the last round of the shoe."""


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """The device is alive; its sequence number also lets the host see losses between cards."""


@dataclass(frozen=True, slots=True)
class FaultSet:
    kind: FaultKind
    code: int = 0  # the device's own detail code; 0 when it gives none


@dataclass(frozen=True, slots=True)
class FaultCleared:
    kind: FaultKind
    code: int = 0


@dataclass(frozen=True, slots=True)
class CommunicationStarted:
    """The device (re)started talking: an ENQ-family shoe says so with an `S` frame."""


@dataclass(frozen=True, slots=True)
class Standby:
    """The device went to standby (ENQ family `P`)."""


@dataclass(frozen=True, slots=True)
class LockChanged:
    locked: bool


@dataclass(frozen=True, slots=True)
class VendorMessage:
    """A well-formed message whose meaning no blackjack table needs (baccarat result, preset).

    Passed on rather than dropped so the daemon can log it and an operator can see it.
    """

    code: str
    data: bytes


@dataclass(frozen=True, slots=True)
class CommandAccepted:
    """The device acknowledged the host's last command."""


@dataclass(frozen=True, slots=True)
class CommandRejected:
    """The device refused the host's last command, with its own error code."""

    code: int


# ---------------------------------------------------------------- link diagnostics


@dataclass(frozen=True, slots=True)
class SequenceGap:
    """Frames were lost between two received frames: a card may be missing from the round."""

    expected: int
    got: int


# ---------------------------------------------------------------- host → shoe


@dataclass(frozen=True, slots=True)
class Acknowledge:
    acknowledged_seq: int


@dataclass(frozen=True, slots=True)
class StatusRequest:
    """Asks the device to report its identity, its active faults and a heartbeat."""


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
Event: TypeAlias = ShoeEvent | HostCommand | SequenceGap
