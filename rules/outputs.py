"""What the engine emits, in the order things happen at the table.

Nothing here ever holds a card that is face down: a hole card is dealt as `CardDealt` with
`card=None` and only appears in `HoleCardRevealed`; a burned card never appears at all.

Settlements and notices are frozen: they are money and instructions to people. The other
records are plain slotted dataclasses, treated as values all the same (nothing changes one
after the engine returns it): a frozen dataclass sets each field through
`object.__setattr__`, which made them the engine's costliest allocation, and a table deals
dozens of them a round (measured with bench/engine_rounds.py: docs/performance.md).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from rules.money import Cents, Odds, format_amount

if TYPE_CHECKING:
    from rules.cards import Card
    from rules.games import WagerKind


class Result(enum.Enum):
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"
    VOID = "void"  # returned: the round was voided before the wager was decided


class Phase(enum.Enum):
    """When in the round a settlement was made, each tied to the rule that says so."""

    INITIAL_DEAL = "initial_deal"  # 2.24(d), and 2.24(e)1.ii after the others
    BLACKJACK_WAGER = "blackjack_wager"  # 2.24(e)1.i and (e)2: with the blackjack wager
    DEALER_TWO_CARDS = "dealer_two_cards"  # 26.6(d): the dealer's first two cards are 17+
    DEALER_THIRD_CARD = "dealer_third_card"  # 26.6(d): right after the dealer's third card
    PLAYER_BUST = "player_bust"  # 36.5(g): a busted hand's attack wagers, at once
    ROUND_END = "round_end"  # 36.5(g): everything else, after the round
    VOID = "void"

    # Identity hash, computed in C (see cards.Suit): phases key each round's order counters.
    __hash__ = object.__hash__


class Settlement(NamedTuple):
    """One settled wager. Immutable: a tuple, which also makes it cheap to build.

    A named tuple rather than a frozen dataclass: building a frozen dataclass sets each of
    these fourteen fields through `object.__setattr__`, and a Triple Attack round settles
    twenty of them (bench/engine_rounds.py; docs/performance.md). Equality is redefined so
    a settlement never equals a bare tuple or another record with the same values.
    """

    round_id: int
    seat: int
    hand: int | None  # 1-based hand of the seat for wagers that ride a hand; None otherwise
    wager: WagerKind
    outcome: str  # e.g. suited_20, three_eights_suited, dealer_22_push
    result: Result
    odds: Odds | None  # the paytable line paid; None unless won
    stake: Cents
    won: Cents  # paid on top of the returned stake; 0 unless won
    phase: Phase
    order: int  # 1-based position within its phase in this round
    floorperson: bool  # a floorperson must attend (2.24(e))
    citation: str
    limited: bool = False  # cut down to a share of the 2.24(h) aggregate limit

    def __eq__(self, other: object) -> bool:
        return type(other) is Settlement and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return tuple.__hash__(self)

    def to_mapping(self) -> dict[str, Any]:
        return {
            "type": "settlement",
            "round": self.round_id,
            "seat": self.seat,
            "hand": self.hand,
            "wager": self.wager.value,
            "outcome": self.outcome,
            "result": self.result.value,
            "odds": None if self.odds is None else str(self.odds),
            "stake": format_amount(self.stake),
            "won": format_amount(self.won),
            "phase": self.phase.value,
            "order": self.order,
            "floorperson": self.floorperson,
            "limited": self.limited,
            "citation": self.citation,
        }


class NoticeKind(enum.StrEnum):
    """The notices the rules give; the daemon adds its own about the reader and the link."""

    FLOORPERSON_REQUIRED = "floorperson_required"


@dataclass(frozen=True, slots=True)
class Notice:
    """Words for the pit: the one shape of every notice, the rules' and the daemon's.

    `kind` is a `NoticeKind` when the rules give it, a plain word (`sequence_gap`,
    `reader_fault`, ...) when the daemon does; `round_id` is None outside a round.
    """

    round_id: int | None
    kind: str
    seat: int | None
    message: str
    citation: str = ""

    def to_mapping(self) -> dict[str, Any]:
        return {
            "type": "notice",
            "round": self.round_id,
            "kind": str(self.kind),
            "seat": self.seat,
            "message": self.message,
            "citation": self.citation,
        }


@dataclass(slots=True)
class RoundOpened:
    round_id: int

    def to_mapping(self) -> dict[str, Any]:
        return {"type": "round_opened", "round": self.round_id}


@dataclass(slots=True)
class WagerAccepted:
    round_id: int
    seat: int
    wager: WagerKind
    amount: Cents

    def to_mapping(self) -> dict[str, Any]:
        return {
            "type": "wager_accepted",
            "round": self.round_id,
            "seat": self.seat,
            "wager": self.wager.value,
            "amount": format_amount(self.amount),
        }


@dataclass(slots=True)
class WagerWithdrawn:
    round_id: int
    seat: int
    wager: WagerKind

    def to_mapping(self) -> dict[str, Any]:
        return {
            "type": "wager_withdrawn",
            "round": self.round_id,
            "seat": self.seat,
            "wager": self.wager.value,
        }


@dataclass(slots=True)
class BettingClosed:
    """ "No more bets": the wager window closed, and the deal goes on with `step`."""

    round_id: int
    step: str  # the deal step the next card belongs to (rules.games.Step)

    def to_mapping(self) -> dict[str, Any]:
        return {"type": "betting_closed", "round": self.round_id, "step": self.step}


@dataclass(slots=True)
class ShoeShuffled:
    shoe: int

    def to_mapping(self) -> dict[str, Any]:
        return {"type": "shoe_shuffled", "shoe": self.shoe}


@dataclass(slots=True)
class CardBurned:
    """A card went to the discard rack unseen; which card is nobody's business."""

    shoe: int

    def to_mapping(self) -> dict[str, Any]:
        return {"type": "card_burned", "shoe": self.shoe}


