"""What a shoe says for each card the dealer draws, as the codec decodes it, and what each of
its faults does to that.

Two protocols, two kinds of device. The reference shoe numbers every frame by one from the
number its identity gives and keeps each until the host acknowledges it (docs/protocol.md
§1.4). An ENQ/ETX/BCC shoe (§2) numbers its frames modulo 256 from wherever its count
stands, keeps nothing, says `S` when it powers up, and may send any frame more than once in a
row (its own exact repeats). The faults are those a real ENQ shoe shows (examples/captures/
enq): an `E` error frame with the card it was reading lost (or read after all), a card sent
only as an `R` retransmission, a `d` card read outside the game, an `S` in the middle of a
round (the card it was reading lost or not), two cards under one frame number; and, on the
reference shoe, a card whose face it could not read.

Every card is a `PhysicalCard` of the table's ledger: the harness follows each one to its
fate (taken by the table, read unreadable, lost on the way), as a floorperson who saw the
table would know it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from drivers.events import (
    CardDrawn,
    CardUnreadable,
    CommunicationStarted,
    DeviceIdentity,
    FaultCleared,
    FaultSet,
    NewShoe,
)

if TYPE_CHECKING:
    import random

    from drivers.events import CardOrigin, Event
    from rules.events import DealCard

Fate = Literal["pending", "taken", "unreadable", "lost"]
CardFault = Literal[
    "error_lost", "error_read", "retransmitted", "outside_game", "restart", "conflict",
    "unreadable",
]  # fmt: skip
# What can happen to a card on the line: a fault of its own, or a misread frame before it.
LineFault = CardFault | Literal["misread"]
ENQ_FAULTS: Final[tuple[LineFault, ...]] = (
    "error_lost", "error_read", "retransmitted", "outside_game", "restart", "conflict",
    "misread",
)  # fmt: skip
REFERENCE_FAULTS: Final[tuple[LineFault, ...]] = ("unreadable",)
IDENTITY: Final = DeviceIdentity("shoe2mqtt", "interleaving", "0001", "1.0", power_up=1)
_CAN_NOT_READ: Final = 1  # the ENQ error codes as one client names them (drivers/codecs/enq.py)
_REVERSE_RUN_AT_EXIT: Final = 4


@dataclass(slots=True)
class PhysicalCard:
    """A card that left the shoe, and what became of it."""

    index: int  # its place in the order the shoe dealt
    card: DealCard
    round_id: int | None  # the round it belongs to; None: a burn, or a card no round needed
    stray: bool = False  # no round's card: drawn outside any round, or a face misread
    fate: Fate = "pending"
    entered: bool = False  # a supervisor entered it by hand
    copies: int = 0  # frames carrying it still on their way

    @property
    def code(self) -> str:
        return str(self.card.card)


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame on the line; `card` is the physical card it carries, if any."""

    event: Event
    card: PhysicalCard | None = None