@dataclass(slots=True)
class CardDealt:
    round_id: int
    seat: int | None  # None: the dealer
    hand: int | None
    card: Card | None  # None: dealt face down

    def to_mapping(self) -> dict[str, Any]:
        return {
            "type": "card_dealt",
            "round": self.round_id,
            "to": "dealer" if self.seat is None else "player",
            "seat": self.seat,
            "hand": self.hand,
            "card": None if self.card is None else str(self.card),
            "face_up": self.card is not None,
        }


@dataclass(slots=True)
class HoleCardRevealed:
    round_id: int
    card: Card
    dealer_total: int

    def to_mapping(self) -> dict[str, Any]:
        return {
            "type": "hole_card_revealed",
            "round": self.round_id,
            "card": str(self.card),
            "dealer_total": self.dealer_total,
        }


@dataclass(slots=True)
class PlayerActed:
    round_id: int
    seat: int
    hand: int
    action: str

    def to_mapping(self) -> dict[str, Any]:
        return {
            "type": "player_acted",
            "round": self.round_id,
            "seat": self.seat,
            "hand": self.hand,
            "action": self.action,
        }


@dataclass(slots=True)
class HandCompleted:
    round_id: int
    seat: int | None  # None: the dealer
    hand: int | None
    total: int
    reason: str  # stand, bust, twenty_one, blackjack, doubled, six_cards, surrender, split_ace, ...

    def to_mapping(self) -> dict[str, Any]:
        return {
            "type": "hand_completed",
            "round": self.round_id,
            "to": "dealer" if self.seat is None else "player",
            "seat": self.seat,
            "hand": self.hand,
            "total": self.total,
            "reason": self.reason,
        }


@dataclass(slots=True)
class RoundEnded:
    round_id: int
    voided: bool = False
    reason: str = ""

    def to_mapping(self) -> dict[str, Any]:
        return {
            "type": "round_ended",
            "round": self.round_id,
            "voided": self.voided,
            "reason": self.reason,
        }


Output = (
    Settlement
    | Notice
    | RoundOpened
    | WagerAccepted
    | WagerWithdrawn
    | BettingClosed
    | ShoeShuffled
    | CardBurned
    | CardDealt
    | HoleCardRevealed
    | PlayerActed
    | HandCompleted
    | RoundEnded
)