class ShoeLine:
    """The frames one shoe sends: its numbering, its repeats, its faults."""

    def __init__(self, protocol: str, rng: random.Random, *, repeats: float) -> None:
        """`repeats`: the chance (ENQ) that a frame goes out again right after itself."""
        self.protocol = protocol
        self.rng = rng
        self.repeats = repeats if protocol == "enq" else 0.0
        self.modulus = 256 if protocol == "enq" else 1 << 16
        self.seq = rng.randrange(self.modulus) if protocol == "enq" else 0
        self.error_mode = 0  # ENQ: cards still to come as `d` before the error clears
        self.last: Event | None = None  # the last frame's event

    @property
    def reliable(self) -> bool:
        return self.protocol == "reference"

    def _next(self) -> int:
        seq, self.seq = self.seq, (self.seq + 1) % self.modulus
        return seq

    def _out(self, event: Event, card: PhysicalCard | None = None) -> list[Frame]:
        """A frame, and the shoe's own exact repeats of it."""
        self.last = event
        frames = [Frame(event, card)]
        while self.rng.random() < self.repeats and len(frames) < 3:
            frames.append(Frame(event, card))
        return frames

    # ---------------------------------------------------------------- what the shoe says
    def power_up(self) -> list[Frame]:
        """ENQ: `S`, its count starting over; the reference shoe answers a greeting instead."""
        if self.reliable:
            return []
        self.seq = self.rng.randrange(self.modulus)
        return self._out(CommunicationStarted(seq=self._next()))

    def identity(self, next_seq: int) -> Frame:
        """The reference shoe's answer to the host's greeting: which frame it sends next."""
        return Frame(dataclasses.replace(IDENTITY, next_seq=next_seq))

    def new_shoe(self) -> list[Frame]:
        """A reference shoe says so; an ENQ shoe has no such frame (the console taps it)."""
        return self._out(NewShoe(seq=self._next())) if self.reliable else []

    def card(self, physical: PhysicalCard, fault: CardFault | None = None) -> list[Frame]:  # noqa: PLR0911 - a dispatch, one return per fault
        """The frames for one card, with `fault` done to it."""
        if fault is None and self.error_mode:
            self.error_mode -= 1
            frames = self._card(physical, "outside_game")
            return frames if self.error_mode else [*frames, *self._cleared(_CAN_NOT_READ)]
        match fault:
            case None:
                return self._card(physical)
            case "unreadable":
                seq = self._next()
                return self._out(CardUnreadable(seq=seq, burned=physical.card.burned), physical)
            case "error_lost":
                return self._error_lost(physical)
            case "error_read":
                error = self._error(_REVERSE_RUN_AT_EXIT)
                return [*error, *self._card(physical), *self._cleared(_REVERSE_RUN_AT_EXIT)]
            case "retransmitted":  # the `D` frame never came; an `R` in its place
                return self._card(physical, "retransmission")
            case "outside_game":
                return self._card(physical, "outside_game")
            case "restart":
                return self._restart(physical)
            case "conflict":  # a real card under the number of the frame before it
                return self._conflict(physical)

    def misread(self, phantom: PhysicalCard, physical: PhysicalCard) -> list[Frame]:
        """The shoe sends its last frame's number again with a face no card had (`phantom`,
        which no round owns), then deals `physical` as it comes."""
        self.seq = (self.seq - 1) % self.modulus
        return [*self._card(phantom), *self._card(physical)]

    def _card(self, physical: PhysicalCard, origin: CardOrigin = "dealt") -> list[Frame]:
        code = physical.code
        event = CardDrawn(
            rank=code[:-1],  # type: ignore[arg-type]
            suit=code[-1],  # type: ignore[arg-type]
            seq=self._next(),
            burned=physical.card.burned,
            origin=origin,
        )
        return self._out(event, physical)

    def _conflict(self, physical: PhysicalCard) -> list[Frame]:
        """The card under the number of the frame before it. A card of the same face as that
        frame's would be that frame again, exactly: no receiver could tell it from the shoe's
        own repeat, and no shoe's fault is told apart by what cannot be seen, so such a card
        goes out plainly."""
        last = self.last
        same = isinstance(last, CardDrawn) and (last.code, last.burned) == (
            physical.code,
            physical.card.burned,
        )
        if not same:
            self.seq = (self.seq - 1) % self.modulus
        return self._card(physical)

    def _error(self, code: int) -> list[Frame]:
        return self._out(FaultSet("other", code, seq=self._next()))

    def _cleared(self, code: int) -> list[Frame]:
        return self._out(FaultCleared("other", code, seq=self._next()))

    def _error_lost(self, physical: PhysicalCard) -> list[Frame]:
        """`E` "can not read": the card it was reading never comes; the shoe stays in error
        mode for the next card or none (read as `d`), then the error clears."""
        physical.fate = "lost"
        self.error_mode = self.rng.randint(0, 1)
        error = self._error(_CAN_NOT_READ)
        return error if self.error_mode else [*error, *self._cleared(_CAN_NOT_READ)]

    def _restart(self, physical: PhysicalCard) -> list[Frame]:
        """The shoe restarts while the card goes by: `S`, a new count; the card it was
        reading comes in the new count, or is lost."""
        started = self.power_up()
        if self.rng.random() < 0.5:
            physical.fate = "lost"
            return started
        return [*started, *self._card(physical)]
